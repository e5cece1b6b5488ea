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
        Some(Approximate { only, scored })
    }

    /// The answer to each of `searches` from its approximate pass: each
    /// scope's chunks, best first, scored exactly until none left could
    /// come near its answer.
    pub(super) fn select_each(
        &self,
        store: &Store,
        query: &[f32],
        searches: &[Wanted<'_>],
        approximate: Option<Approximate>,
    ) -> Result<Vec<Found>, StoreError> {
        let Some(Approximate { only, mut scored }) = approximate else {
            return Ok(searches.iter().map(|_| Vec::new()).collect());
        };
        let mut exact = Exact::new(store, query, self.dims())?;
        let mut answers = Vec::with_capacity(searches.len());
        // A search of every chunk takes the list when no search after it
        // reads it; otherwise a copy.
        let last_reader = only.iter().rposition(Option::is_some);
        for (at, (search, only)) in searches.iter().zip(only).enumerate() {
            let answer = match only {
                None => Vec::new(),
                Some(None) if Some(at) == last_reader => {
                    self.select(&mut exact, std::mem::take(&mut scored), search)?
                }
                Some(None) => self.select(&mut exact, scored.clone(), search)?,
                Some(Some(w)) => {
                    let mine = scored.iter().filter(|(_, at)| self.chunks[*at].workspace == w).copied().collect();
                    self.select(&mut exact, mine, search)?
                }
            };
            answers.push(answer);
        }
        Ok(answers)
    }

    /// One scope's answer from its chunks' approximate scores: best first,
    /// scored exactly until no chunk left could come near it.
    fn select(
        &self,
        exact: &mut Exact<'_>,
        mut scored: Vec<(f32, usize)>,
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
            let Some(distance) = exact.distance(self, index)? else { continue };
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
/// else from their block (`blocks::VectorReader`), each chunk's computed
/// once per search.
struct Exact<'s> {
    vectors: blocks::VectorReader<'s>,
    through_vec0: CachedStatement<'s>,
    query: Vec<u8>,
    query_floats: Vec<f32>,
    stored: Vec<u8>,
    known: HashMap<usize, Option<f32>>,
}

impl<'s> Exact<'s> {
    fn new(store: &'s Store, query: &[f32], dims: usize) -> Result<Exact<'s>, StoreError> {
        Ok(Exact {
            vectors: blocks::VectorReader::new(store, dims),
            through_vec0: store
                .conn
                .prepare_cached("SELECT vec_distance_cosine(embedding, ?1) FROM note_vectors WHERE rowid = ?2")?,
            query: crate::vectors::to_blob(query),
            query_floats: query.to_vec(),
            stored: Vec::new(),
            known: HashMap::new(),
        })
    }

    /// The distance of the copy's chunk at `index`; `None` when the store
    /// no longer holds it.
    fn distance(&mut self, kept: &Kept, index: usize) -> Result<Option<f32>, StoreError> {
        if let Some(known) = self.known.get(&index) {
            return Ok(*known);
        }
        let rowid = kept.chunks[index].rowid;
        let read = match kept.exact.as_ref().and_then(|exact| exact.read(index, &mut self.stored)) {
            Some(()) => Some(()),
            None => {
                RESCORED_FROM_STORE.fetch_add(1, Ordering::Relaxed);
                self.vectors.read(rowid, &mut self.stored)
            }
        };
        let distance = match read {
            // No distance (a vector of zeros: sqlite-vec's is NULL): not a match.
            Some(()) => super::cosine::distance(&self.stored, &self.query_floats),
            None => {
                RESCORED_THROUGH_VEC0.fetch_add(1, Ordering::Relaxed);
                self.through_vec0.query_row(rusqlite::params![self.query, rowid], |r| r.get(0)).optional()?
            }
        };
        self.known.insert(index, distance);
        Ok(distance)
    }
}
