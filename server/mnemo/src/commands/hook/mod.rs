//! `mnemo hook <moment>`: the harness pushes memory into the agent's context
//! at fixed moments, because agents asked to recall on their own rarely do.
//!
//! - session-start: every active directive in full (never cut), the kinds
//!   configured for it in full, then the most recent notes listed one line
//!   each, within the budget; a resumed session gets only what changed;
//! - user-prompt: keeps the prompt as the session's current user message (a
//!   later `remember` that states it binds the quote), delivers the notes
//!   relevant to it — relevant enough to push unasked
//!   (`mnemo_core::recall::relevance`), so an off-topic prompt gets nothing;
//! - pre-edit: the notes anchored to the files about to be edited or naming
//!   them, of the kinds delivered there (gotchas and operational notes),
//!   with their bodies;
//! - post-compaction: the directives again; the session forgets what it was
//!   told, since the agent's context did.
//!
//! This is the adapter: what the harness sent is [`payload`]'s business,
//! what the moment delivers is `crate::app::deliver`'s (the selection and
//! printing rules are pure, in `mnemo_core::delivery`; which kinds each
//! moment delivers is the workspace's trigger bundles, `[hooks.triggers]`). A JSON payload (Claude Code, Codex) is answered
//! with `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`,
//! plain text with plain text; a hook with nothing to add prints nothing.
//! Before an edit by a tool call, the notes come as the reason the call is
//! held once ([`HELD`]): both harnesses show a PreToolUse hook's context to
//! the model only after the edit is made.

mod install;
mod payload;

use std::io::Read;
use std::process::ExitCode;

use mnemo_core::delivery::{Budget, HELD};
use mnemo_core::triggers::Moment;
use serde_json::json;

use crate::app::deliver::{Occasion, deliver};
use crate::cli::{Delivery, HookCommand};
use crate::context::Context;
use payload::Payload;

pub fn run(ctx: &Context, command: HookCommand) -> anyhow::Result<ExitCode> {
    let (moment, Delivery { budget, explain }) = match command {
        HookCommand::Install(args) => return install::run(ctx, &args),
        HookCommand::SessionStart(d) => (Moment::SessionStart, d),
        HookCommand::UserPrompt(d) => (Moment::UserPrompt, d),
        HookCommand::PreEdit(d) => (Moment::PreEdit, d),
        HookCommand::PostCompaction(d) => (Moment::PostCompaction, d),
    };
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    let payload = Payload::parse(input);
    let cwd = payload.cwd(&std::env::current_dir().unwrap_or_default());
    let root = ctx.workspace.root.as_deref();
    let occasion = Occasion {
        moment,
        session: payload.session_id().unwrap_or("default"),
        source: payload.source(),
        prompt: payload.prompt(),
        files: payload.edited_paths().iter().map(|p| payload::workspace_relative(p, &cwd, root)).collect(),
    };
    let mut why = Vec::new();
    let text = deliver(ctx, &occasion, Budget::from_tokens(budget), &mut why)?.join("\n");
    if explain {
        if text.is_empty() {
            eprintln!("mnemo: {moment} delivers nothing:");
        }
        for reason in &why {
            eprintln!("- {reason}");
        }
    }
    if text.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let output = match payload.event_name() {
        // Claude Code and Codex show a PreToolUse hook's additionalContext
        // beside the tool's result, after the edit is made; only a held
        // (denied) call's reason reaches the model before it.
        Some(event) if moment == Moment::PreEdit && payload.tool_name().is_some() => json!({
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "deny",
                "permissionDecisionReason": format!("{text}\n\n{HELD}"),
            }
        })
        .to_string(),
        Some(event) => {
            json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }).to_string()
        }
        None => text,
    };
    println!("{output}");
    Ok(ExitCode::SUCCESS)
}
