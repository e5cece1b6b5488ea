//! The language server through the real binary over stdio, the way an editor
//! drives it: initialize, open the mirror, diagnostics, hover, the
//! `memory/checkout` request, robustness, shutdown — and stderr free of panics.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::Env;

/// The shared client (`lsp_test_client`) on a `mnemo lsp` of `env`, with
/// its stderr kept to check for panics at the end.
pub(crate) struct Client(lsp_test_client::Client);

impl std::ops::Deref for Client {
    type Target = lsp_test_client::Client;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Client {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Client {
    pub(crate) fn start(env: &Env) -> Client {
        let mut command = env.command(&["lsp"]);
        command.stderr(Stdio::piped());
        Client(lsp_test_client::Client::spawn(command))
    }

    /// A server for `env`'s workspace, through `initialize` and `initialized`, as an editor starts one.
    pub(crate) fn initialized(env: &Env) -> Client {
        let mut client = Client::start(env);
        client.initialize(&uri(&env.root));
        client
    }

    /// Open `env`'s exported mirror as an editor does; its uri and text.
    pub(crate) fn open_mirror(&mut self, env: &Env) -> (String, String) {
        let path = env.root.join("MEMORY.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let mirror = uri(&path);
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": mirror, "languageId": "markdown", "version": 1, "text": text } }),
        );
        (mirror, text)
    }

    /// Ask for the workspace's `memory:` checkout and open it; its uri and text.
    pub(crate) fn open_checkout(&mut self) -> (String, String) {
        let checkout = self.request("memory/checkout", json!({}));
        let memory = checkout["result"]["uri"].as_str().unwrap().to_string();
        let text = checkout["result"]["text"].as_str().unwrap().to_string();
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": memory, "languageId": "markdown", "version": 1, "text": text } }),
        );
        (memory, text)
    }

    /// The next diagnostics published for `document` that `wanted` accepts (all of them).
    pub(crate) fn diagnostics_where(&mut self, document: &str, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let published = self.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == document
                && m["params"]["diagnostics"].as_array().is_some_and(|d| wanted(d))
        });
        published["params"]["diagnostics"].as_array().unwrap().clone()
    }

    /// The first diagnostic with `code` published for `document`, waited for.
    pub(crate) fn diagnostic_coded(&mut self, document: &str, code: &str) -> Value {
        let all = self.diagnostics_where(document, |d| d.iter().any(|d| d["code"] == code));
        all.into_iter().find(|d| d["code"] == code).unwrap()
    }

    /// The editor goes away: stdin closed with no shutdown. The server's exit
    /// status (it must exit on its own within 20 s) and its stderr.
    pub(crate) fn vanish(mut self) -> (std::process::ExitStatus, String) {
        let stderr = self.0.stderr();
        let status = self.0.close().expect("a spawned server");
        let mut text = String::new();
        if let Some(mut pipe) = stderr {
            pipe.read_to_string(&mut text).unwrap();
        }
        (status, text)
    }

    /// `shutdown` and `exit`; the server exits cleanly and its stderr holds no panic.
    pub(crate) fn finish(mut self) -> String {
        let stderr = self.0.stderr();
        let status = self.0.shutdown().expect("a spawned server");
        let mut text = String::new();
        if let Some(mut pipe) = stderr {
            pipe.read_to_string(&mut text).unwrap();
        }
        assert!(status.success(), "{text}");
        assert!(!text.contains("panicked"), "{text}");
        text
    }
}

pub(crate) fn uri(path: &std::path::Path) -> String {
    lsp_test_client::file_uri(path)
}

#[test]
fn mirror_diagnostics_hover_and_checkout_over_stdio() {
    let env = Env::new();
    let body = "Restarting with the lock held deadlocks the new daemon.";
    let lock = env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Release the lock before restarting",
        "--body",
        body,
        "--anchor",
        "src/lock.rs:2-3",
    ]);
    let lock = lock.trim().trim_start_matches('#').to_string();
    let stale = env.remember("finding", "Index rebuild reuses the embed cache").to_string();
    env.ok(&["flag-stale", &stale, "--reason", "cache.rs changed"]);
    let old = env.remember("decision", "Use openssl").to_string();
    env.ok(&["supersede", &old, "--title", "Use rustls"]);
    env.ok(&["export"]);
    let mirror = env.root.join("MEMORY.md");
    let text = std::fs::read_to_string(&mirror).unwrap();

    let mut client = Client::start(&env);
    let init =
        client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    assert_eq!(init["result"]["capabilities"]["hoverProvider"], true);
    client.notify("initialized", json!({}));
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&mirror), "languageId": "markdown", "version": 1, "text": text } }),
    );
    let published = client.wait(|m| m["method"] == "textDocument/publishDiagnostics");
    let diagnostics = published["params"]["diagnostics"].as_array().unwrap();
    let summary: Vec<(i64, String)> = diagnostics
        .iter()
        .map(|d| (d["severity"].as_i64().unwrap(), d["message"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        summary,
        [
            (2, format!("#{stale} is flagged stale: cache.rs changed; verify it before relying on it")),
            (4, format!("#{old} was superseded by #4")),
        ]
    );
    assert_eq!(diagnostics[1]["tags"], json!([2]), "deprecated: editors grey it out");

    let line = text.lines().position(|l| l.starts_with(&format!("- [#{lock}]"))).unwrap();
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&mirror) }, "position": { "line": line, "character": 4 } }),
    );
    let value = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(value.starts_with(&format!("**#{lock} Release the lock before restarting**")), "{value}");
    assert!(
        value.contains(body) && value.contains("recorded by an agent session; verify before relying on it"),
        "{value}"
    );
    assert!(value.contains("History:\n- 2026-08-04 created (agent) by agent"), "{value}");
    let nothing = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&mirror) }, "position": { "line": 0, "character": 0 } }),
    );
    assert_eq!(nothing["result"], Value::Null);

    let doc = json!({ "textDocument": { "uri": uri(&mirror) } });
    let symbols = client.request("textDocument/documentSymbol", doc.clone());
    let sections: Vec<&str> =
        symbols["result"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(sections, ["Directives", "Tasks", "Gotchas", "Findings", "References", "Decisions", "Operational"]);
    assert_eq!(symbols["result"][2]["children"][0]["name"], format!("#{lock} Release the lock before restarting"));
    assert_eq!(symbols["result"][2]["children"][0]["selectionRange"]["start"]["line"], line);
    let folds = client.request("textDocument/foldingRange", doc.clone());
    let entry_fold =
        folds["result"].as_array().unwrap().iter().any(|f| f["startLine"] == line && f["endLine"] == line + 2);
    assert!(entry_fold, "the entry with a body and an anchor folds: {folds}");
    let links = client.request("textDocument/documentLink", doc);
    assert_eq!(links["result"][0]["target"], format!("{}#L2", uri(&env.root.join("src/lock.rs"))));
    assert_eq!(links["result"][0]["range"]["start"]["line"], line + 2);

    let symbols = client.request("workspace/symbol", json!({ "query": "restarting with the lock held" }));
    let first = &symbols["result"][0];
    assert_eq!(first["name"], format!("#{lock} Release the lock before restarting"));
    assert_eq!(first["location"]["uri"], uri(&mirror));
    assert_eq!(first["location"]["range"]["start"]["line"], line);
    let container = first["containerName"].as_str().unwrap();
    assert!(container.starts_with("Gotchas · lexical only (no embedding model at "), "{container}");
    let directives = client.request("workspace/symbol", json!({ "query": "" }));
    assert_eq!(directives["result"], json!([]), "no directives in this workspace");

    let source = env.root.join("src/lock.rs");
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri(&source), "languageId": "rust", "version": 1, "text": format!("// see #{lock}\n") } }));
    let definition = client.request(
        "textDocument/definition",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 0, "character": 8 } }),
    );
    assert_eq!(definition["result"]["uri"], uri(&mirror));
    assert_eq!(definition["result"]["range"]["start"]["line"], line);

    let checkout = client.request("memory/checkout", json!({}));
    let result = &checkout["result"];
    assert_eq!(result["uri"], format!("memory://{}/MEMORY.md", env.root.display()));
    assert_eq!(result["epoch"], 5);
    assert!(
        result["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!("<!-- mnemo checkout · workspace {} · epoch 5 -->", env.root.display()))
    );
    client.finish();
}

#[test]
fn bad_requests_get_errors_or_nothing_and_the_server_keeps_serving() {
    let env = Env::new();
    env.remember("gotcha", "a");
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let unopened = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": "file:///nowhere.md" }, "position": { "line": 0, "character": 0 } }),
    );
    assert_eq!(unopened["result"], Value::Null);
    let unknown = client.request("memory/nonsense", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let bad_params = client.request("textDocument/hover", json!({ "position": "here" }));
    assert_eq!(bad_params["error"]["code"], -32602);
    let source = env.root.join("src/lock.rs");
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri(&source), "languageId": "rust", "version": 1, "text": "// see #1 and #999\n" } }));
    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri(&source), "version": 2 }, "contentChanges": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "  " }] }));
    let past_end = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 40, "character": 90 } }),
    );
    assert_eq!(past_end["result"], Value::Null);
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 0, "character": 10 } }),
    );
    assert!(hover["result"]["contents"]["value"].as_str().unwrap().starts_with("**#1 a**"), "{hover}");
    let missing = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 0, "character": 17 } }),
    );
    assert_eq!(missing["result"], Value::Null, "an id that does not exist");
    let stderr = client.finish();
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn workspace_symbols_run_hybrid_recall_with_the_model() {
    let env = Env::with_model();
    let lock = env.remember("gotcha", "Never restart the daemon while it holds the workspace lock");
    env.remember("finding", "The segment cache evicts by bytes");
    env.remember("directive", "Run the tests through cargo nextest");
    env.ok(&["export"]);
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let symbols = client
        .request("workspace/symbol", json!({ "query": "bouncing the background service while it has the mutex" }));
    assert_eq!(
        symbols["result"][0]["name"],
        format!("#{lock} Never restart the daemon while it holds the workspace lock")
    );
    assert!(symbols["result"][0]["containerName"].as_str().unwrap().starts_with("Gotchas · hybrid"), "{symbols}");
    let directives = client.request("workspace/symbol", json!({ "query": "" }));
    assert_eq!(directives["result"][0]["name"], "#3 Run the tests through cargo nextest");
    client.finish();
}

#[test]
fn code_actions_run_commands_that_append_events_and_refresh_the_mirror() {
    let env = Env::new();
    let id = env.remember("gotcha", "Release the lock before restarting");
    env.ok(&["export", "--enable"]);
    let mirror = env.root.join("MEMORY.md");
    let text = std::fs::read_to_string(&mirror).unwrap();
    let line = text.lines().position(|l| l.starts_with(&format!("- [#{id}]"))).unwrap();
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&mirror), "languageId": "markdown", "version": 1, "text": text } }),
    );
    let range = json!({ "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 0 } });
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri(&mirror) }, "range": range, "context": { "diagnostics": [] } }),
    );
    let titles: Vec<&str> =
        actions["result"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(
        titles,
        [
            format!("Revoke #{id}…"),
            format!("Flag #{id} stale…"),
            format!("Supersede #{id} (edit it in the checkout)"),
            format!("Promote #{id} to human"),
            format!("Show the history of #{id}"),
            format!("Forget #{id} for good…"),
        ]
    );
    assert_eq!(actions["result"][0]["command"]["command"], "mnemo.revoke");

    let missing_reason =
        client.request("workspace/executeCommand", json!({ "command": "mnemo.revoke", "arguments": [id] }));
    assert_eq!(missing_reason["error"]["code"], -32602);
    let unknown = client.request("workspace/executeCommand", json!({ "command": "mnemo.nonsense", "arguments": [id] }));
    assert!(unknown["error"]["message"].as_str().unwrap().contains("unknown command"), "{unknown}");
    let revoked = client.request(
        "workspace/executeCommand",
        json!({ "command": "mnemo.revoke", "arguments": [id, "wrong lock order"] }),
    );
    assert_eq!(revoked["result"]["state"], "revoked");
    let again =
        client.request("workspace/executeCommand", json!({ "command": "mnemo.revoke", "arguments": [id, "again"] }));
    assert!(again["error"]["message"].as_str().unwrap().contains("cannot revoke a note that is revoked"), "{again}");
    let other =
        client.request("workspace/executeCommand", json!({ "command": "mnemo.reinstate", "arguments": [4242] }));
    assert!(other["error"]["message"].as_str().unwrap().contains("no note #4242"), "{other}");
    client.finish();

    let history = env.json(&["history", &id.to_string()]);
    assert_eq!((history[1]["kind"].as_str(), history[1]["actor"].as_str()), (Some("revoked"), Some("human")));
    let mirrored = std::fs::read_to_string(&mirror).unwrap();
    assert!(mirrored.contains("REVOKED 2026-"), "the mirror follows the server's write: {mirrored}");
}

#[test]
fn completion_of_references_and_inlay_hints() {
    let env = Env::new();
    let id = env.ok(&["remember", "--kind", "gotcha", "--title", "Release the lock", "--body", "Or it deadlocks."]);
    let id: i64 = id.trim().trim_start_matches('#').parse().unwrap();
    let revoked = env.remember("task", "Old task");
    env.ok(&["revoke", &revoked.to_string(), "--reason", "done"]);
    env.ok(&["export"]);
    let mirror = env.root.join("MEMORY.md");
    let source = env.root.join("src/lock.rs");
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri(&source), "languageId": "rust", "version": 1, "text": "// see #\n// plain\n" } }));
    let items = client.request(
        "textDocument/completion",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 0, "character": 8 } }),
    );
    let items = items["result"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1, "revoked notes are not offered: {items:?}");
    assert_eq!(items[0]["label"], format!("#{id} Release the lock"));
    assert_eq!(items[0]["insertText"], id.to_string());
    assert_eq!(items[0]["documentation"]["value"], "Or it deadlocks.");
    let none = client.request(
        "textDocument/completion",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 1, "character": 5 } }),
    );
    assert_eq!(none["result"], Value::Null, "no `#` before the cursor");

    let text = std::fs::read_to_string(&mirror).unwrap();
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&mirror), "languageId": "markdown", "version": 1, "text": text } }),
    );
    let whole = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 99, "character": 0 } });
    let hints =
        client.request("textDocument/inlayHint", json!({ "textDocument": { "uri": uri(&mirror) }, "range": whole }));
    let hints = hints["result"].as_array().unwrap().clone();
    assert_eq!(hints.len(), 2);
    let line = text.lines().position(|l| l.starts_with(&format!("- [#{id}]"))).unwrap();
    let hint = hints.iter().find(|h| h["position"]["line"] == line).unwrap();
    assert_eq!(hint["position"]["character"], 6);
    assert!(hint["label"].as_str().unwrap().starts_with("agent · "), "{hint}");
    client.finish();
}

#[test]
fn another_processs_write_refreshes_a_clean_checkout_and_warns_a_dirty_one() {
    let env = Env::new();
    env.remember("gotcha", "First note");
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let checkout = client.request("memory/checkout", json!({}));
    let memory_uri = checkout["result"]["uri"].as_str().unwrap().to_string();
    let text = checkout["result"]["text"].as_str().unwrap().to_string();
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": memory_uri, "languageId": "markdown", "version": 1, "text": text } }),
    );
    client.wait(|m| m["method"] == "textDocument/publishDiagnostics");

    env.remember("finding", "Written by another process");
    let changed = client.wait(|m| m["method"] == "memory/didChange");
    assert_eq!(changed["params"]["uri"], memory_uri);
    assert_eq!(changed["params"]["epoch"], 2);
    let new_text = changed["params"]["text"].as_str().unwrap().to_string();
    assert!(new_text.contains("Written by another process"));

    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": memory_uri, "version": 2 }, "contentChanges": [{ "text": new_text.replace("First note", "First note, edited") }] }));
    env.remember("finding", "And another one");
    let warned = client.wait(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"].as_array().is_some_and(|d| {
                d.iter()
                    .any(|d| d["message"].as_str().unwrap_or("").starts_with("the store changed since this checkout"))
            })
    });
    assert_eq!(warned["params"]["uri"], memory_uri);
    client.finish();
}

#[test]
fn checkin_from_the_editor_shows_conflicts_and_keep_mine_resolves_them() {
    let env = Env::new();
    let lock = env.remember("gotcha", "Release the lock before restarting");
    env.remember("finding", "Cache hit ratio is 0.91");
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let checkout = client.request("memory/checkout", json!({}));
    let memory_uri = checkout["result"]["uri"].as_str().unwrap().to_string();
    let text = checkout["result"]["text"].as_str().unwrap().to_string();
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": memory_uri, "languageId": "markdown", "version": 1, "text": text } }),
    );

    // An agent revokes the note while the person raises its priority and adds a task.
    env.ok(&["revoke", &lock.to_string(), "--reason", "an agent revoked it"]);
    let edited = text
        .replace("medium · Release the lock", "high · Release the lock")
        .replace("## Tasks\n", "## Tasks\n\n- low · Typed in the editor\n");
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": memory_uri, "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    let has_conflict = |m: &Value| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"].as_array().is_some_and(|d| d.iter().any(|d| d["code"] == "conflict"))
    };
    let published = client.wait(has_conflict);
    let conflict = published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "conflict")
        .unwrap()
        .clone();
    assert_eq!(conflict["data"]["conflict"], lock, "{conflict}");
    assert_eq!(conflict["severity"], 1);
    assert!(conflict["message"].as_str().unwrap().contains("theirs: «revoked (an agent revoked it)"), "{conflict}");

    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": memory_uri }, "range": conflict["range"], "context": { "diagnostics": [conflict] } }),
    );
    let titles: Vec<&str> =
        actions["result"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(&titles[..2], [format!("Keep mine for #{lock}"), format!("Take theirs for #{lock}")]);

    let saved = client.request("memory/checkin", json!({ "uri": memory_uri, "text": edited }));
    let result = &saved["result"];
    assert_eq!(result["applied"], json!(["created #3"]), "{saved}");
    assert_eq!(result["conflicts"].as_array().unwrap().len(), 1);
    let carried = result["text"].as_str().unwrap().to_string();
    assert!(carried.contains("· high · Release the lock"), "the conflicting edit is kept as typed:\n{carried}");
    assert!(carried.contains("[#3] ") && carried.contains("Typed in the editor"));
    let left = result["diagnostics"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    let line = carried.lines().position(|l| l.contains("· high · Release the lock")).unwrap();
    assert_eq!(left[0]["range"]["start"]["line"], line);
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": memory_uri, "version": 3 }, "contentChanges": [{ "text": carried }] }),
    );

    let (kept, seen) = client.request_seeing(
        "workspace/executeCommand",
        json!({ "command": "mnemo.keepMine", "arguments": [{ "uri": memory_uri, "id": lock }] }),
    );
    assert_eq!(
        kept["result"]["applied"],
        json!([format!("reinstated #{lock}"), format!("#{lock} superseded by #4")]),
        "{kept}"
    );
    assert_eq!(kept["result"]["conflicts"], json!([]));
    // The notification may come just before or just after the response.
    let refreshed = match seen.iter().rfind(|m| m["method"] == "memory/didChange") {
        Some(message) => message.clone(),
        None => client.wait(|m| m["method"] == "memory/didChange"),
    };
    assert_eq!(refreshed["params"]["text"], kept["result"]["text"]);
    client.finish();
    assert_eq!(env.json(&["show", "4"])["priority"], "high");
    assert_eq!(env.json(&["show", "4"])["provenance"], "human");
}

#[test]
fn the_open_mirror_is_republished_when_another_process_writes() {
    let env = Env::new();
    let id = env.remember("gotcha", "Release the lock before restarting");
    env.ok(&["export", "--enable"]);
    let mirror = env.root.join("MEMORY.md");
    let text = std::fs::read_to_string(&mirror).unwrap();
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&mirror), "languageId": "markdown", "version": 1, "text": text } }),
    );
    let first = client.wait(|m| m["method"] == "textDocument/publishDiagnostics");
    assert_eq!(first["params"]["diagnostics"], json!([]));

    env.ok(&["revoke", &id.to_string(), "--reason", "wrong order"]);
    let revoked_at = std::time::Instant::now();
    let republished = client.wait(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
    });
    let elapsed = revoked_at.elapsed();
    assert_eq!(republished["params"]["uri"], uri(&mirror));
    assert_eq!(republished["params"]["diagnostics"][0]["message"], format!("#{id} was revoked: wrong order"));
    assert!(elapsed < Duration::from_secs(1), "republished within a second of the CLI's write: {elapsed:?}");
    client.finish();
}

#[test]
fn settings_choose_the_store_and_lexical_only_recall_is_announced() {
    let env = Env::new();
    env.remember("gotcha", "Kept in the default store about caches");
    std::fs::create_dir_all(env.home.join("other")).unwrap();
    let other = env.home.join("other/memory.db");
    let out = env
        .command(&["remember", "--kind", "finding", "--title", "Only in the other store about caches"])
        .env("MNEMO_STORE", &other)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut client = Client::start(&env);
    let options = json!({ "mnemo": { "storePath": other, "debounceMs": 20 } });
    client.request(
        "initialize",
        json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {}, "initializationOptions": options }),
    );
    client.notify("initialized", json!({}));
    let said = client.wait(|m| m["method"] == "window/showMessage");
    let message = said["params"]["message"].as_str().unwrap();
    assert!(message.starts_with("mnemo: recall runs lexical-only ("), "{message}");
    let symbols = client.request("workspace/symbol", json!({ "query": "caches" }));
    let names: Vec<&str> = symbols["result"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["#1 Only in the other store about caches"]);

    client.notify("workspace/didChangeConfiguration", json!({ "settings": { "mnemo": { "storePath": env.store } } }));
    let symbols = client.request("workspace/symbol", json!({ "query": "caches" }));
    let names: Vec<&str> = symbols["result"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["#1 Kept in the default store about caches"]);

    client.notify("workspace/didChangeConfiguration", json!({ "settings": { "mnemo": { "debounceMs": "soon" } } }));
    let complaint = client.wait(|m| m["method"] == "window/showMessage" && m["params"]["type"] == 1);
    assert!(complaint["params"]["message"].as_str().unwrap().starts_with("mnemo settings: "), "{complaint}");
    client.finish();
}
