//! Writers take turns in the kernel before they ask SQLite for its write
//! lock. SQLite's busy handler can only sleep and try again (`busy.rs`):
//! with sixteen writers, each waiting one wakes every half millisecond to
//! fail once more, and those wake-ups take the CPU the writer holding the
//! lock needs. Here a writer first takes an exclusive `flock` on the file
//! `<store>-writers` beside the store and sleeps in the kernel until it is
//! released (at commit, or when a writer's process dies), so a waiting
//! writer costs nothing until its turn.
//!
//! Without the file (a read-only directory; a link, a FIFO or someone
//! else's file in its place) writers fall back to the busy handler alone,
//! as before; a turn not given within [`BUSY_TIMEOUT`] is the same "locked"
//! error the busy handler gives.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};

use crate::error::StoreError;
use crate::store::BUSY_TIMEOUT;

/// What the turn file's name adds to the store's.
pub(crate) const SUFFIX: &str = "-writers";

/// This writer's turn: held until dropped (after its transaction ends).
pub(crate) struct Turn {
    _file: File,
}

/// The file writers of `store` take turns on, beside the file SQLite
/// opens (a store reached through a symbolic link has its log, and its
/// turns, beside the link's target).
fn turn_file(store: &Path) -> PathBuf {
    let mut name = std::fs::canonicalize(store).unwrap_or_else(|_| store.to_path_buf()).into_os_string();
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// How many writers of this process may wait for a turn at once; more
/// wait in SQLite's busy handler (a stuck turn must not pile up threads).
const WAITING_AT_MOST: usize = 64;

static WAITING: AtomicUsize = AtomicUsize::new(0);

/// Wait for this writer's turn at `store`; `None` when turns cannot be
/// taken there (the busy handler alone orders writers then).
pub(crate) fn take(store: &Path) -> Result<Option<Turn>, StoreError> {
    let Some(file) = open_turn_file(store) else { return Ok(None) };
    match file.try_lock() {
        Ok(()) => return Ok(Some(Turn { _file: file })),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(_)) => return Ok(None),
    }
    if WAITING.fetch_add(1, Ordering::SeqCst) >= WAITING_AT_MOST {
        WAITING.fetch_sub(1, Ordering::SeqCst);
        return Ok(None);
    }
    // Wait on a thread, so the wait can end at the busy timeout; a turn
    // that comes after this writer gave up is handed straight back.
    let (given, waiting) = mpsc::channel();
    std::thread::spawn(move || {
        if file.lock().is_ok() {
            let _ = given.send(file);
        }
        WAITING.fetch_sub(1, Ordering::SeqCst);
    });
    match waiting.recv_timeout(BUSY_TIMEOUT) {
        Ok(file) => Ok(Some(Turn { _file: file })),
        // The lock could not be taken at all: the busy handler decides.
        Err(RecvTimeoutError::Disconnected) => Ok(None),
        Err(RecvTimeoutError::Timeout) => {
            Err(StoreError::Locked { path: store.to_path_buf(), seconds: BUSY_TIMEOUT.as_secs() })
        }
    }
}

/// The turn file, opened without following a link or blocking on a FIFO,
/// and only when it is a regular file of the store's owner: a file someone
/// else made there could otherwise be locked forever to stop every write.
fn open_turn_file(store: &Path) -> Option<File> {
    let owner = std::fs::metadata(store).ok()?.uid();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(turn_file(store))
        .ok()?;
    let meta = file.metadata().ok()?;
    (meta.is_file() && meta.uid() == owner).then_some(file)
}
