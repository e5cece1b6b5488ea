//! A long-lived process keeps its store connections between requests
//! (`kept_connections`): the same file is opened on a kept connection, a
//! store made again at the same path never is.

use mnemo_core::{Actor, Kind, NewNote, Priority, Provenance, Timestamp};
use mnemo_store::kept_connections::{IDLE_FOR, keep_connections, reused};
use mnemo_store::{Scope, Store};

fn note(title: &str) -> NewNote {
    NewNote {
        kind: Kind::Finding,
        priority: Priority::Medium,
        title: title.into(),
        body: "body".into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors: vec![],
    }
}

#[test]
fn a_kept_connection_serves_the_same_file_and_never_one_made_again() {
    keep_connections();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let mut store = Store::open(&path).unwrap();
    let first = store.write(|w| w.create("w", note("first"), Actor::Agent, Timestamp(1))).unwrap();
    drop(store);

    let before = reused();
    let mut store = Store::open(&path).unwrap();
    assert_eq!(reused(), before + 1, "opened on the kept connection");
    assert_eq!(store.note(&Scope::All, first).unwrap().note.content.title, "first");
    let second = store.write(|w| w.create("w", note("second"), Actor::Agent, Timestamp(2))).unwrap();
    // Another handle at the same time opens its own connection.
    let other = Store::open(&path).unwrap();
    assert_eq!(reused(), before + 1, "one kept connection serves one store at a time");
    assert_eq!(other.stats(&Scope::All).unwrap().notes, 2);
    drop((store, other));

    // The store deleted and made again at the same path: a new file.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let before = reused();
    let fresh = Store::open(&path).unwrap();
    assert_eq!(reused(), before, "a store made again is never opened on a connection to the old file");
    assert_eq!(fresh.stats(&Scope::All).unwrap().notes, 0, "nothing of the old file: #{first}, #{second}");
    drop(fresh);
    // One test: the count of reuses is the process's.
    an_idle_or_forgotten_stores_connections_are_closed();
}

fn an_idle_or_forgotten_stores_connections_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.write(|w| w.create("w", note("forget me"), Actor::Agent, Timestamp(1))).unwrap();
    drop(store);
    // Forgetting a note closes the store's idle connections: no page of it stays.
    let mut store = Store::open(&path).unwrap();
    drop(Store::open(&path).unwrap());
    let before = reused();
    store.write(|w| w.forget(&Scope::All, id)).unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(reused(), before, "the idle connection was closed by the forget");
    drop(store);
    // Left alone, the store becomes a single file again.
    std::thread::sleep(IDLE_FOR + std::time::Duration::from_millis(2_500));
    assert!(
        !dir.path().join("memory.db-wal").exists(),
        "the write-ahead log was folded back when the last connection closed"
    );
    let before = reused();
    let store = Store::open(&path).unwrap();
    assert_eq!(reused(), before, "nothing idle was kept past its time");
    assert_eq!(store.stats(&Scope::All).unwrap().notes, 0);
}
