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
