//! A long-lived process's compact copy of the store's note vectors, so that
//! a nearest-notes search scans memory instead of sqlite-vec: sqlite-vec's
//! scan costs about 0.8 µs a row whatever the vector's size (its per-row path
//! and its selection of the k nearest), which made a search across a store
//! of 100k notes 80 ms — most of a recall in a language server, an MCP
//! server or the eval harness.
//!
//! Each chunk vector is kept as signed bytes scaled to its largest
//! component (384 bytes for the default model, a quarter of its floats),
//! with one factor that folds in its scale and its length. A search scores
//! every chunk in scope by that approximation and, best first, scores
//! chunks again exactly — sqlite-vec's own cosine distance, from the stored
//! floats — until no chunk left could come near the answer (within nine
//! standard deviations of the approximation's error, [`MARGIN_DEVIATIONS`]):
//! the answer is the one sqlite-vec's scan gives unless the approximation
//! errs by more than that (`tests/vector_cache.rs` holds them equal), and
//! the distances are its distances, to the bit. Scopes under
//! [`SEARCHED_FROM_CHUNKS`] are left to sqlite-vec's scan. Several scopes
//! asked at once (a recall's workspace and store) share one approximate
//! pass and each chunk's exact score (`search.rs`).
//!
//! The copy follows the store through `vector_changes` (a note's vectors
//! written: a generation that only grows) and is made again whole when the
//! vector tables were made again (the mark `made` there, new each time), a
//! note was forgotten or a workspace moved, or when more than an eighth of
//! the copy changed; a forget in this process drops it at once. Only
//! processes that ask ([`keep_vectors`]) keep one: a one-shot command
//! searches once, and loading the copy costs more than the one search.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use mnemo_core::NoteId;

use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;

mod blocks;
mod cosine;
mod dot;
mod exact_file;
mod search;

pub(crate) use search::{Found, Wanted};

/// How far below the `k`th note's exact cosine a chunk's approximate one
/// may be and still be scored exactly, in standard deviations of the
/// approximation's error. A chunk's codes err by up to half a step, evenly
/// spread, so against a unit query its cosine errs with a standard
/// deviation of its step over its length (its `factor`) over √12: ~0.00045
/// for the default model, whose largest error over the eval harness's 440
/// searches was 0.0017 (3.7 deviations). Nine leaves room for a model with
/// coarser steps: the margin grows with them.
const MARGIN_DEVIATIONS: f32 = 9.0;

/// Scopes of fewer chunks than this are searched through sqlite-vec: its
/// scan costs ~0.7 µs a chunk, while a search of the copy scores 50–100
/// chunks exactly (a few µs each, read from the copy's file of exact
/// vectors: `exact_file.rs`). Searching 50 notes (`benches/shared_recall.rs`,
/// vector stage p50): at 1k chunks the copy took 0.2 ms against the scan's
/// 0.8, at 5k 0.4–0.5 against 3.5, at 10k 0.7 against 7.5 (measured with
/// the store file mapped, which reads as fast). Before, when a vector read
/// from sqlite-vec's blocks cost ~100 µs, this was 25,000.
const SEARCHED_FROM_CHUNKS: usize = 1_000;

/// [`SEARCHED_FROM_CHUNKS`] for a copy without its file of exact vectors
/// (`exact_file.rs`): read from sqlite-vec's blocks, at 10k chunks the
/// copy took 13.7 ms against the scan's 7.0, at 100k 12–30 against 70.
const SEARCHED_FROM_CHUNKS_WITHOUT_FILE: usize = 25_000;

/// How many stores' vectors a process keeps.
const STORES_KEPT: usize = 2;

static ENABLED: AtomicBool = AtomicBool::new(false);
static EXACT_FILES: AtomicBool = AtomicBool::new(true);
static FROM_CHUNKS: AtomicUsize = AtomicUsize::new(SEARCHED_FROM_CHUNKS);
/// How many searches this process answered from a kept copy.
static SEARCHED: AtomicU64 = AtomicU64::new(0);
/// How many copies this process read whole.
static LOADED: AtomicU64 = AtomicU64::new(0);
/// How many copies this process read through vec0's scan because
/// sqlite-vec's blocks did not read as expected (`blocks.rs`).
static READ_THROUGH_VEC0: AtomicU64 = AtomicU64::new(0);
/// How many vectors this process scored exactly through vec0's lookup
/// because their place in sqlite-vec's blocks was not found (`blocks.rs`).
static RESCORED_THROUGH_VEC0: AtomicU64 = AtomicU64::new(0);
/// How many vectors this process scored exactly from the store.
static RESCORED_FROM_STORE: AtomicU64 = AtomicU64::new(0);
/// The kept copies, the most recently used last.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// How many vectors this process scored exactly through vec0's lookup
/// rather than from sqlite-vec's blocks.
pub fn rescored_through_vec0() -> u64 {
    RESCORED_THROUGH_VEC0.load(Ordering::Relaxed)
}

/// How many vectors this process scored exactly from the store (sqlite-vec's
/// blocks, or vec0), not from its copy's file of exact vectors (`exact_file.rs`).
pub fn rescored_from_store() -> u64 {
    RESCORED_FROM_STORE.load(Ordering::Relaxed)
}

/// Keep a compact copy of each store's vectors for this process's searches
/// of scopes of [`SEARCHED_FROM_CHUNKS`] chunks or more.
pub fn keep_vectors() {
    keep_vectors_from(SEARCHED_FROM_CHUNKS);
}

/// [`keep_vectors`], searching the copy for scopes of `chunks` chunks or
/// more (0: every search; the tests' setting).
pub fn keep_vectors_from(chunks: usize) {
    FROM_CHUNKS.store(chunks, Ordering::Relaxed);
    ENABLED.store(true, Ordering::Relaxed);
}

/// Whether a copy keeps its exact vectors in a file of its own
/// (`exact_file.rs`; the default), else reads them from the store when it
/// scores them (the tests' setting for that path).
pub fn keep_exact_files(keep: bool) {
    EXACT_FILES.store(keep, Ordering::Relaxed);
}

/// How many nearest-notes searches this process answered from a kept copy.
pub fn searched_kept() -> u64 {
    SEARCHED.load(Ordering::Relaxed)
}

/// How many copies this process read whole (the rest of its searches
/// brought one up to date, or found it so).
pub fn loaded_whole() -> u64 {
    LOADED.load(Ordering::Relaxed)
}

/// How many copies were read through vec0's scan, not from sqlite-vec's
/// blocks (0 while its layout is the one `blocks.rs` reads).
pub fn read_through_vec0() -> u64 {
    READ_THROUGH_VEC0.load(Ordering::Relaxed)
}

/// Read the copy of `store`'s vectors now, if this process keeps them and
/// has none yet (a language server, once its model is loaded, so the first
/// search does not wait for it: 285 ms at 100k notes).
pub(crate) fn warm(store: &Store) -> Result<(), StoreError> {
    if !applies(store) {
        return Ok(());
    }
    let mut all = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(kept) = store.snapshot(|store| fresh(store, &mut all))? {
        keep(&mut all, kept);
    }
    Ok(())
}

/// Drop this process's copy of the store at `path` (after a forget: no
/// copy of the forgotten note's vectors stays in memory).
pub(crate) fn drop_kept(path: &std::path::Path) {
    let dropped: Vec<Kept> = {
        let mut all = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (dropped, kept) = std::mem::take(&mut *all).into_iter().partition(|kept| kept.store == path);
        *all = kept;
        dropped
    };
    dropped.into_iter().for_each(Kept::wipe);
}

/// What the copy shows of the store: when any mark but `generation`
/// changed, the copy cannot be brought up to date from `vector_changes`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marks {
    /// The vector tables' `made` mark: new each time they are made.
    made: Option<String>,
    dims: usize,
    forgotten: i64,
    moves: i64,
    generation: i64,
}

/// One chunk vector: where it is in the store, and its factor (its scale
/// over its length). `note` 0 marks a chunk dropped since the copy was made.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    rowid: i64,
    note: NoteId,
    workspace: u32,
    factor: f32,
}

struct Kept {
    store: PathBuf,
    marks: Marks,
    chunks: Vec<Chunk>,
    /// `dims` signed bytes per chunk, in the order of `chunks`.
    codes: Vec<i8>,
    workspaces: Vec<String>,
    /// How many live chunks each of `workspaces` holds.
    in_workspace: Vec<usize>,
    dropped: usize,
    /// Each chunk's stored floats, at its place in `chunks` (`None`: read
    /// from the store when scored exactly).
    exact: Option<exact_file::ExactFile>,
}

/// Whether this process keeps vectors of `store` (not of a replica, which
/// searches its database).
pub(crate) fn applies(store: &Store) -> bool {
    ENABLED.load(Ordering::Relaxed) && store.shared.is_none()
}

/// The answer to each of `searches` as [`Store::nearest`] finds it, from
/// the kept copy brought up to date (made whole the first time), in one
/// approximate pass over the chunks — with `beside` run on this thread
/// while that pass runs on another (a recall's full-text search: the two
/// take about as long on a shared store, and the pass needs no
/// connection), and there the exact stage after it when the copy's file
/// holds every vector it scores (else this thread scores them, with the
/// store). The answers are `None` when no scope asked holds
/// [`SEARCHED_FROM_CHUNKS`] (sqlite-vec's scan is quicker), or when the
/// caller's read transaction sees an older state of the store than the
/// copy (another request of the same process, begun earlier): then each is
/// searched through sqlite-vec, and the copy stays. `beside` runs once
/// either way; the kept copies stay locked while it runs (a second recall
/// of the process waits, as it waited for the pass and the exact stage),
/// and the copy is kept when it fails.
pub(crate) fn nearest_beside<R>(
    store: &Store,
    query: &[f32],
    searches: &[Wanted<'_>],
    beside: impl FnOnce() -> Result<R, StoreError>,
) -> Result<(Option<Vec<Found>>, R), StoreError> {
    let mut all = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(kept) = fresh(store, &mut all)? else {
        drop(all);
        return Ok((None, beside()?));
    };
    let from = match FROM_CHUNKS.load(Ordering::Relaxed) {
        // Without its file of exact vectors, the copy reads them from
        // sqlite-vec's blocks (~200 µs a block touched): cheaper than the
        // scan only for large scopes (the threshold of before that file).
        from if kept.exact.is_none() && from > 0 => from.max(SEARCHED_FROM_CHUNKS_WITHOUT_FILE),
        from => from,
    };
    if !searches.iter().any(|s| s.k > 0 && kept.chunks_in(s.scope) >= from) {
        keep(&mut all, kept);
        drop(all);
        return Ok((None, beside()?));
    }
    // The approximate pass on another thread and, when the copy's file
    // holds every exact vector it needs, the exact stage too.
    let pass = || {
        let mut approximate = kept.approximate(query, searches);
        let found = approximate.as_mut().and_then(|a| kept.select_each_from_file(query, searches, a));
        (approximate, found)
    };
    let ((approximate, found), beside) = std::thread::scope(|scope| {
        // A thread the system refuses (none left): the pass runs here, after.
        let helper = std::thread::Builder::new().name("mnemo-vectors".into()).spawn_scoped(scope, pass);
        let beside = beside();
        let pass = match helper {
            Ok(helper) => helper.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => pass(),
        };
        (pass, beside)
    });
    let found = beside.and_then(|beside| match (found, approximate) {
        (Some(found), _) => Ok((found, beside)),
        (None, Some(approximate)) => Ok((kept.select_each(store, query, searches, approximate)?, beside)),
        // A query of another model than the copy's: nothing near it.
        (None, None) => Ok((searches.iter().map(|_| Vec::new()).collect(), beside)),
    });
    keep(&mut all, kept);
    let (found, beside) = found?;
    SEARCHED.fetch_add(searches.len() as u64, Ordering::Relaxed);
    Ok((Some(found), beside))
}

/// The copy of `store` taken out of `all`, brought up to date — or read
/// whole, when there is none or it cannot be. `None` (and the copy left in
/// `all`) when the caller's read is older than the copy.
fn fresh(store: &Store, all: &mut Vec<Kept>) -> Result<Option<Kept>, StoreError> {
    let Some(at) = all.iter().position(|kept| kept.store == store.path()) else { return load(store).map(Some) };
    let mut kept = all.remove(at);
    match bring_up_to_date(store, &mut kept)? {
        Freshness::UpToDate => Ok(Some(kept)),
        Freshness::Older => {
            all.push(kept);
            Ok(None)
        }
        Freshness::Unknown { after_forget } => {
            // Read again whole: the old copy's file goes first (and, after
            // a forget, is overwritten: no copy of the note stays on disk).
            if after_forget {
                kept.wipe();
            } else {
                drop(kept);
            }
            load(store).map(Some)
        }
    }
}

/// Put `kept` back, the most recently used, within [`STORES_KEPT`].
fn keep(all: &mut Vec<Kept>, kept: Kept) {
    all.push(kept);
    if all.len() > STORES_KEPT {
        all.remove(0);
    }
}

fn marks(store: &Store) -> Result<Marks, StoreError> {
    let (made, dims, forgotten, moves, generation) = store.conn.query_row(
        "SELECT (SELECT made FROM vector_changes WHERE note_id = 0), (SELECT value FROM vector_index WHERE key = 'dims'),
                (SELECT count(*) FROM forgotten_events), (SELECT coalesce(max(rowid), 0) FROM workspace_moves),
                (SELECT coalesce(max(generation), 0) FROM vector_changes)",
        [],
        |r| Ok((r.get(0)?, r.get::<_, Option<String>>(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let dims = dims.and_then(|d| d.parse().ok()).unwrap_or(0);
    Ok(Marks { made, dims, forgotten, moves, generation })
}

/// A new file for a copy's exact vectors of `dims` floats, when copies keep one.
fn exact_file(store: &std::path::Path, dims: usize) -> Option<exact_file::ExactFile> {
    EXACT_FILES.load(Ordering::Relaxed).then(|| exact_file::ExactFile::create(store, dims * 4)).flatten()
}

/// The whole copy, read from the vector tables.
fn load(store: &Store) -> Result<Kept, StoreError> {
    LOADED.fetch_add(1, Ordering::Relaxed);
    let marks = marks(store)?;
    let mut kept = Kept::empty(store.path().to_path_buf(), marks);
    if kept.marks.dims == 0 || !crate::vectors::has_vector_table(&store.conn)? {
        return Ok(kept);
    }
    kept.exact = exact_file(store.path(), kept.dims());
    if let Ok(true) = load_from_blocks(store, &mut kept) {
        kept.finish_writes();
        return Ok(kept);
    }
    READ_THROUGH_VEC0.fetch_add(1, Ordering::Relaxed);
    // The partial copy and its file go before the new one is made.
    kept.exact = None;
    let empty = kept.clone_marks();
    drop(kept);
    let mut kept = empty;
    // vec0's scan reads each vector by itself (~6 µs a row).
    let mut stmt = store.conn.prepare(
        "SELECT c.rowid, c.note_id, v.workspace, v.embedding FROM note_vectors v CROSS JOIN note_vector_chunks c ON c.rowid = v.rowid",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        kept.add(row.get(0)?, row.get(1)?, &row.get::<_, String>(2)?, &row.get::<_, Vec<u8>>(3)?);
    }
    kept.finish_writes();
    Ok(kept)
}

/// Read the vectors from the blocks sqlite-vec keeps them in
/// ([`blocks::read_all`]), and check what was read: as many vectors as
/// chunks, each chunk's note known, and vectors spread across the copy
/// equal to what vec0 returns for their rowids. False (and the caller
/// reads them through vec0's scan) when anything differs.
fn load_from_blocks(store: &Store, kept: &mut Kept) -> Result<bool, StoreError> {
    let notes: std::collections::HashMap<i64, NoteId> = store
        .conn
        .prepare("SELECT rowid, note_id FROM note_vector_chunks")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut unknown = false;
    let whole = blocks::read_all(store, kept.dims(), |rowid, workspace, vector| match notes.get(&rowid) {
        Some(&note) => kept.add(rowid, note, workspace, vector),
        None => unknown = true,
    })?;
    if !whole || unknown || kept.chunks.len() != notes.len() {
        return Ok(false);
    }
    let mut through_vec0 = store.conn.prepare("SELECT embedding FROM note_vectors WHERE rowid = ?1")?;
    let (dims, step) = (kept.dims(), (kept.chunks.len() / 16).max(1));
    for at in (0..kept.chunks.len()).step_by(step) {
        let stored: Vec<u8> = through_vec0.query_row([kept.chunks[at].rowid], |r| r.get(0))?;
        let (codes, _) = quantise(&floats(&stored).collect::<Vec<_>>(), 127.0);
        if !codes.iter().map(|&c| c as i8).eq(kept.codes[at * dims..(at + 1) * dims].iter().copied()) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// What a kept copy is against the state of the store a read sees.
enum Freshness {
    UpToDate,
    /// The read sees an older state than the copy shows.
    Older,
    /// Not to be brought up to date: read it whole (`after_forget`: a note
    /// was forgotten since the copy was made).
    Unknown {
        after_forget: bool,
    },
}

/// Bring `kept` up to date from the notes whose vectors were written since.
fn bring_up_to_date(store: &Store, kept: &mut Kept) -> Result<Freshness, StoreError> {
    let now = marks(store)?;
    if now == kept.marks {
        return Ok(Freshness::UpToDate);
    }
    let then = &kept.marks;
    if now.made == then.made
        && now.dims == then.dims
        && (now.forgotten < then.forgotten || now.moves < then.moves || now.generation < then.generation)
    {
        return Ok(Freshness::Older);
    }
    let same_tables = Marks { generation: kept.marks.generation, ..now.clone() } == kept.marks;
    if !same_tables {
        return Ok(Freshness::Unknown { after_forget: now.forgotten != kept.marks.forgotten });
    }
    let changed: HashSet<NoteId> = store
        .conn
        .prepare_cached("SELECT note_id FROM vector_changes WHERE generation > ?1 AND note_id != 0")?
        .query_map([kept.marks.generation], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if changed.len() > kept.chunks.len() / 8 + 64 {
        return Ok(Freshness::Unknown { after_forget: false });
    }
    for chunk in kept.chunks.iter_mut().filter(|c| changed.contains(&c.note)) {
        chunk.note = 0;
        kept.dropped += 1;
        kept.in_workspace[chunk.workspace as usize] -= 1;
    }
    let mut stmt = store.conn.prepare_cached(
        "SELECT c.rowid, v.workspace, v.embedding FROM note_vector_chunks c JOIN note_vectors v ON v.rowid = c.rowid
         WHERE c.note_id = ?1",
    )?;
    for &note in &changed {
        let mut rows = stmt.query([note])?;
        while let Some(row) = rows.next()? {
            kept.add(row.get(0)?, note, &row.get::<_, String>(1)?, &row.get::<_, Vec<u8>>(2)?);
        }
    }
    kept.finish_writes();
    kept.marks = now;
    Ok(match kept.dropped <= kept.chunks.len() / 8 + 64 {
        true => Freshness::UpToDate,
        false => Freshness::Unknown { after_forget: false },
    })
}

impl Kept {
    fn dims(&self) -> usize {
        self.marks.dims
    }

    /// How many live chunks `scope` holds.
    fn chunks_in(&self, scope: &Scope) -> usize {
        match scope.workspace_param() {
            Some(w) => self.workspaces.iter().position(|kept| kept == w).map_or(0, |at| self.in_workspace[at]),
            None => self.chunks.len() - self.dropped,
        }
    }

    /// A copy of no chunk of the store at `store`, as of `marks`, without a
    /// file of exact vectors.
    fn empty(store: PathBuf, marks: Marks) -> Kept {
        Kept {
            store,
            marks,
            chunks: Vec::new(),
            codes: Vec::new(),
            workspaces: Vec::new(),
            in_workspace: Vec::new(),
            dropped: 0,
            exact: None,
        }
    }

    /// An empty copy with the same marks (and a new file of exact vectors).
    fn clone_marks(&self) -> Kept {
        Kept { exact: exact_file(&self.store, self.dims()), ..Kept::empty(self.store.clone(), self.marks.clone()) }
    }

    /// Drop the copy, its file overwritten first.
    fn wipe(mut self) {
        if let Some(exact) = self.exact.as_mut() {
            exact.wipe();
        }
    }

    /// Write what the file of exact vectors gathered; without it when it
    /// could not be written.
    fn finish_writes(&mut self) {
        if self.exact.as_mut().is_some_and(|exact| !exact.flush()) {
            self.exact = None;
        }
    }

    /// Add one chunk from its stored floats (little-endian f32).
    fn add(&mut self, rowid: i64, note: NoteId, workspace: &str, blob: &[u8]) {
        let floats: Vec<f32> = floats(blob).collect();
        if floats.len() != self.dims() {
            return;
        }
        let workspace = match self.workspaces.iter().position(|w| w == workspace) {
            Some(at) => at,
            None => {
                self.workspaces.push(workspace.to_string());
                self.in_workspace.push(0);
                self.workspaces.len() - 1
            }
        };
        self.in_workspace[workspace] += 1;
        let workspace = workspace as u32;
        let (codes, factor) = quantise(&floats, 127.0);
        if self.exact.as_mut().is_some_and(|exact| !exact.put(self.chunks.len(), blob)) {
            self.exact = None;
        }
        self.codes.extend(codes.iter().map(|&c| c as i8));
        self.chunks.push(Chunk { rowid, note, workspace, factor });
    }
}

/// The little-endian floats of a stored vector.
fn floats(blob: &[u8]) -> impl Iterator<Item = f32> + '_ {
    blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// `values` scaled so the largest magnitude is `top`, rounded; and the
/// factor that turns a dot product with these codes back into a cosine's
/// share (the scale over the vector's length).
fn quantise(values: &[f32], top: f32) -> (Vec<i32>, f32) {
    let largest = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let length = values.iter().map(|v| v * v).sum::<f32>().sqrt();
    if largest == 0.0 || length == 0.0 {
        return (vec![0; values.len()], 0.0);
    }
    let scale = top / largest;
    let codes = values.iter().map(|v| (v * scale).round() as i32).collect();
    (codes, 1.0 / (scale * length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantised_dot_products_follow_the_cosine() {
        let a: Vec<f32> = (0..384).map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0).collect();
        let b: Vec<f32> = (0..384).map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0).collect();
        let cosine = |x: &[f32], y: &[f32]| {
            let dot: f32 = x.iter().zip(y).map(|(p, q)| p * q).sum();
            let len = |v: &[f32]| v.iter().map(|p| p * p).sum::<f32>().sqrt();
            dot / (len(x) * len(y))
        };
        let (codes, factor) = quantise(&b, 127.0);
        let codes: Vec<i8> = codes.iter().map(|&c| c as i8).collect();
        let (weights, query_factor) = quantise(&a, dot::weight_top(a.len()));
        let weights: Vec<i16> = weights.iter().map(|&w| w as i16).collect();
        let approx = factor * query_factor * dot::dot(&codes, &weights) as f32;
        assert!((approx - cosine(&a, &b)).abs() < 0.01, "{approx} against {}", cosine(&a, &b));
    }
}
