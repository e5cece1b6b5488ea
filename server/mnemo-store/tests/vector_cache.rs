//! A process that keeps a compact copy of the vectors
//! (`vector_cache::keep_vectors`, as the language server, the MCP server and
//! the eval harness do) finds exactly the notes an exact search finds, with
//! their distances (to the bit, as sqlite-vec computes them), in one
//! workspace and across the store — and keeps doing
//! so while another handle adds notes, writes a note's vectors again,
//! forgets a note and remakes the vector tables (as `reindex` does).

use mnemo_core::recall::NoteEmbedding;
use mnemo_core::recall::token_signs::pack_signs;
use mnemo_core::{Actor, Kind, NewNote, NoteId, Priority, Provenance, Timestamp};
use mnemo_store::{Scope, Store};

const DIMS: usize = 24;
const WORKSPACES: [&str; 3] = ["alpha", "beta", "gamma"];

/// A small deterministic generator (the same vectors on every run).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn vector(&mut self) -> Vec<f32> {
        (0..DIMS).map(|_| self.next()).collect()
    }
}

/// What the store holds, as the test wrote it: (note, workspace, chunks).
type Written = Vec<(NoteId, String, Vec<Vec<f32>>)>;

fn note(title: String) -> NewNote {
    NewNote {
        kind: Kind::Finding,
        priority: Priority::Medium,
        title,
        body: "body".into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors: vec![],
    }
}

fn put(store: &mut Store, written: &mut Written, numbers: &mut Numbers, count: usize) {
    store
        .write(|w| {
            for i in 0..count {
                let workspace = WORKSPACES[(written.len() + i) % WORKSPACES.len()];
                let id =
                    w.create(workspace, note(format!("note {}", written.len() + i)), Actor::Agent, Timestamp(1))?;
                let chunks: Vec<Vec<f32>> = (0..1 + i % 3).map(|_| numbers.vector()).collect();
                let embedding = NoteEmbedding { token_signs: pack_signs(&chunks), chunks: chunks.clone() };
                w.put_vectors(id, workspace, &embedding, "test-model")?;
                written.push((id, workspace.to_string(), chunks));
            }
            Ok(())
        })
        .unwrap();
}

/// The exact answer: every chunk's cosine distance, the `4 k` nearest
/// chunks (ties by note), each note once, at most `k`.
fn exact(written: &Written, query: &[f32], k: usize, scope: &Scope) -> Vec<(NoteId, f32)> {
    let cosine = |a: &[f32], b: &[f32]| {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
        let len = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
        1.0 - dot / (len(a) * len(b))
    };
    let mut chunks: Vec<(f64, NoteId)> = written
        .iter()
        .filter(|(_, workspace, _)| match scope {
            Scope::Workspace(w) => w == workspace,
            Scope::All => true,
        })
        .flat_map(|(id, _, chunks)| chunks.iter().map(move |c| (cosine(query, c), *id)))
        .collect();
    chunks.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    chunks.truncate(4 * k);
    let mut best: Vec<(NoteId, f32)> = Vec::new();
    for (distance, id) in chunks {
        if !best.iter().any(|(seen, _)| *seen == id) && best.len() < k {
            best.push((id, distance as f32));
        }
    }
    best
}

/// This process's open files of exact vectors in `dir` (unlinked, so found
/// through `/proc/self/fd`), opened again for reading.
fn exact_files_in(dir: &std::path::Path) -> Vec<std::fs::File> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|fd| {
            let fd = fd.ok()?.path();
            let target = std::fs::read_link(&fd).ok()?;
            let name = target.to_str()?;
            (target.starts_with(dir) && name.ends_with(" (deleted)")).then(|| std::fs::File::open(&fd).ok()).flatten()
        })
        .collect()
}

fn assert_same_as_exact(store: &Store, written: &Written, numbers: &mut Numbers, moment: &str) {
    let before = mnemo_store::vector_cache::searched_kept();
    // sqlite-vec's own distance, to hold the kept copy's to the same bits.
    let raw = rusqlite::Connection::open(store.path()).unwrap();
    let mut sqlite_vec = raw
        .prepare(
            "SELECT min(vec_distance_cosine(v.embedding, ?1)) FROM note_vectors v
             JOIN note_vector_chunks c ON c.rowid = v.rowid WHERE c.note_id = ?2",
        )
        .unwrap();
    for round in 0..12 {
        let query = numbers.vector();
        let scope = match round % 4 {
            3 => Scope::All,
            w => Scope::Workspace(WORKSPACES[w].into()),
        };
        for k in [1, 5, 20] {
            let found = store.nearest(&query, k, &scope).unwrap();
            let expected = exact(written, &query, k, &scope);
            let ids = |v: &[(NoteId, f32)]| v.iter().map(|(id, _)| *id).collect::<Vec<_>>();
            assert_eq!(ids(&found), ids(&expected), "{moment}: k {k} in {scope:?}");
            for ((id, got), (_, want)) in found.iter().zip(&expected) {
                assert!((got - want).abs() < 1e-5, "{moment}: distance {got} against {want}");
                let blob: Vec<u8> = query.iter().flat_map(|x| x.to_le_bytes()).collect();
                let theirs: f64 = sqlite_vec.query_row(rusqlite::params![blob, id], |r| r.get(0)).unwrap();
                assert_eq!(got.to_bits(), (theirs as f32).to_bits(), "{moment}: sqlite-vec's distance, to the bit");
            }
        }
        // A workspace's and the store's searched at once (a recall's): each
        // answer what it is alone, with the same distances.
        let all = Scope::All;
        let both = store.nearest_each(&query, &[(20, &scope), (5, &all)]).unwrap();
        assert_eq!(
            both,
            [store.nearest(&query, 20, &scope).unwrap(), store.nearest(&query, 5, &all).unwrap()],
            "{moment}"
        );
        // In the other order, and the store's twice (the list each reads is
        // handed on or copied, never read after it was handed on).
        let turned = store.nearest_each(&query, &[(5, &all), (20, &scope), (7, &all)]).unwrap();
        assert_eq!(turned, [both[1].clone(), both[0].clone(), store.nearest(&query, 7, &all).unwrap()], "{moment}");
    }
    assert_eq!(
        mnemo_store::vector_cache::searched_kept() - before,
        12 * 3 + 12 * 8,
        "{moment}: every search was answered from the kept copy"
    );
}

#[test]
fn a_kept_copy_of_the_vectors_finds_what_an_exact_search_finds_as_the_store_changes() {
    mnemo_store::vector_cache::keep_vectors_from(0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let mut numbers = Numbers(7);
    let mut written = Written::new();
    let mut searcher = Store::open(&path).unwrap();
    let mut writer = Store::open(&path).unwrap();

    put(&mut searcher, &mut written, &mut numbers, 300);
    assert_same_as_exact(&searcher, &written, &mut numbers, "first search");

    // Another handle adds notes: the copy reads only those.
    put(&mut writer, &mut written, &mut numbers, 20);
    assert_same_as_exact(&searcher, &written, &mut numbers, "after notes were added elsewhere");

    // A note's vectors written again (fewer chunks than before).
    let (id, workspace, _) = written.iter().find(|(_, _, chunks)| chunks.len() == 3).cloned().unwrap();
    let chunks = vec![numbers.vector()];
    writer
        .write(|w| {
            let embedding = NoteEmbedding { token_signs: pack_signs(&chunks), chunks: chunks.clone() };
            w.put_vectors(id, &workspace, &embedding, "test-model")
        })
        .unwrap();
    written.iter_mut().find(|(n, _, _)| *n == id).unwrap().2 = chunks;
    assert_same_as_exact(&searcher, &written, &mut numbers, "after a note's vectors were written again");

    // A note forgotten: its vectors are nowhere in the answers, and the
    // copy's file of exact vectors (unlinked: reached through this
    // process's descriptor of it) is overwritten before it goes.
    let mut exact_files = exact_files_in(dir.path());
    assert_eq!(exact_files.len(), 1, "one copy, one file");
    let whole = |file: &mut std::fs::File| {
        use std::io::{Read, Seek};
        let mut bytes = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut bytes).unwrap();
        bytes
    };
    assert!(whole(&mut exact_files[0]).iter().any(|b| *b != 0), "the file holds the vectors");
    let (gone, workspace, _) = written.remove(5);
    writer.write(|w| w.forget(&Scope::Workspace(workspace.clone()), gone)).unwrap();
    let after = whole(&mut exact_files[0]);
    assert!(!after.is_empty() && after.iter().all(|b| *b == 0), "the file was overwritten after the forget");
    drop(exact_files);
    assert!(exact_files_in(dir.path()).is_empty(), "and closed");
    assert_same_as_exact(&searcher, &written, &mut numbers, "after a forget");

    // The vector tables made again (reindex): every vector new.
    writer
        .write(|w| {
            w.clear_vectors()?;
            for (id, workspace, chunks) in written.iter_mut() {
                *chunks = chunks.iter().map(|c| c.iter().map(|x| -x).collect()).collect();
                let embedding = NoteEmbedding { token_signs: pack_signs(chunks), chunks: chunks.clone() };
                w.put_vectors(*id, workspace, &embedding, "test-model")?;
            }
            Ok(())
        })
        .unwrap();
    assert_same_as_exact(&searcher, &written, &mut numbers, "after the vectors were made again");

    // A search whose read began before the copy was brought further (another
    // request of the same process): answered through sqlite-vec, for the
    // state it reads, and the newer copy is kept, not read again.
    let reader = Store::open(&path).unwrap();
    let before_write = written.clone();
    let loaded = mnemo_store::vector_cache::loaded_whole();
    reader
        .snapshot(|older| {
            older.epoch()?;
            put(&mut writer, &mut written, &mut numbers, 5);
            assert_same_as_exact(&searcher, &written, &mut numbers, "the newer read");
            let query = numbers.vector();
            let found = older.nearest(&query, 5, &Scope::All)?;
            let ids = |v: &[(NoteId, f32)]| v.iter().map(|(id, _)| *id).collect::<Vec<_>>();
            assert_eq!(ids(&found), ids(&exact(&before_write, &query, 5, &Scope::All)), "the older read");
            Ok(())
        })
        .unwrap();
    assert_same_as_exact(&searcher, &written, &mut numbers, "after the older read");
    assert_eq!(mnemo_store::vector_cache::loaded_whole(), loaded, "the copy was brought up to date, never read again");
    drop(reader);
    assert_eq!(
        mnemo_store::vector_cache::rescored_from_store(),
        0,
        "every vector scored exactly was read from the copy's file"
    );

    // A recall's full-text search runs on this thread while the copy's
    // approximate pass runs on another: the same outcome as a recall with
    // the copy out of reach (its threshold above the store: scanned by
    // sqlite-vec, the full-text search first), in one workspace of three.
    let request = mnemo_core::recall::RecallRequest::new("alpha", 5);
    let searched = mnemo_store::vector_cache::searched_kept();
    for _ in 0..6 {
        let query = numbers.vector();
        let beside = searcher.recall("note body", Some(&query), &request, 20).unwrap();
        mnemo_store::vector_cache::keep_vectors_from(usize::MAX);
        let scanned = searcher.recall("note body", Some(&query), &request, 20).unwrap();
        mnemo_store::vector_cache::keep_vectors_from(0);
        assert_eq!(beside, scanned);
        assert!(beside.candidates.iter().any(|c| c.lexical.is_some() && c.similarity.is_some()), "{beside:?}");
    }
    assert_eq!(mnemo_store::vector_cache::searched_kept() - searched, 6 * 2, "the first of each pair used the copy");
    // What runs beside the pass runs once on every path — the copy searched,
    // the copy out of reach, nothing asked — and when it fails the search
    // fails with it and the copy is kept (not read whole again).
    let query = numbers.vector();
    let alpha = Scope::Workspace("alpha".into());
    let loaded = mnemo_store::vector_cache::loaded_whole();
    for (threshold, searches) in [(0, vec![(5, &alpha)]), (usize::MAX, vec![(5, &alpha)]), (0, vec![(0, &alpha)])] {
        mnemo_store::vector_cache::keep_vectors_from(threshold);
        let calls = std::cell::Cell::new(0);
        let (found, lexical) = searcher
            .nearest_each_beside(&query, &searches, || {
                calls.set(calls.get() + 1);
                searcher.lexical_matches("note", 3, &alpha)
            })
            .unwrap();
        assert_eq!(calls.get(), 1, "threshold {threshold}, {searches:?}");
        assert_eq!(found, searcher.nearest_each(&query, &searches).unwrap());
        assert_eq!(lexical, searcher.lexical_matches("note", 3, &alpha).unwrap());
        let failed = searcher.nearest_each_beside(&query, &searches, || -> Result<(), _> {
            Err(mnemo_store::StoreError::Corrupt("refused".into()))
        });
        assert!(matches!(failed, Err(mnemo_store::StoreError::Corrupt(_))), "{failed:?}");
    }
    mnemo_store::vector_cache::keep_vectors_from(0);
    searcher.nearest(&query, 5, &alpha).unwrap();
    assert_eq!(mnemo_store::vector_cache::loaded_whole(), loaded, "the copy was kept through every failure");

    // From here on without that file: vectors are read from sqlite-vec's blocks.
    mnemo_store::vector_cache::keep_exact_files(false);

    // The store file made again at the same path, with other vectors.
    drop((searcher, writer));
    std::fs::remove_file(&path).unwrap();
    let _ = std::fs::remove_file(path.with_extension("db-wal"));
    let _ = std::fs::remove_file(path.with_extension("db-shm"));
    let mut searcher = Store::open(&path).unwrap();
    let mut written = Written::new();
    put(&mut searcher, &mut written, &mut numbers, 40);
    // Read ahead of the first search (as a language server does once its model is loaded).
    let loaded = mnemo_store::vector_cache::loaded_whole();
    searcher.warm_vectors().unwrap();
    assert_eq!(mnemo_store::vector_cache::loaded_whole(), loaded + 1);
    assert_same_as_exact(&searcher, &written, &mut numbers, "in a store made again at the same path");
    assert_eq!(mnemo_store::vector_cache::loaded_whole(), loaded + 1, "the searches used the copy read ahead");
    // A scope smaller than the process's setting is searched through sqlite-vec.
    mnemo_store::vector_cache::keep_vectors_from(10_000);
    let before = mnemo_store::vector_cache::searched_kept();
    let query = numbers.vector();
    let found: Vec<NoteId> = searcher.nearest(&query, 5, &Scope::All).unwrap().into_iter().map(|(id, _)| id).collect();
    let expected: Vec<NoteId> = exact(&written, &query, 5, &Scope::All).into_iter().map(|(id, _)| id).collect();
    assert_eq!(found, expected);
    assert_eq!(mnemo_store::vector_cache::searched_kept(), before, "a small scope is not searched in the copy");
    // Every copy was read from sqlite-vec's blocks, none through its scan,
    // and every vector scored exactly without the file was read from its block.
    assert_eq!(mnemo_store::vector_cache::read_through_vec0(), 0);
    assert!(mnemo_store::vector_cache::rescored_from_store() > 0);
    assert_eq!(mnemo_store::vector_cache::rescored_through_vec0(), 0);
}
