//! Load: 16 concurrent writers — 8 through the CLI, 8 each with its own MCP
//! server — plus an open language server answering hovers, on a generated
//! store. No write fails (no `SQLITE_BUSY` reaches anyone), none is lost or
//! doubled, `store verify` is clean; write and hover latencies are printed.
//!
//! Short form (CI): 10k notes, 5 s. `scripts/soak` runs the long form with
//! `MNEMO_LOAD_NOTES=100000 MNEMO_LOAD_SECONDS=60`. `MNEMO_LOAD_MIRROR=1`
//! keeps the workspace's MEMORY.md mirror current through it all, and then
//! checks the mirror shows the last write.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::lsp::{Client, uri};
use crate::mcp::Mcp;
use crate::support::{Env, parse_id};

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples.get(((samples.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or_default()
}

fn report(name: &str, samples: &mut [Duration]) -> String {
    let n = samples.len();
    let (p50, p99) = (percentile(samples, 0.5), percentile(samples, 0.99));
    format!("{name}: {n} ops, p50 {:.1} ms, p99 {:.1} ms", p50.as_secs_f64() * 1e3, p99.as_secs_f64() * 1e3)
}

/// (id, title, latency) of every acknowledged write.
type Acks = Arc<Mutex<Vec<(i64, String, Duration)>>>;

#[test]
fn sixteen_writers_and_an_open_language_server_lose_nothing() {
    let notes = setting("MNEMO_LOAD_NOTES", 10_000);
    let seconds = setting("MNEMO_LOAD_SECONDS", 5);
    let with_mirror = setting("MNEMO_LOAD_MIRROR", 0) == 1;
    let env = Env::new();
    env.import_findings(notes as usize, |i| {
        (format!("generated note {i} about caches and locks"), format!("Body of note {i}."))
    });
    if with_mirror {
        env.ok(&["export", "--enable"]);
    }

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let acks: Acks = Arc::default();
    let failures: Arc<Mutex<Vec<String>>> = Arc::default();
    let env = Arc::new(env);
    let mut writers = Vec::new();
    for writer in 0..8 {
        let (env, acks, failures) = (env.clone(), acks.clone(), failures.clone());
        writers.push(std::thread::spawn(move || {
            let mut i = 0;
            while Instant::now() < deadline {
                let title = format!("cli writer {writer} note {i}");
                let started = Instant::now();
                let out = env.run(&["remember", "--kind", "finding", "--title", &title]);
                if out.status.success() {
                    acks.lock().unwrap().push((
                        parse_id(&String::from_utf8_lossy(&out.stdout)),
                        title,
                        started.elapsed(),
                    ));
                } else {
                    failures.lock().unwrap().push(String::from_utf8_lossy(&out.stderr).into_owned());
                }
                i += 1;
            }
        }));
    }
    for writer in 0..8 {
        let (env, acks, failures) = (env.clone(), acks.clone(), failures.clone());
        writers.push(std::thread::spawn(move || {
            let mut mcp = Mcp::start_with_watchdog(&env, Duration::from_secs(seconds + 120));
            let mut i = 0;
            while Instant::now() < deadline {
                let title = format!("mcp writer {writer} note {i}");
                let started = Instant::now();
                let (text, error) = mcp.call("remember", json!({ "kind": "finding", "title": title }));
                if error {
                    failures.lock().unwrap().push(text);
                } else {
                    let note: Value = serde_json::from_str(&text).unwrap();
                    acks.lock().unwrap().push((note["id"].as_i64().unwrap(), title, started.elapsed()));
                }
                i += 1;
            }
            mcp.finish();
        }));
    }

    // The editor: hovers over a reference to a note while the writers run.
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let source = env.root.join("src/lock.rs");
    let text = format!("// see #{}\n", notes / 2);
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(&source), "languageId": "rust", "version": 1, "text": text } }),
    );
    let mut hovers = Vec::new();
    while Instant::now() < deadline {
        let started = Instant::now();
        let hover = client.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri(&source) }, "position": { "line": 0, "character": 9 } }),
        );
        hovers.push(started.elapsed());
        let shown = hover["result"]["contents"]["value"].as_str().unwrap_or_default();
        assert!(shown.contains(&format!("generated note {}", notes / 2)), "{hover}");
        std::thread::sleep(Duration::from_millis(20));
    }
    client.finish();
    for writer in writers {
        writer.join().unwrap();
    }

    let failures = failures.lock().unwrap();
    assert!(failures.is_empty(), "{} writes failed, e.g. {}", failures.len(), failures[0]);
    let acks = acks.lock().unwrap();
    let through = |prefix: &str| acks.iter().filter(|(_, t, _)| t.starts_with(prefix)).count();
    assert!(through("cli") > 0 && through("mcp") > 0 && !hovers.is_empty(), "every kind of client got to work");
    let ids: HashSet<i64> = acks.iter().map(|(id, _, _)| *id).collect();
    assert_eq!(ids.len(), acks.len(), "every acknowledged write has its own note");
    let stats = env.json(&["store", "stats"]);
    assert_eq!(stats["stats"]["notes"].as_u64(), Some(notes + acks.len() as u64), "no write lost or doubled: {stats}");
    for (id, title, _) in acks.iter().step_by((acks.len() / 200).max(1)) {
        assert_eq!(env.json(&["show", &id.to_string()])["title"], title.as_str());
    }
    env.ok(&["store", "verify"]);
    if with_mirror {
        // The mirror caught up with every write: no process left it behind,
        // so exporting again finds the file already holding the render.
        let mirror = std::fs::read_to_string(env.root.join("MEMORY.md")).unwrap();
        let last = acks.iter().map(|(id, _, _)| *id).max().unwrap();
        assert!(mirror.contains(&format!("#{last}")), "the mirror shows the last write #{last}");
        let again = env.json(&["export"]);
        assert_eq!(again["written"], false, "the mirror was current after the load: {again}");
    }

    let (mut cli, mut mcp): (Vec<Duration>, Vec<Duration>) = (
        acks.iter().filter(|(_, t, _)| t.starts_with("cli")).map(|a| a.2).collect(),
        acks.iter().filter(|(_, t, _)| t.starts_with("mcp")).map(|a| a.2).collect(),
    );
    let mut all: Vec<Duration> = acks.iter().map(|a| a.2).collect();
    let lines = [
        format!(
            "load: {notes} notes, 16 writers (8 CLI, 8 MCP) and one language server for {seconds} s, mirror {}",
            if with_mirror { "on" } else { "off" }
        ),
        report("write (all)", &mut all),
        report("write (CLI process, start to exit)", &mut cli),
        report("write (MCP call)", &mut mcp),
        report("hover under load", &mut hovers),
    ];
    println!("{}", lines.join("\n"));
    std::fs::create_dir_all(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::write(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("load-report.txt"), lines.join("\n") + "\n")
        .unwrap();
}
