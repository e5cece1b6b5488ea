//! Recall as every entry point runs it (CLI `recall`/`context`, MCP tools,
//! the user-prompt hook): the store's two stages with this process's model,
//! the session-start bundle, what is relevant enough to push unasked, and
//! the answer as JSON (one shape for the CLI's `--json` and MCP).

use mnemo_core::recall::{RankingMode, RecallAnswer, RecallRequest, trust_frame};
use mnemo_core::{Kind, NoteView, Status};
use mnemo_store::recall::{DEFAULT_POOL, DEFAULT_RERANK};
use mnemo_store::{Scope, Store};
use serde_json::{Value, json};

use crate::context::Context;
use crate::output::note_json;
use crate::semantic::Semantic;

/// A recall run: the answer, the notes it returned, and the ranking that ran.
pub(crate) struct Answer {
    pub(crate) answer: RecallAnswer,
    pub(crate) views: Vec<NoteView>,
    /// Every candidate with its evidence.
    pub(crate) candidates: Vec<mnemo_core::recall::Candidate>,
    pub(crate) mode: RankingMode,
    /// Why the ranking is lexical only, when it is.
    pub(crate) reason: Option<String>,
    /// How many candidates late interaction reranked.
    pub(crate) reranked: usize,
    /// How many distinct words of a long query were not searched for
    /// (`mnemo_store::QUERY_WORDS`).
    pub(crate) words_left_out: usize,
}

/// How many candidates late interaction reranks for this workspace
/// (`[recall] rerank`; a broken config was reported when it was read).
pub(crate) fn rerank_setting(ctx: &Context) -> usize {
    ctx.config().map_or(DEFAULT_RERANK, |c| c.recall.rerank)
}

/// Recall `text`; `rerank` of the hybrid's best candidates are reranked by
/// late interaction (0: the first stage only, as the hooks do for speed).
pub(crate) fn run_recall(
    ctx: &Context,
    store: &mut Store,
    semantic: &mut Semantic,
    text: &str,
    mut request: RecallRequest,
    rerank: usize,
) -> anyhow::Result<Answer> {
    if let Err(e) = semantic.catch_up(store, &Scope::All) {
        eprintln!("warning: could not embed notes written without a model: {e}");
    }
    let (mode, reason) = semantic.ranking(store);
    request.mode = mode;
    let vector = match mode {
        RankingMode::LexicalOnly => None,
        _ => semantic.embedder().and_then(|e| e.embed(&[text]).ok()).and_then(|mut v| v.pop()),
    };
    // Late interaction reranks the best candidates (hybrid only; without the
    // query's token vectors the first-stage order stands).
    let query_tokens = if mode == RankingMode::Hybrid && rerank > 0 { semantic.query_tokens(text) } else { None };
    let outcome =
        store.recall_reranked(text, vector.as_deref(), &request, DEFAULT_POOL, rerank, query_tokens.as_ref())?;
    let scope = ctx.scope(false);
    let views = outcome.answer.results.iter().map(|r| store.note(&scope, r.id)).collect::<Result<Vec<_>, _>>()?;
    Ok(Answer {
        answer: outcome.answer,
        views,
        candidates: outcome.candidates,
        mode,
        reason,
        reranked: outcome.reranked,
        words_left_out: mnemo_store::words_left_out(text),
    })
}

/// A note's JSON with its trust frame.
pub(crate) fn note_with_trust(ctx: &Context, view: &NoteView) -> Value {
    let mut note = note_json(view, ctx.now);
    note["trust"] = json!(trust_frame(view.state.provenance, view.note.content.quote.as_deref()));
    note
}

/// How the answer was ranked, for people: `ranking: hybrid, the best 30 reranked by late interaction`.
/// A query too long to search whole says which of its words were searched.
pub(crate) fn ranking_line(a: &Answer) -> String {
    let ranking = mnemo_core::recall::describe_ranking(a.mode, a.reason.as_deref(), a.reranked, None);
    match a.words_left_out {
        0 => format!("ranking: {ranking}"),
        left_out => format!(
            "ranking: {ranking}; the query's words searched by text: its first and last {} of {} (the rest left out)",
            mnemo_store::QUERY_WORDS / 2,
            mnemo_store::QUERY_WORDS + left_out
        ),
    }
}

pub(crate) fn answer_json(ctx: &Context, a: &Answer) -> Value {
    let results: Vec<Value> = a
        .views
        .iter()
        .enumerate()
        .map(|(index, view)| {
            let ranked = a.answer.results.get(index);
            let mut note = note_with_trust(ctx, view);
            note["score"] = json!(ranked.map(|r| r.score));
            note["replaces"] = json!(ranked.and_then(|r| r.via_superseded));
            note
        })
        .collect();
    json!({
        "results": results,
        "hidden": a.answer.hidden,
        "hidden_stale": a.answer.hidden_stale,
        "hidden_superseded": a.answer.hidden_superseded.iter().map(|(id, s)| json!({"id": id, "successor": s})).collect::<Vec<_>>(),
        "abstention": a.answer.abstention.map(|x| json!({
            "held_back": x.held_back,
            "best_similarity": x.best_similarity,
            "message": x.describe(),
        })),
        "unconfident": a.answer.unconfident,
        "ranking": a.mode.name(),
        "ranking_reason": a.reason,
        "reranked": a.reranked,
    })
}

/// The session-start bundle: every active directive (never ranked; their
/// bodies share `budget` tokens and one over its share is cut, saying so),
/// then the notes relevant to `text` (or the most recent ones).
pub(crate) fn session_context(
    ctx: &Context,
    store: &mut Store,
    semantic: &mut Semantic,
    text: &str,
    limit: usize,
    budget: usize,
) -> anyhow::Result<(Vec<NoteView>, Answer)> {
    let (mut directives, others): (Vec<NoteView>, Vec<NoteView>) = store
        .notes(&ctx.scope(false))?
        .into_iter()
        .filter(|v| v.state.status == Status::Active)
        .partition(|v| v.note.content.kind == Kind::Directive);
    mnemo_core::delivery::by_priority(&mut directives);
    mnemo_core::budget::clip_bodies(&mut directives, budget.saturating_mul(4), 2);
    let (mode, reason) = semantic.ranking(store);
    let relevant = if text.trim().is_empty() {
        let mut recent = others;
        recent.reverse();
        recent.truncate(limit);
        Answer {
            answer: RecallAnswer::default(),
            views: recent,
            candidates: Vec::new(),
            mode,
            reason,
            reranked: 0,
            words_left_out: 0,
        }
    } else {
        let mut request = RecallRequest::new(ctx.workspace.id.clone(), limit.max(1));
        request.kinds = Kind::ALL.iter().copied().filter(|k| *k != Kind::Directive).collect();
        let mut answer = run_recall(ctx, store, semantic, text, request, rerank_setting(ctx))?;
        answer.answer.hidden.remove("other kind");
        answer
    };
    Ok((directives, relevant))
}

/// The bundle as JSON: the directives with their trust frames, then the answer.
pub(crate) fn context_json(ctx: &Context, directives: &[NoteView], relevant: &Answer) -> Value {
    let directives: Vec<Value> = directives.iter().map(|v| note_with_trust(ctx, v)).collect();
    let mut body = answer_json(ctx, relevant);
    body["directives"] = json!(directives);
    body
}

/// The recalled notes relevant enough to push unasked (the note itself, or
/// the superseded note it inherited its rank from, matched well enough); a
/// prompt about nothing in the memory gets nothing.
pub(crate) fn relevant_enough(answer: Answer) -> Vec<NoteView> {
    use mnemo_core::recall::relevance;
    let evidence: std::collections::HashMap<_, _> = answer.candidates.iter().map(|c| (c.id, c)).collect();
    let passes = |id| evidence.get(&id).is_some_and(|c| relevance::confident(c, answer.mode));
    answer
        .views
        .into_iter()
        .zip(&answer.answer.results)
        .filter(|(_, ranked)| passes(ranked.id) || ranked.via_superseded.is_some_and(passes))
        .map(|(view, _)| view)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_too_long_to_search_whole_says_so() {
        let answer = |words_left_out| Answer {
            answer: RecallAnswer::default(),
            views: Vec::new(),
            candidates: Vec::new(),
            mode: RankingMode::LexicalOnly,
            reason: None,
            reranked: 0,
            words_left_out,
        };
        assert!(!ranking_line(&answer(0)).contains("words searched"));
        let long = ranking_line(&answer(41_000));
        assert!(long.ends_with("its first and last 500 of 42000 (the rest left out)"), "{long}");
    }
}
