//! `store verify`: replay every note's events with the core fold and compare
//! the result with the materialised `note_state` cache. Any difference (or a
//! log the fold refuses) is reported by note id.

use std::collections::BTreeMap;

use mnemo_core::{EventData, NoteId, fold};

use crate::error::StoreError;
use crate::sql_codec::{EventColumns, StateColumns};
use crate::store::Store;

/// The outcome of a replay: how many notes were checked and which differ.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct VerifyReport {
    pub notes_checked: usize,
    pub events_replayed: usize,
    /// Note id and what differs.
    pub differences: Vec<(NoteId, String)>,
}

impl VerifyReport {
    pub fn is_clean(&self) -> bool {
        self.differences.is_empty()
    }
}

impl Store {
    /// Replay the whole log and compare it with the state cache.
    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        let mut report = VerifyReport::default();
        let mut logs: BTreeMap<NoteId, (Vec<EventData>, i64)> = BTreeMap::new();
        let mut stmt = self.conn.prepare(
            "SELECT note_id, id, kind, actor, at, reason, superseded_by, provenance FROM events ORDER BY note_id, id",
        )?;
        let rows =
            stmt.query_map([], |r| Ok((r.get::<_, NoteId>(0)?, r.get::<_, i64>(1)?, EventColumns::from_row(r, 2)?)))?;
        for row in rows {
            let (note_id, event_id, columns) = row?;
            report.events_replayed += 1;
            let entry = logs.entry(note_id).or_default();
            entry.1 = event_id;
            match columns.into_event() {
                Ok(event) => entry.0.push(event),
                Err(e) => report.differences.push((note_id, format!("event {event_id} cannot be read: {e}"))),
            }
        }
        let mut cached: BTreeMap<NoteId, (String, StateColumns, i64)> = BTreeMap::new();
        let mut stmt = self.conn.prepare(
            "SELECT note_id, workspace, status, status_at, status_reason, superseded_by, provenance, live_since, last_event_id FROM note_state",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, NoteId>(0)?, r.get::<_, String>(1)?, StateColumns::from_row(r, 2)?, r.get::<_, i64>(8)?))
        })?;
        for row in rows {
            let (id, workspace, columns, last_event) = row?;
            cached.insert(id, (workspace, columns, last_event));
        }
        let mut stmt = self.conn.prepare("SELECT id, workspace FROM notes ORDER BY id")?;
        let notes = stmt.query_map([], |r| Ok((r.get::<_, NoteId>(0)?, r.get::<_, String>(1)?)))?;
        for note in notes {
            let (id, workspace) = note?;
            report.notes_checked += 1;
            let (events, last_event) = logs.remove(&id).unwrap_or_default();
            let Some((cached_workspace, cached_state, cached_last)) = cached.remove(&id) else {
                report.differences.push((id, "no cached state".into()));
                continue;
            };
            match fold(&events) {
                Err(e) => report.differences.push((id, format!("the log does not replay: {e}"))),
                Ok(state) => {
                    let replayed = StateColumns::from_state(&state);
                    if replayed != cached_state || cached_workspace != workspace || cached_last != last_event {
                        report
                            .differences
                            .push((id, format!("cache {cached_state:?} but the log replays to {replayed:?}")));
                    }
                }
            }
        }
        for id in logs.into_keys() {
            report.differences.push((id, "events for a note that does not exist".into()));
        }
        for id in cached.into_keys() {
            report.differences.push((id, "cached state for a note that does not exist".into()));
        }
        report.differences.sort_by_key(|(id, _)| *id);
        Ok(report)
    }
}
