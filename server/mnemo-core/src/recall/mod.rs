//! Ranking recall candidates, pure: fuse lexical (BM25) and vector (cosine)
//! evidence into one score, let a successor inherit the score of the note it
//! superseded, apply the filters, and count everything the filters hid.
//!
//! When no result is a confident match ([`relevance::confident`]) recall
//! abstains: it answers "no confident match" with how many weaker matches it
//! held back ([`Abstention`]), unless the request asks for them all.
//!
//! **Invariant:** nothing is hidden silently. Every filtered note that would
//! have ranked inside the match window is counted by reason, and hidden stale
//! and superseded matches are named by id.

mod chunks;
pub mod eval;
mod fusion;
pub mod relevance;
pub mod token_signs;
mod trust;

use std::collections::{BTreeMap, HashMap};

pub use chunks::{NoteEmbedding, embedding_chunks, embedding_text};
pub use fusion::Fusion;
pub use trust::trust_frame;

use crate::lifecycle::Status;
use crate::model::{Kind, NoteId};

/// One note that entered the candidate pool, with its evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: NoteId,
    pub workspace: String,
    pub kind: Kind,
    pub status: Status,
    /// For a superseded note: the live end of its supersession chain.
    pub successor: Option<NoteId>,
    /// BM25 score (higher is better) when FTS matched it.
    pub lexical: Option<f64>,
    /// Cosine similarity when the vector search returned it.
    pub similarity: Option<f64>,
    /// Whether the note holds every word of the query (a full-text AND match).
    pub every_word: bool,
    /// Late-interaction (token MaxSim) score, when the candidate was among
    /// the ones reranked ([`rerank_targets`]).
    pub late: Option<f64>,
}

/// Which evidence ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankingMode {
    Hybrid,
    LexicalOnly,
    VectorOnly,
}

impl RankingMode {
    pub fn name(self) -> &'static str {
        match self {
            RankingMode::Hybrid => "hybrid",
            RankingMode::LexicalOnly => "lexical only",
            RankingMode::VectorOnly => "vector only",
        }
    }
}

/// How a recall was ranked, for people, in one wording everywhere (the CLI,
/// the language server's workspace symbols, the eval report): `hybrid`,
/// `hybrid, the best 30 reranked by late interaction`, `lexical only (no
/// model at …)`; `fusion` names the hybrid's fusion when it matters (eval).
pub fn describe_ranking(mode: RankingMode, reason: Option<&str>, reranked: usize, fusion: Option<Fusion>) -> String {
    let mut text = mode.name().to_string();
    if let Some(fusion) = fusion.filter(|_| mode == RankingMode::Hybrid) {
        text = format!("{text}, {}", fusion.describe());
    }
    if let Some(reason) = reason {
        text = format!("{text} ({reason})");
    }
    if reranked > 0 && mode == RankingMode::Hybrid {
        let then = if fusion.is_some() { "then " } else { "" };
        text = format!("{text}, {then}the best {reranked} reranked by late interaction");
    }
    text
}

/// What to return.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallRequest {
    pub workspace: String,
    /// Empty: every kind.
    pub kinds: Vec<Kind>,
    /// State names (`Status::name`) that may be returned; default `["active"]`.
    pub states: Vec<&'static str>,
    pub limit: usize,
    pub mode: RankingMode,
    pub fusion: Fusion,
    /// Answer "no confident match" rather than return only weak matches
    /// (default); `false` returns them (`--all`).
    pub abstain: bool,
}

impl RecallRequest {
    pub fn new(workspace: impl Into<String>, limit: usize) -> RecallRequest {
        RecallRequest {
            workspace: workspace.into(),
            kinds: Vec::new(),
            states: vec!["active"],
            limit,
            mode: RankingMode::Hybrid,
            fusion: Fusion::default(),
            abstain: true,
        }
    }

    /// How deep a filtered note may rank and still count as a hidden match.
    pub fn match_window(&self) -> usize {
        (self.limit * 2).max(10)
    }
}

/// A returned note and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub id: NoteId,
    pub score: f64,
    /// Set when the note is here because a superseded note it replaced matched.
    pub via_superseded: Option<NoteId>,
}

/// Recall found matches but none it is confident of, and held them back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Abstention {
    /// How many weaker matches would have been returned.
    pub held_back: usize,
    /// The best cosine similarity among them (`None` without vectors).
    pub best_similarity: Option<f64>,
}

impl Abstention {
    /// For people: `no confident match: 7 weaker matches held back (best
    /// similarity 0.19, below 0.25)`; the caller says how to see them.
    pub fn describe(&self) -> String {
        let matches = if self.held_back == 1 { "match" } else { "matches" };
        let best = match self.best_similarity {
            Some(s) => format!(" (best similarity {s:.2}, below {:.2})", relevance::SIMILARITY_FLOOR),
            None => String::new(),
        };
        format!("no confident match: {} weaker {matches} held back{best}", self.held_back)
    }
}

/// The answer: results plus what the filters hid.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecallAnswer {
    pub results: Vec<Ranked>,
    /// Set when recall abstained: `results` is then empty.
    pub abstention: Option<Abstention>,
    /// The best cosine similarity among the results before any abstention
    /// (`None`: a result held every query word, or no vectors ranked), for
    /// the harness's abstention sweep.
    pub best_similarity: Option<f64>,
    /// Set when the weak matches were asked for (`abstain: false`) and none
    /// of the results is a confident match: they are guesses, and say so.
    pub unconfident: bool,
    /// Hidden matches by reason: `stale`, `revoked`, `superseded`, `expired`,
    /// `proposed`, `other kind`, `other workspace`.
    pub hidden: BTreeMap<&'static str, usize>,
    /// Hidden stale matches, best first.
    pub hidden_stale: Vec<NoteId>,
    /// Hidden superseded matches and their live successors.
    pub hidden_superseded: Vec<(NoteId, Option<NoteId>)>,
    /// Hidden proposals (awaiting review), best first.
    pub hidden_proposed: Vec<NoteId>,
}

impl RecallAnswer {
    /// For results asked for although none is confident: `none of these is
    /// a confident match (best similarity 0.19, below 0.25)`.
    pub fn describe_unconfident(&self) -> Option<String> {
        if !self.unconfident {
            return None;
        }
        let best = match self.best_similarity {
            Some(s) => format!(" (best similarity {s:.2}, below {:.2})", relevance::SIMILARITY_FLOOR),
            None => String::new(),
        };
        Some(format!("none of these is a confident match{best}"))
    }

    /// What the filters hid, for people: `2 stale (#1, #4), 1 superseded (#9 → #15),
    /// 2 proposed (#41, #44), 3 other workspace`, or `nothing`. Stale,
    /// superseded and proposed matches are named.
    pub fn describe_hidden(&self) -> String {
        if self.hidden.is_empty() {
            return "nothing".into();
        }
        let parts: Vec<String> = self
            .hidden
            .iter()
            .map(|(reason, count)| match *reason {
                "stale" if !self.hidden_stale.is_empty() => {
                    let ids: Vec<String> = self.hidden_stale.iter().map(|id| format!("#{id}")).collect();
                    format!("{count} stale ({})", ids.join(", "))
                }
                "proposed" if !self.hidden_proposed.is_empty() => {
                    let ids: Vec<String> = self.hidden_proposed.iter().map(|id| format!("#{id}")).collect();
                    format!("{count} proposed ({})", ids.join(", "))
                }
                "superseded" if !self.hidden_superseded.is_empty() => {
                    let pairs: Vec<String> = self
                        .hidden_superseded
                        .iter()
                        .map(|(id, successor)| match successor {
                            Some(s) => format!("#{id} → #{s}"),
                            None => format!("#{id}"),
                        })
                        .collect();
                    format!("{count} superseded ({})", pairs.join(", "))
                }
                other => format!("{count} {other}"),
            })
            .collect();
        parts.join(", ")
    }
}

fn hidden_reason(status: Status) -> &'static str {
    match status {
        Status::Active => "active",
        Status::StaleFlagged => "stale",
        Status::Revoked => "revoked",
        Status::Superseded { .. } => "superseded",
        Status::Expired => "expired",
        Status::Proposed => "proposed",
    }
}

/// The candidates worth reranking: the `k` best of the request's workspace
/// by the first-stage score, whatever their state (a hidden stale match is
/// ranked like the rest, so it is named when it would have been found), and
/// the `k` best of other workspaces, so that what is counted as matching
/// elsewhere is judged on the same scale as the results.
pub fn rerank_targets(candidates: &[Candidate], request: &RecallRequest, k: usize) -> Vec<NoteId> {
    let scores = fusion::scores(candidates, request.mode, request.fusion);
    let best = |inside: bool| {
        let mut ordered: Vec<(NoteId, f64)> = candidates
            .iter()
            .filter(|c| (c.workspace == request.workspace) == inside)
            .filter_map(|c| Some((c.id, *scores.get(&c.id)?)))
            .collect();
        ordered.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ordered.into_iter().take(k).map(|(id, _)| id)
    };
    best(true).chain(best(false)).collect()
}

/// Rank `candidates` for `request`.
pub fn rank(candidates: &[Candidate], request: &RecallRequest) -> RecallAnswer {
    let mut scores: HashMap<NoteId, f64> = fusion::scores(candidates, request.mode, request.fusion);
    fusion::apply_late(&mut scores, candidates, request.mode);
    let mut via: HashMap<NoteId, NoteId> = HashMap::new();
    // A successor inherits the score of the superseded note that matched, so the
    // old note never outranks its replacement and the replacement surfaces.
    for c in candidates {
        if let (Some(successor), Some(&score)) = (c.successor, scores.get(&c.id)) {
            let entry = scores.entry(successor).or_insert(f64::NEG_INFINITY);
            if score > *entry {
                *entry = score;
                via.insert(successor, c.id);
            }
        }
    }
    // ... and ranks just below it, never level with it.
    for c in candidates {
        if let Some(successor) = c.successor {
            let successor_score = scores.get(&successor).copied().unwrap_or(f64::NEG_INFINITY);
            if let Some(score) = scores.get_mut(&c.id)
                && *score >= successor_score
            {
                *score = successor_score - 1e-9;
            }
        }
    }
    let by_id: HashMap<NoteId, &Candidate> = candidates.iter().map(|c| (c.id, c)).collect();
    let mut ordered: Vec<(NoteId, f64)> =
        scores.iter().filter(|(id, s)| s.is_finite() && by_id.contains_key(id)).map(|(id, s)| (*id, *s)).collect();
    ordered.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));

    let passes_kind = |c: &Candidate| request.kinds.is_empty() || request.kinds.contains(&c.kind);
    let passes_state = |c: &Candidate| request.states.contains(&c.status.name());
    let mut answer = RecallAnswer::default();
    let mut in_workspace = 0usize;
    let mut window_floor = f64::NEG_INFINITY;
    for &(id, score) in &ordered {
        let c = by_id[&id];
        if c.workspace != request.workspace {
            continue;
        }
        in_workspace += 1;
        let inside_window = in_workspace <= request.match_window();
        if inside_window {
            window_floor = score;
        }
        if passes_kind(c) && passes_state(c) {
            if answer.results.len() < request.limit {
                answer.results.push(Ranked { id, score, via_superseded: via.get(&id).copied() });
            }
            continue;
        }
        if !inside_window {
            continue;
        }
        let reason = if passes_state(c) { "other kind" } else { hidden_reason(c.status) };
        *answer.hidden.entry(reason).or_default() += 1;
        match c.status {
            Status::StaleFlagged if !passes_state(c) => answer.hidden_stale.push(id),
            Status::Proposed if !passes_state(c) => answer.hidden_proposed.push(id),
            Status::Superseded { .. } if !passes_state(c) => answer.hidden_superseded.push((id, c.successor)),
            _ => {}
        }
    }
    abstain_unless_confident(&mut answer, &by_id, request);
    let other_workspaces =
        ordered.iter().filter(|(id, score)| by_id[id].workspace != request.workspace && *score >= window_floor).count();
    if other_workspaces > 0 {
        answer.hidden.insert("other workspace", other_workspaces);
    }
    answer
}

/// Hold back results none of which is a confident match (judged by the note
/// itself or the superseded note whose rank it inherited).
fn abstain_unless_confident(answer: &mut RecallAnswer, by_id: &HashMap<NoteId, &Candidate>, request: &RecallRequest) {
    let evidence = |r: &Ranked| [Some(r.id), r.via_superseded].into_iter().flatten().filter_map(|id| by_id.get(&id));
    let confident = answer.results.iter().any(|r| evidence(r).any(|c| relevance::confident(c, request.mode)));
    let best = answer
        .results
        .iter()
        .flat_map(|r| evidence(r).filter_map(|c| c.similarity).collect::<Vec<_>>())
        .fold(None, |best: Option<f64>, s| Some(best.map_or(s, |b| b.max(s))));
    let every_word = answer.results.iter().any(|r| evidence(r).any(|c| c.every_word));
    answer.best_similarity = if every_word || request.mode == RankingMode::LexicalOnly { None } else { best };
    if confident || answer.results.is_empty() {
        return;
    }
    if !request.abstain {
        answer.unconfident = true;
        return;
    }
    answer.abstention = Some(Abstention { held_back: answer.results.len(), best_similarity: best });
    answer.results.clear();
}

#[cfg(test)]
mod tests;
