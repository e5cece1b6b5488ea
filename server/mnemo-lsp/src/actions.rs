//! Code actions on an entry of a memory document and the commands they run:
//! `mnemo.revoke` (id, reason), `mnemo.flagStale` (id, reason),
//! `mnemo.reinstate` (id), `mnemo.promote` (id). Reasons are command
//! arguments; the editor clients ask the person for them. Every command is
//! a person's act (actor `human`) appended through the one write path.

use mnemo_core::memory_md::{Entry, StateMarker};
use mnemo_core::{EventKind, NoteId, Provenance};
use serde_json::Value;
use tower_lsp_server::ls_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Command};

pub const COMMANDS: [&str; 4] = ["mnemo.revoke", "mnemo.flagStale", "mnemo.reinstate", "mnemo.promote"];

fn action(title: String, command: &str, id: NoteId) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title: title.clone(),
        kind: Some(CodeActionKind::QUICKFIX),
        command: Some(Command { title, command: command.into(), arguments: Some(vec![Value::from(id)]) }),
        ..CodeAction::default()
    })
}

/// The actions an entry offers in its current state.
pub fn actions_for(entry: &Entry) -> Vec<CodeActionOrCommand> {
    let Some(id) = entry.id else { return Vec::new() };
    match &entry.marker {
        None => vec![
            action(format!("Revoke #{id}…"), "mnemo.revoke", id),
            action(format!("Flag #{id} stale…"), "mnemo.flagStale", id),
            action(format!("Promote #{id} to human"), "mnemo.promote", id),
        ],
        Some(StateMarker::Stale { .. }) => vec![
            action(format!("Reinstate #{id}"), "mnemo.reinstate", id),
            action(format!("Revoke #{id}…"), "mnemo.revoke", id),
        ],
        Some(StateMarker::Revoked { .. } | StateMarker::Expired { .. }) => {
            vec![action(format!("Reinstate #{id}"), "mnemo.reinstate", id)]
        }
        Some(StateMarker::Superseded { .. }) => Vec::new(),
    }
}

/// A command's event, from its arguments: `[id]` or `[id, reason]`.
pub fn event_for(command: &str, arguments: &[Value]) -> Result<(NoteId, EventKind, Option<String>), String> {
    let id = arguments.first().and_then(Value::as_i64).ok_or("the first argument must be the note id")?;
    let reason = arguments.get(1).and_then(Value::as_str).map(str::to_string);
    let kind = match command {
        "mnemo.revoke" => EventKind::Revoked,
        "mnemo.flagStale" => EventKind::StaleFlagged,
        "mnemo.reinstate" => EventKind::Reinstated,
        "mnemo.promote" => EventKind::Promoted { to: Provenance::Human },
        other => return Err(format!("unknown command {other}; the commands are {}", COMMANDS.join(", "))),
    };
    if matches!(kind, EventKind::Revoked | EventKind::StaleFlagged)
        && reason.as_deref().is_none_or(|r| r.trim().is_empty())
    {
        return Err(format!("{command} needs a reason as its second argument"));
    }
    Ok((id, kind, reason))
}
