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

/// A column's type, for a NULL's sake.
#[derive(Clone, Copy)]
enum Ty {
    Int,
    Text,
    Bytes,
}

struct Table {
    name: &'static str,
    columns: &'static [(&'static str, Ty)],
    key: &'static str,
    /// Columns compared when the key is there already (the row must be the same).
    same: &'static [&'static str],
    /// On a key already there: update these columns (a cache), or skip.
    refresh: bool,
}

use Ty::{Bytes, Int, Text};

const TABLES: &[Table] = &[
    Table {
        name: "notes",
        columns: &[
            ("id", Int),
            ("workspace", Text),
            ("kind", Text),
            ("priority", Text),
            ("title", Text),
            ("body", Text),
            ("provenance", Text),
            ("quote", Text),
            ("created_at", Int),
        ],
        key: "id",
        same: &["workspace", "title", "body", "created_at"],
        refresh: false,
    },
    Table {
        name: "anchors",
        columns: &[
            ("note_id", Int),
            ("position", Int),
            ("path", Text),
            ("start_line", Int),
            ("end_line", Int),
            ("content_sha256", Text),
        ],
        key: "note_id, position",
        same: &[],
        refresh: false,
    },
    Table {
        name: "events",
        columns: &[
            ("id", Int),
            ("note_id", Int),
            ("kind", Text),
            ("actor", Text),
            ("at", Int),
            ("reason", Text),
            ("superseded_by", Int),
            ("provenance", Text),
            ("person", Text),
            ("machine", Text),
        ],
        key: "id",
        same: &["note_id", "kind", "at"],
        refresh: false,
    },
    Table {
        name: "event_chain",
        columns: &[("event_id", Int), ("hash", Text)],
        key: "event_id",
        same: &["hash"],
        refresh: false,
    },
    Table { name: "forgotten_events", columns: &[("event_id", Int)], key: "event_id", same: &[], refresh: false },
    Table {
        name: "note_state",
        columns: &[
            ("note_id", Int),
            ("workspace", Text),
            ("status", Text),
            ("status_at", Int),
            ("status_reason", Text),
            ("superseded_by", Int),
            ("provenance", Text),
            ("live_since", Int),
            ("last_event_id", Int),
        ],
        key: "note_id",
        same: &[],
        refresh: true,
    },
    Table {
        name: "drift_observations",
        columns: &[("note_id", Int), ("path", Text), ("observation", Text), ("observed_at", Int)],
        key: "note_id, path, observation",
        same: &[],
        refresh: false,
    },
    Table {
        name: "deliveries",
        columns: &[("id", Int), ("workspace", Text), ("session", Text), ("moment", Text), ("at", Int), ("bytes", Int)],
        key: "id",
        same: &["session", "at"],
        refresh: false,
    },
    Table {
        name: "delivered_notes",
        columns: &[("delivery_id", Int), ("note_id", Int), ("shown", Text)],
        key: "delivery_id, note_id",
        same: &[],
        refresh: false,
    },
    Table {
        name: "workspace_roots",
        columns: &[("root", Text), ("workspace", Text), ("source", Text), ("origin", Text), ("seen_at", Int)],
        key: "root",
        same: &[],
        refresh: true,
    },
    Table {
        name: "workspace_moves",
        columns: &[("from_id", Text), ("to_id", Text), ("at", Int), ("root", Text)],
        key: "from_id",
        same: &["to_id"],
        refresh: false,
    },
    Table {
        name: "workspace_aliases",
        columns: &[("alias", Text), ("workspace", Text)],
        key: "alias",
        same: &[],
        refresh: true,
    },
    Table {
        name: "vector_index",
        columns: &[("key", Text), ("value", Text)],
        key: "key",
        same: &["value"],
        refresh: false,
    },
    Table {
        name: "note_token_signs",
        columns: &[("note_id", Int), ("signs", Bytes)],
        key: "note_id",
        same: &[],
        refresh: true,
    },
];

/// Copy `store` into the database `client` is connected to (schema made).
pub fn copy_into(store: &Store, client: &mut postgres::Client) -> Result<CopyReport, StoreError> {
    store.snapshot(|store| {
        let mut tx = client.transaction().map_err(|e| pg("cannot begin", e))?;
        let mut added = std::collections::HashMap::new();
        for table in TABLES {
            if !store.has_table(table.name)? {
                continue;
            }
            added.insert(table.name, copy_table(store, &mut tx, table)?);
        }
        let vectors_added = copy_vectors(store, &mut tx)?;
        let events_total: i64 =
            tx.query_one("SELECT count(*) FROM events", &[]).map_err(|e| pg("cannot count events", e))?.get(0);
        let source_events: i64 = store.conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
        let chain_head = tx
            .query_opt("SELECT hash FROM event_chain ORDER BY event_id DESC LIMIT 1", &[])
            .map_err(|e| pg("cannot read the chain", e))?
            .map(|r| r.get::<_, String>(0))
            .unwrap_or_else(|| crate::chain::GENESIS.to_string());
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
    let names: Vec<&str> = table.columns.iter().map(|c| c.0).collect();
    let placeholders: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
    let on_conflict = if table.refresh {
        let sets: Vec<String> = names.iter().map(|n| format!("{n} = EXCLUDED.{n}")).collect();
        format!("ON CONFLICT ({}) DO UPDATE SET {}", table.key, sets.join(", "))
    } else {
        format!("ON CONFLICT ({}) DO NOTHING", table.key)
    };
    let insert =
        format!("INSERT INTO {} ({}) VALUES ({}) {on_conflict}", table.name, names.join(", "), placeholders.join(", "));
    let insert = tx.prepare(&insert).map_err(|e| pg(&format!("cannot copy {}", table.name), e))?;
    let key_columns: Vec<&str> = table.key.split(", ").collect();
    let check = (!table.same.is_empty()).then(|| {
        let conditions: Vec<String> =
            key_columns.iter().enumerate().map(|(i, k)| format!("{k} = ${}", i + 1)).collect();
        format!("SELECT {} FROM {} WHERE {}", table.same.join(", "), table.name, conditions.join(" AND "))
    });
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
        let floats: Vec<String> =
            blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string()).collect();
        let text = format!("[{}]", floats.join(","));
        added += tx.execute(&insert, &[&chunk, &note, &workspace, &text]).map_err(|e| pg("cannot copy vectors", e))?;
    }
    Ok(added)
}

fn to_pg(value: &Value, ty: Ty) -> Box<dyn ToSql + Sync> {
    match (value, ty) {
        (Value::Integer(i), _) => Box::new(*i),
        (Value::Text(t), _) => Box::new(t.clone()),
        (Value::Blob(b), _) => Box::new(b.clone()),
        (Value::Real(f), _) => Box::new(*f),
        (Value::Null, Int) => Box::new(None::<i64>),
        (Value::Null, Text) => Box::new(None::<String>),
        (Value::Null, Bytes) => Box::new(None::<Vec<u8>>),
    }
}

/// Whether column `i` of a database row holds `value`.
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
