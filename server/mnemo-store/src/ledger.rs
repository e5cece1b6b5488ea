//! The delivery ledger: every time notes are delivered to an agent (a hook
//! moment, `context`, the MCP tools), which notes, to which session, when,
//! and how many bytes — append-only (UPDATE aborts), scoped to the
//! workspace, and bounded: past `KEPT_PER_WORKSPACE` deliveries the oldest
//! are dropped. Recording is not a note write: it bumps no epoch, so no
//! mirror re-renders and no editor refreshes for it.

use mnemo_core::{NoteId, Timestamp};
use rusqlite::params;

use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;
use crate::write::Writer;

/// Deliveries kept per workspace; older ones are dropped.
pub const KEPT_PER_WORKSPACE: i64 = 20_000;

/// How a note went out: in full (title and body) or as an index line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Full,
    Listed,
}

impl Shown {
    fn as_str(self) -> &'static str {
        match self {
            Shown::Full => "full",
            Shown::Listed => "listed",
        }
    }
}

/// One delivery to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub workspace: String,
    /// The harness's session id, or the entry point's (`cli`, `mcp`).
    pub session: String,
    /// `session-start`, `user-prompt`, `pre-edit`, `post-compaction`,
    /// `context`, `mcp recall`, `mcp expand`, `mcp context`.
    pub moment: String,
    pub at: Timestamp,
    pub notes: Vec<(NoteId, Shown)>,
    pub bytes: usize,
}

/// A recorded delivery, as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRecord {
    pub id: i64,
    pub session: String,
    pub moment: String,
    pub at: Timestamp,
    /// The notes in full, then those listed.
    pub full: Vec<NoteId>,
    pub listed: Vec<NoteId>,
    pub bytes: usize,
}

/// Which deliveries to read.
#[derive(Debug, Clone, Default)]
pub struct LedgerFilter {
    pub session: Option<String>,
    pub since: Option<Timestamp>,
    /// Only deliveries holding this note.
    pub note: Option<NoteId>,
    /// The newest this many (0: all).
    pub limit: usize,
}

impl Writer<'_> {
    /// Record one delivery; nothing when no note went out.
    pub fn record_delivery(&mut self, delivery: &Delivery) -> Result<(), StoreError> {
        if delivery.notes.is_empty() {
            return Ok(());
        }
        let tx = self.transaction();
        let id: i64 = tx
            .prepare_cached(
                "INSERT INTO deliveries (workspace, session, moment, at, bytes) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
            )?
            .query_row(
                params![delivery.workspace, delivery.session, delivery.moment, delivery.at.0, delivery.bytes as i64],
                |r| r.get(0),
            )?;
        let mut insert = tx.prepare_cached(
            "INSERT OR IGNORE INTO delivered_notes (delivery_id, note_id, shown) VALUES (?1, ?2, ?3)",
        )?;
        for (note, shown) in &delivery.notes {
            insert.execute(params![id, note, shown.as_str()])?;
        }
        // The bound, checked now and then rather than at every delivery.
        if id % 64 == 0 {
            let cutoff: Option<i64> = tx
                .prepare_cached("SELECT id FROM deliveries WHERE workspace = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2")?
                .query_row(params![delivery.workspace, KEPT_PER_WORKSPACE], |r| r.get(0))
                .ok();
            if let Some(cutoff) = cutoff {
                tx.execute(
                    "DELETE FROM delivered_notes WHERE delivery_id IN
                     (SELECT id FROM deliveries WHERE workspace = ?1 AND id <= ?2)",
                    params![delivery.workspace, cutoff],
                )?;
                tx.execute(
                    "DELETE FROM deliveries WHERE workspace = ?1 AND id <= ?2",
                    params![delivery.workspace, cutoff],
                )?;
            }
        }
        Ok(())
    }
}

impl Store {
    /// Deliveries in `scope`, newest first.
    pub fn ledger(&self, scope: &Scope, filter: &LedgerFilter) -> Result<Vec<DeliveryRecord>, StoreError> {
        let workspace = match scope {
            Scope::Workspace(w) => Some(w.as_str()),
            Scope::All => None,
        };
        let limit = if filter.limit == 0 { -1 } else { filter.limit as i64 };
        let mut stmt = self.conn.prepare_cached(
            "SELECT d.id, d.session, d.moment, d.at, d.bytes FROM deliveries d
             WHERE (?1 IS NULL OR d.workspace = ?1) AND (?2 IS NULL OR d.session = ?2) AND (?3 IS NULL OR d.at >= ?3)
               AND (?4 IS NULL OR d.id IN (SELECT delivery_id FROM delivered_notes WHERE note_id = ?4))
             ORDER BY d.id DESC LIMIT ?5",
        )?;
        let rows =
            stmt.query_map(params![workspace, filter.session, filter.since.map(|t| t.0), filter.note, limit], |r| {
                Ok(DeliveryRecord {
                    id: r.get(0)?,
                    session: r.get(1)?,
                    moment: r.get(2)?,
                    at: Timestamp(r.get(3)?),
                    full: Vec::new(),
                    listed: Vec::new(),
                    bytes: r.get::<_, i64>(4)? as usize,
                })
            })?;
        let mut records: Vec<DeliveryRecord> = rows.collect::<Result<_, _>>()?;
        let mut notes = self
            .conn
            .prepare_cached("SELECT note_id, shown FROM delivered_notes WHERE delivery_id = ?1 ORDER BY note_id")?;
        for record in &mut records {
            for row in notes.query_map([record.id], |r| Ok((r.get::<_, NoteId>(0)?, r.get::<_, String>(1)?)))? {
                let (note, shown) = row?;
                if shown == "full" { record.full.push(note) } else { record.listed.push(note) }
            }
        }
        Ok(records)
    }

    /// The active notes of `workspace` live since before `since` that no
    /// delivery reached since then: told to no agent for that long.
    pub fn quiet_notes(&self, workspace: &str, since: Timestamp) -> Result<Vec<NoteId>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.note_id FROM note_state s
             WHERE s.workspace = ?1 AND s.status = 'active' AND s.live_since <= ?2
               AND NOT EXISTS (SELECT 1 FROM delivered_notes n JOIN deliveries d ON d.id = n.delivery_id
                               WHERE n.note_id = s.note_id AND d.at >= ?2)
             ORDER BY s.note_id",
        )?;
        let rows = stmt.query_map(params![workspace, since.0], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// How often note `id` was delivered and the latest delivery, for hover
    /// and history: (count, latest).
    pub fn deliveries_of(&self, scope: &Scope, id: NoteId) -> Result<(usize, Option<DeliveryRecord>), StoreError> {
        let count: i64 = self
            .conn
            .prepare_cached("SELECT COUNT(*) FROM delivered_notes WHERE note_id = ?1")?
            .query_row([id], |r| r.get(0))?;
        let latest = self.ledger(scope, &LedgerFilter { note: Some(id), limit: 1, ..LedgerFilter::default() })?;
        Ok((count as usize, latest.into_iter().next()))
    }
}
