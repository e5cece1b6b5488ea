//! `recall`, `expand`, `context` and `reindex` on the command line: the
//! printing around `crate::app::recall`. Every recall answer says what its
//! filters hid and which ranking ran; nothing is hidden silently.

use std::process::ExitCode;

use mnemo_core::index_line::index_line;
use mnemo_core::recall::{RecallRequest, trust_frame};
use mnemo_core::{NoteView, Status};
use serde_json::{Value, json};

use crate::app::recall::{
    Answer, answer_json, context_json, note_with_trust, ranking_line, rerank_setting, run_recall, session_context,
};
use crate::cli::{ContextArgs, Expand, Recall};
use crate::context::Context;
use crate::output::{note_text, print_json, shell_words};
use crate::semantic::Semantic;

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
    request.abstain = !args.all;
    let answer = run_recall(ctx, &mut store, &mut semantic, &text, request, rerank_setting(ctx))?;
    if ctx.json {
        print_json(&answer_json(ctx, &answer));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(abstention) = answer.answer.abstention {
        println!("{}; `mnemo recall --all {}` shows them", abstention.describe(), shell_words(&text));
    } else if answer.views.is_empty() {
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
    if let Some(abstention) = relevant.answer.abstention {
        println!("{}; `mnemo recall --all {}` shows them", abstention.describe(), shell_words(&text));
    }
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
