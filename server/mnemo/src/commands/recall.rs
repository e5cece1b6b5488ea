//! `recall`, `expand`, `context` and `reindex`. Every recall answer says
//! what its filters hid and which ranking ran; nothing is hidden silently.

use std::process::ExitCode;

use mnemo_core::index_line::index_line;
use mnemo_core::recall::{RankingMode, RecallAnswer, RecallRequest, trust_frame};
use mnemo_core::{Kind, NoteView, Status};
use mnemo_store::recall::{DEFAULT_POOL, DEFAULT_RERANK};
use mnemo_store::{Scope, Store};
use serde_json::{Value, json};

use crate::cli::{ContextArgs, Expand, Recall};
use crate::context::Context;
use crate::output::{note_json, note_text, print_json};
use crate::semantic::Semantic;

/// A recall run: the answer, the notes it returned, and the ranking that ran.
pub(crate) struct Answer {
    pub(crate) answer: RecallAnswer,
    pub(crate) views: Vec<NoteView>,
    /// Every candidate with its evidence.
    pub(crate) candidates: Vec<mnemo_core::recall::Candidate>,
    pub(crate) mode: RankingMode,
    reason: Option<String>,
    reranked: usize,
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
    // Late interaction reranks the best candidates (hybrid only; a failure
    // keeps the first-stage order).
    let mut late = |texts: &[String]| -> Result<Vec<f64>, String> {
        let embedder = semantic.embedder().ok_or("no model")?;
        embedder.late_scores(text, texts).map_err(|e| e.to_string())
    };
    let outcome = store.recall_reranked(text, vector.as_deref(), &request, DEFAULT_POOL, rerank, Some(&mut late))?;
    let scope = ctx.scope(false);
    let views = outcome.answer.results.iter().map(|r| store.note(&scope, r.id)).collect::<Result<Vec<_>, _>>()?;
    Ok(Answer {
        answer: outcome.answer,
        views,
        candidates: outcome.candidates,
        mode,
        reason,
        reranked: outcome.reranked,
    })
}

/// A note's JSON with its trust frame.
pub(crate) fn note_with_trust(ctx: &Context, view: &NoteView) -> Value {
    let mut note = note_json(view, ctx.now);
    note["trust"] = json!(trust_frame(view.state.provenance, view.note.content.quote.as_deref()));
    note
}

fn ranking_line(a: &Answer) -> String {
    match (&a.reason, a.reranked) {
        (Some(reason), _) => format!("ranking: {} ({reason})", a.mode.name()),
        (None, 0) => format!("ranking: {}", a.mode.name()),
        (None, n) => format!("ranking: {}, the best {n} reranked by late interaction", a.mode.name()),
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
        "ranking": a.mode.name(),
        "ranking_reason": a.reason,
        "reranked": a.reranked,
    })
}

fn print_index(ctx: &Context, a: &Answer) {
    for (index, view) in a.views.iter().enumerate() {
        let line = index_line(&view.note, &view.state, ctx.now);
        match a.answer.results.get(index).and_then(|r| r.via_superseded) {
            Some(old) => println!("{line} (replaces #{old}, which matched)"),
            None => println!("{line}"),
        }
        if let Some(quote) = view.note.content.quote.as_deref() {
            println!("    {}", trust_frame(view.state.provenance, Some(quote)));
        }
    }
}

fn print_expanded(views: &[NoteView]) {
    for (i, view) in views.iter().enumerate() {
        if i > 0 {
            println!("---");
        }
        println!("({})", trust_frame(view.state.provenance, view.note.content.quote.as_deref()));
        print!("{}", note_text(view));
    }
}

pub fn recall(ctx: &Context, args: Recall) -> anyhow::Result<ExitCode> {
    let text = args.query.join(" ");
    let mut store = ctx.open()?;
    let mut semantic = Semantic::load(ctx);
    let mut request = RecallRequest::new(ctx.workspace.id.clone(), args.limit.max(1));
    request.kinds = args.kinds;
    if args.include_stale {
        request.states.push(Status::StaleFlagged.name());
    }
    if args.include_superseded {
        request.states.push("superseded");
    }
    let answer = run_recall(ctx, &mut store, &mut semantic, &text, request, rerank_setting(ctx))?;
    if ctx.json {
        print_json(&answer_json(ctx, &answer));
        return Ok(ExitCode::SUCCESS);
    }
    if answer.views.is_empty() {
        println!("no notes match in workspace {}", ctx.workspace.id);
    } else if args.expand {
        print_expanded(&answer.views);
    } else {
        print_index(ctx, &answer);
    }
    println!("hidden: {}", answer.answer.describe_hidden());
    println!("{}", ranking_line(&answer));
    Ok(ExitCode::SUCCESS)
}

pub fn expand(ctx: &Context, args: Expand) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let scope = ctx.scope(args.all_workspaces);
    let views = args.ids.iter().map(|id| store.note(&scope, *id)).collect::<Result<Vec<_>, _>>()?;
    if ctx.json {
        let notes: Vec<Value> = views.iter().map(|v| note_with_trust(ctx, v)).collect();
        print_json(&json!(notes));
    } else {
        print_expanded(&views);
    }
    Ok(ExitCode::SUCCESS)
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
    mnemo_core::budget::clip_bodies(&mut directives, budget.saturating_mul(4), 2);
    let (mode, reason) = semantic.ranking(store);
    let relevant = if text.trim().is_empty() {
        let mut recent = others;
        recent.reverse();
        recent.truncate(limit);
        Answer { answer: RecallAnswer::default(), views: recent, candidates: Vec::new(), mode, reason, reranked: 0 }
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

pub fn context(ctx: &Context, args: ContextArgs) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    let text = args.query.join(" ");
    let mut semantic = Semantic::load(ctx);
    let (directives, relevant) = session_context(ctx, &mut store, &mut semantic, &text, args.limit, args.budget)?;
    if ctx.json {
        print_json(&context_json(ctx, &directives, &relevant));
        return Ok(ExitCode::SUCCESS);
    }
    println!("## Standing directives ({})", directives.len());
    for view in &directives {
        println!(
            "- [#{}] {} — {}",
            view.note.id,
            view.note.content.title,
            trust_frame(view.state.provenance, view.note.content.quote.as_deref())
        );
        for line in view.note.content.body.lines() {
            println!("  {line}");
        }
    }
    let heading =
        if text.trim().is_empty() { "Recent notes".to_string() } else { format!("Notes relevant to: {text}") };
    println!("\n## {heading}");
    print_index(ctx, &relevant);
    if !text.trim().is_empty() {
        println!("hidden: {}", relevant.answer.describe_hidden());
    }
    println!("{}", ranking_line(&relevant));
    println!("(`mnemo expand ID` shows a note in full)");
    Ok(ExitCode::SUCCESS)
}

pub fn reindex(ctx: &Context) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    let mut semantic = Semantic::load(ctx);
    let identity = match semantic.embedder() {
        Some(embedder) => embedder.identity().to_string(),
        None => {
            let (_, reason) = semantic.ranking(&store);
            anyhow::bail!("cannot reindex without a model: {}", reason.unwrap_or_default());
        }
    };
    let notes = store.note_texts()?;
    let texts: Vec<(&str, &str)> = notes.iter().map(|n| (n.title.as_str(), n.body.as_str())).collect();
    let (vectors, model) = semantic.embed_notes(&texts).map_err(anyhow::Error::msg)?.expect("the model is loaded");
    store.write(|w| {
        w.clear_vectors()?;
        for (note, vector) in notes.iter().zip(&vectors) {
            w.put_vectors(note.id, &note.workspace, vector, &model)?;
        }
        Ok(())
    })?;
    if ctx.json {
        print_json(&json!({ "notes": notes.len(), "model": identity }));
    } else {
        println!("re-embedded {} notes with {identity}", notes.len());
    }
    Ok(ExitCode::SUCCESS)
}
