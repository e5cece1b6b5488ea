//! Where checkout bases are kept. Every checkout handed out is recorded so
//! that its check-in plans against exactly that text; a language server
//! hands one out at every epoch a person sees, so they are many and nearly
//! alike. A base is kept compactly: the workspace's newest *key* base holds
//! its whole text, each later one only a line delta against it
//! ([`line_delta`]), and a new key is made when a delta would be more than a
//! quarter of its text. The [`KEPT_CHECKOUTS`] newest bases of a workspace
//! are kept, and the keys they need.

use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};

use super::line_delta;
use crate::error::StoreError;

/// How many checkout bases a workspace keeps (the newest).
pub const KEPT_CHECKOUTS: i64 = 32;

/// A delta longer than its text divided by this makes the text a key instead.
const DELTA_AT_MOST: usize = 4;

/// Record `text` as the base of `workspace` at `epoch`. An existing base at
/// that epoch is kept unless `replace` (a check-in's carried base replaces
/// the rendering it was made from); bases that leaned on a replaced key are
/// written out in full first.
pub(crate) fn record(
    conn: &Connection,
    workspace: &str,
    epoch: i64,
    text: &str,
    replace: bool,
) -> Result<(), StoreError> {
    if exists(conn, workspace, epoch)? {
        if !replace {
            return Ok(());
        }
        write_out_leaning(conn, workspace, Some(epoch))?;
    }
    let delta = newest_key(conn, workspace, epoch)?
        .map(|(key_epoch, key)| (key_epoch, key.encode(text)))
        .filter(|(_, delta)| delta.len() * DELTA_AT_MOST <= text.len());
    match delta {
        Some((key_epoch, delta)) => conn.execute(
            "INSERT OR REPLACE INTO checkouts (workspace, epoch, text, key_epoch, delta) VALUES (?1, ?2, '', ?3, ?4)",
            params![workspace, epoch, key_epoch, delta],
        )?,
        None => conn.execute(
            "INSERT OR REPLACE INTO checkouts (workspace, epoch, text, key_epoch, delta) VALUES (?1, ?2, ?3, NULL, NULL)",
            params![workspace, epoch, text],
        )?,
    };
    prune(conn, workspace)
}

/// The key this process encoded its last base against, made ready
/// (`line_delta::Key`): a language server records a base at every check-in
/// and every epoch, each against the same key until a new one is made.
struct KeptKey {
    store: Option<String>,
    workspace: String,
    epoch: i64,
    made: i64,
    key: Arc<line_delta::Key>,
}

static KEPT_KEY: Mutex<Option<KeptKey>> = Mutex::new(None);

/// Drop the kept key (a note was forgotten: no copy of its text stays in
/// this process).
pub(crate) fn drop_kept_key() {
    let old = KEPT_KEY.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    drop(old);
}

/// The newest key of `workspace` other than the base at `epoch`, made ready
/// to encode against: the one this process keeps while its mark says it is
/// the same text, else read.
fn newest_key(
    conn: &Connection,
    workspace: &str,
    epoch: i64,
) -> Result<Option<(i64, Arc<line_delta::Key>)>, StoreError> {
    let newest: Option<(i64, i64)> = conn
        .prepare_cached(
            "SELECT epoch, made FROM checkout_made WHERE workspace = ?1 AND key_epoch IS NULL AND epoch != ?2
             ORDER BY epoch DESC LIMIT 1",
        )?
        .query_row(params![workspace, epoch], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((key_epoch, made)) = newest else { return Ok(None) };
    let store = conn.path().map(str::to_string);
    let kept = KEPT_KEY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(kept) = kept.as_ref().filter(|kept| {
        (kept.store.as_ref(), kept.workspace.as_str(), kept.epoch, kept.made)
            == (store.as_ref(), workspace, key_epoch, made)
    }) {
        return Ok(Some((key_epoch, kept.key.clone())));
    }
    drop(kept);
    let Some(text) = key_text(conn, workspace, key_epoch)? else { return Ok(None) };
    let key = Arc::new(line_delta::Key::new(text));
    let old = KEPT_KEY.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).replace(KeptKey {
        store,
        workspace: workspace.to_string(),
        epoch: key_epoch,
        made,
        key: key.clone(),
    });
    drop(old);
    Ok(Some((key_epoch, key)))
}

/// What a base's text is made of, as its row and its key's were last
/// written: while a row's `made` is the same its text is (each write of a
/// row draws a new one: the `checkout_made` triggers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Made {
    base: i64,
    key: Option<i64>,
}

impl Made {
    fn of(base: Option<i64>, key_epoch: Option<i64>, key: Option<i64>) -> Option<Made> {
        match (base, key_epoch, key) {
            (Some(base), None, _) => Some(Made { base, key: None }),
            (Some(base), Some(_), Some(key)) => Some(Made { base, key: Some(key) }),
            _ => None,
        }
    }
}

/// How `workspace`'s base at `epoch` was made, without reading its text
/// (`checkout_made`); `None` when there is no such base, or its key is gone.
pub(crate) fn made(conn: &Connection, workspace: &str, epoch: i64) -> Result<Option<Made>, StoreError> {
    let row: Option<(Option<i64>, Option<i64>, Option<i64>)> = conn
        .prepare_cached(
            "SELECT b.made, b.key_epoch, k.made FROM checkout_made b
             LEFT JOIN checkout_made k ON k.workspace = b.workspace AND k.epoch = b.key_epoch AND k.key_epoch IS NULL
             WHERE b.workspace = ?1 AND b.epoch = ?2",
        )?
        .query_row(params![workspace, epoch], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    Ok(row.and_then(|(base, key_epoch, key)| Made::of(base, key_epoch, key)))
}

/// The text of `workspace`'s base at `epoch`; `None` when there is none, or
/// its key is gone or does not fit it (said in the log: the person is told
/// to check out again, as for a base pruned long ago).
pub(crate) fn text(conn: &Connection, workspace: &str, epoch: i64) -> Result<Option<String>, StoreError> {
    Ok(text_made(conn, workspace, epoch)?.map(|(text, _)| text))
}

/// [`text`], and how it was made (read in the same statement).
pub(crate) fn text_made(
    conn: &Connection,
    workspace: &str,
    epoch: i64,
) -> Result<Option<(String, Option<Made>)>, StoreError> {
    // One statement: the base and its key from the same state of the store
    // (a forget in between rewrites keys).
    let row: Option<(StoredBase, KeyText, Option<Made>)> = conn
        .prepare_cached(
            "SELECT b.text, b.key_epoch, b.delta, k.text, bm.made, km.made FROM checkouts b
             LEFT JOIN checkouts k ON k.workspace = b.workspace AND k.epoch = b.key_epoch AND k.key_epoch IS NULL
             LEFT JOIN checkout_made bm ON bm.workspace = b.workspace AND bm.epoch = b.epoch
             LEFT JOIN checkout_made km ON km.workspace = k.workspace AND km.epoch = k.epoch
             WHERE b.workspace = ?1 AND b.epoch = ?2",
        )?
        .query_row(params![workspace, epoch], |r| {
            let base = StoredBase {
                workspace: workspace.into(),
                epoch,
                text: r.get(0)?,
                key_epoch: r.get(1)?,
                delta: r.get(2)?,
            };
            let made = Made::of(r.get(4)?, base.key_epoch, r.get(5)?);
            Ok((base, r.get(3)?, made))
        })
        .optional()?;
    let Some((StoredBase { text, key_epoch, delta, .. }, key, made)) = row else { return Ok(None) };
    let (Some(key_epoch), Some(delta)) = (key_epoch, delta) else { return Ok(Some((text, made))) };
    let rebuilt = key.as_deref().and_then(|key| line_delta::apply(key, &delta));
    if rebuilt.is_none() {
        tracing::warn!(workspace, epoch, key_epoch, "a checkout base's key is missing or does not fit it");
    }
    Ok(rebuilt.map(|text| (text, made)))
}

/// Write out in full every base of `workspace` that leans on a key (before
/// the workspace's bases move under another id, where a key at the same
/// epoch may be the other workspace's); one that cannot be rebuilt goes.
pub(crate) fn write_out_all(conn: &Connection, workspace: &str) -> Result<(), StoreError> {
    write_out_leaning(conn, workspace, None)
}

/// Write out in full the bases of `workspace` that lean on its key at
/// `key_epoch` (any key when `None`); one that cannot be rebuilt goes.
fn write_out_leaning(conn: &Connection, workspace: &str, key_epoch: Option<i64>) -> Result<(), StoreError> {
    let leaning: Vec<i64> = conn
        .prepare("SELECT epoch FROM checkouts WHERE workspace = ?1 AND key_epoch = coalesce(?2, key_epoch)")?
        .query_map(params![workspace, key_epoch], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for epoch in leaning {
        // Only bases that lean on a key change here, never a key: each is rebuilt from a key as it was.
        let whole = text(conn, workspace, epoch)?;
        write_whole(conn, workspace, epoch, whole)?;
    }
    Ok(())
}

/// Store `whole` as the base of `workspace` at `epoch`, as a key; `None`
/// (it could not be rebuilt) deletes the base.
fn write_whole(conn: &Connection, workspace: &str, epoch: i64, whole: Option<String>) -> Result<(), StoreError> {
    match whole {
        Some(text) => conn.execute(
            "UPDATE checkouts SET text = ?3, key_epoch = NULL, delta = NULL WHERE workspace = ?1 AND epoch = ?2",
            params![workspace, epoch, text],
        )?,
        None => conn.execute("DELETE FROM checkouts WHERE workspace = ?1 AND epoch = ?2", params![workspace, epoch])?,
    };
    Ok(())
}

/// Remove note `id`'s entry from every recorded base (they are copies of
/// its text: forget leaves none behind). A base holds it when it is a key
/// whose text does, or a delta whose own lines do (they are whole lines, so
/// the entry's first line is in its bytes) or whose key does. Each is
/// rebuilt, then written out in full without it; one that cannot be rebuilt
/// (its key gone) is deleted.
pub(crate) fn purge_note(conn: &Connection, id: mnemo_core::NoteId) -> Result<(), StoreError> {
    let marker = format!("- [#{id}] ");
    let holding: Vec<StoredBase> = conn
        .prepare(
            // The keys that hold it are found once: a correlated search per
            // delta scanned the same 20 MB key 32 times at 100k notes.
            "WITH holding_keys AS MATERIALIZED (
                 SELECT workspace, epoch FROM checkouts WHERE key_epoch IS NULL AND instr(text, ?1) > 0)
             SELECT b.workspace, b.epoch, b.text, b.key_epoch, b.delta FROM checkouts b
             WHERE (b.key_epoch IS NULL AND (b.workspace, b.epoch) IN (SELECT workspace, epoch FROM holding_keys))
                OR (b.key_epoch IS NOT NULL AND (instr(b.delta, CAST(?1 AS BLOB)) > 0
                    OR (b.workspace, b.key_epoch) IN (SELECT workspace, epoch FROM holding_keys)))",
        )?
        .query_map([&marker], |r| {
            Ok(StoredBase {
                workspace: r.get(0)?,
                epoch: r.get(1)?,
                text: r.get(2)?,
                key_epoch: r.get(3)?,
                delta: r.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    // Every base is rebuilt before any is written: a delta needs its key's old text.
    let mut keys: std::collections::HashMap<(String, i64), Option<String>> = std::collections::HashMap::new();
    let mut rebuilt = Vec::with_capacity(holding.len());
    for StoredBase { workspace, epoch, text, key_epoch, delta } in holding {
        let whole = match (key_epoch, delta) {
            (Some(key_epoch), Some(delta)) => {
                let key = match keys.entry((workspace.clone(), key_epoch)) {
                    std::collections::hash_map::Entry::Occupied(found) => found.into_mut(),
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(key_text(conn, &workspace, key_epoch)?)
                    }
                };
                key.as_deref().and_then(|key| line_delta::apply(key, &delta))
            }
            _ => Some(text),
        };
        rebuilt.push((workspace, epoch, whole));
    }
    for (workspace, epoch, whole) in rebuilt {
        match whole {
            Some(text) => conn.execute(
                "UPDATE checkouts SET text = ?3, key_epoch = NULL, delta = NULL WHERE workspace = ?1 AND epoch = ?2",
                params![workspace, epoch, mnemo_core::memory_md::without_entry(&text, id)],
            )?,
            None => {
                conn.execute("DELETE FROM checkouts WHERE workspace = ?1 AND epoch = ?2", params![workspace, epoch])?
            }
        };
    }
    Ok(())
}

/// A key base's text, when it is there.
type KeyText = Option<String>;

/// A `checkouts` row as stored.
struct StoredBase {
    workspace: String,
    epoch: i64,
    text: String,
    key_epoch: Option<i64>,
    delta: Option<Vec<u8>>,
}

/// The text of `workspace`'s key base at `epoch`, if it is there.
fn key_text(conn: &Connection, workspace: &str, epoch: i64) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT text FROM checkouts WHERE workspace = ?1 AND epoch = ?2 AND key_epoch IS NULL",
            params![workspace, epoch],
            |r| r.get(0),
        )
        .optional()?)
}

fn exists(conn: &Connection, workspace: &str, epoch: i64) -> Result<bool, StoreError> {
    Ok(conn
        .query_row("SELECT 1 FROM checkouts WHERE workspace = ?1 AND epoch = ?2", params![workspace, epoch], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Keep the [`KEPT_CHECKOUTS`] newest bases of a workspace (the ones an open
/// editor or a kept edit can still check in against) and the keys they lean on.
fn prune(conn: &Connection, workspace: &str) -> Result<(), StoreError> {
    conn.execute(
        "DELETE FROM checkouts WHERE workspace = ?1
         AND epoch NOT IN (SELECT epoch FROM checkouts WHERE workspace = ?1 ORDER BY epoch DESC LIMIT ?2)
         AND epoch NOT IN (SELECT key_epoch FROM
             (SELECT key_epoch FROM checkouts WHERE workspace = ?1 ORDER BY epoch DESC LIMIT ?2)
             WHERE key_epoch IS NOT NULL)",
        params![workspace, KEPT_CHECKOUTS],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store's tables, as its migrations make them.
    fn table() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        conn
    }

    fn document(notes: std::ops::Range<u32>) -> String {
        notes.map(|i| format!("- [#{i}] 2026-01-01 · finding · medium · Note {i}\n  Its body.\n\n")).collect()
    }

    fn stored(conn: &Connection, epoch: i64) -> (bool, i64) {
        conn.query_row(
            "SELECT key_epoch IS NULL, length(text) + coalesce(length(delta), 0) FROM checkouts WHERE epoch = ?1",
            [epoch],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }

    #[test]
    fn nearby_bases_are_deltas_and_a_different_one_a_new_key() {
        let conn = table();
        record(&conn, "w", 1, &document(0..100), false).unwrap();
        record(&conn, "w", 2, &document(0..101), false).unwrap();
        record(&conn, "w", 3, &document(500..600), false).unwrap();
        record(&conn, "w", 4, &document(500..601), false).unwrap();
        assert!(stored(&conn, 1).0 && stored(&conn, 3).0, "keys");
        assert_eq!((stored(&conn, 2).0, stored(&conn, 4).0), (false, false), "deltas");
        assert!(stored(&conn, 2).1 < 130, "{:?}", stored(&conn, 2));
        for (epoch, text) in
            [(1, document(0..100)), (2, document(0..101)), (3, document(500..600)), (4, document(500..601))]
        {
            assert_eq!(super::text(&conn, "w", epoch).unwrap(), Some(text));
        }
        assert_eq!(super::text(&conn, "other", 2).unwrap(), None, "bases are per workspace");
    }

    #[test]
    fn an_existing_base_is_kept_unless_replaced_and_what_leaned_on_it_survives() {
        let conn = table();
        record(&conn, "w", 1, &document(0..50), false).unwrap();
        record(&conn, "w", 2, &document(0..51), false).unwrap();
        record(&conn, "w", 1, "ignored", false).unwrap();
        assert_eq!(super::text(&conn, "w", 1).unwrap(), Some(document(0..50)));
        // The key is replaced (a check-in's carried base): its dependent is written out first.
        record(&conn, "w", 1, &document(0..49), true).unwrap();
        assert_eq!(super::text(&conn, "w", 1).unwrap(), Some(document(0..49)));
        assert_eq!(super::text(&conn, "w", 2).unwrap(), Some(document(0..51)));
    }

    #[test]
    fn a_base_whose_key_is_gone_or_damaged_is_unknown() {
        let conn = table();
        record(&conn, "w", 1, &document(0..50), false).unwrap();
        record(&conn, "w", 2, &document(0..51), false).unwrap();
        conn.execute("UPDATE checkouts SET text = 'x' WHERE epoch = 1", []).unwrap();
        assert_eq!(super::text(&conn, "w", 2).unwrap(), None);
        conn.execute("DELETE FROM checkouts WHERE epoch = 1", []).unwrap();
        assert_eq!(super::text(&conn, "w", 2).unwrap(), None);
    }

    #[test]
    fn pruning_keeps_the_newest_and_the_keys_they_lean_on() {
        let conn = table();
        for epoch in 1..=40 {
            record(&conn, "w", epoch, &document(0..(100 + epoch as u32)), false).unwrap();
        }
        let epochs: Vec<i64> = conn
            .prepare("SELECT epoch FROM checkouts ORDER BY epoch")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(epochs, std::iter::once(1).chain(9..=40).collect::<Vec<_>>());
        assert_eq!(super::text(&conn, "w", 9).unwrap(), Some(document(0..109)));
    }

    #[test]
    fn a_bases_mark_changes_whenever_its_text_or_its_keys_could() {
        let conn = table();
        let made = |epoch| super::made(&conn, "w", epoch).unwrap();
        record(&conn, "w", 1, &document(0..100), false).unwrap();
        record(&conn, "w", 2, &document(0..101), false).unwrap();
        let (key, delta) = (made(1).unwrap(), made(2).unwrap());
        assert_eq!((key.key, delta.key), (None, Some(key.base)), "a delta's mark names its key's");
        // Read with the text: the same marks.
        assert_eq!(text_made(&conn, "w", 2).unwrap(), Some((document(0..101), Some(delta))));
        assert_eq!(made(3), None, "no such base");
        // Kept, not written: the same marks.
        record(&conn, "w", 2, &document(0..102), false).unwrap();
        assert_eq!((made(1), made(2)), (Some(key), Some(delta)));
        // Written again (a check-in's carried base), at once or through the
        // key it leaned on: new marks.
        record(&conn, "w", 2, &document(0..102), true).unwrap();
        let again = made(2).unwrap();
        assert_ne!(again, delta);
        record(&conn, "w", 1, &document(0..99), true).unwrap();
        assert_ne!(made(1).unwrap(), key);
        assert_ne!(made(2).unwrap(), again, "written out whole before its key was replaced");
        assert_eq!(super::text(&conn, "w", 2).unwrap(), Some(document(0..102)));
        // A forget rewrites what held the note; moved under another
        // workspace, a base keeps its mark; a base gone has none.
        let before = made(2).unwrap();
        purge_note(&conn, 101).unwrap();
        assert_ne!(made(2).unwrap(), before);
        let moved = made(2).unwrap();
        conn.execute("UPDATE checkouts SET workspace = 'v' WHERE workspace = 'w' AND epoch = 2", []).unwrap();
        assert_eq!(made(2), None);
        assert_ne!(super::made(&conn, "v", 2).unwrap(), Some(moved), "a row written anew under its new name");
        conn.execute("DELETE FROM checkouts", []).unwrap();
        let marks: i64 = conn.query_row("SELECT count(*) FROM checkout_made", [], |r| r.get(0)).unwrap();
        assert_eq!(marks, 0, "no mark outlives its base");
        // A delta whose key is gone has no mark (its text cannot be rebuilt).
        record(&conn, "w", 5, &document(0..100), false).unwrap();
        record(&conn, "w", 6, &document(0..101), false).unwrap();
        conn.execute("DELETE FROM checkouts WHERE epoch = 5", []).unwrap();
        assert_eq!(made(6), None);
    }

    #[test]
    fn a_key_this_process_keeps_is_read_again_once_another_wrote_it() {
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let mut conn = Connection::open(dir.path().join("memory.db")).unwrap();
            crate::schema::migrate(&mut conn, &dir.path().join("memory.db")).unwrap();
            conn
        };
        let (mine, other) = (open(), open());
        record(&mine, "w", 1, &document(0..100), false).unwrap();
        record(&mine, "w", 2, &document(0..101), false).unwrap();
        // Another process writes the key again, with other text.
        other.execute("UPDATE checkouts SET text = ?1 WHERE epoch = 1", [document(200..300)]).unwrap();
        // A base recorded against the key as it now is, not as it was kept.
        record(&mine, "w", 3, &document(200..301), false).unwrap();
        assert!(!stored(&mine, 3).0, "a delta");
        assert_eq!(super::text(&other, "w", 3).unwrap(), Some(document(200..301)));
        // A forget drops the kept key; the next base reads it again.
        drop_kept_key();
        record(&mine, "w", 4, &document(200..302), false).unwrap();
        assert_eq!(super::text(&other, "w", 4).unwrap(), Some(document(200..302)));
    }

    #[test]
    fn a_forgotten_note_leaves_no_base_neither_key_nor_delta() {
        let conn = table();
        record(&conn, "w", 1, &document(0..50), false).unwrap();
        let with_77 = document(0..50) + "- [#77] 2026-01-01 · finding · medium · Secret words\n";
        record(&conn, "w", 2, &with_77, false).unwrap();
        record(&conn, "w", 3, &document(1..50), false).unwrap();
        purge_note(&conn, 77).unwrap();
        purge_note(&conn, 7).unwrap();
        let leftovers: i64 = conn
            .query_row(
                "SELECT count(*) FROM checkouts WHERE instr(text, 'Secret') OR instr(CAST(delta AS TEXT), 'Secret')
                 OR instr(text, '[#7] ') OR instr(CAST(delta AS TEXT), '[#7] ')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(leftovers, 0);
        let without = |text: &str, id| mnemo_core::memory_md::without_entry(text, id);
        let without_7 = |text: String| without(&text, 7);
        assert_eq!(super::text(&conn, "w", 1).unwrap(), Some(without_7(document(0..50))));
        assert_eq!(super::text(&conn, "w", 2).unwrap(), Some(without_7(without(&with_77, 77))));
        assert_eq!(super::text(&conn, "w", 3).unwrap(), Some(without_7(document(1..50))));
    }

    #[test]
    fn bases_moved_under_another_workspace_never_lean_on_its_key() {
        let conn = table();
        record(&conn, "a", 1, &document(0..50), false).unwrap();
        record(&conn, "a", 2, &document(0..51), false).unwrap();
        record(&conn, "b", 1, &document(500..560), false).unwrap();
        // What a workspace move does (admission.rs): write out, move, the target's own win.
        write_out_all(&conn, "a").unwrap();
        conn.execute("UPDATE OR IGNORE checkouts SET workspace = 'b' WHERE workspace = 'a'", []).unwrap();
        conn.execute("DELETE FROM checkouts WHERE workspace = 'a'", []).unwrap();
        assert_eq!(super::text(&conn, "b", 2).unwrap(), Some(document(0..51)));
        assert_eq!(super::text(&conn, "b", 1).unwrap(), Some(document(500..560)));
    }

    #[test]
    fn a_delta_applied_to_another_key_is_refused() {
        let conn = table();
        record(&conn, "a", 1, &document(0..50), false).unwrap();
        record(&conn, "a", 2, &document(0..51), false).unwrap();
        conn.execute("UPDATE checkouts SET text = ?1 WHERE epoch = 1", [document(100..150)]).unwrap();
        assert_eq!(super::text(&conn, "a", 2).unwrap(), None);
    }

    #[test]
    fn a_base_that_cannot_be_rebuilt_and_holds_a_forgotten_note_goes() {
        let conn = table();
        record(&conn, "w", 1, &document(0..50), false).unwrap();
        record(&conn, "w", 2, &(document(0..50) + "- [#77] 2026-01-01 · finding · medium · Secret words\n"), false)
            .unwrap();
        conn.execute("DELETE FROM checkouts WHERE epoch = 1", []).unwrap();
        purge_note(&conn, 77).unwrap();
        let left: i64 = conn.query_row("SELECT count(*) FROM checkouts", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0);
    }
}
