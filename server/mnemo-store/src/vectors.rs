//! Note embeddings in a sqlite-vec `vec0` table (`note_vectors`, cosine
//! distance, partitioned by workspace): one row per embedded chunk of a note
//! (`core::recall::embedding_chunks`), mapped to its note by
//! `note_vector_chunks`; beside them each note's token vectors as sign bits
//! (`note_token_signs`, `core::recall::token_signs`) for late interaction.
//! The identity of the model that made them is kept in `vector_index`.
//! Vectors are derived data: written through the one write path but never
//! bumping the epoch; `reindex` replaces them all.

use std::collections::HashMap;
use std::sync::Once;

use mnemo_core::NoteId;
pub use mnemo_core::recall::NoteEmbedding;
use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;
use crate::workspace::born_in;
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

/// A note that has no vector (or no token signs) yet, with the text to embed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnembeddedNote {
    pub id: NoteId,
    pub workspace: String,
    pub title: String,
    pub body: String,
}

pub(crate) fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The nearest notes found by one search (note, cosine distance), nearest first.
pub type NearestNotes = Vec<(NoteId, f32)>;

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

    /// Notes in `scope` without vectors or token signs, with the text to embed.
    pub fn notes_without_vectors(&self, scope: &Scope) -> Result<Vec<UnembeddedNote>, StoreError> {
        let has_table = self.vector_model()?.is_some();
        let workspace = scope.workspace_param();
        let missing = if has_table {
            "AND (n.id NOT IN (SELECT note_id FROM note_vector_chunks) OR n.id NOT IN (SELECT note_id FROM note_token_signs))"
        } else {
            ""
        };
        let sql = format!(
            "SELECT n.id, s.workspace, n.title, n.body FROM notes n JOIN note_state s ON s.note_id = n.id
             WHERE (?1 IS NULL OR {}) {missing} ORDER BY n.id",
            born_in("n.workspace", "?1")
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(params![workspace], |r| {
            Ok(UnembeddedNote { id: r.get(0)?, workspace: r.get(1)?, title: r.get(2)?, body: r.get(3)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every note in the store with the text to embed (for `reindex`).
    pub fn note_texts(&self) -> Result<Vec<UnembeddedNote>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT n.id, s.workspace, n.title, n.body FROM notes n JOIN note_state s ON s.note_id = n.id ORDER BY n.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(UnembeddedNote { id: r.get(0)?, workspace: r.get(1)?, title: r.get(2)?, body: r.get(3)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The `k` notes nearest to `query` (cosine similarity of their best
    /// chunk), within one workspace or across all; empty without vectors.
    pub fn nearest(&self, query: &[f32], k: usize, scope: &Scope) -> Result<Vec<(NoteId, f32)>, StoreError> {
        Ok(self.nearest_each(query, &[(k, scope)])?.pop().unwrap_or_default())
    }

    /// [`Store::nearest`] for each `(k, scope)` of `searches`, in their
    /// order: from a kept copy of the vectors, one approximate pass over
    /// the store serves them all (a recall asks for the workspace's and the
    /// store's).
    pub fn nearest_each(&self, query: &[f32], searches: &[(usize, &Scope)]) -> Result<Vec<NearestNotes>, StoreError> {
        Ok(self.nearest_each_beside(query, searches, || Ok(()))?.0)
    }

    /// [`Store::nearest_each`], with `beside` run once on this thread while
    /// a kept copy's approximate pass runs on another (a recall's full-text
    /// search); run before the search when there is no such pass. `beside`
    /// may read this store, but must not search vectors, read them ahead or
    /// forget a note: the process's kept copies are locked while it runs
    /// (so a second recall of the process waits for it).
    pub fn nearest_each_beside<R>(
        &self,
        query: &[f32],
        searches: &[(usize, &Scope)],
        beside: impl FnOnce() -> Result<R, StoreError>,
    ) -> Result<(Vec<NearestNotes>, R), StoreError> {
        if searches.iter().all(|(k, _)| *k == 0) || self.vector_model()?.is_none_or(|m| m.dims != query.len()) {
            return Ok((searches.iter().map(|_| Vec::new()).collect(), beside()?));
        }
        let beside = if crate::vector_cache::applies(self) {
            let wanted: Vec<crate::vector_cache::Wanted<'_>> = searches
                .iter()
                .map(|&(k, scope)| crate::vector_cache::Wanted { scope, k, wanted_chunks: k * CHUNKS_PER_NOTE })
                .collect();
            match self.snapshot(|store| crate::vector_cache::nearest_beside(store, query, &wanted, beside))? {
                (Some(found), beside) => return Ok((found, beside)),
                (None, beside) => beside,
            }
        } else {
            beside()?
        };
        let found =
            searches.iter().map(|&(k, scope)| self.scanned_nearest(query, k, scope)).collect::<Result<_, _>>()?;
        Ok((found, beside))
    }

    /// [`Store::nearest`] through the database's own search: sqlite-vec's
    /// scan, or PostgreSQL's.
    fn scanned_nearest(&self, query: &[f32], k: usize, scope: &Scope) -> Result<Vec<(NoteId, f32)>, StoreError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        if let Some(shared) = &self.shared {
            return shared.with_client(|client| crate::postgres::search::nearest(client, query, k, scope));
        }
        let blob = to_blob(query);
        let chunks = (k * CHUNKS_PER_NOTE) as i64;
        let workspace = scope.workspace_param();
        let knn = if workspace.is_some() {
            "SELECT rowid, distance FROM note_vectors WHERE embedding MATCH ?1 AND k = ?2 AND workspace = ?3"
        } else {
            "SELECT rowid, distance FROM note_vectors WHERE embedding MATCH ?1 AND k = ?2"
        };
        let sql = format!(
            "WITH knn AS ({knn}) SELECT c.note_id, knn.distance FROM knn JOIN note_vector_chunks c ON c.rowid = knn.rowid
             ORDER BY knn.distance, c.note_id"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let read = |r: &rusqlite::Row<'_>| Ok((r.get::<_, NoteId>(0)?, r.get::<_, f32>(1)?));
        let rows: Vec<(NoteId, f32)> = match workspace {
            Some(w) => stmt.query_map(params![blob, chunks, w], read)?.collect::<Result<_, _>>()?,
            None => stmt.query_map(params![blob, chunks], read)?.collect::<Result<_, _>>()?,
        };
        Ok(best_notes(rows, k))
    }
}

impl Store {
    /// Read the copy of the vectors a long-lived process keeps
    /// (`vector_cache::keep_vectors`) before its first search needs it.
    pub fn warm_vectors(&self) -> Result<(), StoreError> {
        crate::vector_cache::warm(self)
    }

    /// The stored token signs of each of `ids` that has them.
    pub fn token_signs(&self, ids: &[NoteId]) -> Result<HashMap<NoteId, Vec<u8>>, StoreError> {
        let mut stmt = self.conn.prepare_cached("SELECT signs FROM note_token_signs WHERE note_id = ?1")?;
        let mut found = HashMap::with_capacity(ids.len());
        for id in ids {
            if let Some(signs) = stmt.query_row([id], |r| r.get::<_, Vec<u8>>(0)).optional()? {
                found.insert(*id, signs);
            }
        }
        Ok(found)
    }
}

/// Chunks fetched per wanted note, so that notes with many close chunks do
/// not crowd the others out of the pool.
const CHUNKS_PER_NOTE: usize = 4;

/// The notes of `chunks` (nearest first: note, distance), each once at its
/// nearest chunk's distance, at most `k` — what a search of the
/// `k × CHUNKS_PER_NOTE` nearest chunks answers, through sqlite-vec or from
/// a kept copy (`vector_cache`).
pub(crate) fn best_notes(chunks: impl IntoIterator<Item = (NoteId, f32)>, k: usize) -> Vec<(NoteId, f32)> {
    let mut best: Vec<(NoteId, f32)> = Vec::with_capacity(k);
    for (id, distance) in chunks {
        if best.len() == k {
            break;
        }
        if !best.iter().any(|(seen, _)| *seen == id) {
            best.push((id, distance));
        }
    }
    best
}

impl Writer<'_> {
    /// Store the embedding of note `id` (its chunk vectors and token signs),
    /// made by `model`, replacing any it had. The first vector creates the
    /// table with the model's dims; a vector from another model is refused
    /// (run `mnemo reindex`).
    pub fn put_vectors(
        &mut self,
        id: NoteId,
        workspace: &str,
        embedding: &NoteEmbedding,
        model: &str,
    ) -> Result<(), StoreError> {
        let vectors = &embedding.chunks;
        let Some(dims) = vectors.first().map(Vec::len) else { return Ok(()) };
        self.vectors_touched.push(id);
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
            None => create_vector_table(tx, model, dims)?,
        }
        delete_chunks(tx, id)?;
        let mut insert_chunk =
            tx.prepare_cached("INSERT INTO note_vector_chunks (note_id) VALUES (?1) RETURNING rowid")?;
        let mut insert_vector =
            tx.prepare_cached("INSERT INTO note_vectors (rowid, workspace, embedding) VALUES (?1, ?2, ?3)")?;
        for vector in vectors {
            let rowid: i64 = insert_chunk.query_row([id], |r| r.get(0))?;
            insert_vector.execute(params![rowid, workspace, to_blob(vector)])?;
        }
        tx.prepare_cached("INSERT OR REPLACE INTO note_token_signs (note_id, signs) VALUES (?1, ?2)")?
            .execute(params![id, embedding.token_signs])?;
        vectors_written(tx, id)?;
        Ok(())
    }

    /// Drop every stored vector (before re-embedding with another model).
    pub fn clear_vectors(&mut self) -> Result<(), StoreError> {
        self.vectors_cleared = true;
        self.transaction().execute_batch(
            "DROP TABLE IF EXISTS note_vectors; DROP TABLE IF EXISTS note_vector_chunks;
             DELETE FROM note_token_signs; DELETE FROM vector_index; DELETE FROM vector_changes;",
        )?;
        Ok(())
    }

    pub(crate) fn delete_vector(&mut self, id: NoteId) -> Result<(), StoreError> {
        self.vectors_touched.push(id);
        let tx = self.transaction();
        let exists = has_vector_table(tx)?;
        if exists {
            delete_chunks(tx, id)?;
        }
        tx.prepare_cached("DELETE FROM note_token_signs WHERE note_id = ?1")?.execute([id])?;
        // Only a forget drops a note's vectors, and a process keeping a copy
        // of them reads it whole again after one (`vector_cache`).
        tx.prepare_cached("DELETE FROM vector_changes WHERE note_id = ?1")?.execute([id])?;
        Ok(())
    }
}

/// Move the vectors of the notes now in workspace `from` to partition `to`
/// (before their state moves): vec0 keys a partition per row, so each row
/// is read, deleted and inserted again.
pub(crate) fn move_partition(tx: &rusqlite::Transaction<'_>, from: &str, to: &str) -> Result<(), StoreError> {
    let exists = has_vector_table(tx)?;
    if !exists {
        return Ok(());
    }
    let rowids: Vec<i64> = tx
        .prepare("SELECT c.rowid FROM note_vector_chunks c JOIN note_state s ON s.note_id = c.note_id WHERE s.workspace = ?1")?
        .query_map([from], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for rowid in rowids {
        let embedding: Option<Vec<u8>> = tx
            .prepare_cached("SELECT embedding FROM note_vectors WHERE rowid = ?1")?
            .query_row([rowid], |r| r.get(0))
            .optional()?;
        let Some(embedding) = embedding else { continue };
        tx.prepare_cached("DELETE FROM note_vectors WHERE rowid = ?1")?.execute([rowid])?;
        tx.prepare_cached("INSERT INTO note_vectors (rowid, workspace, embedding) VALUES (?1, ?2, ?3)")?
            .execute(params![rowid, to, embedding])?;
    }
    Ok(())
}

/// Point deletes by rowid: a `rowid IN (subquery)` against vec0 scans the
/// whole table, which made bulk imports quadratic.
fn delete_chunks(tx: &rusqlite::Transaction<'_>, id: NoteId) -> Result<(), StoreError> {
    let rowids: Vec<i64> = tx
        .prepare_cached("SELECT rowid FROM note_vector_chunks WHERE note_id = ?1")?
        .query_map([id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for rowid in rowids {
        tx.prepare_cached("DELETE FROM note_vectors WHERE rowid = ?1")?.execute([rowid])?;
        tx.prepare_cached("DELETE FROM note_vector_chunks WHERE rowid = ?1")?.execute([rowid])?;
    }
    Ok(())
}

/// Whether the vector tables are there (made with the first vector).
pub(crate) fn has_vector_table(conn: &rusqlite::Connection) -> Result<bool, StoreError> {
    Ok(conn
        .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'note_vector_chunks')", [], |r| r.get(0))?)
}

pub(crate) fn create_vector_table(tx: &rusqlite::Transaction<'_>, model: &str, dims: usize) -> Result<(), StoreError> {
    tx.execute_batch(&format!(
        "DROP TABLE IF EXISTS note_vectors;
         DROP TABLE IF EXISTS note_vector_chunks;
         CREATE VIRTUAL TABLE note_vectors USING vec0(workspace text partition key, embedding float[{dims}] distance_metric=cosine);
         CREATE TABLE note_vector_chunks (rowid INTEGER PRIMARY KEY, note_id INTEGER NOT NULL);
         CREATE INDEX note_vector_chunks_by_note ON note_vector_chunks (note_id);"
    ))?;
    tx.execute("INSERT OR REPLACE INTO vector_index (key, value) VALUES ('model', ?1)", [model])?;
    tx.execute("INSERT OR REPLACE INTO vector_index (key, value) VALUES ('dims', ?1)", [dims.to_string()])?;
    // A mark new each time the tables are made, so a process keeping a copy
    // of them (`vector_cache`) can tell they are not the ones it copied,
    // even in a store made again at the same path.
    tx.execute("DELETE FROM vector_changes", [])?;
    tx.execute("INSERT INTO vector_changes (note_id, made) VALUES (0, lower(hex(randomblob(8))))", [])?;
    Ok(())
}

/// Record that note `id`'s vectors were written (the one rule of
/// `vector_changes`: its row takes the next generation), for a process
/// keeping a copy of them (`vector_cache`).
pub(crate) fn vectors_written(tx: &rusqlite::Connection, id: NoteId) -> Result<(), StoreError> {
    tx.prepare_cached("INSERT OR REPLACE INTO vector_changes (note_id) VALUES (?1)")?.execute([id])?;
    Ok(())
}
