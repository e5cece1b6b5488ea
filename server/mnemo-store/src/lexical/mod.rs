//! Lexical candidates from FTS5 (BM25 over title and body, porter stemming);
//! a shared store searches its database instead (`postgres::search`).
//! The user's text is turned into an OR of its words, each quoted, so no
//! character of a query can be FTS5 syntax and one missing word does not
//! drop a note. A search of one workspace is narrowed inside FTS5, by the
//! index's `ws` column ([`workspace_token`]): matching every workspace's
//! notes and dropping the others cost twice the search of the workspace
//! alone in a store of ten.

use mnemo_core::NoteId;
use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;

pub(crate) mod bm25;
pub(crate) mod term_counts;

/// BM25 weight of the title column relative to the body.
pub const TITLE_WEIGHT: f64 = 2.0;

const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "should", "so", "that", "the", "their",
    "there", "this", "to", "was", "we", "what", "when", "where", "which", "who", "why", "will", "with", "you",
];

/// The FTS5 MATCH expression for a free-text query; `None` when it has no words.
pub fn match_expression(query: &str) -> Option<String> {
    Some(fts5_expression(&query_words(query)?, Join::Any))
}

/// How a query's words are joined: a note holding any of them matches, or
/// only one holding every one (stopwords aside): recall's evidence that a
/// short query (an identifier, an error string) is found whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Join {
    Any,
    Every,
}

fn fts5_expression(words: &[String], join: Join) -> String {
    let operator = if join == Join::Any { " OR " } else { " AND " };
    words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(operator)
}

/// How many distinct words of a query are searched for: the first half of
/// them from its beginning, the rest from its end (a question before or
/// after a pasted log). FTS5 parses an OR of n words in time growing as n²
/// (a prompt of 1.5 MB pasted into the user-prompt hook, 200k distinct
/// words, took 94 s; 20k took 0.5 s).
pub const QUERY_WORDS: usize = 1_000;

/// How many distinct words of `query` a search leaves out ([`QUERY_WORDS`]),
/// for the person to be told.
pub fn words_left_out(query: &str) -> usize {
    distinct_words(query).len().saturating_sub(QUERY_WORDS)
}

/// The query's distinct words, lowercased, stopwords and repeats left out;
/// at most [`QUERY_WORDS`].
pub(crate) fn query_words(query: &str) -> Option<Vec<String>> {
    let mut words = distinct_words(query);
    if words.is_empty() {
        return None;
    }
    if words.len() > QUERY_WORDS {
        words.drain(QUERY_WORDS / 2..words.len() - (QUERY_WORDS - QUERY_WORDS / 2));
    }
    Some(words)
}

/// Every distinct word of `query` in its order, lowercased, stopwords left
/// out (a set remembers the repeats: a pasted log of 50k words was seconds
/// of comparisons when the list itself was searched).
fn distinct_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for word in query.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()) {
        let word = word.to_lowercase();
        if STOPWORDS.contains(&word.as_str()) || !seen.insert(word.clone()) {
            continue;
        }
        words.push(word);
    }
    words
}

impl Store {
    /// Up to `limit` notes matching `query`, best first, with their BM25
    /// score (higher is better), within one workspace or across all.
    pub fn lexical_matches(&self, query: &str, limit: usize, scope: &Scope) -> Result<Vec<(NoteId, f64)>, StoreError> {
        let Some(words) = query_words(query) else { return Ok(Vec::new()) };
        self.matching(&words, Join::Any, limit, scope)
    }

    /// The best `limit` notes in `scope` that hold every word of `query`
    /// ([`Join::Every`]): one FTS query, the cost of
    /// [`Store::lexical_matches`].
    pub fn every_word_matches(
        &self,
        query: &str,
        limit: usize,
        scope: &Scope,
    ) -> Result<std::collections::HashSet<NoteId>, StoreError> {
        let Some(words) = query_words(query) else { return Ok(Default::default()) };
        Ok(self.matching(&words, Join::Every, limit, scope)?.into_iter().map(|(id, _)| id).collect())
    }

    /// The full-text search itself: FTS5 here, or PostgreSQL's own in the
    /// database of a shared store (`postgres::search`).
    fn matching(
        &self,
        words: &[String],
        join: Join,
        limit: usize,
        scope: &Scope,
    ) -> Result<Vec<(NoteId, f64)>, StoreError> {
        if let Some(shared) = &self.shared {
            return shared.with_client(|client| crate::postgres::search::lexical(client, words, join, limit, scope));
        }
        let words = format!("{{title body}} : ({})", fts5_expression(words, join));
        let (expression, scope_rows) = match scope.workspace_param() {
            None => (words, None),
            Some(workspace) => {
                let born_in: Vec<String> = self
                    .conn
                    .prepare_cached(&crate::workspace::born_in_ids("?1"))?
                    .query_map([workspace], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                if born_in.is_empty() {
                    // Moved away, with nothing moved in: it holds no notes.
                    return Ok(Vec::new());
                }
                if born_in == [workspace] && !self.has_other_workspaces(workspace)? {
                    // Every note is this workspace's: narrowing would only cost.
                    (words, None)
                } else {
                    let any = born_in.iter().map(|id| format!("ws : \"{}\"", workspace_token(id)));
                    let narrowed = format!("({}) AND {words}", any.collect::<Vec<_>>().join(" OR "));
                    (narrowed, Some(self.notes_born_in(&born_in)?))
                }
            }
        };
        match join {
            Join::Any => self.ranked_here(&expression, limit, scope_rows),
            // Rows holding every word do not show how many hold each one:
            // FTS5 counts them (a search made only when recall would abstain).
            Join::Every => self.ranked_by_fts5(&expression, limit),
        }
    }

    /// The best `limit` notes matching the FTS5 `expression` (an OR of
    /// words, narrowed or not), by BM25 computed from each matched row's
    /// counts (`bm25.rs`); `scope_rows`: the notes of the workspace searched.
    fn ranked_here(
        &self,
        expression: &str,
        limit: usize,
        scope_rows: Option<i64>,
    ) -> Result<Vec<(NoteId, f64)>, StoreError> {
        // Stepped row by row: FTS5 refuses its functions inside an aggregate.
        let sql = format!("SELECT {}(notes_fts) FROM notes_fts WHERE notes_fts MATCH ?1", term_counts::FUNCTION);
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let (_, matched) = term_counts::gather(|| -> rusqlite::Result<()> {
            let mut rows = stmt.query([expression])?;
            while rows.next()?.is_some() {}
            Ok(())
        })?;
        let weighing = bm25::Weighing { title: TITLE_WEIGHT, body: 1.0, scope_rows };
        Ok(bm25::best(&matched, weighing, limit))
    }

    /// How many notes were born in the workspaces `born_in` (kept by
    /// triggers in `workspace_note_counts`, not counted at each search).
    fn notes_born_in(&self, born_in: &[String]) -> Result<i64, StoreError> {
        let mut stmt = self.conn.prepare_cached("SELECT notes FROM workspace_note_counts WHERE workspace = ?1")?;
        let mut total = 0;
        for id in born_in {
            total += stmt.query_row([id], |r| r.get::<_, i64>(0)).optional()?.unwrap_or(0);
        }
        Ok(total)
    }

    /// The best `limit` notes matching the FTS5 `expression`, by FTS5's
    /// `bm25()` (a word's documents counted over the whole index).
    fn ranked_by_fts5(&self, expression: &str, limit: usize) -> Result<Vec<(NoteId, f64)>, StoreError> {
        let sql = "SELECT f.rowid, -bm25(notes_fts, ?3, 1.0, 0.0) AS score FROM notes_fts f
                   WHERE notes_fts MATCH ?1 ORDER BY score DESC, f.rowid LIMIT ?2";
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params![expression, limit as i64, TITLE_WEIGHT], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The full-text index's token for workspace `id` (its `ws` column, made by
/// the view `notes_fts_source`): 'w', then the id's bytes in hex with the
/// nibbles 10–15 written b c d f g h — no vowel, no s, l or y, so the porter
/// stemmer keeps the token whole and two ids never share one.
pub(crate) fn workspace_token(id: &str) -> String {
    const DIGITS: &[u8; 16] = b"0123456789bcdfgh";
    let mut token = String::with_capacity(1 + id.len() * 2);
    token.push('w');
    for byte in id.bytes() {
        token.push(DIGITS[usize::from(byte >> 4)] as char);
        token.push(DIGITS[usize::from(byte & 15)] as char);
    }
    token
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_become_quoted_ors_of_their_words() {
        assert_eq!(match_expression("How do I purge the X-Cache?").as_deref(), Some("\"purge\" OR \"x\" OR \"cache\""));
        assert_eq!(match_expression("\"unbalanced AND (NEAR* ^").as_deref(), Some("\"unbalanced\" OR \"near\""));
        assert_eq!(match_expression("the of a ??"), None);
        assert_eq!(
            fts5_expression(&query_words("How do I purge the X-Cache?").unwrap(), Join::Every),
            "\"purge\" AND \"x\" AND \"cache\""
        );
        assert_eq!(
            match_expression("LARDER_CACHE_DIR src/lock.rs").as_deref(),
            Some("\"larder_cache_dir\" OR \"src\" OR \"lock\" OR \"rs\"")
        );
    }

    #[test]
    fn a_pasted_log_is_searched_for_the_words_at_its_two_ends() {
        let log: String = (0..50_000).map(|n| format!("word{} the word{} ", n, n % 7)).collect();
        let words = query_words(&format!("ask about {log} purge")).unwrap();
        assert_eq!(words.len(), QUERY_WORDS);
        assert_eq!(words[..3], ["ask", "word0", "word1"], "stopwords and repeats are not counted");
        assert_eq!(words[499], "word498");
        assert_eq!(words[500], "word49501");
        assert_eq!(words[QUERY_WORDS - 2..], ["word49999", "purge"]);
        assert_eq!(query_words("a short query, a short one").unwrap(), ["short", "query", "one"]);
        assert_eq!(words_left_out(&format!("ask about {log} purge")), 50_002 - QUERY_WORDS);
        assert_eq!(words_left_out("a short query"), 0);
    }
}
