//! Taking turns to render the mirror: one process renders at a time, so a
//! burst of writes from many processes costs a few renders, not one each.
//! The turn is an advisory lock on `<store>-mirror.lock` beside the store
//! file (released by the kernel when its holder exits, even killed). A
//! process that waited for its turn usually finds its write already in the
//! mirror the holder just published, and renders nothing
//! ([`super::keep_current`]).
//!
//! The turn is only an economy: publishing stays correct without it (an
//! older render never replaces a newer one), so a lock that cannot be made
//! or is held too long is skipped, not waited on forever.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a process waits for another's render before rendering anyway.
const PATIENCE: Duration = Duration::from_secs(10);

/// This process's turn to render; the next process's begins when it drops.
#[derive(Debug)]
pub(crate) struct RenderTurn {
    /// `None`: the lock could not be had (no file, or waited [`PATIENCE`]).
    _held: Option<File>,
}

/// The lock file of the store at `store_path`.
pub(crate) fn lock_path(store_path: &Path) -> PathBuf {
    let mut name = store_path.file_name().unwrap_or_default().to_os_string();
    name.push("-mirror.lock");
    store_path.with_file_name(name)
}

impl RenderTurn {
    /// Wait for the turn of the store at `store_path`.
    pub(crate) fn wait(store_path: &Path) -> RenderTurn {
        let path = lock_path(store_path);
        let file = match OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o600).open(&path)
        {
            Ok(file) => file,
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "mirror render lock unavailable; rendering without a turn");
                return RenderTurn { _held: None };
            }
        };
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return RenderTurn { _held: Some(file) },
                Err(TryLockError::WouldBlock) if started.elapsed() < PATIENCE => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => {
                    tracing::debug!(path = %path.display(), error = %e, "no mirror render turn; rendering without one");
                    return RenderTurn { _held: None };
                }
            }
        }
    }

    /// Whether this process holds the turn (false when rendering without one).
    #[cfg(test)]
    pub(crate) fn is_held(&self) -> bool {
        self._held.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_sits_beside_the_store() {
        assert_eq!(lock_path(Path::new("/d/store.db")), Path::new("/d/store.db-mirror.lock"));
    }

    #[test]
    fn a_second_turn_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store.db");
        let first = RenderTurn::wait(&store);
        assert!(first.is_held());
        let waited = std::thread::spawn(move || {
            let started = Instant::now();
            let second = RenderTurn::wait(&store);
            (second.is_held(), started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(50));
        drop(first);
        let (held, elapsed) = waited.join().unwrap();
        assert!(held && elapsed >= Duration::from_millis(40), "{elapsed:?}");
    }
}
