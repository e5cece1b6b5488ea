//! BM25 over the rows a full-text search matched, as FTS5's `bm25()` scores
//! them (k1 = 1.2, b = 0.75, a phrase's IDF floored at 1e-6, the average
//! length over the whole index), except for one count: a phrase's documents
//! are counted among the rows of the scope searched, and the scope's rows
//! are the collection. For a search of the whole index these are FTS5's own
//! counts and the scores are `bm25()`'s to the bit (`tests/lexical_scope.rs`);
//! for one workspace of a shared store they are that workspace's, so it
//! ranks as it would alone, and no posting list is walked beyond it.
//!
//! Every row holding any phrase of the query must be among the rows given
//! (an OR of the words: [`super::Join::Any`]), or the counts fall short.

use mnemo_core::NoteId;

use super::term_counts::Matched;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// How the rows are weighed: the title's and the body's weight, and how
/// many rows the scope searched holds (`None`: the whole index).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Weighing {
    pub title: f64,
    pub body: f64,
    pub scope_rows: Option<i64>,
}

/// The best `limit` rows by BM25 (higher is better), ties by rowid.
pub(crate) fn best(matched: &Matched, weighing: Weighing, limit: usize) -> Vec<(NoteId, f64)> {
    let Some(index) = matched.index else { return Vec::new() };
    let rows = matched.rowids.len();
    let collection = weighing.scope_rows.unwrap_or(index.rows);
    let average_length = index.tokens as f64 / index.rows as f64;
    let mut holding = vec![0i64; matched.phrases];
    for row in 0..rows {
        for (held, hits) in holding.iter_mut().zip(matched.hits_of(row)) {
            *held += i64::from(hits[0] + hits[1] > 0);
        }
    }
    let idf: Vec<f64> = holding
        .iter()
        .map(|&holding| {
            let idf = (((collection - holding) as f64 + 0.5) / (holding as f64 + 0.5)).ln();
            if idf <= 0.0 { 1e-6 } else { idf }
        })
        .collect();
    let mut scored: Vec<(NoteId, f64)> = (0..rows)
        .map(|row| {
            let norm = K1 * (1.0 - B + B * matched.lengths[row] as f64 / average_length);
            let mut score = 0.0;
            for (hits, idf) in matched.hits_of(row).iter().zip(&idf) {
                let frequency = f64::from(hits[0]) * weighing.title + f64::from(hits[1]) * weighing.body;
                score += idf * ((frequency * (K1 + 1.0)) / (frequency + norm));
            }
            (matched.rowids[row], score)
        })
        .collect();
    let order = |a: &(NoteId, f64), b: &(NoteId, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if limit < scored.len() {
        scored.select_nth_unstable_by(limit, order);
        scored.truncate(limit);
    }
    scored.sort_unstable_by(order);
    scored
}
