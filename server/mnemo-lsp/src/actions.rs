//! Code actions and the commands they run. On an entry: Revoke…, Flag
//! stale…, Reinstate, Promote to human, Supersede (opens the entry in the
//! checkout), Accept / Reject… (a proposal; also as code lenses), Show
//! history and Forget… (needs the argument `"confirm"`). On a
//! conflict in a checkout: Keep mine / Take theirs. Reasons and
//! confirmations are command arguments; the editor clients ask the person
//! for them. Every write is a person's act (actor `human`) through the one
//! write path.

use mnemo_core::memory_md::{Entry, ParsedCheckout, StateMarker};
use mnemo_core::{EventKind, NoteId, Provenance};
use serde_json::{Value, json};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeLens, Command, Diagnostic, Position, Range, Uri,
};

pub const COMMANDS: [&str; 14] = [
    "mnemo.reanchor",
    "mnemo.openNote",
    "mnemo.revoke",
    "mnemo.flagStale",
    "mnemo.reinstate",
    "mnemo.promote",
    "mnemo.supersede",
    "mnemo.showHistory",
    "mnemo.forget",
    "mnemo.keepMine",
    "mnemo.takeTheirs",
    "mnemo.checkin",
    "mnemo.accept",
    "mnemo.reject",
];

/// A command, read from its name and arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandRequest {
    /// `[id]` or `[id, reason]`: one lifecycle event.
    Event { id: NoteId, kind: EventKind, reason: Option<String> },
    /// `[id]`: open the entry in the checkout, for editing.
    Supersede { id: NoteId },
    /// `[id]`: the note's event history, as markdown.
    History { id: NoteId },
    /// `[id, "confirm"]`: delete the note and its history for good.
    Forget { id: NoteId, confirmed: bool },
    /// `[{uri, id}]`: resolve a conflict of an open checkout and check it in.
    Resolve { uri: String, id: NoteId, keep_mine: bool },
    /// `[{uri}]`: check an open checkout in (what saving does).
    Checkin { uri: String },
    /// `[id, position, start, end]`: anchor `position` of the note to those lines as they read now.
    Reanchor { id: NoteId, position: usize, lines: (u32, u32) },
    /// `[id]`: show the note's entry in the mirror (or the checkout).
    OpenNote { id: NoteId },
}

/// What a code action is, for the editor's menus: a quick fix answers a
/// diagnostic (a conflict, a drifted anchor) and earns a light bulb; acting
/// on a note is a refactoring, offered in the refactor menu only.
pub(crate) fn note_action_kind() -> CodeActionKind {
    CodeActionKind::new("refactor.mnemo")
}

/// A quick fix that runs `command` with `arguments`.
pub(crate) fn action(title: String, command: &str, arguments: Vec<Value>) -> CodeActionOrCommand {
    kinded(CodeActionKind::QUICKFIX, title, command, arguments)
}

/// An action on a note (not a fix of a diagnostic) that runs `command`.
pub(crate) fn note_action(title: String, command: &str, arguments: Vec<Value>) -> CodeActionOrCommand {
    kinded(note_action_kind(), title, command, arguments)
}

fn kinded(kind: CodeActionKind, title: String, command: &str, arguments: Vec<Value>) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title: title.clone(),
        kind: Some(kind),
        command: Some(Command { title, command: command.into(), arguments: Some(arguments) }),
        ..CodeAction::default()
    })
}

/// The actions an entry offers in its current state.
pub fn actions_for(entry: &Entry) -> Vec<CodeActionOrCommand> {
    let Some(id) = entry.id else { return Vec::new() };
    let on = |title: String, command: &str| note_action(title, command, vec![Value::from(id)]);
    let mut actions = match &entry.marker {
        None => vec![
            on(format!("Revoke #{id}…"), "mnemo.revoke"),
            on(format!("Flag #{id} stale…"), "mnemo.flagStale"),
            on(format!("Supersede #{id} (edit it in the checkout)"), "mnemo.supersede"),
            on(format!("Promote #{id} to human"), "mnemo.promote"),
        ],
        Some(StateMarker::Stale { .. }) => {
            vec![on(format!("Reinstate #{id}"), "mnemo.reinstate"), on(format!("Revoke #{id}…"), "mnemo.revoke")]
        }
        Some(StateMarker::Revoked { .. } | StateMarker::Expired { .. }) => {
            vec![on(format!("Reinstate #{id}"), "mnemo.reinstate")]
        }
        Some(StateMarker::Superseded { .. }) => Vec::new(),
        Some(StateMarker::Proposed { .. }) => proposal_actions(id),
    };
    actions.push(on(format!("Show the history of #{id}"), "mnemo.showHistory"));
    actions.push(on(format!("Forget #{id} for good…"), "mnemo.forget"));
    actions
}

/// Accept and Reject… on a proposal.
pub fn proposal_actions(id: NoteId) -> Vec<CodeActionOrCommand> {
    vec![
        note_action(format!("Accept #{id}"), "mnemo.accept", vec![Value::from(id)]),
        note_action(format!("Reject #{id}…"), "mnemo.reject", vec![Value::from(id)]),
    ]
}

/// Accept and Reject… lenses over each proposal's entry in a memory document.
pub fn proposal_lenses(parsed: &ParsedCheckout) -> Vec<CodeLens> {
    let mut lenses = Vec::new();
    for parsed_entry in &parsed.entries {
        let entry = &parsed_entry.entry;
        let (Some(id), Some(StateMarker::Proposed { .. })) = (entry.id, &entry.marker) else { continue };
        let line = parsed_entry.first_line as u32;
        for action in proposal_actions(id) {
            let CodeActionOrCommand::CodeAction(action) = action else { continue };
            lenses.push(CodeLens {
                range: Range::new(Position::new(line, 0), Position::new(line, 0)),
                command: action.command,
                data: None,
            });
        }
    }
    lenses
}

/// "Keep mine" and "Take theirs" for the conflicts among `diagnostics`.
pub fn conflict_actions(uri: &Uri, diagnostics: &[Diagnostic]) -> Vec<CodeActionOrCommand> {
    let mut actions = Vec::new();
    for diagnostic in diagnostics {
        let Some(id) = diagnostic.data.as_ref().and_then(|d| d.get("conflict")).and_then(Value::as_i64) else {
            continue;
        };
        for (title, command) in [("Keep mine", "mnemo.keepMine"), ("Take theirs", "mnemo.takeTheirs")] {
            let title = format!("{title} for #{id}");
            let arguments = vec![json!({ "uri": uri.as_str(), "id": id })];
            if let CodeActionOrCommand::CodeAction(mut action) = action(title, command, arguments) {
                action.diagnostics = Some(vec![diagnostic.clone()]);
                action.is_preferred = Some(command == "mnemo.keepMine");
                actions.push(CodeActionOrCommand::CodeAction(action));
            }
        }
    }
    actions
}

/// Read a command and its arguments; the error says what was expected.
pub fn parse_command(command: &str, arguments: &[Value]) -> Result<CommandRequest, String> {
    let first = arguments.first();
    let id = || first.and_then(Value::as_i64).ok_or(format!("{command}: the first argument must be the note id"));
    let text = |index: usize| arguments.get(index).and_then(Value::as_str).map(str::to_string);
    let object = |field: &str| first.and_then(|v| v.get(field));
    let uri = || {
        object("uri").and_then(Value::as_str).map(str::to_string).ok_or(format!(
            "{command}: the argument must be an object with the checkout's \"uri\"{}",
            if command == "mnemo.checkin" { "" } else { " and the note \"id\"" }
        ))
    };
    let kind = match command {
        "mnemo.revoke" => EventKind::Revoked,
        "mnemo.flagStale" => EventKind::StaleFlagged,
        "mnemo.reinstate" => EventKind::Reinstated,
        "mnemo.promote" => EventKind::Promoted { to: Provenance::Human },
        "mnemo.accept" => EventKind::Accepted,
        // Rejecting a proposal revokes it with the reviewer's reason.
        "mnemo.reject" => EventKind::Revoked,
        "mnemo.supersede" => return Ok(CommandRequest::Supersede { id: id()? }),
        "mnemo.showHistory" => return Ok(CommandRequest::History { id: id()? }),
        "mnemo.forget" => {
            return Ok(CommandRequest::Forget { id: id()?, confirmed: text(1).as_deref() == Some("confirm") });
        }
        "mnemo.keepMine" | "mnemo.takeTheirs" => {
            let uri = uri()?;
            let id =
                object("id").and_then(Value::as_i64).ok_or(format!("{command}: the argument needs the note \"id\""))?;
            return Ok(CommandRequest::Resolve { uri, id, keep_mine: command == "mnemo.keepMine" });
        }
        "mnemo.checkin" => return Ok(CommandRequest::Checkin { uri: uri()? }),
        "mnemo.openNote" => return Ok(CommandRequest::OpenNote { id: id()? }),
        "mnemo.reanchor" => {
            let number = |index: usize| {
                arguments
                    .get(index)
                    .and_then(Value::as_u64)
                    .filter(|n| index == 1 || (1..=u64::from(u32::MAX)).contains(n))
                    .ok_or(format!(
                        "{command}: the arguments are [id, anchor position, start line, end line], lines from 1 to {}",
                        u32::MAX
                    ))
            };
            let (position, start, end) = (number(1)?, number(2)?, number(3)?);
            return Ok(CommandRequest::Reanchor {
                id: id()?,
                position: position as usize,
                lines: (start as u32, end as u32),
            });
        }
        other => return Err(format!("unknown command {other}; the commands are {}", COMMANDS.join(", "))),
    };
    let reason = text(1);
    if matches!(kind, EventKind::Revoked | EventKind::StaleFlagged)
        && reason.as_deref().is_none_or(|r| r.trim().is_empty())
    {
        return Err(format!("{command} needs a reason as its second argument"));
    }
    Ok(CommandRequest::Event { id: id()?, kind, reason })
}
