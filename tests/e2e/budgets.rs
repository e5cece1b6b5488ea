//! Load budgets end to end: the memory document says which entries fall
//! past what the agent's harness loads (`[load_budget]`, Claude Code's 200
//! lines / 25,000 bytes by default), and a directive that makes the
//! standing directives outgrow the session-start hook's budget is said at
//! write time, on the CLI and over MCP, and in the document until it fits.

use serde_json::json;

use crate::lsp::Client;
use crate::mcp::Mcp;
use crate::support::{Env, parse_id};

#[test]
fn the_memory_document_says_which_entries_the_harness_will_not_load() {
    let env = Env::new();
    std::fs::create_dir_all(env.root.join(".mnemo")).unwrap();
    std::fs::write(env.root.join(".mnemo/config.toml"), "[load_budget]\nharness = \"Claude Code\"\nlines = 30\n")
        .unwrap();
    let ids: Vec<i64> = (1..=12)
        .map(|i| parse_id(&env.ok(&["remember", "--kind", "finding", "--title", &format!("Finding number {i}")])))
        .collect();
    env.ok(&["export"]);
    let mut client = Client::initialized(&env);
    let (mirror, text) = client.open_mirror(&env);
    let budget = client.diagnostic_coded(&mirror, "load-budget");
    let first_cut = text.lines().position(|l| l.starts_with("- [#")).unwrap();
    let past: Vec<i64> = text
        .lines()
        .enumerate()
        .filter(|(n, l)| *n + 1 > 30 && l.starts_with("- [#"))
        .map(|(_, l)| l[4..l.find(']').unwrap()].parse().unwrap())
        .collect();
    assert!(!past.is_empty() && first_cut < 30);
    let message = budget["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("(#{} … #{})", past[0], ids[11])) && message.contains("will not load in Claude Code"),
        "{message}"
    );
    client.finish();
}

#[test]
fn a_directive_that_outgrows_the_session_start_budget_is_said_at_write_time() {
    let env = Env::new();
    let body = "Explain why, with the whole story behind it. ".repeat(40);
    for i in 1..=3 {
        let out = env
            .command(&[
                "remember",
                "--kind",
                "directive",
                "--title",
                &format!("Rule {i}"),
                "--body",
                &body,
                "--as-human",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(said.contains("session-start hook cuts"), i == 4, "{i}: {said}");
    }
    let out = env
        .command(&["remember", "--kind", "directive", "--title", "Rule 4", "--body", &body, "--as-human"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("warning: the session-start hook cuts the bodies of 4 notes (#1, #2, #3, #4)")
            && said.contains("--budget 1500"),
        "{said}"
    );
    let out = env.command(&["remember", "--kind", "finding", "--title", "Not a directive"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).is_empty(), "only directives are measured");
    let mut mcp = Mcp::start(&env);
    let answer = mcp.call_result("remember", json!({ "kind": "directive", "title": "Rule 5", "body": body }));
    let warning = answer["structuredContent"]["warning"].as_str().unwrap_or_default().to_string();
    assert!(warning.contains("the bodies of 5 notes"), "{answer}");
}

#[test]
fn the_memory_document_says_which_directive_bodies_the_session_start_hook_cuts() {
    let env = Env::new();
    let body = "Explain why, with the whole story behind it. ".repeat(40);
    let short = parse_id(&env.ok(&["remember", "--kind", "directive", "--title", "Short rule", "--as-human"]));
    let long: Vec<i64> = (1..=4)
        .map(|i| {
            let title = format!("Rule {i}");
            parse_id(&env.ok(&["remember", "--kind", "directive", "--title", &title, "--body", &body, "--as-human"]))
        })
        .collect();
    env.ok(&["export"]);
    let mut client = Client::initialized(&env);
    let (mirror, text) = client.open_mirror(&env);
    let cut = client.diagnostic_coded(&mirror, "hook-budget");
    let message = cut["message"].as_str().unwrap();
    let named: Vec<String> = long.iter().map(|id| format!("#{id}")).collect();
    assert!(
        message.starts_with(&format!("the session-start hook cuts the bodies of 4 notes ({})", named.join(", "))),
        "{message}"
    );
    assert!(!message.contains(&format!("#{short},")), "a short body fits its share");
    let first = text.lines().position(|l| long.iter().any(|id| l.starts_with(&format!("- [#{id}]")))).unwrap();
    assert_eq!(cut["range"]["start"]["line"], first, "on the first cut entry of the document");
    // Revoking two of them makes the rest fit: the warning goes, live.
    for id in &long[..2] {
        env.ok(&["revoke", &id.to_string(), "--reason", "merged into one"]);
    }
    client.diagnostics_where(&mirror, |d| d.iter().all(|d| d["code"] != "hook-budget"));
    client.finish();
}
