//! What the MCP tools return as `structuredContent`, typed so that each
//! tool's `outputSchema` is derived from the same struct it serialises.
//! The index tier only: ids, kinds, titles, scores, trust, what was hidden
//! and cut, the ranking — never a recalled note's body (`expand` has them).
//! A standing directive's body is the exception: delivering it is the
//! session-start bundle's point.

use std::collections::BTreeMap;

use mnemo_core::recall::{Ranked, trust_frame};
use mnemo_core::time::Timestamp;
use mnemo_core::{NoteId, NoteView, Provenance};
use rmcp::schemars;
use serde::Serialize;

use crate::app::recall::Answer;

/// One recalled note, as its index line has it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct IndexEntry {
    /// The note's id: `expand` takes it
    pub id: NoteId,
    /// directive, task, gotcha, finding, reference, decision or operational
    pub kind: String,
    /// high, medium or low
    pub priority: String,
    pub title: String,
    /// active, or stale_flagged when asked for
    pub state: String,
    /// auto, agent, user-stated or human
    pub provenance: String,
    /// How far to trust the note, by its provenance
    pub trust: String,
    /// How long ago it was written: `now`, `3h`, `2d`
    pub age: String,
    /// The ranking's score; higher is better (absent for recent notes, which are not ranked)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64")]
    pub score: Option<f64>,
    /// The superseded note that matched and brought this, its successor, up
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "NoteId")]
    pub replaces: Option<NoteId>,
}

impl IndexEntry {
    pub fn of(view: &NoteView, ranked: Option<&Ranked>, now: Timestamp) -> IndexEntry {
        let c = &view.note.content;
        IndexEntry {
            id: view.note.id,
            kind: c.kind.as_str().into(),
            priority: c.priority.as_str().into(),
            title: c.title.clone(),
            state: view.state.status.name().into(),
            provenance: provenance(view.state.provenance),
            trust: trust_frame(view.state.provenance, c.quote.as_deref()),
            age: view.note.created_at.age(now),
            // Three decimals tell the ranks apart; the rest is bytes in an agent's context.
            score: ranked.map(|r| (r.score * 1000.0).round() / 1000.0),
            replaces: ranked.and_then(|r| r.via_superseded),
        }
    }
}

fn provenance(p: Provenance) -> String {
    p.as_str().into()
}

/// A superseded note that matched, hidden, and its live successor.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SupersededMatch {
    pub id: NoteId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "NoteId")]
    pub successor: Option<NoteId>,
}

/// Recall held every match back: none was confident.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Abstained {
    /// How many weaker matches were held back (`all: true` returns them)
    pub held_back: usize,
    /// The best cosine similarity among them, when vectors ranked
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64")]
    pub best_similarity: Option<f64>,
}

/// A recall answer in the index tier.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecallOutput {
    /// The notes, best first, without bodies (`expand` returns them)
    pub results: Vec<IndexEntry>,
    /// Set when recall found no confident match: `results` is then empty
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Abstained")]
    pub abstention: Option<Abstained>,
    /// Set when `all: true` returned matches none of which is confident: guesses
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unconfident: bool,
    /// Matches the filters hid, by reason: stale, revoked, superseded, expired, other kind, other workspace
    pub hidden: BTreeMap<String, usize>,
    /// The hidden stale matches, best first (`include_stale: true` returns them)
    pub hidden_stale: Vec<NoteId>,
    /// The hidden superseded matches and their successors
    pub hidden_superseded: Vec<SupersededMatch>,
    /// The ranking that ran: hybrid, or lexical only
    pub ranking: String,
    /// Why the ranking is lexical only, when it is
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub ranking_reason: Option<String>,
    /// How many candidates late interaction reranked
    pub reranked: usize,
    /// Notes the max_tokens budget cut, best first: raise max_tokens or expand them
    pub cut: Vec<NoteId>,
}

impl RecallOutput {
    /// The answer's first `kept` notes; the rest are named as cut.
    pub fn of(answer: &Answer, kept: usize, now: Timestamp) -> RecallOutput {
        let a = &answer.answer;
        let entries = answer.views.iter().enumerate().map(|(i, view)| IndexEntry::of(view, a.results.get(i), now));
        RecallOutput {
            results: entries.take(kept).collect(),
            abstention: a.abstention.map(|x| Abstained { held_back: x.held_back, best_similarity: x.best_similarity }),
            unconfident: a.unconfident,
            hidden: a.hidden.iter().map(|(reason, n)| (reason.to_string(), *n)).collect(),
            hidden_stale: a.hidden_stale.clone(),
            hidden_superseded: a
                .hidden_superseded
                .iter()
                .map(|(id, successor)| SupersededMatch { id: *id, successor: *successor })
                .collect(),
            ranking: answer.mode.name().into(),
            ranking_reason: answer.reason.clone(),
            reranked: answer.reranked,
            cut: answer.views.iter().skip(kept).map(|v| v.note.id).collect(),
        }
    }
}

/// A standing directive, delivered whole (its body cut only by the budget).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Directive {
    pub id: NoteId,
    /// high, medium or low
    pub priority: String,
    pub title: String,
    /// The body; one over its share of max_tokens ends with a line saying how much was cut
    pub body: String,
    /// auto, agent, user-stated or human
    pub provenance: String,
    /// How far to trust the directive, by its provenance
    pub trust: String,
}

impl Directive {
    pub fn of(view: &NoteView) -> Directive {
        let c = &view.note.content;
        Directive {
            id: view.note.id,
            priority: c.priority.as_str().into(),
            title: c.title.clone(),
            body: c.body.clone(),
            provenance: provenance(view.state.provenance),
            trust: trust_frame(view.state.provenance, c.quote.as_deref()),
        }
    }
}

/// The session-start bundle: the standing directives whole, then the index
/// tier of the notes relevant to the task (or the most recent ones).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ContextOutput {
    /// Every active directive, unranked, with its body
    pub directives: Vec<Directive>,
    /// The directives whose bodies the budget cut
    pub directive_bodies_cut: Vec<NoteId>,
    /// The task the notes are relevant to; empty: they are the most recent ones
    pub task: String,
    /// The notes after the directives
    pub notes: RecallOutput,
}

/// A note written by `remember`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Remembered {
    pub id: NoteId,
    /// agent, or user-stated when the quote bound
    pub provenance: String,
    /// The note it replaced, now superseded
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "NoteId")]
    pub supersedes: Option<NoteId>,
    /// The note it proved wrong, now revoked
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "NoteId")]
    pub contradicts: Option<NoteId>,
    /// `active`, or `proposed`: this workspace reviews what agents write, so
    /// the note (and what it supersedes or contradicts) waits for a person
    pub state: String,
    /// Said when the standing directives no longer fit what the session-start hook delivers whole
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub warning: Option<String>,
}

/// A note's state after a lifecycle event.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NoteStateOutput {
    pub id: NoteId,
    /// active, revoked, stale_flagged, superseded or expired
    pub state: String,
    /// auto, agent, user-stated or human
    pub provenance: String,
}
