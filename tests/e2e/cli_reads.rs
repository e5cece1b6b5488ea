//! remember, show, history, list, store stats/verify, import, workspaces and
//! store location, through the binary.

use expect_test::expect;

use crate::support::{Env, parse_id, root_id};

#[test]
fn remember_prints_the_id_and_show_prints_the_whole_note() {
    let env = Env::new();
    let out = env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--priority",
        "high",
        "--title",
        "Workspace lock must be released before daemon restart",
        "--body",
        "Otherwise the daemon deadlocks.\nSee the restart path.",
        "--anchor",
        "src/lock.rs:10-24",
    ]);
    assert_eq!(out, "#1\n");
    let show = env.ok(&["show", "1"]).replace(&root_id(&env.root), "<root>");
    expect![[r#"
        #1 gotcha/high · agent · active
        Workspace lock must be released before daemon restart

        Otherwise the daemon deadlocks.
        See the restart path.

        anchors:
          src/lock.rs:10-24 (sha256 decd7f8ca5f7)

        created 2026-08-04T12:00:00Z in <root>
    "#]]
    .assert_eq(&show);
    let json = env.json(&["show", "#1"]);
    assert_eq!(json["anchors"][0]["path"], "src/lock.rs");
    assert_eq!(json["anchors"][0]["content_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(json["state"], "active");
    assert_eq!(json["workspace"], root_id(&env.root));
}

#[test]
fn a_note_stated_in_the_user_message_is_user_stated_with_the_quote_bound() {
    let env = Env::new();
    env.ok(&[
        "remember",
        "--kind",
        "directive",
        "--title",
        "Run tests inside the venv",
        "--user-message",
        "From now on: run  tests inside the VENV, please.",
    ]);
    env.ok(&[
        "remember",
        "--kind",
        "directive",
        "--title",
        "Run tests inside docker",
        "--user-message",
        "From now on: run tests inside the venv",
    ]);
    env.ok(&["remember", "--kind", "finding", "--title", "Build cache is shared", "--provenance", "auto"]);
    env.ok(&["remember", "--kind", "decision", "--title", "We pin serde", "--as-human"]);
    let notes = env.json(&["list"])["notes"].as_array().unwrap().clone();
    let summary: Vec<(String, String)> = notes
        .iter()
        .map(|n| (n["provenance"].as_str().unwrap().to_string(), n["quote"].as_str().unwrap_or("-").to_string()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("user-stated".into(), "run  tests inside the VENV".into()),
            ("agent".into(), "-".into()),
            ("auto".into(), "-".into()),
            ("human".into(), "-".into()),
        ]
    );
}

#[test]
fn list_prints_the_index_tier_and_says_what_filters_hid() {
    let env = Env::new();
    let a = env.remember("gotcha", "Lock released before restart");
    env.remember("task", "Port the cache");
    let c = env.remember("finding", "Index rebuild reuses the embed cache");
    env.ok(&["revoke", &a.to_string(), "--reason", "wrong lock order"]);
    env.ok(&["flag-stale", &c.to_string(), "--reason", "cache.rs changed"]);
    let later = env.command(&["list"]).env("MNEMO_NOW", "2026-08-07T13:00:00Z").output().unwrap();
    expect![[r#"
        [#1] gotcha/medium · agent · [REVOKED] Lock released before restart · 3d
        [#2] task/medium · agent · Port the cache · 3d
        [#3] finding/medium · agent · [STALE] Index rebuild reuses the embed cache · 3d
    "#]]
    .assert_eq(&String::from_utf8(later.stdout).unwrap());
    let out = env.run(&["list", "--state", "active"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "[#2] task/medium · agent · Port the cache · now\n");
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "2 more hidden by the filters: 1 revoked, 1 stale_flagged\n");
    let json = env.json(&["list", "--kind", "finding"]);
    assert_eq!(json["notes"].as_array().unwrap().len(), 1);
    assert_eq!(json["hidden"]["other kinds"], 2);
    assert_eq!(env.json(&["list", "--state", "stale"])["notes"][0]["id"], c);
}

#[test]
fn history_lists_every_event_with_actor_time_and_reason() {
    let env = Env::new();
    let id = env.remember("finding", "Cache hit ratio is 0.93").to_string();
    env.ok(&["flag-stale", &id, "--reason", "bench rerun pending"]);
    env.ok(&["reinstate", &id, "--as-human"]);
    env.ok(&["promote", &id, "--as-human"]);
    let new = parse_id(&env.ok(&["supersede", &id, "--title", "Cache hit ratio is 0.95", "--reason", "rerun"]));
    expect![[r#"
        2026-08-04T12:00:00Z  created as agent (by agent, tester@ci)
        2026-08-04T12:00:00Z  stale_flagged (by agent, tester@ci) — bench rerun pending
        2026-08-04T12:00:00Z  reinstated (by human, tester@ci)
        2026-08-04T12:00:00Z  promoted to human (by human, tester@ci)
        2026-08-04T12:00:00Z  superseded by #2 (by agent, tester@ci) — rerun
        never delivered to an agent
    "#]]
    .assert_eq(&env.ok(&["history", &id]));
    let events = env.json(&["history", &id]);
    assert_eq!(events.as_array().unwrap().len(), 5);
    assert_eq!(events[4]["superseded_by"], new);
}

#[test]
fn reads_are_scoped_to_the_workspace_unless_all_workspaces_is_asked() {
    let env = Env::new();
    let other = env.home.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mine = env.remember("gotcha", "Mine");
    let theirs = parse_id(&env.ok(&[
        "--workspace",
        other.to_str().unwrap(),
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Theirs",
    ]));
    let titles = |args: &[&str]| -> Vec<String> {
        env.json(args)["notes"].as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(titles(&["list"]), vec!["Mine"]);
    assert_eq!(titles(&["list", "--all-workspaces"]), vec!["Mine", "Theirs"]);
    let err = env.fails(&["show", &theirs.to_string()], 1);
    assert!(err.contains(&format!("note #{theirs} belongs to another workspace")), "{err}");
    env.fails(&["history", &theirs.to_string()], 1);
    env.fails(&["revoke", &theirs.to_string(), "--reason", "x"], 1);
    assert_eq!(env.json(&["show", &theirs.to_string(), "--all-workspaces"])["title"], "Theirs");
    assert_eq!(env.json(&["store", "stats"])["stats"]["notes"], 1);
    assert_eq!(env.json(&["store", "stats", "--all-workspaces"])["stats"]["notes"], 2);
    let sub = env.root.join("src");
    let from_subdir = env.command(&["show", &mine.to_string(), "--json"]).current_dir(&sub).output().unwrap();
    assert!(from_subdir.status.success(), "the git root above the current directory is the workspace");
    let via_env = env.command(&["list", "--json"]).env("MNEMO_WORKSPACE", &other).output().unwrap();
    assert!(String::from_utf8(via_env.stdout).unwrap().contains("Theirs"));
}

#[test]
fn the_store_defaults_to_xdg_data_home_then_home() {
    let env = Env::new();
    let xdg = env.home.join("xdg");
    let out = env
        .command(&["remember", "--kind", "task", "--title", "t"])
        .env_remove("MNEMO_STORE")
        .env("XDG_DATA_HOME", &xdg)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(xdg.join("mnemo/memory.db").is_file());
    let out = env.command(&["remember", "--kind", "task", "--title", "t"]).env_remove("MNEMO_STORE").output().unwrap();
    assert!(out.status.success());
    assert!(env.home.join(".local/share/mnemo/memory.db").is_file());
    let explicit = env.home.join("explicit.db");
    env.ok(&["--store", explicit.to_str().unwrap(), "remember", "--kind", "task", "--title", "t"]);
    assert!(explicit.is_file());
}

#[test]
fn store_stats_and_verify() {
    let env = Env::new().file_store();
    env.remember("gotcha", "a");
    let b = env.remember("task", "b");
    env.ok(&["revoke", &b.to_string(), "--reason", "done elsewhere"]);
    let verified = env.ok(&["store", "verify"]);
    assert!(verified.starts_with("clean: 2 notes, 3 events replayed; the state cache matches the log;"), "{verified}");
    let stats = env.json(&["store", "stats"]);
    assert_eq!(stats["stats"]["epoch"], 3);
    assert_eq!(stats["stats"]["by_status"]["revoked"], 1);
    assert_eq!(stats["ranking"], "lexical only", "the ranking recall runs in, for editors' status");
    assert!(stats["ranking_reason"].as_str().unwrap().contains("no embedding model"), "{stats}");
    rusqlite::Connection::open(&env.store)
        .unwrap()
        .execute("UPDATE note_state SET status = 'active' WHERE note_id = ?1", [b])
        .unwrap();
    let out = env.run(&["store", "verify"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout).unwrap().starts_with(&format!("#{b}: cache")));
}

#[test]
fn import_jsonl_loads_the_eval_corpus_and_queries_by_workspace_name() {
    let env = Env::new();
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../eval/corpus.jsonl");
    let refused = env.fails(&["import", "jsonl", corpus], 1);
    assert!(refused.contains("provenance 'human' is reached only by a person"), "{refused}");
    assert_eq!(
        env.ok(&["import", "jsonl", corpus, "--as-human"]),
        format!("imported 260 notes (317 events, not embedded: no model) from {corpus}\n")
    );
    let ops = env.json(&["--workspace", "larder-ops", "list"]);
    assert_eq!(ops["notes"].as_array().unwrap().len(), 30);
    assert_eq!(env.json(&["--workspace", "larder", "store", "stats"])["stats"]["notes"], 230);
    env.ok(&["store", "verify"]);
    let missing = env.fails(&["import", "jsonl", "no/such.jsonl"], 1);
    assert!(missing.starts_with("error: cannot open no/such.jsonl; check the path"), "{missing}");
}

#[test]
fn due_tasks_expire_when_the_store_is_next_opened_for_writing() {
    let env = Env::new();
    let task = env.ok(&["remember", "--kind", "task", "--title", "Port the cache"]);
    let directive = env.remember("directive", "Run nextest");
    std::fs::create_dir_all(env.root.join(".mnemo")).unwrap();
    let month_later = |args: &[&str]| env.command(args).env("MNEMO_NOW", "2026-09-04T12:00:00Z").output().unwrap();
    assert!(month_later(&["list"]).status.success());
    assert_eq!(env.json(&["show", task.trim()])["state"], "active", "a read does not expire");
    assert!(month_later(&["remember", "--kind", "finding", "--title", "x"]).status.success());
    let shown = env.json(&["show", task.trim()]);
    assert_eq!(shown["state"], "expired");
    assert_eq!(shown["state_reason"], "task notes expire 30 days after they are created or reinstated");
    let history = env.json(&["history", task.trim()]);
    assert_eq!(history[1]["actor"], "system");
    assert_eq!(env.json(&["show", &directive.to_string()])["state"], "active");

    std::fs::write(env.root.join(".mnemo/config.toml"), "[expiry]\ntask = 0\nfinding = 10\n").unwrap();
    let finding = env.remember("finding", "Short-lived");
    let task2 = env.remember("task", "Never expires here");
    assert!(
        env.command(&["remember", "--kind", "task", "--title", "y"])
            .env("MNEMO_NOW", "2026-12-04T12:00:00Z")
            .output()
            .unwrap()
            .status
            .success()
    );
    assert_eq!(env.json(&["show", &finding.to_string()])["state"], "expired");
    assert_eq!(env.json(&["show", &task2.to_string()])["state"], "active");

    std::fs::write(env.root.join(".mnemo/config.toml"), "[expiry]\ndirective = 5\n").unwrap();
    let out = env.run(&["remember", "--kind", "task", "--title", "z"]);
    assert!(out.status.success(), "a broken config never blocks a write");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("directives never expire") && err.contains("due notes were not expired"), "{err}");
}
