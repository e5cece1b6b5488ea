//! A full-text search of one workspace is narrowed inside FTS5 by the
//! index's `ws` column: it finds that workspace's notes and only them, with
//! the scores a search of the whole store gives them, for any workspace id
//! (one the porter stemmer would change if it were a word, one past ASCII,
//! one that is a prefix of another), after a note is forgotten, and after a
//! workspace moved into another (its notes are then the other's; its own
//! id holds none, and a search of it finds nothing rather than failing).

use mnemo_core::{Actor, Kind, NewNote, NoteId, Priority, Provenance, Timestamp};
use mnemo_store::{Scope, Store};

const IDS: [&str; 7] = ["bench", "bench-2", "ed", "ABCDEF", "Ünïcode ☃", "a.e", "generalization"];

fn note(title: String, body: &str) -> NewNote {
    NewNote {
        kind: Kind::Finding,
        priority: Priority::Medium,
        title,
        body: body.into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors: vec![],
    }
}

#[test]
fn a_search_of_one_workspace_finds_its_notes_only_with_the_store_wide_scores() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("memory.db")).unwrap();
    let mut owner: Vec<(NoteId, &str)> = Vec::new();
    store
        .write(|w| {
            for (i, id) in IDS.iter().enumerate() {
                for n in 0..=i {
                    let body = if n % 2 == 0 { "the proxy drops the cache" } else { "cache eviction under pressure" };
                    let created = w.create(id, note(format!("{id} note {n}"), body), Actor::Agent, Timestamp(1))?;
                    owner.push((created, id));
                }
            }
            Ok(())
        })
        .unwrap();
    let everywhere = store.lexical_matches("proxy cache", 100, &Scope::All).unwrap();
    assert_eq!(everywhere.len(), owner.len());
    for id in IDS {
        let found = store.lexical_matches("proxy cache", 100, &Scope::Workspace(id.into())).unwrap();
        let expected: Vec<(NoteId, f64)> =
            everywhere.iter().filter(|(n, _)| owner.iter().any(|(o, w)| o == n && *w == id)).cloned().collect();
        assert_eq!(found, expected, "workspace {id:?}");
        let every = store.every_word_matches("proxy cache", 100, &Scope::Workspace(id.into())).unwrap();
        assert!(every.iter().all(|n| owner.iter().any(|(o, w)| o == n && *w == id)), "workspace {id:?}");
    }
    // A workspace id's token is not a word a query can find.
    assert!(store.lexical_matches("w62656g6368", 100, &Scope::All).unwrap().is_empty());

    // A note of each workspace but the first forgotten (its terms and its
    // workspace's token deleted from the index by the delete trigger).
    for id in &IDS[1..] {
        let (gone, workspace) = *owner.iter().find(|(_, w)| w == id).unwrap();
        store.write(|w| w.forget(&Scope::Workspace(workspace.into()), gone)).unwrap();
        let found = store.lexical_matches("proxy cache", 100, &Scope::Workspace(workspace.into())).unwrap();
        assert!(found.iter().all(|(n, _)| *n != gone) && !found.is_empty(), "{id:?}");
    }
    // The index holds what its source view says, token for token, after
    // the insert trigger and the delete trigger each wrote to it.
    let raw = rusqlite::Connection::open(store.path()).unwrap();
    raw.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)", []).unwrap();

    // "Ünïcode ☃" moved into "bench" (as a workspace move records it).
    raw.execute("INSERT INTO workspace_aliases (alias, workspace) VALUES (?1, 'bench')", [IDS[4]]).unwrap();
    let moved = store.lexical_matches("proxy cache", 100, &Scope::Workspace(IDS[4].into())).unwrap();
    assert!(moved.is_empty(), "{moved:?}");
    let bench = store.lexical_matches("proxy cache", 100, &Scope::Workspace("bench".into())).unwrap();
    let holders: std::collections::BTreeSet<&str> =
        bench.iter().map(|(n, _)| owner.iter().find(|(o, _)| o == n).unwrap().1).collect();
    assert_eq!(holders, ["bench", IDS[4]].into_iter().collect());
}

#[test]
fn a_store_of_one_workspace_is_searched_whole_with_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("memory.db")).unwrap();
    store
        .write(|w| {
            for n in 0..20 {
                let body = if n % 3 == 0 { "the proxy drops the cache" } else { "cache eviction under pressure" };
                w.create("only", note(format!("note {n}"), body), Actor::Agent, Timestamp(1))?;
            }
            Ok(())
        })
        .unwrap();
    let whole = store.lexical_matches("proxy cache", 100, &Scope::All).unwrap();
    assert_eq!(whole.len(), 20);
    assert_eq!(store.lexical_matches("proxy cache", 100, &Scope::Workspace("only".into())).unwrap(), whole);
    assert!(store.lexical_matches("proxy cache", 100, &Scope::Workspace("another".into())).unwrap().is_empty());
}
