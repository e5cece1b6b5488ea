//! Recall against the store: gather candidates from FTS5 and from the vector
//! index within the workspace, and from other workspaces (so what they hold
//! can be counted), resolve superseded notes to their live
//! successors, and hand everything to the core ranking.

use std::collections::{BTreeMap, HashSet};

use mnemo_core::recall::token_signs::QueryTokens;
use mnemo_core::recall::{Candidate, RankingMode, RecallAnswer, RecallRequest, rank, rerank_targets};
use mnemo_core::{NoteId, Status};
use rusqlite::OptionalExtension;

use crate::error::StoreError;
use crate::read::Scope;
use crate::sql_codec::{StateColumns, parse};
use crate::store::Store;

/// Candidates taken from each source (lexical, vector), per scope.
pub const DEFAULT_POOL: usize = 50;

/// Candidates reranked by late interaction when the query's token vectors
/// are given: the whole pool (README, "Recall quality": depth measured).
pub const DEFAULT_RERANK: usize = 200;

/// A ranked answer and the pool it was ranked from.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallOutcome {
    pub answer: RecallAnswer,
    pub candidates: Vec<Candidate>,
    /// How many candidates late interaction reranked (0: the first stage only).
    pub reranked: usize,
}

#[derive(Default)]
struct Evidence {
    lexical: Option<f64>,
    similarity: Option<f64>,
}

/// How many of the store's nearest notes are looked at to count what other
/// workspaces hold. A note of another workspace counts when it would rank
/// within the request's match window; one with `window` notes nearer than
/// it (its score is its similarity: it has no lexical share) cannot, so
/// that many would do for the first stage, and twice that leaves room for
/// late interaction to lift one. Not the pool: sqlite-vec keeps its k
/// nearest by a selection that costs k × the rows it scans, and the
/// store-wide scan is most of a recall at 100k notes.
fn others_wanted(request: &RecallRequest) -> usize {
    request.match_window() * 2
}

impl Store {
    /// Rank notes for `text` (and its embedding, when a model is loaded).
    pub fn recall(
        &self,
        text: &str,
        vector: Option<&[f32]>,
        request: &RecallRequest,
        pool: usize,
    ) -> Result<RecallOutcome, StoreError> {
        self.recall_reranked(text, vector, request, pool, 0, None)
    }

    /// [`Store::recall`], then the best `rerank` candidates of a hybrid
    /// ranking reranked by late interaction: the query's token vectors
    /// (`query_tokens`) against each candidate's stored token signs. A
    /// candidate without stored signs keeps its first-stage score.
    pub fn recall_reranked(
        &self,
        text: &str,
        vector: Option<&[f32]>,
        request: &RecallRequest,
        pool: usize,
        rerank: usize,
        query_tokens: Option<&QueryTokens>,
    ) -> Result<RecallOutcome, StoreError> {
        self.snapshot(|store| {
            // What other workspaces hold is looked for too, to count it; not when
            // there are none. By vector across the store when there is one (the
            // lexical share of a first-stage score is at most 0.05, so a second
            // full-text pass over the whole store would hardly move the count),
            // else by the full text of the whole store.
            let workspace = Scope::Workspace(request.workspace.clone());
            let others = store.has_other_workspaces(&request.workspace)?;
            let vector = vector.filter(|_| request.mode != RankingMode::LexicalOnly);
            // The full-text side runs on this thread while a kept copy's
            // approximate vector pass runs on another (`nearest_each_beside`).
            let lexical_side = || -> Result<Vec<(NoteId, f64)>, StoreError> {
                let mut found = Vec::new();
                if request.mode != RankingMode::VectorOnly {
                    let mut scopes = vec![&workspace];
                    if others && vector.is_none() {
                        scopes.push(&Scope::All);
                    }
                    for scope in scopes {
                        found.extend(store.lexical_matches(text, pool, scope)?);
                    }
                }
                Ok(found)
            };
            let (nearest_found, lexical_found) = match vector {
                Some(vector) => {
                    let mut searches = vec![(pool, &workspace)];
                    if others {
                        searches.push((others_wanted(request), &Scope::All));
                    }
                    let (found, lexical) = store.nearest_each_beside(vector, &searches, lexical_side)?;
                    (found.into_iter().flatten().collect(), lexical)
                }
                None => (Vec::new(), lexical_side()?),
            };
            let mut evidence: BTreeMap<NoteId, Evidence> = BTreeMap::new();
            let (lexical, nearest) = (lexical_found.len(), nearest_found.len());
            // Without a vector the store's pass (after the workspace's) scores
            // the notes it finds with the whole store's word counts: theirs
            // stand, so the notes the other workspaces hold are ranked on the
            // same scale as the workspace's they are counted against (keeping
            // the workspace's scores instead lost a query of the eval
            // harness's lexical-only run: 0.706 → 0.694 hit@5). A workspace
            // note below the store's best `pool` keeps the workspace's score:
            // two scales among the workspace's own, as before the full-text
            // search counted words per workspace.
            for (id, score) in lexical_found {
                evidence.entry(id).or_default().lexical = Some(score);
            }
            for (id, distance) in nearest_found {
                evidence.entry(id).or_default().similarity = Some(1.0 - f64::from(distance));
            }
            let mut candidates = Vec::with_capacity(evidence.len());
            let mut seen: HashSet<NoteId> = HashSet::new();
            for (id, e) in &evidence {
                if let Some(c) = store.candidate(*id, e)? {
                    seen.insert(c.id);
                    candidates.push(c);
                }
            }
            let successors: Vec<NoteId> =
                candidates.iter().filter_map(|c| c.successor).filter(|s| !seen.contains(s)).collect();
            for id in successors {
                if seen.insert(id)
                    && let Some(c) = store.candidate(id, &Evidence::default())?
                {
                    candidates.push(c);
                }
            }
            let mut reranked = 0;
            if let (Some(query_tokens), RankingMode::Hybrid, true) = (query_tokens, request.mode, rerank > 0) {
                let targets = rerank_targets(&candidates, request, rerank);
                let signs = store.token_signs(&targets)?;
                for c in &mut candidates {
                    c.late = signs.get(&c.id).and_then(|signs| query_tokens.max_sim(signs));
                    reranked += usize::from(c.late.is_some());
                }
            }
            let mut answer = rank(&candidates, request);
            // Notes holding every word of the query are confident matches too
            // (`relevance::confident`): looked up only when recall would
            // abstain without them, the one time they change the answer.
            if (answer.abstention.is_some() || answer.unconfident) && request.mode != RankingMode::VectorOnly {
                let every_word = store.every_word_matches(text, pool, &workspace)?;
                if candidates.iter().any(|c| every_word.contains(&c.id)) {
                    for c in &mut candidates {
                        c.every_word = every_word.contains(&c.id);
                    }
                    answer = rank(&candidates, request);
                }
            }
            tracing::debug!(
                mode = ?request.mode,
                others,
                lexical,
                nearest,
                candidates = candidates.len(),
                reranked,
                results = answer.results.len(),
                hidden = %answer.describe_hidden(),
                "recall stages"
            );
            Ok(RecallOutcome { answer, candidates, reranked })
        })
    }

    /// Whether any note of the store was born in a workspace other than
    /// `workspace` (an index search on `notes.workspace`).
    pub(crate) fn has_other_workspaces(&self, workspace: &str) -> Result<bool, StoreError> {
        let sql = "SELECT EXISTS (SELECT 1 FROM notes WHERE workspace < ?1) OR EXISTS (SELECT 1 FROM notes WHERE workspace > ?1)";
        Ok(self.conn.prepare_cached(sql)?.query_row([workspace], |r| r.get(0))?)
    }

    fn candidate(&self, id: NoteId, evidence: &Evidence) -> Result<Option<Candidate>, StoreError> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT n.workspace, n.kind, s.status, s.status_at, s.status_reason, s.superseded_by, s.provenance, s.live_since
                 FROM notes n JOIN note_state s ON s.note_id = n.id WHERE n.id = ?1",
            )?
            .query_row([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, StateColumns::from_row(r, 2)?)))
            .optional()?;
        let Some((workspace, kind, state)) = row else { return Ok(None) };
        let status = state.into_state()?.status;
        let successor = match status {
            Status::Superseded { by } => Some(self.live_successor(by)?),
            _ => None,
        };
        Ok(Some(Candidate {
            id,
            workspace,
            kind: parse(&kind)?,
            status,
            successor,
            lexical: evidence.lexical,
            similarity: evidence.similarity,
            every_word: false,
            late: None,
        }))
    }

    /// Follow a supersession chain to its end.
    fn live_successor(&self, mut id: NoteId) -> Result<NoteId, StoreError> {
        for _ in 0..64 {
            let next: Option<Option<NoteId>> = self
                .conn
                .prepare_cached("SELECT superseded_by FROM note_state WHERE note_id = ?1")?
                .query_row([id], |r| r.get(0))
                .optional()?;
            match next.flatten() {
                Some(by) => id = by,
                None => break,
            }
        }
        Ok(id)
    }
}
