//! A store on PostgreSQL, as each machine uses it: the database holds the
//! team's event log (append-only there, ids and order decided there), and
//! each machine keeps a replica of it in a private SQLite file, which every
//! read — recall with FTS5 and sqlite-vec, the mirror, the language server —
//! uses as it uses a store file. So one `Store` type serves both.
//!
//! - Opening pulls what the database gained since the replica's last rev.
//! - A write ([`Store::write`]) takes the database's one write lock
//!   (an advisory transaction lock), pulls (committed on its own: a refused
//!   write leaves the replica current), runs the write on the replica
//!   (the lifecycle rules see the team's current state), pushes the rows it
//!   wrote (`push.rs`) in the same database transaction, and commits the
//!   database first: a replica that fails after that pulls its own rows back
//!   next time; a database that refuses rolls the replica back too.
//! - Long-lived processes hear other machines' writes through
//!   `LISTEN mnemo` (`listen.rs`) and pull then.
//!
//! The replica is a cache: deleting it loses nothing (the next open pulls
//! everything again), and one made from another database under the same
//! URL is thrown away, never mixed in.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rusqlite::{OptionalExtension, TransactionBehavior};

use super::copy_back::{copy_table, parse_vector};
use super::tables::TABLES;
use super::{pg, push, redact};
use crate::error::StoreError;
use crate::store::Store;
use crate::write::Writer;

/// The key of the database's write lock (`pg_advisory_xact_lock`): every
/// writer takes it, so revs are committed in order and a pull misses none.
pub(crate) const WRITE_LOCK: i64 = 0x006d_6e65_6d6f;

/// The channel every write notifies (`listen.rs`).
pub const CHANNEL: &str = "mnemo";

/// The database side of a shared store.
pub(crate) struct Shared {
    /// Taken only by `drop` (closing it blocks: see [`super::blocking`]).
    /// Behind a lock so reads (`&Store`: recall's search in the database)
    /// can use it too.
    client: Mutex<Option<postgres::Client>>,
    /// The URL to connect again with when the connection was lost (a
    /// restart of the server under a long-lived language server).
    url: String,
    /// The URL it was opened with, password redacted (for messages).
    pub shown: String,
}

/// How long a connection may take to answer a ping before it is taken as lost.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// The connection in `slot`, made again first when it was closed.
fn open_connection<'a>(
    slot: &'a mut Option<postgres::Client>,
    url: &str,
) -> Result<&'a mut postgres::Client, StoreError> {
    if slot.as_ref().is_none_or(postgres::Client::is_closed) {
        *slot = Some(super::connect_as_is(url)?);
    }
    Ok(slot.as_mut().expect("connected above"))
}

impl Shared {
    /// The connection for a pull or a write, asked first whether the server
    /// still answers (a lost connection is otherwise found only by the
    /// write it fails).
    fn client(&mut self) -> Result<&mut postgres::Client, StoreError> {
        let slot = self.client.get_mut().unwrap_or_else(PoisonError::into_inner);
        if slot.as_mut().is_some_and(|c| c.is_valid(ANSWER_WITHIN).is_err()) {
            *slot = None;
        }
        open_connection(slot, &self.url)
    }

    /// Run `f`, which only reads, with the database connection, where it
    /// may block; once more on a new connection when the old one was lost.
    pub(crate) fn with_client<T>(
        &self,
        f: impl Fn(&mut postgres::Client) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut slot = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        super::blocking(|| {
            let first = f(open_connection(&mut slot, &self.url)?);
            match first {
                // The server's "terminating connection" can reach the query
                // before the client marks itself closed: ask the server.
                Err(_) if slot.as_mut().is_some_and(|c| c.is_closed() || c.is_valid(ANSWER_WITHIN).is_err()) => {
                    *slot = None;
                    f(open_connection(&mut slot, &self.url)?)
                }
                other => other,
            }
        })
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let client = self.client.get_mut().unwrap_or_else(PoisonError::into_inner).take();
        super::blocking(|| drop(client));
    }
}

/// Where this machine keeps its replica of the store at `url`:
/// `$MNEMO_REPLICA_DIR`, else `$XDG_CACHE_HOME/mnemo/replicas`, else
/// `~/.cache/mnemo/replicas`; one file per database (the URL without its
/// password, hashed).
pub fn replica_path(url: &str) -> Result<PathBuf, StoreError> {
    let dir = match std::env::var_os("MNEMO_REPLICA_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("XDG_CACHE_HOME").filter(|d| Path::new(d).is_absolute()) {
            Some(cache) => PathBuf::from(cache).join("mnemo/replicas"),
            None => match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
                Some(home) => PathBuf::from(home).join(".cache/mnemo/replicas"),
                None => {
                    return Err(StoreError::Postgres {
                        what: format!("no place for this machine's replica of {}", redact(url)),
                        reason: "set MNEMO_REPLICA_DIR, XDG_CACHE_HOME or HOME".into(),
                    });
                }
            },
        },
    };
    crate::paths::ensure_private_dir(&dir)
        .map_err(|e| StoreError::CannotOpen { path: dir.clone(), reason: e.to_string() })?;
    Ok(dir.join(format!("{}.db", super::url_digest(url))))
}

/// Open the shared store at `url`: connect (making the schema when the
/// database has none or an older one), open this machine's replica and pull.
pub(crate) fn open(url: &str) -> Result<Store, StoreError> {
    open_with_replica(url, &replica_path(url)?)
}

/// [`open`] with the replica at `path` (a second "machine" in a test).
pub fn open_with_replica(url: &str, path: &Path) -> Result<Store, StoreError> {
    let mut client = super::connect_for_use(url)?;
    let store_id: String = client
        .query_one("SELECT value FROM mnemo_meta WHERE key = 'store_id'", &[])
        .map_err(|e| pg("cannot read which store this is", e))?
        .get(0);
    let mut store = Store::open_file(path)?;
    if replica_of(&store)?.is_some_and(|of| of != store_id) {
        // Another database under this URL (dropped and made again): start over.
        store.file = None;
        drop(store);
        crate::turns::remove_files(path);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        store = Store::open_file(path)?;
    }
    store.conn.execute_batch("CREATE TABLE IF NOT EXISTS replica (key TEXT PRIMARY KEY, value TEXT NOT NULL);")?;
    store.conn.execute("INSERT OR REPLACE INTO replica (key, value) VALUES ('store_id', ?1)", [&store_id])?;
    store.shared = Some(Shared { client: Mutex::new(Some(client)), url: url.to_string(), shown: redact(url) });
    store.pull()?;
    push::capture(&store.conn)?;
    Ok(store)
}

fn replica_of(store: &Store) -> Result<Option<String>, StoreError> {
    if !store.has_table("replica")? {
        return Ok(None);
    }
    Ok(store.conn.query_row("SELECT value FROM replica WHERE key = 'store_id'", [], |r| r.get(0)).optional()?)
}

impl Store {
    /// Whether this store is a replica of a shared (PostgreSQL) store.
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Where this store is, as said to a person: the URL (password
    /// redacted) of a shared store, else the file.
    pub fn location(&self) -> String {
        match &self.shared {
            Some(shared) => shared.shown.clone(),
            None => self.path().display().to_string(),
        }
    }

    /// Bring the replica up to the shared store (a no-op on a store file):
    /// what long-lived processes call when another machine wrote.
    pub fn pull(&mut self) -> Result<bool, StoreError> {
        if self.shared.is_none() {
            return Ok(false);
        }
        super::blocking(|| self.pull_now())
    }

    fn pull_now(&mut self) -> Result<bool, StoreError> {
        let Some(shared) = self.shared.as_mut() else { return Ok(false) };
        let mut snapshot = shared
            .client()?
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| pg("cannot begin", e))?;
        let since = replica_rev(&self.conn)?;
        let latest: i64 = snapshot
            .query_one("SELECT last_value FROM mnemo_rev", &[])
            .map_err(|e| pg("cannot read the store's revision", e))?
            .get(0);
        if latest <= since {
            return Ok(false);
        }
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut writer = Writer::new(tx, None);
        let pulled = pull_into(&mut snapshot, &mut writer)?;
        writer.finish()?;
        Ok(pulled)
    }

    /// [`Store::write`] on a shared store (see the module's header).
    pub(crate) fn write_shared<T>(
        &mut self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let shared = self.shared.as_mut().expect("a shared store");
        let mut database = shared.client()?.transaction().map_err(|e| pg("cannot begin", e))?;
        database.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK]).map_err(|e| pg("cannot lock", e))?;
        // The pull commits on its own, so a write the rules refuse leaves the replica current.
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut puller = Writer::new(tx, None);
        pull_into(&mut database, &mut puller)?;
        let pulled = puller.finish()?;
        if let Some(epoch) = pulled {
            for listener in &mut self.listeners {
                listener(epoch);
            }
        }
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut writer = Writer::new(tx, self.person.clone());
        writer.transaction().execute("DELETE FROM temp.pending", [])?;
        let value = f(&mut writer)?;
        if push::push(&mut database, &writer)? {
            let rev: i64 = database
                .query_one("SELECT nextval('mnemo_rev')", &[])
                .map_err(|e| pg("cannot read the store's revision", e))?
                .get(0);
            set_replica_rev(writer.transaction(), rev)?;
            database.execute("SELECT pg_notify($1, '')", &[&CHANNEL]).map_err(|e| pg("cannot notify", e))?;
        }
        database.commit().map_err(|e| pg("cannot commit", e))?;
        let epoch = writer.finish()?;
        if let Some(epoch) = epoch {
            for listener in &mut self.listeners {
                listener(epoch);
            }
        }
        Ok(value)
    }
}

/// Pull every row written since the replica's rev into `w`'s transaction:
/// deletions first (a key deleted and written again ends written), then
/// rows table by table (notes before what refers to them), then vectors.
fn pull_into(database: &mut impl postgres::GenericClient, w: &mut Writer<'_>) -> Result<bool, StoreError> {
    let since = replica_rev(w.transaction())?;
    let mut highest = since;
    let mut changed = false;
    let removed = database
        .query("SELECT rev, tbl, key FROM removed WHERE rev > $1 ORDER BY rev", &[&since])
        .map_err(|e| pg("cannot read what was removed", e))?;
    for row in removed {
        let (rev, table, key): (i64, String, String) = (row.get(0), row.get(1), row.get(2));
        highest = highest.max(rev);
        changed |= remove_locally(w, &table, &key)?;
    }
    for table in TABLES {
        let (added, rev) = copy_table(database, w, table, Some(since))?;
        changed |= added > 0 || rev > since;
        highest = highest.max(rev);
    }
    let (vectors, rev) = pull_vectors(database, w, since)?;
    changed |= vectors > 0;
    highest = highest.max(rev);
    // Ids of forgotten events are never reused here either.
    w.transaction().execute(
        "UPDATE sqlite_sequence SET seq = max(seq, COALESCE((SELECT max(event_id) FROM forgotten_events), 0)) WHERE name = 'events'",
        [],
    )?;
    if highest > since {
        set_replica_rev(w.transaction(), highest)?;
    }
    if changed {
        w.mark_written();
    }
    Ok(changed)
}

/// Apply one deletion of the shared store; false when there was nothing here to delete.
fn remove_locally(w: &mut Writer<'_>, table: &str, key: &str) -> Result<bool, StoreError> {
    let values: Vec<serde_json::Value> = serde_json::from_str(key).map_err(|e| StoreError::Postgres {
        what: format!("cannot read a removal from {table}"),
        reason: e.to_string(),
    })?;
    let as_sql = |v: &serde_json::Value| match v {
        serde_json::Value::Number(n) => rusqlite::types::Value::Integer(n.as_i64().unwrap_or_default()),
        serde_json::Value::String(s) => rusqlite::types::Value::Text(s.clone()),
        _ => rusqlite::types::Value::Null,
    };
    let params: Vec<rusqlite::types::Value> = values.iter().map(as_sql).collect();
    match table {
        "notes" => {
            let id =
                params.first().and_then(|v| if let rusqlite::types::Value::Integer(i) = v { Some(*i) } else { None });
            let Some(id) = id else { return Ok(false) };
            let here: bool =
                w.transaction().query_row("SELECT EXISTS (SELECT 1 FROM notes WHERE id = ?1)", [id], |r| r.get(0))?;
            if here {
                w.purge(id)?;
            }
            Ok(here)
        }
        // Gone with their note (forget, above) or never deleted at all.
        "anchors" | "events" | "event_chain" | "forgotten_events" | "workspace_moves" => Ok(false),
        "note_vectors" => {
            let Some(rusqlite::types::Value::Integer(chunk)) = params.first() else { return Ok(false) };
            delete_chunk(w, *chunk)
        }
        _ => {
            let Some(spec) = TABLES.iter().find(|t| t.name == table) else { return Ok(false) };
            let conditions: Vec<String> =
                spec.key_columns().iter().enumerate().map(|(i, k)| format!("{k} = ?{}", i + 1)).collect();
            let sql = format!("DELETE FROM {table} WHERE {}", conditions.join(" AND "));
            Ok(w.transaction().execute(&sql, rusqlite::params_from_iter(params.iter()))? > 0)
        }
    }
}

fn delete_chunk(w: &mut Writer<'_>, chunk: i64) -> Result<bool, StoreError> {
    let tx = w.transaction();
    if !crate::vectors::has_vector_table(tx)? {
        return Ok(false);
    }
    tx.prepare_cached("DELETE FROM note_vectors WHERE rowid = ?1")?.execute([chunk])?;
    Ok(tx.prepare_cached("DELETE FROM note_vector_chunks WHERE rowid = ?1")?.execute([chunk])? > 0)
}

/// The chunk vectors written since `since`, each replacing the chunk here.
fn pull_vectors(
    database: &mut impl postgres::GenericClient,
    w: &mut Writer<'_>,
    since: i64,
) -> Result<(u64, i64), StoreError> {
    let rows = database
        .query(
            "SELECT chunk, note_id, workspace, embedding::text, rev FROM note_vectors WHERE rev > $1 ORDER BY rev",
            &[&since],
        )
        .map_err(|e| pg("cannot read vectors", e))?;
    let Some(first) = rows.first() else { return Ok((0, since)) };
    let dims = parse_vector(&first.get::<_, String>(3)).len();
    if !crate::vectors::has_vector_table(w.transaction())? {
        let tx = w.transaction();
        let model: Option<String> =
            tx.query_row("SELECT value FROM vector_index WHERE key = 'model'", [], |r| r.get(0)).optional()?;
        crate::vectors::create_vector_table(tx, model.as_deref().unwrap_or("unknown"), dims)?;
    }
    let mut highest = since;
    let mut added = 0;
    for row in rows {
        let (chunk, note, workspace, text, rev): (i64, i64, String, String, i64) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        highest = highest.max(rev);
        delete_chunk(w, chunk)?;
        let tx = w.transaction();
        tx.prepare_cached("INSERT INTO note_vector_chunks (rowid, note_id) VALUES (?1, ?2)")?
            .execute(rusqlite::params![chunk, note])?;
        let blob: Vec<u8> = parse_vector(&text).iter().flat_map(|f| f.to_le_bytes()).collect();
        tx.prepare_cached("INSERT INTO note_vectors (rowid, workspace, embedding) VALUES (?1, ?2, ?3)")?
            .execute(rusqlite::params![chunk, workspace, blob])?;
        crate::vectors::vectors_written(tx, note)?;
        added += 1;
    }
    Ok((added, highest))
}

fn replica_rev(conn: &rusqlite::Connection) -> Result<i64, StoreError> {
    let value: Option<String> =
        conn.query_row("SELECT value FROM replica WHERE key = 'rev'", [], |r| r.get(0)).optional()?;
    Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
}

fn set_replica_rev(conn: &rusqlite::Connection, rev: i64) -> Result<(), StoreError> {
    conn.execute("INSERT OR REPLACE INTO replica (key, value) VALUES ('rev', ?1)", [rev.to_string()])?;
    Ok(())
}
