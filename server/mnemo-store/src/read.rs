//! Reads, always scoped: a [`Scope`] names one workspace, or all of them when
//! the caller explicitly asked (`--all-workspaces`). Notes come back with
//! their folded state and anchors; filters report what they hid.

use std::collections::{BTreeMap, HashMap};

use mnemo_core::{Anchor, EventData, Kind, NewNote, Note, NoteId, NoteView, Timestamp};
use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::person::Person;
use crate::sql_codec::{EventColumns, StateColumns, parse};
use crate::store::Store;
use crate::workspace::born_in;

/// Which workspaces a read or write may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Workspace(String),
    All,
}

impl Scope {
    pub(crate) fn describe(&self) -> String {
        match self {
            Scope::Workspace(w) => w.clone(),
            Scope::All => "any workspace".into(),
        }
    }

    /// Refuse a note owned by another workspace.
    pub(crate) fn check(&self, id: NoteId, owner: &str) -> Result<(), StoreError> {
        match self {
            Scope::Workspace(w) if w != owner => Err(StoreError::OtherWorkspace { id, owner: owner.to_string() }),
            _ => Ok(()),
        }
    }

    pub(crate) fn workspace_param(&self) -> Option<&str> {
        match self {
            Scope::Workspace(w) => Some(w),
            Scope::All => None,
        }
    }
}

/// One stored event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub id: i64,
    pub note_id: NoteId,
    pub data: EventData,
    /// Who appended it, where (none for events written before people were recorded).
    pub by: Option<Person>,
}

/// Filters of `list`; what they hide is counted, never dropped silently.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub kind: Option<Kind>,
    /// A state name from `Status::NAMES`.
    pub status: Option<String>,
}

impl ListFilter {
    /// Keep the matching views; count the hidden ones by reason
    /// (`"other kinds"`, `"revoked"`, …).
    pub fn apply(&self, views: Vec<NoteView>) -> (Vec<NoteView>, BTreeMap<String, usize>) {
        let mut hidden = BTreeMap::new();
        let kept = views
            .into_iter()
            .filter(|v| {
                if self.kind.is_some_and(|k| k != v.note.content.kind) {
                    *hidden.entry("other kinds".to_string()).or_default() += 1;
                    return false;
                }
                let status = v.state.status.name();
                if self.status.as_deref().is_some_and(|s| s != status) {
                    *hidden.entry(status.to_string()).or_default() += 1;
                    return false;
                }
                true
            })
            .collect();
        (kept, hidden)
    }
}

/// Counts for `store stats`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    pub notes: usize,
    pub events: usize,
    pub workspaces: usize,
    pub epoch: i64,
    pub schema_version: i64,
    pub by_kind: BTreeMap<String, usize>,
    pub by_status: BTreeMap<String, usize>,
    /// Notes with vectors, and the model that made them.
    pub embedded_notes: usize,
    pub embedding_model: Option<String>,
}

/// `s.workspace`: where the note is now (a workspace may have moved to its
/// repository's id); `n.workspace` is where it was created.
const NOTE_COLUMNS: &str =
    "n.id, s.workspace, n.kind, n.priority, n.title, n.body, n.provenance, n.quote, n.created_at,
     s.status, s.status_at, s.status_reason, s.superseded_by, s.provenance, s.live_since";

struct NoteRow {
    id: NoteId,
    workspace: String,
    kind: String,
    priority: String,
    title: String,
    body: String,
    provenance: String,
    quote: Option<String>,
    created_at: i64,
    state: StateColumns,
}

impl NoteRow {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<NoteRow> {
        Ok(NoteRow {
            id: r.get(0)?,
            workspace: r.get(1)?,
            kind: r.get(2)?,
            priority: r.get(3)?,
            title: r.get(4)?,
            body: r.get(5)?,
            provenance: r.get(6)?,
            quote: r.get(7)?,
            created_at: r.get(8)?,
            state: StateColumns::from_row(r, 9)?,
        })
    }

    fn into_view(self, anchors: Vec<Anchor>) -> Result<NoteView, StoreError> {
        Ok(NoteView {
            note: Note {
                id: self.id,
                workspace: self.workspace,
                content: NewNote {
                    kind: parse(&self.kind)?,
                    priority: parse(&self.priority)?,
                    title: self.title,
                    body: self.body,
                    provenance: parse(&self.provenance)?,
                    quote: self.quote,
                    anchors,
                },
                created_at: Timestamp(self.created_at),
            },
            state: self.state.into_state()?,
        })
    }
}

fn anchor_from_row(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Anchor> {
    Ok(Anchor {
        path: r.get(first)?,
        start_line: r.get(first + 1)?,
        end_line: r.get(first + 2)?,
        content_sha256: r.get(first + 3)?,
    })
}

/// Which notes a read selects.
#[derive(Clone, Copy)]
enum Which<'k> {
    All,
    Anchored,
    ActiveOf(&'k [Kind]),
}

impl Store {
    /// One note in `scope`.
    pub fn note(&self, scope: &Scope, id: NoteId) -> Result<NoteView, StoreError> {
        let sql = format!("SELECT {NOTE_COLUMNS} FROM notes n JOIN note_state s ON s.note_id = n.id WHERE n.id = ?1");
        let row = self.conn.prepare_cached(&sql)?.query_row([id], NoteRow::from_row).optional()?;
        let Some(row) = row else {
            return Err(StoreError::NoSuchNote { id, workspace: scope.describe() });
        };
        scope.check(id, &row.workspace)?;
        let anchors = self
            .conn
            .prepare_cached(
                "SELECT path, start_line, end_line, content_sha256 FROM anchors WHERE note_id = ?1 ORDER BY position",
            )?
            .query_map([id], |r| anchor_from_row(r, 0))?
            .collect::<Result<_, _>>()?;
        row.into_view(anchors)
    }

    /// The ids of every note of `workspace` (no content read).
    pub fn note_ids(&self, workspace: &str) -> Result<Vec<NoteId>, StoreError> {
        let sql = format!("SELECT id FROM notes WHERE {}", born_in("workspace", "?1"));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let ids = stmt.query_map([workspace], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(ids)
    }

    /// Every note in `scope`, ids ascending.
    pub fn notes(&self, scope: &Scope) -> Result<Vec<NoteView>, StoreError> {
        self.snapshot(|store| store.notes_unsnapshotted(scope))
    }

    /// The notes in `scope` that have at least one anchor, by id: what the
    /// drift check reads, in proportion to the anchored notes, not the store.
    pub fn anchored_notes(&self, scope: &Scope) -> Result<Vec<NoteView>, StoreError> {
        self.snapshot(|store| store.notes_where(scope, Which::Anchored))
    }

    /// The active notes in `scope` of one of `kinds`, by id: what a session
    /// start delivers whole, read without the rest of the store.
    pub fn active_notes_of(&self, scope: &Scope, kinds: &[Kind]) -> Result<Vec<NoteView>, StoreError> {
        self.snapshot(|store| store.notes_where(scope, Which::ActiveOf(kinds)))
    }

    /// `notes` without its own read transaction (the caller holds one).
    fn notes_unsnapshotted(&self, scope: &Scope) -> Result<Vec<NoteView>, StoreError> {
        self.notes_where(scope, Which::All)
    }

    /// The notes in `scope` that `which` selects.
    fn notes_where(&self, scope: &Scope, which: Which<'_>) -> Result<Vec<NoteView>, StoreError> {
        let workspace = scope.workspace_param();
        let in_workspace = born_in("n.workspace", "?1");
        let only = match which {
            Which::All => String::new(),
            Which::Anchored => "AND n.id IN (SELECT note_id FROM anchors)".into(),
            Which::ActiveOf(kinds) => {
                // Kind names are the model's own words, never user text.
                let names: Vec<String> = kinds.iter().map(|k| format!("'{}'", k.as_str())).collect();
                format!("AND s.status = 'active' AND n.kind IN ({})", names.join(","))
            }
        };
        let sql = format!(
            "SELECT {NOTE_COLUMNS} FROM notes n JOIN note_state s ON s.note_id = n.id
             WHERE (?1 IS NULL OR {in_workspace}) {only} ORDER BY n.id"
        );
        let mut anchors: HashMap<NoteId, Vec<Anchor>> = HashMap::new();
        let mut stmt = self.conn.prepare(&format!(
            "SELECT a.note_id, a.path, a.start_line, a.end_line, a.content_sha256 FROM anchors a JOIN notes n ON n.id = a.note_id
             WHERE ?1 IS NULL OR {in_workspace} ORDER BY a.note_id, a.position"
        ))?;
        let rows = stmt.query_map(params![workspace], |r| Ok((r.get::<_, NoteId>(0)?, anchor_from_row(r, 1)?)))?;
        for row in rows {
            let (id, anchor) = row?;
            anchors.entry(id).or_default().push(anchor);
        }
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(params![workspace], NoteRow::from_row)?;
        rows.map(|row| {
            let row = row?;
            let anchors = anchors.remove(&row.id).unwrap_or_default();
            row.into_view(anchors)
        })
        .collect()
    }

    /// The events of note `id`, in append order.
    pub fn history(&self, scope: &Scope, id: NoteId) -> Result<Vec<StoredEvent>, StoreError> {
        self.note(scope, id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, note_id, kind, actor, at, reason, superseded_by, provenance, person, machine
             FROM events WHERE note_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([id], |r| {
            let person: Option<String> = r.get(8)?;
            let machine: Option<String> = r.get(9)?;
            let by = person.map(|name| Person { name, machine: machine.unwrap_or_else(|| "unknown".into()) });
            Ok((r.get::<_, i64>(0)?, r.get::<_, NoteId>(1)?, EventColumns::from_row(r, 2)?, by))
        })?;
        rows.map(|row| {
            let (id, note_id, columns, by) = row?;
            Ok(StoredEvent { id, note_id, data: columns.into_event()?, by })
        })
        .collect()
    }

    /// Counts of notes and events in `scope`.
    pub fn stats(&self, scope: &Scope) -> Result<Stats, StoreError> {
        let workspace = scope.workspace_param();
        let mut stats = Stats { epoch: self.epoch()?, schema_version: crate::SCHEMA_VERSION, ..Stats::default() };
        let mut stmt = self.conn.prepare(
            "SELECT n.kind, s.status, count(*) FROM notes n JOIN note_state s ON s.note_id = n.id
             WHERE ?1 IS NULL OR s.workspace = ?1 GROUP BY n.kind, s.status",
        )?;
        let rows = stmt.query_map(params![workspace], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)? as usize))
        })?;
        for row in rows {
            let (kind, status, count) = row?;
            stats.notes += count;
            *stats.by_kind.entry(kind).or_default() += count;
            *stats.by_status.entry(status).or_default() += count;
        }
        stats.events = self.conn.query_row(
            "SELECT count(*) FROM events e JOIN note_state s ON s.note_id = e.note_id WHERE ?1 IS NULL OR s.workspace = ?1",
            params![workspace],
            |r| r.get::<_, i64>(0),
        )? as usize;
        stats.workspaces = self.conn.query_row(
            "SELECT count(DISTINCT workspace) FROM note_state WHERE ?1 IS NULL OR workspace = ?1",
            params![workspace],
            |r| r.get::<_, i64>(0),
        )? as usize;
        if let Some(model) = self.vector_model()? {
            stats.embedded_notes = self.conn.query_row(
                "SELECT count(DISTINCT c.note_id) FROM note_vector_chunks c JOIN note_state s ON s.note_id = c.note_id
                 WHERE ?1 IS NULL OR s.workspace = ?1",
                params![workspace],
                |r| r.get::<_, i64>(0),
            )? as usize;
            stats.embedding_model = Some(model.identity);
        }
        Ok(stats)
    }
}
