//! Recall's candidates found in the database of a shared store: PostgreSQL's
//! full-text search over `notes.search` (english stemming, no stopwords), scored by BM25
//! as a local store scores it (`lexical/bm25.rs`), for the lexical side, and pgvector's cosine distance over every
//! chunk in scope for the vector side (exact: README, "A team's store on
//! PostgreSQL", has the measurement). The ranking itself stays in
//! `crate::recall`, the same for both kinds of store.

use mnemo_core::NoteId;

use super::pg;
use crate::error::StoreError;
use crate::lexical::bm25::{B, IDF_FLOOR, K1};
use crate::lexical::{Join, TITLE_WEIGHT};
use crate::read::Scope;

/// Up to `limit` notes holding any (or every) of `words`, best first, with
/// their BM25 score (higher is better) as a local store computes it: k1 1.2,
/// b 0.75, each word's idf over the whole store (`mnemo_terms`) — or, for
/// any of the words in one workspace, over that workspace's notes (its
/// postings counted) — its weighted count in each note from the postings
/// (`note_terms`), a note's length against the store's average
/// (`mnemo_text_stats`). The postings are read for the query's words only.
pub(crate) fn lexical(
    client: &mut postgres::Client,
    words: &[String],
    join: Join,
    limit: usize,
    scope: &Scope,
) -> Result<Vec<(NoteId, f64)>, StoreError> {
    // websearch syntax: words (letters, digits, `_`: `lexical::query_words`)
    // joined by `or`, or by spaces for every word; nothing else is special.
    // A word with `_` is a phrase of its parts, as in FTS5 and `notes.search`.
    let words: Vec<String> = words.iter().map(|w| porter_number(w)).collect();
    let query = words.join(if join == Join::Any { " or " } else { " " });
    // A note with a posting of any word holds one of them; only a phrase or
    // every word asks the full-text index which notes match.
    let whole = if join == Join::Every || words.iter().any(|w| w.contains('_')) {
        "AND p.note_id IN (SELECT id FROM notes WHERE search @@ websearch_to_tsquery('mnemo', $1))"
    } else {
        // The query is still a parameter of the statement, so it must be typed.
        "AND $1::text IS NOT NULL"
    };
    // Any of the words in one workspace: counted in it, as `lexical/bm25.rs`
    // counts them in a local store.
    let in_scope = join == Join::Any && scope.workspace_param().is_some();
    let sql = format!(
        "WITH stats AS MATERIALIZED (
             SELECT CASE WHEN $5 THEN (SELECT count(*) FROM notes WHERE {notes_in_scope}) ELSE notes END::float8 AS n,
                    tokens::float8 / greatest(notes, 1) AS avgdl FROM mnemo_text_stats),
         terms AS MATERIALIZED (
             SELECT l AS lexeme, greatest(ln((s.n - d.notes + 0.5) / (d.notes + 0.5)), {IDF_FLOOR:?}) AS idf
             FROM unnest(tsvector_to_array(to_tsvector('mnemo', mnemo_words($4)))) l
             CROSS JOIN stats s LEFT JOIN mnemo_terms t ON t.lexeme = l
             CROSS JOIN LATERAL (SELECT CASE WHEN $5
                 THEN (SELECT count(*) FROM note_terms h WHERE h.lexeme = l AND {postings_in_scope})
                 ELSE COALESCE(t.notes, 0) END::float8 AS notes) d)
         SELECT p.note_id, sum(t.idf * h.tf * ({K1} + 1) / (h.tf + {K1} * (1 - {B} + {B} * p.len / greatest(s.avgdl, 1))))::float8 AS score
         FROM terms t JOIN note_terms p ON p.lexeme = t.lexeme CROSS JOIN stats s
         CROSS JOIN LATERAL (SELECT p.in_title * {TITLE_WEIGHT:?} + p.in_body AS tf) h
         WHERE ($3::text IS NULL OR {}) {whole}
         GROUP BY p.note_id ORDER BY score DESC, p.note_id LIMIT $2",
        crate::workspace::born_in("p.workspace", "$3::text"),
        notes_in_scope = crate::workspace::born_in("workspace", "$3::text"),
        postings_in_scope = crate::workspace::born_in("h.workspace", "$3::text"),
    );
    let rows = client
        .query(&sql, &[&query, &(limit as i64), &scope.workspace_param(), &words.join(" "), &in_scope])
        .map_err(|e| pg("cannot search the notes' text", e))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Fold what this transaction's notes added to (or took from) the word
/// counts BM25 reads (`mnemo_text_deltas`, schema.sql) into them: once per
/// write, before it commits.
pub(crate) fn fold_counts(database: &mut impl postgres::GenericClient) -> Result<(), StoreError> {
    database.execute("SELECT mnemo_fold_terms()", &[]).map_err(|e| pg("cannot count the notes' words", e))?;
    Ok(())
}

/// The `k` notes nearest to `query` (the cosine distance of their best
/// chunk), within one workspace or across all.
pub(crate) fn nearest(
    client: &mut postgres::Client,
    query: &[f32],
    k: usize,
    scope: &Scope,
) -> Result<Vec<(NoteId, f32)>, StoreError> {
    let vector = super::vector_literal(query);
    let rows = client
        .query(
            "SELECT note_id, min(embedding <=> $1::text::vector)::float4 AS distance FROM note_vectors
             WHERE $3::text IS NULL OR workspace = $3
             GROUP BY note_id ORDER BY distance, note_id LIMIT $2",
            &[&vector, &(k as i64), &scope.workspace_param()],
        )
        .map_err(|e| pg("cannot search the notes' vectors", e))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// `word` as `mnemo_words` reads a note's text: a number's plural `s`
/// dropped, as FTS5's Porter stemmer drops it (`30s` is `30`).
fn porter_number(word: &str) -> String {
    let mut chars = word.chars().rev();
    match (chars.next(), chars.next()) {
        (Some('s' | 'S'), Some(digit)) if digit.is_ascii_digit() => word[..word.len() - 1].to_string(),
        _ => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_numbers_plural_s_goes_as_a_notes_text_loses_it() {
        assert_eq!(porter_number("30s"), "30");
        assert_eq!(porter_number("1990s"), "1990");
        assert_eq!(porter_number("250ms"), "250ms");
        assert_eq!(porter_number("e0107"), "e0107");
        assert_eq!(porter_number("s"), "s");
        assert_eq!(porter_number("larder_cache_dir"), "larder_cache_dir");
    }
}
