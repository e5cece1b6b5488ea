//! `mnemo import jsonl`: notes in the schema of `eval/corpus.jsonl`,
//! one JSON object a line. The whole file is checked before anything is
//! written, then stored in one transaction: every note `created` with its
//! date and provenance, then each non-active status as the matching event.

use std::collections::HashMap;
use std::io::BufRead;

use mnemo_core::{Actor, Anchor, EventData, EventKind, Kind, NewNote, NoteId, Priority, Provenance, Timestamp};

use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;
use crate::vectors::NoteEmbedding;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    id: i64,
    kind: String,
    #[serde(default = "default_priority")]
    priority: String,
    title: String,
    #[serde(default)]
    body: String,
    created: String,
    workspace: String,
    #[serde(default = "default_provenance")]
    provenance: String,
    quote: Option<String>,
    #[serde(default = "default_status")]
    status: String,
    status_reason: Option<String>,
    superseded_by: Option<i64>,
    #[serde(default)]
    anchors: Vec<RecordAnchor>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordAnchor {
    path: String,
    start_line: u32,
    end_line: u32,
}

fn default_priority() -> String {
    "medium".into()
}
fn default_provenance() -> String {
    "agent".into()
}
fn default_status() -> String {
    "active".into()
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("line {line}: {message}; nothing was imported")]
    Invalid { line: usize, message: String },
    #[error("cannot read the import file: {0}")]
    Read(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What an import stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportReport {
    pub notes: usize,
    pub events: usize,
    /// (id in the file, id in the store), in file order.
    pub ids: Vec<(i64, NoteId)>,
}

struct Checked {
    line: usize,
    source_id: i64,
    workspace: String,
    note: NewNote,
    created: Timestamp,
    status: Option<(String, Option<String>, Option<i64>)>,
}

/// A whole file, checked and ready to write.
pub struct PreparedImport {
    records: Vec<Checked>,
    actor: Actor,
}

impl PreparedImport {
    /// Title and body of each note, in file order (to embed before the write).
    pub fn texts(&self) -> Vec<(&str, &str)> {
        self.records.iter().map(|r| (r.note.title.as_str(), r.note.body.as_str())).collect()
    }
}

/// Check every record of `reader`. `actor` is who runs the import: records
/// with provenance `human` need a human actor (`--as-human`).
pub fn prepare(reader: impl BufRead, actor: Actor) -> Result<PreparedImport, ImportError> {
    Ok(PreparedImport { records: check_all(reader, actor)?, actor })
}

/// Check and import every record of `reader`, without vectors.
pub fn import(
    store: &mut Store,
    reader: impl BufRead,
    actor: Actor,
    now: Timestamp,
) -> Result<ImportReport, ImportError> {
    write(store, prepare(reader, actor)?, now, None)
}

/// Write a prepared import in one transaction. `vectors` (one per record, in
/// file order, and the model that made them) are stored with the notes.
pub fn write(
    store: &mut Store,
    prepared: PreparedImport,
    now: Timestamp,
    vectors: Option<(&[NoteEmbedding], &str)>,
) -> Result<ImportReport, ImportError> {
    let PreparedImport { records, actor } = prepared;
    Ok(store.write(|w| {
        let mut report = ImportReport::default();
        let mut ids: HashMap<i64, (NoteId, Timestamp)> = HashMap::new();
        for r in &records {
            let id = w.create(&r.workspace, r.note.clone(), actor, r.created)?;
            if let Some(vector) = vectors.and_then(|(vectors, _)| vectors.get(report.notes)) {
                w.put_vectors(id, &r.workspace, vector, vectors.map_or("", |(_, model)| model))?;
            }
            ids.insert(r.source_id, (id, r.created));
            report.ids.push((r.source_id, id));
            report.notes += 1;
            report.events += 1;
        }
        for r in &records {
            let Some((status, reason, successor)) = &r.status else {
                continue;
            };
            let (id, _) = ids[&r.source_id];
            let (kind, at) = match status.as_str() {
                "superseded" => {
                    let (by, successor_created) = ids[&successor.expect("checked")];
                    (EventKind::Superseded { by }, successor_created.max(r.created))
                }
                // Never before the note's own creation (a record may be dated after this clock).
                "revoked" => (EventKind::Revoked, now.max(r.created)),
                "stale_flagged" => (EventKind::StaleFlagged, now.max(r.created)),
                "expired" => (EventKind::Expired, now.max(r.created)),
                _ => unreachable!("statuses are checked before writing"),
            };
            let reason = reason.clone().or_else(|| Some(format!("imported as {status}")));
            w.append(&Scope::All, id, EventData { kind, actor, at, reason })?;
            report.events += 1;
        }
        Ok(report)
    })?)
}

fn check_all(reader: impl BufRead, actor: Actor) -> Result<Vec<Checked>, ImportError> {
    let mut records = Vec::new();
    let mut workspace_of: HashMap<i64, (String, usize)> = HashMap::new();
    for (index, line) in reader.lines().enumerate() {
        let line_no = index + 1;
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let invalid = |message: String| ImportError::Invalid { line: line_no, message };
        let record: Record = serde_json::from_str(&line).map_err(|e| invalid(format!("not a note record: {e}")))?;
        let checked = check(record, line_no, actor).map_err(invalid)?;
        if workspace_of.insert(checked.source_id, (checked.workspace.clone(), line_no)).is_some() {
            return Err(invalid(format!("id {} appears twice", checked.source_id)));
        }
        records.push(checked);
    }
    for r in &records {
        if let Some((_, _, Some(successor))) = &r.status {
            let invalid = |message: String| ImportError::Invalid { line: r.line, message };
            let Some((workspace, _)) = workspace_of.get(successor) else {
                return Err(invalid(format!("superseded_by {successor} names no record of the file")));
            };
            if *workspace != r.workspace {
                return Err(invalid(format!("superseded_by {successor} is in another workspace ({workspace})")));
            }
            if *successor == r.source_id {
                return Err(invalid("a note cannot supersede itself".into()));
            }
        }
    }
    // Supersession chains must end: A → B → A would leave no live note.
    let successor_of: HashMap<i64, i64> =
        records.iter().filter_map(|r| Some((r.source_id, r.status.as_ref()?.2?))).collect();
    for r in &records {
        let mut seen = vec![r.source_id];
        let mut id = r.source_id;
        while let Some(next) = successor_of.get(&id) {
            if seen.contains(next) {
                return Err(ImportError::Invalid {
                    line: r.line,
                    message: format!("superseded_by forms a cycle through id {next}"),
                });
            }
            seen.push(*next);
            id = *next;
        }
    }
    Ok(records)
}

fn check(r: Record, line: usize, actor: Actor) -> Result<Checked, String> {
    let kind: Kind = r.kind.parse().map_err(|e: mnemo_core::ParseEnumError| e.to_string())?;
    let priority: Priority = r.priority.parse().map_err(|e: mnemo_core::ParseEnumError| e.to_string())?;
    let provenance: Provenance = r.provenance.parse().map_err(|e: mnemo_core::ParseEnumError| e.to_string())?;
    let created =
        Timestamp::parse(&r.created).ok_or_else(|| format!("created '{}' is not a YYYY-MM-DD date", r.created))?;
    if r.workspace.trim().is_empty() {
        return Err("workspace is empty".into());
    }
    if provenance == Provenance::UserStated && r.quote.as_deref().is_none_or(|q| q.trim().is_empty()) {
        return Err("provenance 'user-stated' needs the user's quote in `quote`".into());
    }
    let anchors = r
        .anchors
        .into_iter()
        .map(|a| {
            if a.start_line == 0 || a.end_line < a.start_line || !crate::anchor::is_plain_relative_path(&a.path) {
                return Err(format!(
                    "anchor {}:{}-{} is not a workspace-relative path with a valid range",
                    a.path, a.start_line, a.end_line
                ));
            }
            let content_sha256 = hash_if_present(&r.workspace, &a.path, a.start_line, a.end_line);
            Ok(Anchor { path: a.path, start_line: a.start_line, end_line: a.end_line, content_sha256 })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let note = NewNote { kind, priority, title: r.title, body: r.body, provenance, quote: r.quote, anchors };
    let note = note.validated(actor).map_err(|e| e.to_string())?;
    note.secret_check().map_err(|e| e.to_string())?;
    let status = match r.status.as_str() {
        "active" => None,
        "superseded" => {
            let successor = r.superseded_by.ok_or("status 'superseded' needs superseded_by")?;
            Some((r.status, r.status_reason, Some(successor)))
        }
        "revoked" | "stale_flagged" | "expired" => Some((r.status, r.status_reason, None)),
        other => {
            return Err(format!(
                "unknown status '{other}'; expected one of: active, superseded, revoked, stale_flagged, expired"
            ));
        }
    };
    Ok(Checked { line, source_id: r.id, workspace: r.workspace, note, created, status })
}

/// The hash of an anchored range when the record's workspace is a directory
/// here and the file is in it, as `--anchor` would take it; `None` otherwise
/// (the anchor is shown but cannot drift until it is pinned).
fn hash_if_present(workspace: &str, path: &str, start: u32, end: u32) -> Option<String> {
    let root = std::path::Path::new(workspace);
    if !root.is_absolute() || !root.is_dir() {
        return None;
    }
    crate::anchor::capture(root, &format!("{path}:{start}-{end}")).ok()?.content_sha256
}
