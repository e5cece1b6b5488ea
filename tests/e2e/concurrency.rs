//! Several agents writing at once: 8 processes × 100 notes through the binary
//! end with 800 notes, unique ascending ids, no busy errors, a clean verify.

use std::collections::BTreeSet;

use crate::support::{Env, parse_id};

#[test]
fn eight_processes_writing_100_notes_each_lose_nothing() {
    let env = Env::new();
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
    let unique: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), 800, "every acknowledged id is distinct");
    let listed: BTreeSet<i64> =
        env.json(&["list"])["notes"].as_array().unwrap().iter().map(|n| n["id"].as_i64().unwrap()).collect();
    assert_eq!(listed, unique, "every acknowledged write is in the store");
    assert_eq!(env.json(&["store", "stats"])["stats"]["epoch"], 800);
    env.ok(&["store", "verify"]);
}
