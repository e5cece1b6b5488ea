//! Faults: writers killed with SIGKILL in the middle of bursts (CLI, MCP
//! server, language server), the disk filling up, a store this process may
//! not write, the editor vanishing mid-request. Every acknowledged write is in
//! the store afterwards, `store verify` is clean, nothing is half-applied, and
//! the mirror catches up on the next start.

use std::collections::{HashMap, HashSet};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::lsp::{Client, uri};
use crate::mcp::Mcp;
use crate::support::Env;

/// Every note of the workspace: id → title.
fn titles(env: &Env) -> HashMap<i64, String> {
    let listed = env.json(&["list"]);
    listed["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_i64().unwrap(), n["title"].as_str().unwrap().to_string()))
        .collect()
}

fn kill_group(leader: u32) {
    Command::new("kill").args(["-9", "--", &format!("-{leader}")]).status().unwrap();
}

/// A pseudo-random delay in `range` ms (no crate: the clock's nanoseconds).
fn jitter(range: std::ops::Range<u64>) -> Duration {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    Duration::from_millis(range.start + nanos % (range.end - range.start))
}

/// The mirror on disk equals a fresh render of the store.
fn assert_mirror_current(env: &Env) {
    env.ok(&["list"]); // any command catches the mirror up when it is behind
    env.ok(&["export", "--path", "fresh.md"]);
    let mirror = std::fs::read_to_string(env.root.join("MEMORY.md")).unwrap();
    let fresh = std::fs::read_to_string(env.root.join("fresh.md")).unwrap();
    assert_eq!(mirror, fresh, "the mirror caught up with the store");
}

#[test]
fn cli_writers_killed_mid_burst_lose_no_acknowledged_write() {
    let env = Env::new();
    env.ok(&["export", "--enable"]);
    let acks = env.home.join("acks");
    std::fs::create_dir_all(&acks).unwrap();
    for round in 0..4 {
        let writers: Vec<_> = (0..4)
            .map(|writer| {
                let script = r#"i=0; while :; do id=$("$MNEMO" remember --kind finding --title "round $1 writer $2 note $i") && echo "$id $i" >> "$3"; i=$((i+1)); done"#;
                let log = acks.join(format!("{round}-{writer}"));
                env.shell(script, &[&round.to_string(), &writer.to_string(), log.to_str().unwrap()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .process_group(0)
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::sleep(jitter(300..900));
        for mut writer in writers {
            kill_group(writer.id());
            writer.wait().unwrap();
        }
    }
    let stored = titles(&env);
    let mut acknowledged = 0;
    for log in std::fs::read_dir(&acks).unwrap() {
        let log = log.unwrap().path();
        let name = log.file_name().unwrap().to_string_lossy().into_owned();
        let (round, writer) = name.split_once('-').unwrap();
        for line in std::fs::read_to_string(&log).unwrap().lines() {
            let (id, i) = line.split_once(' ').unwrap();
            let id: i64 = id.trim_start_matches('#').parse().unwrap();
            assert_eq!(
                stored.get(&id),
                Some(&format!("round {round} writer {writer} note {i}")),
                "ack {line} of {name}"
            );
            acknowledged += 1;
        }
    }
    assert!(acknowledged >= 8, "the writers got going before the kills ({acknowledged} acknowledged)");
    let unique: HashSet<&String> = stored.values().collect();
    assert_eq!(unique.len(), stored.len(), "no note was written twice");
    env.ok(&["store", "verify"]);
    assert_mirror_current(&env);
}

/// Pipelines `remember` calls to an MCP server and kills it after `acked` answers.
fn mcp_burst_then_kill(env: &Env, round: usize, acked: usize) -> Vec<(i64, String)> {
    let mut mcp = Mcp::start(env);
    let title = |i: usize| format!("mcp round {round} note {i}");
    let sent: HashMap<i64, String> = (1..=200)
        .map(|i| {
            let args = json!({ "name": "remember", "arguments": { "kind": "finding", "title": title(i) } });
            (mcp.send_request("tools/call", args), title(i))
        })
        .collect();
    let mut answered = Vec::new();
    while answered.len() < acked {
        let message = mcp.wait(|m| m["id"].as_i64().is_some_and(|id| sent.contains_key(&id)));
        let text = message["result"]["content"][0]["text"].as_str().unwrap();
        let note: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {message}"));
        answered.push((note["id"].as_i64().unwrap(), sent[&message["id"].as_i64().unwrap()].clone()));
    }
    mcp.kill();
    answered
}

#[test]
fn an_mcp_server_killed_mid_burst_loses_no_acknowledged_write() {
    let env = Env::new();
    env.ok(&["export", "--enable"]);
    let mut acknowledged = Vec::new();
    for (round, acked) in [(1, 5), (2, 20), (3, 40)] {
        acknowledged.extend(mcp_burst_then_kill(&env, round, acked));
    }
    let stored = titles(&env);
    for (id, title) in &acknowledged {
        assert_eq!(stored.get(id), Some(title), "acknowledged #{id}");
    }
    env.ok(&["store", "verify"]);
    assert_mirror_current(&env);
}

/// A checkout of the workspace with every "bulk" note retitled.
fn retitled_checkout(client: &mut Client) -> (String, String) {
    let checkout = client.request("memory/checkout", json!({}));
    let memory_uri = checkout["result"]["uri"].as_str().unwrap().to_string();
    let text = checkout["result"]["text"].as_str().unwrap().replace("· bulk note", "· retitled bulk note");
    (memory_uri, text)
}

fn retitled(env: &Env) -> usize {
    titles(env).values().filter(|t| t.starts_with("retitled bulk note")).count()
}

/// A workspace with 300 "bulk note" findings.
fn bulk_env() -> Env {
    let env = Env::new().file_store();
    env.import_findings(300, |i| (format!("bulk note {i}"), String::new()));
    env
}

/// Poll until some process holds the store's write lock (a write transaction
/// is open), taking the lock only for a moment each time; false after `limit`.
fn until_write_lock_held(env: &Env, limit: Duration) -> bool {
    let probe = rusqlite::Connection::open(&env.store).unwrap();
    probe.busy_timeout(Duration::ZERO).unwrap();
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        match probe.execute_batch("BEGIN IMMEDIATE") {
            Ok(()) => probe.execute_batch("ROLLBACK").unwrap(),
            Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) => return true,
            Err(e) => panic!("probing the write lock: {e}"),
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    false
}

#[test]
fn a_language_server_killed_mid_checkin_applies_all_or_nothing() {
    // Each round kills the server the moment its check-in holds the write
    // lock (nothing else in the server writes here: no model to catch up,
    // no mirror, no anchors).
    // A kill that lands after the commit leaves all 300 edits, and another
    // round runs on a fresh store; one must land inside the transaction.
    for round in 1..=3 {
        let env = bulk_env();
        let mut client = Client::start(&env);
        client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
        client.notify("initialized", json!({}));
        let (memory_uri, text) = retitled_checkout(&mut client);
        client.send_request("memory/checkin", json!({ "uri": memory_uri, "text": text }));
        let inside = until_write_lock_held(&env, Duration::from_secs(60));
        client.child().kill().unwrap();
        client.child().wait().unwrap();
        assert!(inside, "round {round}: the check-in never took the write lock");
        let applied = retitled(&env);
        assert!(applied == 0 || applied == 300, "round {round}: {applied} of 300 applied");
        env.ok(&["store", "verify"]);
        if applied == 0 {
            return; // killed inside the transaction: rolled back whole
        }
    }
    panic!("in 3 rounds no kill landed inside the check-in's transaction");
}

#[test]
fn a_language_server_whose_editor_vanishes_mid_checkin_exits_cleanly() {
    let env = bulk_env();
    // The editor goes away (stdin closed, no shutdown) while its check-in's
    // transaction is open.
    let mut client = Client::start(&env);
    client.request("initialize", json!({ "processId": null, "rootUri": uri(&env.root), "capabilities": {} }));
    client.notify("initialized", json!({}));
    let (memory_uri, text) = retitled_checkout(&mut client);
    client.send_request("memory/checkin", json!({ "uri": memory_uri, "text": text }));
    assert!(until_write_lock_held(&env, Duration::from_secs(60)), "the check-in never took the write lock");
    let (status, stderr) = client.vanish();
    assert!(status.success(), "the server exits cleanly when its client goes away: {status} {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let applied = retitled(&env);
    assert!(applied == 0 || applied == 300, "{applied} of 300 applied");
    env.ok(&["store", "verify"]);
}

#[test]
fn a_full_disk_fails_the_write_clearly_and_keeps_the_store() {
    let env = Env::new().file_store();
    env.remember("finding", "Written before the disk filled up");
    let before = env.fingerprint();
    // 2 MB of notes in one import, with files limited to 256 KiB: the write hits "disk full".
    let file = env.findings_file(2000, |i| (format!("filler {i}"), "x".repeat(1000)));
    let out = env
        .shell(r#"trap '' XFSZ; ulimit -f 512; exec "$MNEMO" import jsonl "$1""#, &[file.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("the store at {} could not be written", env.store.display())), "{stderr}");
    assert!(stderr.contains("nothing was written: free disk space"), "says what to do: {stderr}");
    assert_eq!(env.fingerprint(), before, "no partial import");
    env.ok(&["store", "verify"]);
    env.remember("finding", "Written after space was freed");
}

#[test]
fn a_store_this_process_may_not_write_is_a_clear_error_and_stays_intact() {
    let env = Env::new().file_store();
    let id = env.remember("finding", "Written by the owner");
    let before = env.fingerprint();
    let store_dir = env.store.parent().unwrap();
    let as_other_user = |script: &str| {
        // Root ignores file modes: run as nobody there; elsewhere the modes suffice.
        let uid = Command::new("id").arg("-u").output().unwrap().stdout;
        let script = if String::from_utf8_lossy(&uid).trim() == "0" {
            format!("exec setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '{script}'")
        } else {
            script.to_string()
        };
        env.shell(&script, &[]).env("HOME", store_dir).output().unwrap()
    };
    let mode = |path: &std::path::Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    mode(&env.home, 0o755);
    mode(store_dir, 0o555);
    mode(&env.store, 0o444);
    let write = as_other_user(r#""$MNEMO" remember --kind finding --title "From a read-only place""#);
    let stderr = String::from_utf8_lossy(&write.stderr);
    assert_eq!(write.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("read-only") || stderr.contains("ermission denied"), "{stderr}");
    assert!(stderr.contains(&env.store.display().to_string()), "names the store: {stderr}");
    mode(store_dir, 0o755);
    mode(&env.store, 0o644);
    assert_eq!(env.fingerprint(), before);
    assert_eq!(env.json(&["show", &id.to_string()])["title"], "Written by the owner");
    env.ok(&["store", "verify"]);
}
