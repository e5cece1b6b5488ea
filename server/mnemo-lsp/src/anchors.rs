//! Anchors in the editor, from the latest drift check (`DriftState`): the
//! warning on a memory entry whose anchor drifted (with the source location
//! as related information), the information diagnostic over the anchored
//! lines of a source file, code lens "N notes" on anchored ranges, and the
//! anchors under the cursor (for hover and code actions).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mnemo_core::NoteId;
use mnemo_core::memory_md::ParsedCheckout;
use mnemo_store::drift::{AnchorCheck, Drift};
use serde_json::Value;
use tower_lsp_server::ls_types::{
    CodeActionOrCommand, CodeLens, Command, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    Position, Range, Uri,
};

use crate::actions::{action, note_action};
use crate::to_proto::Lines;

/// The latest drift check of the workspace.
#[derive(Debug, Default)]
pub struct DriftState {
    pub root: Option<PathBuf>,
    pub checks: Vec<AnchorCheck>,
    /// Where each anchor's text (note, anchor position) was last seen by a
    /// check in this session: its own lines, or the lines it had moved to.
    /// After a move and then an edit no hash finds the text any more; these
    /// are its lines then, not the old ones (which now hold other code).
    pub last_seen: HashMap<(NoteId, usize), (u32, u32)>,
    /// Active notes no agent was told for [`QUIET_DAYS`] (the ledger), read
    /// with each check: hinted in the memory document as candidates to
    /// expire or revoke.
    pub quiet: Vec<NoteId>,
    /// The notes whose bodies the session-start hook cuts at its default
    /// budget (`core::delivery::cut_at_start`), read with each check: the
    /// store changing is what changes them.
    pub start_cut: Vec<NoteId>,
}

/// How long a live note may go untold before it is hinted at.
pub const QUIET_DAYS: i64 = 90;

impl DriftState {
    /// The state after a new check: what was last seen is kept and updated.
    pub fn after(previous: &DriftState, root: PathBuf, checks: Vec<AnchorCheck>) -> DriftState {
        let mut last_seen = previous.last_seen.clone();
        for check in &checks {
            let key = (check.note, check.position);
            match check.drift {
                Drift::Fresh => {
                    last_seen.insert(key, (check.anchor.start_line, check.anchor.end_line));
                }
                Drift::Moved { start_line, end_line } => {
                    last_seen.insert(key, (start_line, end_line));
                }
                Drift::Missing => {
                    last_seen.remove(&key);
                }
                Drift::Drifted { .. } | Drift::Unchecked(_) => {}
            }
        }
        let checked: std::collections::HashSet<(NoteId, usize)> = checks.iter().map(|c| (c.note, c.position)).collect();
        last_seen.retain(|key, _| checked.contains(key));
        DriftState {
            root: Some(root),
            checks,
            last_seen,
            quiet: previous.quiet.clone(),
            start_cut: previous.start_cut.clone(),
        }
    }

    /// The lines (1-based, inclusive) an anchor's text is at now, as far as
    /// this session has seen.
    pub fn current_lines(&self, check: &AnchorCheck) -> (u32, u32) {
        match check.drift {
            Drift::Moved { start_line, end_line } => (start_line, end_line),
            Drift::Drifted { .. } => self
                .last_seen
                .get(&(check.note, check.position))
                .copied()
                .unwrap_or((check.anchor.start_line, check.anchor.end_line)),
            _ => (check.anchor.start_line, check.anchor.end_line),
        }
    }
}

/// Whether an anchor has no hash (imported without its file): it is shown
/// where it points and can be pinned, but cannot drift.
fn unhashed(check: &AnchorCheck) -> bool {
    check.anchor.content_sha256.is_none()
}

pub type DriftSnapshot = Arc<Mutex<DriftState>>;

const SOURCE: &str = "mnemo";

fn lines_range(start: u32, end: u32) -> Range {
    Range::new(Position::new(start.saturating_sub(1), 0), Position::new(end.saturating_sub(1), u32::MAX))
}

/// An anchor's drift, in words, for hover.
pub fn drift_status(check: &AnchorCheck) -> String {
    match &check.drift {
        Drift::Fresh => "fresh".into(),
        Drift::Moved { start_line, end_line } => format!("moved to lines {start_line}-{end_line}"),
        Drift::Drifted { .. } => format!("drifted: changed since {}", check.since),
        Drift::Missing => "missing: the file is gone".into(),
        Drift::Unchecked(why) => format!("not checked: {why}"),
    }
}

/// The workspace-relative path of a document, when it is a file of the workspace.
pub fn relative_path(uri: &Uri, root: Option<&Path>) -> Option<String> {
    let path = uri.to_file_path()?;
    Some(path.strip_prefix(root?).ok()?.to_str()?.to_string())
}

/// Warnings on the entries of a memory document whose anchors drifted or went missing.
pub fn memory_diagnostics(lines: &Lines, parsed: &ParsedCheckout, state: &DriftState) -> Vec<Diagnostic> {
    // Each note's checks, in the order checked: looked up per entry (a
    // search of every check per entry took seconds at 100k notes).
    let mut by_note: HashMap<NoteId, Vec<&AnchorCheck>> = HashMap::new();
    for check in state.checks.iter().filter(|c| !matches!(c.drift, Drift::Fresh | Drift::Unchecked(_))) {
        by_note.entry(check.note).or_default().push(check);
    }
    let shown = parsed.entries.iter().filter_map(|e| by_note.get(&e.entry.id?)).map(Vec::len).sum();
    let mut out = Vec::with_capacity(shown);
    for entry in &parsed.entries {
        let Some(id) = entry.entry.id else { continue };
        for &check in by_note.get(&id).into_iter().flatten() {
            let a = &check.anchor;
            let (severity, message) = match &check.drift {
                Drift::Drifted { .. } => (
                    DiagnosticSeverity::WARNING,
                    format!(
                        "#{id}: the text at {}:{}-{} changed since {}",
                        a.path, a.start_line, a.end_line, check.since
                    ),
                ),
                Drift::Missing => {
                    (DiagnosticSeverity::WARNING, format!("#{id}: {} is gone (deleted or renamed)", a.path))
                }
                Drift::Moved { start_line, end_line } => (
                    DiagnosticSeverity::HINT,
                    format!(
                        "#{id}: the text of {}:{}-{} moved to lines {start_line}-{end_line}; re-anchor it from the source file",
                        a.path, a.start_line, a.end_line
                    ),
                ),
                Drift::Fresh | Drift::Unchecked(_) => continue,
            };
            let missing = matches!(check.drift, Drift::Missing);
            let root = state.root.as_ref().filter(|_| !missing);
            let related = root.and_then(|root| Uri::from_file_path(root.join(&a.path))).map(|uri| {
                let (start, end) = state.current_lines(check);
                vec![DiagnosticRelatedInformation {
                    location: Location { uri, range: lines_range(start, end) },
                    message: format!("the lines #{id} is anchored to"),
                }]
            });
            out.push(Diagnostic {
                range: lines.range(entry.first_line, 0, 0),
                severity: Some(severity),
                source: Some(SOURCE.into()),
                message,
                related_information: related,
                ..Diagnostic::default()
            });
        }
    }
    out
}

/// Information over the anchored lines of a source file that changed or moved.
pub fn source_diagnostics(relative: &str, state: &DriftState) -> Vec<Diagnostic> {
    state
        .checks
        .iter()
        .filter(|c| c.anchor.path == relative)
        .filter_map(|check| {
            let message = match &check.drift {
                Drift::Drifted { .. } => {
                    format!("memory #{} describes these lines; they changed since {}", check.note, check.since)
                }
                Drift::Moved { .. } => format!(
                    "memory #{} describes these lines (anchored at {}-{}); re-anchor it to follow them",
                    check.note, check.anchor.start_line, check.anchor.end_line
                ),
                _ => return None,
            };
            let (start, end) = state.current_lines(check);
            Some(Diagnostic {
                range: lines_range(start, end),
                severity: Some(DiagnosticSeverity::INFORMATION),
                source: Some(SOURCE.into()),
                message,
                ..Diagnostic::default()
            })
        })
        .collect()
}

/// The anchors of `relative` whose current lines include `line` (0-based).
pub fn anchors_at(relative: &str, line: u32, state: &DriftState) -> Vec<AnchorCheck> {
    state
        .checks
        .iter()
        .filter(|c| c.anchor.path == relative && shown_in_source(c))
        .filter(|c| {
            let (start, end) = state.current_lines(c);
            start.saturating_sub(1) <= line && line < end
        })
        .cloned()
        .collect()
}

/// "N notes" over each anchored range of `relative`.
pub fn code_lenses(relative: &str, state: &DriftState) -> Vec<CodeLens> {
    let mut ranges: Vec<((u32, u32), Vec<NoteId>)> = Vec::new();
    for check in state.checks.iter().filter(|c| c.anchor.path == relative) {
        if !shown_in_source(check) {
            continue;
        }
        let lines = state.current_lines(check);
        match ranges.iter_mut().find(|(l, _)| *l == lines) {
            Some((_, ids)) if !ids.contains(&check.note) => ids.push(check.note),
            Some(_) => {}
            None => ranges.push((lines, vec![check.note])),
        }
    }
    ranges.sort();
    ranges
        .into_iter()
        .map(|((start, end), ids)| {
            let listed: Vec<String> = ids.iter().map(|id| format!("#{id}")).collect();
            let title = match ids.len() {
                1 => format!("1 note: {}", listed[0]),
                n => format!("{n} notes: {}", listed.join(", ")),
            };
            CodeLens {
                // A lens sits on the first line of its range.
                range: Range::new(Position::new(start.saturating_sub(1), 0), Position::new(start.saturating_sub(1), 0)),
                command: Some(Command {
                    title,
                    command: "mnemo.openNote".into(),
                    arguments: Some(vec![Value::from(ids[0])]),
                }),
                data: Some(serde_json::json!({ "end": end, "notes": ids })),
            }
        })
        .collect()
}

/// The notes a lens of [`code_lenses`] stands for (its `data.notes`).
pub fn lens_notes(lens: &CodeLens) -> Vec<NoteId> {
    let notes = lens.data.as_ref().and_then(|d| d.get("notes")).and_then(Value::as_array);
    notes.into_iter().flatten().filter_map(Value::as_i64).collect()
}

/// Whether an anchor is shown on its source lines (lens, hover, actions):
/// any anchor whose lines can be read, hashed or not.
fn shown_in_source(check: &AnchorCheck) -> bool {
    match check.drift {
        Drift::Missing => false,
        Drift::Unchecked(_) => unhashed(check),
        _ => true,
    }
}

/// Actions on the anchored lines under the cursor.
pub fn source_actions(anchors: &[AnchorCheck], state: &DriftState) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    for check in anchors {
        let id = check.note;
        let (start, end) = state.current_lines(check);
        let reanchor = |title: String| {
            action(
                title,
                "mnemo.reanchor",
                vec![Value::from(id), Value::from(check.position), Value::from(start), Value::from(end)],
            )
        };
        if matches!(check.drift, Drift::Drifted { .. } | Drift::Moved { .. }) {
            out.push(reanchor(format!("Re-anchor #{id} to the current text (lines {start}-{end})")));
        } else if unhashed(check) {
            out.push(reanchor(format!("Pin #{id} to the text of lines {start}-{end} (it has no hash yet)")));
        }
        out.push(note_action(format!("Open note #{id}"), "mnemo.openNote", vec![Value::from(id)]));
        if check.status == mnemo_core::Status::Active {
            out.push(note_action(format!("Flag #{id} stale…"), "mnemo.flagStale", vec![Value::from(id)]));
        }
        out.push(note_action(format!("Revoke #{id}…"), "mnemo.revoke", vec![Value::from(id)]));
    }
    out
}
