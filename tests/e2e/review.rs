//! The review queue end to end, as a person and an agent use it: with
//! `[review] agent = "propose"`, what an agent writes is stored but reaches
//! no agent (recall, context, every hook) until a person accepts it — from
//! the CLI, or in the memory document by deleting its `PROPOSED` marker;
//! rejecting revokes it with the person's reason.

use serde_json::json;

use crate::hooks::hook;
use crate::support::{Env, parse_id};

const GOTCHA: &str = "Release the lock before restarting the daemon";

fn review_env() -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.root.join(".mnemo")).unwrap();
    std::fs::write(env.root.join(".mnemo/config.toml"), "[review]\nagent = \"propose\"\n").unwrap();
    env
}

#[test]
fn an_agents_note_waits_for_a_person_and_reaches_no_agent_until_accepted() {
    let env = review_env();
    let written = env
        .command(&["remember", "--kind", "gotcha", "--title", GOTCHA, "--anchor", "src/lock.rs:2-3"])
        .output()
        .unwrap();
    assert!(written.status.success());
    let id = parse_id(&String::from_utf8_lossy(&written.stdout));
    let said = String::from_utf8_lossy(&written.stderr);
    assert!(said.contains(&format!("#{id} is proposed")) && said.contains("mnemo review"), "{said}");
    let mine =
        parse_id(&env.ok(&["remember", "--kind", "directive", "--title", "Run tests in the venv", "--as-human"]));
    assert_eq!(env.json(&["show", &mine.to_string()])["state"], "active", "a person's own note is live");

    // Stored and shown to people, counted by recall, told to no agent.
    assert!(env.ok(&["list"]).contains(&format!("[#{id}] gotcha/medium · agent · [PROPOSED] {GOTCHA}")));
    let recalled = env.json(&["recall", "lock before restarting"]);
    assert_eq!(recalled["results"], json!([]), "{recalled}");
    assert_eq!(recalled["hidden"]["proposed"], 1, "{recalled}");
    let text = env.ok(&["recall", "lock before restarting"]);
    assert!(text.contains(&format!("hidden: 1 proposed (#{id})")), "{text}");
    assert!(!env.ok(&["context", "restarting the daemon"]).contains(GOTCHA));
    let cwd = env.root.display().to_string();
    let start = json!({ "session_id": "s", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup" });
    let prompt = json!({ "session_id": "s", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": "release the lock before restarting the daemon" });
    let edit = json!({ "session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": { "file_path": env.root.join("src/lock.rs").display().to_string(), "old_string": "line 2", "new_string": "x" } });
    for (event, payload) in [("session-start", &start), ("user-prompt", &prompt), ("pre-edit", &edit)] {
        let out = hook(&env, event, &payload.to_string());
        assert!(!out.contains(GOTCHA), "{event} delivered a proposal: {out}");
    }

    // The person reviews: the whole note, then accept.
    let queue = env.ok(&["review"]);
    assert!(queue.contains(GOTCHA), "{queue}");
    assert!(env.fails(&["reject", &mine.to_string(), "--reason", "no"], 1).contains("not a proposal"));
    assert!(env.fails(&["accept", &mine.to_string()], 2).contains("only a proposed note can be accepted"));
    assert_eq!(env.ok(&["accept", &id.to_string()]).trim(), format!("accepted #{id}"));
    let accepted = env.json(&["show", &id.to_string()]);
    assert_eq!(
        (accepted["state"].as_str(), accepted["provenance"].as_str()),
        (Some("active"), Some("human")),
        "{accepted}"
    );
    let history = env.ok(&["history", &id.to_string()]);
    assert!(history.contains("proposed") && history.contains("accepted"), "{history}");
    assert_eq!(env.json(&["recall", "lock before restarting"])["results"][0]["id"], id);
    let edit2 = json!({ "session_id": "s2", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": { "file_path": env.root.join("src/lock.rs").display().to_string(), "old_string": "line 2", "new_string": "x" } });
    assert!(hook(&env, "pre-edit", &edit2.to_string()).contains(GOTCHA), "accepted: delivered before the edit");

    // A rejection is a revocation with the person's reason.
    let noise = parse_id(&env.ok(&["remember", "--kind", "finding", "--title", "The build is slow on Tuesdays"]));
    env.ok(&["reject", &noise.to_string(), "--reason", "not a finding"]);
    let rejected = env.json(&["show", &noise.to_string()]);
    assert_eq!(rejected["state"], "revoked", "{rejected}");
    assert!(env.ok(&["review"]).is_empty());
}

#[test]
fn an_agents_correction_under_review_leaves_the_older_note_standing_until_accepted() {
    let env = review_env();
    let old = parse_id(&env.ok(&["remember", "--kind", "finding", "--title", "Retries stop at 5", "--as-human"]));
    let fix = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "finding",
        "--title",
        "Retries stop at 3",
        "--contradicts",
        &old.to_string(),
    ]));
    assert_eq!(env.json(&["show", &old.to_string()])["state"], "active", "the older note stands meanwhile");
    assert!(
        env.ok(&["review"]).contains(&format!("accepting it revokes #{old} (contradicted)"))
            || env.ok(&["review"]).contains(&format!("contradict #{old}"))
    );
    env.ok(&["accept", &fix.to_string()]);
    let revoked = env.json(&["show", &old.to_string()]);
    assert_eq!(revoked["state"], "revoked", "{revoked}");
}

#[test]
fn a_proposal_is_accepted_in_the_memory_document_by_deleting_its_marker_and_rejected_by_deleting_it() {
    let env = review_env();
    let keep = parse_id(&env.ok(&["remember", "--kind", "gotcha", "--title", GOTCHA]));
    let drop = parse_id(&env.ok(&["remember", "--kind", "finding", "--title", "The build is slow on Tuesdays"]));
    let checkout = env.home.join("checkout.md");
    env.ok(&["checkout", "--out", checkout.to_str().unwrap()]);
    let text = std::fs::read_to_string(&checkout).unwrap();
    let marked = format!("· PROPOSED 2026-08-04 · {GOTCHA}");
    assert!(text.contains(&marked), "{text}");
    let drop_line = text.lines().find(|l| l.starts_with(&format!("- [#{drop}] "))).unwrap().to_string();
    let edited = text.replace(&marked, &format!("· {GOTCHA}")).replace(&format!("{drop_line}\n"), "");
    std::fs::write(&checkout, edited).unwrap();
    let out = env.ok(&["checkin", checkout.to_str().unwrap()]);
    assert!(out.contains(&format!("accepted #{keep}")), "{out}");
    assert_eq!(env.json(&["show", &keep.to_string()])["state"], "active");
    let rejected = env.json(&["show", &drop.to_string()]);
    assert_eq!(
        (rejected["state"].as_str(), rejected["state_reason"].as_str()),
        (Some("revoked"), Some("rejected: deleted in MEMORY.md")),
        "{rejected}"
    );
}

#[test]
fn the_memory_document_counts_proposals_and_offers_accept_and_reject_as_lenses_and_actions() {
    use crate::lsp::Client;
    let env = review_env();
    let id = parse_id(&env.ok(&["remember", "--kind", "gotcha", "--title", GOTCHA]));
    let mut client = Client::initialized(&env);
    let (memory, text) = client.open_checkout();
    let published = client.wait(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == memory.as_str()
            && m["params"]["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
    });
    let messages: Vec<&str> =
        published["params"]["diagnostics"].as_array().unwrap().iter().map(|d| d["message"].as_str().unwrap()).collect();
    assert!(messages.iter().any(|m| m.starts_with(&format!("1 proposal waits for review: #{id}"))), "{messages:?}");
    assert!(messages.iter().any(|m| m.starts_with(&format!("#{id} was proposed by an agent"))), "{messages:?}");

    let line = text.lines().position(|l| l.starts_with(&format!("- [#{id}]"))).unwrap();
    let lenses = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": memory } }));
    let lenses: Vec<(u64, String, String)> = lenses["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let command = &l["command"];
            (
                l["range"]["start"]["line"].as_u64().unwrap(),
                command["title"].as_str().unwrap().into(),
                command["command"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        lenses,
        [
            (line as u64, format!("Accept #{id}"), "mnemo.accept".to_string()),
            (line as u64, format!("Reject #{id}…"), "mnemo.reject".to_string())
        ]
    );
    let range = json!({ "start": { "line": line, "character": 0 }, "end": { "line": line, "character": 0 } });
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": memory }, "range": range, "context": { "diagnostics": [] } }),
    );
    let commands: Vec<&str> =
        actions["result"].as_array().unwrap().iter().map(|a| a["command"]["command"].as_str().unwrap()).collect();
    assert!(commands.starts_with(&["mnemo.accept", "mnemo.reject"]), "{commands:?}");
    let no_reason = client.request("workspace/executeCommand", json!({ "command": "mnemo.reject", "arguments": [id] }));
    assert!(no_reason["error"]["message"].as_str().unwrap().contains("needs a reason"), "{no_reason}");
    let accepted = client.request("workspace/executeCommand", json!({ "command": "mnemo.accept", "arguments": [id] }));
    assert!(accepted["error"].is_null(), "{accepted}");
    client.finish();
    let shown = env.json(&["show", &id.to_string()]);
    assert_eq!((shown["state"].as_str(), shown["provenance"].as_str()), (Some("active"), Some("human")), "{shown}");
}

#[test]
fn an_agents_supersede_under_review_is_a_proposal_and_the_old_note_stands_until_accepted() {
    let env = review_env();
    let old = parse_id(&env.ok(&["remember", "--kind", "finding", "--title", "Retries stop at 5", "--as-human"]));
    let out = env.command(&["supersede", &old.to_string(), "--title", "Retries stop at 3"]).output().unwrap();
    let new = parse_id(&String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("#{new} is proposed")));
    assert_eq!(env.json(&["show", &new.to_string()])["state"], "proposed");
    assert_eq!(env.json(&["show", &old.to_string()])["state"], "active", "the old note stands");
    env.ok(&["accept", &new.to_string()]);
    assert_eq!(env.json(&["show", &old.to_string()])["state"], "superseded");
    let person = parse_id(&env.ok(&["supersede", &new.to_string(), "--title", "Retries stop at 4", "--as-human"]));
    assert_eq!(env.json(&["show", &person.to_string()])["state"], "active", "a person's supersede is live");
}

#[test]
fn a_proposal_that_arrives_while_the_person_edits_is_neither_lost_nor_rejected_by_the_save() {
    use crate::lsp::Client;
    let env = review_env();
    let rule = parse_id(&env.ok(&["remember", "--kind", "directive", "--title", "Run the tests", "--as-human"]));
    let mut client = Client::initialized(&env);
    let (memory, text) = client.open_checkout();
    // The person types (not saved yet); meanwhile an agent writes under review.
    let typed = text.replace("medium · Run the tests", "high · Run the tests");
    assert_ne!(typed, text);
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": memory, "version": 2 }, "contentChanges": [{ "text": typed }] }),
    );
    let proposal = parse_id(&env.ok(&["remember", "--kind", "gotcha", "--title", GOTCHA]));
    // The save holds the person's text, without the proposal it never saw.
    let saved = client.request("memory/checkin", json!({ "uri": memory, "text": typed }));
    assert!(saved["error"].is_null(), "{saved}");
    let after = saved["result"]["text"].as_str().unwrap();
    assert!(after.contains(&format!("· PROPOSED 2026-08-04 · {GOTCHA}")), "the proposal is shown now: {after}");
    client.finish();
    assert_eq!(
        env.json(&["show", &proposal.to_string()])["state"],
        "proposed",
        "not rejected by a text that never held it"
    );
    let rules = env.json(&["show", &rule.to_string()]);
    assert_eq!(rules["state_reason"], "edited in MEMORY.md", "the person's edit went in: {rules}");
    let successor = env.json(&["show", &rules["superseded_by"].to_string()]);
    assert_eq!((successor["priority"].as_str(), successor["state"].as_str()), (Some("high"), Some("active")));

    // Rejecting it twice: the second says it is already rejected and changes nothing.
    env.ok(&["reject", &proposal.to_string(), "--reason", "not true here"]);
    let events = env.json(&["history", &proposal.to_string()]).as_array().unwrap().len();
    let again = env.fails(&["reject", &proposal.to_string(), "--reason", "again"], 1);
    assert!(again.contains(&format!("#{proposal}")) && again.contains("already revoked (not true here)"), "{again}");
    assert_eq!(env.json(&["history", &proposal.to_string()]).as_array().unwrap().len(), events);
}
