//! `mnemo store copy` into a real PostgreSQL 18 with pgvector (a private
//! server per test, `pg_server.rs`): every note, event (with who wrote it),
//! state, delivery, workspace move and vector arrives; copying again adds
//! nothing; the database itself keeps the log append-only (triggers for
//! everyone, no UPDATE or DELETE granted to the writer role); another
//! store's ids are refused with nothing copied; bad locations are said.

use serde_json::json;

use crate::pg_server::PgServer;
use crate::support::{Env, parse_id};

fn count(client: &mut postgres::Client, sql: &str) -> i64 {
    client.query_one(sql, &[]).unwrap().get(0)
}

#[test]
fn a_store_is_copied_whole_once_and_the_database_keeps_its_log_append_only() {
    let env = Env::with_model().file_store();
    let lock = parse_id(&env.ok(&[
        "remember",
        "--kind",
        "gotcha",
        "--title",
        "Release the lock",
        "--anchor",
        "src/lock.rs:2-3",
    ]));
    let old = parse_id(&env.ok(&["remember", "--kind", "finding", "--title", "The cache is cold at start"]));
    env.ok(&["supersede", &old.to_string(), "--title", "The cache warms in 2 s"]);
    let gone = parse_id(&env.ok(&["remember", "--kind", "finding", "--title", "Forget me"]));
    env.ok(&["forget", &gone.to_string(), "--confirm"]);
    env.ok(&["context", "the lock"]);
    let server = PgServer::start();
    let url = server.database("team");
    let first = env.json(&["store", "copy", "--to", &url]);
    let verify = env.json(&["store", "verify"]);
    assert_eq!(first["events_total"], verify["events_replayed"], "{first} {verify}");
    assert_eq!(first["chain_head"], verify["head"], "the same chain, to its head");
    assert_eq!(first["notes_added"], 3);
    assert!(first["vectors_added"].as_u64().unwrap() >= 3, "{first}");
    let again = env.json(&["store", "copy", "--to", &url]);
    assert_eq!(
        (again["notes_added"].as_u64(), again["events_added"].as_u64(), again["vectors_added"].as_u64()),
        (Some(0), Some(0), Some(0)),
        "{again}"
    );

    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    assert_eq!(count(&mut client, "SELECT count(*) FROM notes"), 3);
    assert_eq!(count(&mut client, "SELECT count(*) FROM anchors"), 1);
    assert_eq!(count(&mut client, "SELECT count(*) FROM deliveries"), 1);
    assert_eq!(
        count(&mut client, "SELECT count(*) FROM forgotten_events"),
        1,
        "the chain can be followed across forget"
    );
    let who: String =
        client.query_one("SELECT person || '@' || machine FROM events WHERE note_id = $1", &[&lock]).unwrap().get(0);
    assert_eq!(who, "tester@ci");
    let state: String = client.query_one("SELECT status FROM note_state WHERE note_id = $1", &[&old]).unwrap().get(0);
    assert_eq!(state, "superseded");
    // pgvector answers a nearest-neighbour query over the copied vectors.
    let nearest: i64 = client
        .query_one(
            "SELECT v.note_id FROM note_vectors v, note_vectors q WHERE q.note_id = $1 ORDER BY v.embedding <=> q.embedding LIMIT 1",
            &[&lock],
        )
        .unwrap()
        .get(0);
    assert_eq!(nearest, lock);

    // Append-only, enforced by the database: the writer role has no UPDATE or DELETE, and a trigger stops anyone.
    client.batch_execute("SET ROLE mnemo_writer").unwrap();
    let denied = client.batch_execute("UPDATE events SET reason = 'rewritten'").unwrap_err();
    assert!(denied.as_db_error().unwrap().message().contains("permission denied"), "{denied}");
    // Nor may it skew what recall's BM25 reads (the trigger and the fold write it).
    for statement in [
        "INSERT INTO mnemo_text_deltas (lexeme, notes, tokens) VALUES ('cache', -1000, 0)",
        "INSERT INTO note_terms VALUES ('cache', 'elsewhere', 1, 1, 0, 1)",
        "UPDATE mnemo_terms SET notes = 0",
    ] {
        let denied = client.batch_execute(statement).unwrap_err();
        assert!(denied.as_db_error().unwrap().message().contains("permission denied"), "{statement}: {denied}");
    }
    client.batch_execute("RESET ROLE").unwrap();
    for statement in ["UPDATE events SET reason = 'rewritten'", "DELETE FROM notes", "DELETE FROM event_chain"] {
        let refused = client.batch_execute(statement).unwrap_err();
        assert!(refused.as_db_error().unwrap().message().contains("is append-only"), "{statement}: {refused}");
    }

    // Back into a file: the same log, and verify of the database itself (through that replay).
    let back = env.home.join("back.db");
    let returned = env.json(&["store", "copy", "--from", &url, "--to", back.to_str().unwrap()]);
    assert_eq!(
        (returned["notes_added"].as_u64(), returned["chain_head"].clone()),
        (Some(3), first["chain_head"].clone())
    );
    assert!(returned["vectors_added"].as_u64().unwrap() >= 3, "{returned}");
    let copy_verify = env.json(&["--store", back.to_str().unwrap(), "store", "verify"]);
    assert_eq!((copy_verify["head"].clone(), copy_verify["problems"].clone()), (verify["head"].clone(), json!([])));
    let shown = env.json(&["--store", back.to_str().unwrap(), "show", &lock.to_string()]);
    assert_eq!(shown["anchors"][0]["path"], "src/lock.rs");
    let again = env.json(&["store", "copy", "--from", &url, "--to", back.to_str().unwrap()]);
    assert_eq!(again["notes_added"], 0);
    let checked = env.run(&["--store", &url, "store", "verify"]);
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stdout));
    assert!(String::from_utf8_lossy(&checked.stdout).starts_with("clean: 3 notes"));
    // And mnemo uses it as it is: the same notes, read from this machine's replica.
    let listed = env.ok(&["--store", &url, "list"]);
    assert!(
        listed.contains("[SUPERSEDED by #3] The cache is cold at start") && listed.contains("Release the lock"),
        "{listed}"
    );

    // Recall searches the database; a note forgotten there leaves none of its
    // words behind in what that search keeps (the words' note counts).
    let secret =
        parse_id(&env.ok(&["--store", &url, "remember", "--kind", "finding", "--title", "Zebraquokka rotates"]));
    assert!(env.ok(&["--store", &url, "recall", "zebraquokka"]).contains("Zebraquokka rotates"));
    assert_eq!(count(&mut client, "SELECT count(*) FROM mnemo_terms WHERE lexeme = 'zebraquokka'"), 1);
    env.ok(&["--store", &url, "forget", &secret.to_string(), "--confirm"]);
    assert_eq!(count(&mut client, "SELECT count(*) FROM mnemo_terms WHERE lexeme = 'zebraquokka'"), 0);
    assert_eq!(count(&mut client, &format!("SELECT count(*) FROM note_terms WHERE note_id = {secret}")), 0);
    assert_eq!(count(&mut client, "SELECT count(*) FROM mnemo_text_deltas"), 0, "every write folds its counts");
    assert_eq!(count(&mut client, "SELECT notes FROM mnemo_text_stats"), 3);
    assert!(!env.ok(&["--store", &url, "recall", "zebraquokka"]).contains("Zebraquokka"));

    // Another store's note #1 cannot land on this one's: refused, nothing copied.
    let other = Env::new().file_store();
    other.ok(&["remember", "--kind", "finding", "--title", "Another team's note"]);
    let refused = other.fails(&["store", "copy", "--to", &url], 1);
    assert!(refused.contains("nothing was copied") && refused.contains("another note with id 1"), "{refused}");
    assert_eq!(count(&mut client, "SELECT count(*) FROM notes"), 3);
    // A guard dropped in the database is what verify reports.
    client.batch_execute("DROP TRIGGER events_are_append_only ON events").unwrap();
    let out = env.run(&["--store", &url, "store", "verify"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("trigger events_are_append_only: is gone"));
}

#[test]
fn a_bad_location_is_said_and_a_password_never_printed() {
    let env = Env::new().file_store();
    env.ok(&["remember", "--kind", "finding", "--title", "x"]);
    let said = env.fails(&["store", "copy", "--to", "/tmp/elsewhere.db"], 1);
    assert!(said.contains("one side of a copy is a postgres:// URL and the other a store file"), "{said}");
    let nowhere = env.home.join("no-server");
    std::fs::create_dir_all(&nowhere).unwrap();
    let url = format!("postgres://mnemo:hunter2@localhost:5/x?host={}", nowhere.display());
    let said = env.fails(&["store", "copy", "--to", &url], 1);
    assert!(said.contains("cannot connect to postgres://mnemo:***@localhost") && !said.contains("hunter2"), "{said}");
    assert!(said.contains("No such file or directory") && said.contains("is the server running"), "{said}");
    // Every command says the same of a store it cannot reach.
    let said = env.fails(&["--store", &url, "list"], 1);
    assert!(said.contains("cannot connect to") && said.contains("is the server running"), "{said}");
    let said = env.fails(&["store", "copy", "--from", "/nonexistent/memory.db", "--to", &url], 1);
    assert!(said.contains("no store at /nonexistent/memory.db"), "{said}");
}
