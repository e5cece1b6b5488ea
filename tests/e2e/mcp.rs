//! The MCP server through the binary over stdio, as an agent harness drives
//! it: initialize, list the tools, remember, recall finds it, revoke, read
//! the MEMORY.md resource; bad arguments are tool errors, never a crash.

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
        let mut child =
            env.command(&["mcp"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
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
        let answer = self.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        let result = &answer["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{answer}")).to_string();
        (text, result["isError"] == true)
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

    let (recalled, _) = mcp.call("recall", json!({ "query": "restarting the daemon with the lock" }));
    let recalled: Value = serde_json::from_str(&recalled).unwrap();
    assert_eq!(recalled["results"][0]["id"], id, "{recalled}");
    assert_eq!(recalled["ranking"], "lexical only");
    assert!(recalled["results"][0]["trust"].as_str().unwrap().starts_with("recorded by an agent session"));

    let (context, _) = mcp.call("context", json!({}));
    let context: Value = serde_json::from_str(&context).unwrap();
    assert_eq!(context["directives"][0]["title"], "Run the tests inside the venv");

    let (revoked, _) = mcp.call("revoke", json!({ "id": id, "reason": "the daemon now releases it itself" }));
    assert!(revoked.contains("\"state\": \"revoked\""), "{revoked}");
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
