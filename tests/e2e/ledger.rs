//! The delivery ledger end to end: what the hooks, `context` and the MCP
//! tools deliver is recorded (session, moment, notes, bytes); `mnemo ledger`
//! and `mnemo history` show it, filtered by session and age; a note's hover
//! says how often it was delivered; a forgotten note leaves the ledger.

use serde_json::{Value, json};

use crate::hooks::hook;
use crate::lsp::Client;
use crate::mcp::Mcp;
use crate::support::{Env, parse_id};

#[test]
fn every_delivery_to_an_agent_is_in_the_ledger_and_history_and_hover_say_it() {
    let env = Env::new();
    let directive =
        parse_id(&env.ok(&["remember", "--kind", "directive", "--title", "Run tests in the venv", "--as-human"]));
    let gotcha = parse_id(&env.ok(&["remember", "--kind", "gotcha", "--title", "Release the lock before restarting"]));
    assert!(env.ok(&["history", &gotcha.to_string()]).contains("never delivered to an agent"));
    let cwd = env.root.display().to_string();
    let start = json!({ "session_id": "s-1", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup" });
    hook(&env, "session-start", &start.to_string());
    let prompt = json!({ "session_id": "s-1", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": "release the lock before restarting" });
    hook(&env, "user-prompt", &prompt.to_string());
    // Told already: the same prompt again delivers nothing, and records nothing.
    hook(&env, "user-prompt", &prompt.to_string());
    env.ok(&["context", "the lock"]);
    let mut mcp = Mcp::start(&env);
    mcp.call("recall", json!({ "query": "lock restarting" }));
    mcp.call("expand", json!({ "ids": [gotcha] }));
    drop(mcp);

    let ledger = env.json(&["ledger"]);
    let rows: Vec<(String, String, Value, Value)> = ledger["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let session = d["session"].as_str().unwrap();
            let session = if session.starts_with("mcp-") { "mcp" } else { session };
            (d["moment"].as_str().unwrap().to_string(), session.to_string(), d["full"].clone(), d["listed"].clone())
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("mcp expand".to_string(), "mcp".to_string(), json!([gotcha]), json!([])),
            ("mcp recall".to_string(), "mcp".to_string(), json!([]), json!([gotcha])),
            ("context".to_string(), "cli".to_string(), json!([directive]), json!([gotcha])),
            ("user-prompt".to_string(), "s-1".to_string(), json!([gotcha]), json!([])),
            ("session-start".to_string(), "s-1".to_string(), json!([directive]), json!([gotcha])),
        ],
        "{ledger}"
    );
    assert!(ledger["deliveries"].as_array().unwrap().iter().all(|d| d["bytes"].as_u64().unwrap() > 0));
    let session = env.json(&["ledger", "--session", "s-1"]);
    assert_eq!(session["deliveries"].as_array().unwrap().len(), 2);
    let old = env.json(&["ledger", "--since", "2020-01-01"]);
    assert_eq!(old["deliveries"].as_array().unwrap().len(), 5);
    assert!(env.fails(&["ledger", "--since", "yesterday"], 2).contains("is not a date"));
    let history = env.ok(&["history", &gotcha.to_string()]);
    assert!(history.contains("delivered to agents 5 times, last"), "{history}");

    // Hover on the note's id in the mirror says it too.
    env.ok(&["export"]);
    let mut client = Client::initialized(&env);
    let mirror = crate::lsp::uri(&env.root.join("MEMORY.md"));
    let text = std::fs::read_to_string(env.root.join("MEMORY.md")).unwrap();
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": mirror, "languageId": "markdown", "version": 1, "text": text } }),
    );
    let line = text.lines().position(|l| l.starts_with(&format!("- [#{gotcha}]"))).unwrap();
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": mirror }, "position": { "line": line, "character": 4 } }),
    );
    let shown = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("Delivered to agents 5 times, last just now (mcp expand, session mcp-"), "{shown}");
    client.finish();

    // Forgetting the note takes it out of the ledger.
    env.ok(&["forget", &gotcha.to_string(), "--confirm"]);
    let after = env.json(&["ledger"]);
    assert!(
        !after.to_string().contains(&format!("{gotcha}]"))
            || after["deliveries"].as_array().unwrap().iter().all(|d| {
                !d["full"].as_array().unwrap().contains(&json!(gotcha))
                    && !d["listed"].as_array().unwrap().contains(&json!(gotcha))
            }),
        "{after}"
    );
}
