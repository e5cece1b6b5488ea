//! `MNEMO_LOG` and the embedding progress bar through the binary: the log
//! goes to stderr for the CLI and the MCP server and to the editor as
//! `window/logMessage` for the language server — never to stdout, where the
//! output and the protocols are; without `MNEMO_LOG` nothing changes. The
//! progress bar is drawn on a terminal only: piped stderr gets no `\r` and no
//! escape codes.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::lsp::uri;
use crate::support::Env;

/// A line of the stderr log: `<time> <LEVEL> <target>: <message> <fields>`.
fn is_log_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let time = words.next().unwrap_or_default();
    let level = words.next().unwrap_or_default();
    time.ends_with('Z') && ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&level)
}

fn with_log(mut command: Command, filter: &str) -> Output {
    command.env("MNEMO_LOG", filter).output().unwrap()
}

fn without_log(mut command: Command) -> Output {
    command.env_remove("MNEMO_LOG").output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// All of a child's stderr, read as it comes (a full pipe would stall the child).
fn collect(mut stderr: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    })
}

#[test]
fn the_cli_logs_to_stderr_only_and_only_when_asked() {
    let env = Env::new();
    env.remember("gotcha", "Release the lock before restarting");
    let args = ["recall", "restarting with the lock"];
    let quiet = without_log(env.command(&args));
    let logged = with_log(env.command(&args), "debug");
    assert!(quiet.status.success() && logged.status.success(), "{}", text(&logged.stderr));

    assert_eq!(text(&logged.stdout), text(&quiet.stdout), "the log never reaches stdout");
    let (quiet_stderr, logged_stderr) = (text(&quiet.stderr), text(&logged.stderr));
    assert!(
        logged_stderr.lines().any(|l| is_log_line(l) && l.contains("DEBUG mnemo_store::recall: recall stages")),
        "{logged_stderr}"
    );
    // The person's messages are the same either way; the log only adds lines.
    let messages: Vec<&str> = logged_stderr.lines().filter(|l| !is_log_line(l)).collect();
    assert_eq!(messages, quiet_stderr.lines().collect::<Vec<_>>());
    assert!(!quiet_stderr.lines().any(is_log_line), "{quiet_stderr}");
}

#[test]
fn an_empty_log_filter_is_no_log_and_a_malformed_one_is_said_once() {
    let env = Env::new();
    env.remember("gotcha", "Release the lock before restarting");
    let quiet = without_log(env.command(&["list"]));

    let empty = with_log(env.command(&["list"]), "");
    assert_eq!((text(&empty.stdout), text(&empty.stderr)), (text(&quiet.stdout), text(&quiet.stderr)));

    let malformed = with_log(env.command(&["list"]), "mnemo_store=loud");
    assert!(malformed.status.success());
    assert_eq!(text(&malformed.stdout), text(&quiet.stdout));
    let stderr = text(&malformed.stderr);
    assert!(stderr.starts_with("warning: MNEMO_LOG is ignored: 'mnemo_store=loud' is not a log filter"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1 + text(&quiet.stderr).lines().count(), "{stderr}");
}

#[test]
fn the_mcp_server_logs_to_stderr_and_stdout_holds_only_protocol_messages() {
    let env = Env::new();
    env.remember("gotcha", "Release the lock before restarting");
    let mut child = env
        .command(&["mcp"])
        .env("MNEMO_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let mut say = |message: Value| writeln!(stdin, "{message}").unwrap();
    let mut lines = Vec::new();
    let mut answer = |lines: &mut Vec<String>| {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the server answered");
        lines.push(line);
    };
    say(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "e2e", "version": "1" } } }));
    answer(&mut lines);
    say(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    say(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "recall", "arguments": { "query": "restarting with the lock" } } }));
    answer(&mut lines);
    drop(stdin);
    let status = child.wait().unwrap();
    let stderr = stderr.join().unwrap();

    assert!(status.success(), "{stderr}");
    for line in &lines {
        let message: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
    assert!(lines[1].contains("Release the lock before restarting"), "{}", lines[1]);
    assert!(stderr.lines().any(|l| is_log_line(l) && l.contains("recall stages")), "{stderr}");
}

/// What the language server wrote on stdout, frame by frame: each message,
/// or what was not a well-formed frame.
fn read_frames(stdout: impl Read + Send + 'static) -> mpsc::Receiver<Result<Value, String>> {
    let (sender, frames) = mpsc::channel();
    std::thread::spawn(move || {
        let mut stdout = BufReader::new(stdout);
        loop {
            let mut length = None;
            loop {
                let mut header = String::new();
                if stdout.read_line(&mut header).unwrap_or(0) == 0 {
                    return;
                }
                let Some(header) = header.strip_suffix("\r\n") else {
                    let _ = sender.send(Err(format!("a header line without CRLF: {header:?}")));
                    return;
                };
                if header.is_empty() {
                    break;
                }
                match header.split_once(": ") {
                    Some(("Content-Length", value)) => length = value.parse::<usize>().ok(),
                    Some(("Content-Type", _)) => {}
                    _ => {
                        let _ = sender.send(Err(format!("not a header: {header:?}")));
                        return;
                    }
                }
            }
            let Some(length) = length else {
                let _ = sender.send(Err("a frame without Content-Length".into()));
                return;
            };
            let mut body = vec![0; length];
            let frame = match stdout.read_exact(&mut body) {
                Ok(()) => serde_json::from_slice::<Value>(&body).map_err(|e| format!("not JSON ({e}): {body:?}")),
                Err(e) => Err(format!("a truncated frame: {e}")),
            };
            if sender.send(frame).is_err() {
                return;
            }
        }
    });
    frames
}

#[test]
fn the_language_server_logs_to_its_client_and_stdout_holds_only_frames() {
    let env = Env::new();
    env.remember("gotcha", "Release the lock before restarting");
    let mut child = env
        .command(&["lsp"])
        .env("MNEMO_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let frames = read_frames(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let mut seen: Vec<Value> = Vec::new();
    let mut send = |message: Value| {
        let body = message.to_string();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
    };
    let wait = |seen: &mut Vec<Value>, wanted: &dyn Fn(&Value) -> bool| loop {
        let frame = frames.recv_timeout(Duration::from_secs(20)).expect("the server wrote within 20 s");
        let message = frame.unwrap_or_else(|problem| panic!("stdout is not only LSP frames: {problem}"));
        seen.push(message.clone());
        if wanted(&message) {
            return;
        }
    };
    let log_says = |text: &'static str| {
        move |m: &Value| m["method"] == "window/logMessage" && m["params"]["message"].as_str().unwrap().contains(text)
    };

    send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "processId": null, "rootUri": uri(&env.root), "capabilities": {} } }));
    wait(&mut seen, &|m| m["id"] == 1);
    send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    send(json!({ "jsonrpc": "2.0", "id": 2, "method": "memory/checkout", "params": {} }));
    wait(&mut seen, &|m| m["id"] == 2);
    wait(&mut seen, &log_says("DEBUG mnemo_store::checkout: checkout handed out"));
    send(json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }));
    wait(&mut seen, &|m| m["id"] == 3);
    send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    drop(stdin);
    let status = child.wait().unwrap();
    for frame in frames.iter() {
        seen.push(frame.unwrap_or_else(|problem| panic!("stdout is not only LSP frames: {problem}")));
    }
    let stderr = stderr.join().unwrap();

    assert!(status.success(), "{stderr}");
    let logs: Vec<&Value> = seen.iter().filter(|m| m["method"] == "window/logMessage").collect();
    assert!(logs.iter().all(|m| (1..=4).contains(&m["params"]["type"].as_i64().unwrap())), "{logs:?}");
    assert!(!stderr.lines().any(is_log_line), "the language server's log goes to its client: {stderr}");
}

/// A corpus large enough to be worth a progress bar (more than four batches of chunks).
fn import_many(env: &Env) {
    env.import_findings(48, |i| (format!("Finding number {i} about the cache"), format!("The cache behaves {i}.")));
}

#[test]
fn embedding_with_stderr_piped_draws_no_bar_and_logs_the_model() {
    let env = Env::with_model();
    import_many(&env);
    let quiet = without_log(env.command(&["reindex"]));
    let logged = with_log(env.command(&["reindex"]), "mnemo_embed=debug");
    for out in [&quiet, &logged] {
        assert!(out.status.success(), "{}", text(&out.stderr));
        let both = [text(&out.stdout), text(&out.stderr)].concat();
        assert!(!both.contains('\r') && !both.contains('\x1b'), "{both:?}");
    }
    assert_eq!(text(&logged.stdout), text(&quiet.stdout));
    let stderr = text(&logged.stderr);
    assert!(
        stderr.lines().any(|l| is_log_line(l) && l.contains("INFO mnemo_embed: embedding model loaded")),
        "{stderr}"
    );
    assert!(stderr.lines().any(|l| is_log_line(l) && l.contains("DEBUG mnemo_embed: texts embedded")), "{stderr}");
}

#[test]
fn embedding_on_a_terminal_draws_the_bar() {
    let env = Env::with_model();
    import_many(&env);
    // `script` runs the command on a pseudo-terminal and copies what it shows.
    let out = env.shell("script -qec \"$MNEMO reindex\" /dev/null", &[]).env_remove("MNEMO_LOG").output().unwrap();
    let shown = text(&out.stdout);
    assert!(out.status.success(), "{shown}{}", text(&out.stderr));
    assert!(shown.contains("embedding [") && shown.contains("/48 chunks, "), "{shown:?}");
    assert!(shown.contains(" chunks/s, ") && shown.contains(" left"), "{shown:?}");
}
