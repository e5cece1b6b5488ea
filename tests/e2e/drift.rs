//! `mnemo check` through the binary: anchored text that moved, drifted or
//! went missing; one stale flag per drift, even from two processes at once;
//! a reinstated note stays fresh until the text changes again.

use crate::support::Env;

fn anchored(env: &Env, title: &str, spec: &str) -> i64 {
    let out = env.ok(&["remember", "--kind", "gotcha", "--title", title, "--anchor", spec]);
    out.trim().trim_start_matches('#').parse().unwrap()
}

fn stale_events(env: &Env, id: i64) -> Vec<String> {
    env.json(&["history", &id.to_string()])
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "stale_flagged")
        .map(|e| format!("{} {}", e["actor"].as_str().unwrap(), e["reason"].as_str().unwrap()))
        .collect()
}

#[test]
fn check_reports_moved_drifted_and_missing_anchors_and_flags_each_drift_once() {
    let env = Env::new();
    let lock = anchored(&env, "Release the lock before restarting", "src/lock.rs:2-3");
    let moved = anchored(&env, "Line ten is special", "src/lock.rs:10-10");
    std::fs::write(env.root.join("src/gone.rs"), "fn gone() {}\n").unwrap();
    let gone = anchored(&env, "The gone module", "src/gone.rs:1");
    assert_eq!(env.ok(&["check"]), "3 anchors in 2 files: 3 fresh, 0 moved, 0 drifted, 0 missing, 0 not checked\n");

    // Line 2 changes; a line inserted above line 10 moves it; gone.rs is deleted.
    let text: String = (1..=30)
        .map(|i| {
            if i == 2 {
                "line two, edited\n".to_string()
            } else if i == 5 {
                format!("line {i}\ninserted\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    std::fs::write(env.root.join("src/lock.rs"), text).unwrap();
    std::fs::remove_file(env.root.join("src/gone.rs")).unwrap();
    let out = env.ok(&["check"]);
    assert_eq!(
        out,
        format!(
            "#{lock} src/lock.rs:2-3 drifted: the lines changed since 2026-08-04\n\
             #{moved} src/lock.rs:10-10 moved to lines 11-11 (unchanged text; re-anchor the note to follow it)\n\
             #{gone} src/gone.rs:1-1 missing: src/gone.rs is gone (deleted or renamed)\n\
             3 anchors in 2 files: 0 fresh, 1 moved, 1 drifted, 1 missing, 0 not checked\n\
             flagged stale: #{lock}, #{gone}\n"
        )
    );
    assert_eq!(stale_events(&env, lock), ["system anchor src/lock.rs:2-3 changed since 2026-08-04"]);
    assert_eq!(stale_events(&env, gone), ["system anchor file src/gone.rs is gone (deleted or renamed)"]);
    assert_eq!(env.json(&["show", &moved.to_string()])["state"], "active", "moved text is not drift");

    // Two processes at once, after a person reinstated: the same drift never flags again.
    env.ok(&["reinstate", &lock.to_string()]);
    std::thread::scope(|s| {
        let a = s.spawn(|| env.ok(&["check"]));
        let b = s.spawn(|| env.ok(&["check"]));
        a.join().unwrap();
        b.join().unwrap();
    });
    assert_eq!(stale_events(&env, lock).len(), 1);
    assert_eq!(env.json(&["show", &lock.to_string()])["state"], "active", "reinstated after drift: fresh again");

    // A later change drifts it again, once, even with two checkers.
    let text = std::fs::read_to_string(env.root.join("src/lock.rs"))
        .unwrap()
        .replace("line two, edited", "line two, edited twice");
    std::fs::write(env.root.join("src/lock.rs"), text).unwrap();
    std::thread::scope(|s| {
        let a = s.spawn(|| env.ok(&["check"]));
        let b = s.spawn(|| env.ok(&["check"]));
        a.join().unwrap();
        b.join().unwrap();
    });
    assert_eq!(stale_events(&env, lock).len(), 2);
    let json = env.json(&["check"]);
    assert_eq!(json["files"], 2);
    assert_eq!(json["flagged"], serde_json::json!([]));
    env.ok(&["store", "verify"]);
}
