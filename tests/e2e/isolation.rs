//! Workspace isolation at every entry point: two projects share one store,
//! and nothing of the other project reaches this one — CLI reads, recall,
//! lifecycle commands, the mirror and checkouts, hooks, MCP tools and
//! resources, language-server hover, symbols and definitions — unless
//! explicitly asked (`--all-workspaces`).

use serde_json::json;

use crate::lsp::{Client, uri};
use crate::mcp::Mcp;
use crate::support::Env;

const SECRET: &str = "Other project: the staging password rotates on Fridays";

/// A second project in the same store; the id of its note, and its root.
fn other_project(env: &Env) -> (i64, String) {
    let other = env.home.join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    let out =
        env.command(&["remember", "--kind", "directive", "--title", SECRET]).current_dir(&other).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (crate::support::parse_id(&String::from_utf8_lossy(&out.stdout)), other.display().to_string())
}

#[test]
fn no_entry_point_shows_another_workspaces_note_unless_asked() {
    let env = Env::new();
    let mine = env.remember("gotcha", "Release the lock before restarting");
    let (theirs, other_root) = other_project(&env);
    let id = theirs.to_string();
    let before = env.fingerprint();

    // CLI reads.
    assert!(!env.ok(&["list"]).contains("staging password"));
    assert!(env.ok(&["list", "--all-workspaces"]).contains("staging password"));
    for args in [vec!["show", &id], vec!["history", &id], vec!["expand", &id]] {
        let err = env.fails(&args, 1);
        assert!(
            err.contains(&format!("note #{theirs} belongs to another workspace ({other_root})")),
            "{args:?}: {err}"
        );
    }
    assert_eq!(env.json(&["show", &id, "--all-workspaces"])["title"], SECRET);
    let recalled = env.json(&["recall", "staging password rotation"]);
    assert!(!recalled.to_string().contains("staging password"), "{recalled}");
    assert_eq!(recalled["hidden"]["other workspace"], 1, "the other workspace's match is counted: {recalled}");
    assert!(!env.ok(&["context"]).contains("staging password"));
    let hook = env.command(&["hook", "session-start"]).stdin(std::process::Stdio::null()).output().unwrap();
    assert!(!String::from_utf8_lossy(&hook.stdout).contains("staging password"));
    env.ok(&["export"]);
    assert!(!std::fs::read_to_string(env.root.join("MEMORY.md")).unwrap().contains("staging password"));
    let checkout = env.home.join("checkout.md");
    env.ok(&["checkout", "--out", checkout.to_str().unwrap()]);
    assert!(!std::fs::read_to_string(&checkout).unwrap().contains("staging password"));

    // CLI writes refuse the other workspace's note.
    for args in [
        vec!["revoke", &id, "--reason", "x"],
        vec!["flag-stale", &id, "--reason", "x"],
        vec!["reinstate", &id, "--reason", "x"],
        vec!["promote", &id, "--as-human"],
        vec!["supersede", &id, "--title", "y"],
        vec!["forget", &id, "--confirm"],
    ] {
        let err = env.fails(&args, 1);
        assert!(err.contains("belongs to another workspace"), "{args:?}: {err}");
    }
    assert_eq!(env.fingerprint(), before, "nothing was written");

    // MCP tools and resources.
    let mut mcp = Mcp::start(&env);
    let (recall, _) = mcp.call("recall", json!({ "query": "staging password rotation" }));
    assert!(!recall.contains("staging password"), "{recall}");
    for (tool, args) in [
        ("expand", json!({ "ids": [theirs] })),
        ("history", json!({ "id": theirs })),
        ("revoke", json!({ "id": theirs, "reason": "x" })),
        ("flag_stale", json!({ "id": theirs, "reason": "x" })),
        ("remember", json!({ "kind": "finding", "title": "z", "supersedes": theirs })),
    ] {
        let (text, error) = mcp.call(tool, args);
        assert!(error && text.contains("belongs to another workspace"), "{tool}: {text}");
    }
    let (context, _) = mcp.call("context", json!({}));
    assert!(!context.contains("staging password"));
    let resources = mcp.request("resources/list", json!({}));
    assert_eq!(resources["result"]["resources"].as_array().unwrap().len(), 1);
    let uri_other = format!("memory://{other_root}/MEMORY.md");
    let read = mcp.request("resources/read", json!({ "uri": uri_other }));
    assert!(read.get("error").is_some(), "{read}");
    mcp.finish();
    assert_eq!(env.fingerprint(), before);

    // The language server.
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let symbols = client.request("workspace/symbol", json!({ "query": "staging password rotation" }));
    assert!(!symbols.to_string().contains("staging password"), "{symbols}");
    let all = client.request("workspace/symbol", json!({ "query": "" }));
    assert!(!all.to_string().contains("staging password"), "{all}");
    let source = env.root.join("src/lock.rs");
    let text = format!("// see #{theirs} and #{mine}\n");
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&source), "languageId": "rust", "version": 1, "text": text } }),
    );
    let at_theirs = json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 0, "character": 9 } });
    let hover = client.request("textDocument/hover", at_theirs.clone());
    assert!(!hover.to_string().contains("staging password"), "{hover}");
    let definition = client.request("textDocument/definition", at_theirs);
    assert!(!definition.to_string().contains("other"), "{definition}");
    let checkout = client.request("memory/checkout", json!({}));
    assert!(!checkout.to_string().contains("staging password"));
    client.finish();
    assert_eq!(env.fingerprint(), before);
}
