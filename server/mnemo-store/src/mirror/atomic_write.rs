//! Replacing a file whole: the new bytes go to a temp file beside it, are
//! synced, then renamed over it, so a crash leaves the old text or the new
//! one, never half. [`StagedFile`] splits the two steps, so that the slow
//! one (writing, syncing) can happen outside a lock and only the rename
//! inside it. A temp file left by a process killed in between is removed by
//! a later write of the same file once it is [`ABANDONED_AFTER`] old.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// A temp file this old is no live writer's: a staged file waits at most for
/// the store's busy timeout before it is placed or dropped.
pub const ABANDONED_AFTER: Duration = crate::store::BUSY_TIMEOUT.saturating_mul(10);

/// New bytes for a file, written and synced beside it, not yet in place.
/// Dropped without [`StagedFile::place`], the temp file is removed.
#[derive(Debug)]
pub struct StagedFile {
    temp: PathBuf,
    path: PathBuf,
    placed: bool,
}

impl StagedFile {
    /// Write `bytes` for `path` with `mode` (0444 for the mirror, 0644 for a
    /// checkout file) to a temp file in the same directory. `None` (and
    /// nothing written) when the file already holds exactly `bytes`.
    pub fn stage(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<Option<StagedFile>> {
        let current = crate::repo_file::read_limited(path, bytes.len() as u64);
        if current.is_ok_and(|current| current == bytes) {
            return Ok(None);
        }
        StagedFile::stage_over(path, bytes, mode)
    }

    /// [`StagedFile::stage`] without reading the file first, for a caller
    /// that knows it holds other bytes (the mirror's recorded digest says so).
    pub fn stage_over(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<Option<StagedFile>> {
        static SEQUENCE: AtomicU64 = AtomicU64::new(0);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        remove_abandoned(path, &name, SystemTime::now());
        let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let temp = path.with_file_name(format!(".{name}.mnemo-{}-{sequence}.tmp", std::process::id()));
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(&temp)?;
        // Ours from here on (never another process's file of the same name): dropped on failure.
        let staged = StagedFile { temp, path: path.to_path_buf(), placed: false };
        file.write_all(bytes)?;
        file.sync_all()?;
        Ok(Some(staged))
    }

    /// Rename the staged bytes over the file.
    pub fn place(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.temp, &self.path)?;
        self.placed = true;
        Ok(())
    }
}

/// Remove `.NAME.mnemo-*.tmp` beside `path` last modified [`ABANDONED_AFTER`] before `now`.
fn remove_abandoned(path: &Path, name: &str, now: SystemTime) {
    let (Some(dir), Some(cutoff)) = (path.parent(), now.checked_sub(ABANDONED_AFTER)) else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!(".{name}.mnemo-");
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let ours = file_name.starts_with(&prefix) && file_name.ends_with(".tmp");
        if ours && entry.metadata().and_then(|m| m.modified()).is_ok_and(|modified| modified < cutoff) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Replace `path` with `bytes` in one step (see the module header). Returns
/// false (and touches nothing) when the file already holds `bytes`.
pub fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<bool> {
    match StagedFile::stage(path, bytes, mode)? {
        None => Ok(false),
        Some(staged) => staged.place().map(|()| true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_staged_file_is_invisible_until_placed_and_gone_if_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("MEMORY.md");
        std::fs::write(&path, "old").unwrap();

        let dropped = StagedFile::stage(&path, b"abandoned", 0o444).unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        drop(dropped);
        assert_eq!(entries(dir.path()), ["MEMORY.md"], "the temp file is removed");

        let placed = StagedFile::stage(&path, b"new", 0o444).unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old", "not in place before place()");
        placed.place().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(entries(dir.path()), ["MEMORY.md"]);

        assert!(StagedFile::stage(&path, b"new", 0o444).unwrap().is_none(), "unchanged bytes stage nothing");
        assert!(!write_atomically(&path, b"new", 0o444).unwrap());
    }

    #[test]
    fn temp_files_of_killed_writers_are_removed_once_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("MEMORY.md");
        let now = SystemTime::now();
        let left = |name: &str, age: Duration| {
            let file = dir.path().join(name);
            std::fs::write(&file, "half").unwrap();
            std::fs::File::options().write(true).open(&file).unwrap().set_modified(now - age).unwrap();
        };
        left(".MEMORY.md.mnemo-4242-0.tmp", ABANDONED_AFTER * 2);
        left(".MEMORY.md.mnemo-4243-0.tmp", Duration::from_secs(5));
        left(".OTHER.md.mnemo-4242-0.tmp", ABANDONED_AFTER * 2);
        assert!(write_atomically(&path, b"new", 0o444).unwrap());
        assert_eq!(entries(dir.path()), [".MEMORY.md.mnemo-4243-0.tmp", ".OTHER.md.mnemo-4242-0.tmp", "MEMORY.md"]);
    }
}
