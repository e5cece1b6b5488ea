//! `mnemo import jsonl FILE`: bulk import in one transaction; `mnemo import
//! claude-md FILE` / `agents-md FILE`: a person's instruction file as
//! directives (provenance human), idempotent on re-import; `mnemo import
//! vectr DB`: a vectr store replayed as events, idempotent on re-import.

use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use crate::cli::ImportCommand;
use crate::context::Context;
use crate::output::print_json;
use crate::semantic::Semantic;
use mnemo_store::import_jsonl;

pub fn run(ctx: &Context, command: ImportCommand) -> anyhow::Result<ExitCode> {
    let (file, person) = match command {
        ImportCommand::Jsonl { file, person } => (file, person),
        ImportCommand::ClaudeMd { file } | ImportCommand::AgentsMd { file } => return instructions(ctx, &file),
        ImportCommand::Vectr { db, from_workspace } => return vectr(ctx, &db, from_workspace.as_deref()),
    };
    let reader =
        std::fs::File::open(&file).with_context(|| format!("cannot open {}; check the path", file.display()))?;
    let mut store = ctx.open()?;
    // Opening for writing expires this workspace's due notes first.
    ctx.write(&mut store, |_| Ok(()))?;
    let prepared = import_jsonl::prepare(std::io::BufReader::new(reader), Context::actor(person.as_human))?;
    // Embed before the write, in batches, so the transaction stays short.
    let embedded = Semantic::load_here(ctx).embed_for_import(&store, &prepared.texts());
    let vectors = embedded.as_ref().map(|(v, model)| (v.as_slice(), model.as_str()));
    let report = import_jsonl::write(&mut store, prepared, ctx.now, vectors)?;
    ctx.after_write(&store);
    if ctx.json {
        print_json(
            &json!({ "notes": report.notes, "events": report.events, "embedded": embedded.is_some(), "ids": report.ids }),
        );
    } else {
        let how = if embedded.is_some() { "embedded" } else { "not embedded: no model" };
        println!("imported {} notes ({} events, {how}) from {}", report.notes, report.events, file.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn vectr(ctx: &Context, db: &std::path::Path, from: Option<&str>) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    ctx.write(&mut store, |_| Ok(()))?;
    let workspace = ctx.workspace.id.clone();
    let prepared = mnemo_store::import_vectr::prepare(&store, db, from, &workspace, ctx.workspace.root.as_deref())?;
    let embedded = Semantic::load_here(ctx).embed_for_import(&store, &prepared.texts());
    let vectors = embedded.as_ref().map(|(v, model)| (v.as_slice(), model.as_str()));
    let report = mnemo_store::import_vectr::write(&mut store, &workspace, prepared, ctx.now, vectors)?;
    ctx.after_write(&store);
    for line in &report.not_applied {
        eprintln!("note: not applied: {line}");
    }
    if ctx.json {
        print_json(&serde_json::to_value(&report)?);
    } else {
        println!(
            "imported {} notes ({} events) from {}; {} already imported; {} events not applied",
            report.notes,
            report.events,
            db.display(),
            report.already_imported,
            report.not_applied.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Each rule of an instruction file becomes a directive, unless the
/// workspace already has a live directive with that title.
fn instructions(ctx: &Context, file: &std::path::Path) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}; check the path", file.display()))?;
    let rules = mnemo_core::instructions::rules(&text);
    let mut store = ctx.open()?;
    let scope = ctx.scope(false);
    let existing: std::collections::HashSet<String> = store
        .notes(&scope)?
        .into_iter()
        .filter(|v| v.note.content.kind == mnemo_core::Kind::Directive)
        .filter(|v| matches!(v.state.status, mnemo_core::Status::Active | mnemo_core::Status::StaleFlagged))
        .map(|v| v.note.content.title)
        .collect();
    let mut semantic = Semantic::load_here(ctx);
    let mut created = Vec::new();
    for rule in rules {
        let title = mnemo_core::model::normalize_title(&rule.title);
        if existing.contains(&title) || created.iter().any(|(_, t): &(i64, String)| *t == title) {
            continue;
        }
        let note = mnemo_core::NewNote {
            kind: mnemo_core::Kind::Directive,
            priority: mnemo_core::Priority::High,
            title: title.clone(),
            body: rule.body,
            provenance: mnemo_core::Provenance::Human,
            quote: None,
            anchors: Vec::new(),
        };
        let id = crate::app::remember::create_note(ctx, &mut store, &mut semantic, note, mnemo_core::Actor::Human)?;
        created.push((id, title));
    }
    if ctx.json {
        print_json(&json!({ "created": created.iter().map(|(id, _)| id).collect::<Vec<_>>() }));
    } else {
        for (id, title) in &created {
            println!("#{id} {title}");
        }
        println!("{} directives imported from {}", created.len(), file.display());
    }
    Ok(ExitCode::SUCCESS)
}
