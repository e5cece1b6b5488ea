//! The lifecycle commands on the command line: revoke, supersede,
//! flag-stale, reinstate, promote, expire and forget — arguments into
//! `crate::app::lifecycle`, the new state out. The core decides whether a
//! transition is legal.

use std::process::ExitCode;

use anyhow::bail;
use mnemo_core::review::ProposedLink;
use mnemo_core::{EventKind, NewNote, NoteState, Provenance};
use serde_json::json;

use crate::app::lifecycle::append;
use crate::app::remember::{bind_provenance, capture_anchors, say_proposed};
use crate::cli::{Action, Forget, Supersede, WithReason};
use crate::context::Context;
use crate::output::print_json;
use crate::semantic::Semantic;

fn report(ctx: &Context, id: i64, verb: &str, state: &NoteState) -> ExitCode {
    if ctx.json {
        print_json(&json!({ "id": id, "state": state.status.name(), "provenance": state.provenance }));
    } else {
        println!("{verb} #{id}");
    }
    ExitCode::SUCCESS
}

pub fn revoke(ctx: &Context, args: WithReason) -> anyhow::Result<ExitCode> {
    let state = append(ctx, args.id, EventKind::Revoked, args.person.as_human, Some(args.reason))?;
    Ok(report(ctx, args.id, "revoked", &state))
}

pub fn flag_stale(ctx: &Context, args: WithReason) -> anyhow::Result<ExitCode> {
    let state = append(ctx, args.id, EventKind::StaleFlagged, args.person.as_human, Some(args.reason))?;
    Ok(report(ctx, args.id, "flagged stale", &state))
}

pub fn reinstate(ctx: &Context, args: Action) -> anyhow::Result<ExitCode> {
    let state = append(ctx, args.id, EventKind::Reinstated, args.person.as_human, args.reason)?;
    Ok(report(ctx, args.id, "reinstated", &state))
}

pub fn expire(ctx: &Context, args: Action) -> anyhow::Result<ExitCode> {
    let state = append(ctx, args.id, EventKind::Expired, args.person.as_human, args.reason)?;
    Ok(report(ctx, args.id, "expired", &state))
}

pub fn promote(ctx: &Context, args: Action) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let current = store.note(&ctx.scope(false), args.id)?.state.provenance;
    drop(store);
    // Promotion is one step up; the core refuses anything else, including
    // an agent asking for `human`.
    let to = current.promotion().unwrap_or(Provenance::Human);
    let state = append(ctx, args.id, EventKind::Promoted { to }, args.person.as_human, args.reason)?;
    if !ctx.json {
        println!("promoted #{} to {}", args.id, state.provenance);
        return Ok(ExitCode::SUCCESS);
    }
    Ok(report(ctx, args.id, "promoted", &state))
}

pub fn supersede(ctx: &Context, args: Supersede) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    let scope = ctx.scope(false);
    let old = store.note(&scope, args.id)?.note.content;
    let anchors = if args.anchors.is_empty() { old.anchors } else { capture_anchors(ctx, &args.anchors)? };
    let body = args.body.unwrap_or(old.body);
    let requested = if args.person.as_human { Provenance::Human } else { Provenance::Agent };
    let (provenance, quote) = bind_provenance(requested, &args.title, &body, args.user_message.as_deref());
    let replacement = NewNote {
        kind: args.kind.unwrap_or(old.kind),
        priority: args.priority.unwrap_or(old.priority),
        title: args.title,
        body,
        provenance,
        quote,
        anchors,
    };
    let actor = Context::actor(args.person.as_human);
    let vectors = Semantic::load(ctx).vectors_for_new_note(&store, &replacement.title, &replacement.body);
    // Under review an agent's replacement is a proposal: the old note stands until it is accepted.
    let proposes = ctx.review().proposes(actor, replacement.kind);
    let new_id = ctx.write(&mut store, |w| {
        let new_id = match proposes {
            true => {
                let link = Some(ProposedLink::Supersedes(args.id));
                w.propose(&scope, &ctx.workspace.id, replacement, actor, ctx.now, link)?
            }
            false => w.supersede(&scope, args.id, replacement, actor, ctx.now, args.reason)?,
        };
        if let Some((vectors, model)) = &vectors {
            w.put_vectors(new_id, &ctx.workspace.id, vectors, model)?;
        }
        Ok(new_id)
    })?;
    let state = if proposes { "proposed" } else { "active" };
    if ctx.json {
        print_json(&json!({ "id": new_id, "supersedes": args.id, "state": state }));
    } else {
        println!("#{new_id}");
    }
    if proposes {
        say_proposed(new_id);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn forget(ctx: &Context, args: Forget) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    let scope = ctx.scope(false);
    let events = store.history(&scope, args.id)?.len();
    if !args.confirm {
        bail!(
            "forget deletes #{} and its {events} events for good; pass --confirm to do it, or revoke it instead",
            args.id
        );
    }
    ctx.write(&mut store, |w| w.forget(&scope, args.id))?;
    if !store.checkpoint()? {
        eprintln!(
            "warning: another process is reading the store, so earlier copies of #{} stay in its write-ahead log until the next checkpoint",
            args.id
        );
    }
    if ctx.json {
        print_json(&json!({ "id": args.id, "forgotten": true, "events_deleted": events }));
    } else {
        println!("forgot #{} ({events} events deleted)", args.id);
    }
    Ok(ExitCode::SUCCESS)
}
