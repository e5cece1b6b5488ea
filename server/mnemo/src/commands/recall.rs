//! `recall`, `expand`, `context` and `reindex` on the command line: the
//! printing around `crate::app::recall`. Every recall answer says what its
//! filters hid and which ranking ran; nothing is hidden silently.

use std::process::ExitCode;

use mnemo_store::ledger::Shown;

use mnemo_core::index_line::index_line;
use mnemo_core::recall::{RecallRequest, trust_frame};
use mnemo_core::{Kind, NoteView, Status};
use serde_json::{Value, json};

use crate::app::recall::{
    Answer, answer_json, context_json, note_with_trust, ranking_line, rerank_setting, run_recall, session_context,
};
use crate::cli::{ContextArgs, DEFAULT_LIMIT, Expand, Recall};
use crate::context::Context;
use crate::output::{note_text, print_json, shell_words};
use crate::semantic::Semantic;

fn print_index(ctx: &Context, a: &Answer) {
    for line in index_lines(ctx, a) {
        println!("{line}");
    }
}

/// One index line per note of `a` (and its quote's frame, when bound).
fn index_lines(ctx: &Context, a: &Answer) -> Vec<String> {
    let mut lines = Vec::new();
    for (index, view) in a.views.iter().enumerate() {
        let line = index_line(&view.note, &view.state, ctx.now);
        lines.push(match a.answer.results.get(index).and_then(|r| r.via_superseded) {
            Some(old) => format!("{line} (replaces #{old}, which matched)"),
            None => line,
        });
        if let Some(quote) = view.note.content.quote.as_deref() {
            lines.push(format!("    {}", trust_frame(view.state.provenance, Some(quote))));
        }
    }
    lines
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

/// The command that shows what an abstention held back: the same recall
/// with `--all` — the store and workspace when they were named, every
/// option kept — and the query after `--`, so one starting with `-` stays a
/// query.
fn held_back_command(ctx: &Context, kinds: &[Kind], limit: usize, flags: &[&str], query: &str) -> String {
    let mut words: Vec<String> = vec!["mnemo".into()];
    if ctx.named.store {
        words.extend(["--store".into(), shell_words(&ctx.store_path.display().to_string())]);
    }
    if ctx.named.workspace {
        words.extend(["--workspace".into(), shell_words(&ctx.workspace.id)]);
    }
    words.extend(["recall".into(), "--all".into()]);
    words.extend(kinds.iter().map(|kind| format!("--kind {}", kind.as_str())));
    if limit != DEFAULT_LIMIT {
        words.push(format!("--limit {limit}"));
    }
    words.extend(flags.iter().map(|flag| flag.to_string()));
    if query.starts_with('-') {
        words.push("--".into());
    }
    words.push(shell_words(query));
    words.join(" ")
}

/// The query as typed, with control characters shown as pictures (as in
/// notes) so none drives the terminal it is echoed to; refused when blank.
fn query_text(words: &[String]) -> anyhow::Result<String> {
    let text = mnemo_core::model::neutralize_controls(&words.join(" "));
    if text.trim().is_empty() {
        anyhow::bail!(
            "recall needs a query: what you are about to do or want to know (`mnemo context` gives the session-start bundle without one)"
        );
    }
    Ok(text)
}

pub fn recall(ctx: &Context, args: Recall) -> anyhow::Result<ExitCode> {
    let text = query_text(&args.query)?;
    let mut store = ctx.open()?;
    let mut semantic = Semantic::load(ctx);
    let mut request = RecallRequest::new(ctx.workspace.id.clone(), args.limit.max(1));
    request.kinds = args.kinds.clone();
    if args.include_stale {
        request.states.push(Status::StaleFlagged.name());
    }
    if args.include_superseded {
        request.states.push("superseded");
    }
    request.abstain = !args.all;
    let answer = run_recall(ctx, &mut store, &mut semantic, &text, request, rerank_setting(ctx))?;
    if ctx.json {
        print_json(&answer_json(ctx, &answer));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(abstention) = answer.answer.abstention {
        let flags: Vec<&str> = [
            (args.include_stale, "--include-stale"),
            (args.include_superseded, "--include-superseded"),
            (args.expand, "--expand"),
        ]
        .into_iter()
        .filter_map(|(on, flag)| on.then_some(flag))
        .collect();
        let again = held_back_command(ctx, &args.kinds, args.limit, &flags, &text);
        println!("{}; `{again}` shows them", abstention.describe());
    } else if answer.views.is_empty() {
        println!("no notes match in workspace {}", ctx.workspace.id);
    } else if args.expand {
        print_expanded(&answer.views);
    } else {
        print_index(ctx, &answer);
    }
    if let Some(unconfident) = answer.answer.describe_unconfident() {
        println!("{unconfident}");
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

pub fn context(ctx: &Context, args: ContextArgs) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    let text = mnemo_core::model::neutralize_controls(&args.query.join(" "));
    let mut semantic = Semantic::load(ctx);
    let (directives, relevant) = session_context(ctx, &mut store, &mut semantic, &text, args.limit, args.budget)?;
    // What an agent that runs `mnemo context` is told, in the ledger.
    let mut told: Vec<(i64, Shown)> = directives.iter().map(|v| (v.note.id, Shown::Full)).collect();
    told.extend(relevant.views.iter().map(|v| (v.note.id, Shown::Listed)));
    let printed = if ctx.json {
        serde_json::to_string_pretty(&context_json(ctx, &directives, &relevant)).expect("JSON values serialise") + "\n"
    } else {
        context_text(ctx, &directives, &relevant, &text, args.limit)
    };
    // What was printed is what is recorded: its size, exactly.
    crate::app::ledger::record(ctx, &mut store, "cli", "context", told, printed.len());
    print!("{printed}");
    Ok(ExitCode::SUCCESS)
}

/// `mnemo context` for people and agents that read text.
fn context_text(ctx: &Context, directives: &[NoteView], relevant: &Answer, text: &str, limit: usize) -> String {
    let mut out = vec![format!("## Standing directives ({})", directives.len())];
    for view in directives {
        let frame = trust_frame(view.state.provenance, view.note.content.quote.as_deref());
        out.push(format!("- [#{}] {} — {frame}", view.note.id, view.note.content.title));
        out.extend(view.note.content.body.lines().map(|line| format!("  {line}")));
    }
    let heading =
        if text.trim().is_empty() { "Recent notes".to_string() } else { format!("Notes relevant to: {text}") };
    out.push(format!("\n## {heading}"));
    out.extend(index_lines(ctx, relevant));
    if let Some(abstention) = relevant.answer.abstention {
        let again = held_back_command(ctx, &[], limit, &[], text);
        out.push(format!("{}; `{again}` shows them", abstention.describe()));
    }
    if !text.trim().is_empty() {
        out.push(format!("hidden: {}", relevant.answer.describe_hidden()));
    }
    out.push(ranking_line(relevant));
    out.push("(`mnemo expand ID` shows a note in full)".into());
    out.join("\n") + "\n"
}

pub fn reindex(ctx: &Context) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    let mut semantic = Semantic::load_here(ctx);
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
