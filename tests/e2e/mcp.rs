//! The MCP server through the binary over stdio, as an agent harness drives
//! it: initialize, list the tools (their annotations and output schemas),
//! remember, recall finds it in the index tier, revoke, read the MEMORY.md
//! resource, get the session-start prompt; budgets cut and say what they
//! cut; bad arguments are tool errors, never a crash.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};

use crate::support::Env;

pub(crate) struct Mcp {
    /// Told when the test is done; else the server is killed after a minute,
    /// so a missing answer fails the test instead of hanging it.
    done: std::sync::mpsc::Sender<()>,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Mcp {
    pub(crate) fn start(env: &Env) -> Mcp {
        Mcp::start_with_watchdog(env, std::time::Duration::from_secs(60))
    }

    /// A server that is killed if it has not exited after `limit`.
    pub(crate) fn start_with_watchdog(env: &Env, limit: std::time::Duration) -> Mcp {
        Mcp::start_command(env.command(&["mcp"]), limit)
    }

    /// A server run by `command` (`mnemo mcp` with the caller's environment).
    pub(crate) fn start_command(mut command: std::process::Command, limit: std::time::Duration) -> Mcp {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let pid = child.id().to_string();
        std::thread::spawn(move || {
            if finished.recv_timeout(limit).is_err() {
                let _ = std::process::Command::new("kill").args(["-9", &pid]).status();
            }
        });
        let mut mcp = Mcp { done, child, stdin, stdout, next_id: 1 };
        let init = mcp.request(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "e2e", "version": "1" } }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "mnemo", "{init}");
        mcp.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        mcp
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.wait(|m| m["id"] == id)
    }

    /// Send a request without waiting for its answer; its id.
    pub(crate) fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// The server's process id (to stop or signal it).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL the server (a crash, not an exit).
    pub(crate) fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        let _ = self.done.send(());
    }

    /// The next message `wanted` accepts (others are skipped).
    pub(crate) fn wait(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if wanted(&message) {
                return message;
            }
        }
    }

    /// The next notification named `method`.
    fn notification(&mut self, method: &str) -> Value {
        self.wait(|m| m["method"] == method)
    }

    /// Call a tool; its text and whether it is an error.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let result = self.call_result(tool, arguments);
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{result}")).to_string();
        (text, result["isError"] == true)
    }

    /// Call a tool; the whole result (content, structuredContent, isError).
    pub(crate) fn call_result(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        assert!(answer.get("result").is_some(), "{tool}: {answer}");
        answer["result"].clone()
    }

    /// Close stdin: the server must exit by itself (the watchdog stays armed
    /// until it has, so a server that does not exit fails the test).
    pub(crate) fn finish(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        let _ = self.done.send(());
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(status.success() && !stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn an_agent_remembers_recalls_revokes_and_reads_the_memory_over_mcp() {
    let env = Env::new();
    env.remember("directive", "Run the tests inside the venv");
    let mut mcp = Mcp::start(&env);
    let tools = mcp.request("tools/list", json!({}));
    let mut names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["context", "expand", "flag_stale", "history", "recall", "reinstate", "remember", "revoke"]);

    let (created, error) = mcp.call(
        "remember",
        json!({ "kind": "gotcha", "title": "Release the lock before restarting the daemon", "body": "Or it deadlocks.", "priority": "high", "anchors": ["src/lock.rs:2-3"] }),
    );
    assert!(!error, "{created}");
    let created: Value = serde_json::from_str(&created).unwrap();
    assert_eq!(created["provenance"], "agent");
    let id = created["id"].as_i64().unwrap();
    assert_eq!(env.json(&["show", &id.to_string()])["anchors"][0]["path"], "src/lock.rs");

    let recalled = mcp.call_result("recall", json!({ "query": "restarting the daemon with the lock" }));
    let text = recalled["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("[#{id}] gotcha/high · agent · Release the lock before restarting the daemon")),
        "{text}"
    );
    assert!(!recalled.to_string().contains("Or it deadlocks."), "recall returns no bodies: {recalled}");
    let structured = &recalled["structuredContent"];
    assert_eq!(structured["results"][0]["id"], id, "{recalled}");
    assert_eq!(structured["ranking"], "lexical only");
    assert!(structured["results"][0]["trust"].as_str().unwrap().starts_with("recorded by an agent session"));
    let (expanded, _) = mcp.call("expand", json!({ "ids": [id] }));
    assert!(expanded.contains("Or it deadlocks.") && expanded.contains("src/lock.rs:2-3"), "{expanded}");

    let context = mcp.call_result("context", json!({}));
    assert_eq!(context["structuredContent"]["directives"][0]["title"], "Run the tests inside the venv");

    let (revoked, _) = mcp.call("revoke", json!({ "id": id, "reason": "the daemon now releases it itself" }));
    assert!(revoked.contains("\"state\":\"revoked\""), "{revoked}");
    let history = env.json(&["history", &id.to_string()]);
    assert_eq!((history[1]["kind"].as_str(), history[1]["actor"].as_str()), (Some("revoked"), Some("agent")));

    let resources = mcp.request("resources/list", json!({}));
    let uri = resources["result"]["resources"][0]["uri"].as_str().unwrap().to_string();
    assert_eq!(uri, format!("memory://{}/MEMORY.md", env.root.display()));
    let read = mcp.request("resources/read", json!({ "uri": uri }));
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("<!-- mnemo mirror") && text.contains("REVOKED"), "{text}");
    // Subscribed: another process's write is announced.
    let subscribed = mcp.request("resources/subscribe", json!({ "uri": uri }));
    assert!(subscribed.get("error").is_none(), "{subscribed}");
    env.remember("finding", "Written by another process");
    let updated = mcp.notification("notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], uri.as_str());
    // A steady stream of writes is still announced while it goes on (the
    // burst's maximum wait), not only once it stops.
    let streaming = std::sync::atomic::AtomicBool::new(true);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(4);
            while std::time::Instant::now() < until {
                env.remember("finding", "One of a steady stream of writes");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            streaming.store(false, std::sync::atomic::Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        mcp.notification("notifications/resources/updated");
        assert!(streaming.load(std::sync::atomic::Ordering::SeqCst), "announced only after the stream stopped");
    });

    // Bad input: tool errors that say what to do; the server keeps serving.
    let (bad_kind, error) = mcp.call("remember", json!({ "kind": "gotchas", "title": "x" }));
    assert!(error && bad_kind.contains("unknown kind 'gotchas'"), "{bad_kind}");
    let (no_note, error) = mcp.call("revoke", json!({ "id": 4242, "reason": "x" }));
    assert!(error && no_note.contains("no note #4242"), "{no_note}");
    let (outside, error) =
        mcp.call("remember", json!({ "kind": "gotcha", "title": "x", "anchors": ["../etc/passwd:1"] }));
    assert!(error && outside.contains("outside the workspace"), "{outside}");
    let missing = mcp.request("tools/call", json!({ "name": "revoke", "arguments": { "id": id } }));
    assert!(missing.get("error").is_some() || missing["result"]["isError"] == true, "{missing}");
    let unknown = mcp.request("resources/read", json!({ "uri": "memory:///elsewhere/MEMORY.md" }));
    assert!(unknown["error"]["message"].as_str().unwrap().contains("no resource"), "{unknown}");
    let (still, error) = mcp.call("history", json!({ "id": id }));
    assert!(!error && still.contains("revoked"));

    // contradicts: the wrong note is revoked by the new one, in the same write.
    let wrong = env.remember("finding", "The cache holds 10 GB");
    let (right, error) =
        mcp.call("remember", json!({ "kind": "finding", "title": "The cache holds 12 GB", "contradicts": wrong }));
    assert!(!error, "{right}");
    let right: Value = serde_json::from_str(&right).unwrap();
    let wrong_now = env.json(&["show", &wrong.to_string()]);
    assert_eq!(wrong_now["state"], "revoked");
    assert_eq!(wrong_now["state_reason"], format!("contradicted by #{}", right["id"]));
    let before = env.fingerprint();
    let (again, error) = mcp.call("remember", json!({ "kind": "finding", "title": "Twice", "contradicts": wrong }));
    assert!(error && again.contains("revoked"), "a refused link writes nothing: {again}");
    assert_eq!(env.fingerprint(), before);
    mcp.finish();
    env.ok(&["store", "verify"]);
}

/// Five notes about restarting the daemon, with bodies; their ids, in order.
fn daemon_notes(env: &Env) -> Vec<i64> {
    [
        (
            "gotcha",
            "Release the daemon lock before restarting the daemon",
            "Restarting with the lock held deadlocks: the new daemon waits on the old lock forever.",
        ),
        (
            "finding",
            "The daemon restart takes 3 seconds on a cold cache",
            "Measured on the CI runner; the cache warm-up dominates.",
        ),
        (
            "decision",
            "The daemon restarts through systemd, not a pid file",
            "Pid files went stale after crashes; systemd knows the truth.",
        ),
        (
            "operational",
            "Restart the daemon with systemctl --user restart mnemo-daemon",
            "Needs the user unit installed.",
        ),
        (
            "reference",
            "The daemon restart protocol is in docs/daemon.md",
            "Start, stop, restart and the lock protocol.",
        ),
    ]
    .into_iter()
    .map(|(kind, title, body)| {
        crate::support::parse_id(&env.ok(&["remember", "--kind", kind, "--title", title, "--body", body]))
    })
    .collect()
}

/// The text of a tool result, with the store's temporary directory named `$HOME`.
fn text_of(result: &Value, env: &Env) -> String {
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{result}"));
    text.replace(&env.home.display().to_string(), "$HOME")
}

#[test]
fn every_tool_says_whether_it_writes_and_recall_and_context_declare_their_output() {
    let env = Env::new();
    let mut mcp = Mcp::start(&env);
    let tools = mcp.request("tools/list", json!({}));
    let mut seen = Vec::new();
    for tool in tools["result"]["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let hints = &tool["annotations"];
        let hint = |key: &str| hints[key].as_bool().unwrap_or_else(|| panic!("{name} has no {key}: {tool}"));
        let has_schema = tool.get("outputSchema").is_some();
        seen.push(format!(
            "{name}: read-only {}, destructive {}, idempotent {}, open world {}, output schema {has_schema}",
            hint("readOnlyHint"),
            hint("destructiveHint"),
            hint("idempotentHint"),
            hint("openWorldHint"),
        ));
    }
    seen.sort();
    expect_test::expect![[r#"
        context: read-only true, destructive false, idempotent true, open world false, output schema true
        expand: read-only true, destructive false, idempotent true, open world false, output schema false
        flag_stale: read-only false, destructive false, idempotent true, open world false, output schema true
        history: read-only true, destructive false, idempotent true, open world false, output schema false
        recall: read-only true, destructive false, idempotent true, open world false, output schema true
        reinstate: read-only false, destructive false, idempotent true, open world false, output schema true
        remember: read-only false, destructive false, idempotent false, open world false, output schema true
        revoke: read-only false, destructive true, idempotent true, open world false, output schema true"#]]
    .assert_eq(&seen.join("\n"));
    let recall = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "recall").unwrap();
    let schema = &recall["outputSchema"];
    assert_eq!(schema["type"], "object");
    for field in ["results", "hidden", "ranking", "cut"] {
        assert!(schema["required"].as_array().unwrap().contains(&json!(field)), "{field}: {schema}");
    }
    assert!(!schema.to_string().contains("\"body\""), "the index tier has no bodies: {schema}");
    assert!(!tools.to_string().contains("\"uint"), "only formats JSON Schema defines: {tools}");
    mcp.finish();
}

#[test]
fn recall_answers_with_one_line_a_note_then_what_was_hidden_and_the_ranking() {
    let env = Env::new();
    let ids = daemon_notes(&env);
    env.ok(&["flag-stale", &ids[4].to_string(), "--reason", "moved to the wiki"]);
    let mut mcp = Mcp::start(&env);
    let recalled = mcp.call_result("recall", json!({ "query": "restart the daemon", "limit": 5 }));
    expect_test::expect![[r#"
        [#4] operational/medium · agent · Restart the daemon with systemctl --user restart mnemo-daemon · now (recorded by an agent session; verify before relying on it)
        [#1] gotcha/medium · agent · Release the daemon lock before restarting the daemon · now (recorded by an agent session; verify before relying on it)
        [#3] decision/medium · agent · The daemon restarts through systemd, not a pid file · now (recorded by an agent session; verify before relying on it)
        [#2] finding/medium · agent · The daemon restart takes 3 seconds on a cold cache · now (recorded by an agent session; verify before relying on it)
        hidden: 1 stale (#5)
        ranking: lexical only (no embedding model at $HOME/no-model: model.onnx is missing; run scripts/install-model (or set MNEMO_MODEL_DIR))
    "#]].assert_eq(&text_of(&recalled, &env));
    let structured = &recalled["structuredContent"];
    let results = structured["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "{structured}");
    assert_eq!(structured["hidden_stale"], json!([ids[4]]));
    assert_eq!(structured["cut"], json!([]));
    let fields: Vec<&String> = results[0].as_object().unwrap().keys().collect();
    assert_eq!(fields, ["age", "id", "kind", "priority", "provenance", "score", "state", "title", "trust"]);
    assert!(!recalled.to_string().contains("deadlocks"), "no bodies: {recalled}");
    // What an agent receives for a recall of five notes: the text and the
    // structured content each a fraction of the pretty-printed notes it was.
    let all = mcp.call_result("recall", json!({ "query": "restart the daemon", "limit": 5, "include_stale": true }));
    let text = all["content"][0]["text"].as_str().unwrap().len();
    let structured = all["structuredContent"].to_string().len();
    assert_eq!(all["structuredContent"]["results"].as_array().unwrap().len(), 5);
    assert!(text < 1_200 && structured < 1_600, "text {text} bytes, structured {structured} bytes");
    mcp.finish();
}

#[test]
fn a_budget_cuts_what_does_not_fit_and_names_it() {
    let env = Env::new();
    let ids = daemon_notes(&env);
    let long: String = (1..=200).map(|i| format!("Step {i} of the release checklist.\n")).collect();
    let directive = crate::support::parse_id(&env.ok(&[
        "remember",
        "--kind",
        "directive",
        "--title",
        "Follow the release checklist",
        "--body",
        &long,
    ]));
    for _ in 0..15 {
        env.ok(&["flag-stale", &ids[0].to_string(), "--reason", "the lock code is being rewritten"]);
        env.ok(&["reinstate", &ids[0].to_string()]);
    }
    let mut mcp = Mcp::start(&env);

    // recall: the best notes that fit, the rest named in rank order.
    let whole = mcp.call_result("recall", json!({ "query": "restart the daemon" }));
    let order: Vec<Value> =
        whole["structuredContent"]["results"].as_array().unwrap().iter().map(|r| r["id"].clone()).collect();
    assert_eq!(order.len(), 5, "{whole}");
    let cut = mcp.call_result("recall", json!({ "query": "restart the daemon", "max_tokens": 100 }));
    let text = cut["content"][0]["text"].as_str().unwrap();
    let structured = &cut["structuredContent"];
    assert!(text.len() <= 400 && structured.to_string().len() <= 400, "{text}\n{structured}");
    let kept: Vec<Value> = structured["results"].as_array().unwrap().iter().map(|r| r["id"].clone()).collect();
    let named: Vec<Value> = structured["cut"].as_array().unwrap().clone();
    assert!(!named.is_empty(), "{cut}");
    assert_eq!([kept, named.clone()].concat(), order, "kept then cut, in rank order");
    let ids_named: Vec<String> = named.iter().map(|id| format!("#{id}")).collect();
    let notes = if named.len() == 1 { "note" } else { "notes" };
    let said = format!(
        "{} more {notes} cut by max_tokens: {}; raise max_tokens or expand them",
        named.len(),
        ids_named.join(", ")
    );
    assert!(text.contains(&said), "{text}");

    // context: the directive's body cut, saying so; the notes after it cut and named.
    let context = mcp.call_result("context", json!({ "query": "restart the daemon", "max_tokens": 300 }));
    let text = context["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Step 1 of the release checklist.") && !text.contains("Step 200 "), "{text}");
    assert!(text.contains("more characters cut for the budget"), "{text}");
    assert_eq!(context["structuredContent"]["directive_bodies_cut"], json!([directive]));
    assert!(text.len() <= 1_200, "{} bytes: {text}", text.len());

    // expand: the body cut, saying so.
    let (expanded, _) = mcp.call("expand", json!({ "ids": [directive], "max_tokens": 100 }));
    assert!(expanded.contains("Step 1 of") && !expanded.contains("Step 200 "), "{expanded}");
    assert!(expanded.ends_with(&format!("bodies cut by max_tokens: #{directive} (each says how much); raise max_tokens or expand fewer ids at once\n")), "{expanded}");
    let (whole, _) = mcp.call("expand", json!({ "ids": [directive] }));
    assert!(whole.contains("Step 200 of the release checklist."), "the default budget holds it: {whole}");

    // history: the oldest events cut, saying how many; the newest kept.
    let (history, _) = mcp.call("history", json!({ "id": ids[0], "max_tokens": 100 }));
    assert!(history.len() <= 400, "{history}");
    let first = history.lines().next().unwrap();
    assert!(first.ends_with("earlier events cut by max_tokens; raise max_tokens to see them"), "{history}");
    assert!(history.trim_end().ends_with("reinstated (by agent, tester@ci)"), "the newest event is kept: {history}");
    mcp.finish();
}

#[test]
fn a_bad_budget_limit_kind_or_argument_is_an_error_that_says_what_to_send() {
    let env = Env::new();
    daemon_notes(&env);
    let before = env.fingerprint();
    let mut mcp = Mcp::start(&env);
    for (tool, arguments, says) in [
        (
            "recall",
            json!({ "query": "daemon", "max_tokens": -1 }),
            "max_tokens must be between 100 and 100000 (a token is about 4 bytes); got -1",
        ),
        (
            "recall",
            json!({ "query": "daemon", "max_tokens": 1_000_000_000 }),
            "max_tokens must be between 100 and 100000",
        ),
        ("recall", json!({ "query": "daemon", "limit": 0 }), "limit must be between 1 and 100; got 0"),
        ("recall", json!({ "query": "daemon", "kinds": ["gotchas"] }), "unknown kind 'gotchas'"),
        ("context", json!({ "max_tokens": 5 }), "max_tokens must be between 100 and 100000"),
        ("expand", json!({ "ids": [] }), "expand takes 1 to 100 ids; got 0"),
        ("expand", json!({ "ids": [1], "max_tokens": 0 }), "max_tokens must be between 100 and 100000"),
        ("history", json!({ "id": 1, "max_tokens": 100_001 }), "max_tokens must be between 100 and 100000"),
    ] {
        let (text, error) = mcp.call(tool, arguments.clone());
        assert!(error && text.contains(says), "{tool} {arguments}: {text}");
    }
    // A misspelt argument is refused, not ignored.
    let answer =
        mcp.request("tools/call", json!({ "name": "recall", "arguments": { "query": "daemon", "max_token": 100 } }));
    assert!(answer.to_string().contains("unknown field `max_token`"), "{answer}");
    mcp.finish();
    assert_eq!(env.fingerprint(), before, "a refused call writes nothing");
}

#[test]
fn the_session_start_prompt_gives_a_client_without_hooks_the_context_bundle() {
    let env = Env::new();
    daemon_notes(&env);
    env.ok(&[
        "remember",
        "--kind",
        "directive",
        "--title",
        "Run the tests inside the venv",
        "--body",
        "Always: `. .venv/bin/activate` first.",
    ]);
    let mut mcp = Mcp::start(&env);
    let prompts = mcp.request("prompts/list", json!({}));
    assert_eq!(
        prompts["result"]["prompts"],
        json!([{
            "name": "session-start",
            "description": "This project's memory at the start of a session: every standing directive in full, then the notes relevant to the task",
            "arguments": [{ "name": "task", "description": "The task at hand: the notes relevant to it follow the directives (default: the most recent notes)", "required": false }],
        }])
    );
    let prompt =
        mcp.request("prompts/get", json!({ "name": "session-start", "arguments": { "task": "restart the daemon" } }));
    let message = &prompt["result"]["messages"][0];
    assert_eq!(message["role"], "user", "{prompt}");
    let text = message["content"]["text"].as_str().unwrap().replace(&env.home.display().to_string(), "$HOME");
    expect_test::expect![[r#"
        This project's memory (mnemo), for this session:

        ## Standing directives (1)
        - [#6] Run the tests inside the venv — recorded by an agent session; verify before relying on it
          Always: `. .venv/bin/activate` first.

        ## Notes relevant to: restart the daemon
        [#4] operational/medium · agent · Restart the daemon with systemctl --user restart mnemo-daemon · now (recorded by an agent session; verify before relying on it)
        [#5] reference/medium · agent · The daemon restart protocol is in docs/daemon.md · now (recorded by an agent session; verify before relying on it)
        [#1] gotcha/medium · agent · Release the daemon lock before restarting the daemon · now (recorded by an agent session; verify before relying on it)
        [#3] decision/medium · agent · The daemon restarts through systemd, not a pid file · now (recorded by an agent session; verify before relying on it)
        [#2] finding/medium · agent · The daemon restart takes 3 seconds on a cold cache · now (recorded by an agent session; verify before relying on it)
        hidden: nothing
        ranking: lexical only (no embedding model at $HOME/no-model: model.onnx is missing; run scripts/install-model (or set MNEMO_MODEL_DIR))
        (expand with ids returns notes in full)
    "#]].assert_eq(&text);
    let context = mcp.call_result("context", json!({ "query": "restart the daemon" }));
    assert!(text.ends_with(&text_of(&context, &env)), "the prompt is the context tool's answer");
    for (request, says) in [
        (json!({ "name": "start" }), "no prompt 'start'; this server has 'session-start'"),
        (
            json!({ "name": "session-start", "arguments": { "topic": "x" } }),
            "unknown argument 'topic'; session-start takes 'task' (optional)",
        ),
    ] {
        let answer = mcp.request("prompts/get", request);
        assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains(says)), "{answer}");
    }
    mcp.finish();
}
