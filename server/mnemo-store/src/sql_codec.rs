//! Conversions between core types and their SQL columns, in one place, so the
//! spelling of every stored word is defined once (by the core's `as_str`).

use mnemo_core::{Actor, EventData, EventKind, NoteId, NoteState, Provenance, Status, Timestamp};

use crate::error::StoreError;

pub(crate) fn parse<T: std::str::FromStr<Err = mnemo_core::ParseEnumError>>(text: &str) -> Result<T, StoreError> {
    text.parse().map_err(|e: mnemo_core::ParseEnumError| StoreError::Corrupt(e.to_string()))
}

/// The columns of an event row besides ids.
pub(crate) struct EventColumns {
    pub kind: String,
    pub actor: String,
    pub at: i64,
    pub reason: Option<String>,
    pub superseded_by: Option<NoteId>,
    pub provenance: Option<String>,
}

impl EventColumns {
    pub fn from_row(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<EventColumns> {
        Ok(EventColumns {
            kind: row.get(first)?,
            actor: row.get(first + 1)?,
            at: row.get(first + 2)?,
            reason: row.get(first + 3)?,
            superseded_by: row.get(first + 4)?,
            provenance: row.get(first + 5)?,
        })
    }

    pub fn into_event(self) -> Result<EventData, StoreError> {
        let provenance = || -> Result<Provenance, StoreError> {
            parse(
                self.provenance
                    .as_deref()
                    .ok_or_else(|| StoreError::Corrupt(format!("{} event without provenance", self.kind)))?,
            )
        };
        let kind = match self.kind.as_str() {
            "created" => EventKind::Created { provenance: provenance()? },
            "superseded" => EventKind::Superseded {
                by: self
                    .superseded_by
                    .ok_or_else(|| StoreError::Corrupt("superseded event without successor".into()))?,
            },
            "revoked" => EventKind::Revoked,
            "stale_flagged" => EventKind::StaleFlagged,
            "reinstated" => EventKind::Reinstated,
            "promoted" => EventKind::Promoted { to: provenance()? },
            "expired" => EventKind::Expired,
            "proposed" => EventKind::Proposed,
            "accepted" => EventKind::Accepted,
            other => return Err(StoreError::Corrupt(format!("unknown event kind '{other}'"))),
        };
        Ok(EventData { kind, actor: parse::<Actor>(&self.actor)?, at: Timestamp(self.at), reason: self.reason })
    }

    pub fn from_event(event: &EventData) -> EventColumns {
        let (superseded_by, provenance) = match event.kind {
            EventKind::Superseded { by } => (Some(by), None),
            EventKind::Created { provenance } | EventKind::Promoted { to: provenance } => {
                (None, Some(provenance.as_str().to_string()))
            }
            _ => (None, None),
        };
        EventColumns {
            kind: event.kind.name().to_string(),
            actor: event.actor.as_str().to_string(),
            at: event.at.0,
            reason: event.reason.clone(),
            superseded_by,
            provenance,
        }
    }
}

/// The columns of a `note_state` row besides note id and workspace.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct StateColumns {
    pub status: String,
    pub status_at: i64,
    pub status_reason: Option<String>,
    pub superseded_by: Option<NoteId>,
    pub provenance: String,
    pub live_since: i64,
}

impl StateColumns {
    pub fn from_row(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<StateColumns> {
        Ok(StateColumns {
            status: row.get(first)?,
            status_at: row.get(first + 1)?,
            status_reason: row.get(first + 2)?,
            superseded_by: row.get(first + 3)?,
            provenance: row.get(first + 4)?,
            live_since: row.get(first + 5)?,
        })
    }

    pub fn from_state(state: &NoteState) -> StateColumns {
        let superseded_by = match state.status {
            Status::Superseded { by } => Some(by),
            _ => None,
        };
        StateColumns {
            status: state.status.name().to_string(),
            status_at: state.status_at.0,
            status_reason: state.status_reason.clone(),
            superseded_by,
            provenance: state.provenance.as_str().to_string(),
            live_since: state.live_since.0,
        }
    }

    pub fn into_state(self) -> Result<NoteState, StoreError> {
        let status = match (self.status.as_str(), self.superseded_by) {
            ("active", _) => Status::Active,
            ("superseded", Some(by)) => Status::Superseded { by },
            ("revoked", _) => Status::Revoked,
            ("stale_flagged", _) => Status::StaleFlagged,
            ("expired", _) => Status::Expired,
            ("proposed", _) => Status::Proposed,
            (other, _) => {
                return Err(StoreError::Corrupt(format!("unknown note status '{other}'")));
            }
        };
        Ok(NoteState {
            status,
            status_at: Timestamp(self.status_at),
            status_reason: self.status_reason,
            provenance: parse(&self.provenance)?,
            live_since: Timestamp(self.live_since),
        })
    }
}
