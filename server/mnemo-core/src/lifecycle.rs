//! Events and the lifecycle they drive. `apply` is the one transition table:
//! the write path calls it before appending an event, and `fold` replays a
//! note's whole log with it, so a state the writer accepted is exactly the
//! state `store verify` recomputes.

use std::fmt;

use crate::model::{Actor, NoteId, Provenance, RuleError};
use crate::time::Timestamp;

/// What happened to a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Created {
        provenance: Provenance,
    },
    Superseded {
        by: NoteId,
    },
    Revoked,
    StaleFlagged,
    Reinstated,
    Promoted {
        to: Provenance,
    },
    Expired,
    /// Written under review (`[review]` in the workspace config): held back
    /// from agents until a person accepts it. Only right at creation.
    Proposed,
    /// A person accepted a proposal: active, endorsed by a human.
    Accepted,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Created { .. } => "created",
            EventKind::Superseded { .. } => "superseded",
            EventKind::Revoked => "revoked",
            EventKind::StaleFlagged => "stale_flagged",
            EventKind::Reinstated => "reinstated",
            EventKind::Promoted { .. } => "promoted",
            EventKind::Expired => "expired",
            EventKind::Proposed => "proposed",
            EventKind::Accepted => "accepted",
        }
    }

    /// The verb used in messages: "cannot revoke …".
    fn verb(self) -> &'static str {
        match self {
            EventKind::Created { .. } => "create",
            EventKind::Superseded { .. } => "supersede",
            EventKind::Revoked => "revoke",
            EventKind::StaleFlagged => "flag as stale",
            EventKind::Reinstated => "reinstate",
            EventKind::Promoted { .. } => "promote",
            EventKind::Expired => "expire",
            EventKind::Proposed => "propose",
            EventKind::Accepted => "accept",
        }
    }
}

/// One event as appended: what, by whom, when and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventData {
    pub kind: EventKind,
    pub actor: Actor,
    pub at: Timestamp,
    pub reason: Option<String>,
}

/// Where a note is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Active,
    Superseded {
        by: NoteId,
    },
    Revoked,
    StaleFlagged,
    Expired,
    /// Awaiting review: stored, shown to people, never delivered as fact.
    Proposed,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Superseded { .. } => "superseded",
            Status::Revoked => "revoked",
            Status::StaleFlagged => "stale_flagged",
            Status::Expired => "expired",
            Status::Proposed => "proposed",
        }
    }

    /// State names accepted by filters, in display order.
    pub const NAMES: &'static [&'static str] =
        &["active", "superseded", "revoked", "stale_flagged", "expired", "proposed"];
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Active => f.write_str("active"),
            Status::Superseded { by } => write!(f, "superseded by #{by}"),
            Status::Revoked => f.write_str("revoked"),
            Status::StaleFlagged => f.write_str("flagged stale"),
            Status::Expired => f.write_str("expired"),
            Status::Proposed => f.write_str("proposed, awaiting review"),
        }
    }
}

/// The state of one note: the fold of its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteState {
    pub status: Status,
    /// When `status` was entered.
    pub status_at: Timestamp,
    /// The reason given with the event that entered `status`.
    pub status_reason: Option<String>,
    /// Current provenance: the created class, raised by promotions.
    pub provenance: Provenance,
    /// Start of the current live period (created or last reinstated); expiry counts from here.
    pub live_since: Timestamp,
}

/// Why an event cannot be applied to a note in its current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("cannot {verb} a note that is {current}; {allowed}")]
    Illegal { verb: &'static str, current: Status, allowed: &'static str },
    #[error("cannot promote a note that is already {0}; nothing is above it")]
    AlreadyTop(Provenance),
    #[error("cannot promote from {from} to {to}; promotion goes one step up, to {next}")]
    NotOneStep { from: Provenance, to: Provenance, next: Provenance },
    #[error("a note's log must start with exactly one created event")]
    CreatedNotFirst,
    #[error(transparent)]
    Rule(#[from] RuleError),
}

/// The state right after creation.
pub fn created(provenance: Provenance, at: Timestamp) -> NoteState {
    NoteState { status: Status::Active, status_at: at, status_reason: None, provenance, live_since: at }
}

/// Apply one event to a note's state: the lifecycle table.
pub fn apply(state: &NoteState, event: &EventData) -> Result<NoteState, TransitionError> {
    use Status::*;
    let illegal = |allowed| TransitionError::Illegal { verb: event.kind.verb(), current: state.status, allowed };
    let mut next = state.clone();
    let enter = |next: &mut NoteState, status: Status| {
        next.status = status;
        next.status_at = event.at;
        next.status_reason = event.reason.clone();
    };
    match event.kind {
        EventKind::Created { .. } => return Err(TransitionError::CreatedNotFirst),
        // A proposal edited by its reviewer is replaced like any note.
        EventKind::Superseded { by } => match state.status {
            Active | Proposed => enter(&mut next, Superseded { by }),
            _ => return Err(illegal("only an active or proposed note can be superseded")),
        },
        // Rejecting a proposal is revoking it, with the reviewer's reason.
        EventKind::Revoked => {
            require_reason(event, "revocation")?;
            match state.status {
                Active | StaleFlagged | Proposed => enter(&mut next, Revoked),
                _ => return Err(illegal("only an active, stale or proposed note can be revoked")),
            }
        }
        EventKind::Proposed => match state.status {
            Active if state.live_since == event.at && state.status_at == event.at && state.status_reason.is_none() => {
                enter(&mut next, Proposed)
            }
            _ => return Err(illegal("a note is proposed only as it is written, under review")),
        },
        EventKind::Accepted => {
            if event.actor != Actor::Human {
                return Err(RuleError::AcceptNeedsPerson.into());
            }
            match state.status {
                Proposed => {
                    enter(&mut next, Active);
                    next.live_since = event.at;
                    next.provenance = Provenance::Human;
                }
                _ => return Err(illegal("only a proposed note can be accepted")),
            }
        }
        EventKind::StaleFlagged => {
            require_reason(event, "stale flag")?;
            match state.status {
                Active => enter(&mut next, StaleFlagged),
                _ => return Err(illegal("only an active note can be flagged stale")),
            }
        }
        EventKind::Reinstated => match state.status {
            Revoked | Expired | StaleFlagged => {
                enter(&mut next, Active);
                next.live_since = event.at;
            }
            _ => {
                return Err(illegal("only a revoked, expired or stale note can be reinstated"));
            }
        },
        EventKind::Expired => match state.status {
            Active | StaleFlagged => enter(&mut next, Expired),
            _ => return Err(illegal("only an active or stale note can expire")),
        },
        EventKind::Promoted { to } => {
            match state.status {
                Active | StaleFlagged => {}
                _ => return Err(illegal("only an active or stale note can be promoted")),
            }
            let Some(step) = state.provenance.promotion() else {
                return Err(TransitionError::AlreadyTop(state.provenance));
            };
            if to != step {
                return Err(TransitionError::NotOneStep { from: state.provenance, to, next: step });
            }
            if to == Provenance::Human && event.actor != Actor::Human {
                return Err(RuleError::HumanNeedsPerson.into());
            }
            next.provenance = to;
        }
    }
    Ok(next)
}

fn require_reason(event: &EventData, what: &'static str) -> Result<(), RuleError> {
    match event.reason.as_deref().map(str::trim) {
        Some(reason) if !reason.is_empty() => Ok(()),
        _ => Err(RuleError::MissingReason(what)),
    }
}

/// Replay a note's events, in event-id order, into its state.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a EventData>) -> Result<NoteState, TransitionError> {
    let mut events = events.into_iter();
    let state = match events.next() {
        Some(EventData { kind: EventKind::Created { provenance }, at, .. }) => created(*provenance, *at),
        _ => return Err(TransitionError::CreatedNotFirst),
    };
    events.try_fold(state, |state, event| apply(&state, event))
}

#[cfg(test)]
mod tests;
