//! Opening the store: one SQLite file in WAL mode with a busy handler that
//! retries fast (`busy.rs`), so several agents and an editor can read and
//! write at once, migrated to the current schema. Also the entry to the one
//! write path, [`Store::write`].

use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use crate::error::StoreError;
use crate::kept_connections;
use crate::person::Person;
use crate::schema;
use crate::write::Writer;

/// How long a writer waits for another process's transaction before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

type CommitListener = Box<dyn FnMut(i64) + Send>;

/// An open store. Reads take `&self`; writes go through [`Store::write`].
pub struct Store {
    /// Taken once, when the store is dropped (`kept_connections`).
    pub(crate) conn: ManuallyDrop<Connection>,
    path: PathBuf,
    /// The file the connection was opened on; `None` when the connection
    /// is never to be kept (a replica's is not either: see `Drop`).
    pub(crate) file: Option<kept_connections::FileIdentity>,
    pub(crate) listeners: Vec<CommitListener>,
    /// Who this process writes as: recorded with every event it appends.
    pub(crate) person: Option<Person>,
    /// The database when this is a replica of a shared store (`postgres::replica`).
    pub(crate) shared: Option<crate::postgres::replica::Shared>,
}

impl Store {
    /// Open the store at `path`, creating it (mode 0600) when the file does
    /// not exist yet — but never its directory: a mistyped path must not
    /// quietly become a new, empty store. (The default store's directory is
    /// made by [`crate::paths::ensure_private_dir`].)
    ///
    /// A `postgres://` URL given as the path opens a shared store: this
    /// machine's replica of it, written through the database (`postgres::replica`).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        match path.to_str().filter(|p| crate::postgres::is_postgres(p)) {
            Some(url) => crate::postgres::blocking(|| crate::postgres::replica::open(url)),
            None => Store::open_file(path),
        }
    }

    /// Open the store file at `path` (see [`Store::open`]).
    pub(crate) fn open_file(path: &Path) -> Result<Store, StoreError> {
        let cannot = |reason: String| StoreError::CannotOpen { path: path.to_path_buf(), reason };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && !parent.is_dir()
        {
            return Err(cannot(format!(
                "the directory {} does not exist (mnemo creates a store only in an existing directory; create it first if this path is right)",
                parent.display()
            )));
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => return Err(cannot("it is a directory".into())),
            Ok(meta) if !meta.is_file() => {
                return Err(cannot(
                    "it is not a regular file (a FIFO, a device or a socket?); pass --store PATH to a store file"
                        .into(),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                create_private(path).map_err(|e| cannot(e.to_string()))?
            }
            Err(e) => return Err(cannot(e.to_string())),
        }
        if let Some(store) = Store::reopen_kept(path) {
            return Ok(store);
        }
        let started = Instant::now();
        loop {
            match Store::try_open(path) {
                Err(StoreError::Locked { .. }) if started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    /// Fold the write-ahead log back into the file and truncate it (after a
    /// forget: the log still holds earlier page images with the note's text).
    /// False when a reader elsewhere kept it from completing; it is retried
    /// by SQLite's next automatic checkpoint.
    pub fn checkpoint(&self) -> Result<bool, StoreError> {
        let (busy, _, _): (i64, i64, i64) =
            self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(busy == 0)
    }

    /// A store on a kept connection to `path` (`kept_connections`), checked
    /// as every open checks the schema; `None` when there is none, or it fails.
    fn reopen_kept(path: &Path) -> Option<Store> {
        let (mut conn, file) = kept_connections::take(path)?;
        schema::migrate(&mut conn, path).ok()?;
        Some(Store::on(conn, path, Some(file)))
    }

    fn on(conn: Connection, path: &Path, file: Option<kept_connections::FileIdentity>) -> Store {
        Store {
            conn: ManuallyDrop::new(conn),
            path: path.to_path_buf(),
            file,
            listeners: Vec::new(),
            person: Person::from_env(),
            shared: None,
        }
    }

    fn try_open(path: &Path) -> Result<Store, StoreError> {
        crate::vectors::register_sqlite_vec();
        let classify = |e| classify(e, path);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        // The file the connection is on: the same before and after opening
        // it, or the connection is never kept (it could be on either).
        let file = kept_connections::identity(path);
        let mut conn = Connection::open_with_flags(path, flags).map_err(classify)?;
        let file = file.filter(|before| kept_connections::identity(path) == Some(*before));
        conn.busy_handler(Some(crate::busy::retry_soon)).map_err(classify)?;
        // A statement's plan is fixed when it is prepared. Without this,
        // SQLite marks some parameters (`note_id = ?1 ORDER BY position`
        // on anchors, say) as able to change the plan, and rusqlite's cache
        // clears the bindings of each statement it takes back, which expires
        // it: every use parsed and planned it again (a quarter of a check-in).
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).map_err(classify)?;
        crate::lexical::term_counts::register(&conn).map_err(classify)?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(classify)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::CannotOpen {
                path: path.to_path_buf(),
                reason: format!("WAL mode refused (journal mode is {mode})"),
            });
        }
        // secure_delete: deleted content is zeroed in the file, so a forgotten
        // note's text does not linger in free pages.
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;")
            .map_err(classify)?;
        schema::migrate(&mut conn, path).map_err(|e| reclassify(e, path))?;
        Ok(Store::on(conn, path, file))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store-wide epoch: bumped by every committed note write.
    pub fn epoch(&self) -> Result<i64, StoreError> {
        Ok(self.conn.query_row("SELECT value FROM meta WHERE key = 'epoch'", [], |r| r.get(0))?)
    }

    /// Run `f` inside one read transaction, so everything it reads (the epoch
    /// and the notes, say) comes from the same state of the store.
    pub fn snapshot<T>(&self, f: impl FnOnce(&Store) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.in_transaction(TransactionBehavior::Deferred, f)
    }

    /// Run `f` holding the store's write lock (one IMMEDIATE transaction) without
    /// bumping the epoch: for bookkeeping that several processes must not
    /// interleave, such as putting the mirror file in place and recording its epoch.
    /// It waits its turn among the writers (`turns.rs`), as a write does.
    pub(crate) fn exclusively<T, E: From<StoreError>>(&self, f: impl FnOnce(&Store) -> Result<T, E>) -> Result<T, E> {
        let _turn = match self.conn.is_autocommit() && self.shared.is_none() {
            true => crate::turns::take_write(&self.path)?,
            false => None,
        };
        self.in_transaction(TransactionBehavior::Immediate, f)
    }

    /// Run `f` in one transaction of `behavior` (rolled back if `f` fails), or
    /// in the transaction already open on this connection.
    fn in_transaction<T, E: From<StoreError>>(
        &self,
        behavior: TransactionBehavior,
        f: impl FnOnce(&Store) -> Result<T, E>,
    ) -> Result<T, E> {
        if !self.conn.is_autocommit() {
            return f(self);
        }
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, behavior).map_err(|e| classify(e, &self.path))?;
        let value = f(self)?;
        tx.commit().map_err(|e| classify(e, &self.path))?;
        Ok(value)
    }

    /// Call `listener` with the new epoch after every committed write of this handle.
    pub fn on_commit(&mut self, listener: impl FnMut(i64) + Send + 'static) {
        self.listeners.push(Box::new(listener));
    }

    /// Whether the file has table `name` (tables made on first use, such as the vectors').
    pub(crate) fn has_table(&self, name: &str) -> Result<bool, StoreError> {
        let sql = "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1)";
        Ok(self.conn.query_row(sql, [name], |r| r.get(0))?)
    }

    /// Write as `person` from now on (instead of the one found in the environment).
    pub fn write_as(&mut self, person: Option<Person>) {
        self.person = person;
    }

    /// **The one write path.** Runs `f` in one IMMEDIATE transaction; if it
    /// wrote anything, bumps the epoch in the same transaction, commits, then
    /// notifies the listeners. An error rolls everything back.
    pub fn write<T>(&mut self, f: impl FnOnce(&mut Writer<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        if self.shared.is_some() {
            return crate::postgres::blocking(|| self.write_shared(f));
        }
        let path = self.path.clone();
        let turn = crate::turns::take_write(&path)?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| classify(e, &path))?;
        let mut writer = Writer::new(tx, self.person.clone());
        let value = f(&mut writer).map_err(|e| reclassify(e, &path))?;
        let purged = writer.purged;
        let epoch = writer.finish().map_err(|e| reclassify(e, &path))?;
        drop(turn);
        if purged {
            // No copy of a forgotten note's vectors, pages or checkout text stays in this process.
            crate::vector_cache::drop_kept(&path);
            crate::checkout::drop_kept();
            kept_connections::close_idle(&path);
            self.file = None;
        }
        if let Some(epoch) = epoch {
            for listener in &mut self.listeners {
                listener(epoch);
            }
        }
        Ok(value)
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // SAFETY: `conn` is taken here only, once, and the store is not used after.
        let conn = unsafe { ManuallyDrop::take(&mut self.conn) };
        match self.shared {
            None => kept_connections::give_back(&self.path, self.file, conn),
            Some(_) => drop(conn),
        }
    }
}

/// Turn SQLite's failure codes into errors that say what to do.
pub(crate) fn classify(e: rusqlite::Error, path: &Path) -> StoreError {
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotAStore { path },
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly { path },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            StoreError::Locked { path, seconds: BUSY_TIMEOUT.as_secs() }
        }
        Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
            StoreError::CannotOpen { path, reason: e.to_string() }
        }
        Some(ErrorCode::DiskFull) => StoreError::WriteFailed { path, reason: "the disk is full".into() },
        Some(ErrorCode::SystemIoFailure) => {
            StoreError::WriteFailed { path, reason: format!("{e} (a full disk, a file-size limit or a failing disk)") }
        }
        _ => StoreError::Sqlite(e),
    }
}

fn reclassify(e: StoreError, path: &Path) -> StoreError {
    match e {
        StoreError::Sqlite(inner) => classify(inner, path),
        other => other,
    }
}

/// A new, empty store file readable by its owner only (SQLite gives its WAL
/// and shared-memory files the same mode).
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::Store;

    /// A cached statement is planned once: using it again with other
    /// parameters must not parse and plan it anew (each check-in and each
    /// event's chain link read anchors this way, once per note).
    #[test]
    fn cached_statements_are_not_prepared_again_for_new_parameters() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("memory.db")).unwrap();
        let sql = "SELECT position, path, start_line, end_line, content_sha256 FROM anchors WHERE note_id = ?1 ORDER BY position";
        for id in 1..=3_i64 {
            let mut statement = store.conn.prepare_cached(sql).unwrap();
            let rows: Vec<i64> = statement.query_map([id], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
            assert!(rows.is_empty());
            assert_eq!(statement.get_status(StatementStatus::RePrepare), 0, "prepared again for note {id}");
        }
    }
}
