//! Note embeddings in a sqlite-vec `vec0` table (`note_vectors`, cosine
//! distance, partitioned by workspace), with the identity of the model that
//! made them in `vector_index`. Vectors are derived data: they are written
//! through the one write path but never bump the epoch, and `reindex`
//! replaces them all when the model changes.

use std::sync::Once;

use mnemo_core::NoteId;
use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;
use crate::write::Writer;

/// Register sqlite-vec with every connection this process opens.
pub(crate) fn register_sqlite_vec() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: sqlite3_vec_init has the signature SQLite expects of an
        // extension entry point; registering it once before any connection
        // opens is how sqlite-vec documents static linking.
        unsafe {
            type EntryPoint = unsafe extern "C" fn(
                *mut rusqlite::ffi::sqlite3,
                *mut *mut std::os::raw::c_char,
                *const rusqlite::ffi::sqlite3_api_routines,
            ) -> std::os::raw::c_int;
            let entry: EntryPoint = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(entry));
        }
    });
}

/// The model the stored vectors belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorModel {
    pub identity: String,
    pub dims: usize,
}

fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

impl Store {
    /// The model of the stored vectors, if any were stored.
    pub fn vector_model(&self) -> Result<Option<VectorModel>, StoreError> {
        let get = |key: &str| -> Result<Option<String>, StoreError> {
            Ok(self.conn.query_row("SELECT value FROM vector_index WHERE key = ?1", [key], |r| r.get(0)).optional()?)
        };
        match (get("model")?, get("dims")?) {
            (Some(identity), Some(dims)) => Ok(Some(VectorModel { identity, dims: dims.parse().unwrap_or(0) })),
            _ => Ok(None),
        }
    }

    /// Notes in `scope` without a vector, with the text to embed.
    pub fn notes_without_vectors(&self, scope: &Scope) -> Result<Vec<(NoteId, String, String)>, StoreError> {
        let has_table = self.vector_model()?.is_some();
        let workspace = match scope {
            Scope::Workspace(w) => Some(w.as_str()),
            Scope::All => None,
        };
        let sql = if has_table {
            "SELECT id, title, body FROM notes WHERE (?1 IS NULL OR workspace = ?1)
             AND id NOT IN (SELECT rowid FROM note_vectors) ORDER BY id"
        } else {
            "SELECT id, title, body FROM notes WHERE (?1 IS NULL OR workspace = ?1) ORDER BY id"
        };
        let mut stmt = self.conn.prepare(sql)?;
        let rows = stmt.query_map(params![workspace], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The `k` nearest notes to `query` by cosine distance, within one
    /// workspace or across all; empty when no vectors are stored.
    pub fn nearest(&self, query: &[f32], k: usize, scope: &Scope) -> Result<Vec<(NoteId, f32)>, StoreError> {
        if self.vector_model()?.is_none_or(|m| m.dims != query.len()) || k == 0 {
            return Ok(Vec::new());
        }
        let blob = to_blob(query);
        let mut out = Vec::new();
        match scope {
            Scope::Workspace(w) => {
                let mut stmt = self.conn.prepare_cached(
                    "SELECT rowid, distance FROM note_vectors WHERE embedding MATCH ?1 AND k = ?2 AND workspace = ?3 ORDER BY distance",
                )?;
                for row in stmt.query_map(params![blob, k as i64, w], |r| Ok((r.get(0)?, r.get(1)?)))? {
                    out.push(row?);
                }
            }
            Scope::All => {
                let mut stmt = self.conn.prepare_cached(
                    "SELECT rowid, distance FROM note_vectors WHERE embedding MATCH ?1 AND k = ?2 ORDER BY distance",
                )?;
                for row in stmt.query_map(params![blob, k as i64], |r| Ok((r.get(0)?, r.get(1)?)))? {
                    out.push(row?);
                }
            }
        }
        Ok(out)
    }
}

impl Writer<'_> {
    /// Store the vector of note `id`, made by `model`. The first vector
    /// creates the table with the model's dims; a vector from another model
    /// is refused (run `mnemo reindex`).
    pub fn put_vector(&mut self, id: NoteId, workspace: &str, vector: &[f32], model: &str) -> Result<(), StoreError> {
        let tx = self.transaction();
        let current: Option<String> =
            tx.query_row("SELECT value FROM vector_index WHERE key = 'model'", [], |r| r.get(0)).optional()?;
        match current {
            Some(identity) if identity != model => {
                return Err(StoreError::Corrupt(format!(
                    "the stored vectors are from model '{identity}', not '{model}'; run `mnemo reindex`"
                )));
            }
            Some(_) => {}
            None => create_vector_table(tx, model, vector.len())?,
        }
        tx.prepare_cached("DELETE FROM note_vectors WHERE rowid = ?1")?.execute([id])?;
        tx.prepare_cached("INSERT INTO note_vectors (rowid, workspace, embedding) VALUES (?1, ?2, ?3)")?
            .execute(params![id, workspace, to_blob(vector)])?;
        Ok(())
    }

    /// Drop every stored vector (before re-embedding with another model).
    pub fn clear_vectors(&mut self) -> Result<(), StoreError> {
        let tx = self.transaction();
        tx.execute_batch("DROP TABLE IF EXISTS note_vectors; DELETE FROM vector_index;")?;
        Ok(())
    }

    pub(crate) fn delete_vector(&mut self, id: NoteId) -> Result<(), StoreError> {
        let tx = self.transaction();
        let exists: bool =
            tx.query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'note_vectors')", [], |r| r.get(0))?;
        if exists {
            tx.execute("DELETE FROM note_vectors WHERE rowid = ?1", [id])?;
        }
        Ok(())
    }
}

fn create_vector_table(tx: &rusqlite::Transaction<'_>, model: &str, dims: usize) -> Result<(), StoreError> {
    tx.execute_batch(&format!(
        "DROP TABLE IF EXISTS note_vectors;
         CREATE VIRTUAL TABLE note_vectors USING vec0(workspace text partition key, embedding float[{dims}] distance_metric=cosine);"
    ))?;
    tx.execute("INSERT OR REPLACE INTO vector_index (key, value) VALUES ('model', ?1)", [model])?;
    tx.execute("INSERT OR REPLACE INTO vector_index (key, value) VALUES ('dims', ?1)", [dims.to_string()])?;
    Ok(())
}
