//! `mnemo store copy --from postgres://… --to FILE`: a PostgreSQL store back
//! into a SQLite file (a new one, or one it was copied from), in one read
//! snapshot of the database and one write transaction of the file. Like
//! the copy the other way: idempotent, a different row under the same key
//! stops it with nothing written, and the event count and chain head must
//! match at the end — so `store verify` of the file checks the database.

use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params_from_iter};

use super::copy::CopyReport;
use super::pg;
use super::tables::{TABLES, Table, Ty, question};
use crate::error::StoreError;
use crate::store::Store;
use crate::write::Writer;

/// Copy the database `client` is connected to into `store`.
pub fn copy_out(client: &mut postgres::Client, store: &mut Store) -> Result<CopyReport, StoreError> {
    let mut snapshot = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(|e| pg("cannot begin", e))?;
    let mut added = std::collections::HashMap::new();
    let mut vectors_added = 0;
    store.write(|w| {
        for table in TABLES {
            added.insert(table.name, copy_table(&mut snapshot, w, table, None)?.0);
        }
        vectors_added = copy_vectors(&mut snapshot, w)?;
        // Ids of forgotten events are never reused here either.
        w.transaction().execute(
            "UPDATE sqlite_sequence SET seq = max(seq, COALESCE((SELECT max(event_id) FROM forgotten_events), 0)) WHERE name = 'events'",
            [],
        )?;
        w.mark_written();
        let events: i64 = w.transaction().query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
        let head = crate::chain::head(w.transaction())?;
        let (source_events, source_head) = super::log_of(&mut snapshot)?;
        if events != source_events || head != source_head {
            return Err(StoreError::Postgres {
                what: "the copy does not match its source; nothing was written".into(),
                reason: format!(
                    "the file would hold {events} events ending in {head}, the database {source_events} ending in {source_head}: the file holds another store's events (copy into a new file)"
                ),
            });
        }
        Ok(())
    })?;
    let (events_total, chain_head) = super::log_of(&mut snapshot)?;
    Ok(CopyReport {
        notes_added: added.get("notes").copied().unwrap_or(0),
        events_added: added.get("events").copied().unwrap_or(0),
        vectors_added,
        events_total,
        chain_head,
    })
}

/// Copy `table`'s rows (those written after rev `since` only, for a
/// replica): how many were new, and the highest rev read.
pub(super) fn copy_table(
    snapshot: &mut impl postgres::GenericClient,
    w: &mut Writer<'_>,
    table: &Table,
    since: Option<i64>,
) -> Result<(u64, i64), StoreError> {
    let names = table.names();
    let rows = match since {
        None => snapshot
            .query(&format!("SELECT {}, 0::bigint FROM {} ORDER BY {}", names.join(", "), table.name, table.key), &[]),
        Some(rev) => snapshot.query(
            &format!("SELECT {}, rev FROM {} WHERE rev > $1 ORDER BY rev", names.join(", "), table.name),
            &[&rev],
        ),
    }
    .map_err(|e| pg(&format!("cannot read {}", table.name), e))?;
    let mut highest = since.unwrap_or(0);
    let insert = table.insert_sql(question);
    let key_columns = table.key_columns();
    let check = table.same_sql(question);
    let tx = w.transaction();
    let mut added = 0;
    for row in rows {
        highest = highest.max(row.get::<_, Option<i64>>(names.len()).unwrap_or(0));
        let values: Vec<Value> = table.columns.iter().enumerate().map(|(i, (_, ty))| from_pg(&row, i, *ty)).collect();
        let inserted = tx.prepare_cached(&insert)?.execute(params_from_iter(values.iter()))? as u64;
        added += inserted;
        if let (0, Some(check)) = (inserted, &check) {
            let at = |column: &str| names.iter().position(|n| *n == column).expect("a column");
            let key: Vec<&Value> = key_columns.iter().map(|k| &values[at(k)]).collect();
            let there: Option<Vec<Value>> = tx
                .prepare_cached(check)?
                .query_row(params_from_iter(key.iter()), |r| (0..table.same.len()).map(|i| r.get(i)).collect())
                .optional()?;
            let expected: Vec<&Value> = table.same.iter().map(|c| &values[at(c)]).collect();
            if there.is_some_and(|there| there.iter().zip(&expected).any(|(a, b)| a != *b)) {
                return Err(StoreError::Postgres {
                    what: if since.is_some() {
                        "this machine's replica differs from the shared store".into()
                    } else {
                        "nothing was written".into()
                    },
                    reason: format!(
                        "the file already holds another {} with {} {:?}: it is another store (copy into a new file)",
                        table.name.trim_end_matches('s'),
                        table.key,
                        key
                    ),
                });
            }
        }
    }
    Ok((added, highest))
}

/// pgvector rows back into sqlite-vec (the table made for the stored model's dims).
fn copy_vectors(snapshot: &mut postgres::Transaction<'_>, w: &mut Writer<'_>) -> Result<u64, StoreError> {
    let rows = snapshot
        .query("SELECT chunk, note_id, workspace, embedding::text FROM note_vectors ORDER BY chunk", &[])
        .map_err(|e| pg("cannot read vectors", e))?;
    let Some(first) = rows.first() else { return Ok(0) };
    let dims = parse_vector(&first.get::<_, String>(3)).len();
    let tx = w.transaction();
    let model: Option<String> =
        tx.query_row("SELECT value FROM vector_index WHERE key = 'model'", [], |r| r.get(0)).optional()?;
    let has_table = crate::vectors::has_vector_table(tx)?;
    if !has_table {
        crate::vectors::create_vector_table(tx, model.as_deref().unwrap_or("unknown"), dims)?;
    }
    let mut added = 0;
    for row in rows {
        let (chunk, note, workspace, text): (i64, i64, String, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        let new = tx
            .prepare_cached("INSERT OR IGNORE INTO note_vector_chunks (rowid, note_id) VALUES (?1, ?2)")?
            .execute(rusqlite::params![chunk, note])?;
        if new == 1 {
            let blob: Vec<u8> = parse_vector(&text).iter().flat_map(|f| f.to_le_bytes()).collect();
            tx.prepare_cached("INSERT INTO note_vectors (rowid, workspace, embedding) VALUES (?1, ?2, ?3)")?
                .execute(rusqlite::params![chunk, workspace, blob])?;
            crate::vectors::vectors_written(tx, note)?;
            added += 1;
        }
    }
    Ok(added)
}

/// `[0.1,0.2]` (pgvector's text form) as floats.
pub(super) fn parse_vector(text: &str) -> Vec<f32> {
    text.trim_matches(|c| c == '[' || c == ']').split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn from_pg(row: &postgres::Row, i: usize, ty: Ty) -> Value {
    match ty {
        Ty::Int => row.get::<_, Option<i64>>(i).map_or(Value::Null, Value::Integer),
        Ty::Text => row.get::<_, Option<String>>(i).map_or(Value::Null, Value::Text),
        Ty::Bytes => row.get::<_, Option<Vec<u8>>>(i).map_or(Value::Null, Value::Blob),
    }
}
