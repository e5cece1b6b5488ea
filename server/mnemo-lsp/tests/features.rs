//! Every feature of the language server, in process: the project's one LSP
//! test client (`lsp_test_client`) over a Unix socket pair, speaking
//! JSON-RPC to `mnemo_lsp::serve` (on its own runtime thread) on a real
//! store, one check per feature with a snapshot of what an editor would get.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use expect_test::{Expect, expect};
use mnemo_core::{Actor, EventData, EventKind, Kind, NewNote, Priority, Provenance, Timestamp};
use mnemo_lsp::{Ranking, ServerConfig};
use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store};
use serde_json::{Value, json};

const AUG_1: i64 = 1_785_542_400;
const DAY: i64 = 86_400;

struct Harness {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store_path: PathBuf,
    client: lsp_test_client::Client,
}

fn note(kind: Kind, priority: Priority, title: &str, body: &str) -> NewNote {
    NewNote {
        kind,
        priority,
        title: title.into(),
        body: body.into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors: vec![],
    }
}

/// A workspace with a note of every state, its mirror on disk, and `src/lock.rs`.
fn populate(root: &Path, store_path: &Path) -> Workspace {
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lock.rs"), "fn main() {}\nlet guard = lock();\nrestart(guard); // see #1\n").unwrap();
    let workspace = Workspace::resolve(Some(root.to_str().unwrap()), root).unwrap();
    let mut store = Store::open(store_path).unwrap();
    store.write_as(Some(mnemo_store::person::Person { name: "alice".into(), machine: "laptop".into() }));
    let scope = Scope::Workspace(workspace.id.clone());
    let at = |day: i64| Timestamp(AUG_1 + day * DAY);
    let event = |kind, day, reason: Option<&str>| EventData {
        kind,
        actor: Actor::Agent,
        at: at(day),
        reason: reason.map(str::to_string),
    };
    store
        .write(|w| {
            let mut lock = note(
                Kind::Gotcha,
                Priority::High,
                "Release the lock before restarting",
                "Restarting with the lock held deadlocks the new daemon.",
            );
            lock.anchors = vec![mnemo_store::anchor::capture(root, "src/lock.rs:2-3").unwrap()];
            w.create(&workspace.id, lock, Actor::Agent, at(0))?;
            let cache = w.create(
                &workspace.id,
                note(Kind::Finding, Priority::Medium, "Index rebuild reuses the embed cache", ""),
                Actor::Agent,
                at(0),
            )?;
            w.append(&scope, cache, event(EventKind::StaleFlagged, 1, Some("cache.rs changed")))?;
            let openssl = w.create(
                &workspace.id,
                note(Kind::Decision, Priority::Medium, "Use openssl", ""),
                Actor::Agent,
                at(0),
            )?;
            w.supersede(
                &scope,
                openssl,
                note(Kind::Decision, Priority::Medium, "Use rustls", "Static builds."),
                Actor::Agent,
                at(2),
                Some("static".into()),
            )?;
            w.create(
                &workspace.id,
                note(Kind::Directive, Priority::High, "Run tests inside the venv", ""),
                Actor::Agent,
                at(0),
            )?;
            let port =
                w.create(&workspace.id, note(Kind::Task, Priority::Low, "Port the cache", ""), Actor::Agent, at(0))?;
            w.append(&scope, port, event(EventKind::Revoked, 1, Some("done elsewhere")))?;
            Ok(())
        })
        .unwrap();
    let target = mnemo_store::mirror::MirrorTarget::resolve(&workspace, Path::new("MEMORY.md")).unwrap();
    mnemo_store::mirror::export(&store, &target).unwrap();
    workspace
}

impl Harness {
    fn start() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("project");
        let store_path = dir.path().join("memory.db");
        let workspace = populate(&root, &store_path);
        let config = ServerConfig {
            store_path: store_path.clone(),
            workspace,
            load_ranking: Arc::new(|_: &Path, _: Option<&Path>| Ranking {
                embed: None,
                lexical_reason: Some("no model in this test".into()),
            }),
            clock: Arc::new(|| Timestamp(AUG_1 + 3 * DAY)),
        };
        let (client, server) = std::os::unix::net::UnixStream::pair().unwrap();
        // The server on a runtime of its own; it ends when the client's side closes.
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            runtime.block_on(async move {
                server.set_nonblocking(true).unwrap();
                let server = tokio::net::UnixStream::from_std(server).unwrap();
                let (server_read, server_write) = tokio::io::split(server);
                mnemo_lsp::serve(server_read, server_write, config).await;
            });
        });
        let client = lsp_test_client::Client::over(client.try_clone().unwrap(), client);
        let mut harness = Harness { _dir: dir, root, store_path, client };
        let root_uri = harness.uri("");
        harness.client.initialize(&root_uri);
        harness
    }

    fn uri(&self, relative: &str) -> String {
        let path = if relative.is_empty() { self.root.clone() } else { self.root.join(relative) };
        format!("file://{}", path.display())
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.client.notify(method, params);
    }

    /// The result of a request, or `{"error": …}`.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let answer = self.client.request(method, params);
        answer.get("result").cloned().unwrap_or_else(|| json!({ "error": answer["error"] }))
    }

    /// The first message `wanted` accepts, among those already received or to come.
    fn wait(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        self.client.find(wanted)
    }

    /// Open a file of the workspace with its text on disk; returns its diagnostics.
    fn open(&mut self, relative: &str) -> Value {
        let uri = self.uri(relative);
        let text = std::fs::read_to_string(self.root.join(relative)).unwrap();
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "markdown", "version": 1, "text": text } }),
        );
        self.wait(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)["params"]["diagnostics"].clone()
    }

    /// Wait for the first drift check (its code lens on `src/lock.rs`); returns the lenses.
    fn drift_checked(&mut self) -> Value {
        for _ in 0..200 {
            let lenses =
                self.request("textDocument/codeLens", json!({ "textDocument": { "uri": self.uri("src/lock.rs") } }));
            if lenses.is_array() {
                return lenses;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("no drift check within 5 s");
    }

    /// The 0-based line of entry `#id` in the mirror.
    fn mirror_line(&self, id: i64) -> usize {
        let text = std::fs::read_to_string(self.root.join("MEMORY.md")).unwrap();
        text.lines().position(|l| l.starts_with(&format!("- [#{id}]"))).unwrap()
    }

    fn position(&self, relative: &str, line: usize, character: usize) -> Value {
        json!({ "textDocument": { "uri": self.uri(relative) }, "position": { "line": line, "character": character } })
    }

    /// A snapshot with the temp paths replaced.
    fn check(&self, actual: &Value, expect: Expect) {
        let text = serde_json::to_string_pretty(actual).unwrap().replace(&self.root.display().to_string(), "$ROOT");
        expect.assert_eq(&text);
    }
}

fn lines(items: &Value, field: impl Fn(&Value) -> String) -> Value {
    Value::from(items.as_array().unwrap().iter().map(field).collect::<Vec<_>>())
}

#[test]
fn mirror_diagnostics_mark_every_state() {
    let mut h = Harness::start();
    let diagnostics = h.open("MEMORY.md");
    let summary = lines(&diagnostics, |d| {
        format!("{} {} {} {}", d["range"]["start"]["line"], d["severity"], d["tags"], d["message"].as_str().unwrap())
    });
    h.check(
        &summary,
        expect![[r#"
        [
          "9 4 [2] #6 was revoked: done elsewhere",
          "19 2 null #2 is flagged stale: cache.rs changed; verify it before relying on it",
          "25 4 [2] #3 was superseded by #4"
        ]"#]],
    );
}

#[test]
fn hover_shows_the_whole_note_in_the_mirror_and_in_source() {
    let mut h = Harness::start();
    h.open("MEMORY.md");
    let lenses = h.drift_checked();
    h.check(
        &lines(&lenses, |l| format!("{} {}", l["range"]["start"]["line"], l["command"]["title"].as_str().unwrap())),
        expect![[r#"
            [
              "1 1 note: #1"
            ]"#]],
    );
    let line = h.mirror_line(1);
    let hover = h.request("textDocument/hover", h.position("MEMORY.md", line, 4));
    h.check(&hover["contents"]["value"], expect![[r#""**#1 Release the lock before restarting**\n\ngotcha · high · active · created 2026-08-01 (3d)\n\n*agent* — recorded by an agent session; verify before relying on it\n\nRestarting with the lock held deadlocks the new daemon.\n\nAnchors:\n- `src/lock.rs:2-3` — fresh\n\nHistory:\n- 2026-08-01 created (agent) by agent (alice@laptop)\n\nNever delivered to an agent\n""#]]);
    h.open("src/lock.rs");
    let in_source = h.request("textDocument/hover", h.position("src/lock.rs", 2, 24));
    assert_eq!(in_source["contents"]["value"], hover["contents"]["value"]);
    let on_anchored_line = h.request("textDocument/hover", h.position("src/lock.rs", 1, 0));
    assert_eq!(on_anchored_line["contents"]["value"], hover["contents"]["value"], "the note anchored to the line");
    let unanchored = h.request("textDocument/hover", h.position("src/lock.rs", 0, 0));
    assert_eq!(unanchored, Value::Null);
    let past_end = h.request("textDocument/hover", h.position("src/lock.rs", 99, 99));
    assert_eq!(past_end, Value::Null);
}

#[test]
fn outline_folding_and_links() {
    let mut h = Harness::start();
    h.open("MEMORY.md");
    let uri = h.uri("MEMORY.md");
    let symbols = h.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    let outline = lines(&symbols, |s| {
        let children: Vec<String> = s["children"]
            .as_array()
            .map_or(vec![], |c| c.iter().map(|c| c["name"].as_str().unwrap().to_string()).collect());
        format!("{}: {}", s["name"].as_str().unwrap(), children.join(" | "))
    });
    h.check(
        &outline,
        expect![[r#"
        [
          "Directives: #5 Run tests inside the venv",
          "Tasks: #6 Port the cache",
          "Gotchas: #1 Release the lock before restarting",
          "Findings: #2 Index rebuild reuses the embed cache",
          "References: ",
          "Decisions: #3 Use openssl | #4 Use rustls",
          "Operational: "
        ]"#]],
    );
    let folds = h.request("textDocument/foldingRange", json!({ "textDocument": { "uri": uri } }));
    h.check(
        &lines(&folds, |f| format!("{}-{}", f["startLine"], f["endLine"])),
        expect![[r#"
        [
          "3-5",
          "7-9",
          "11-15",
          "17-19",
          "23-28",
          "13-15",
          "27-28"
        ]"#]],
    );
    let links = h.request("textDocument/documentLink", json!({ "textDocument": { "uri": uri } }));
    h.check(
        &lines(&links, |l| format!("{} → {}", l["range"]["start"]["line"], l["target"].as_str().unwrap())),
        expect![[r#"
            [
              "15 → file://$ROOT/src/lock.rs#L2"
            ]"#]],
    );
}

#[test]
fn workspace_symbols_run_recall_and_say_what_was_hidden() {
    let mut h = Harness::start();
    let found = h.request("workspace/symbol", json!({ "query": "lock restarting" }));
    h.check(
        &lines(&found, |s| format!("{} · {}", s["name"].as_str().unwrap(), s["containerName"].as_str().unwrap())),
        expect![[r##"
            [
              "#1 Release the lock before restarting · Gotchas · lexical only (no model in this test); hidden: nothing"
            ]"##]],
    );
    let none = h.request("workspace/symbol", json!({ "query": "cache" }));
    assert_eq!(none, json!([]));
    let said =
        h.wait(|m| m["method"] == "window/logMessage" && m["params"]["message"].as_str().unwrap().contains("'cache'"));
    h.check(&said["params"]["message"], expect![[r#""mnemo recall 'cache': 0 results; lexical only (no model in this test); hidden: 1 revoked, 1 stale (#2)""#]]);
    let directives = h.request("workspace/symbol", json!({ "query": "" }));
    h.check(
        &lines(&directives, |s| s["name"].as_str().unwrap().to_string()),
        expect![[r##"
        [
          "#5 Run tests inside the venv"
        ]"##]],
    );
}

#[test]
fn code_actions_completion_inlay_hints_and_definition() {
    let mut h = Harness::start();
    h.open("MEMORY.md");
    let line = h.mirror_line(1);
    let range = json!({ "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 0 } });
    let actions = h.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": h.uri("MEMORY.md") }, "range": range, "context": { "diagnostics": [] } }),
    );
    h.check(
        &lines(&actions, |a| {
            format!(
                "{} → {} {}",
                a["title"].as_str().unwrap(),
                a["command"]["command"].as_str().unwrap(),
                a["command"]["arguments"]
            )
        }),
        expect![[r#"
            [
              "Revoke #1… → mnemo.revoke [1]",
              "Flag #1 stale… → mnemo.flagStale [1]",
              "Supersede #1 (edit it in the checkout) → mnemo.supersede [1]",
              "Promote #1 to human → mnemo.promote [1]",
              "Show the history of #1 → mnemo.showHistory [1]",
              "Forget #1 for good… → mnemo.forget [1]"
            ]"#]],
    );

    h.open("src/lock.rs");
    let completion = h.request("textDocument/completion", h.position("src/lock.rs", 2, 24));
    h.check(
        &lines(&completion, |c| format!("{} ({})", c["label"].as_str().unwrap(), c["detail"].as_str().unwrap_or(""))),
        expect![[r##"
            [
              "#5 Run tests inside the venv (directive/high · agent)",
              "#4 Use rustls (decision/medium · agent)",
              "#2 Index rebuild reuses the embed cache (finding/medium · agent)",
              "#1 Release the lock before restarting (gotcha/high · agent)"
            ]"##]],
    );

    let whole = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 99, "character": 0 } });
    let hints =
        h.request("textDocument/inlayHint", json!({ "textDocument": { "uri": h.uri("MEMORY.md") }, "range": whole }));
    h.check(
        &lines(&hints, |i| {
            format!("{}:{} {}", i["position"]["line"], i["position"]["character"], i["label"].as_str().unwrap())
        }),
        expect![[r#"
            [
              "5:6 agent · 3d",
              "9:6 agent · 3d",
              "13:6 agent · 3d",
              "19:6 agent · 3d",
              "25:6 agent · 3d",
              "27:6 agent · 1d"
            ]"#]],
    );

    let definition = h.request("textDocument/definition", h.position("src/lock.rs", 2, 24));
    h.check(
        &json!(format!("{} line {}", definition["uri"].as_str().unwrap(), definition["range"]["start"]["line"])),
        expect![[r#""file://$ROOT/MEMORY.md line 13""#]],
    );
}

#[test]
fn checkout_edit_and_checkin_through_the_extension_methods() {
    let mut h = Harness::start();
    let checkout = h.request("memory/checkout", json!({}));
    let uri = checkout["uri"].as_str().unwrap().to_string();
    let text = checkout["text"].as_str().unwrap().to_string();
    h.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "markdown", "version": 1, "text": text } }),
    );
    let edited = text
        .replace("high · Run tests inside the venv", "high · REVOKED (we use nix now) · Run tests inside the venv")
        .replace("## Operational\n", "## Operational\n\n- urgent · Not a priority\n");
    h.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    let previewed = h.wait(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 2);
    h.check(
        &lines(&previewed["params"]["diagnostics"], |d| {
            format!("{} {}", d["range"]["start"]["line"], d["message"].as_str().unwrap())
        }),
        expect![[r#"
            [
              "32 unknown priority 'urgent'; expected one of: high, medium, low",
              "5 #5 was revoked: we use nix now",
              "9 #6 was revoked: done elsewhere",
              "19 #2 is flagged stale: cache.rs changed; verify it before relying on it",
              "25 #3 was superseded by #4"
            ]"#]],
    );
    let result = h.request("memory/checkin", json!({ "uri": uri }));
    h.check(&json!({ "applied": result["applied"], "epoch": result["epoch"], "left": lines(&result["diagnostics"], |d| format!("{} {}", d["range"]["start"]["line"], d["message"].as_str().unwrap())) }), expect![[r#"
        {
          "applied": [
            "revoked #5 (we use nix now)"
          ],
          "epoch": 2,
          "left": [
            "32 unknown priority 'urgent'; expected one of: high, medium, low"
          ]
        }"#]]);
    let store = Store::open(&h.store_path).unwrap();
    let history = store.history(&Scope::All, 5).unwrap();
    assert_eq!(history.last().unwrap().data.actor, Actor::Human);
    let not_open = h.request("memory/checkin", json!({ "uri": "memory:///elsewhere/MEMORY.md" }));
    h.check(
        &not_open,
        expect![[r#"
        {
          "error": {
            "code": -32602,
            "message": "memory:///elsewhere/MEMORY.md is not open; send its text in \"text\""
          }
        }"#]],
    );
}
