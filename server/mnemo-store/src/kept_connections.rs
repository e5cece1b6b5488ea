//! Connections kept open between the requests of a long-lived process (the
//! language server and the MCP server open a store per request). Opening
//! one costs more than most requests: SQLite reads and parses the whole
//! schema, sqlite-vec registers its functions, the write-ahead log's index
//! is mapped, and every statement is prepared anew; a kept connection keeps
//! its parsed schema and its prepared statements.
//!
//! Only after [`keep_connections`]; a connection is kept only when it holds
//! no transaction, and handed out again only for the same path naming the
//! same file (device and inode: a store deleted and made again at that path
//! is opened anew) and after the schema check of every open. A connection
//! idle for [`IDLE_FOR`] is closed (the last connection to close folds the
//! write-ahead log back and removes it, as when nothing was kept: a store
//! left alone is a single file again, one a person may copy or restore),
//! and so is every idle one of a store when a note of it is forgotten (no
//! page of the forgotten note stays in this process's caches).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// How many idle connections a process keeps, across stores.
const KEPT_AT_MOST: usize = 4;

/// How long a connection is kept idle.
pub const IDLE_FOR: Duration = Duration::from_secs(5);

static ENABLED: AtomicBool = AtomicBool::new(false);
/// How many opens this process answered with a kept connection.
static REUSED: AtomicU64 = AtomicU64::new(0);
/// Idle connections, the most recently given back last.
static IDLE: Mutex<Vec<Idle>> = Mutex::new(Vec::new());

struct Idle {
    path: PathBuf,
    file: FileIdentity,
    conn: Connection,
    since: Instant,
}

/// Which file a path named: its device and inode.
pub(crate) type FileIdentity = (u64, u64);

/// Keep this process's store connections open between uses (closed once
/// idle for [`IDLE_FOR`], by a thread that looks every second).
pub fn keep_connections() {
    if !ENABLED.swap(true, Ordering::Relaxed) {
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                close(|idle| idle.since.elapsed() >= IDLE_FOR);
            }
        });
    }
}

/// Close every idle connection to the store at `path` (a note of it was forgotten).
pub(crate) fn close_idle(path: &Path) {
    close(|idle| idle.path == path);
}

/// Close the idle connections `which` picks, outside the lock.
fn close(which: impl Fn(&Idle) -> bool) {
    let closing: Vec<Idle> = {
        let mut idle = IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (closing, kept) = std::mem::take(&mut *idle).into_iter().partition(|i| which(i));
        *idle = kept;
        closing
    };
    drop(closing);
}

/// How many opens this process answered with a kept connection.
pub fn reused() -> u64 {
    REUSED.load(Ordering::Relaxed)
}

/// The file `path` names now; `None` when it cannot be read.
pub(crate) fn identity(path: &Path) -> Option<FileIdentity> {
    std::fs::metadata(path).ok().map(|meta| (meta.dev(), meta.ino()))
}

/// An idle connection to the file at `path`, when one is kept.
pub(crate) fn take(path: &Path) -> Option<(Connection, FileIdentity)> {
    if !ENABLED.load(Ordering::Relaxed) {
        return None;
    }
    let file = identity(path)?;
    let mut idle = IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let at = idle.iter().rposition(|i| i.path == path && i.file == file && i.since.elapsed() < IDLE_FOR)?;
    REUSED.fetch_add(1, Ordering::Relaxed);
    Some((idle.remove(at).conn, file))
}

/// Keep `conn` (opened on `file` at `path`) for the next open, or close it.
pub(crate) fn give_back(path: &Path, file: Option<FileIdentity>, conn: Connection) {
    let Some(file) = file.filter(|_| ENABLED.load(Ordering::Relaxed) && conn.is_autocommit()) else { return };
    let oldest = {
        let mut idle = IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        idle.push(Idle { path: path.to_path_buf(), file, conn, since: Instant::now() });
        (idle.len() > KEPT_AT_MOST).then(|| idle.remove(0))
    };
    // Closed outside the lock.
    drop(oldest);
}
