//! `mnemo import vectr DB`: replay a store of vectr (the Python tool whose
//! store and mirror are the model for ours) as mnemo events.
//!
//! vectr keeps a `notes` table (content, title, kind, priority, provenance,
//! user_quote, created_at, anchors as JSON `[[path, sha256[:16], observed]]`)
//! and an append-only `note_events` log (created, superseded,
//! superseded_post_hoc, revoked, stale_flagged, reinstated, promoted,
//! expired). Notes are created in vectr's id order (so ids keep their order)
//! with their timestamps and provenance, then every other event is replayed
//! in log order with its actor, reason and time.
//!
//! - A vectr anchor names a whole file: it becomes an anchor over the file's
//!   lines as they are now; when the file's hash differs from the one vectr
//!   recorded, the note is flagged stale (the code moved since). An anchor
//!   whose file is not in the workspace is kept as a line of the body.
//! - An event mnemo's lifecycle refuses (vectr allows a few more
//!   transitions) is reported, not applied.
//! - Idempotent: a note already in the workspace with the same kind, title
//!   and creation time is not imported again, nor are its events.
//! - The DB is opened read-only; encrypted content is refused.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use mnemo_core::{Actor, Anchor, EventData, EventKind, Kind, NewNote, NoteId, Priority, Provenance, Timestamp};
use rusqlite::{Connection, OpenFlags};
use sha2::{Digest, Sha256};

use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;
use crate::vectors::NoteEmbedding;

#[derive(Debug, thiserror::Error)]
pub enum VectrError {
    #[error("cannot open {path} as a vectr store: {reason}")]
    Open { path: String, reason: String },
    #[error("{path} is not a vectr store: {reason}")]
    NotVectr { path: String, reason: String },
    #[error("vectr note #{id}: {reason}; nothing was imported")]
    Note { id: i64, reason: String },
    #[error("the vectr store holds workspaces {found}; choose one with --from-workspace")]
    WhichWorkspace { found: String },
    #[error("the vectr store has no workspace '{given}' (it holds {found})")]
    NoSuchWorkspace { given: String, found: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One vectr note, as read.
#[derive(Debug, Clone)]
struct VectrNote {
    id: i64,
    kind: String,
    priority: String,
    title: String,
    content: String,
    provenance: String,
    quote: String,
    created_at: f64,
    /// vectr's JSON: `[[path, sha256[:16], observed], …]`.
    anchors: String,
}

/// One row of vectr's `note_events`.
#[derive(Debug, Clone)]
struct VectrEvent {
    id: i64,
    note_id: i64,
    event: String,
    actor: String,
    reason: Option<String>,
    payload: Option<String>,
    ts: f64,
}

/// A vectr workspace, read and checked, ready to write.
pub struct PreparedVectr {
    notes: Vec<(VectrNote, NewNote)>,
    events: Vec<VectrEvent>,
    /// Notes whose anchored file changed since vectr hashed it, in id order.
    drifted: BTreeSet<i64>,
    already: usize,
}

impl PreparedVectr {
    /// Title and body of each note to create, in order (to embed before the write).
    pub fn texts(&self) -> Vec<(&str, &str)> {
        self.notes.iter().map(|(_, n)| (n.title.as_str(), n.body.as_str())).collect()
    }
}

/// Who creates a note of `provenance`: only a person may create a `human` one.
fn creator(provenance: Provenance) -> Actor {
    if provenance == Provenance::Human { Actor::Human } else { Actor::Agent }
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct VectrReport {
    pub notes: usize,
    pub events: usize,
    /// Notes already imported before (skipped, with their events).
    pub already_imported: usize,
    /// (vectr id, mnemo id), in vectr's order.
    pub ids: Vec<(i64, NoteId)>,
    /// Events not applied, each with the reason.
    pub not_applied: Vec<String>,
}

/// The store, opened read-only and checked, and the columns of its `notes`.
fn open(path: &Path) -> Result<(Connection, HashSet<String>), VectrError> {
    let shown = path.display().to_string();
    if !path.is_file() {
        return Err(VectrError::Open { path: shown, reason: "no such file".into() });
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| VectrError::Open { path: shown.clone(), reason: e.to_string() })?;
    let columns = |table: &str| -> Result<HashSet<String>, VectrError> {
        let mut statement = conn
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(|e| VectrError::NotVectr { path: shown.clone(), reason: e.to_string() })?;
        let names = statement
            .query_map([table], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<HashSet<_>, _>>())
            .map_err(|e| VectrError::NotVectr { path: shown.clone(), reason: e.to_string() })?;
        Ok(names)
    };
    let needs = [
        ("notes", &["note_id", "workspace", "content", "kind", "priority", "created_at"][..]),
        ("note_events", &["id", "workspace", "note_id", "event", "actor", "reason", "payload", "ts"][..]),
    ];
    let mut notes_columns = HashSet::new();
    for (table, wanted) in needs {
        let have = columns(table)?;
        if have.is_empty() {
            return Err(VectrError::NotVectr { path: shown, reason: format!("it has no `{table}` table") });
        }
        if let Some(missing) = wanted.iter().find(|c| !have.contains(**c)) {
            return Err(VectrError::NotVectr { path: shown, reason: format!("`{table}` has no column `{missing}`") });
        }
        if table == "notes" {
            notes_columns = have;
        }
    }
    Ok((conn, notes_columns))
}

/// A column older vectr stores lack, as `''` when it is missing.
fn optional_column(columns: &HashSet<String>, name: &str) -> String {
    if columns.contains(name) { name.to_string() } else { format!("'' AS {name}") }
}

/// Read vectr workspace `from` (default: the only one, else the one named
/// like `workspace`) of the store at `path` for `workspace`, and check every
/// note before anything is written. Anchors are resolved against `root`.
pub fn prepare(
    store: &Store,
    path: &Path,
    from: Option<&str>,
    workspace: &str,
    root: Option<&Path>,
) -> Result<PreparedVectr, VectrError> {
    let (conn, columns) = open(path)?;
    let query_error =
        |e: rusqlite::Error| VectrError::NotVectr { path: path.display().to_string(), reason: e.to_string() };
    let workspaces: Vec<String> = conn
        .prepare("SELECT DISTINCT workspace FROM notes ORDER BY workspace")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(query_error)?;
    let found = || if workspaces.is_empty() { "no notes".to_string() } else { workspaces.join(", ") };
    let from = match from {
        Some(given) if workspaces.iter().any(|w| w == given) => given.to_string(),
        Some(given) => return Err(VectrError::NoSuchWorkspace { given: given.into(), found: found() }),
        None if workspaces.len() <= 1 => workspaces.first().cloned().unwrap_or_default(),
        None if workspaces.iter().any(|w| w == workspace) => workspace.to_string(),
        None => return Err(VectrError::WhichWorkspace { found: found() }),
    };
    let sql = format!(
        "SELECT note_id, kind, priority, {}, content, {}, {}, created_at, {} FROM notes WHERE workspace = ?1 ORDER BY note_id",
        optional_column(&columns, "title"),
        optional_column(&columns, "provenance"),
        optional_column(&columns, "user_quote"),
        optional_column(&columns, "anchors"),
    );
    let text = |r: &rusqlite::Row<'_>, i: usize| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
    let notes: Vec<VectrNote> = conn
        .prepare(&sql)
        .and_then(|mut s| {
            s.query_map([&from], |r| {
                let provenance = text(r, 5)?;
                Ok(VectrNote {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    priority: r.get(2)?,
                    title: text(r, 3)?,
                    content: r.get(4)?,
                    provenance: if provenance.is_empty() { "agent".into() } else { provenance },
                    quote: text(r, 6)?,
                    created_at: r.get(7)?,
                    anchors: text(r, 8)?,
                })
            })?
            .collect()
        })
        .map_err(query_error)?;
    let events: Vec<VectrEvent> = conn
        .prepare(
            "SELECT id, note_id, event, actor, reason, payload, ts FROM note_events WHERE workspace = ?1 ORDER BY id",
        )
        .and_then(|mut s| {
            s.query_map([&from], |r| {
                Ok(VectrEvent {
                    id: r.get(0)?,
                    note_id: r.get(1)?,
                    event: r.get(2)?,
                    actor: r.get(3)?,
                    reason: r.get(4)?,
                    payload: r.get(5)?,
                    ts: r.get(6)?,
                })
            })?
            .collect()
        })
        .map_err(query_error)?;

    let existing: HashSet<(Kind, String, i64)> = store
        .notes(&Scope::Workspace(workspace.to_string()))?
        .into_iter()
        .map(|v| (v.note.content.kind, v.note.content.title, v.note.created_at.0))
        .collect();
    let mut prepared = PreparedVectr { notes: Vec::new(), events: Vec::new(), drifted: BTreeSet::new(), already: 0 };
    let mut imported: HashSet<i64> = HashSet::new();
    for note in notes {
        let id = note.id;
        let invalid = |reason: String| VectrError::Note { id, reason };
        let (new_note, drifted) = convert(&note, root).map_err(invalid)?;
        let created = Timestamp(note.created_at as i64);
        if existing.contains(&(new_note.kind, mnemo_core::model::normalize_title(&new_note.title), created.0)) {
            prepared.already += 1;
            continue;
        }
        if drifted {
            prepared.drifted.insert(id);
        }
        let actor = creator(new_note.provenance);
        let new_note = new_note.validated(actor).map_err(|e| invalid(e.to_string()))?;
        imported.insert(id);
        prepared.notes.push((note, new_note));
    }
    prepared.events = events.into_iter().filter(|e| imported.contains(&e.note_id) && e.event != "created").collect();
    Ok(prepared)
}

/// A vectr note as a mnemo note, and whether an anchored file changed since.
fn convert(note: &VectrNote, root: Option<&Path>) -> Result<(NewNote, bool), String> {
    if note.content.starts_with("gAAAAA") && !note.content.contains(char::is_whitespace) {
        return Err("its content is encrypted (VECTR_ENCRYPT_KEY); export it decrypted with vectr first".into());
    }
    let kind: Kind = note.kind.parse().map_err(|e: mnemo_core::ParseEnumError| e.to_string())?;
    let priority: Priority = note.priority.parse().map_err(|e: mnemo_core::ParseEnumError| e.to_string())?;
    let mut provenance: Provenance = note.provenance.parse().map_err(|e: mnemo_core::ParseEnumError| e.to_string())?;
    let quote = (!note.quote.trim().is_empty()).then(|| note.quote.clone());
    if provenance == Provenance::UserStated && quote.is_none() {
        provenance = Provenance::Agent;
    }
    let (title, mut body) = if note.title.trim().is_empty() {
        let mut lines = note.content.trim().splitn(2, '\n');
        let first = lines.next().unwrap_or_default().trim().to_string();
        (first, lines.next().unwrap_or_default().trim().to_string())
    } else {
        (note.title.clone(), note.content.trim().to_string())
    };
    let mut anchors = Vec::new();
    let mut drifted = false;
    let mut kept_in_body = Vec::new();
    for (path, vectr_hash) in vectr_anchors(&note.anchors)? {
        match root.map(|root| whole_file_anchor(root, &path)) {
            Some(Ok((anchor, file_hash))) => {
                drifted |= vectr_hash.is_some_and(|h| !file_hash.starts_with(&h));
                anchors.push(anchor);
            }
            Some(Err(reason)) => kept_in_body.push(format!("{path} ({reason})")),
            None => kept_in_body.push(format!("{path} (no workspace directory to resolve it in)")),
        }
    }
    if !kept_in_body.is_empty() {
        if !body.is_empty() {
            body.push_str("\n\n");
        }
        body.push_str(&format!("Anchored in vectr to: {}", kept_in_body.join("; ")));
    }
    Ok((NewNote { kind, priority, title, body, provenance, quote, anchors }, drifted))
}

/// vectr's anchors: (path, the sha256 prefix it recorded, if any).
fn vectr_anchors(json: &str) -> Result<Vec<(String, Option<String>)>, String> {
    if json.trim().is_empty() {
        return Ok(Vec::new());
    }
    let parsed: Vec<Vec<serde_json::Value>> =
        serde_json::from_str(json).map_err(|e| format!("its anchors are not a JSON list of [path, hash] ({e})"))?;
    Ok(parsed
        .into_iter()
        .filter_map(|a| {
            let path = a.first()?.as_str()?.to_string();
            Some((path, a.get(1).and_then(|h| h.as_str()).map(str::to_string)))
        })
        .collect())
}

/// An anchor over every line of `path` as it is now, and the file's sha256
/// (hex). The file is read once, through the drift check's safe read
/// (inside the workspace, no symlink out, no binaries).
fn whole_file_anchor(root: &Path, path: &str) -> Result<(Anchor, String), String> {
    let relative = match Path::new(path).strip_prefix(root) {
        Ok(inside) => inside.to_string_lossy().into_owned(),
        Err(_) => path.to_string(),
    };
    let content = crate::drift::read_anchored(root, &relative).map_err(|e| match e {
        crate::drift::Drift::Missing => "missing when imported".to_string(),
        crate::drift::Drift::Unchecked(reason) => reason,
        other => format!("{other:?}"),
    })?;
    let lines = crate::anchor::line_count(&content) as u32;
    let lines_hash = crate::anchor::hash_lines(&content, 1, lines).ok_or("the file is empty")?;
    let anchor = Anchor { path: relative, start_line: 1, end_line: lines, content_sha256: Some(lines_hash) };
    Ok((anchor, crate::hex::hex(Sha256::digest(&content))))
}

fn actor_of(word: &str) -> Actor {
    word.parse().unwrap_or(Actor::Agent)
}

fn at(ts: f64) -> Timestamp {
    Timestamp(ts as i64)
}

/// Our event for one of vectr's, or why there is none. `ids` maps vectr ids
/// to the notes created for them.
fn event_kind(event: &VectrEvent, ids: &HashMap<i64, NoteId>) -> Result<EventKind, String> {
    let payload = event.payload.as_deref().map(str::trim);
    match event.event.as_str() {
        "superseded" | "superseded_post_hoc" => payload
            .and_then(|p| ids.get(&p.parse::<i64>().ok()?))
            .map(|&by| EventKind::Superseded { by })
            .ok_or_else(|| "its successor is not among the imported notes".into()),
        "revoked" => Ok(EventKind::Revoked),
        "stale_flagged" => Ok(EventKind::StaleFlagged),
        "reinstated" => Ok(EventKind::Reinstated),
        "expired" => Ok(EventKind::Expired),
        "promoted" => payload
            .and_then(|p| p.parse::<Provenance>().ok())
            .map(|to| EventKind::Promoted { to })
            .ok_or_else(|| "no provenance in its payload".into()),
        other => Err(format!("unknown event '{other}'")),
    }
}

/// Write a prepared vectr workspace into `workspace` in one transaction.
/// `vectors` (one per note to create, in order) are stored with the notes.
pub fn write(
    store: &mut Store,
    workspace: &str,
    prepared: PreparedVectr,
    now: Timestamp,
    vectors: Option<(&[NoteEmbedding], &str)>,
) -> Result<VectrReport, VectrError> {
    let PreparedVectr { notes, events, drifted, already } = prepared;
    Ok(store.write(|w| {
        let mut report = VectrReport { already_imported: already, ..VectrReport::default() };
        let mut ids: HashMap<i64, NoteId> = HashMap::new();
        // The latest time in each note's replayed history.
        let mut latest: HashMap<NoteId, Timestamp> = HashMap::new();
        for (index, (vectr, note)) in notes.into_iter().enumerate() {
            let actor = creator(note.provenance);
            let id = w.create(workspace, note, actor, at(vectr.created_at))?;
            if let Some((vectors, model)) = vectors
                && let Some(vector) = vectors.get(index)
            {
                w.put_vectors(id, workspace, vector, model)?;
            }
            ids.insert(vectr.id, id);
            latest.insert(id, at(vectr.created_at));
            report.ids.push((vectr.id, id));
            report.notes += 1;
            report.events += 1;
        }
        for event in events {
            let refused = |why: String| format!("event {} ({} of #{}): {why}", event.id, event.event, event.note_id);
            let kind = match event_kind(&event, &ids) {
                Ok(kind) => kind,
                Err(why) => {
                    report.not_applied.push(refused(why));
                    continue;
                }
            };
            let data =
                EventData { kind, actor: actor_of(&event.actor), at: at(event.ts), reason: event.reason.clone() };
            let when = data.at;
            match w.append(&Scope::All, ids[&event.note_id], data) {
                Ok(_) => {
                    report.events += 1;
                    let last = latest.entry(ids[&event.note_id]).or_insert(when);
                    *last = (*last).max(when);
                }
                Err(StoreError::Transition { source, .. }) => report.not_applied.push(refused(source.to_string())),
                Err(e) => return Err(e),
            }
        }
        for vectr_id in drifted {
            let id = ids[&vectr_id];
            let data = EventData {
                kind: EventKind::StaleFlagged,
                actor: Actor::System,
                // Never before the history just replayed (vectr's log may end after this clock).
                at: latest.get(&id).map_or(now, |last| now.max(*last)),
                reason: Some("an anchored file changed since vectr recorded it".into()),
            };
            match w.append(&Scope::All, id, data) {
                Ok(_) => report.events += 1,
                Err(StoreError::Transition { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    })?)
}
