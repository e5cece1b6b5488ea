//! Editing the memory through the language server as the editors do it, at
//! the protocol level (the journeys in the real editors are in
//! editors/vscode/test and editors/neovim/tests): both spellings of a
//! `memory:` URI are one document, saving a `memory:` document never writes
//! the mirror or checks in twice, text that was not applied survives other
//! processes' writes, the configured mirror path is where symbols point,
//! code action kinds, Lua's empty settings, and re-anchoring after a move
//! and an edit.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::lsp::{Client, uri};
use crate::support::Env;

fn open(client: &mut Client, uri: &str, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "markdown", "version": 1, "text": text } }),
    );
}

fn change(client: &mut Client, uri: &str, version: i32, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
    );
}

/// The messages the server sends within `quiet`: after it, a request is
/// sent and everything up to its answer is collected.
fn drain(client: &mut Client, quiet: Duration) -> Vec<Value> {
    std::thread::sleep(quiet);
    let probe = client.send_request("workspace/symbol", json!({ "query": "" }));
    let mut seen = Vec::new();
    loop {
        let message = client.wait(|_| true);
        if message["id"] == probe {
            return seen;
        }
        seen.push(message);
    }
}

#[test]
fn both_spellings_of_a_memory_uri_are_one_document_and_it_refreshes_before_its_first_save() {
    let env = Env::new();
    env.remember("gotcha", "First note");
    let mut client = Client::initialized(&env);
    let checkout = client.request("memory/checkout", json!({}));
    let canonical = checkout["result"]["uri"].as_str().unwrap().to_string();
    assert!(canonical.starts_with("memory:///"), "{canonical}");
    // VS Code's spelling: no empty authority.
    let vscode = canonical.replacen("memory:///", "memory:/", 1);
    let text = checkout["result"]["text"].as_str().unwrap().to_string();
    open(&mut client, &vscode, &text);
    env.remember("finding", "Written by an agent");
    let changed = client.wait(|m| m["method"] == "memory/didChange");
    assert_eq!(changed["params"]["uri"], canonical.as_str());
    assert!(changed["params"]["text"].as_str().unwrap().contains("Written by an agent"));
    // Requests in either spelling see the same document.
    let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": vscode } }));
    assert!(symbols["result"].is_array(), "{symbols}");
    client.finish();
}

#[test]
fn saving_a_memory_document_never_writes_the_mirror_and_checks_in_once() {
    let env = Env::new();
    let id = env.remember("gotcha", "Release the lock");
    env.ok(&["export", "--enable"]);
    let mirror = env.root.join("MEMORY.md");
    let before = std::fs::read(&mirror).unwrap();
    let mut client = Client::initialized(&env);
    let checkout = client.request("memory/checkout", json!({}));
    let memory = checkout["result"]["uri"].as_str().unwrap().to_string();
    let text = checkout["result"]["text"].as_str().unwrap().to_string();
    open(&mut client, &memory, &text);
    let edited = text.replace("Release the lock", "Release the lock first");
    change(&mut client, &memory, 2, &edited);
    // What VS Code sends after its file system provider saved: didSave with the text.
    client.notify("textDocument/didSave", json!({ "textDocument": { "uri": memory }, "text": edited }));
    let seen = drain(&mut client, Duration::from_millis(800));
    let about_the_save = |m: &&Value| {
        m["method"] == "window/showMessage"
            && (m["params"]["type"] == 1 || m["params"]["message"].as_str().is_some_and(|t| t.contains("mirror")))
    };
    assert!(!seen.iter().any(|m| about_the_save(&m)), "{seen:?}");
    assert_eq!(env.json(&["history", &id.to_string()]).as_array().unwrap().len(), 1, "didSave checked nothing in");
    assert_eq!(std::fs::read(&mirror).unwrap(), before, "the mirror is untouched");
    // The one check-in: exactly one supersession; the mirror writer renders it, read-only.
    let saved = client.request("memory/checkin", json!({ "uri": memory, "text": edited }));
    assert_eq!(saved["result"]["applied"], json!([format!("#{id} superseded by #2")]), "{saved}");
    assert_eq!(saved["result"]["unapplied"], 0);
    let history = env.json(&["history", &id.to_string()]);
    assert_eq!(history.as_array().unwrap().len(), 2, "{history}");
    // The language server stands for the mirror: it follows the check-in
    // from there, off the request.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let rendered = loop {
        let rendered = std::fs::read_to_string(&mirror).unwrap();
        if rendered.contains("Release the lock first") || std::time::Instant::now() > deadline {
            break rendered;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(rendered.starts_with("<!-- mnemo mirror") && rendered.contains("Release the lock first"), "{rendered}");
    assert_eq!(std::fs::metadata(&mirror).unwrap().permissions().mode() & 0o777, 0o444);
    client.finish();
}

#[test]
fn text_that_was_not_applied_survives_other_processes_writes() {
    let env = Env::new();
    let lock = env.remember("gotcha", "Release the lock");
    let mut client = Client::initialized(&env);
    let checkout = client.request("memory/checkout", json!({}));
    let memory = checkout["result"]["uri"].as_str().unwrap().to_string();
    let text = checkout["result"]["text"].as_str().unwrap().to_string();
    open(&mut client, &memory, &text);
    env.ok(&["revoke", &lock.to_string(), "--reason", "an agent revoked it"]);
    let typed = text
        .replace("medium · Release the lock", "high · Release the lock")
        .replace("## Tasks\n", "## Tasks\n\n- urgent · Not a priority\n");
    let saved = client.request("memory/checkin", json!({ "uri": memory, "text": typed }));
    assert_eq!(saved["result"]["unapplied"], 2, "{saved}");
    let carried = saved["result"]["text"].as_str().unwrap().to_string();
    assert!(carried.contains("high · Release the lock") && carried.contains("- urgent · Not a priority"));
    change(&mut client, &memory, 2, &carried);
    // Three unrelated writes by an agent: the document is never replaced, and says why.
    for title in ["One", "Two", "Three"] {
        env.remember("finding", title);
    }
    let warned = client.wait(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["diagnostics"].as_array().is_some_and(|d| {
                d.iter().any(|d| d["message"].as_str().unwrap_or("").contains("your text is kept as it is"))
            })
    });
    assert_eq!(warned["params"]["uri"], memory.as_str());
    let seen = drain(&mut client, Duration::from_millis(800));
    assert!(!seen.iter().any(|m| m["method"] == "memory/didChange"), "{seen:?}");
    // Saving it again reports the same conflict and error, and applies nothing.
    let again = client.request("memory/checkin", json!({ "uri": memory }));
    assert_eq!(again["result"]["applied"], json!([]), "{again}");
    assert_eq!(again["result"]["conflicts"].as_array().unwrap().len(), 1, "{again}");
    assert!(again["result"]["text"].as_str().unwrap().contains("- urgent · Not a priority"));
    client.finish();
}

#[test]
fn the_configured_mirror_path_is_where_the_mirror_symbols_and_definitions_are() {
    let env = Env::new();
    std::fs::create_dir_all(env.root.join("docs")).unwrap();
    std::fs::create_dir_all(env.root.join(".mnemo")).unwrap();
    std::fs::write(env.root.join(".mnemo/config.toml"), "[memory_export]\nenabled = true\npath = \"docs/MEMORY.md\"\n")
        .unwrap();
    let id = env.remember("directive", "Run tests inside the venv");
    let mirror = env.root.join("docs/MEMORY.md");
    assert!(mirror.is_file());
    let mut client = Client::initialized(&env);
    let located = client.request("memory/mirror", json!({}));
    assert_eq!(located["result"], json!({ "path": mirror.display().to_string(), "enabled": true }));
    let symbols = client.request("workspace/symbol", json!({ "query": "" }));
    assert_eq!(symbols["result"][0]["location"]["uri"], uri(&mirror), "{symbols}");
    let source = env.root.join("src/notes.rs");
    let text = format!("// see #{id}\n");
    std::fs::write(&source, &text).unwrap();
    open(&mut client, &uri(&source), &text);
    let definition = client.request(
        "textDocument/definition",
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 0, "character": 8 } }),
    );
    assert_eq!(definition["result"]["uri"], uri(&mirror), "{definition}");
    client.finish();
}

#[test]
fn entry_actions_are_refactors_and_only_fixes_are_quick_fixes() {
    let env = Env::new();
    env.remember("gotcha", "Release the lock");
    let mut client = Client::initialized(&env);
    let checkout = client.request("memory/checkout", json!({}));
    let memory = checkout["result"]["uri"].as_str().unwrap().to_string();
    let text = checkout["result"]["text"].as_str().unwrap().to_string();
    open(&mut client, &memory, &text);
    let line = text.lines().position(|l| l.starts_with("- [#1]")).unwrap();
    let range = json!({ "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 0 } });
    let asked = |client: &mut Client, only: Value| {
        let context = match only {
            Value::Null => json!({ "diagnostics": [] }),
            only => json!({ "diagnostics": [], "only": only }),
        };
        client.request(
            "textDocument/codeAction",
            json!({ "textDocument": { "uri": memory }, "range": range, "context": context }),
        )
    };
    let all = asked(&mut client, Value::Null);
    let kinds: Vec<&str> = all["result"].as_array().unwrap().iter().map(|a| a["kind"].as_str().unwrap()).collect();
    assert!(!kinds.is_empty() && kinds.iter().all(|k| *k == "refactor.mnemo"), "{kinds:?}");
    let fixes = asked(&mut client, json!(["quickfix"]));
    assert_eq!(fixes["result"], Value::Null, "no quick fix without a diagnostic: {fixes}");
    let refactors = asked(&mut client, json!(["refactor"]));
    assert_eq!(refactors["result"].as_array().unwrap().len(), kinds.len());
    client.finish();
}

#[test]
fn an_empty_lua_table_as_settings_is_no_settings() {
    let env = Env::new();
    let mut client = Client::start(&env);
    client.request(
        "initialize",
        json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {}, "initializationOptions": [] }),
    );
    client.notify("initialized", json!({}));
    let seen = drain(&mut client, Duration::from_millis(500));
    let errors: Vec<&Value> = seen.iter().filter(|m| m["method"] == "window/showMessage").collect();
    assert!(errors.iter().all(|m| !m["params"]["message"].as_str().unwrap().contains("settings")), "{errors:?}");
    client.finish();
}

#[test]
fn after_a_move_and_then_an_edit_re_anchor_offers_where_the_code_is_now() {
    let env = Env::new();
    let id = crate::support::parse_id(&env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Release the lock",
        "--anchor",
        "src/lock.rs:2-3",
    ]));
    let source = env.root.join("src/lock.rs");
    let mut client = Client::initialized(&env);
    let text = std::fs::read_to_string(&source).unwrap();
    open(&mut client, &uri(&source), &text);
    let lens_line = |client: &mut Client, want: u64| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let lenses = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri(&source) } }));
            if lenses["result"][0]["range"]["start"]["line"] == want {
                return;
            }
            assert!(Instant::now() < deadline, "no lens at line {want}: {lenses}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    lens_line(&mut client, 1);
    // The code moves down five lines (saved), then is edited (saved).
    let moved = format!("{}{text}", "// new\n".repeat(5));
    std::fs::write(&source, &moved).unwrap();
    lens_line(&mut client, 6);
    std::fs::write(&source, moved.replace("line 2\n", "line 2, edited\n")).unwrap();
    client.wait(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri(&source).as_str()
            && m["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["message"].as_str().unwrap_or("").contains("they changed")))
    });
    let range = json!({ "start": { "line": 6, "character": 0 }, "end": { "line": 6, "character": 0 } });
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri(&source) }, "range": range, "context": { "diagnostics": [] } }),
    );
    let first = &actions["result"][0];
    assert_eq!(first["title"], format!("Re-anchor #{id} to the current text (lines 7-8)"), "{actions}");
    assert_eq!(first["kind"], "quickfix");
    client.finish();
}

#[test]
fn keep_mine_on_a_note_another_checkout_superseded_supersedes_its_successor() {
    let env = Env::new();
    let id = env.remember("gotcha", "Release the lock");
    let (first, second) = (env.home.join("a.md"), env.home.join("b.md"));
    env.ok(&["checkout", "--out", first.to_str().unwrap()]);
    env.ok(&["checkout", "--out", second.to_str().unwrap()]);
    let retitle = |file: &std::path::Path, to: &str| {
        let text = std::fs::read_to_string(file).unwrap();
        std::fs::write(file, text.replace("Release the lock", to)).unwrap();
    };
    retitle(&first, "Release the lock first");
    env.ok(&["checkin", first.to_str().unwrap()]);
    retitle(&second, "Release the lock, mine");
    let out = env.command(&["checkin", second.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "a conflict");
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(said.contains("theirs: superseded by #2: «medium · Release the lock first"), "{said}");
    let kept = env.ok(&["checkin", second.to_str().unwrap(), "--keep-mine", &id.to_string()]);
    assert_eq!(kept, "#2 superseded by #3\n");
    assert_eq!(env.json(&["show", "3"])["title"], "Release the lock, mine");
}

#[test]
fn lenses_are_asked_for_again_when_the_drift_check_changes_them() {
    let env = Env::new();
    env.ok(&["remember", "--kind", "gotcha", "--title", "Anchored", "--anchor", "src/lock.rs:2-3"]);
    let mut client = Client::start(&env);
    let capabilities =
        json!({ "workspace": { "codeLens": { "refreshSupport": true }, "inlayHint": { "refreshSupport": true } } });
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": capabilities }));
    client.notify("initialized", json!({}));
    let asked = client.wait(|m| m["method"] == "workspace/codeLens/refresh");
    let id = asked["id"].clone();
    client.send_raw(
        format!(
            "Content-Length: {}\r\n\r\n{}",
            json!({"jsonrpc":"2.0","id":id,"result":null}).to_string().len(),
            json!({"jsonrpc":"2.0","id":id,"result":null})
        )
        .as_bytes(),
    );
    // A store change (an anchor re-checked) asks again.
    env.ok(&["remember", "--kind", "gotcha", "--title", "Another", "--anchor", "src/lock.rs:5-6"]);
    client.wait(|m| m["method"] == "workspace/codeLens/refresh");
    client.finish();
}

#[test]
fn an_open_memory_document_follows_forgets_and_supersessions_from_a_terminal() {
    // The language server keeps its rendering and brings it up to date from
    // the log; a forget leaves no event, so it must still be seen.
    let env = Env::new();
    let kept = env.remember("gotcha", "Stays as it is");
    let forgotten = env.remember("finding", "Forgotten from a terminal");
    let superseded = env.remember("task", "Retitled from a terminal");
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let (memory, text) = client.open_checkout();
    assert!(text.contains("Forgotten from a terminal"), "{text}");

    env.ok(&["forget", &forgotten.to_string(), "--confirm"]);
    let after_forget =
        client.wait(|m| m["method"] == "memory/didChange")["params"]["text"].as_str().unwrap().to_string();
    assert!(!after_forget.contains("Forgotten from a terminal"), "{after_forget}");
    // The editor applies the new text, as an editor does.
    change(&mut client, &memory, 2, &after_forget);
    env.ok(&["supersede", &superseded.to_string(), "--kind", "task", "--title", "Retitled, the new text"]);
    let changed = client.wait(|m| m["method"] == "memory/didChange" && m["params"]["uri"] == memory);
    let after = changed["params"]["text"].as_str().unwrap();
    // Exactly what a fresh checkout shows (a terminal's, rendered whole), header aside.
    let fresh = env.ok(&["checkout"]);
    let body = |t: &str| t.split_once('\n').map(|(_, rest)| rest.to_string()).unwrap();
    assert_eq!(body(after), body(&fresh));
    assert!(after.contains(&format!("[#{kept}]")) && after.contains("Retitled, the new text"), "{after}");
    assert!(!after.contains("Forgotten from a terminal"), "{after}");
}

/// Save, then undo in the editor and save again: the undone text names the
/// checkout before the first save (its header's epoch), so it is checked in
/// against that base — the first save stands, nothing is applied twice or
/// lost, and the buffer gets the store as it is. Then the same save once more.
#[test]
fn an_undo_after_a_save_checks_in_against_the_older_checkout() {
    let env = Env::new();
    let id = env.remember("gotcha", "Release the lock");
    let mut client = Client::initialized(&env);
    let (memory, original) = client.open_checkout();
    let edited = original.replace("Release the lock", "Release the lock first");
    change(&mut client, &memory, 2, &edited);
    let saved = client.request("memory/checkin", json!({ "uri": memory, "text": edited }));
    assert_eq!(saved["result"]["applied"], json!([format!("#{id} superseded by #2")]), "{saved}");
    let after_save = saved["result"]["text"].as_str().unwrap().to_string();
    assert_ne!(after_save.lines().next(), original.lines().next(), "a new epoch");
    // Undo back past the save: the buffer is the first checkout again.
    change(&mut client, &memory, 3, &original);
    for attempt in 0..2 {
        let again = client.request("memory/checkin", json!({ "uri": memory, "text": original }));
        assert_eq!(again["result"]["applied"], json!([]), "attempt {attempt}: {again}");
        assert_eq!(again["result"]["unapplied"], 0, "{again}");
        let text = again["result"]["text"].as_str().unwrap();
        assert!(text.contains("Release the lock first") && text.contains("SUPERSEDED"), "{text}");
    }
    let history = env.json(&["history", &id.to_string()]);
    assert_eq!(history.as_array().unwrap().len(), 2, "one supersession, nothing more: {history}");
    client.finish();
}
