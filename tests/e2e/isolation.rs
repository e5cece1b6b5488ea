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
/// Words of both projects' notes: every answer must hold ours and not theirs.
const BOTH: &str = "staging password rotation or the lock before restarting";
const MINE: &str = "Release the lock before restarting";

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
    let mine = env.remember("gotcha", MINE);
    let (theirs, other_root) = other_project(&env);
    let id = theirs.to_string();
    let before = env.fingerprint();

    // CLI reads.
    assert!(!env.ok(&["list"]).contains("staging password"));
    assert!(env.ok(&["list", "--all-workspaces"]).contains("staging password"));
    for args in [vec!["show", &id], vec!["history", &id], vec!["expand", &id]] {
        let err = env.fails(&args, 1);
        assert!(err.contains(&format!("note #{theirs} belongs to another workspace;")), "{args:?}: {err}");
        assert!(!err.contains(&other_root), "a refusal never names another workspace's path: {err}");
    }
    assert_eq!(env.json(&["show", &id, "--all-workspaces"])["title"], SECRET);
    // Each answer holds this project's note and not the other's.
    let ours_only = |what: &str, text: &str| {
        assert!(text.contains(MINE) && !text.contains("staging password"), "{what}: {text}");
    };
    ours_only("recall", &env.json(&["recall", BOTH]).to_string());
    let theirs_only = env.json(&["recall", "staging password rotation"]);
    assert!(!theirs_only.to_string().contains("staging password"), "{theirs_only}");
    assert_eq!(theirs_only["hidden"]["other workspace"], 1, "the other workspace's match is counted: {theirs_only}");
    ours_only("context", &env.ok(&["context"]));
    let hook = env.command(&["hook", "session-start"]).stdin(std::process::Stdio::null()).output().unwrap();
    assert!(hook.status.success());
    ours_only("hook session-start", &String::from_utf8_lossy(&hook.stdout));
    env.ok(&["export"]);
    ours_only("mirror", &std::fs::read_to_string(env.root.join("MEMORY.md")).unwrap());
    let checkout = env.home.join("checkout.md");
    env.ok(&["checkout", "--out", checkout.to_str().unwrap()]);
    ours_only("checkout", &std::fs::read_to_string(&checkout).unwrap());

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
    let (recall, error) = mcp.call("recall", json!({ "query": BOTH }));
    assert!(!error);
    ours_only("MCP recall", &recall);
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
    let (context, error) = mcp.call("context", json!({}));
    assert!(!error);
    ours_only("MCP context", &context);
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
    let symbols = client.request("workspace/symbol", json!({ "query": BOTH }));
    ours_only("workspace symbols", &symbols.to_string());
    let directives = client.request("workspace/symbol", json!({ "query": "" }));
    assert_eq!(directives["result"], json!([]), "no directive here (theirs is one): {directives}");
    let source = env.root.join("src/lock.rs");
    let text = format!("// see #{theirs} and #{mine}\n");
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&source), "languageId": "rust", "version": 1, "text": text } }),
    );
    let at = |reference: i64| {
        let character = text.find(&format!("#{reference}")).unwrap() + 1;
        json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 0, "character": character } })
    };
    let hover_mine = client.request("textDocument/hover", at(mine));
    assert!(hover_mine.to_string().contains(MINE), "hover works on this project's reference: {hover_mine}");
    let hover = client.request("textDocument/hover", at(theirs));
    assert_eq!(hover["result"], serde_json::Value::Null, "{hover}");
    let definition = client.request("textDocument/definition", at(theirs));
    assert_eq!(definition["result"], serde_json::Value::Null, "{definition}");
    let checkout = client.request("memory/checkout", json!({}));
    ours_only("memory/checkout", &checkout.to_string());
    client.finish();
    assert_eq!(env.fingerprint(), before);
}
