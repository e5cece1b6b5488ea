//! The shared store on PostgreSQL (with pgvector), for a team: its schema
//! (`schema.sql`: the same tables as the SQLite file, append-only enforced
//! by triggers and by what the `mnemo_writer` role is granted) and copying a
//! SQLite store into it (`copy.rs`) and back (`copy_back.rs`), every event
//! and vector, idempotently, over one list of tables (`tables.rs`).
//! Every command uses a PostgreSQL store through the same [`crate::Store`]
//! as a file: each machine reads a replica and writes through the database
//! (`replica.rs`, `push.rs`), and hears other machines' writes (`listen.rs`);
//! recall searches the database itself (`search.rs`).

mod copy;
mod copy_back;
pub mod listen;
mod push;
pub(crate) mod replica;
pub(crate) mod search;
mod tables;

pub use copy::{CopyReport, copy_into};
pub use copy_back::copy_out;
pub use replica::{open_with_replica, replica_path};

use crate::error::StoreError;

/// The schema, run (idempotently) on every connect.
const SCHEMA: &str = include_str!("schema.sql");

/// Whether `location` names a PostgreSQL database rather than a file.
pub fn is_postgres(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// Connect to `url` (a `postgres://` URL; a Unix socket directory as
/// `host=/path` in its query) and make sure the schema is there (a copy
/// into it).
pub fn connect(url: &str) -> Result<postgres::Client, StoreError> {
    let mut client = connect_as_is(url)?;
    client.batch_execute(SCHEMA).map_err(|e| pg("cannot create the schema", e))?;
    Ok(client)
}

/// The schema version `schema.sql` makes (its `mnemo_meta` row).
const SCHEMA_VERSION: u32 = 3;

/// Connect to `url` to use the store: the schema is made when the database
/// has none or an older one (which takes its owner); a role that may only
/// write (`mnemo_writer`) uses a database made already.
pub(crate) fn connect_for_use(url: &str) -> Result<postgres::Client, StoreError> {
    let mut client = connect_as_is(url)?;
    let made: bool = client
        .query_one("SELECT to_regclass('mnemo_meta') IS NOT NULL", &[])
        .map_err(|e| pg("cannot read the schema", e))?
        .get(0);
    let current: Option<String> = match made {
        true => client
            .query_opt("SELECT value FROM mnemo_meta WHERE key = 'schema'", &[])
            .map_err(|e| pg("cannot read the schema", e))?
            .map(|r| r.get(0)),
        false => None,
    };
    // Only an older schema is made again (a newer one is a newer mnemo's).
    if current.and_then(|v| v.parse::<u32>().ok()).is_none_or(|v| v < SCHEMA_VERSION) {
        client.batch_execute(SCHEMA).map_err(|e| pg("cannot create the schema", e))?;
    }
    Ok(client)
}

/// Connect to `url` and change nothing (reading it back, verifying it: a
/// dropped guard must be found, not quietly made again).
pub fn connect_as_is(url: &str) -> Result<postgres::Client, StoreError> {
    postgres::Client::connect(url, postgres::NoTls).map_err(|e| {
        // The client says "error connecting to server"; why is in its source.
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            reason = format!("{reason}: {cause}");
            source = cause.source();
        }
        if e.as_db_error().is_none() {
            reason.push_str(
                " (is the server running, and the URL right? a Unix socket is `?host=/its/directory`; nothing was changed)",
            );
        }
        StoreError::Postgres { what: format!("cannot connect to {}", redact(url)), reason }
    })
}

/// `store verify` of a PostgreSQL store: copied into a private temporary
/// SQLite file (the same replay, the same hash chain), plus the database's
/// own guards — the append-only triggers, and no UPDATE or DELETE granted
/// to `mnemo_writer` on the log.
pub fn verify(client: &mut postgres::Client) -> Result<crate::verify::VerifyReport, StoreError> {
    let path =
        std::env::temp_dir().join(format!("mnemo-verify-{}-{:?}.db", std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_file(&path);
    let report = (|| {
        let mut store = crate::Store::open(&path)?;
        copy_out(client, &mut store)?;
        let mut report = store.verify()?;
        // The file's own triggers are the file's; the database's are checked below.
        report.problems.retain(|(place, _)| !place.starts_with("trigger "));
        for table in ["notes", "anchors", "events", "event_chain", "forgotten_events", "workspace_moves"] {
            let trigger = format!("{table}_are_append_only");
            let there: bool = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = $1 AND NOT tgisinternal)",
                    &[&trigger],
                )
                .map_err(|e| pg("cannot read the triggers", e))?
                .get(0);
            if !there {
                report
                    .problems
                    .push((format!("trigger {trigger}"), "is gone: the append-only guard was dropped".into()));
            }
            let granted: bool = client
                .query_one(
                    "SELECT has_table_privilege('mnemo_writer', $1, 'UPDATE') OR has_table_privilege('mnemo_writer', $1, 'DELETE')",
                    &[&table],
                )
                .map_err(|e| pg("cannot read the grants", e))?
                .get(0);
            if granted {
                report.problems.push((format!("table {table}"), "mnemo_writer may UPDATE or DELETE it".into()));
            }
        }
        Ok(report)
    })();
    crate::turns::remove_files(&path);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    report
}

/// Run `f`, which talks to PostgreSQL through the blocking client, where it
/// may block: the blocking client runs its own runtime, which cannot start on
/// a thread that drives another (the MCP server and the language server run
/// on tokio's multi-threaded runtime; there `f` runs in `block_in_place`).
pub(crate) fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// The database's event count and chain head (the genesis when empty): what
/// a copy compares with its source's.
pub(crate) fn log_of(client: &mut impl postgres::GenericClient) -> Result<(i64, String), StoreError> {
    let events: i64 =
        client.query_one("SELECT count(*) FROM events", &[]).map_err(|e| pg("cannot count events", e))?.get(0);
    let head = client
        .query_opt("SELECT hash FROM event_chain ORDER BY event_id DESC LIMIT 1", &[])
        .map_err(|e| pg("cannot read the chain", e))?
        .map(|r| r.get::<_, String>(0))
        .unwrap_or_else(|| crate::chain::GENESIS.to_string());
    Ok((events, head))
}

/// `vector` in pgvector's text form (`[0.1,-0.2,…]`), to be cast `::vector`.
pub fn vector_literal(vector: &[f32]) -> String {
    format!("[{}]", vector.iter().map(f32::to_string).collect::<Vec<_>>().join(","))
}

/// A database error, said with what was being done.
pub(crate) fn pg(what: &str, e: postgres::Error) -> StoreError {
    let reason = e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string());
    StoreError::Postgres { what: what.to_string(), reason }
}

/// A short name for the database at `url` (its URL without the password,
/// hashed): its replica's and its local files' name on this machine.
pub fn url_digest(url: &str) -> String {
    use sha2::Digest;
    crate::hex::hex(&sha2::Sha256::digest(redact(url).as_bytes())[..8])
}

/// `url` without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_reaches_a_message() {
        assert_eq!(redact("postgres://alice:s3cret@db:5432/mnemo"), "postgres://alice:***@db:5432/mnemo");
        assert_eq!(redact("postgres://alice@db/mnemo"), "postgres://alice@db/mnemo");
        assert_eq!(redact("postgres:///mnemo?host=/run/pg"), "postgres:///mnemo?host=/run/pg");
        assert!(is_postgres("postgresql://x") && !is_postgres("/home/a/memory.db"));
    }
}
