//! A team on one PostgreSQL store, as people run it: two machines (separate
//! homes, clones of one repository at different paths, each with its own
//! replica) point `mnemo` at one database. An agent's note on machine A
//! reaches the memory document open on machine B within a second (LISTEN/
//! NOTIFY), a person's edit on B that meets A's revoke is reported per
//! entry, and both machines see the same log, with who wrote each event.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::lsp::Client;
use crate::pg_server::PgServer;
use crate::support::{Env, parse_id};

/// `env`'s project made a clone of `git@github.com:org/app.git` (a real repository).
fn clone_of_app(env: &Env) {
    std::fs::remove_dir_all(env.root.join(".git")).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(&env.root).env("GIT_CONFIG_GLOBAL", "/dev/null").output();
        assert!(out.unwrap().status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["remote", "add", "origin", "git@github.com:org/app.git"]);
}

fn machine(url: &str, name: &'static str, clone_dir: &str) -> Env {
    let mut env = Env::with_model();
    let root = env.home.join(clone_dir);
    std::fs::create_dir_all(root.parent().unwrap()).unwrap();
    std::fs::rename(&env.root, &root).unwrap();
    env.root = root;
    clone_of_app(&env);
    env.store = Path::new(url).to_path_buf();
    env.machine = name;
    env
}

#[test]
fn two_machines_share_one_store_live_and_conflicts_are_reported_per_entry() {
    let server = PgServer::start();
    let url = server.database("team");
    let a = machine(&url, "desk-a", "work/app");
    let b = machine(&url, "laptop-b", "src/checkouts/app-clone");
    let lock = parse_id(&a.ok(&["remember", "--kind", "gotcha", "--title", "Release the lock before restarting"]));
    assert_eq!(a.json(&["workspace"])["id"], "git:github.com/org/app");

    // Machine B's editor: the memory of the repository, from the other clone.
    let mut client = Client::initialized(&b);
    let (memory, text) = client.open_checkout();
    assert!(text.contains("Release the lock before restarting"), "{text}");

    // An agent on machine A writes; B's open document follows within a second.
    a.ok(&["remember", "--kind", "finding", "--title", "Written by an agent on machine A"]);
    // From the moment the write is committed (A's command has returned).
    let written = Instant::now();
    let changed = client.wait(|m| {
        m["method"] == "memory/didChange"
            && m["params"]["text"].as_str().is_some_and(|t| t.contains("Written by an agent on machine A"))
    });
    let elapsed = written.elapsed();
    assert_eq!(changed["params"]["uri"], memory);
    assert!(elapsed < Duration::from_secs(1), "machine B saw machine A's write within a second: {elapsed:?}");
    let current = changed["params"]["text"].as_str().unwrap().to_string();

    // The person on B raises the gotcha's priority while A revokes it: a conflict on that entry only.
    let edited = current
        .replace("medium · Release the lock", "high · Release the lock")
        .replace("## Tasks\n", "## Tasks\n\n- low · Typed on machine B\n");
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": memory, "version": 2 }, "contentChanges": [{ "text": edited }] }),
    );
    a.ok(&["revoke", &lock.to_string(), "--reason", "revoked on machine A"]);
    let saved = client.request("memory/checkin", json!({ "uri": memory, "text": edited }));
    let result = &saved["result"];
    assert_eq!(result["applied"], json!(["created #3"]), "{saved}");
    let conflicts = result["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{saved}");
    assert!(conflicts[0].to_string().contains("revoked on machine A"), "{saved}");
    assert!(result["text"].as_str().unwrap().contains("· high · Release the lock"), "the edit is kept as typed");
    client.finish();

    // Both machines read the same log, each event with who wrote it where.
    let listed = a.ok(&["list"]);
    assert!(listed.contains("Typed on machine B") && listed.contains("[REVOKED"), "{listed}");
    assert_eq!(a.ok(&["list"]), b.ok(&["list"]));
    let history = b.ok(&["history", &lock.to_string()]);
    assert!(history.contains("tester@desk-a"), "{history}");
    let task = a.ok(&["history", "3"]);
    assert!(task.contains("tester@laptop-b"), "{task}");
    for machine in [&a, &b] {
        assert!(machine.ok(&["store", "verify"]).starts_with("clean: 3 notes"));
    }
}
