//! Processes take turns in the kernel: an exclusive `flock` on a file
//! beside the store, slept on until it is released (when its holder is done,
//! or its process dies), so a process waiting its turn costs nothing until
//! then. Three kinds of turn:
//!
//! - **Writing** (`<store>-writers`, [`take_write`]): taken before SQLite's
//!   write lock. SQLite's busy handler can only sleep and try again
//!   (`busy.rs`): with sixteen writers, each waiting one woke every half
//!   millisecond to fail once more, and those wake-ups took the CPU the
//!   writer holding the lock needed. A turn not given within
//!   [`BUSY_TIMEOUT`] is the same "locked" error the busy handler gives.
//! - **Rendering a mirror** (`<store>-mirror-<key>.lock`, one per mirror
//!   file, [`try_render`]): one process renders it at a time, and a
//!   process that finds the turn taken
//!   does not wait: the holder looks again when it is done, and renders
//!   what was written meanwhile (`mirror::keep_current`), so a burst of
//!   writes from many processes costs a few renders, and no writer waits
//!   for another's render. Only an economy: publishing stays correct
//!   without it.
//! - **Standing for a mirror** (`<store>-mirror-<key>.standing`,
//!   [`try_stand`]): held for as long as a long-lived process renders that
//!   mirror for every writer (`mirror::standing`), its modification time
//!   that process's last sign of life; a writer that finds it held (and
//!   touched lately) leaves the render to that process.
//!
//! Without the file (a read-only directory; a link, a FIFO or someone
//! else's file in its place) there is no turn: writers fall back to the busy
//! handler alone, renderers render at once.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use crate::error::StoreError;
use crate::store::BUSY_TIMEOUT;

/// What the writers' turn file adds to the store's name.
const WRITE_SUFFIX: &str = "-writers";
/// What a mirror renderers' turn file adds to the store's name, around
/// the key of the mirror ([`try_render`]).
const RENDER_PREFIX: &str = "-mirror-";
const RENDER_EXTENSION: &str = ".lock";
/// What a mirror's standing renderer's file ends with (after the same prefix and key).
const STANDING_EXTENSION: &str = ".standing";

/// A turn: held until dropped.
#[derive(Debug)]
pub(crate) struct Turn {
    file: File,
}

impl Turn {
    /// Mark the turn's file as touched now: a sign of life others can read
    /// ([`try_stand`]'s `StandTurn::Held { quiet_for }`).
    pub(crate) fn touch(&self) {
        let _ = self.file.set_modified(std::time::SystemTime::now());
    }
}

/// Wait for a writer's turn at `store` (taken before SQLite's write lock,
/// dropped after the transaction ends); `None` when turns cannot be taken
/// there (the busy handler alone orders writers then).
pub(crate) fn take_write(store: &Path) -> Result<Option<Turn>, StoreError> {
    match wait(store, WRITE_SUFFIX, BUSY_TIMEOUT) {
        Waited::Given(turn) => Ok(Some(turn)),
        Waited::NoTurn => Ok(None),
        Waited::TimedOut => Err(StoreError::Locked { path: store.to_path_buf(), seconds: BUSY_TIMEOUT.as_secs() }),
    }
}

/// Whether this process may render the mirror of `store` now.
#[derive(Debug)]
pub(crate) enum RenderTurn {
    Taken(Turn),
    /// Another process is rendering.
    Held,
    /// There is no turn to take here: render without one.
    Unavailable,
}

/// Take the turn to render the mirror `key` names (one mirror file of one
/// workspace) of `store`, without waiting.
pub(crate) fn try_render(store: &Path, key: &str) -> RenderTurn {
    match try_take(store, &format!("{RENDER_PREFIX}{key}{RENDER_EXTENSION}")) {
        Tried::Taken(turn) => RenderTurn::Taken(turn),
        Tried::Held(_) => RenderTurn::Held,
        Tried::Unavailable => RenderTurn::Unavailable,
    }
}

/// What trying a turn without waiting came to.
enum Tried {
    Taken(Turn),
    /// Another holds it; its file, opened.
    Held(File),
    Unavailable,
}

/// Try the turn on the file `suffix` names beside `store`, without waiting.
fn try_take(store: &Path, suffix: &str) -> Tried {
    let Some(file) = open_turn_file(store, suffix) else { return Tried::Unavailable };
    match file.try_lock() {
        Ok(()) => Tried::Taken(Turn { file }),
        Err(TryLockError::WouldBlock) => Tried::Held(file),
        Err(TryLockError::Error(_)) => Tried::Unavailable,
    }
}

/// Wait for the turn to render the mirror `key` names, at most `patience`
/// (`Held` when it did not come by then): for a process that renders in
/// the background, where waiting keeps no writer waiting.
pub(crate) fn take_render(store: &Path, key: &str, patience: Duration) -> RenderTurn {
    match wait(store, &format!("{RENDER_PREFIX}{key}{RENDER_EXTENSION}"), patience) {
        Waited::Given(turn) => RenderTurn::Taken(turn),
        Waited::TimedOut => RenderTurn::Held,
        Waited::NoTurn => RenderTurn::Unavailable,
    }
}

/// Whether this process may stand for a mirror.
#[derive(Debug)]
pub(crate) enum StandTurn {
    Taken(Turn),
    /// Another process stands; its last sign of life ([`Turn::touch`]) was this long ago.
    Held {
        quiet_for: Duration,
    },
    Unavailable,
}

/// Stand for the mirror `key` names, without waiting.
pub(crate) fn try_stand(store: &Path, key: &str) -> StandTurn {
    match try_take(store, &format!("{RENDER_PREFIX}{key}{STANDING_EXTENSION}")) {
        Tried::Taken(turn) => StandTurn::Taken(turn),
        Tried::Held(file) => {
            let touched = file.metadata().and_then(|m| m.modified()).ok();
            let quiet_for = touched.and_then(|t| t.elapsed().ok()).unwrap_or_default();
            StandTurn::Held { quiet_for }
        }
        Tried::Unavailable => StandTurn::Unavailable,
    }
}

/// Remove the turn files beside the store file at `path` (a replica made
/// again, a temporary copy done with).
pub(crate) fn remove_files(path: &Path) {
    let _ = std::fs::remove_file(turn_file(path, WRITE_SUFFIX));
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return };
    let prefix = format!("{}{RENDER_PREFIX}", name.to_string_lossy());
    for entry in std::fs::read_dir(dir).into_iter().flatten().filter_map(Result::ok) {
        let file = entry.file_name().to_string_lossy().into_owned();
        if file.starts_with(&prefix) && (file.ends_with(RENDER_EXTENSION) || file.ends_with(STANDING_EXTENSION)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The file turns of `store` are taken on, beside the file SQLite opens (a
/// store reached through a symbolic link has its log, and its turns,
/// beside the link's target).
fn turn_file(store: &Path, suffix: &str) -> PathBuf {
    let mut name = std::fs::canonicalize(store).unwrap_or_else(|_| store.to_path_buf()).into_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// How many processes' threads of this process may wait for a turn at
/// once; more go without (a stuck turn must not pile up threads).
const WAITING_AT_MOST: usize = 64;

static WAITING: AtomicUsize = AtomicUsize::new(0);

enum Waited {
    Given(Turn),
    /// No turn can be taken here (no file, or too many waiting).
    NoTurn,
    TimedOut,
}

fn wait(store: &Path, suffix: &str, patience: Duration) -> Waited {
    let Some(file) = open_turn_file(store, suffix) else { return Waited::NoTurn };
    match file.try_lock() {
        Ok(()) => return Waited::Given(Turn { file }),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(_)) => return Waited::NoTurn,
    }
    if WAITING.fetch_add(1, Ordering::SeqCst) >= WAITING_AT_MOST {
        WAITING.fetch_sub(1, Ordering::SeqCst);
        return Waited::NoTurn;
    }
    // Wait on a thread, so the wait can end at `patience`; a turn that
    // comes after this process gave up is handed straight back.
    let (given, waiting) = mpsc::channel();
    std::thread::spawn(move || {
        if file.lock().is_ok() {
            let _ = given.send(file);
        }
        WAITING.fetch_sub(1, Ordering::SeqCst);
    });
    match waiting.recv_timeout(patience) {
        Ok(file) => Waited::Given(Turn { file }),
        // The lock could not be taken at all.
        Err(RecvTimeoutError::Disconnected) => Waited::NoTurn,
        Err(RecvTimeoutError::Timeout) => Waited::TimedOut,
    }
}

/// The turn file, opened without following a link or blocking on a FIFO,
/// and only when it is a regular file of the store's owner: a file someone
/// else made there could otherwise be locked forever to stop every write.
fn open_turn_file(store: &Path, suffix: &str) -> Option<File> {
    let owner = std::fs::metadata(store).ok()?.uid();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(turn_file(store, suffix))
        .ok()?;
    let meta = file.metadata().ok()?;
    (meta.is_file() && meta.uid() == owner).then_some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_render_turn_is_taken_by_one_process_at_a_time_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store.db");
        std::fs::write(&store, "").unwrap();
        let first = try_render(&store, "a");
        assert!(matches!(first, RenderTurn::Taken(_)));
        assert!(dir.path().join("store.db-mirror-a.lock").is_file());
        assert!(matches!(try_render(&store, "a"), RenderTurn::Held));
        assert!(matches!(try_render(&store, "b"), RenderTurn::Taken(_)), "another mirror's turn is its own");
        drop(first);
        assert!(matches!(try_render(&store, "a"), RenderTurn::Taken(_)));
        let StandTurn::Taken(standing) = try_stand(&store, "a") else { panic!("standing is not rendering") };
        standing.touch();
        let StandTurn::Held { quiet_for } = try_stand(&store, "a") else { panic!("one stands at a time") };
        assert!(quiet_for < Duration::from_secs(5), "{quiet_for:?}");
        let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        standing.file.set_modified(an_hour_ago).unwrap();
        let StandTurn::Held { quiet_for } = try_stand(&store, "a") else { panic!("still held") };
        assert!(quiet_for >= Duration::from_secs(3599), "{quiet_for:?}");
        standing.touch();
        assert!(matches!(try_stand(&store, "a"), StandTurn::Held { quiet_for } if quiet_for < Duration::from_secs(5)));
        drop(standing);
        std::fs::remove_file(dir.path().join("store.db-mirror-a.lock")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), dir.path().join("store.db-mirror-a.lock")).unwrap();
        assert!(matches!(try_render(&store, "a"), RenderTurn::Unavailable), "a link is not followed");
        remove_files(&store);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["store.db"], "the turn files are removed with the store's");
    }
}
