//! What a write on a replica sends to the shared store: every row of the
//! replicated tables it inserted, updated or deleted, as temporary triggers
//! on the replica's connection caught them (`temp.pending`, in order), and
//! the vectors of the notes it embedded (vec0 tables take no triggers, so
//! the [`Writer`] lists those). Deletes of the log's own rows happen in the
//! database only through `mnemo_forget`, which checks the note was forgotten.

use postgres::types::ToSql;
use rusqlite::types::Value;

use super::copy::{as_pgvector, to_pg};
use super::pg;
use super::tables::{TABLES, Table, dollar};
use crate::error::StoreError;
use crate::write::Writer;

/// Catch this connection's writes to the replicated tables in `temp.pending`
/// (temporary triggers: this process's writes only, not the pulls', which
/// are cleared before each write).
pub(super) fn capture(conn: &rusqlite::Connection) -> Result<(), StoreError> {
    let mut sql = String::from(
        "CREATE TEMP TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, key TEXT NOT NULL, deleted INTEGER NOT NULL);\n",
    );
    for table in TABLES {
        let keys = |row: &str| table.key_columns().iter().map(|k| format!("{row}.{k}")).collect::<Vec<_>>().join(", ");
        for (event, row, deleted) in [("INSERT", "NEW", 0), ("UPDATE", "NEW", 0), ("DELETE", "OLD", 1)] {
            sql.push_str(&format!(
                "CREATE TEMP TRIGGER IF NOT EXISTS push_{name}_{lower} AFTER {event} ON main.{name}
                 BEGIN INSERT INTO pending (tbl, key, deleted) VALUES ('{name}', json_array({keys}), {deleted}); END;\n",
                name = table.name,
                lower = event.to_lowercase(),
                keys = keys(row),
            ));
        }
    }
    conn.execute_batch(&sql)?;
    Ok(())
}

/// Send what `w` wrote to the database (inside its transaction, holding
/// the write lock). True when anything was sent.
pub(super) fn push(database: &mut postgres::Transaction<'_>, w: &Writer<'_>) -> Result<bool, StoreError> {
    let tx = w.transaction();
    let pending: Vec<(String, String, bool)> = tx
        .prepare("SELECT tbl, key, deleted FROM temp.pending ORDER BY seq")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let mut sent = false;
    let mut forgotten = Vec::new();
    for (name, key, deleted) in &pending {
        let table = TABLES.iter().find(|t| t.name == name).expect("captured tables are replicated tables");
        let key: Vec<Value> = serde_json::from_str::<Vec<serde_json::Value>>(key)
            .map_err(|e| StoreError::Corrupt(format!("a captured key of {name}: {e}")))?
            .iter()
            .map(|v| match v {
                serde_json::Value::Number(n) => Value::Integer(n.as_i64().unwrap_or_default()),
                serde_json::Value::String(s) => Value::Text(s.clone()),
                _ => Value::Null,
            })
            .collect();
        if *deleted {
            match table.name {
                "notes" => forgotten.extend(key.first().cloned()),
                // Gone with their note (mnemo_forget) or never deleted.
                "anchors" | "events" | "event_chain" | "forgotten_events" | "workspace_moves" => {}
                _ => delete(database, table, &key)?,
            }
        } else {
            upsert(tx, database, table, &key)?;
            if table.name == "workspace_moves" {
                move_vectors(tx, database, &key)?;
            }
        }
        sent = true;
    }
    if w.vectors_cleared {
        database.execute("DELETE FROM note_vectors", &[]).map_err(|e| pg("cannot drop the vectors", e))?;
        sent = true;
    }
    let mut touched = w.vectors_touched.clone();
    touched.sort();
    touched.dedup();
    for note in touched {
        push_vectors(tx, database, note)?;
        sent = true;
    }
    for note in forgotten {
        if let Value::Integer(id) = note {
            database.execute("SELECT mnemo_forget($1)", &[&id]).map_err(|e| pg("cannot forget", e))?;
        }
    }
    if sent {
        super::search::fold_counts(database)?;
    }
    Ok(sent)
}

/// The row under `key` as it is in the replica now, into the database.
fn upsert(
    tx: &rusqlite::Transaction<'_>,
    database: &mut postgres::Transaction<'_>,
    table: &Table,
    key: &[Value],
) -> Result<(), StoreError> {
    let names = table.names();
    let conditions: Vec<String> =
        table.key_columns().iter().enumerate().map(|(i, k)| format!("{k} = ?{}", i + 1)).collect();
    let select = format!("SELECT {} FROM {} WHERE {}", names.join(", "), table.name, conditions.join(" AND "));
    let row: Option<Vec<Value>> = rusqlite::OptionalExtension::optional(
        tx.prepare_cached(&select)?
            .query_row(rusqlite::params_from_iter(key.iter()), |r| (0..names.len()).map(|i| r.get(i)).collect()),
    )?;
    // Written and deleted again in the same write: nothing to send.
    let Some(row) = row else { return Ok(()) };
    let values: Vec<Box<dyn ToSql + Sync>> =
        row.iter().zip(table.columns).map(|(value, (_, ty))| to_pg(value, *ty)).collect();
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
    database.execute(&table.insert_sql(dollar), &params).map_err(|e| pg(&format!("cannot write {}", table.name), e))?;
    Ok(())
}

fn delete(database: &mut postgres::Transaction<'_>, table: &Table, key: &[Value]) -> Result<(), StoreError> {
    let conditions: Vec<String> =
        table.key_columns().iter().enumerate().map(|(i, k)| format!("{k} = {}", dollar(i + 1))).collect();
    let values: Vec<Box<dyn ToSql + Sync>> = key
        .iter()
        .map(|v| {
            to_pg(v, if matches!(v, Value::Integer(_)) { super::tables::Ty::Int } else { super::tables::Ty::Text })
        })
        .collect();
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
    database
        .execute(&format!("DELETE FROM {} WHERE {}", table.name, conditions.join(" AND ")), &params)
        .map_err(|e| pg(&format!("cannot delete from {}", table.name), e))?;
    Ok(())
}

/// A workspace moved: its vectors' partition moves with it.
fn move_vectors(
    tx: &rusqlite::Transaction<'_>,
    database: &mut postgres::Transaction<'_>,
    key: &[Value],
) -> Result<(), StoreError> {
    let Some(Value::Text(from)) = key.first() else { return Ok(()) };
    let to: String = tx.query_row("SELECT to_id FROM workspace_moves WHERE from_id = ?1", [from], |r| r.get(0))?;
    database
        .execute("UPDATE note_vectors SET workspace = $2 WHERE workspace = $1", &[from, &to])
        .map_err(|e| pg("cannot move vectors", e))?;
    Ok(())
}

/// Note `note`'s chunk vectors as the replica has them now (none after a forget).
fn push_vectors(
    tx: &rusqlite::Transaction<'_>,
    database: &mut postgres::Transaction<'_>,
    note: i64,
) -> Result<(), StoreError> {
    database
        .execute("DELETE FROM note_vectors WHERE note_id = $1", &[&note])
        .map_err(|e| pg("cannot write vectors", e))?;
    let exists = crate::vectors::has_vector_table(tx)?;
    if !exists {
        return Ok(());
    }
    let chunks: Vec<i64> = tx
        .prepare_cached("SELECT rowid FROM note_vector_chunks WHERE note_id = ?1")?
        .query_map([note], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for chunk in chunks {
        let (workspace, blob): (String, Vec<u8>) = tx
            .prepare_cached("SELECT workspace, embedding FROM note_vectors WHERE rowid = ?1")?
            .query_row([chunk], |r| Ok((r.get(0)?, r.get(1)?)))?;
        database
            .execute(
                "INSERT INTO note_vectors (chunk, note_id, workspace, embedding) VALUES ($1, $2, $3, $4::text::vector)",
                &[&chunk, &note, &workspace, &as_pgvector(&blob)],
            )
            .map_err(|e| pg("cannot write vectors", e))?;
    }
    Ok(())
}
