//! BM25 over the rows a full-text search matched, as FTS5's `bm25()` scores
//! them (k1 = 1.2, b = 0.75, a phrase's IDF floored at 1e-6, the average
//! length over the whole index), except for one count: a phrase's documents
//! are counted among the rows of the scope searched, and the scope's rows
//! are the collection. For a search of the whole index these are FTS5's own
//! counts and the scores are `bm25()`'s to the bit (`tests/lexical_scope.rs`);
//! for one workspace of a shared store they are that workspace's — it ranks
//! as it would alone but for the average length, which is the whole
//! index's — and no posting list is walked beyond it. A shared store on
//! PostgreSQL counts the same way (`postgres/search.rs`, these constants).
//!
//! Every row holding any phrase of the query must be among the rows given
//! (an OR of the words: [`super::Join::Any`]), or the counts fall short.

use mnemo_core::NoteId;

use super::term_counts::Matched;

/// Term-frequency saturation.
pub(crate) const K1: f64 = 1.2;
/// Length normalisation.
pub(crate) const B: f64 = 0.75;
/// The least IDF a phrase has (a phrase in more than half the documents).
pub(crate) const IDF_FLOOR: f64 = 1e-6;

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
    // A write between counting the scope and matching could leave it short.
    let collection = weighing.scope_rows.unwrap_or(index.rows).max(rows as i64);
    let average_length = index.tokens as f64 / index.rows as f64;
    let mut holding = vec![0i64; matched.phrases];
    for hit in &matched.hits {
        holding[hit.phrase as usize] += 1;
    }
    let idf: Vec<f64> = holding
        .iter()
        .map(|&holding| {
            let idf = (((collection - holding) as f64 + 0.5) / (holding as f64 + 0.5)).ln();
            if idf <= 0.0 { IDF_FLOOR } else { idf }
        })
        .collect();
    let mut scored: Vec<(NoteId, f64)> = (0..rows)
        .map(|row| {
            let norm = K1 * (1.0 - B + B * matched.lengths[row] as f64 / average_length);
            let mut score = 0.0;
            for hit in matched.hits_of(row) {
                let frequency = f64::from(hit.title) * weighing.title + f64::from(hit.body) * weighing.body;
                score += idf[hit.phrase as usize] * ((frequency * (K1 + 1.0)) / (frequency + norm));
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

#[cfg(test)]
mod tests {
    use super::super::term_counts::{Hit, IndexCounts, Matched};
    use super::*;

    fn matched(rows: &[(i64, i64, &[Hit])]) -> Matched {
        let mut matched = Matched::for_test(IndexCounts { rows: 10, tokens: 100 }, 2);
        for (rowid, length, hits) in rows {
            matched.push_for_test(*rowid, *length, hits);
        }
        matched
    }

    #[test]
    fn none_asked_none_given_and_a_short_count_of_the_scope_is_no_nan() {
        let hit = |phrase, body| Hit { phrase, title: 0, body };
        let rows = matched(&[(1, 10, &[hit(0, 1)]), (2, 10, &[hit(0, 2), hit(1, 1)]), (3, 5, &[hit(1, 1)])]);
        let weighing = Weighing { title: 2.0, body: 1.0, scope_rows: Some(3) };
        assert!(best(&rows, weighing, 0).is_empty());
        let all = best(&rows, weighing, 10);
        assert_eq!(all.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 3, 1]);
        // A scope counted before a write added rows to it.
        let short = best(&rows, Weighing { scope_rows: Some(1), ..weighing }, 10);
        assert!(short.iter().all(|(_, score)| score.is_finite() && *score > 0.0), "{short:?}");
        assert!(best(&matched(&[]), weighing, 10).is_empty());
    }
}
