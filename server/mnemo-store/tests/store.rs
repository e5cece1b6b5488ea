//! The store against a real SQLite file in a temp dir — and, run by
//! `scripts/with-postgres`, against a real PostgreSQL (`backend`): the one
//! write path, append-only triggers, replay verification, migrations,
//! scoping, expiry and the importer. `f.file` is the SQLite file the
//! store reads (the store file, or this machine's replica).

mod backend;

use mnemo_core::expiry::ExpiryPolicy;
use mnemo_core::{Actor, EventData, EventKind, Kind, NewNote, Priority, Provenance, Status, Timestamp};
use mnemo_store::import_jsonl::import;
use mnemo_store::{Scope, Store, StoreError};

const DAY: i64 = 86_400;

struct Fixture {
    dir: tempfile::TempDir,
    path: std::path::PathBuf,
    /// The SQLite file the store reads: the store file, or this machine's replica.
    file: std::path::PathBuf,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("nested")).unwrap();
    let path = backend::store_location(dir.path(), "nested/memory.db");
    let store = Store::open(&path).unwrap();
    Fixture { file: store.path().to_path_buf(), dir, path, store }
}

fn note(kind: Kind, title: &str) -> NewNote {
    NewNote {
        kind,
        priority: Priority::Medium,
        title: title.into(),
        body: "body".into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors: vec![],
    }
}

fn ws(name: &str) -> Scope {
    Scope::Workspace(name.into())
}

fn revoke(reason: &str) -> EventData {
    EventData { kind: EventKind::Revoked, actor: Actor::Agent, at: Timestamp(50), reason: Some(reason.into()) }
}

fn raw(path: &std::path::Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

#[test]
fn writes_bump_the_epoch_once_per_transaction_and_ids_ascend() {
    let mut f = fixture();
    assert_eq!(f.store.epoch().unwrap(), 0);
    let (a, b) = f
        .store
        .write(|w| {
            Ok((
                w.create("/w", note(Kind::Gotcha, "a"), Actor::Agent, Timestamp(1))?,
                w.create("/w", note(Kind::Task, "b"), Actor::Agent, Timestamp(2))?,
            ))
        })
        .unwrap();
    assert!(b > a);
    assert_eq!(f.store.epoch().unwrap(), 1);
    f.store.write(|_| Ok(())).unwrap();
    assert_eq!(f.store.epoch().unwrap(), 1, "an empty write does not bump the epoch");
}

#[test]
fn commit_listeners_see_the_new_epoch() {
    let mut f = fixture();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    f.store.on_commit(move |epoch| sink.lock().unwrap().push(epoch));
    f.store.write(|w| w.create("/w", note(Kind::Gotcha, "a"), Actor::Agent, Timestamp(1))).unwrap();
    let _ = f.store.write(|w| w.append(&ws("/w"), 999, revoke("x")));
    f.store.write(|w| w.create("/w", note(Kind::Gotcha, "b"), Actor::Agent, Timestamp(1))).unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![1, 2], "failed writes notify nobody");
}

#[test]
fn raw_update_of_events_notes_and_anchors_fails() {
    let mut f = fixture();
    f.store.write(|w| w.create("/w", note(Kind::Gotcha, "a"), Actor::Agent, Timestamp(1))).unwrap();
    let conn = raw(&f.file);
    for sql in
        ["UPDATE events SET reason = 'x'", "UPDATE notes SET title = 'x'", "DELETE FROM events", "DELETE FROM notes"]
    {
        let err = conn.execute(sql, []).unwrap_err().to_string();
        assert!(err.contains("mnemo:"), "{sql}: {err}");
    }
    conn.execute("INSERT INTO anchors (note_id, position, path, start_line, end_line) VALUES (1, 0, 'a', 1, 1)", [])
        .unwrap();
    assert!(conn.execute("UPDATE anchors SET path = 'b'", []).is_err());
    assert!(conn.execute("DELETE FROM anchors", []).is_err());
}

#[test]
fn forget_removes_exactly_one_note_with_its_events() {
    let mut f = fixture();
    let ids: Vec<i64> = (0..3)
        .map(|i| {
            f.store
                .write(|w| w.create("/w", note(Kind::Finding, &format!("n{i}")), Actor::Agent, Timestamp(1)))
                .unwrap()
        })
        .collect();
    f.store.write(|w| w.append(&ws("/w"), ids[1], revoke("wrong"))).unwrap();
    f.store.write(|w| w.forget(&ws("/w"), ids[1])).unwrap();
    let conn = raw(&f.file);
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(count("SELECT count(*) FROM notes"), 2);
    assert_eq!(count("SELECT count(*) FROM events"), 2);
    assert_eq!(count(&format!("SELECT count(*) FROM events WHERE note_id = {}", ids[1])), 0);
    assert_eq!(count("SELECT count(*) FROM forget_permit"), 0);
    assert!(f.store.verify().unwrap().is_clean());
    let next = f.store.write(|w| w.create("/w", note(Kind::Finding, "n3"), Actor::Agent, Timestamp(1))).unwrap();
    assert!(next > ids[2], "ids are never reused");
}

#[test]
fn forgetting_a_successor_is_refused() {
    let mut f = fixture();
    let old = f.store.write(|w| w.create("/w", note(Kind::Finding, "old"), Actor::Agent, Timestamp(1))).unwrap();
    let new = f
        .store
        .write(|w| w.supersede(&ws("/w"), old, note(Kind::Finding, "new"), Actor::Agent, Timestamp(2), None))
        .unwrap();
    let err = f.store.write(|w| w.forget(&ws("/w"), new)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot forget #{new}: the history of #{old} points at it as the successor; forget those first")
    );
    f.store.write(|w| w.forget(&ws("/w"), old)).unwrap();
    f.store.write(|w| w.forget(&ws("/w"), new)).unwrap();
}

#[test]
fn verify_replays_the_log_and_names_notes_whose_cache_differs() {
    let mut f = fixture();
    let a = f.store.write(|w| w.create("/w", note(Kind::Gotcha, "a"), Actor::Agent, Timestamp(1))).unwrap();
    let b = f.store.write(|w| w.create("/w", note(Kind::Gotcha, "b"), Actor::Agent, Timestamp(1))).unwrap();
    f.store.write(|w| w.append(&ws("/w"), a, revoke("wrong"))).unwrap();
    let report = f.store.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!((report.notes_checked, report.events_replayed), (2, 3));
    raw(&f.file).execute("UPDATE note_state SET status = 'active' WHERE note_id = ?1", [a]).unwrap();
    raw(&f.file).execute("UPDATE note_state SET provenance = 'human' WHERE note_id = ?1", [b]).unwrap();
    let report = f.store.verify().unwrap();
    let ids: Vec<i64> = report.differences.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, vec![a, b]);
}

#[test]
fn illegal_transitions_change_nothing() {
    let mut f = fixture();
    let a = f.store.write(|w| w.create("/w", note(Kind::Gotcha, "a"), Actor::Agent, Timestamp(1))).unwrap();
    let epoch = f.store.epoch().unwrap();
    let reinstate = EventData { kind: EventKind::Reinstated, actor: Actor::Agent, at: Timestamp(2), reason: None };
    let err = f.store.write(|w| w.append(&ws("/w"), a, reinstate)).unwrap_err();
    assert!(err.is_rule_violation());
    assert_eq!(
        err.to_string(),
        format!(
            "note #{a}: cannot reinstate a note that is active; only a revoked, expired or stale note can be reinstated"
        )
    );
    f.store.write(|w| w.append(&ws("/w"), a, revoke("wrong"))).unwrap();
    let before = f.store.notes(&Scope::All).unwrap().len();
    let err = f
        .store
        .write(|w| w.supersede(&ws("/w"), a, note(Kind::Gotcha, "new"), Actor::Agent, Timestamp(3), None))
        .unwrap_err();
    assert!(err.to_string().contains("cannot supersede a note that is revoked"), "{err}");
    assert_eq!(f.store.notes(&Scope::All).unwrap().len(), before, "no orphan successor");
    assert_eq!(f.store.epoch().unwrap(), epoch + 1);
}

#[test]
fn a_failed_step_rolls_back_the_whole_transaction() {
    let mut f = fixture();
    let err = f.store.write(|w| {
        w.create("/w", note(Kind::Gotcha, "kept?"), Actor::Agent, Timestamp(1))?;
        w.create("/w", note(Kind::Gotcha, "  "), Actor::Agent, Timestamp(1))
    });
    assert!(matches!(err, Err(StoreError::Rule(_))));
    assert!(f.store.notes(&Scope::All).unwrap().is_empty());
    assert_eq!(f.store.epoch().unwrap(), 0);
}

#[test]
fn reads_and_writes_are_scoped_to_a_workspace() {
    let mut f = fixture();
    let mine = f.store.write(|w| w.create("/mine", note(Kind::Gotcha, "mine"), Actor::Agent, Timestamp(1))).unwrap();
    let theirs =
        f.store.write(|w| w.create("/theirs", note(Kind::Gotcha, "theirs"), Actor::Agent, Timestamp(1))).unwrap();
    let titles =
        |scope: &Scope| f.store.notes(scope).unwrap().into_iter().map(|v| v.note.content.title).collect::<Vec<_>>();
    assert_eq!(titles(&ws("/mine")), vec!["mine"]);
    assert_eq!(titles(&Scope::All), vec!["mine", "theirs"]);
    assert!(matches!(f.store.note(&ws("/mine"), theirs), Err(StoreError::OtherWorkspace { .. })));
    assert!(matches!(f.store.history(&ws("/mine"), theirs), Err(StoreError::OtherWorkspace { .. })));
    assert!(matches!(
        f.store.write(|w| w.append(&ws("/mine"), theirs, revoke("x"))),
        Err(StoreError::OtherWorkspace { .. })
    ));
    assert!(matches!(f.store.note(&ws("/mine"), 4242), Err(StoreError::NoSuchNote { .. })));
    assert_eq!(f.store.note(&ws("/mine"), mine).unwrap().note.content.title, "mine");
    assert_eq!(f.store.stats(&ws("/mine")).unwrap().notes, 1);
}

#[test]
fn due_notes_expire_with_a_system_event() {
    let mut f = fixture();
    let task = f.store.write(|w| w.create("/w", note(Kind::Task, "t"), Actor::Agent, Timestamp(0))).unwrap();
    let directive = f.store.write(|w| w.create("/w", note(Kind::Directive, "d"), Actor::Agent, Timestamp(0))).unwrap();
    let other = f.store.write(|w| w.create("/other", note(Kind::Task, "o"), Actor::Agent, Timestamp(0))).unwrap();
    let policy = ExpiryPolicy::default();
    assert!(f.store.write(|w| w.expire_due("/w", &policy, Timestamp(29 * DAY))).unwrap().is_empty());
    assert_eq!(f.store.write(|w| w.expire_due("/w", &policy, Timestamp(31 * DAY))).unwrap(), vec![task]);
    let history = f.store.history(&ws("/w"), task).unwrap();
    let last = &history.last().unwrap().data;
    assert_eq!((last.kind, last.actor), (EventKind::Expired, Actor::System));
    assert_eq!(f.store.note(&ws("/w"), directive).unwrap().state.status, Status::Active);
    assert_eq!(f.store.note(&Scope::All, other).unwrap().state.status, Status::Active, "other workspaces untouched");
}

#[test]
fn garbage_files_and_newer_schemas_are_refused_and_left_intact() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.db");
    let bytes = b"this is not a database, it is a shopping list\n".repeat(200);
    std::fs::write(&garbage, &bytes).unwrap();
    let err = Store::open(&garbage).err().unwrap();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err}");
    assert_eq!(std::fs::read(&garbage).unwrap(), bytes);

    let newer = dir.path().join("newer.db");
    drop(Store::open(&newer).unwrap());
    raw(&newer).pragma_update(None, "user_version", 99).unwrap();
    let err = Store::open(&newer).err().unwrap();
    assert_eq!(
        err.to_string(),
        format!(
            "{} has schema version 99, newer than this mnemo understands ({}); upgrade mnemo",
            newer.display(),
            mnemo_store::SCHEMA_VERSION
        )
    );

    let err = Store::open(dir.path()).err().unwrap();
    assert!(err.to_string().contains("it is a directory"), "{err}");
    let err = Store::open(std::path::Path::new("/proc/self/no/such/memory.db")).err().unwrap();
    assert!(err.to_string().starts_with("cannot open the store at /proc/self/no/such/memory.db"), "{err}");
}

#[test]
fn the_store_is_in_wal_mode() {
    let f = fixture();
    let mode: String = raw(&f.file).query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn importing_the_eval_corpus_reproduces_its_statuses() {
    let mut f = fixture();
    let corpus = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../eval/corpus.jsonl")).unwrap();
    let report = import(&mut f.store, corpus.as_bytes(), Actor::Human, Timestamp(1_800_000_000)).unwrap();
    assert_eq!(report.notes, 260);
    assert_eq!(f.store.epoch().unwrap(), 1, "one transaction");
    let by_source: std::collections::HashMap<i64, i64> = report.ids.iter().copied().collect();
    for line in corpus.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = by_source[&record["id"].as_i64().unwrap()];
        let view = f.store.note(&Scope::All, id).unwrap();
        assert_eq!(view.note.workspace, record["workspace"].as_str().unwrap());
        assert_eq!(view.state.status.name(), record["status"].as_str().unwrap(), "note {}", record["id"]);
        if let Some(successor) = record["superseded_by"].as_i64() {
            assert_eq!(view.state.status, Status::Superseded { by: by_source[&successor] });
        }
        assert_eq!(view.note.content.provenance.as_str(), record["provenance"].as_str().unwrap());
        assert_eq!(view.note.created_at.date(), record["created"].as_str().unwrap());
    }
    let stats = f.store.stats(&Scope::All).unwrap();
    assert_eq!(stats.by_status["active"], 203);
    assert_eq!(stats.by_status["superseded"], 26);
    assert_eq!(stats.workspaces, 2);
    assert!(f.store.verify().unwrap().is_clean());
}

#[test]
fn a_supersession_cycle_is_refused_at_import() {
    let mut f = fixture();
    let text = r#"{"id": 1, "kind": "task", "title": "a", "created": "2026-03-01", "workspace": "w", "status": "superseded", "superseded_by": 2}
{"id": 2, "kind": "task", "title": "b", "created": "2026-03-02", "workspace": "w", "status": "superseded", "superseded_by": 1}
"#;
    let err = import(&mut f.store, text.as_bytes(), Actor::Agent, Timestamp(1)).unwrap_err().to_string();
    assert!(err.starts_with("line 1: superseded_by forms a cycle through id 1"), "{err}");
    assert!(f.store.notes(&Scope::All).unwrap().is_empty());
}

#[test]
fn a_bad_import_line_imports_nothing() {
    let mut f = fixture();
    let good = r#"{"id": 1, "kind": "gotcha", "priority": "high", "title": "t", "body": "b", "created": "2026-03-01", "workspace": "w", "provenance": "agent", "status": "active"}"#;
    let cases = [
        (
            r#"{"id": 2, "kind": "gotchas", "title": "t", "created": "2026-03-01", "workspace": "w"}"#,
            "line 2: unknown kind 'gotchas'",
        ),
        (
            r#"{"id": 2, "kind": "task", "title": "t", "created": "2026-03-01", "workspace": "w", "status": "superseded", "superseded_by": 9}"#,
            "line 2: superseded_by 9 names no record",
        ),
        (
            r#"{"id": 2, "kind": "task", "title": "t", "created": "2026-03-01", "workspace": "w", "provenance": "human"}"#,
            "line 2: provenance 'human' is reached only by a person",
        ),
        (
            r#"{"id": 1, "kind": "task", "title": "t", "created": "2026-03-01", "workspace": "w"}"#,
            "line 2: id 1 appears twice",
        ),
        ("not json", "line 2: not a note record"),
    ];
    for (bad, expected) in cases {
        let text = format!("{good}\n{bad}\n");
        let err = import(&mut f.store, text.as_bytes(), Actor::Agent, Timestamp(1)).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{err}");
        assert!(f.store.notes(&Scope::All).unwrap().is_empty());
    }
}

#[test]
fn late_interaction_reorders_the_best_candidates_by_their_stored_token_signs() {
    use mnemo_core::recall::RecallRequest;
    use mnemo_core::recall::token_signs::{QueryTokens, pack_signs};
    use mnemo_store::NoteEmbedding;
    let mut f = fixture();
    // Token vectors of 8 dimensions: "one" points away from the query token, "two" along it, "three" has none.
    let tokens = [vec![vec![-1.0_f32; 8]], vec![vec![1.0_f32; 8]], vec![]];
    let ids: Vec<i64> = f
        .store
        .write(|w| {
            let mut ids = Vec::new();
            for (i, title) in ["cache lock one", "cache lock two", "cache lock three"].into_iter().enumerate() {
                let id = w.create("w", note(Kind::Finding, title), Actor::Agent, Timestamp(1))?;
                // Vectors that rank #1 first, then #2, then #3 for the query [1, 0].
                let x = 1.0 - 0.3 * i as f32;
                let embedding =
                    NoteEmbedding { chunks: vec![vec![x, (1.0 - x * x).sqrt()]], token_signs: pack_signs(&tokens[i]) };
                w.put_vectors(id, "w", &embedding, "test-model")?;
                ids.push(id);
            }
            w.create("other", note(Kind::Finding, "cache lock elsewhere"), Actor::Agent, Timestamp(1))?;
            Ok(ids)
        })
        .unwrap();
    let request = RecallRequest::new("w", 10);
    let first = f.store.recall("cache lock", Some(&[1.0, 0.0]), &request, 50).unwrap();
    let order =
        |outcome: &mnemo_store::recall::RecallOutcome| outcome.answer.results.iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!((order(&first), first.reranked), (ids.clone(), 0));

    let query = QueryTokens::new(&[vec![8.0_f32.sqrt().recip(); 8]], 8);
    let rerank = |depth: usize, request: &RecallRequest| {
        f.store.recall_reranked("cache lock", Some(&[1.0, 0.0]), request, 50, depth, Some(&query)).unwrap()
    };
    let best_two = rerank(2, &request);
    assert_eq!((order(&best_two), best_two.reranked), (vec![ids[1], ids[0], ids[2]], 2));
    let all = rerank(3, &request);
    assert_eq!(
        (order(&all), all.reranked),
        (vec![ids[1], ids[0], ids[2]], 2),
        "a note without token signs is not scored"
    );
    assert_eq!(all.answer.abstention, None);

    let mut lexical = request.clone();
    lexical.mode = mnemo_core::recall::RankingMode::LexicalOnly;
    assert_eq!(rerank(3, &lexical).reranked, 0, "only a hybrid ranking is reranked");
    let none = f.store.recall_reranked("cache lock", Some(&[1.0, 0.0]), &request, 50, 3, None).unwrap();
    assert_eq!((order(&none), none.reranked), (ids.clone(), 0), "without the query's tokens the first stage stands");

    // Forgetting a note deletes its token signs with its vectors; a reindex clears them all.
    f.store.write(|w| w.clear_vectors()).unwrap();
    assert!(f.store.token_signs(&ids).unwrap().is_empty());
}

#[test]
fn what_other_workspaces_hold_is_counted_when_it_ranks_among_the_results_after_reranking() {
    use mnemo_core::recall::RecallRequest;
    use mnemo_core::recall::token_signs::{QueryTokens, pack_signs};
    use mnemo_store::NoteEmbedding;
    let mut f = fixture();
    // 8 dimensions; the query is [1, 1, 1, 0, …]. Each note: (workspace, vector).
    let unit = |v: [f32; 8]| {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.map(|x| x / norm).to_vec()
    };
    let notes = [
        ("w", unit([1.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])),
        ("w", unit([0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])),
        ("other", unit([1.0, 1.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0])),
        ("other", unit([-1.0; 8])),
    ];
    let ids: Vec<i64> = f
        .store
        .write(|w| {
            let mut ids = Vec::new();
            for (i, (workspace, vector)) in notes.iter().enumerate() {
                let id = w.create(workspace, note(Kind::Finding, &format!("note {i}")), Actor::Agent, Timestamp(1))?;
                let embedding = NoteEmbedding {
                    chunks: vec![vector.clone()],
                    token_signs: pack_signs(std::slice::from_ref(vector)),
                };
                w.put_vectors(id, workspace, &embedding, "test-model")?;
                ids.push(id);
            }
            Ok(ids)
        })
        .unwrap();
    let query = unit([1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let request = RecallRequest::new("w", 10);
    let tokens = QueryTokens::new(std::slice::from_ref(&query), 8);
    let outcome = f.store.recall_reranked("zzz", Some(&query), &request, 50, 200, Some(&tokens)).unwrap();
    assert!(outcome.answer.results.iter().all(|r| r.id == ids[0] || r.id == ids[1]), "{:?}", outcome.answer);
    // Counted: the other workspace's note that ranks within the results (not the one pointing away).
    assert_eq!(outcome.answer.hidden.get("other workspace"), Some(&1), "{:?}", outcome.answer.hidden);
}

#[test]
fn anchored_notes_are_the_workspaces_notes_with_an_anchor_and_nothing_else() {
    let mut f = fixture();
    let anchored = |title: &str, path: &str| NewNote {
        anchors: vec![mnemo_core::Anchor { path: path.into(), start_line: 1, end_line: 2, content_sha256: None }],
        ..note(Kind::Gotcha, title)
    };
    let (ours, _theirs) = f
        .store
        .write(|w| {
            w.create("/w", note(Kind::Finding, "plain"), Actor::Agent, Timestamp(1))?;
            let ours = w.create("/w", anchored("ours", "src/a.rs"), Actor::Agent, Timestamp(2))?;
            w.create("/w", note(Kind::Finding, "plain too"), Actor::Agent, Timestamp(3))?;
            let theirs = w.create("/other", anchored("theirs", "src/b.rs"), Actor::Agent, Timestamp(4))?;
            Ok((ours, theirs))
        })
        .unwrap();
    let found = f.store.anchored_notes(&ws("/w")).unwrap();
    assert_eq!(found.iter().map(|v| v.note.id).collect::<Vec<_>>(), vec![ours]);
    assert_eq!(found[0].note.content.anchors[0].path, "src/a.rs");
    let all = f.store.notes(&ws("/w")).unwrap();
    let from_all = all.iter().find(|v| v.note.id == ours).unwrap();
    assert_eq!(from_all, &found[0], "the same view as the full listing gives");
    assert_eq!(f.store.anchored_notes(&Scope::All).unwrap().len(), 2);
}

#[test]
fn a_proposal_waits_and_on_acceptance_does_what_it_said_to_the_older_note() {
    use mnemo_core::review::ProposedLink;
    let mut f = fixture();
    let scope = ws("w");
    let (old, wrong, proposal, correction) = f
        .store
        .write(|w| {
            let old = w.create("w", note(Kind::Finding, "Cache hit ratio is 0.91"), Actor::Agent, Timestamp(10))?;
            let wrong = w.create("w", note(Kind::Finding, "Retries stop at 5"), Actor::Agent, Timestamp(10))?;
            let proposal = w.propose(
                &scope,
                "w",
                note(Kind::Finding, "Cache hit ratio is 0.93"),
                Actor::Agent,
                Timestamp(20),
                Some(ProposedLink::Supersedes(old)),
            )?;
            let correction = w.propose(
                &scope,
                "w",
                note(Kind::Finding, "Retries stop at 3"),
                Actor::Agent,
                Timestamp(20),
                Some(ProposedLink::Contradicts(wrong)),
            )?;
            Ok((old, wrong, proposal, correction))
        })
        .unwrap();
    let status = |store: &Store, id| store.note(&scope, id).unwrap().state.status;
    assert_eq!(status(&f.store, proposal), Status::Proposed);
    assert_eq!(status(&f.store, old), Status::Active, "the older note stands until a person accepts");
    assert_eq!(status(&f.store, wrong), Status::Active);

    let accept = || EventData { kind: EventKind::Accepted, actor: Actor::Human, at: Timestamp(30), reason: None };
    let agent_accept = EventData { actor: Actor::Agent, ..accept() };
    assert!(f.store.write(|w| w.append(&scope, proposal, agent_accept)).is_err(), "only a person accepts");
    let state = f.store.write(|w| w.append(&scope, proposal, accept())).unwrap();
    assert_eq!((state.status, state.provenance), (Status::Active, Provenance::Human));
    assert_eq!(status(&f.store, old), Status::Superseded { by: proposal });
    f.store.write(|w| w.append(&scope, correction, accept())).unwrap();
    let revoked = f.store.note(&scope, wrong).unwrap().state;
    assert_eq!(
        (revoked.status, revoked.status_reason.as_deref()),
        (Status::Revoked, Some(format!("contradicted by #{correction}").as_str()))
    );
    let rejected = f
        .store
        .write(|w| {
            let id = w.propose(&scope, "w", note(Kind::Gotcha, "Noise"), Actor::Agent, Timestamp(40), None)?;
            let reason = Some("not true".into());
            w.append(
                &scope,
                id,
                EventData { kind: EventKind::Revoked, actor: Actor::Human, at: Timestamp(41), reason },
            )?;
            Ok(id)
        })
        .unwrap();
    assert_eq!(status(&f.store, rejected), Status::Revoked);
    assert!(f.store.verify().unwrap().is_clean(), "the log replays to every state");
}

#[test]
fn the_review_migration_keeps_every_event_and_never_reuses_a_forgotten_events_id() {
    let mut f = fixture();
    // Events as the versions before people were recorded wrote them.
    f.store.write_as(None);
    let scope = ws("w");
    let (kept, forgotten) = f
        .store
        .write(|w| {
            let kept = w.create("w", note(Kind::Finding, "kept"), Actor::Agent, Timestamp(1))?;
            let forgotten = w.create("w", note(Kind::Finding, "forgotten"), Actor::Agent, Timestamp(2))?;
            Ok((kept, forgotten))
        })
        .unwrap();
    let last_event = f.store.history(&scope, forgotten).unwrap().last().unwrap().id;
    f.store.write(|w| w.forget(&scope, forgotten)).unwrap();
    drop(f.store);
    // Back to the schema before the review queue: the old CHECK, as shipped.
    let conn = rusqlite::Connection::open(&f.file).unwrap();
    let old_sql: String =
        conn.query_row("SELECT sql FROM sqlite_master WHERE name = 'events'", [], |r| r.get(0)).unwrap();
    assert!(old_sql.contains("'accepted'"), "migrated on open: {old_sql}");
    // Undo the migrations after the review's: the workspaces' note counts, the checkout bases' marks,
    // what the mirror held, the workspace column of the full-text index,
    // the vector changes, compact checkout bases, people, workspace ids, the
    // ledger; then the review's.
    conn.execute_batch(&format!(
        "DROP TRIGGER workspace_note_counts_insert; DROP TRIGGER workspace_note_counts_delete;
         DROP TABLE workspace_note_counts;
         DROP TRIGGER checkout_made_insert; DROP TRIGGER checkout_made_update; DROP TRIGGER checkout_made_delete;
         DROP TABLE checkout_made;
         ALTER TABLE mirror_exports DROP COLUMN content; ALTER TABLE mirror_exports DROP COLUMN marks;
         DROP TRIGGER notes_fts_insert; DROP TRIGGER notes_fts_delete; DROP TABLE notes_fts; DROP VIEW notes_fts_source;
         CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, content = 'notes', content_rowid = 'id', tokenize = 'porter unicode61');
         INSERT INTO notes_fts (notes_fts) VALUES ('rebuild');
         CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes
         BEGIN INSERT INTO notes_fts (rowid, title, body) VALUES (new.id, new.title, new.body); END;
         CREATE TRIGGER notes_fts_delete AFTER DELETE ON notes
         BEGIN INSERT INTO notes_fts (notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body); END;
         DROP TABLE vector_changes;
         ALTER TABLE checkouts DROP COLUMN key_epoch; ALTER TABLE checkouts DROP COLUMN delta;
         ALTER TABLE events DROP COLUMN person; ALTER TABLE events DROP COLUMN machine;
         DROP TABLE workspace_roots; DROP TABLE workspace_moves; DROP TABLE workspace_aliases;
         DROP TABLE delivered_notes; DROP TABLE deliveries; DELETE FROM sqlite_sequence WHERE name = 'deliveries';
         PRAGMA writable_schema = ON;
         UPDATE sqlite_master SET sql = replace(sql, ',''proposed'',''accepted''', '') WHERE name = 'events';
         PRAGMA writable_schema = OFF;
         PRAGMA user_version = {};",
        mnemo_store::SCHEMA_VERSION - 10
    ))
    .unwrap();
    drop(conn);
    let store = Store::open(&f.path).unwrap();
    let conn = rusqlite::Connection::open(&f.file).unwrap();
    let new_sql: String =
        conn.query_row("SELECT sql FROM sqlite_master WHERE name = 'events'", [], |r| r.get(0)).unwrap();
    assert!(new_sql.contains("'proposed','accepted'"), "the migration ran again: {new_sql}");
    drop(conn);
    assert_eq!(store.history(&scope, kept).unwrap().len(), 1, "every event kept");
    let mut store = store;
    let next = store.write(|w| w.create("w", note(Kind::Finding, "next"), Actor::Agent, Timestamp(3))).unwrap();
    let next_event = store.history(&scope, next).unwrap()[0].id;
    assert!(next_event > last_event, "event ids go on from the forgotten one: {next_event} > {last_event}");
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn the_ledger_records_deliveries_per_workspace_append_only_bounded_and_forgets_with_the_note() {
    use mnemo_store::ledger::{Delivery, KEPT_PER_WORKSPACE, LedgerFilter, Shown};
    let mut f = fixture();
    let (a, b, theirs) = f
        .store
        .write(|w| {
            let a = w.create("w", note(Kind::Gotcha, "a"), Actor::Agent, Timestamp(1))?;
            let b = w.create("w", note(Kind::Finding, "b"), Actor::Agent, Timestamp(1))?;
            let theirs = w.create("other", note(Kind::Finding, "theirs"), Actor::Agent, Timestamp(1))?;
            Ok((a, b, theirs))
        })
        .unwrap();
    let epoch = f.store.epoch().unwrap();
    let delivery = |workspace: &str, session: &str, at, notes| Delivery {
        workspace: workspace.into(),
        session: session.into(),
        moment: "session-start".into(),
        at: Timestamp(at),
        notes,
        bytes: 100,
    };
    f.store
        .write(|w| {
            w.record_delivery(&delivery("w", "s1", 10, vec![(a, Shown::Full), (b, Shown::Listed)]))?;
            w.record_delivery(&delivery("w", "s2", 20, vec![(a, Shown::Full)]))?;
            w.record_delivery(&delivery("w", "s2", 30, vec![]))?;
            w.record_delivery(&delivery("other", "s3", 30, vec![(theirs, Shown::Full)]))
        })
        .unwrap();
    assert_eq!(f.store.epoch().unwrap(), epoch, "a delivery is not a note write: no epoch");
    let all = f.store.ledger(&ws("w"), &LedgerFilter::default()).unwrap();
    assert_eq!(
        all.iter().map(|d| (d.session.as_str(), d.full.clone(), d.listed.clone())).collect::<Vec<_>>(),
        [("s2", vec![a], vec![]), ("s1", vec![a], vec![b])]
    );
    let since = LedgerFilter { since: Some(Timestamp(15)), ..LedgerFilter::default() };
    assert_eq!(f.store.ledger(&ws("w"), &since).unwrap().len(), 1);
    let session = LedgerFilter { session: Some("s1".into()), ..LedgerFilter::default() };
    assert_eq!(f.store.ledger(&ws("w"), &session).unwrap().len(), 1);
    let (count, latest) = f.store.deliveries_of(&ws("w"), a).unwrap();
    assert_eq!((count, latest.unwrap().session), (2, "s2".to_string()));

    let conn = rusqlite::Connection::open(&f.file).unwrap();
    let update = conn.execute("UPDATE deliveries SET session = 'x'", []);
    assert!(update.unwrap_err().to_string().contains("append-only"));
    drop(conn);

    f.store.write(|w| w.forget(&ws("w"), b)).unwrap();
    let first = f.store.ledger(&ws("w"), &session).unwrap();
    assert_eq!(first[0].listed, Vec::<i64>::new(), "a forgotten note leaves the ledger with it");

    // Bounded: past the cap, the oldest deliveries go.
    f.store
        .write(|w| {
            for i in 0..KEPT_PER_WORKSPACE + 200 {
                w.record_delivery(&delivery("w", "bulk", 100 + i, vec![(a, Shown::Listed)]))?;
            }
            Ok(())
        })
        .unwrap();
    let kept = f.store.ledger(&ws("w"), &LedgerFilter::default()).unwrap();
    assert!(kept.len() as i64 <= KEPT_PER_WORKSPACE + 64, "{}", kept.len());
    assert!(kept.iter().all(|d| d.session == "bulk"), "the oldest went first");
    assert_eq!(f.store.ledger(&ws("other"), &LedgerFilter::default()).unwrap().len(), 1, "other workspaces untouched");
}

#[test]
fn a_path_keyed_workspace_moves_to_its_repositorys_id_with_vectors_ledger_and_history() {
    use mnemo_store::NoteEmbedding;
    use mnemo_store::ledger::{Delivery, LedgerFilter, Shown};
    use mnemo_store::workspace::{IdSource, Workspace};
    let mut f = fixture();
    let root = f.dir.path().join("nested").canonicalize().unwrap();
    let path_id = root.to_str().unwrap().to_string();
    let vector = vec![0.6f32, 0.8];
    let (kept, other) = f
        .store
        .write(|w| {
            let kept = w.create(&path_id, note(Kind::Gotcha, "kept"), Actor::Agent, Timestamp(1))?;
            let other = w.create("elsewhere", note(Kind::Gotcha, "other"), Actor::Agent, Timestamp(1))?;
            for (id, workspace) in [(kept, path_id.as_str()), (other, "elsewhere")] {
                let embedding = NoteEmbedding { chunks: vec![vector.clone()], token_signs: Vec::new() };
                w.put_vectors(id, workspace, &embedding, "test-model")?;
            }
            w.record_delivery(&Delivery {
                workspace: path_id.clone(),
                session: "s".into(),
                moment: "session-start".into(),
                at: Timestamp(2),
                bytes: 10,
                notes: vec![(kept, Shown::Full)],
            })?;
            Ok((kept, other))
        })
        .unwrap();
    let claimed = Workspace {
        id: "git:example.org/app".into(),
        root: Some(root.clone()),
        source: IdSource::Origin,
        origin: Some("example.org/app".into()),
    };
    let epoch = f.store.epoch().unwrap();
    let admitted = f.store.admit(claimed.clone(), Timestamp(3), false).unwrap();
    assert_eq!(admitted.id, "git:example.org/app");
    assert!(f.store.epoch().unwrap() > epoch, "readers see the move");
    let moved = ws("git:example.org/app");
    assert_eq!(f.store.notes(&moved).unwrap().iter().map(|v| v.note.id).collect::<Vec<_>>(), [kept]);
    assert_eq!(f.store.note(&moved, kept).unwrap().note.workspace, "git:example.org/app");
    assert!(f.store.notes(&ws(&path_id)).unwrap().is_empty());
    assert_eq!(f.store.nearest(&vector, 5, &moved).unwrap().iter().map(|n| n.0).collect::<Vec<_>>(), [kept]);
    assert_eq!(f.store.nearest(&vector, 5, &ws("elsewhere")).unwrap().iter().map(|n| n.0).collect::<Vec<_>>(), [other]);
    assert_eq!(f.store.ledger(&moved, &LedgerFilter::default()).unwrap().len(), 1, "the ledger moved");
    assert_eq!(f.store.lexical_matches("kept", 5, &moved).unwrap().len(), 1);
    assert!(f.store.verify().unwrap().is_clean(), "a move rewrites no event and no note");
    // An old id is followed; admitting again moves nothing more.
    assert_eq!(f.store.follow(&path_id).unwrap(), "git:example.org/app");
    let epoch = f.store.epoch().unwrap();
    assert_eq!(f.store.admit(claimed, Timestamp(4), false).unwrap().id, "git:example.org/app");
    assert_eq!(f.store.epoch().unwrap(), epoch, "nothing written the second time");
    // The move itself is append-only.
    drop(f.store);
    let conn = rusqlite::Connection::open(&f.file).unwrap();
    let refused = conn.execute("DELETE FROM workspace_moves", []).unwrap_err().to_string();
    assert!(refused.contains("workspace moves are append-only"), "{refused}");
}

#[test]
fn every_event_records_the_person_and_machine_and_the_chain_covers_them() {
    use mnemo_store::person::Person;
    let mut f = fixture();
    f.store.write_as(Some(Person { name: "alice".into(), machine: "laptop".into() }));
    let id = f.store.write(|w| w.create("w", note(Kind::Gotcha, "a"), Actor::Agent, Timestamp(1))).unwrap();
    f.store.write_as(Some(Person { name: "bob".into(), machine: "ci".into() }));
    f.store
        .write(|w| {
            let event = EventData {
                kind: EventKind::Revoked,
                actor: Actor::Human,
                at: Timestamp(2),
                reason: Some("no".into()),
            };
            w.append(&ws("w"), id, event)
        })
        .unwrap();
    let history = f.store.history(&ws("w"), id).unwrap();
    let who: Vec<String> = history.iter().map(|e| e.by.as_ref().unwrap().describe()).collect();
    assert_eq!(who, ["alice@laptop", "bob@ci"]);
    assert!(f.store.verify().unwrap().is_clean());
    // Rewriting who did it, under the triggers' nose, breaks the chain.
    drop(f.store);
    let conn = rusqlite::Connection::open(&f.file).unwrap();
    conn.execute_batch(
        "DROP TRIGGER events_are_append_only; UPDATE events SET person = 'mallory' WHERE person = 'bob';",
    )
    .unwrap();
    drop(conn);
    let report = Store::open(&f.path).unwrap().verify().unwrap();
    assert!(
        report.problems.iter().any(|(what, why)| what == "event 2" && why.contains("hash link does not match")),
        "{report:?}"
    );
}

#[test]
fn the_store_under_test_is_the_one_asked_for() {
    let f = fixture();
    assert_eq!(f.store.is_shared(), backend::on_postgres(), "{}", f.store.location());
}

/// Two machines on one PostgreSQL store (two replicas): each sees the
/// other's writes, a write is checked against the team's state, not a stale
/// replica's, and concurrent writers from both lose nothing.
#[test]
fn two_machines_share_one_postgres_store_and_their_writes_are_ordered() {
    if !backend::on_postgres() {
        return;
    }
    let f = fixture();
    let url = f.path.to_str().unwrap().to_string();
    let replica = |name: &str| f.dir.path().join(format!("{name}.db"));
    let mut a = mnemo_store::postgres::open_with_replica(&url, &replica("a")).unwrap();
    let mut b = mnemo_store::postgres::open_with_replica(&url, &replica("b")).unwrap();
    let scope = ws("w");
    let id = a.write(|w| w.create("w", note(Kind::Gotcha, "from a"), Actor::Agent, Timestamp(10))).unwrap();
    assert!(b.notes(&scope).unwrap().is_empty(), "b has not pulled yet");
    assert!(b.pull().unwrap());
    assert_eq!(b.notes(&scope).unwrap()[0].note.content.title, "from a");
    // b revokes; a (not pulled) tries to revoke too: its write pulls first and is refused by the rules.
    b.write(|w| w.append(&scope, id, revoke("wrong"))).unwrap();
    let err = a.write(|w| w.append(&scope, id, revoke("also wrong"))).unwrap_err();
    assert!(matches!(err, StoreError::Transition { .. }), "{err:?}");
    assert_eq!(a.history(&scope, id).unwrap().len(), 2, "a's refused write pulled b's event first");

    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (url, path) = (url.clone(), replica(if t % 2 == 0 { "a" } else { "b" }));
            std::thread::spawn(move || {
                let mut store = mnemo_store::postgres::open_with_replica(&url, &path).unwrap();
                (0..15)
                    .map(|n| {
                        let title = format!("writer {t} note {n}");
                        store
                            .write(|w| w.create("w", note(Kind::Finding, &title), Actor::Agent, Timestamp(20)))
                            .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<_> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 90, "every write has its own id");
    for store in [&mut a, &mut b] {
        store.pull().unwrap();
        assert_eq!(store.notes(&scope).unwrap().len(), 91);
        assert!(store.verify().unwrap().is_clean());
    }
    let mut database = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let report = mnemo_store::postgres::verify(&mut database).unwrap();
    assert!(report.is_clean(), "{report:?}");
}

/// A database made again under the same URL is another store: this
/// machine's replica of the old one is thrown away, never mixed in.
#[test]
fn a_replica_of_another_database_under_the_same_url_is_not_mixed_in() {
    if !backend::on_postgres() {
        return;
    }
    let mut f = fixture();
    f.store.write(|w| w.create("w", note(Kind::Gotcha, "in the old database"), Actor::Agent, Timestamp(1))).unwrap();
    drop(f.store);
    let url = f.path.to_str().unwrap().to_string();
    let (server, name) = url
        .split_once('?')
        .map(|(base, query)| {
            let name = base.rsplit('/').next().unwrap().to_string();
            (format!("{}/postgres?{query}", base.rsplit_once('/').unwrap().0), name)
        })
        .unwrap();
    let mut admin = postgres::Client::connect(&server, postgres::NoTls).unwrap();
    admin.batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)")).unwrap();
    admin.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let mut store = Store::open(&f.path).unwrap();
    assert!(store.notes(&ws("w")).unwrap().is_empty(), "the old replica's note is gone");
    let id = store.write(|w| w.create("w", note(Kind::Gotcha, "new"), Actor::Agent, Timestamp(2))).unwrap();
    assert_eq!(id, 1, "ids are the new database's");
    assert!(store.verify().unwrap().is_clean());
}

/// A long-lived process whose connection the server dropped (a restart, a
/// network cut) searches and writes again on a new one, losing nothing.
#[test]
fn a_lost_connection_to_the_database_is_made_again() {
    if !backend::on_postgres() {
        return;
    }
    let mut f = fixture();
    let drop_connections = |url: &str| {
        let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
        admin
            .batch_execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
            )
            .unwrap();
    };
    let url = f.path.to_str().unwrap().to_string();
    f.store.write(|w| w.create("w", note(Kind::Gotcha, "lock release order"), Actor::Agent, Timestamp(1))).unwrap();
    drop_connections(&url);
    assert_eq!(f.store.lexical_matches("lock", 5, &ws("w")).unwrap().len(), 1, "a search connects again");
    drop_connections(&url);
    let id = f.store.write(|w| w.create("w", note(Kind::Task, "after the cut"), Actor::Agent, Timestamp(2))).unwrap();
    assert_eq!(id, 2, "a write connects again");
    assert_eq!(f.store.lexical_matches("cut", 5, &ws("w")).unwrap().len(), 1);
}

#[test]
fn writers_take_turns_on_a_file_beside_the_store_and_wait_in_the_kernel() {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::mpsc;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let (mut first, mut second) = (Store::open(&path).unwrap(), Store::open(&path).unwrap());
    let turns = dir.path().join("memory.db-writers");
    let (inside, entered) = mpsc::channel();
    let (go, release) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        first
            .write(|w| {
                let id = w.create("w", note(Kind::Finding, "first"), Actor::Agent, Timestamp(1))?;
                inside.send(()).unwrap();
                release.recv().unwrap();
                Ok(id)
            })
            .unwrap()
    });
    entered.recv().unwrap();
    // The turn is held for the whole write: no one else can take it.
    let probe = std::fs::OpenOptions::new().read(true).write(true).open(&turns).unwrap();
    assert!(matches!(probe.try_lock(), Err(std::fs::TryLockError::WouldBlock)), "the writer holds its turn");
    assert_eq!(std::fs::metadata(&turns).unwrap().permissions().mode() & 0o777, 0o600);
    let (done, finished) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let id = second.write(|w| w.create("w", note(Kind::Finding, "second"), Actor::Agent, Timestamp(2))).unwrap();
        done.send(()).unwrap();
        id
    });
    assert!(finished.recv_timeout(Duration::from_millis(300)).is_err(), "the second writer waits its turn");
    go.send(()).unwrap();
    let (a, b) = (holder.join().unwrap(), waiter.join().unwrap());
    assert!(b > a, "the second note is written after the first: #{a} then #{b}");
    probe.try_lock().expect("every turn is given back after its write");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.stats(&Scope::All).unwrap().notes, 2);
}

#[test]
fn a_link_in_place_of_the_turn_file_is_not_followed_and_writes_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let elsewhere = dir.path().join("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, dir.path().join("memory.db-writers")).unwrap();
    let mut store = Store::open(&path).unwrap();
    store.write(|w| w.create("w", note(Kind::Finding, "written"), Actor::Agent, Timestamp(1))).unwrap();
    assert!(!elsewhere.exists(), "the link's target was not created");
    assert_eq!(store.stats(&Scope::All).unwrap().notes, 1);
}

#[test]
fn a_workspace_is_ranked_by_text_with_its_own_word_counts_in_a_shared_store() {
    // "alpha" is in three of the workspace's four notes and nowhere else;
    // "beta" in its fourth and in twenty notes of another workspace. Counted
    // in the workspace, "beta" is the rare word and its note comes first;
    // counted over the store, "alpha" would be, and "beta" the common one.
    let mut f = fixture();
    let beta = f
        .store
        .write(|w| {
            for n in 0..3 {
                w.create("mine", note(Kind::Finding, &format!("alpha {n}")), Actor::Agent, Timestamp(1))?;
            }
            for n in 0..20 {
                w.create("theirs", note(Kind::Finding, &format!("beta {n}")), Actor::Agent, Timestamp(1))?;
            }
            w.create("mine", note(Kind::Finding, "beta"), Actor::Agent, Timestamp(1))
        })
        .unwrap();
    let found = f.store.lexical_matches("alpha beta", 10, &ws("mine")).unwrap();
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(found[0].0, beta, "{found:?}");
    assert!(found[0].1 > found[1].1, "{found:?}");
    let everywhere = f.store.lexical_matches("alpha beta", 30, &Scope::All).unwrap();
    assert_ne!(everywhere[0].0, beta, "over the whole store, alpha is the rare word: {everywhere:?}");
}
