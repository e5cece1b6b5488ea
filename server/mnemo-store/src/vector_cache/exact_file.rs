//! The copy's exact vectors, kept on disk beside the store in a file of the
//! process's own: the stored floats of each chunk at its place in the copy,
//! read back with one `pread` when a search scores it exactly.
//!
//! sqlite-vec keeps 1,024 vectors to a 1.5 MB blob, and SQLite reaches a
//! slot by walking the blob's chain of overflow pages from its start, a
//! system call a page past its 2 MB page cache: ~200 µs a block, 13 ms of a
//! store-wide search at 100k notes. Mapping the store file made that walk
//! cheap, but a store file cut short under the process (a backup copied
//! over it) would then kill it with SIGBUS instead of an error. This file
//! has no name (made unlinked, `tempfile`), so nothing else can cut it
//! short, and it goes with the process; it costs disk, not memory (1.5 KB
//! a chunk: 150 MB at 100k notes of the default model), and its pages are
//! the system's file cache. Without it (the directory is not writable, the
//! disk is full) a search reads sqlite-vec's blocks, as before.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Writes are gathered to this size before they go to the file.
const GATHERED: usize = 1 << 20;

pub(super) struct ExactFile {
    file: File,
    /// Bytes of one vector.
    width: usize,
    /// Vectors not yet written, from the place `pending_from`.
    pending: Vec<u8>,
    pending_from: usize,
    /// Places written so far: the file's length in vectors.
    written: usize,
}

impl ExactFile {
    /// A new, empty file in the directory of the store at `store`
    /// (disk, where the store is; not a memory-backed `/tmp`).
    pub(super) fn create(store: &Path, width: usize) -> Option<ExactFile> {
        let dir = store.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
        // Only a file without a name (made so on Linux; a file system that
        // cannot, say NFS, would show it as `.nfs…` while it is open).
        let unnamed = |file: &File| file.metadata().is_ok_and(|m| std::os::unix::fs::MetadataExt::nlink(&m) == 0);
        match tempfile::tempfile_in(dir) {
            Ok(file) if unnamed(&file) => {
                Some(ExactFile { file, width, pending: Vec::new(), pending_from: 0, written: 0 })
            }
            Ok(_) => {
                tracing::debug!(dir = %dir.display(), "a file made there keeps its name: sqlite-vec's blocks are read instead");
                None
            }
            Err(e) => {
                tracing::debug!(dir = %dir.display(), "no file for exact vectors, sqlite-vec's blocks are read instead: {e}");
                None
            }
        }
    }

    /// Keep `bytes` (one vector) as the one at `place`. False when the
    /// file could not be written (then it is not to be read any more).
    pub(super) fn put(&mut self, place: usize, bytes: &[u8]) -> bool {
        if bytes.len() != self.width {
            return false;
        }
        if place != self.pending_from + self.pending.len() / self.width.max(1) && !self.flush() {
            return false;
        }
        if self.pending.is_empty() {
            self.pending_from = place;
        }
        self.pending.extend_from_slice(bytes);
        self.pending.len() < GATHERED || self.flush()
    }

    /// Write what was gathered. False when the file could not be written.
    pub(super) fn flush(&mut self) -> bool {
        if self.pending.is_empty() {
            return true;
        }
        let written = self.file.write_all_at(&self.pending, (self.pending_from * self.width) as u64);
        self.written = self.written.max(self.pending_from + self.pending.len() / self.width);
        self.pending.clear();
        if self.pending.capacity() > GATHERED {
            self.pending.shrink_to(GATHERED);
        }
        written.map_err(|e| tracing::debug!("the file of exact vectors could not be written: {e}")).is_ok()
    }

    /// The vector at `place`, into `out` (written ones only: the copy
    /// flushes before it is searched).
    pub(super) fn read(&self, place: usize, out: &mut Vec<u8>) -> Option<()> {
        if place >= self.written {
            return None;
        }
        out.resize(self.width, 0);
        self.file.read_exact_at(out, (place * self.width) as u64).ok()
    }
}

impl ExactFile {
    /// Overwrite every vector with zeros, on the disk (after a forget: the
    /// forgotten note's floats are not left in blocks the file gives back;
    /// the store itself deletes securely). 150 MB written for 100k notes.
    pub(super) fn wipe(&mut self) {
        self.pending.clear();
        let zeros = vec![0u8; GATHERED];
        let mut at = 0;
        let end = self.written * self.width;
        while at < end {
            let n = (end - at).min(zeros.len());
            if self.file.write_all_at(&zeros[..n], at as u64).is_err() {
                break;
            }
            at += n;
        }
        let _ = self.file.sync_data();
        self.written = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_read_back_at_their_places() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = ExactFile::create(&dir.path().join("memory.db"), 8).unwrap();
        // Gathered in order, then one out of order, then one past a gap.
        for place in 0..300_000u64 {
            assert!(file.put(place as usize, &place.to_le_bytes()));
        }
        assert!(file.put(7, &u64::MAX.to_le_bytes()));
        assert!(file.put(300_010, &42u64.to_le_bytes()));
        assert!(file.flush());
        let mut out = Vec::new();
        let at = |file: &ExactFile, place: usize, out: &mut Vec<u8>| {
            file.read(place, out).map(|()| u64::from_le_bytes(out[..8].try_into().unwrap()))
        };
        assert_eq!(at(&file, 0, &mut out), Some(0));
        assert_eq!(at(&file, 299_999, &mut out), Some(299_999));
        assert_eq!(at(&file, 7, &mut out), Some(u64::MAX));
        assert_eq!(at(&file, 300_010, &mut out), Some(42));
        assert_eq!(at(&file, 300_011, &mut out), None, "past the end");
        assert!(!file.put(1, &[0; 3]), "a vector of another width");
        assert!(file.put(300_020, &9u64.to_le_bytes()), "gathered, not yet written");
        assert_eq!(at(&file, 300_015, &mut out), None, "not written");
        file.wipe();
        assert_eq!(at(&file, 0, &mut out), None, "wiped");
        let mut zeros = vec![0u8; 8];
        file.file.read_exact_at(&mut zeros, 7 * 8).unwrap();
        assert_eq!(zeros, [0; 8]);
        // The file has no name: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
