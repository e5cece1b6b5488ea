//! Where each note's entry is in the mirror on disk, for workspace symbols,
//! go-to-definition and opening a note: the file is read and its entry
//! lines found once per version of the file, always on a blocking thread,
//! never on the async runtime.
//!
//! The cache is keyed by the file's identity (device, inode, size,
//! modification and change times), not by the store's epoch: the mirror on disk is
//! what the answers point into, and it changes by a rename whenever anyone
//! renders it — which may be after the epoch moved (the writer renders
//! after its commit), or by `git checkout` with no write at all. So an
//! answer is always the file as it is now, exactly as reading it each time
//! would give, and reading it again happens only when it changed.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mnemo_core::NoteId;
use mnemo_store::mirror;

use crate::server::Backend;
use crate::symbols::entry_lines;

/// The line of each entry of a mirror, by note.
pub type EntryLines = HashMap<NoteId, u32>;

/// The entry lines of the mirror last read, and which file they came from.
#[derive(Default)]
pub struct MirrorEntries {
    cached: Mutex<Option<Cached>>,
}

struct Cached {
    path: PathBuf,
    identity: FileIdentity,
    lines: Arc<EntryLines>,
}

/// What changes whenever a file is replaced or rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    device: u64,
    inode: u64,
    size: u64,
    modified_seconds: i64,
    modified_nanoseconds: i64,
    changed_seconds: i64,
    changed_nanoseconds: i64,
}

impl FileIdentity {
    fn of(path: &Path) -> Option<FileIdentity> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileIdentity {
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.size(),
            modified_seconds: meta.mtime(),
            modified_nanoseconds: meta.mtime_nsec(),
            changed_seconds: meta.ctime(),
            changed_nanoseconds: meta.ctime_nsec(),
        })
    }
}

impl MirrorEntries {
    /// The entry lines of the mirror at `path`; `None` when it cannot be read.
    /// Blocking: it looks at the file, and reads it when it changed.
    pub fn lines(&self, path: &Path) -> Option<Arc<EntryLines>> {
        // Looked at before reading: a file replaced in between is newer than
        // its key, so the next call reads it again rather than keep old lines.
        let identity = FileIdentity::of(path)?;
        {
            let cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(cached) = cached.as_ref().filter(|c| c.path == path && c.identity == identity) {
                return Some(cached.lines.clone());
            }
        }
        let text = mnemo_store::repo_file::read_text(path).ok()?;
        let lines = Arc::new(entry_lines(&text));
        let size = text.len();
        drop(text);
        crate::memory::release_after(size);
        tracing::debug!(path = %path.display(), entries = lines.len(), "mirror read: its entry lines are cached until the file changes");
        let fresh = Cached { path: path.to_path_buf(), identity, lines: lines.clone() };
        *self.cached.lock().unwrap_or_else(|e| e.into_inner()) = Some(fresh);
        Some(lines)
    }
}

impl Backend {
    /// The workspace's mirror as configured, and where its entries are
    /// (`None` inside: it cannot be read); `None` for a workspace that has
    /// no mirror. Read on a blocking thread (the config and the file).
    pub(crate) async fn mirror_entries(&self) -> Option<(PathBuf, Option<Arc<EntryLines>>)> {
        let (workspace, cache) = (self.workspace(), self.mirror_entries.clone());
        tokio::task::spawn_blocking(move || {
            let path = mirror::location(&workspace).ok().flatten()?.path;
            let lines = cache.lines(&path);
            Some((path, lines))
        })
        .await
        .ok()
        .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_by_rename(path: &Path, text: &str) {
        let staged = path.with_extension("tmp");
        std::fs::write(&staged, text).unwrap();
        std::fs::rename(&staged, path).unwrap();
    }

    #[test]
    fn an_unchanged_mirror_is_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("MEMORY.md");
        std::fs::write(&path, "x\n- [#12] 2026-01-01 · low · a\n").unwrap();
        let entries = MirrorEntries::default();
        let first = entries.lines(&path).unwrap();
        assert_eq!(*first, HashMap::from([(12, 1)]));
        assert!(Arc::ptr_eq(&first, &entries.lines(&path).unwrap()), "served from the cache");
    }

    #[test]
    fn a_mirror_rendered_again_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("MEMORY.md");
        let entries = MirrorEntries::default();
        write_by_rename(&path, "x\n- [#12] 2026-01-01 · low · a\n");
        assert_eq!(*entries.lines(&path).unwrap(), HashMap::from([(12, 1)]));
        // The same size, renamed into place as every render is.
        write_by_rename(&path, "x\n- [#13] 2026-01-01 · low · a\n");
        assert_eq!(*entries.lines(&path).unwrap(), HashMap::from([(13, 1)]));
        // Rewritten in place (a person, an editor), longer.
        std::fs::write(&path, "x\n\n- [#13] 2026-01-01 · low · a\n").unwrap();
        assert_eq!(*entries.lines(&path).unwrap(), HashMap::from([(13, 2)]));
    }

    #[test]
    fn a_missing_or_unreadable_mirror_has_no_lines_and_another_path_is_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let entries = MirrorEntries::default();
        assert!(entries.lines(&dir.path().join("MEMORY.md")).is_none(), "missing");
        assert!(entries.lines(dir.path()).is_none(), "a directory");
        let (one, two) = (dir.path().join("one.md"), dir.path().join("two.md"));
        std::fs::write(&one, "- [#1] 2026-01-01 · low · a\n").unwrap();
        std::fs::write(&two, "- [#2] 2026-01-01 · low · a\n").unwrap();
        assert_eq!(*entries.lines(&one).unwrap(), HashMap::from([(1, 0)]));
        assert_eq!(*entries.lines(&two).unwrap(), HashMap::from([(2, 0)]), "the path is part of the key");
    }
}
