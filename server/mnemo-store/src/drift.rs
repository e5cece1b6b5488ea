//! Anchor drift: is the text a note is anchored to still there?
//!
//! [`classify`] is pure (an anchor and the file's bytes in, a verdict out):
//! the anchored lines unchanged at their place (fresh), the same text found
//! elsewhere in the file (moved: not drift; the note can be re-anchored),
//! changed (drifted), or the file gone (missing). [`Store::check_drift`]
//! reads the files — never outside the workspace, never a binary or huge
//! one — and flags each newly drifted note stale once: the same drift (note,
//! file, what the file shows now) is recorded in `drift_observations` in the
//! same transaction as its `stale_flagged` event, so it never flags twice,
//! across processes and restarts.

use std::collections::HashMap;
use std::path::Path;

use mnemo_core::{Actor, Anchor, EventData, EventKind, NoteId, Status, Timestamp};
use sha2::{Digest, Sha256};

use crate::anchor::{hash_lines, is_plain_relative_path, lines};
use crate::error::StoreError;
use crate::hex::hex;
use crate::read::Scope;
use crate::store::Store;
use crate::workspace::Workspace;

/// Files larger than this are not read for a drift check.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// Searching a file for moved text stops past this many line comparisons.
const MAX_SEARCH: usize = 20_000_000;

/// What became of an anchor's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    Fresh,
    /// The same text, now at these lines: not drift; the note can be re-anchored.
    Moved {
        start_line: u32,
        end_line: u32,
    },
    /// The lines changed. `observed` names what the file shows now (the hash
    /// of the anchored range, or of the whole file when it no longer reaches
    /// the range): the same drift has the same `observed`.
    Drifted {
        observed: String,
    },
    /// The file is gone (deleted or renamed).
    Missing,
    /// Not checked, and why: binary, too large, not a file, outside the
    /// workspace, or no hash to compare with.
    Unchecked(String),
}

impl Drift {
    /// Whether the note should be flagged stale for it.
    pub fn is_drift(&self) -> bool {
        matches!(self, Drift::Drifted { .. } | Drift::Missing)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Drift::Fresh => "fresh",
            Drift::Moved { .. } => "moved",
            Drift::Drifted { .. } => "drifted",
            Drift::Missing => "missing",
            Drift::Unchecked(_) => "unchecked",
        }
    }

    /// The observation recorded for a drift (its idempotence key).
    fn observation(&self) -> Option<String> {
        match self {
            Drift::Drifted { observed } => Some(observed.clone()),
            Drift::Missing => Some("missing".into()),
            _ => None,
        }
    }
}

/// Classify `anchor` against the current bytes of its file.
pub fn classify(anchor: &Anchor, content: &[u8]) -> Drift {
    let Some(expected) = &anchor.content_sha256 else {
        return Drift::Unchecked("imported without its file: there is no hash to compare".into());
    };
    let (start, end) = (anchor.start_line, anchor.end_line);
    let now = hash_lines(content, start, end);
    if now.as_ref() == Some(expected) {
        return Drift::Fresh;
    }
    if let Some((start_line, end_line)) = find_moved(content, (end - start + 1) as usize, expected) {
        return Drift::Moved { start_line, end_line };
    }
    let observed = now.unwrap_or_else(|| format!("short:{}", hex(Sha256::digest(content))));
    Drift::Drifted { observed }
}

/// The first window of `length` lines whose hash is `expected`.
fn find_moved(content: &[u8], length: usize, expected: &str) -> Option<(u32, u32)> {
    let all: Vec<&[u8]> = lines(content).collect();
    if length == 0 || all.len() < length || all.len().saturating_mul(length) > MAX_SEARCH {
        return None;
    }
    (0..=all.len() - length).find_map(|first| {
        let mut hasher = Sha256::new();
        for (offset, line) in all[first..first + length].iter().enumerate() {
            if offset > 0 {
                hasher.update(b"\n");
            }
            hasher.update(line);
        }
        (hex(hasher.finalize()) == expected).then_some((first as u32 + 1, (first + length) as u32))
    })
}

/// Read an anchored file of the workspace for a drift check.
pub fn read_anchored(root: &Path, relative: &str) -> Result<Vec<u8>, Drift> {
    if !is_plain_relative_path(relative) {
        return Err(Drift::Unchecked(format!("'{relative}' is not a path inside the workspace")));
    }
    let joined = root.join(relative);
    let canonical = match joined.canonicalize() {
        Ok(path) => path,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Drift::Missing),
        Err(e) => return Err(Drift::Unchecked(format!("cannot read {relative}: {e}"))),
    };
    if !canonical.starts_with(root) {
        return Err(Drift::Unchecked(format!("{relative} now leads outside the workspace (a symlink)")));
    }
    let metadata =
        std::fs::metadata(&canonical).map_err(|e| Drift::Unchecked(format!("cannot read {relative}: {e}")))?;
    if !metadata.is_file() {
        return Err(Drift::Unchecked(format!("{relative} is not a regular file")));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(Drift::Unchecked(format!("{relative} is larger than {} MB", MAX_FILE_BYTES >> 20)));
    }
    let content = std::fs::read(&canonical).map_err(|e| Drift::Unchecked(format!("cannot read {relative}: {e}")))?;
    if content.iter().take(8192).any(|b| *b == 0) {
        return Err(Drift::Unchecked(format!("{relative} is a binary file")));
    }
    Ok(content)
}

/// One anchor of a live note and what became of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorCheck {
    pub note: NoteId,
    pub status: Status,
    /// The anchor's index among the note's anchors.
    pub position: usize,
    pub anchor: Anchor,
    pub drift: Drift,
    /// The note's creation date (when the anchor was captured), `YYYY-MM-DD`.
    pub since: String,
}

/// A workspace's anchors checked, and the notes this check flagged stale.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DriftReport {
    pub anchors: Vec<AnchorCheck>,
    pub flagged: Vec<NoteId>,
    /// Files read (each once).
    pub files: usize,
}

/// Why a drifted anchor's note is flagged.
pub fn stale_reason(check: &AnchorCheck) -> String {
    let a = &check.anchor;
    match check.drift {
        Drift::Missing => format!("anchor file {} is gone (deleted or renamed)", a.path),
        _ => format!("anchor {}:{}-{} changed since {}", a.path, a.start_line, a.end_line, check.since),
    }
}

impl Store {
    /// Check every anchor of the workspace's active and stale notes, and flag
    /// each active note whose anchor newly drifted (once per drift).
    pub fn check_drift(&mut self, workspace: &Workspace, now: Timestamp) -> Result<DriftReport, StoreError> {
        let Some(root) = workspace.root.as_deref() else { return Ok(DriftReport::default()) };
        let scope = Scope::Workspace(workspace.id.clone());
        let mut files: HashMap<String, Result<Vec<u8>, Drift>> = HashMap::new();
        let mut report = DriftReport::default();
        for view in self.anchored_notes(&scope)? {
            let status = view.state.status;
            if !matches!(status, Status::Active | Status::StaleFlagged) {
                continue;
            }
            let since = view.note.created_at.date();
            for (position, anchor) in view.note.content.anchors.iter().enumerate() {
                let content = files.entry(anchor.path.clone()).or_insert_with(|| read_anchored(root, &anchor.path));
                let drift = match content {
                    Ok(bytes) => classify(anchor, bytes),
                    Err(drift) => drift.clone(),
                };
                let check = AnchorCheck {
                    note: view.note.id,
                    status,
                    position,
                    anchor: anchor.clone(),
                    drift,
                    since: since.clone(),
                };
                report.anchors.push(check);
            }
        }
        report.files = files.len();
        let drifted: Vec<&AnchorCheck> = report.anchors.iter().filter(|c| c.drift.is_drift()).collect();
        tracing::debug!(
            workspace = %workspace.id,
            anchors = report.anchors.len(),
            files = report.files,
            drifted = drifted.len(),
            "drift checked"
        );
        if drifted.is_empty() {
            return Ok(report);
        }
        report.flagged = self.write(|w| {
            let mut flagged = Vec::new();
            for check in drifted {
                let observation = check.drift.observation().expect("a drift has an observation");
                let new = w.observe_drift(check.note, &check.anchor.path, &observation, now)?;
                if new && check.status == Status::Active && !flagged.contains(&check.note) {
                    let event = EventData {
                        kind: EventKind::StaleFlagged,
                        actor: Actor::System,
                        at: now,
                        reason: Some(stale_reason(check)),
                    };
                    w.append(&scope, check.note, event)?;
                    flagged.push(check.note);
                }
            }
            Ok(flagged)
        })?;
        if !report.flagged.is_empty() {
            tracing::info!(workspace = %workspace.id, flagged = ?report.flagged, "drifted notes flagged stale");
        }
        for check in report.anchors.iter_mut().filter(|c| report.flagged.contains(&c.note)) {
            check.status = Status::StaleFlagged;
        }
        Ok(report)
    }
}

impl Store {
    /// Re-anchor anchor `position` of note `id` to lines `start..=end` of the
    /// same file as they read now. Notes are immutable, so this is docs/format.md's
    /// "changed anchors": a new note with the same text and provenance and
    /// the new anchor supersedes the old one (a stale note is reinstated
    /// first), all as the person, in one transaction. Returns the new id.
    pub fn reanchor(
        &mut self,
        workspace: &Workspace,
        id: NoteId,
        position: usize,
        (start, end): (u32, u32),
        now: Timestamp,
    ) -> Result<NoteId, StoreError> {
        let root = workspace
            .root
            .clone()
            .ok_or_else(|| crate::anchor::AnchorError::NoWorkspaceDirectory(workspace.id.clone()))?;
        let scope = Scope::Workspace(workspace.id.clone());
        let view = self.note(&scope, id)?;
        let Some(old) = view.note.content.anchors.get(position) else {
            return Err(StoreError::NoSuchAnchor { id, position });
        };
        let anchor = crate::anchor::capture(&root, &format!("{}:{start}-{end}", old.path))?;
        let reason = format!("re-anchored {}:{}-{} to lines {start}-{end}", old.path, old.start_line, old.end_line);
        let mut content = view.note.content.clone();
        content.anchors[position] = anchor;
        self.write(|w| {
            if view.state.status == Status::StaleFlagged {
                let event = EventData {
                    kind: EventKind::Reinstated,
                    actor: Actor::Human,
                    at: now,
                    reason: Some(reason.clone()),
                };
                w.append(&scope, id, event)?;
            }
            w.supersede(&scope, id, content, Actor::Human, now, Some(reason))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(content: &[u8], start: u32, end: u32) -> Anchor {
        Anchor {
            path: "src/lock.rs".into(),
            start_line: start,
            end_line: end,
            content_sha256: hash_lines(content, start, end),
        }
    }

    #[test]
    fn the_classifier_by_table() {
        let original = b"fn a() {}\nlet g = lock();\nrestart(g);\nfn b() {}\n";
        let at_2_3 = anchor(original, 2, 3);
        let cases: [(&str, &[u8], Drift); 5] = [
            ("unchanged", original, Drift::Fresh),
            (
                "moved down two lines",
                b"// new\n// header\nfn a() {}\nlet g = lock();\nrestart(g);\n",
                Drift::Moved { start_line: 4, end_line: 5 },
            ),
            (
                "changed",
                b"fn a() {}\nlet g = lock();\nrestart_now(g);\nfn b() {}\n",
                Drift::Drifted {
                    observed: hash_lines(b"fn a() {}\nlet g = lock();\nrestart_now(g);\n", 2, 3).unwrap(),
                },
            ),
            (
                "shorter than the range",
                b"fn a() {}\n",
                Drift::Drifted { observed: format!("short:{}", hex(Sha256::digest(b"fn a() {}\n"))) },
            ),
            ("empty", b"", Drift::Drifted { observed: format!("short:{}", hex(Sha256::digest(b""))) }),
        ];
        for (name, content, expected) in cases {
            assert_eq!(classify(&at_2_3, content), expected, "{name}");
        }
        let unhashed = Anchor { content_sha256: None, ..at_2_3 };
        assert!(matches!(classify(&unhashed, original), Drift::Unchecked(_)));
        assert_eq!(crate::anchor::line_count(original), 4);
    }

    #[test]
    fn reading_refuses_escapes_binaries_and_reports_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src dir")).unwrap();
        std::fs::write(root.join("src dir/ünï côde.rs"), "x\n").unwrap();
        std::fs::write(root.join("blob.bin"), b"\x7fELF\x00\x00").unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("escape.rs")).unwrap();
        assert_eq!(read_anchored(&root, "src dir/ünï côde.rs").unwrap(), b"x\n");
        assert_eq!(read_anchored(&root, "gone.rs"), Err(Drift::Missing));
        let unchecked = |path: &str| match read_anchored(&root, path) {
            Err(Drift::Unchecked(why)) => why,
            other => panic!("{path}: {other:?}"),
        };
        assert!(unchecked("blob.bin").contains("binary"));
        assert!(unchecked("escape.rs").contains("outside the workspace"));
        assert!(unchecked("../etc/passwd").contains("not a path inside the workspace"));
        assert!(unchecked("src dir").contains("not a regular file"));
        std::fs::write(root.join("huge.txt"), vec![b'x'; (MAX_FILE_BYTES + 1) as usize]).unwrap();
        assert!(unchecked("huge.txt").contains("larger than 8 MB"));
    }
}
