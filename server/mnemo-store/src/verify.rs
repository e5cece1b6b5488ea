//! `store verify`: replay every note's events with the core fold and compare
//! the result with the materialised `note_state` cache (any difference, or a
//! log the fold refuses, is reported by note id); then check that the log was
//! not tampered with: SQLite's own integrity check, the hash chain over the
//! events (`chain.rs`), the append-only triggers present, no forget permit
//! left behind, and each note's events moving forward in time.

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
    /// Tampering and damage: where (an event, a note, a trigger, the file) and what.
    pub problems: Vec<(String, String)>,
    /// The last link of the event chain: record it elsewhere to detect a
    /// rewrite of the whole log later.
    pub head: String,
}

impl VerifyReport {
    pub fn is_clean(&self) -> bool {
        self.differences.is_empty() && self.problems.is_empty()
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
        // Where each note is now: where it was created, or the id that moved there.
        let mut stmt = self.conn.prepare(
            "SELECT n.id, COALESCE(a.workspace, n.workspace) FROM notes n
             LEFT JOIN workspace_aliases a ON a.alias = n.workspace ORDER BY n.id",
        )?;
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
        report.problems = self.tampering()?;
        report.head = crate::chain::head(&self.conn)?;
        Ok(report)
    }

    /// What says the file or its log was altered behind mnemo's back.
    fn tampering(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut found = Vec::new();
        let integrity: Vec<String> =
            self.conn.prepare("PRAGMA integrity_check")?.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
        if integrity != ["ok"] {
            found.extend(integrity.into_iter().take(20).map(|line| ("the store file".to_string(), line)));
        }
        let present: std::collections::HashSet<String> = self
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for trigger in crate::schema::GUARD_TRIGGERS {
            if !present.contains(trigger) {
                found.push((format!("trigger {trigger}"), "is gone: the append-only guard was dropped".into()));
            }
        }
        for trigger in crate::schema::MARK_TRIGGERS {
            if !present.contains(trigger) {
                found.push((
                    format!("trigger {trigger}"),
                    "is gone: a checkout base written now would keep its old mark (an open editor could check \
                     in against a stale base); restore the store file from a backup"
                        .into(),
                ));
            }
        }
        for trigger in crate::schema::COUNT_TRIGGERS {
            if !present.contains(trigger) {
                found.push((
                    format!("trigger {trigger}"),
                    "is gone: notes written now are not counted in their workspace (a search of it would weigh \
                     its words wrongly); restore the store file from a backup"
                        .into(),
                ));
            }
        }
        let counts_kept: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'workspace_note_counts')",
            [],
            |r| r.get(0),
        )?;
        if !counts_kept {
            found.push((
                "table workspace_note_counts".into(),
                "is gone: searches of a workspace cannot weigh its words; restore the store file from a backup".into(),
            ));
        }
        let miscounted: Vec<(String, i64, i64)> = if !counts_kept {
            Vec::new()
        } else {
            self.conn
                .prepare(
                    "SELECT coalesce(n.workspace, c.workspace), coalesce(c.notes, 0), coalesce(n.notes, 0)
                 FROM (SELECT workspace, count(*) AS notes FROM notes GROUP BY workspace) n
                 FULL JOIN workspace_note_counts c ON c.workspace = n.workspace
                 WHERE coalesce(c.notes, 0) != coalesce(n.notes, 0)",
                )?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<Result<_, _>>()?
        };
        for (workspace, counted, notes) in miscounted {
            found.push((
                format!("workspace {workspace}"),
                format!("is counted as holding {counted} notes but holds {notes}: its searches weigh words wrongly; restore the store file from a backup"),
            ));
        }
        let permits: Vec<i64> = self
            .conn
            .prepare("SELECT note_id FROM forget_permit")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for note in permits {
            found.push((
                format!("note #{note}"),
                "has a forget permit outside a forget: deletes were unlocked by hand".into(),
            ));
        }
        found.extend(crate::chain::problems(&self.conn)?);
        // Each note's history moves forward, from its creation.
        let mut stmt = self.conn.prepare(
            "SELECT e.id, e.note_id, e.kind, e.at, n.created_at FROM events e LEFT JOIN notes n ON n.id = e.note_id ORDER BY e.note_id, e.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<i64>>(4)?,
            ))
        })?;
        let mut last: Option<(i64, i64)> = None;
        for row in rows {
            let (event, note, kind, at, created) = row?;
            let first = last.is_none_or(|(n, _)| n != note);
            if first && kind != "created" {
                found.push((
                    format!("event {event}"),
                    format!("the first event of #{note} is '{kind}', not its creation"),
                ));
            }
            if let Some(created) = created.filter(|c| at < *c) {
                found.push((
                    format!("event {event}"),
                    format!(
                        "is dated {}, before #{note} was created ({})",
                        mnemo_core::Timestamp(at).rfc3339(),
                        mnemo_core::Timestamp(created).rfc3339()
                    ),
                ));
            } else if let Some((_, previous)) = last.filter(|(n, previous)| *n == note && at < *previous) {
                found.push((
                    format!("event {event}"),
                    format!(
                        "is dated {}, before the event of #{note} logged ahead of it ({})",
                        mnemo_core::Timestamp(at).rfc3339(),
                        mnemo_core::Timestamp(previous).rfc3339()
                    ),
                ));
            }
            last = Some((note, at));
        }
        Ok(found)
    }
}
