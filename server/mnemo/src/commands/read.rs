//! `show`, `history` and `list`: reads scoped to the workspace unless
//! `--all-workspaces` is given; `list` says what its filters hid.

use std::process::ExitCode;

use mnemo_core::index_line::index_line;
use mnemo_store::ListFilter;
use serde_json::json;

use crate::cli::{List, NoteRef};
use crate::context::Context;
use crate::output::{event_json, event_text, note_json, note_text, print_json};

pub fn show(ctx: &Context, args: NoteRef) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let view = store.note(&ctx.scope(args.all_workspaces), args.id)?;
    if ctx.json {
        print_json(&note_json(&view, ctx.now));
    } else {
        print!("{}", note_text(&view));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn history(ctx: &Context, args: NoteRef) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let events = store.history(&ctx.scope(args.all_workspaces), args.id)?;
    if ctx.json {
        print_json(&json!(events.iter().map(event_json).collect::<Vec<_>>()));
    } else {
        for event in &events {
            println!("{}", event_text(event));
        }
        let (count, latest) = store.deliveries_of(&ctx.scope(args.all_workspaces), args.id)?;
        match latest {
            Some(d) => println!(
                "delivered to agents {count} time{}, last {} ({}, session {}); `mnemo ledger --note {}` lists them",
                if count == 1 { "" } else { "s" },
                d.at.rfc3339(),
                d.moment,
                d.session,
                args.id
            ),
            None => println!("never delivered to an agent"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn list(ctx: &Context, args: List) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let views = store.notes(&ctx.scope(args.all_workspaces))?;
    let filter = ListFilter { kind: args.kind, status: args.state };
    let (views, hidden) = filter.apply(views);
    if ctx.json {
        let notes: Vec<_> = views.iter().map(|v| note_json(v, ctx.now)).collect();
        print_json(&json!({ "notes": notes, "hidden": hidden }));
        return Ok(ExitCode::SUCCESS);
    }
    for view in &views {
        let line = index_line(&view.note, &view.state, ctx.now);
        if args.all_workspaces {
            println!("{line} · {}", view.note.workspace);
        } else {
            println!("{line}");
        }
    }
    if !hidden.is_empty() {
        let total: usize = hidden.values().sum();
        let parts: Vec<String> = hidden.iter().map(|(why, n)| format!("{n} {why}")).collect();
        eprintln!("{total} more hidden by the filters: {}", parts.join(", "));
    }
    if views.is_empty() && hidden.is_empty() {
        eprintln!("no notes in workspace {}", ctx.workspace.id);
    }
    Ok(ExitCode::SUCCESS)
}
