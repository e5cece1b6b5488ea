//! The review queue on the command line: `review` lists what agents
//! proposed (in full: a reviewer reads the whole note), `accept` and
//! `reject` are a person's verdict, appended through the one write path.

use std::process::ExitCode;

use mnemo_core::review::ProposedLink;
use mnemo_core::{EventKind, Status};
use serde_json::json;

use crate::app::lifecycle::append;
use crate::cli::{Accept, Reject};
use crate::context::{Context, one_line};
use crate::output::{note_json, note_text, print_json};

pub fn list(ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let proposals: Vec<_> =
        store.notes(&ctx.scope(false))?.into_iter().filter(|v| v.state.status == Status::Proposed).collect();
    if ctx.json {
        print_json(&json!({ "proposals": proposals.iter().map(|v| note_json(v, ctx.now)).collect::<Vec<_>>() }));
        return Ok(ExitCode::SUCCESS);
    }
    if proposals.is_empty() {
        let policy = ctx.review();
        let why = if policy.agent_proposes {
            "agents' notes wait here until you accept or reject them"
        } else {
            "agents' notes go live as written; `[review] agent = \"propose\"` in .mnemo/config.toml makes them wait here"
        };
        eprintln!("no proposals in workspace {} ({why})", ctx.workspace.id);
        return Ok(ExitCode::SUCCESS);
    }
    for view in &proposals {
        print!("{}", note_text(view));
        match view.state.status_reason.as_deref().and_then(ProposedLink::from_reason) {
            Some(ProposedLink::Supersedes(old)) => println!("accepting it supersedes #{old}"),
            Some(ProposedLink::Contradicts(old)) => println!("accepting it revokes #{old} (contradicted)"),
            None => {}
        }
        println!();
    }
    let ids: Vec<String> = proposals.iter().map(|v| v.note.id.to_string()).collect();
    eprintln!(
        "{} proposal{} waiting: mnemo accept {} · mnemo reject ID --reason \"why\"",
        proposals.len(),
        if proposals.len() == 1 { "" } else { "s" },
        ids.join(" ")
    );
    Ok(ExitCode::SUCCESS)
}

/// Each id on its own: one refused proposal does not hold back the others.
pub fn accept(ctx: &Context, args: Accept) -> anyhow::Result<ExitCode> {
    let mut results = Vec::new();
    let mut failed = false;
    for id in args.ids {
        match append(ctx, id, EventKind::Accepted, true, None) {
            Ok(state) => {
                if !ctx.json {
                    println!("accepted #{id}");
                }
                results.push(json!({ "id": id, "state": state.status.name(), "provenance": state.provenance }));
            }
            Err(e) => {
                failed = true;
                eprintln!("error: #{id} was not accepted: {}", one_line(&e));
                results.push(json!({ "id": id, "error": one_line(&e) }));
            }
        }
    }
    if ctx.json {
        print_json(&json!({ "accepted": results }));
    }
    Ok(if failed { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

pub fn reject(ctx: &Context, args: Reject) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let state = store.note(&ctx.scope(false), args.id)?.state;
    drop(store);
    let id = args.id;
    match state.status {
        Status::Proposed => {}
        Status::Active | Status::StaleFlagged => {
            anyhow::bail!(
                "#{id} is {}, not a proposal; to withdraw a live note use `mnemo revoke {id} --reason …`",
                state.status
            )
        }
        Status::Revoked => anyhow::bail!(
            "#{id} is already revoked ({}): nothing to reject; `mnemo history {id}` shows when and by whom",
            state.status_reason.as_deref().unwrap_or("no reason given")
        ),
        other => anyhow::bail!("#{id} is {other}, not a proposal: nothing to reject"),
    }
    let state = append(ctx, args.id, EventKind::Revoked, true, Some(args.reason))?;
    if ctx.json {
        print_json(&json!({ "id": args.id, "state": state.status.name() }));
    } else {
        println!("rejected #{} (revoked)", args.id);
    }
    Ok(ExitCode::SUCCESS)
}
