//! The mirror file read back as a rendering's entries, so that a process
//! with no rendering of its own (a CLI write, a hook) brings the file up to
//! date from the notes written since, instead of reading and rendering every
//! note of the workspace (`render_cache.rs` does the bringing up to date).
//!
//! The file is trusted only when it is exactly what was published: its
//! length and SHA-256 are recorded beside its epoch, with the store's marks
//! it shows ([`record`]). A file a person edited, a branch checked out over
//! it, or one published before this was recorded is not read; the
//! workspace is rendered whole, as before. Nothing read here reaches the
//! store: the entries only stand in for rendering the same notes again.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

use rusqlite::OptionalExtension;
use sha2::{Digest, Sha256};

use mnemo_core::memory_md::laid_out_entries;

use super::MirrorTarget;
use crate::document::RenderedDocument;
use crate::error::StoreError;
use crate::hex::hex;
use crate::render_cache::{Marks, Seed};
use crate::store::Store;

/// The length and SHA-256 of a mirror's bytes, as recorded.
pub(super) fn content_digest(bytes: &[u8]) -> String {
    format!("{}:{}", bytes.len(), hex(Sha256::digest(bytes)))
}

/// What was last recorded as the content of the mirror file of `target`.
pub(super) fn recorded_content(store: &Store, target: &MirrorTarget) -> Result<Option<String>, StoreError> {
    Ok(store
        .conn
        .prepare_cached("SELECT content FROM mirror_exports WHERE workspace = ?1 AND path = ?2")?
        .query_row([&target.workspace.id, &target.relative], |r| r.get(0))
        .optional()?
        .flatten())
}

/// Record `document`, whose [`content_digest`] is `digest`, as what the
/// mirror file of `target` now holds (under the caller's write lock).
pub(super) fn record(
    store: &Store,
    target: &MirrorTarget,
    document: &RenderedDocument,
    digest: &str,
) -> Result<(), StoreError> {
    store.conn.execute(
        "INSERT INTO mirror_exports (workspace, path, epoch, content, marks) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (workspace, path) DO UPDATE SET epoch = excluded.epoch, content = excluded.content, marks = excluded.marks",
        rusqlite::params![
            target.workspace.id,
            target.relative,
            document.epoch,
            digest,
            document.marks.encode()
        ],
    )?;
    Ok(())
}

/// Whether nothing of `target`'s workspace was written since the mirror
/// file was last published (by the marks recorded with it) and the file is
/// still exactly what was published ([`still_published`]). False for a file
/// published before marks were recorded.
pub(super) fn unchanged_since(store: &Store, target: &MirrorTarget) -> Result<bool, StoreError> {
    let Some(published) = published(store, target)? else { return Ok(false) };
    if crate::render_cache::changed_since(store, &target.workspace.id, &published.marks)? {
        return Ok(false);
    }
    Ok(still_published(target, &published.content, published.length))
}

/// What was recorded as published for `target`: its content (`length:sha256`),
/// its length, and the marks it shows; `None` for a file published before
/// they were recorded (or never).
struct Published {
    content: String,
    length: u64,
    marks: Marks,
}

fn published(store: &Store, target: &MirrorTarget) -> Result<Option<Published>, StoreError> {
    let recorded: Option<(Option<String>, Option<String>)> = store
        .conn
        .prepare_cached("SELECT content, marks FROM mirror_exports WHERE workspace = ?1 AND path = ?2")?
        .query_row([&target.workspace.id, &target.relative], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((Some(content), Some(marks))) = recorded else { return Ok(None) };
    let length = content.split_once(':').and_then(|(length, _)| length.parse().ok());
    Ok(Marks::decode(&marks).zip(length).map(|(marks, length)| Published { content, length, marks }))
}

/// A file found to be what was published, and how it looked then (device,
/// inode, length, modification and change times): a process that looks
/// again and again (one standing for the mirror, every second) reads the
/// file once, not at every look, while nothing replaced or touched it.
type Verified = (std::path::PathBuf, String, [i64; 7]);
static VERIFIED: std::sync::Mutex<Option<Verified>> = std::sync::Mutex::new(None);

/// Whether the mirror file of `target` is a regular file (not a link) of
/// exactly the bytes recorded as `content` (`length:sha256`): a file put
/// back by `git checkout`, say, may have the same length.
fn still_published(target: &MirrorTarget, content: &str, length: u64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(&target.path) else { return false };
    if !meta.is_file() || meta.len() != length {
        return false;
    }
    let looks = [
        meta.dev() as i64,
        meta.ino() as i64,
        meta.len() as i64,
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    ];
    let mut verified = VERIFIED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if verified.as_ref().is_some_and(|(path, was, seen)| *path == target.path && was == content && *seen == looks) {
        return true;
    }
    let same = read_file(target, length).is_some_and(|text| content_digest(text.as_bytes()) == content);
    *verified = same.then(|| (target.path.clone(), content.to_string(), looks));
    same
}

/// The entries of the mirror file of `target` and the marks it shows, when
/// the file holds exactly what was recorded (inside the caller's read
/// transaction); `None` otherwise.
pub(super) fn read(store: &Store, target: &MirrorTarget) -> Option<Seed> {
    let Published { content, length, marks } = published(store, target).ok()??;
    let text = read_file(target, length)?;
    if content_digest(text.as_bytes()) != content {
        tracing::debug!(path = %target.path.display(), "the mirror file is not what was published; rendering it whole");
        return None;
    }
    let entries: BTreeMap<_, _> =
        laid_out_entries(&text)?.into_iter().map(|(kind, id, entry)| ((kind, id), entry.to_string())).collect();
    Some(Seed { marks, entries })
}

/// The file's text, when it is a regular file (not followed through a
/// link) of exactly `length` bytes.
fn read_file(target: &MirrorTarget, length: u64) -> Option<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&target.path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() != length {
        return None;
    }
    let mut text = String::with_capacity(length as usize);
    file.take(length + 1).read_to_string(&mut text).ok()?;
    Some(text)
}
