//! A search of the kept copy, for one scope or several at once (a recall
//! asks for the workspace's nearest notes and the store's): every chunk of
//! the scopes asked is scored once by the approximation; then, for each
//! scope, its chunks best first are scored exactly until the notes found
//! are `k` and the next chunk's approximate score is a margin
//! ([`MARGIN_DEVIATIONS`] of the coarsest chunk's error) below the `k`th
//! note's exact one. A chunk is scored exactly once per search, whichever
//! scopes need it.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use mnemo_core::NoteId;
use rusqlite::{CachedStatement, OptionalExtension};

use super::dot::{dots, weight_top};
use super::{Kept, MARGIN_DEVIATIONS, RESCORED_FROM_STORE, RESCORED_THROUGH_VEC0, blocks, quantise};
use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;

/// The nearest notes found (note, distance), nearest first.
pub(crate) type Found = Vec<(NoteId, f32)>;

/// One scope's search: its `k` nearest notes, as [`Store::nearest`] finds
/// them among its `wanted_chunks` nearest chunks.
pub(crate) struct Wanted<'a> {
    pub scope: &'a Scope,
    pub k: usize,
    pub wanted_chunks: usize,
}

/// Which chunks a scope holds: all, or one workspace's (by its place in
/// the copy's list); `None` for a workspace the copy has no chunk of.
type Only = Option<Option<u32>>;

/// The approximate pass of one search: which chunks each scope holds, and
/// every chunk in any of them with its approximate score. Made without the
/// store's connection, so it can run on another thread while the
/// connection serves something else (`Store::nearest_each_beside`).
pub(super) struct Approximate {
    only: Vec<Only>,
    scored: Vec<(f32, usize)>,
    /// Exact distances already computed (by a search handed back from the
    /// pass's thread: `select_each_from_file`), by chunk.
    known: HashMap<usize, Option<f32>>,
}

impl Kept {
    /// Every chunk of the scopes of `searches` scored by the approximation;
    /// `None` when the query is not of the copy's model.
    pub(super) fn approximate(&self, query: &[f32], searches: &[Wanted<'_>]) -> Option<Approximate> {
        let dims = self.dims();
        if query.len() != dims || dims == 0 {
            return None;
        }
        let only: Vec<Only> = searches
            .iter()
            .map(|s| match s.scope.workspace_param() {
                Some(w) => self.workspaces.iter().position(|kept| kept == w).map(|at| Some(at as u32)),
                None => Some(None),
            })
            .collect();
        let everything = only.contains(&Some(None));
        let wanted: Vec<u32> = only.iter().filter_map(|o| o.flatten()).collect();
        let (weights, query_factor) = quantise(query, weight_top(dims));
        let weights: Vec<i16> = weights.iter().map(|&w| w as i16).collect();
        let chunks: Vec<u32> = (0..self.chunks.len() as u32)
            .filter(|&at| {
                let chunk = &self.chunks[at as usize];
                chunk.note != 0 && (everything || wanted.contains(&chunk.workspace))
            })
            .collect();
        let mut sums = Vec::new();
        dots(&self.codes, dims, &weights, &chunks, &mut sums);
        let scored = chunks
            .iter()
            .zip(&sums)
            .map(|(&at, &sum)| (self.chunks[at as usize].factor * query_factor * sum as f32, at as usize))
            .collect();
        Some(Approximate { only, scored, known: HashMap::new() })
    }

    /// The answer to each of `searches` from its approximate pass: each
    /// scope's chunks, best first, scored exactly until none left could
    /// come near its answer.
    pub(super) fn select_each(
        &self,
        store: &Store,
        query: &[f32],
        searches: &[Wanted<'_>],
        mut approximate: Approximate,
    ) -> Result<Vec<Found>, StoreError> {
        let mut exact = Exact::new(Some(store), query, std::mem::take(&mut approximate.known))?;
        self.select_with(&mut exact, searches, &mut approximate)
    }

    /// [`Kept::select_each`] without the store's connection, so on the
    /// thread of the approximate pass: `None` when a chunk's exact vector
    /// is not in the copy's file (then only the store has it) or the copy
    /// keeps none. The approximate pass then holds the same chunks (perhaps
    /// in another order) and the exact distances found so far, for
    /// [`Kept::select_each`] to answer from.
    pub(super) fn select_each_from_file(
        &self,
        query: &[f32],
        searches: &[Wanted<'_>],
        approximate: &mut Approximate,
    ) -> Option<Vec<Found>> {
        self.exact.as_ref()?;
        let mut exact = Exact::new(None, query, std::mem::take(&mut approximate.known)).ok()?;
        let found = self.select_with(&mut exact, searches, approximate);
        if exact.needs_store || found.is_err() {
            approximate.known = exact.known;
            return None;
        }
        found.ok()
    }

    fn select_with(
        &self,
        exact: &mut Exact<'_>,
        searches: &[Wanted<'_>],
        approximate: &mut Approximate,
    ) -> Result<Vec<Found>, StoreError> {
        let Approximate { only, scored, .. } = approximate;
        let mut answers = Vec::with_capacity(searches.len());
        // A search of every chunk orders the list in place when no search
        // after it reads it; otherwise a copy.
        let last_reader = only.iter().rposition(Option::is_some);
        for (at, (search, only)) in searches.iter().zip(only.iter()).enumerate() {
            let answer = match only {
                None => Vec::new(),
                Some(None) if Some(at) == last_reader => self.select(exact, scored, search)?,
                Some(None) => self.select(exact, &mut scored.clone(), search)?,
                Some(Some(w)) => {
                    let mut mine: Vec<(f32, usize)> =
                        scored.iter().filter(|(_, at)| self.chunks[*at].workspace == *w).copied().collect();
                    self.select(exact, &mut mine, search)?
                }
            };
            if exact.needs_store {
                break;
            }
            answers.push(answer);
        }
        Ok(answers)
    }

    /// One scope's answer from its chunks' approximate scores: best first,
    /// scored exactly until no chunk left could come near it.
    fn select(
        &self,
        exact: &mut Exact<'_>,
        scored: &mut [(f32, usize)],
        search: &Wanted<'_>,
    ) -> Result<Found, StoreError> {
        let k = search.k;
        if k == 0 {
            return Ok(Vec::new());
        }
        let coarsest = scored.iter().fold(0.0f32, |coarsest, (_, at)| coarsest.max(self.chunks[*at].factor));
        let margin = MARGIN_DEVIATIONS * coarsest / 12f32.sqrt();
        let by_score = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0);
        let first = (search.wanted_chunks * 2).max(32).min(scored.len());
        if first > 0 && first < scored.len() {
            scored.select_nth_unstable_by(first - 1, by_score);
        }
        scored[..first].sort_unstable_by(by_score);
        let mut found: Vec<(f32, NoteId)> = Vec::new();
        // Each note's best exact distance so far, for the `k`th note's.
        let mut notes: Vec<(NoteId, f32)> = Vec::new();
        let mut kth: Option<f32> = None;
        let mut at = 0;
        while at < scored.len() {
            if at == first {
                // The best ran out before the answer was certain (many
                // near-ties): the rest, best first.
                scored[first..].sort_unstable_by(by_score);
            }
            let (approximate, index) = scored[at];
            at += 1;
            if kth.is_some_and(|kth| approximate < 1.0 - kth - margin) {
                break;
            }
            let note = self.chunks[index].note;
            let Some(distance) = exact.distance(self, index)? else {
                if exact.needs_store {
                    break;
                }
                continue;
            };
            found.push((distance, note));
            match notes.iter_mut().find(|(id, _)| *id == note) {
                Some(best) => best.1 = best.1.min(distance),
                None => notes.push((note, distance)),
            }
            if notes.len() >= k {
                notes.sort_by(|a, b| a.1.total_cmp(&b.1));
                notes.truncate(k);
                kth = notes.last().map(|n| n.1);
            }
        }
        found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        found.truncate(search.wanted_chunks);
        Ok(crate::vectors::best_notes(found.into_iter().map(|(distance, id)| (id, distance)), k))
    }
}

/// Exact distances to the query: sqlite-vec's cosine distance (`cosine.rs`) on the
/// stored floats, read from the copy's file of them (`exact_file.rs`) or
/// else, with the store at hand, from their block (`blocks::VectorReader`),
/// each chunk's computed once per search.
struct Exact<'s> {
    /// `None` without the store (on the approximate pass's thread).
    store: Option<FromStore<'s>>,
    /// A chunk was not in the file and there was no store to read it from.
    needs_store: bool,
    query: Vec<u8>,
    query_floats: Vec<f32>,
    stored: Vec<u8>,
    known: HashMap<usize, Option<f32>>,
}

/// The store's ways to a stored vector.
struct FromStore<'s> {
    vectors: blocks::VectorReader<'s>,
    through_vec0: CachedStatement<'s>,
}

impl<'s> Exact<'s> {
    fn new(
        store: Option<&'s Store>,
        query: &[f32],
        known: HashMap<usize, Option<f32>>,
    ) -> Result<Exact<'s>, StoreError> {
        let dims = query.len();
        let store = match store {
            Some(store) => Some(FromStore {
                vectors: blocks::VectorReader::new(store, dims),
                through_vec0: store
                    .conn
                    .prepare_cached("SELECT vec_distance_cosine(embedding, ?1) FROM note_vectors WHERE rowid = ?2")?,
            }),
            None => None,
        };
        Ok(Exact {
            store,
            needs_store: false,
            query: crate::vectors::to_blob(query),
            query_floats: query.to_vec(),
            stored: Vec::new(),
            known,
        })
    }

    /// The distance of the copy's chunk at `index`; `None` when the store
    /// no longer holds it, or (`needs_store` set) when only the store has
    /// it and this has none.
    fn distance(&mut self, kept: &Kept, index: usize) -> Result<Option<f32>, StoreError> {
        if let Some(known) = self.known.get(&index) {
            return Ok(*known);
        }
        let rowid = kept.chunks[index].rowid;
        // No distance (a vector of zeros: sqlite-vec's is NULL): not a match.
        let distance = match kept.exact.as_ref().and_then(|exact| exact.read(index, &mut self.stored)) {
            Some(()) => super::cosine::distance(&self.stored, &self.query_floats),
            None => {
                let Some(store) = self.store.as_mut() else {
                    self.needs_store = true;
                    return Ok(None);
                };
                RESCORED_FROM_STORE.fetch_add(1, Ordering::Relaxed);
                match store.vectors.read(rowid, &mut self.stored) {
                    Some(()) => super::cosine::distance(&self.stored, &self.query_floats),
                    None => {
                        RESCORED_THROUGH_VEC0.fetch_add(1, Ordering::Relaxed);
                        store.through_vec0.query_row(rusqlite::params![self.query, rowid], |r| r.get(0)).optional()?
                    }
                }
            }
        };
        self.known.insert(index, distance);
        Ok(distance)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Marks, exact_file};
    use super::*;

    /// A copy of `count` chunks (three to a note, in two workspaces) of
    /// pseudo-random vectors, with its file of exact vectors in `dir`.
    fn copy(dir: &std::path::Path, count: usize, dims: usize) -> (Kept, Vec<Vec<f32>>) {
        let store = dir.join("memory.db");
        let marks = Marks { made: None, dims, forgotten: 0, moves: 0, generation: 0 };
        let mut kept = Kept { exact: exact_file::ExactFile::create(&store, dims * 4), ..Kept::empty(store, marks) };
        let mut state = 7u64;
        let mut vectors = Vec::new();
        for at in 0..count {
            let vector: Vec<f32> = (0..dims)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
                })
                .collect();
            let workspace = if at % 2 == 0 { "alpha" } else { "beta" };
            kept.add(at as i64 + 1, at as i64 / 3 + 1, workspace, &crate::vectors::to_blob(&vector));
            vectors.push(vector);
        }
        kept.finish_writes();
        (kept, vectors)
    }

    /// Each scope's `k` nearest notes by the exact distance, as a search
    /// of every chunk finds them.
    fn exact(kept: &Kept, vectors: &[Vec<f32>], query: &[f32], k: usize, workspace: Option<u32>) -> Found {
        let mut all: Vec<(f32, NoteId)> = vectors
            .iter()
            .enumerate()
            .filter(|(at, _)| workspace.is_none_or(|w| kept.chunks[*at].workspace == w))
            .filter_map(|(at, v)| {
                Some((super::super::cosine::distance(&crate::vectors::to_blob(v), query)?, kept.chunks[at].note))
            })
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        crate::vectors::best_notes(all.into_iter().map(|(d, id)| (id, d)), k)
    }

    #[test]
    fn the_exact_stage_answers_from_the_file_alone_or_leaves_the_pass_to_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let (mut kept, vectors) = copy(dir.path(), 3000, 32);
        let (alpha, all) = (Scope::Workspace("alpha".into()), Scope::All);
        let searches =
            [Wanted { scope: &alpha, k: 10, wanted_chunks: 40 }, Wanted { scope: &all, k: 5, wanted_chunks: 20 }];
        for seed in 0..20 {
            let query = &vectors[seed * 97 % vectors.len()].iter().map(|x| x + 0.1).collect::<Vec<f32>>();
            let mut pass = kept.approximate(query, &searches).unwrap();
            let found = kept.select_each_from_file(query, &searches, &mut pass).expect("every vector is in the file");
            assert_eq!(found, [exact(&kept, &vectors, query, 10, Some(0)), exact(&kept, &vectors, query, 5, None)]);
        }
        // A chunk whose vector is not (yet) in the file — the nearest to
        // the query — is the store's to read: no answer from the file.
        let query = vectors[0].iter().map(|x| x * 2.0).collect::<Vec<f32>>();
        kept.add(vectors.len() as i64 + 1, 5000, "alpha", &crate::vectors::to_blob(&query));
        let mut pass = kept.approximate(&query, &searches).unwrap();
        assert!(kept.select_each_from_file(&query, &searches, &mut pass).is_none());
        assert_eq!(pass.scored.len(), vectors.len() + 1, "the pass is left whole for the store's turn");
        // The same in the second scope (the first answered from the file):
        // the exact distances found so far are handed back with the pass.
        let mut kept_beta = copy(dir.path(), 3000, 32).0;
        kept_beta.add(vectors.len() as i64 + 1, 5000, "beta", &crate::vectors::to_blob(&query));
        let mut pass = kept_beta.approximate(&query, &searches).unwrap();
        assert!(kept_beta.select_each_from_file(&query, &searches, &mut pass).is_none());
        assert!(!pass.known.is_empty(), "the first scope's exact distances are kept");
        for (&at, &distance) in &pass.known {
            let expected = super::super::cosine::distance(&crate::vectors::to_blob(&vectors[at]), &query);
            assert_eq!(distance, expected, "chunk {at}");
        }
        // Without the file, every exact vector is the store's to read.
        kept.exact = None;
        let mut pass = kept.approximate(&query, &searches).unwrap();
        assert!(kept.select_each_from_file(&query, &searches, &mut pass).is_none());
    }
}
