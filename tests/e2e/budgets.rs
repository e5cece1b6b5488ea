//! Load budgets end to end: the memory document says which entries fall
//! past what the agent's harness loads (`[load_budget]`, Claude Code's 200
//! lines / 25,000 bytes by default), and a directive that makes the
//! standing directives outgrow the session-start hook's budget is said at
//! write time, on the CLI and over MCP.

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
    let mirror_path = env.root.join("MEMORY.md");
    let text = std::fs::read_to_string(&mirror_path).unwrap();
    let mut client = Client::initialized(&env);
    let mirror = crate::lsp::uri(&mirror_path);
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": mirror, "languageId": "markdown", "version": 1, "text": text } }),
    );
    let published = client.wait(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == mirror.as_str()
            && m["params"]["diagnostics"].as_array().is_some_and(|d| d.iter().any(|d| d["code"] == "load-budget"))
    });
    let budget = published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "load-budget")
        .unwrap()
        .clone();
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
        assert_eq!(said.contains("more than the session-start hook delivers whole"), i == 4, "{i}: {said}");
    }
    let out = env
        .command(&["remember", "--kind", "directive", "--title", "Rule 4", "--body", &body, "--as-human"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("warning: the 4 standing directives now take") && said.contains("--budget 1500"), "{said}");
    let out = env.command(&["remember", "--kind", "finding", "--title", "Not a directive"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).is_empty(), "only directives are measured");
    let mut mcp = Mcp::start(&env);
    let answer = mcp.call_result("remember", json!({ "kind": "directive", "title": "Rule 5", "body": body }));
    let warning = answer["structuredContent"]["warning"].as_str().unwrap_or_default().to_string();
    assert!(warning.contains("5 standing directives"), "{answer}");
}
