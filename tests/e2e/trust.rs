//! What a careless user or an attacker does to the store through the binary
//! (issue 18): a reader that stops early, text that would drive the
//! terminal, notes past the size limits, files and paths that are not what
//! they seem. Each test fails without its fix; docs/reliability.md lists
//! them with the rest of the reliability suite.

use crate::support::Env;

#[test]
fn a_reader_that_stops_early_ends_the_command_quietly() {
    let env = Env::new();
    let records: String = (1..=300)
        .map(|i| format!("{{\"id\":{i},\"kind\":\"finding\",\"title\":\"note {i}\",\"created\":\"2026-08-01\",\"workspace\":\"{}\"}}\n", crate::support::root_id(&env.root)))
        .collect();
    let file = env.home.join("many.jsonl");
    std::fs::write(&file, records).unwrap();
    env.ok(&["import", "jsonl", file.to_str().unwrap()]);
    for command in ["\"$MNEMO\" list --json | head -c 10", "\"$MNEMO\" list | head -1", "\"$MNEMO\" context | head -1"]
    {
        let out = env.shell(&format!("{command} >/dev/null"), &[]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "{command}: {err}");
    }
}

#[test]
fn notes_past_the_limits_are_refused_naming_the_limit() {
    let env = Env::new();
    let title = "t".repeat(501);
    let err = env.fails(&["remember", "--kind", "finding", "--title", &title], 2);
    assert!(err.contains("the title is 501 characters long, over the limit of 500"), "{err}");
    let body = "b".repeat(70 * 1024);
    let err = env.fails(&["remember", "--kind", "directive", "--title", "Huge", "--body", &body], 2);
    assert!(err.contains("the body is 71680 bytes long, over the limit of 65536"), "{err}");
    // The same through an import of a 10 MB body: the line is named, nothing is stored.
    let record = serde_json::json!({
        "id": 1, "kind": "directive", "title": "Huge", "created": "2026-08-01",
        "workspace": crate::support::root_id(&env.root), "body": "x".repeat(10 << 20)
    });
    let file = env.home.join("huge.jsonl");
    std::fs::write(&file, format!("{record}\n")).unwrap();
    let err = env.fails(&["import", "jsonl", file.to_str().unwrap()], 1);
    assert!(err.contains("line 1") && err.contains("over the limit of 65536"), "{err}");
    assert_eq!(env.json(&["list"])["notes"], serde_json::json!([]));
    let reason = "r".repeat(1001);
    env.remember("finding", "Has a reason");
    let err = env.fails(&["revoke", "1", "--reason", &reason], 2);
    assert!(err.contains("the reason is 1001 characters long"), "{err}");
}

#[test]
fn terminal_control_sequences_in_notes_are_neutralised() {
    let env = Env::new();
    let title = "\u{1b}]0;owned\u{7} Clear \u{1b}[2Jthe screen\u{9b}31m";
    let id = crate::support::parse_id(&env.ok(&[
        "remember",
        "--kind",
        "directive",
        "--title",
        title,
        "--body",
        "line\u{1b}[1A up\u{8}\u{7f}",
    ]));
    for args in [vec!["list"], vec!["show", &id.to_string()], vec!["context"]] {
        let out = env.ok(&args);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "{args:?}: {out:?}");
        assert!(out.contains("␛]0;owned␇ Clear ␛[2Jthe screen"), "{args:?}: {out}");
    }
    let hook = env.command(&["hook", "session-start"]).output().unwrap();
    let out = String::from_utf8(hook.stdout).unwrap();
    assert!(!out.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "{out:?}");
}

#[test]
fn whole_deliveries_keep_their_budget_and_say_what_they_cut() {
    let env = Env::new();
    let body: String = (0..1500).map(|i| format!("directive line {i}\n")).collect();
    let id = crate::support::parse_id(&env.ok(&[
        "remember",
        "--kind",
        "directive",
        "--title",
        "A very long standing rule",
        "--body",
        &body,
    ]));
    let hook = env.command(&["hook", "session-start", "--budget", "1500"]).output().unwrap();
    let out = String::from_utf8(hook.stdout).unwrap();
    assert!(out.len() < 1500 * 4 + 200, "{} characters for a budget of 1500 tokens", out.len());
    assert!(out.contains("A very long standing rule"), "the title is always delivered");
    assert!(out.contains(&format!("characters cut for the budget; `mnemo expand {id}` shows the whole note")), "{out}");
    let context = env.ok(&["context", "--budget", "500"]);
    assert!(context.len() < 500 * 4 + 600, "{}", context.len());
    assert!(context.contains(&format!("`mnemo expand {id}`")), "{context}");
}

#[test]
fn a_mistyped_store_path_is_an_error_and_stores_are_private() {
    let env = Env::new().file_store();
    let typo = env.home.join("nonexistent/dir/x.db");
    let err = env.fails(&["--store", typo.to_str().unwrap(), "list"], 1);
    assert!(err.contains("the directory") && err.contains("nonexistent/dir does not exist"), "{err}");
    assert!(!env.home.join("nonexistent").exists(), "nothing was created");
    // A store made by mnemo, its WAL and its data directory are its owner's only.
    env.remember("finding", "Private");
    let mode = |p: &std::path::Path| {
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions()) & 0o777
    };
    assert_eq!(mode(&env.store), 0o600);
    let wal = env.store.with_extension("db-wal");
    if wal.exists() {
        assert_eq!(mode(&wal), 0o600);
    }
    let xdg = env.home.join("xdg");
    let out = env
        .command(&["remember", "--kind", "finding", "--title", "Default"])
        .env_remove("MNEMO_STORE")
        .env("XDG_DATA_HOME", &xdg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(mode(&xdg.join("mnemo")), 0o700);
    assert_eq!(mode(&xdg.join("mnemo/memory.db")), 0o600);
    // An existing store that others can read is named, with the fix.
    std::fs::set_permissions(&env.store, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let out = env.command(&["list"]).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("can be read by other users (mode 644)") && err.contains("chmod 600"), "{err}");
    // Hook session files keep the user's prompts: private too.
    let hook = env.command(&["hook", "user-prompt"]).stdin(std::process::Stdio::piped()).spawn().unwrap();
    drop(hook.wait_with_output().unwrap());
    std::fs::set_permissions(&env.store, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let sessions = env.store_files_dir().join("sessions");
    if sessions.exists() {
        assert_eq!(mode(&sessions), 0o700);
        for file in std::fs::read_dir(&sessions).unwrap().flatten() {
            assert_eq!(mode(&file.path()), 0o600, "{}", file.path().display());
        }
    }
}

#[test]
fn a_store_that_is_a_fifo_is_named_as_such() {
    let env = Env::new();
    let fifo = env.home.join("fifo.db");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let err = env.fails(&["--store", fifo.to_str().unwrap(), "list"], 1);
    assert!(err.contains("it is not a regular file"), "{err}");
}

#[test]
fn one_workspaces_language_server_never_hands_out_anothers_memory() {
    use serde_json::json;
    let env = Env::new();
    env.remember("finding", "Ours");
    let other = env.home.join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    let out = env
        .command(&["remember", "--kind", "finding", "--title", "Their secret"])
        .current_dir(&other)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut client = crate::lsp::Client::initialized(&env);
    for method in ["memory/checkout", "memory/mirror"] {
        let answer = client.request(method, json!({ "workspace": other.to_str().unwrap() }));
        assert!(answer["result"].is_null(), "{method}: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("is another workspace"), "{answer}");
        assert!(!answer.to_string().contains("Their secret"));
    }
    let own = client.request("memory/checkout", json!({ "workspace": env.root.to_str().unwrap() }));
    assert!(own["result"]["text"].as_str().unwrap().contains("Ours"));
    client.finish();
}

#[test]
fn a_fifo_a_device_or_an_empty_file_at_the_mirror_path_is_never_read_blocked_on_or_replaced() {
    let env = Env::new();
    env.ok(&["export", "--enable"]);
    let mirror = env.root.join("MEMORY.md");
    // A FIFO: no command may hang on it (each runs under `timeout`), and the write still lands.
    std::fs::remove_file(&mirror).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&mirror).status().unwrap().success());
    for script in ["timeout 10 \"$MNEMO\" list", "timeout 10 \"$MNEMO\" remember --kind task --title 'Past a FIFO'"] {
        let out = env.shell(script, &[]).output().unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = env.shell("timeout 10 \"$MNEMO\" remember --kind task --title 'Again'", &[]).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("is not a regular file"), "{err}");
    // A committed symlink to /dev/zero: the language server answers at once and reads nothing of it.
    std::fs::remove_file(&mirror).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &mirror).unwrap();
    let mut client = crate::lsp::Client::initialized(&env);
    let started = std::time::Instant::now();
    let symbols = client.request("workspace/symbol", serde_json::json!({ "query": "FIFO" }));
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(symbols["error"].is_null(), "{symbols}");
    client.finish();
    // An empty file is not a mirror: it is left alone, and the warning says why.
    std::fs::remove_file(&mirror).unwrap();
    std::fs::write(&mirror, "").unwrap();
    let out = env.run(&["remember", "--kind", "task", "--title", "Not over an empty file"]);
    assert!(out.status.success());
    assert!(String::from_utf8(out.stderr).unwrap().contains("it exists and is an empty file"));
    assert_eq!(std::fs::read(&mirror).unwrap(), b"");
}

#[test]
fn a_clock_that_goes_back_is_refused_and_a_tampered_schema_version_is_one_line() {
    let env = Env::new().file_store();
    let id = env.remember("task", "Dated now");
    let out = env
        .command(&["revoke", &id.to_string(), "--reason", "from the past"])
        .env("MNEMO_NOW", "2020-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("the clock says 2020-01-01T00:00:00Z, before the note's latest event"), "{err}");
    assert_eq!(env.json(&["show", &id.to_string()])["state"], "active");
    // A person is never blocked from fixing a note: the event is dated at the note's latest.
    let out = env
        .command(&["revoke", &id.to_string(), "--reason", "a person fixes it", "--as-human"])
        .env("MNEMO_NOW", "2020-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(said.contains("note: the clock (2020-01-01T00:00:00Z) is behind"), "it says so: {said}");
    let history = env.json(&["history", &id.to_string()]);
    assert_eq!(history[1]["at"], history[0]["at"], "{history}");
    // A lowered user_version: one line that says what to do, no SQL.
    let conn = rusqlite::Connection::open(&env.store).unwrap();
    conn.pragma_update(None, "user_version", 2).unwrap();
    drop(conn);
    let err = env.fails(&["list"], 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("from schema version 2") && err.contains("restore it from a backup"), "{err}");
    assert!(!err.contains("CREATE"), "{err}");
}

#[test]
fn line_numbers_past_u32_are_refused_not_wrapped() {
    use serde_json::json;
    let env = Env::new();
    let id = crate::support::parse_id(&env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Anchored",
        "--anchor",
        "src/lock.rs:2-3",
    ]));
    let mut client = crate::lsp::Client::initialized(&env);
    let answer = client.request(
        "workspace/executeCommand",
        json!({ "command": "mnemo.reanchor", "arguments": [id, 0, 4_294_967_298u64, 4_294_967_299u64] }),
    );
    assert!(answer["error"]["message"].as_str().unwrap().contains("lines from 1 to 4294967295"), "{answer}");
    assert_eq!(env.json(&["show", &id.to_string()])["state"], "active", "nothing was re-anchored");
    client.finish();
}

/// A store with a few notes and events, then `tamper` done to its file with
/// plain SQLite; what `store verify --json` reports.
fn verify_after(tamper: &str) -> (Env, serde_json::Value, String) {
    let env = Env::new().file_store();
    let a = env.remember("gotcha", "Release the lock");
    let b = env.remember("finding", "Cache ratio 0.91");
    env.ok(&["revoke", &b.to_string(), "--reason", "measured wrong"]);
    let c = env.remember("task", "To forget");
    env.ok(&["forget", &c.to_string(), "--confirm"]);
    env.ok(&["flag-stale", &a.to_string(), "--reason", "lock.rs moved"]);
    env.ok(&["store", "verify"]);
    let conn = rusqlite::Connection::open(&env.store).unwrap();
    conn.execute_batch(tamper).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    drop(conn);
    let out = env.command(&["store", "verify", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "verify must fail after: {tamper}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = String::from_utf8(env.command(&["store", "verify"]).output().unwrap().stdout).unwrap();
    (env, report, text)
}

fn problems(report: &serde_json::Value) -> Vec<String> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{}: {}", p[0].as_str().unwrap(), p[1].as_str().unwrap()))
        .collect()
}

#[test]
fn verify_finds_every_tampering_and_names_where() {
    // A clean store with a forgotten note verifies, and shows its chain head.
    let env = Env::new().file_store();
    let id = env.remember("task", "Gone soon");
    env.remember("task", "Stays");
    env.ok(&["forget", &id.to_string(), "--confirm"]);
    let clean = env.ok(&["store", "verify"]);
    assert!(clean.starts_with("clean:") && clean.contains("chain head: "), "{clean}");

    let (_, report, text) =
        verify_after("DROP TRIGGER notes_are_immutable; UPDATE notes SET title = 'Hold the lock' WHERE id = 1;");
    let found = problems(&report);
    assert!(
        found.iter().any(|p| p == "trigger notes_are_immutable: is gone: the append-only guard was dropped"),
        "{found:?}"
    );
    assert!(found.iter().any(|p| p.starts_with("event 1: its hash link does not match")), "{found:?}");
    assert!(text.contains("event 1: its hash link does not match"), "{text}");

    let (_, report, _) = verify_after(
        "INSERT INTO forget_permit (note_id) VALUES (2); DELETE FROM events WHERE note_id = 2 AND kind = 'revoked';",
    );
    let found = problems(&report);
    assert!(found.iter().any(|p| p.starts_with("note #2: has a forget permit outside a forget")), "{found:?}");
    assert!(found.iter().any(|p| p.contains("is missing from the log: deleted without `forget`")), "{found:?}");

    let (_, report, _) = verify_after(
        "INSERT INTO events (note_id, kind, actor, at, reason) VALUES (1, 'revoked', 'human', 0, 'forged');",
    );
    let found = problems(&report);
    assert!(found.iter().any(|p| p.contains("is not in the hash chain")), "{found:?}");
    assert!(found.iter().any(|p| p.contains("is dated 1970-01-01T00:00:00Z, before #1 was created")), "{found:?}");
}

#[test]
fn verify_finds_a_damaged_page() {
    let env = Env::new().file_store();
    for i in 0..200 {
        env.remember("finding", &format!("Filler note number {i} with some words to fill pages"));
    }
    let conn = rusqlite::Connection::open(&env.store).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    drop(conn);
    let mut bytes = std::fs::read(&env.store).unwrap();
    let page = 4096usize;
    let target = (pages as usize / 2) * page;
    for (i, byte) in bytes[target..target + page].iter_mut().enumerate() {
        *byte = (i * 7 + 13) as u8;
    }
    std::fs::write(&env.store, bytes).unwrap();
    let out = env.command(&["store", "verify"]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("the store file") || said.contains("malformed") || said.contains("corrupt"), "{said}");
}

#[test]
fn forget_leaves_no_byte_of_the_note_anywhere_in_the_store() {
    let env = Env::new().file_store();
    let secret_title = "Staging password is hunter2-zebra-quokka";
    let secret_body = "ghp_0123456789abcdefXYZsecretbody plus the rest";
    env.remember("finding", "An ordinary note that stays");
    let id = crate::support::parse_id(&env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        secret_title,
        "--body",
        secret_body,
    ]));
    // Copies: a checkout base, a check-in (another base), the FTS index, revoke/reinstate events.
    let file = env.home.join("checkout.md");
    env.ok(&["checkout", "--out", file.to_str().unwrap()]);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("## Tasks\n", "## Tasks\n\n- low · Another\n")).unwrap();
    env.ok(&["checkin", file.to_str().unwrap()]);
    env.ok(&["recall", "hunter2 zebra"]);
    env.ok(&["forget", &id.to_string(), "--confirm"]);
    env.ok(&["store", "verify"]);
    let mut bytes = std::fs::read(&env.store).unwrap();
    for extra in ["db-wal", "db-shm"] {
        if let Ok(more) = std::fs::read(env.store.with_extension(extra)) {
            bytes.extend(more);
        }
    }
    for needle in ["hunter2", "zebra-quokka", "ghp_0123456789", "secretbody"] {
        let found = bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(!found, "'{needle}' is still in the store file after forget");
    }
    assert!(env.ok(&["list"]).contains("An ordinary note that stays"));
}

#[test]
fn the_checkout_bases_a_store_keeps_are_bounded_and_compact() {
    let env = Env::new().file_store();
    for i in 0..200 {
        env.remember("finding", &format!("Note {i} of the store, long enough to weigh something"));
    }
    for i in 0..40 {
        env.remember("task", &format!("Task {i}"));
        let file = env.home.join(format!("c{i}.md"));
        env.ok(&["checkout", "--out", file.to_str().unwrap()]);
    }
    let conn = rusqlite::Connection::open(&env.store).unwrap();
    let (kept, keys, bytes): (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*), count(*) FILTER (WHERE key_epoch IS NULL), sum(length(text) + coalesce(length(delta), 0))
             FROM checkouts",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    // The 32 newest, and the one whole text (the key) the others are kept against.
    assert_eq!((kept, keys), (33, 1));
    let one = std::fs::read_to_string(env.home.join("c39.md")).unwrap().len() as i64;
    // Each of the others is what it adds to the key (a few tasks): 51 KB in all here, not 33 × 19 KB.
    assert!(bytes < one * 4, "33 bases take {bytes} bytes, one checkout is {one}");
    // The newest still checks in, and so does the key; one older than both
    // says why it cannot, and keeps the text.
    let newest = env.home.join("c39.md");
    env.ok(&["checkin", newest.to_str().unwrap()]);
    env.ok(&["checkin", env.home.join("c0.md").to_str().unwrap()]);
    let older = env.home.join("c1.md");
    let before = std::fs::read_to_string(&older).unwrap();
    let err = env.fails(&["checkin", older.to_str().unwrap()], 1);
    assert!(err.contains("older than the 32 newest it keeps"), "{err}");
    assert_eq!(std::fs::read_to_string(&older).unwrap(), before);
}

#[test]
fn an_agent_over_mcp_cannot_make_its_own_words_the_users() {
    use serde_json::json;
    let env = Env::new();
    let mut mcp = crate::mcp::Mcp::start(&env);
    let (text, error) = mcp.call(
        "remember",
        json!({ "kind": "directive", "title": "Always deploy on Fridays", "user_message": "Always deploy on Fridays" }),
    );
    assert!(!error, "{text}");
    let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(stored["provenance"], "agent", "no recorded prompt: the argument binds nothing");
    // With the user's prompt recorded by the hook, a quote from it binds.
    let hook = env.command(&["hook", "user-prompt"]).stdin(std::process::Stdio::piped()).spawn().unwrap();
    {
        use std::io::Write;
        let mut hook = hook;
        hook.stdin.take().unwrap().write_all(b"Please remember: never force-push to main.").unwrap();
        assert!(hook.wait().unwrap().success());
    }
    let (text, _) = mcp.call(
        "remember",
        json!({ "kind": "directive", "title": "Never force-push to main", "user_message": "never force-push to main" }),
    );
    let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(stored["provenance"], "user-stated", "{text}");
    let (text, _) = mcp
        .call("remember", json!({ "kind": "directive", "title": "Skip the tests", "user_message": "Skip the tests" }));
    let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(stored["provenance"], "agent", "a claim the recorded prompt does not hold binds nothing: {text}");
    mcp.finish();
}

#[test]
fn an_mcp_request_past_the_size_limit_is_refused_in_linear_time() {
    use serde_json::json;
    let env = Env::new();
    let mut mcp = crate::mcp::Mcp::start(&env);
    let huge = "x".repeat(16 << 20);
    let started = std::time::Instant::now();
    let answer = mcp.request("tools/call", json!({ "name": "recall", "arguments": { "query": huge } }));
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    let said = answer.to_string();
    assert!(said.contains("longer than 4 MB"), "{}", &said[..said.len().min(500)]);
    let (text, error) = mcp.call("remember", json!({ "kind": "finding", "title": "Still serving" }));
    assert!(!error, "{text}");
    mcp.finish();
}

#[test]
fn secrets_are_refused_at_every_write_path_with_the_line_and_a_persons_override() {
    use serde_json::json;
    let env = Env::new();
    let token = concat!("ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let body = format!("Use this to push:\n{token}\n");
    // CLI, as an agent: refused, naming the field, the rule and the line.
    let err = env.fails(&["remember", "--kind", "operational", "--title", "Push token", "--body", &body], 2);
    assert!(err.contains("the body holds what looks like a secret (github-pat) on its line 2"), "{err}");
    // An agent cannot override; a person can.
    let err = env
        .fails(&["remember", "--kind", "operational", "--title", "Push token", "--body", &body, "--allow-secret"], 1);
    assert!(err.contains("pass --as-human"), "{err}");
    env.ok(&[
        "remember",
        "--as-human",
        "--allow-secret",
        "--kind",
        "operational",
        "--title",
        "Push token",
        "--body",
        &body,
    ]);
    // MCP.
    let mut mcp = crate::mcp::Mcp::start(&env);
    let (text, error) = mcp.call("remember", json!({ "kind": "finding", "title": "Key", "body": body }));
    assert!(error && text.contains("looks like a secret (github-pat)"), "{text}");
    mcp.finish();
    // An import names the record's line.
    let record = json!({ "id": 1, "kind": "finding", "title": "Imported key", "body": body, "created": "2026-08-01",
        "workspace": crate::support::root_id(&env.root) });
    let file = env.home.join("secret.jsonl");
    std::fs::write(&file, format!("{record}\n")).unwrap();
    let err = env.fails(&["import", "jsonl", file.to_str().unwrap()], 1);
    assert!(err.contains("line 1") && err.contains("github-pat"), "{err}");
    // A check-in refuses that entry on its line and applies the rest.
    let checkout = env.home.join("c.md");
    env.ok(&["checkout", "--out", checkout.to_str().unwrap()]);
    let text = std::fs::read_to_string(&checkout).unwrap();
    let typed =
        text.replace("## Tasks\n", &format!("## Tasks\n\n- low · Applied\n\n- high · Holds a key\n  {token}\n"));
    std::fs::write(&checkout, typed).unwrap();
    let out = env.command(&["checkin", checkout.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("looks like a secret (github-pat)"), "{err}");
    let titles: Vec<String> = env.json(&["list"])["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap().to_string())
        .collect();
    assert!(titles.contains(&"Applied".to_string()) && !titles.contains(&"Holds a key".to_string()), "{titles:?}");
    assert!(
        std::fs::read_to_string(&checkout).unwrap().contains(token),
        "the refused entry stays in the file as typed"
    );
}

#[test]
fn a_workspace_whose_path_holds_a_line_break_can_be_checked_in() {
    let env = Env::new();
    let odd = env.home.join("odd\nname");
    std::fs::create_dir_all(odd.join(".git")).unwrap();
    let run = |args: &[&str]| env.command(args).current_dir(&odd).output().unwrap();
    assert!(run(&["remember", "--kind", "finding", "--title", "In an odd directory"]).status.success());
    let file = env.home.join("odd.md");
    assert!(run(&["checkout", "--out", file.to_str().unwrap()]).status.success());
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.lines().next().unwrap().ends_with("-->"), "line 1 stays one line: {text}");
    std::fs::write(&file, text.replace("In an odd directory", "In an odd directory, edited")).unwrap();
    let out = run(&["checkin", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8(out.stdout).unwrap().contains("superseded by"));
}

#[test]
fn a_nul_in_a_title_is_shown_not_a_raw_constraint_error() {
    let env = Env::new();
    let record = serde_json::json!({ "id": 1, "kind": "finding", "title": "before\u{0}after", "created": "2026-08-01",
        "workspace": crate::support::root_id(&env.root) });
    let file = env.home.join("nul.jsonl");
    std::fs::write(&file, format!("{record}\n")).unwrap();
    env.ok(&["import", "jsonl", file.to_str().unwrap()]);
    assert_eq!(env.json(&["show", "1"])["title"], "before␀after");
}
