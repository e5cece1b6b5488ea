//! Lifecycle commands through the binary: legal transitions append the right
//! events; illegal ones exit 2, name the current state and change nothing.

use crate::support::{Env, parse_id};

#[test]
fn revoke_reinstate_flag_expire_promote_and_supersede() {
    let env = Env::new();
    let id = env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Lock order",
        "--provenance",
        "auto",
        "--anchor",
        "src/lock.rs:2-3",
    ]);
    let id = id.trim().trim_start_matches('#');
    assert_eq!(env.ok(&["revoke", id, "--reason", "wrong"]), format!("revoked #{id}\n"));
    assert_eq!(env.ok(&["reinstate", id]), format!("reinstated #{id}\n"));
    assert_eq!(env.ok(&["flag-stale", id, "--reason", "lock.rs changed"]), format!("flagged stale #{id}\n"));
    assert_eq!(env.ok(&["expire", id]), format!("expired #{id}\n"));
    assert_eq!(env.ok(&["reinstate", id]), format!("reinstated #{id}\n"));
    assert_eq!(env.ok(&["promote", id]), format!("promoted #{id} to agent\n"));
    assert_eq!(env.ok(&["promote", id, "--as-human"]), format!("promoted #{id} to human\n"));
    let new = parse_id(&env.ok(&[
        "supersede",
        id,
        "--title",
        "Lock order: take A before B",
        "--kind",
        "decision",
        "--priority",
        "high",
    ]));
    let old = env.json(&["show", id]);
    assert_eq!(old["state"], "superseded");
    assert_eq!(old["superseded_by"], new);
    assert_eq!(old["provenance"], "human");
    let replacement = env.json(&["show", &new.to_string()]);
    assert_eq!(replacement["kind"], "decision");
    assert_eq!(replacement["priority"], "high");
    assert_eq!(replacement["provenance"], "agent");
    assert_eq!(replacement["anchors"], old["anchors"], "anchors carry over unless given");
    let kinds: Vec<String> = env
        .json(&["history", id])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "created",
            "revoked",
            "reinstated",
            "stale_flagged",
            "expired",
            "reinstated",
            "promoted",
            "promoted",
            "superseded"
        ]
    );
    env.ok(&["store", "verify"]);
}

#[test]
fn remember_contradicts_revokes_the_wrong_note_in_the_same_write() {
    let env = Env::new();
    let wrong = env.remember("finding", "Retries are unlimited");
    let right = env.json(&[
        "remember",
        "--kind",
        "finding",
        "--title",
        "Retries stop at 3",
        "--contradicts",
        &format!("#{wrong}"),
    ]);
    let shown = env.json(&["show", &wrong.to_string()]);
    assert_eq!(
        (shown["state"].as_str(), shown["state_reason"].as_str()),
        (Some("revoked"), Some(format!("contradicted by #{}", right["id"]).as_str()))
    );
    let before = env.fingerprint();
    let refused = env.fails(&["remember", "--kind", "finding", "--title", "Again", "--contradicts", "4242"], 1);
    assert!(refused.contains("no note #4242"), "{refused}");
    assert_eq!(env.fingerprint(), before, "the new note is not written when its link is refused");
}

#[test]
fn illegal_transitions_exit_2_name_the_state_and_change_nothing() {
    let env = Env::new();
    let a = env.remember("gotcha", "a").to_string();
    let b = env.remember("gotcha", "b").to_string();
    env.ok(&["revoke", &a, "--reason", "wrong"]);
    let superseding = env.ok(&["supersede", &b, "--title", "b2"]);
    let before = env.fingerprint();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["revoke", &a, "--reason", "again"], format!("note #{a}: cannot revoke a note that is revoked")),
        (vec!["supersede", &a, "--title", "x"], format!("note #{a}: cannot supersede a note that is revoked")),
        (
            vec!["flag-stale", &b, "--reason", "x"],
            format!("note #{b}: cannot flag as stale a note that is superseded by {}", superseding.trim()),
        ),
        (
            vec!["reinstate", superseding.trim().trim_start_matches('#')],
            "cannot reinstate a note that is active".to_string(),
        ),
        (vec!["expire", &a], format!("note #{a}: cannot expire a note that is revoked")),
        (
            vec!["promote", superseding.trim().trim_start_matches('#')],
            "provenance 'human' is reached only by a person".to_string(),
        ),
        (
            vec!["remember", "--kind", "directive", "--title", "x", "--provenance", "auto"],
            "a directive can never have provenance 'auto'".to_string(),
        ),
        (vec!["remember", "--kind", "task", "--title", "  "], "the title is empty".to_string()),
        (
            vec!["revoke", superseding.trim().trim_start_matches('#'), "--reason", " "],
            "a revocation needs a reason".to_string(),
        ),
    ];
    for (args, expected) in cases {
        let err = env.fails(&args, 2);
        assert!(err.starts_with("error: ") && err.contains(&expected), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one-line error: {err}");
    }
    assert_eq!(env.fingerprint(), before, "refused commands change nothing");
}

#[test]
fn forget_needs_confirm_and_deletes_exactly_one_note() {
    let env = Env::new();
    let a = env.remember("gotcha", "a").to_string();
    let b = env.remember("gotcha", "b").to_string();
    env.ok(&["revoke", &a, "--reason", "wrong"]);
    let before = env.fingerprint();
    let err = env.fails(&["forget", &a], 1);
    assert!(err.contains("pass --confirm"), "{err}");
    assert_eq!(env.fingerprint(), before);
    assert_eq!(env.ok(&["forget", &a, "--confirm"]), format!("forgot #{a} (2 events deleted)\n"));
    env.fails(&["show", &a], 1);
    assert_eq!(env.json(&["show", &b])["title"], "b");
    assert_eq!(env.json(&["store", "stats"])["stats"]["events"], 1);
    env.ok(&["store", "verify"]);
}

#[test]
fn the_append_only_log_refuses_raw_sql_on_a_store_the_binary_wrote() {
    let env = Env::new().file_store();
    env.remember("gotcha", "a");
    let conn = rusqlite::Connection::open(&env.store).unwrap();
    let update = conn.execute("UPDATE events SET actor = 'human'", []).unwrap_err();
    assert!(update.to_string().contains("events are append-only"), "{update}");
    let delete = conn.execute("DELETE FROM events", []).unwrap_err();
    assert!(delete.to_string().contains("events are deleted only by forget"), "{delete}");
}
