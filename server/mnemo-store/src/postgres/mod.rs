//! The shared store on PostgreSQL (with pgvector), for a team: its schema
//! (`schema.sql`: the same tables as the SQLite file, append-only enforced
//! by triggers and by what the `mnemo_writer` role is granted) and copying a
//! SQLite store into it (`copy.rs`), every event and vector, idempotently.
//! Reading and writing a PostgreSQL store through the same interface as the
//! SQLite one is the next step; until then this is how a team's store is
//! seeded and checked.

mod copy;

pub use copy::{CopyReport, copy_into};

use crate::error::StoreError;

/// The schema, run (idempotently) on every connect.
const SCHEMA: &str = include_str!("schema.sql");

/// Whether `location` names a PostgreSQL database rather than a file.
pub fn is_postgres(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// Connect to `url` (a `postgres://` URL; a Unix socket directory as
/// `host=/path` in its query) and make sure the schema is there.
pub fn connect(url: &str) -> Result<postgres::Client, StoreError> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).map_err(|e| StoreError::Postgres {
        what: format!("cannot connect to {}", redact(url)),
        reason: e.to_string(),
    })?;
    client.batch_execute(SCHEMA).map_err(|e| pg("cannot create the schema", e))?;
    Ok(client)
}

/// A database error, said with what was being done.
pub(crate) fn pg(what: &str, e: postgres::Error) -> StoreError {
    let reason = e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string());
    StoreError::Postgres { what: what.to_string(), reason }
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
