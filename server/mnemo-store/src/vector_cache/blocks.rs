//! sqlite-vec's own storage of the `note_vectors` table, read directly: it
//! keeps vectors 1,024 to a row of `note_vectors_vector_chunks00` (slots
//! marked valid in `note_vectors_chunks`, with their rowids and partition),
//! so the whole copy is read in a twelfth of the time of vec0's scan,
//! which reads each vector by itself. This layout is sqlite-vec's, not a
//! promise: the caller checks what it read against vec0's answers
//! (`super::load_from_blocks`) and reads through vec0 when they differ.

use crate::error::StoreError;
use crate::store::Store;

/// Every valid slot of every block: `each(rowid, workspace, vector bytes)`.
/// False when a block does not hold what its sizes say.
pub(super) fn read_all(store: &Store, dims: usize, mut each: impl FnMut(i64, &str, &[u8])) -> Result<bool, StoreError> {
    let width = dims * 4;
    let mut stmt = store.conn.prepare(
        "SELECT c.partition00, c.size, c.validity, c.rowids, v.vectors FROM note_vectors_chunks c
         JOIN note_vectors_vector_chunks00 v ON v.rowid = c.chunk_id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let workspace: String = row.get(0)?;
        let size: usize = row.get::<_, i64>(1)?.try_into().unwrap_or(0);
        let blob = |at: usize| row.get_ref(at).ok().and_then(|value| value.as_blob().ok());
        let (Some(validity), Some(rowids), Some(vectors)) = (blob(2), blob(3), blob(4)) else { return Ok(false) };
        if validity.len() * 8 < size || rowids.len() < size * 8 || vectors.len() < size * width {
            return Ok(false);
        }
        for slot in (0..size).filter(|slot| validity[slot / 8] >> (slot % 8) & 1 == 1) {
            let rowid = i64::from_le_bytes(rowids[slot * 8..slot * 8 + 8].try_into().expect("eight bytes"));
            each(rowid, &workspace, &vectors[slot * width..(slot + 1) * width]);
        }
    }
    Ok(true)
}

/// One stored vector at a time, read from the block sqlite-vec keeps it in
/// (its place from `note_vectors_rowids`), through one open handle per
/// block for the reader's life: SQLite walks a block's chain of overflow
/// pages once per handle and remembers it, where a read through vec0 walks
/// it again for every vector. The walk still reads every page of the block
/// up to the vector (~200 µs a block), so a search reads the copy's own file
/// of exact vectors first (`exact_file.rs`) and this only without one.
/// `None` for a vector whose place is not where sqlite-vec's layout says
/// (the caller reads it through vec0 then).
pub(super) struct VectorReader<'conn> {
    conn: &'conn rusqlite::Connection,
    /// `None` when sqlite-vec keeps no such table (another layout).
    place: Option<rusqlite::CachedStatement<'conn>>,
    /// The blocks opened so far; `None` for one that could not be opened or
    /// does not hold whole vectors of this width (not tried again).
    blocks: std::collections::HashMap<i64, Option<rusqlite::blob::Blob<'conn>>>,
    width: usize,
}

impl<'conn> VectorReader<'conn> {
    pub(super) fn new(store: &'conn Store, dims: usize) -> VectorReader<'conn> {
        let place =
            store.conn.prepare_cached("SELECT chunk_id, chunk_offset FROM note_vectors_rowids WHERE rowid = ?1");
        VectorReader { conn: &store.conn, place: place.ok(), blocks: Default::default(), width: dims * 4 }
    }

    /// The bytes of the vector of chunk `rowid`, into `out`.
    pub(super) fn read(&mut self, rowid: i64, out: &mut Vec<u8>) -> Option<()> {
        use rusqlite::OptionalExtension;
        let (block, slot): (i64, i64) =
            self.place.as_mut()?.query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?))).optional().ok()??;
        let (conn, width) = (self.conn, self.width);
        let blob = self.blocks.entry(block).or_insert_with(|| {
            let blob =
                conn.blob_open(rusqlite::MAIN_DB, "note_vectors_vector_chunks00", "vectors", block, true).ok()?;
            (width > 0 && blob.len() % width == 0).then_some(blob)
        });
        let blob = blob.as_ref()?;
        let slot = usize::try_from(slot).ok().filter(|slot| (slot + 1) * width <= blob.len())?;
        out.resize(width, 0);
        blob.read_at_exact(out, slot * width).ok()
    }
}
