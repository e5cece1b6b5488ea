//! `mnemo import vectr DB` against a hand-written vectr store
//! (`tests/fixtures/vectr-store.sql`): ids keep their order, kinds,
//! priorities, provenance, quotes, anchors and the event log survive, a
//! re-import adds nothing, and bad stores are refused with nothing written.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::Env;

/// The fixture as a SQLite file whose workspace `WS` is this workspace's path.
fn vectr_store(env: &Env) -> PathBuf {
    let sql =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/vectr-store.sql"))
            .unwrap();
    let workspace = env.root.display().to_string().replace('\'', "''");
    let path = env.home.join("vectr.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&sql.replace("'WS'", &format!("'{workspace}'"))).unwrap();
    path
}

fn show(env: &Env, id: i64) -> Value {
    env.json(&["show", &id.to_string()])
}

#[test]
fn a_vectr_store_is_replayed_in_order_and_only_once() {
    let env = Env::new();
    env.remember("finding", "A note written before the import");
    let db = vectr_store(&env);
    let db = db.to_str().unwrap();
    let report = env.json(&["import", "vectr", db]);
    assert_eq!(report["notes"], 11, "{report}");
    assert_eq!(report["already_imported"], 0);
    let ids: Vec<(i64, i64)> = serde_json::from_value(report["ids"].clone()).unwrap();
    assert_eq!(ids.iter().map(|(v, _)| *v).collect::<Vec<_>>(), (1..=11).collect::<Vec<_>>());
    assert!(ids.windows(2).all(|w| w[0].1 < w[1].1), "ids keep vectr's order: {ids:?}");
    let id = |vectr: i64| ids[vectr as usize - 1].1;
    let not_applied = report["not_applied"].as_array().unwrap();
    assert_eq!(not_applied.len(), 1, "{report}");
    assert!(not_applied[0].as_str().unwrap().contains("revoked of #3"), "{report}");

    let directive = show(&env, id(1));
    assert_eq!(
        (&directive["kind"], &directive["priority"], &directive["provenance"], &directive["title"]),
        (
            &Value::from("directive"),
            &Value::from("high"),
            &Value::from("human"),
            &Value::from("Format before committing")
        )
    );
    assert_eq!(directive["created_at"].as_str().unwrap().get(..10), Some("2026-10-01"), "{directive}");
    let gotcha = show(&env, id(2));
    assert_eq!(gotcha["state"], "active", "the anchored file is unchanged: {gotcha}");
    assert_eq!(gotcha["anchors"][0]["path"], "src/lock.rs", "{gotcha}");
    assert_eq!(
        (gotcha["anchors"][0]["start_line"].as_i64(), gotcha["anchors"][0]["end_line"].as_i64()),
        (Some(1), Some(30))
    );
    let old = show(&env, id(3));
    assert_eq!((old["state"].as_str(), old["superseded_by"].as_i64()), (Some("superseded"), Some(id(4))), "{old}");
    assert_eq!(old["provenance"], "auto");
    let stated = show(&env, id(5));
    assert_eq!(
        (stated["provenance"].as_str(), stated["quote"].as_str()),
        (Some("user-stated"), Some("Always squash commits before merging"))
    );
    let lost_anchor = show(&env, id(6));
    assert!(lost_anchor["anchors"].as_array().unwrap().is_empty());
    assert!(
        lost_anchor["body"]
            .as_str()
            .unwrap()
            .ends_with("Anchored in vectr to: src/old_lock.rs (missing when imported)"),
        "an anchor that cannot be kept is kept as text: {lost_anchor}"
    );
    assert_eq!(show(&env, id(7))["state"], "expired");
    assert_eq!(show(&env, id(8))["state"], "stale_flagged", "vectr's hash differs from the file's");
    let reinstated = show(&env, id(9));
    assert_eq!(reinstated["state"], "active");
    let history = env.json(&["history", &id(9).to_string()]);
    let kinds: Vec<&str> = history.as_array().unwrap().iter().filter_map(|e| e["kind"].as_str()).collect();
    assert_eq!(kinds, ["created", "revoked", "reinstated"], "{history}");
    assert_eq!(show(&env, id(10))["provenance"], "human", "promoted by a person in vectr");
    let untitled = show(&env, id(11));
    assert_eq!(
        (untitled["title"].as_str(), untitled["body"].as_str()),
        (Some("Segments are 256 MiB"), Some("They are append-only."))
    );
    let listed = env.ok(&["list", "--all-workspaces"]);
    assert!(!listed.contains("Another project"), "only the chosen workspace is imported: {listed}");

    let again = env.json(&["import", "vectr", db]);
    assert_eq!((again["notes"].as_i64(), again["already_imported"].as_i64()), (Some(0), Some(11)), "{again}");
    env.ok(&["store", "verify"]);

    let other = env.json(&["import", "vectr", db, "--from-workspace", "elsewhere"]);
    assert_eq!(other["notes"], 1, "another vectr workspace into this one, when asked");
}

#[test]
fn stores_that_are_not_vectr_stores_are_refused_and_nothing_is_written() {
    let env = Env::new();
    env.remember("finding", "Already here");
    let before = env.fingerprint();
    let missing = env.fails(&["import", "vectr", "/nonexistent/vectr.db"], 1);
    assert!(missing.contains("cannot open /nonexistent/vectr.db as a vectr store: no such file"), "{missing}");
    let plain = env.home.join("plain.db");
    rusqlite::Connection::open(&plain).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    let refused = env.fails(&["import", "vectr", plain.to_str().unwrap()], 1);
    assert!(refused.contains("is not a vectr store: it has no `notes` table"), "{refused}");
    let garbage = env.home.join("garbage.db");
    std::fs::write(&garbage, "not a database at all, just text").unwrap();
    let refused = env.fails(&["import", "vectr", garbage.to_str().unwrap()], 1);
    assert!(
        refused.contains(&format!("{} is not a vectr store: file is not a database", garbage.display())),
        "{refused}"
    );
    let db = vectr_store(&env);
    let unknown = env.fails(&["import", "vectr", db.to_str().unwrap(), "--from-workspace", "nope"], 1);
    assert!(unknown.contains("the vectr store has no workspace 'nope' (it holds"), "{unknown}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE notes SET kind = 'musing' WHERE note_id = 4", []).unwrap();
    let bad = env.fails(&["import", "vectr", db.to_str().unwrap()], 1);
    assert!(bad.contains("vectr note #4: unknown kind 'musing'") && bad.contains("nothing was imported"), "{bad}");
    conn.execute("UPDATE notes SET kind = 'finding', content = 'gAAAAABnV2x0ZXN0' WHERE note_id = 4", []).unwrap();
    let encrypted = env.fails(&["import", "vectr", db.to_str().unwrap()], 1);
    assert!(encrypted.contains("content is encrypted"), "{encrypted}");
    assert_eq!(env.fingerprint(), before, "nothing was written");
}
