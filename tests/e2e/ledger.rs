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
    let context_printed = env.ok(&["context", "the lock"]).len();
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
    assert_eq!(ledger["deliveries"][2]["bytes"], context_printed, "the bytes recorded are the bytes printed");
    let session = env.json(&["ledger", "--session", "s-1"]);
    assert_eq!(session["deliveries"].as_array().unwrap().len(), 2);
    let old = env.json(&["ledger", "--since", "2020-01-01"]);
    assert_eq!(old["deliveries"].as_array().unwrap().len(), 5);
    assert!(env.fails(&["ledger", "--since", "yesterday"], 2).contains("is not a date"));
    let history = env.ok(&["history", &gotcha.to_string()]);
    assert!(history.contains("delivered to agents 5 times, last"), "{history}");
    assert!(history.contains(&format!("`mnemo ledger --note {gotcha}` lists them")), "{history}");
    let of_directive = env.json(&["ledger", "--note", &directive.to_string()]);
    let moments: Vec<&str> =
        of_directive["deliveries"].as_array().unwrap().iter().map(|d| d["moment"].as_str().unwrap()).collect();
    assert_eq!(moments, ["context", "session-start"], "{of_directive}");
    assert!(
        env.fails(&["ledger", "--note", "9999"], 1).contains("#9999"),
        "an unknown id is said, not an empty ledger"
    );

    // Hover on the note's id in the mirror says it too.
    env.ok(&["export"]);
    let mut client = Client::initialized(&env);
    let (mirror, text) = client.open_mirror(&env);
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
    let deliveries = after["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 2, "the deliveries of #{gotcha} alone are gone with it: {after}");
    assert!(
        deliveries.iter().all(|d| {
            !d["full"].as_array().unwrap().contains(&json!(gotcha))
                && !d["listed"].as_array().unwrap().contains(&json!(gotcha))
        }),
        "{after}"
    );
}

#[test]
fn a_hook_that_delivers_nothing_says_why_when_asked() {
    let env = Env::new();
    let first = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Release the lock first",
        "--anchor",
        "src/lock.rs:2-3",
    ]));
    let second = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Restart waits for the lock",
        "--anchor",
        "src/lock.rs:4-5",
    ]));
    let explain = |payload: &str| {
        let mut child = env
            .command(&["hook", "pre-edit", "--explain"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    // Plain text, no session id: the default session, as a person trying it by hand.
    let edit = json!({ "tool_name": "Edit", "tool_input": { "file_path": env.root.join("src/lock.rs").display().to_string() } }).to_string();
    let (delivered, said) = explain(&edit);
    assert!(delivered.contains("Release the lock first") && delivered.contains("Restart waits"), "{delivered}");
    assert!(said.contains("delivered"), "{said}");
    let (nothing, said) = explain(&edit);
    assert_eq!(nothing, "");
    assert!(
        said.contains("pre-edit delivers nothing")
            && said.contains(&format!("#{first}, #{second} already delivered in full in session default")),
        "{said}"
    );
    let other = json!({ "tool_name": "Edit", "tool_input": { "file_path": env.root.join("src/other.rs").display().to_string() } }).to_string();
    let (_, said) = explain(&other);
    assert!(said.contains("no active note is anchored to or names src/other.rs"), "{said}");
    let (_, said) = explain("{}");
    assert!(said.contains("names no file"), "{said}");
}

#[test]
fn the_lens_on_anchored_lines_says_when_agents_were_told_before_the_code_changed() {
    let env = Env::new();
    let id = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Release the lock first",
        "--anchor",
        "src/lock.rs:2-3",
    ]));
    let source = env.root.join("src/lock.rs");
    let touch = |date: &str| {
        let status = std::process::Command::new("touch").args(["-d", date]).arg(&source).status().unwrap();
        assert!(status.success());
    };
    // The file is older than the delivery (the tests' clock says 2026-08-04).
    touch("2026-01-01T00:00:00Z");
    let edit =
        json!({ "session_id": "s", "tool_name": "Edit", "tool_input": { "file_path": source.display().to_string() } });
    hook(&env, "pre-edit", &edit.to_string());
    let mut client = Client::initialized(&env);
    let text = std::fs::read_to_string(&source).unwrap();
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": crate::lsp::uri(&source), "languageId": "rust", "version": 1, "text": text } }),
    );
    let lens_title = |client: &mut Client| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let lenses =
                client.request("textDocument/codeLens", json!({ "textDocument": { "uri": crate::lsp::uri(&source) } }));
            if let Some(title) = lenses["result"][0]["command"]["title"].as_str() {
                return title.to_string();
            }
            assert!(std::time::Instant::now() < deadline, "no lens: {lenses}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    assert_eq!(lens_title(&mut client), format!("1 note: #{id}"), "told, but the code has not changed since");
    touch("2026-09-01T00:00:00Z");
    assert_eq!(lens_title(&mut client), format!("1 note: #{id} · told to agents once; code changed since"));
    client.finish();
}

#[test]
fn a_live_note_told_to_no_agent_for_90_days_is_hinted_as_a_candidate_to_retire() {
    let env = Env::new();
    let old = |title: &str| {
        let out = env
            .command(&["remember", "--kind", "finding", "--title", title, "--as-human"])
            .env("MNEMO_NOW", "2026-01-01T00:00:00Z")
            .output()
            .unwrap();
        parse_id(&String::from_utf8_lossy(&out.stdout))
    };
    let told = old("Cache hit ratio is 0.93");
    let untold = old("The nightly build needs 8 GB");
    let fresh = parse_id(&env.ok(&["remember", "--kind", "finding", "--title", "Written today"]));
    env.ok(&["context", "cache hit ratio"]);
    env.ok(&["export"]);
    let mut client = Client::initialized(&env);
    let (mirror, _) = client.open_mirror(&env);
    let diagnostics = client.diagnostics_where(&mirror, |d| d.iter().any(|d| d["code"] == "untold"));
    let hinted: Vec<String> = diagnostics
        .iter()
        .filter(|d| d["code"] == "untold")
        .map(|d| d["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hinted.len(), 1, "{hinted:?}");
    assert!(hinted[0].starts_with(&format!("#{untold} was told to no agent in 90 days")), "{hinted:?}");
    assert!(!hinted[0].contains(&format!("#{told} ")) && !hinted[0].contains(&format!("#{fresh} ")));
    client.finish();
}

#[test]
fn a_hostile_session_id_reaches_the_ledger_without_control_characters_and_cut() {
    let env = Env::new();
    env.ok(&["remember", "--kind", "directive", "--title", "Run tests in the venv", "--as-human"]);
    let session = format!("s\u{1b}[2J\u{7}{}", "x".repeat(5000));
    let start =
        json!({ "session_id": session, "cwd": env.root.display().to_string(), "hook_event_name": "SessionStart" });
    hook(&env, "session-start", &start.to_string());
    let ledger = env.ok(&["ledger"]);
    assert!(!ledger.contains('\u{1b}') && !ledger.contains('\u{7}'), "{ledger:?}");
    let recorded = env.json(&["ledger"])["deliveries"][0]["session"].as_str().unwrap().to_string();
    assert_eq!(recorded.chars().count(), 200, "{recorded}");
}
