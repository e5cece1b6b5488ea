//! `mnemo store copy`: a SQLite store into a PostgreSQL one, in one
//! transaction, every row of the log and what hangs on it (states, anchors,
//! the hash chain, the ledger, workspace moves, vectors and token signs).
//! Idempotent: what is there already is skipped, and a row that is there
//! with other content (another store's note #1) stops the copy — two stores'
//! ids cannot be merged by copying, and nothing is half-copied. At the end
//! the event count and the chain head must match the source's.

use postgres::types::ToSql;
use rusqlite::types::Value;

use super::pg;
use super::tables::{TABLES, Table, Ty, dollar};
use crate::error::StoreError;
use crate::store::Store;

/// What a copy added, and what the database now holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CopyReport {
    pub notes_added: u64,
    pub events_added: u64,
    pub vectors_added: u64,
    pub events_total: i64,
    pub chain_head: String,
}

/// Copy `store` into the database `client` is connected to (schema made).
pub fn copy_into(store: &Store, client: &mut postgres::Client) -> Result<CopyReport, StoreError> {
    store.snapshot(|store| {
        let mut tx = client.transaction().map_err(|e| pg("cannot begin", e))?;
        // Like every writer of a shared store: revs commit in order (replica.rs).
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&super::replica::WRITE_LOCK]).map_err(|e| pg("cannot lock", e))?;
        let mut added = std::collections::HashMap::new();
        for table in TABLES {
            if !store.has_table(table.name)? {
                continue;
            }
            added.insert(table.name, copy_table(store, &mut tx, table)?);
        }
        let vectors_added = copy_vectors(store, &mut tx)?;
        super::search::fold_counts(&mut tx)?;
        let (events_total, chain_head) = super::log_of(&mut tx)?;
        let source_events: i64 = store.conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
        let source_head = crate::chain::head(&store.conn)?;
        if events_total != source_events || chain_head != source_head {
            return Err(StoreError::Postgres {
                what: "the copy does not match its source; nothing was copied".into(),
                reason: format!(
                    "the database holds {events_total} events ending in {chain_head}, the store {source_events} ending in {source_head}: it holds another store's events too (copy into an empty database)"
                ),
            });
        }
        tx.commit().map_err(|e| pg("cannot commit the copy", e))?;
        // The planner's figures for what may be most of the database now,
        // and the postings' visibility map (recall's search reads them from
        // their index alone); the copy stands whether or not these run.
        for maintenance in ["VACUUM (ANALYZE) note_terms", "ANALYZE"] {
            if let Err(e) = client.batch_execute(maintenance) {
                tracing::warn!(error = %e, "the copy is committed; {maintenance} failed");
            }
        }
        Ok(CopyReport {
            notes_added: added.get("notes").copied().unwrap_or(0),
            events_added: added.get("events").copied().unwrap_or(0),
            vectors_added,
            events_total,
            chain_head,
        })
    })
}

/// Insert every row of `table` not there yet; a key there with other content stops the copy.
fn copy_table(store: &Store, tx: &mut postgres::Transaction<'_>, table: &Table) -> Result<u64, StoreError> {
    let names = table.names();
    let insert = tx.prepare(&table.insert_sql(dollar)).map_err(|e| pg(&format!("cannot copy {}", table.name), e))?;
    let key_columns = table.key_columns();
    let check = table.same_sql(dollar);
    let mut stmt = store.conn.prepare(&format!("SELECT {} FROM {}", names.join(", "), table.name))?;
    let rows = stmt.query_map([], |r| (0..names.len()).map(|i| r.get::<_, Value>(i)).collect::<Result<Vec<_>, _>>())?;
    let mut added = 0;
    for row in rows {
        let row = row?;
        let values: Vec<Box<dyn ToSql + Sync>> =
            row.iter().zip(table.columns).map(|(value, (_, ty))| to_pg(value, *ty)).collect();
        let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
        let inserted = tx.execute(&insert, &params).map_err(|e| pg(&format!("cannot copy {}", table.name), e))?;
        added += inserted;
        if inserted == 0
            && let Some(check) = &check
        {
            let key_params: Vec<&(dyn ToSql + Sync)> = key_columns
                .iter()
                .map(|k| params[names.iter().position(|n| n == k).expect("the key is a column")])
                .collect();
            let there =
                tx.query_one(check, &key_params).map_err(|e| pg(&format!("cannot compare {}", table.name), e))?;
            for (i, column) in table.same.iter().enumerate() {
                let at = names.iter().position(|n| n == column).expect("compared columns are columns");
                if !same(&there, i, &row[at]) {
                    return Err(StoreError::Postgres {
                        what: "nothing was copied".into(),
                        reason: format!(
                            "the database already holds another {} with {} {}: it holds another store (two stores' ids cannot be merged by copying; copy into an empty database)",
                            table.name.trim_end_matches('s'),
                            table.key,
                            key_columns
                                .iter()
                                .map(|k| shown(&row[names.iter().position(|n| n == k).unwrap_or(0)]))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
            }
        }
    }
    Ok(added)
}

/// Every chunk vector (sqlite-vec, f32 little-endian) as a pgvector row.
fn copy_vectors(store: &Store, tx: &mut postgres::Transaction<'_>) -> Result<u64, StoreError> {
    if !store.has_table("note_vector_chunks")? {
        return Ok(0);
    }
    let insert = tx
        .prepare(
            "INSERT INTO note_vectors (chunk, note_id, workspace, embedding) VALUES ($1, $2, $3, $4::text::vector)
             ON CONFLICT (chunk) DO UPDATE SET workspace = EXCLUDED.workspace, embedding = EXCLUDED.embedding
             WHERE (note_vectors.workspace, note_vectors.embedding) IS DISTINCT FROM (EXCLUDED.workspace, EXCLUDED.embedding)",
        )
        .map_err(|e| pg("cannot copy vectors", e))?;
    let chunks: Vec<(i64, i64)> = store
        .conn
        .prepare("SELECT rowid, note_id FROM note_vector_chunks ORDER BY rowid")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut lookup = store.conn.prepare("SELECT workspace, embedding FROM note_vectors WHERE rowid = ?1")?;
    let mut added = 0;
    for (chunk, note) in chunks {
        let (workspace, blob): (String, Vec<u8>) = lookup.query_row([chunk], |r| Ok((r.get(0)?, r.get(1)?)))?;
        added += tx
            .execute(&insert, &[&chunk, &note, &workspace, &as_pgvector(&blob)])
            .map_err(|e| pg("cannot copy vectors", e))?;
    }
    Ok(added)
}

/// A sqlite-vec vector (f32 little-endian) in pgvector's text form.
pub(super) fn as_pgvector(blob: &[u8]) -> String {
    let floats: Vec<f32> = blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    super::vector_literal(&floats)
}

pub(super) fn to_pg(value: &Value, ty: Ty) -> Box<dyn ToSql + Sync> {
    match (value, ty) {
        (Value::Integer(i), _) => Box::new(*i),
        (Value::Text(t), _) => Box::new(t.clone()),
        (Value::Blob(b), _) => Box::new(b.clone()),
        (Value::Real(f), _) => Box::new(*f),
        (Value::Null, Ty::Int) => Box::new(None::<i64>),
        (Value::Null, Ty::Text) => Box::new(None::<String>),
        (Value::Null, Ty::Bytes) => Box::new(None::<Vec<u8>>),
    }
}

/// Whether column `i` of a PostgreSQL row holds `value`.
fn same(row: &postgres::Row, i: usize, value: &Value) -> bool {
    match value {
        Value::Integer(v) => row.get::<_, Option<i64>>(i) == Some(*v),
        Value::Text(v) => row.get::<_, Option<String>>(i).as_deref() == Some(v.as_str()),
        Value::Null => true,
        _ => true,
    }
}

fn shown(value: &Value) -> String {
    match value {
        Value::Integer(i) => i.to_string(),
        Value::Text(t) => t.clone(),
        _ => "?".into(),
    }
}
