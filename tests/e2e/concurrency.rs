//! Several agents writing at once: 8 processes × 100 notes through the binary
//! end with 800 notes, unique ascending ids, no busy errors, a clean verify.

use std::collections::BTreeSet;

use crate::support::{Env, parse_id};

#[test]
fn eight_processes_writing_100_notes_each_lose_nothing() {
    let env = Env::new();
    env.ok(&["export", "--enable"]);
    let ids: Vec<i64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8)
            .map(|worker| {
                let env = &env;
                scope.spawn(move || {
                    (0..100)
                        .map(|i| {
                            let title = format!("worker {worker} note {i}");
                            let out = env.run(&["remember", "--kind", "finding", "--title", &title]);
                            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                            parse_id(&String::from_utf8(out.stdout).unwrap())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    // Read before any other command runs: opening the store would catch a stale mirror up.
    let mirror = std::fs::read_to_string(env.root.join("MEMORY.md")).unwrap();
    env.ok(&["export", "--path", "fresh.md"]);
    let fresh = std::fs::read_to_string(env.root.join("fresh.md")).unwrap();
    assert!(mirror == fresh, "the last writer's render is on disk: concurrent renders never leave an older one");
    let unique: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), 800, "every acknowledged id is distinct");
    let listed: BTreeSet<i64> =
        env.json(&["list"])["notes"].as_array().unwrap().iter().map(|n| n["id"].as_i64().unwrap()).collect();
    assert_eq!(listed, unique, "every acknowledged write is in the store");
    assert_eq!(env.json(&["store", "stats"])["stats"]["epoch"], 800);
    env.ok(&["store", "verify"]);
}

/// An agent revokes, supersedes and creates notes while a person edits a
/// checkout; a second agent keeps writing during the check-in itself. The
/// check-in applies the entries only the person changed and reports exactly
/// the ones both changed; nobody's write is lost.
#[test]
fn a_checkin_while_agents_write_applies_the_rest_and_reports_exactly_the_conflicts() {
    let env = Env::new();
    let revoked_meanwhile = env.remember("gotcha", "Release the lock before restarting");
    let superseded_meanwhile = env.remember("finding", "Cache hit ratio is 0.91");
    let only_mine = env.remember("decision", "Use openssl");
    let untouched = env.remember("task", "Port the cache");
    let file = env.home.join("checkout.md");
    env.ok(&["checkout", "--out", file.to_str().unwrap()]);
    let text = std::fs::read_to_string(&file).unwrap();

    env.ok(&["revoke", &revoked_meanwhile.to_string(), "--reason", "an agent revoked it"]);
    let successor =
        parse_id(&env.ok(&["supersede", &superseded_meanwhile.to_string(), "--title", "Cache hit ratio is 0.95"]));
    let created_meanwhile = env.remember("finding", "Written by an agent meanwhile");
    let edited = text
        .replace("medium · Release the lock", "high · Release the lock")
        .replace("Cache hit ratio is 0.91", "Cache hit ratio is 0.93")
        .replace("medium · Use openssl", "medium · Use rustls")
        .replace("## Operational\n", "## Operational\n\n- low · Typed by the person\n");
    std::fs::write(&file, &edited).unwrap();

    let (checkin, agent_ids) = std::thread::scope(|scope| {
        let agent = scope.spawn(|| {
            (0..20).map(|i| env.remember("finding", &format!("agent note {i} during the check-in"))).collect::<Vec<_>>()
        });
        let checkin = env.run(&["--json", "checkin", file.to_str().unwrap()]);
        (checkin, agent.join().unwrap())
    });
    assert_eq!(checkin.status.code(), Some(3), "{}", String::from_utf8_lossy(&checkin.stderr));
    let report: serde_json::Value = serde_json::from_slice(&checkin.stdout).unwrap();
    let mut conflicts: Vec<i64> =
        report["conflicts"].as_array().unwrap().iter().map(|c| c["id"].as_i64().unwrap()).collect();
    conflicts.sort();
    assert_eq!(conflicts, [revoked_meanwhile, superseded_meanwhile], "{report}");
    let applied: Vec<&str> = report["applied"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(applied.len(), 2, "{applied:?}");
    assert!(applied[0].starts_with(&format!("#{only_mine} superseded by #")), "{applied:?}");
    assert!(applied[1].starts_with("created #"), "{applied:?}");

    let state = |id: i64| env.json(&["show", &id.to_string()])["state"].as_str().unwrap().to_string();
    assert_eq!(state(revoked_meanwhile), "revoked", "the agent's revoke stands");
    assert_eq!(state(superseded_meanwhile), "superseded");
    assert_eq!(state(successor), "active");
    assert_eq!(state(untouched), "active");
    assert_eq!(state(created_meanwhile), "active");
    for id in agent_ids {
        assert_eq!(state(id), "active", "agent note #{id} written during the check-in");
    }
    let rewritten = std::fs::read_to_string(&file).unwrap();
    assert!(rewritten.contains("· high · Release the lock") && rewritten.contains("Cache hit ratio is 0.93"));
    assert!(rewritten.contains("Written by an agent meanwhile"), "entries changed only in the store are refreshed");
    env.ok(&["store", "verify"]);
}
