//! `mnemo_row_counts(notes_fts)`: an FTS5 auxiliary function that gathers what
//! BM25 needs of each matched row — how often each phrase of the query occurs
//! in its title and in its body, and its length in tokens — with the index's
//! row and token counts, so that the score is computed here (`bm25.rs`)
//! with document counts taken from the rows matched. FTS5's own `bm25()`
//! counts each phrase's documents over the whole index (it walks the
//! phrase's whole posting list once per query), which in a store shared by
//! ten workspaces was most of a search of one of them.
//!
//! Registered on every connection the store opens ([`register`]), through
//! the `fts5_api` pointer SQLite hands out for `SELECT fts5(?1)`. The rows
//! are gathered into this thread's [`Matched`] ([`gather`]), not returned
//! one by one: a value per row (a blob made, copied by SQLite and read
//! back) cost more than FTS5's own `bm25()`.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::Connection;
use rusqlite::ffi;

/// The function's name in SQL.
pub(crate) const FUNCTION: &str = "mnemo_row_counts";

/// The rows one query matched, as the function gathered them.
#[derive(Debug)]
pub(crate) struct Matched {
    /// The whole index's counts (`None` until a row is matched).
    pub index: Option<IndexCounts>,
    /// Phrases in the query.
    pub phrases: usize,
    pub rowids: Vec<i64>,
    /// Tokens in all of each row's columns (FTS5's `xColumnSize(-1)`).
    pub lengths: Vec<i64>,
    /// Each row's phrases, in the order of the query's, that occur in its
    /// title or body (only those: a pasted log of thousands of words would
    /// otherwise keep thousands of counts per row).
    pub hits: Vec<Hit>,
    /// Where each row's hits begin in `hits`, and where the last ends.
    starts: Vec<usize>,
    /// The current row's counts per phrase while it is read (zero between rows).
    scratch: Vec<[u32; 2]>,
    touched: Vec<u32>,
}

/// How often one phrase of the query occurs in a row's title and body (the
/// `ws` column's are not counted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hit {
    pub phrase: u32,
    pub title: u32,
    pub body: u32,
}

impl Default for Matched {
    fn default() -> Matched {
        Matched {
            index: None,
            phrases: 0,
            rowids: Vec::new(),
            lengths: Vec::new(),
            hits: Vec::new(),
            starts: vec![0],
            scratch: Vec::new(),
            touched: Vec::new(),
        }
    }
}

impl Matched {
    /// Row `row`'s hits, in the order of the query's phrases.
    pub fn hits_of(&self, row: usize) -> &[Hit] {
        &self.hits[self.starts[row]..self.starts[row + 1]]
    }

    #[cfg(test)]
    pub(crate) fn for_test(index: IndexCounts, phrases: usize) -> Matched {
        Matched { index: Some(index), phrases, ..Matched::default() }
    }

    #[cfg(test)]
    pub(crate) fn push_for_test(&mut self, rowid: i64, length: i64, hits: &[Hit]) {
        self.rowids.push(rowid);
        self.lengths.push(length);
        self.hits.extend_from_slice(hits);
        self.starts.push(self.hits.len());
    }
}

/// The whole index's counts, the same in every row of one query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct IndexCounts {
    pub rows: i64,
    pub tokens: i64,
}

thread_local! {
    static GATHERED: RefCell<Matched> = RefCell::default();
}

/// Run `query`, which steps a statement calling the function, and return
/// what the function gathered of the rows it matched.
pub(crate) fn gather<T, E>(query: impl FnOnce() -> Result<T, E>) -> Result<(T, Matched), E> {
    GATHERED.with_borrow_mut(|gathered| *gathered = Matched::default());
    let answer = query();
    let gathered = GATHERED.with_borrow_mut(std::mem::take);
    Ok((answer?, gathered))
}

/// Make the function known to FTS5 on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let api = fts5_api(conn)?;
    let name = std::ffi::CString::new(FUNCTION).expect("no NUL in the name");
    // SAFETY: `api` is the live fts5_api of this connection (checked not
    // null); FTS5 copies the name, and the function has FTS5's signature.
    let rc = unsafe {
        match (*api).xCreateFunction {
            Some(create) => create(api, name.as_ptr(), ptr::null_mut(), Some(term_counts), None),
            None => ffi::SQLITE_ERROR,
        }
    };
    check(rc, "could not register the full-text index's term counts with FTS5")
}

/// The connection's `fts5_api`, as SQLite documents getting it: a pointer
/// bound to `SELECT fts5(?1)` under the type "fts5_api_ptr".
fn fts5_api(conn: &Connection) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    // SAFETY: the handle is this open connection's; the statement is
    // finalised before returning, and `api` outlives it.
    unsafe {
        let db = conn.handle();
        check(ffi::sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &mut stmt, ptr::null_mut()), "prepare")?;
        let bound = ffi::sqlite3_bind_pointer(stmt, 1, (&raw mut api).cast::<c_void>(), c"fts5_api_ptr".as_ptr(), None);
        let stepped = if bound == ffi::SQLITE_OK { ffi::sqlite3_step(stmt) } else { bound };
        ffi::sqlite3_finalize(stmt);
        if stepped != ffi::SQLITE_ROW && stepped != ffi::SQLITE_DONE {
            check(stepped, "ask SQLite for FTS5's interface")?;
        }
    }
    if api.is_null() {
        return Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_ERROR),
            Some("this SQLite has no FTS5 interface".into()),
        ));
    }
    Ok(api)
}

fn check(rc: c_int, what: &str) -> rusqlite::Result<()> {
    match rc {
        ffi::SQLITE_OK => Ok(()),
        rc => Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some(what.to_string()))),
    }
}

/// The auxiliary function itself: the row's counts added to this
/// thread's [`Matched`]; its value is NULL, or FTS5's error code.
unsafe extern "C" fn term_counts(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _arguments: c_int,
    _values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its own live interface and context.
    let gathered = GATHERED.with_borrow_mut(|matched| unsafe { gather_row(&*api, fts, matched) });
    if let Err(rc) = gathered {
        // SAFETY: `ctx` is this call's.
        unsafe { ffi::sqlite3_result_error_code(ctx, rc) };
    }
}

/// The current row's counts, read through FTS5's interface into `matched`.
///
/// # Safety
/// `api` and `fts` must be the ones FTS5 passed to the auxiliary function.
unsafe fn gather_row(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    matched: &mut Matched,
) -> Result<(), c_int> {
    let missing = ffi::SQLITE_MISUSE;
    let index = unsafe { index_counts(api, fts)? };
    let (rowid, length, phrases) = unsafe {
        let rowid = (api.xRowid.ok_or(missing)?)(fts);
        let mut length: c_int = 0;
        ok((api.xColumnSize.ok_or(missing)?)(fts, -1, &mut length))?;
        let phrases = usize::try_from((api.xPhraseCount.ok_or(missing)?)(fts)).unwrap_or(0);
        (rowid, i64::from(length), phrases)
    };
    if matched.index.is_none() {
        (matched.index, matched.phrases) = (Some(index), phrases);
        matched.scratch = vec![[0, 0]; phrases];
    } else if matched.phrases != phrases {
        return Err(ffi::SQLITE_MISUSE);
    }
    unsafe {
        let mut instances: c_int = 0;
        ok((api.xInstCount.ok_or(missing)?)(fts, &mut instances))?;
        let inst = api.xInst.ok_or(missing)?;
        for i in 0..instances {
            let (mut phrase, mut column, mut offset): (c_int, c_int, c_int) = (0, 0, 0);
            ok(inst(fts, i, &mut phrase, &mut column, &mut offset))?;
            if let (Ok(phrase), Ok(column @ 0..=1)) = (u32::try_from(phrase), usize::try_from(column))
                && let Some(counts) = matched.scratch.get_mut(phrase as usize)
            {
                if *counts == [0, 0] {
                    matched.touched.push(phrase);
                }
                counts[column] += 1;
            }
        }
    }
    // In the query's order: BM25 adds the phrases' shares in that order.
    matched.touched.sort_unstable();
    for &phrase in &matched.touched {
        let [title, body] = std::mem::take(&mut matched.scratch[phrase as usize]);
        matched.hits.push(Hit { phrase, title, body });
    }
    matched.touched.clear();
    matched.starts.push(matched.hits.len());
    matched.rowids.push(rowid);
    matched.lengths.push(length);
    Ok(())
}

/// The index's rows and tokens, read once per query and kept in its
/// auxiliary data: FTS5 reads them from the index again at every call.
///
/// # Safety
/// As [`gather_row`].
unsafe fn index_counts(api: &ffi::Fts5ExtensionApi, fts: *mut ffi::Fts5Context) -> Result<IndexCounts, c_int> {
    let missing = ffi::SQLITE_MISUSE;
    unsafe {
        let kept = (api.xGetAuxdata.ok_or(missing)?)(fts, 0).cast::<IndexCounts>();
        if let Some(kept) = kept.as_ref() {
            return Ok(*kept);
        }
        let mut rows: ffi::sqlite3_int64 = 0;
        ok((api.xRowCount.ok_or(missing)?)(fts, &mut rows))?;
        let mut tokens: ffi::sqlite3_int64 = 0;
        ok((api.xColumnTotalSize.ok_or(missing)?)(fts, -1, &mut tokens))?;
        let counts = IndexCounts { rows, tokens };
        let kept = Box::into_raw(Box::new(counts)).cast::<c_void>();
        // FTS5 frees what it keeps with `free_counts`, at once if it fails.
        ok((api.xSetAuxdata.ok_or(missing)?)(fts, kept, Some(free_counts)))?;
        Ok(counts)
    }
}

unsafe extern "C" fn free_counts(kept: *mut c_void) {
    // SAFETY: `kept` is the box `index_counts` gave FTS5.
    drop(unsafe { Box::from_raw(kept.cast::<IndexCounts>()) });
}

fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK { Ok(()) } else { Err(rc) }
}
