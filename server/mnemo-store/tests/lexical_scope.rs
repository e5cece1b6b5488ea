//! A full-text search of one workspace is narrowed inside FTS5 by the
//! index's `ws` column: it finds that workspace's notes and only them, for
//! any workspace id
//! (one the porter stemmer would change if it were a word, one past ASCII,
//! one that is a prefix of another), after a note is forgotten, and after a
//! workspace moved into another (its notes are then the other's; its own
//! id holds none, and a search of it finds nothing rather than failing).
//! Its scores count a word's documents in the workspace: a workspace ranks
//! as it would alone, and a search of the whole store scores as FTS5's
//! `bm25()` does, to the bit.

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
fn a_search_of_one_workspace_finds_its_notes_and_only_them() {
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
        let expected: std::collections::BTreeSet<NoteId> =
            owner.iter().filter(|(_, w)| *w == id).map(|(n, _)| *n).collect();
        assert_eq!(found.iter().map(|(n, _)| *n).collect::<std::collections::BTreeSet<_>>(), expected, "{id:?}");
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

/// FTS5's own ranking of `query` over the whole index, as the store asks it.
fn fts5_bm25(store: &Store, query: &str) -> Vec<(NoteId, f64)> {
    let raw = rusqlite::Connection::open(store.path()).unwrap();
    let expression = format!("{{title body}} : ({})", mnemo_store::match_expression(query).unwrap());
    let mut stmt = raw
        .prepare(
            "SELECT f.rowid, -bm25(notes_fts, 2.0, 1.0, 0.0) AS score FROM notes_fts f
             WHERE notes_fts MATCH ?1 ORDER BY score DESC, f.rowid",
        )
        .unwrap();
    stmt.query_map([expression], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

const BODIES: [&str; 5] = [
    "the proxy drops the cache when the proxy restarts",
    "cache eviction under memory pressure",
    "a proxy in front of the build cache cache cache",
    "nothing about it here at all, only a longer body of words to stretch the average length",
    "Proxy",
];

#[test]
fn a_search_of_the_whole_store_scores_as_fts5_bm25_to_the_bit() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("memory.db")).unwrap();
    store
        .write(|w| {
            for n in 0..40 {
                let title = if n % 7 == 0 { format!("proxy cache {n}") } else { format!("note {n}") };
                w.create(IDS[n % 3], note(title, BODIES[n % BODIES.len()]), Actor::Agent, Timestamp(1))?;
            }
            Ok(())
        })
        .unwrap();
    // A pasted log: thousands of words, two of them in the notes.
    let log: String = (0..3000).map(|n| format!("word{n} ")).collect::<String>() + "proxy eviction";
    for query in ["proxy cache", "cache", "eviction pressure proxy", "average", "absent words", &log] {
        let ours = store.lexical_matches(query, 100, &Scope::All).unwrap();
        assert_eq!(ours, fts5_bm25(&store, query), "{query:?}");
        let top = store.lexical_matches(query, 3, &Scope::All).unwrap();
        assert_eq!(top, ours[..ours.len().min(3)], "{query:?}");
    }
}

#[test]
fn a_workspace_ranks_inside_a_shared_store_as_it_would_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut alone = Store::open(&dir.path().join("alone.db")).unwrap();
    let mut shared = Store::open(&dir.path().join("shared.db")).unwrap();
    // The shared store holds the workspace and three copies of it under
    // other ids (the same lengths, so the same average), written in turn.
    let notes = |store: &mut Store, workspaces: &[&str]| {
        store
            .write(|w| {
                for n in 0..30 {
                    for workspace in workspaces {
                        let title = if n % 5 == 0 { format!("proxy cache {n}") } else { format!("note {n}") };
                        w.create(workspace, note(title, BODIES[n % BODIES.len()]), Actor::Agent, Timestamp(1))?;
                    }
                }
                Ok(())
            })
            .unwrap()
    };
    notes(&mut alone, &["mine"]);
    notes(&mut shared, &["mine", "theirs", "a.e", "Ünïcode ☃"]);
    let mine = Scope::Workspace("mine".into());
    for query in ["proxy cache", "cache", "eviction pressure proxy", "average"] {
        let by_alone: Vec<f64> = alone.lexical_matches(query, 10, &mine).unwrap().iter().map(|(_, s)| *s).collect();
        let by_shared: Vec<f64> = shared.lexical_matches(query, 10, &mine).unwrap().iter().map(|(_, s)| *s).collect();
        assert!(!by_alone.is_empty(), "{query:?}");
        assert_eq!(by_shared, by_alone, "{query:?}");
    }
    // A note forgotten: the workspace's count (kept by triggers,
    // `workspace_note_counts`) follows, and `store verify` holds it to the notes.
    let gone = shared.lexical_matches("note 7", 1, &mine).unwrap()[0].0;
    shared.write(|w| w.forget(&mine, gone)).unwrap();
    let raw = rusqlite::Connection::open(dir.path().join("shared.db")).unwrap();
    let counted: i64 =
        raw.query_row("SELECT notes FROM workspace_note_counts WHERE workspace = 'mine'", [], |r| r.get(0)).unwrap();
    assert_eq!(counted, 29);
    assert!(shared.verify().unwrap().is_clean());
    // A count that drifted from the notes, or a trigger gone, is reported.
    raw.execute("UPDATE workspace_note_counts SET notes = notes + 1 WHERE workspace = 'mine'", []).unwrap();
    raw.execute_batch("DROP TRIGGER workspace_note_counts_insert").unwrap();
    let problems = shared.verify().unwrap().problems;
    assert!(
        problems.iter().any(|(what, why)| what == "workspace mine" && why.contains("holding 30 notes but holds 29")),
        "{problems:?}"
    );
    assert!(problems.iter().any(|(what, _)| what == "trigger workspace_note_counts_insert"), "{problems:?}");
    raw.execute_batch("DROP TRIGGER workspace_note_counts_delete; DROP TABLE workspace_note_counts").unwrap();
    let problems = shared.verify().unwrap().problems;
    assert!(problems.iter().any(|(what, _)| what == "table workspace_note_counts"), "{problems:?}");
}
