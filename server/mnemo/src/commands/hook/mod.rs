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
//! Which kinds each moment delivers is the workspace's trigger bundles
//! (`[hooks.triggers]`, default ladder in `mnemo_core::triggers`); what a
//! session was told already is [`deliver`]'s business; what the harness
//! sent is [`payload`]'s. A JSON payload (Claude Code, Codex) is answered
//! with `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`,
//! plain text with plain text; a hook with nothing to add prints nothing.
//! Before an edit by a tool call, the notes come as the reason the call is
//! held once ([`HELD`]): both harnesses show a PreToolUse hook's context to
//! the model only after the edit is made.

mod deliver;
mod install;
mod payload;

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use mnemo_core::recall::{RecallRequest, relevance};
use mnemo_core::triggers::{Moment, TriggerBundles};
use mnemo_core::{Kind, NoteView, Status};
use serde_json::json;

use crate::cli::{Delivery, HookCommand};
use crate::commands::recall::run_recall;
use crate::commands::session;
use crate::context::Context;
use crate::semantic::Semantic;
use deliver::Budget;
use payload::Payload;

pub fn run(ctx: &Context, command: HookCommand) -> anyhow::Result<ExitCode> {
    let (moment, Delivery { budget }) = match command {
        HookCommand::Install(args) => return install::run(ctx, &args),
        HookCommand::SessionStart(d) => (Moment::SessionStart, d),
        HookCommand::UserPrompt(d) => (Moment::UserPrompt, d),
        HookCommand::PreEdit(d) => (Moment::PreEdit, d),
        HookCommand::PostCompaction(d) => (Moment::PostCompaction, d),
    };
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    let payload = Payload::parse(input);
    let text = deliver_at(ctx, moment, &payload, Budget::from_tokens(budget))?;
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

/// Why an edit was held, for the agent: once per note version and session.
pub const HELD: &str = "mnemo held this edit once, so that these notes reach you before it is made rather than \
after. If they change nothing, make the same edit again: mnemo will not hold it for these notes again in this session.";

/// What the hook of `moment` tells the agent, recorded in its session.
fn deliver_at(ctx: &Context, moment: Moment, payload: &Payload, mut budget: Budget) -> anyhow::Result<String> {
    let session_path = session::session_file(ctx, payload.session_id().unwrap_or("default"));
    let mut session = session::load(&session_path);
    session.workspace = Some(ctx.workspace.id.clone());
    session.ancestors = crate::process_tree::ancestors();
    let triggers = match ctx.config() {
        Ok(config) => config.triggers.clone(),
        Err(e) => {
            eprintln!("mnemo: {e}; delivering the default trigger bundles");
            TriggerBundles::default()
        }
    };
    let mut store = ctx.open()?;
    // Every note of the workspace, for the moments that filter them (not for
    // prompt recall, which runs before every prompt and asks the index).
    let all_notes = |store: &mnemo_store::Store| store.notes(&ctx.scope(false));
    let active_of = |views: &[NoteView], kinds: &[Kind]| -> Vec<NoteView> {
        views
            .iter()
            .filter(|v| kinds.contains(&v.note.content.kind) && v.state.status == Status::Active)
            .cloned()
            .collect()
    };
    let mut lines: Vec<String> = Vec::new();
    match moment {
        Moment::SessionStart | Moment::PostCompaction => {
            if moment == Moment::PostCompaction {
                session.listed.clear();
                session.delivered.clear();
            }
            let views = all_notes(&store)?;
            let always = triggers.kinds_at(moment);
            // A resumed conversation still holds what its session start delivered.
            let resumed = moment == Moment::SessionStart && payload.source() == Some("resume");
            let unless_held = |notes: Vec<NoteView>, session: &session::SessionState| {
                if resumed { deliver::not_yet_delivered(notes, session) } else { notes }
            };
            let directives = unless_held(active_of(&views, &[Kind::Directive]), &session);
            let directives = deliver::in_full(ctx, &directives, false, &mut session, &mut budget);
            if !directives.is_empty() {
                lines.push("Standing directives for this project (mnemo):".into());
                lines.extend(directives);
            }
            let others: Vec<Kind> = always.iter().copied().filter(|k| *k != Kind::Directive).collect();
            let configured = unless_held(active_of(&views, &others), &session);
            let configured = deliver::in_full(ctx, &configured, false, &mut session, &mut budget);
            if !configured.is_empty() {
                lines.push(format!("Delivered at every {moment} by .mnemo/config.toml [hooks.triggers] (mnemo):"));
                lines.extend(configured);
            }
            let mut recent: Vec<NoteView> = views
                .iter()
                .filter(|v| v.state.status == Status::Active && !always.contains(&v.note.content.kind))
                .filter(|v| Moment::ALL.iter().any(|&m| triggers.delivers(v.note.content.kind, m)))
                .cloned()
                .collect();
            recent.reverse();
            let index = deliver::listed(ctx, &recent, &mut session, &mut budget);
            if !index.is_empty() {
                lines.push("Recent notes (`mnemo expand ID` or the expand tool shows one in full):".into());
                lines.extend(index);
            }
        }
        Moment::UserPrompt => {
            let prompt = payload.prompt();
            let kinds = triggers.kinds_at(Moment::UserPrompt);
            if !prompt.trim().is_empty() {
                session.user_message = Some(prompt.clone());
            }
            if !prompt.trim().is_empty() && !kinds.is_empty() {
                let mut request = RecallRequest::new(ctx.workspace.id.clone(), 8);
                request.kinds = kinds;
                // The first stage only: this runs before every prompt.
                let answer = run_recall(ctx, &mut store, &mut Semantic::load(ctx), &prompt, request, 0)?;
                let fresh = deliver::not_yet_delivered(relevant_enough(answer), &session);
                let relevant = deliver::in_full(ctx, &fresh, true, &mut session, &mut budget);
                if !relevant.is_empty() {
                    lines.push("Notes from the project memory relevant to this prompt (mnemo):".into());
                    lines.extend(relevant);
                }
            }
        }
        Moment::PreEdit => {
            let cwd = payload.cwd(&std::env::current_dir().unwrap_or_default());
            let root = ctx.workspace.root.as_deref();
            let files: Vec<String> =
                payload.edited_paths().iter().map(|p| payload::workspace_relative(p, &cwd, root)).collect();
            if !files.is_empty() {
                let about = |view: &NoteView| files.iter().any(|file| concerns(view, file));
                let relevant: Vec<NoteView> = all_notes(&store)?
                    .into_iter()
                    .filter(|v| triggers.delivers(v.note.content.kind, Moment::PreEdit) && about(v))
                    .collect();
                let fresh = deliver::not_yet_delivered(relevant, &session);
                let notes = deliver::in_full(ctx, &fresh, true, &mut session, &mut budget);
                if !notes.is_empty() {
                    lines.push(format!("Before editing {}, the project memory says (mnemo):", files.join(", ")));
                    lines.extend(notes);
                }
            }
        }
    }
    session::save(&session_path, &session);
    Ok(lines.join("\n"))
}

/// The recalled notes relevant enough to push unasked (the note itself, or
/// the superseded note it inherited its rank from, matched well enough); a
/// prompt about nothing in the memory gets nothing.
fn relevant_enough(answer: crate::commands::recall::Answer) -> Vec<NoteView> {
    let evidence: std::collections::HashMap<_, _> = answer.candidates.iter().map(|c| (c.id, c)).collect();
    let passes = |id| evidence.get(&id).is_some_and(|c| relevance::relevant_enough(c, answer.mode));
    answer
        .views
        .into_iter()
        .zip(&answer.answer.results)
        .filter(|(_, ranked)| passes(ranked.id) || ranked.via_superseded.is_some_and(passes))
        .map(|(view, _)| view)
        .collect()
}

/// Whether a note concerns `file` (workspace-relative): anchored to it, or
/// naming it (its path anywhere, or its file name in the title).
fn concerns(view: &NoteView, file: &str) -> bool {
    let c = &view.note.content;
    let name = Path::new(file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    c.anchors.iter().any(|a| a.path == file)
        || (!name.is_empty() && (c.title.contains(file) || c.body.contains(file) || c.title.contains(&name)))
}
