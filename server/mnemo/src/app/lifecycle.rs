//! Lifecycle events as every entry point appends them (CLI commands, MCP
//! revoke / reinstate / flag_stale, the language server's code actions go
//! through the store directly): one event through the one write path, as a
//! person or as the agent.

use mnemo_core::{EventData, EventKind, NoteState};

use crate::context::Context;

/// Append one lifecycle event as a person (`as_human`) or an agent, through the one write path.
pub(crate) fn append(
    ctx: &Context,
    id: i64,
    kind: EventKind,
    as_human: bool,
    reason: Option<String>,
) -> anyhow::Result<NoteState> {
    let mut store = ctx.open()?;
    let event = EventData { kind, actor: Context::actor(as_human), at: ctx.now, reason };
    let scope = ctx.scope(false);
    let latest = store.history(&scope, id).ok().and_then(|events| events.iter().map(|e| e.data.at).max());
    let state = ctx.write(&mut store, |w| w.append(&scope, id, event))?;
    // The store dates an event no earlier than the note's latest: say so when the clock was behind it.
    if let Some(latest) = latest.filter(|latest| *latest > ctx.now) {
        eprintln!(
            "note: the clock ({}) is behind #{id}'s latest event; this event is dated {} instead",
            ctx.now.rfc3339(),
            latest.rfc3339()
        );
    }
    Ok(state)
}
