//! Writers take turns in the kernel before they ask SQLite for its write
//! lock. SQLite's busy handler can only sleep and try again (`busy.rs`):
//! with sixteen writers, each waiting one wakes every half millisecond to
//! fail once more, and those wake-ups take the CPU the writer holding the
//! lock needs. Here a writer first takes an exclusive `flock` on the file
//! `<store>-writers` beside the store and sleeps in the kernel until it is
//! released (at commit, or when a writer's process dies), so a waiting
//! writer costs nothing until its turn.
//!
//! Without the file (a read-only directory, say) writers fall back to the
//! busy handler alone, as before; a turn not given within
//! [`BUSY_TIMEOUT`] is the same "locked" error the busy handler gives.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::error::StoreError;
use crate::store::BUSY_TIMEOUT;

/// What the turn file's name adds to the store's.
pub(crate) const SUFFIX: &str = "-writers";

/// This writer's turn: held until dropped (after its transaction ends).
pub(crate) struct Turn {
    _file: File,
}

/// The file writers of `store` take turns on.
fn turn_file(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// Wait for this writer's turn at `store`; `None` when turns cannot be
/// taken there (the busy handler alone orders writers then).
pub(crate) fn take(store: &Path) -> Result<Option<Turn>, StoreError> {
    let opened =
        OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o600).open(turn_file(store));
    let Ok(file) = opened else { return Ok(None) };
    match file.try_lock() {
        Ok(()) => return Ok(Some(Turn { _file: file })),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(_)) => return Ok(None),
    }
    // Wait on a thread, so the wait can end at the busy timeout; a turn
    // that comes after this writer gave up is handed straight back.
    let (given, waiting) = mpsc::channel();
    std::thread::spawn(move || {
        if file.lock().is_ok() {
            let _ = given.send(file);
        }
    });
    match waiting.recv_timeout(BUSY_TIMEOUT) {
        Ok(file) => Ok(Some(Turn { _file: file })),
        Err(_) => Err(StoreError::Locked { path: store.to_path_buf(), seconds: BUSY_TIMEOUT.as_secs() }),
    }
}
