//! A long-lived process's last rendering of a workspace, kept entry by
//! entry, so that the next rendering reads and renders only the notes
//! written since: a language server re-renders the checkouts it handed out
//! at every epoch, and an MCP server renders the mirror after its writes —
//! at 100k notes that was ~200 ms each, reading and rendering every note.
//!
//! What was written since is told by the event log: every change of a
//! note's state is an event, and event ids only grow. What the log does not
//! tell — a note forgotten (its events go with it), a workspace moved — is
//! noticed by the marks kept beside the entries (with the event chain's
//! link at the last event seen, which says the log is the same one), and
//! then everything is rendered again; so is a replica of a shared store
//! (its rows arrive from the database, not through this log's order), and
//! a rendering whose entries do not number the workspace's notes once
//! brought up to date (a last check). Only processes that ask
//! ([`keep_renders`]) keep one; any process, a one-shot command too, may
//! start from a [`Seed`] instead: entries read back from a file it can
//! prove is a rendering of this store (the mirror, `mirror/seed.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rusqlite::OptionalExtension;

use mnemo_core::memory_md::{Entry, Flavour, LAYOUT_VERSION, assemble, entry_text};
use mnemo_core::{Kind, NoteId, NoteView};

use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;

/// More notes written since than the kept entries divided by this (or than
/// [`CHANGED_AT_LEAST`]), and the workspace is read whole again: a note read
/// alone costs about what eight cost in a whole read (`benches/checkin.rs`).
const CHANGED_AT_MOST_ONE_IN: usize = 8;
const CHANGED_AT_LEAST: usize = 64;

/// How many workspaces' renderings a process keeps (a window of several folders).
const WORKSPACES_KEPT: usize = 4;

static ENABLED: AtomicBool = AtomicBool::new(false);
/// How many renderings this process brought up to date rather than made whole.
static BROUGHT_UP_TO_DATE: AtomicU64 = AtomicU64::new(0);
/// The kept renderings, the most recently used last.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// How many renderings this process has brought up to date from kept
/// entries (the rest were rendered whole).
pub fn brought_up_to_date() -> u64 {
    BROUGHT_UP_TO_DATE.load(Ordering::Relaxed)
}

/// Keep each workspace rendering of this process for the next one.
pub fn keep_renders() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Whether this process keeps its renderings (a long-lived one: the
/// language server, the MCP server), so it keeps other work for the next
/// request too (a check-in's new base, parsed: `checkout`).
pub(crate) fn keeps_renders() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The state of the store a kept rendering shows: if any mark but the last
/// event moved backwards or changed, the kept entries cannot be brought up
/// to date from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Marks {
    last_event: i64,
    /// The event chain's link at `last_event`, which hashes the whole log up
    /// to it: a store made again at the same path has another history.
    link: Option<String>,
    forgotten: i64,
    moves: i64,
    aliases: i64,
}

impl Marks {
    /// One line that [`Marks::decode`] reads back (stored beside a mirror),
    /// with the renderer's [`LAYOUT_VERSION`]: marks of another version's
    /// rendering do not decode.
    pub(crate) fn encode(&self) -> String {
        let Marks { last_event, link, forgotten, moves, aliases } = self;
        let link = link.as_deref().unwrap_or("-");
        format!("v{LAYOUT_VERSION} {last_event} {forgotten} {moves} {aliases} {link}")
    }

    pub(crate) fn decode(line: &str) -> Option<Marks> {
        let mut words = line.strip_prefix(&format!("v{LAYOUT_VERSION} "))?.split(' ');
        let mut number = || words.next()?.parse().ok();
        let (last_event, forgotten, moves, aliases) = (number()?, number()?, number()?, number()?);
        let link = match words.next()? {
            "-" => None,
            link => Some(link.to_string()),
        };
        words.next().is_none().then_some(Marks { last_event, link, forgotten, moves, aliases })
    }
}

/// Entries of a rendering this process did not make, and the marks of the
/// store they show: brought up to date like kept ones.
pub(crate) struct Seed {
    pub(crate) marks: Marks,
    pub(crate) entries: BTreeMap<(Kind, NoteId), String>,
}

struct Kept {
    store: PathBuf,
    workspace: String,
    marks: Marks,
    entries: BTreeMap<(Kind, NoteId), String>,
    bytes: usize,
}

/// The marks of the store as it is now (inside the caller's read transaction).
pub(crate) fn marks(store: &Store) -> Result<Marks, StoreError> {
    Ok(store.conn.query_row(
        "SELECT (SELECT coalesce(max(id), 0) FROM events), (SELECT count(*) FROM forgotten_events),
                (SELECT coalesce(max(rowid), 0) FROM workspace_moves), (SELECT count(*) FROM workspace_aliases)",
        [],
        |r| {
            let last_event = r.get(0)?;
            Ok(Marks { last_event, link: None, forgotten: r.get(1)?, moves: r.get(2)?, aliases: r.get(3)? })
        },
    )?)
    .and_then(|marks| Ok(Marks { link: link_at(store, marks.last_event)?, ..marks }))
}

/// The event chain's link at `event` (none for an empty log).
fn link_at(store: &Store, event: i64) -> Result<Option<String>, StoreError> {
    Ok(store
        .conn
        .prepare_cached("SELECT hash FROM event_chain WHERE event_id = ?1")?
        .query_row([event], |r| r.get(0))
        .optional()?)
}

/// Whether the store marked `now` is the one marked `then` with events
/// added to the same log, and nothing else (no forget, move or alias):
/// only then can a rendering be brought from `then` to `now` by the log.
fn follows(store: &Store, then: &Marks, now: &Marks) -> Result<bool, StoreError> {
    let only_events_moved = Marks { last_event: then.last_event, link: then.link.clone(), ..now.clone() } == *then;
    Ok(only_events_moved && now.last_event >= then.last_event && link_at(store, then.last_event)? == then.link)
}

/// Whether `workspace`'s rendering could differ from one made when the
/// store showed `then`: an event on one of its notes since, or a mark that
/// moved (a forget, a move, an alias; another history).
pub(crate) fn changed_since(store: &Store, workspace: &str, then: &Marks) -> Result<bool, StoreError> {
    let now = marks(store)?;
    if now == *then {
        return Ok(false);
    }
    if !follows(store, then, &now)? {
        return Ok(true);
    }
    let sql = format!(
        "SELECT EXISTS (SELECT 1 FROM events e JOIN notes ON notes.id = e.note_id WHERE e.id > ?1 AND {})",
        crate::workspace::born_in("notes.workspace", "?2")
    );
    Ok(store.conn.prepare_cached(&sql)?.query_row(rusqlite::params![then.last_event, workspace], |r| r.get(0))?)
}

/// How many notes `workspace` holds now: what the kept entries must number
/// once brought up to date (a last check that nothing went by unseen).
fn notes_in(store: &Store, workspace: &str) -> Result<usize, StoreError> {
    let sql = format!("SELECT count(*) FROM notes WHERE {}", crate::workspace::born_in("workspace", "?1"));
    Ok(store.conn.prepare_cached(&sql)?.query_row([workspace], |r| r.get::<_, i64>(0))? as usize)
}

/// Whether this process keeps renderings of `store` (not of a replica).
pub(crate) fn applies(store: &Store) -> bool {
    ENABLED.load(Ordering::Relaxed) && store.shared.is_none()
}

/// `workspace` rendered from the kept entries brought up to date — or,
/// when this process keeps none, from `seed`'s — or `None` when there are
/// none to bring up to date (then render it whole, with [`render_and_keep`]).
/// `now` are the store's marks; runs inside the caller's read transaction.
pub(crate) fn render_from_kept(
    store: &Store,
    workspace: &str,
    flavour: &Flavour,
    display_name: &str,
    now: &Marks,
    seed: impl FnOnce() -> Option<Seed>,
) -> Result<Option<(String, usize)>, StoreError> {
    let mut all = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let at = all.iter().position(|k| k.store == store.path() && k.workspace == workspace).filter(|_| applies(store));
    // Taken out while it is brought up to date: put back only if that succeeds.
    let mut kept = match at {
        Some(at) => {
            let kept = all.remove(at);
            if now.forgotten != kept.marks.forgotten {
                // Another process forgot a note: this one keeps no copy of its
                // vectors, its pages or its checkout text either.
                crate::vector_cache::drop_kept(store.path());
                crate::checkout::drop_kept();
                crate::kept_connections::close_idle(store.path());
            }
            kept
        }
        None => {
            let Some(Seed { marks, entries }) = seed() else { return Ok(None) };
            let bytes = entries.values().map(String::len).sum();
            Kept { store: store.path().to_path_buf(), workspace: workspace.to_string(), marks, entries, bytes }
        }
    };
    if !bring_up_to_date(store, workspace, &mut kept, now)? {
        return Ok(None);
    }
    let entries = kept.entries.iter().map(|((kind, _), text)| (*kind, text.as_str()));
    let text = assemble(flavour, display_name, entries, kept.bytes);
    let notes = kept.entries.len();
    if applies(store) {
        all.retain(|k| !(k.store == kept.store && k.workspace == kept.workspace));
        if all.len() == WORKSPACES_KEPT {
            all.remove(0);
        }
        all.push(kept);
    }
    BROUGHT_UP_TO_DATE.fetch_add(1, Ordering::Relaxed);
    Ok(Some((text, notes)))
}

/// Bring `kept` to the store as `now` marks it: re-render the notes written
/// since. False when that cannot be done from the log (another history, a
/// forget, a move, too many changes): then render the workspace whole.
fn bring_up_to_date(store: &Store, workspace: &str, kept: &mut Kept, now: &Marks) -> Result<bool, StoreError> {
    if !follows(store, &kept.marks, now)? {
        return Ok(false);
    }
    let at_most = (kept.entries.len() / CHANGED_AT_MOST_ONE_IN).max(CHANGED_AT_LEAST);
    let changed: Vec<NoteId> = store
        .conn
        .prepare_cached("SELECT DISTINCT note_id FROM events WHERE id > ?1 LIMIT ?2")?
        .query_map(rusqlite::params![kept.marks.last_event, at_most as i64 + 1], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if changed.len() > at_most {
        return Ok(false);
    }
    let scope = Scope::Workspace(workspace.to_string());
    for id in changed {
        match store.note(&scope, id) {
            Ok(view) => {
                let text = entry_text(&Entry::from_view(&view));
                kept.bytes += text.len();
                if let Some(old) = kept.entries.insert((view.note.content.kind, id), text) {
                    kept.bytes -= old.len();
                }
            }
            Err(StoreError::OtherWorkspace { .. }) => {}
            // Forgotten without the marks showing it: start again.
            Err(StoreError::NoSuchNote { .. }) => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    if kept.entries.len() != notes_in(store, workspace)? {
        tracing::warn!(workspace, "a kept rendering did not match the store's notes; rendering it whole");
        return Ok(false);
    }
    kept.marks = now.clone();
    Ok(true)
}

/// Render `views` (every note of `workspace`) whole, and keep the entries
/// for the next rendering. Runs inside the caller's read transaction.
pub(crate) fn render_and_keep(
    store: &Store,
    workspace: &str,
    flavour: &Flavour,
    display_name: &str,
    views: &[NoteView],
    marks: &Marks,
) -> Result<String, StoreError> {
    let marks = marks.clone();
    let entries: BTreeMap<(Kind, NoteId), String> =
        views.iter().map(|v| ((v.note.content.kind, v.note.id), entry_text(&Entry::from_view(v)))).collect();
    let bytes = entries.values().map(String::len).sum();
    let text = assemble(flavour, display_name, entries.iter().map(|((kind, _), text)| (*kind, text.as_str())), bytes);
    let kept = Kept { store: store.path().to_path_buf(), workspace: workspace.to_string(), marks, entries, bytes };
    let mut all = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    all.retain(|k| !(k.store == kept.store && k.workspace == kept.workspace));
    if all.len() == WORKSPACES_KEPT {
        all.remove(0);
    }
    all.push(kept);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_read_back_only_at_this_layout_version() {
        let marks = Marks { last_event: 42, link: Some("ab12".into()), forgotten: 1, moves: 2, aliases: 3 };
        assert_eq!(Marks::decode(&marks.encode()), Some(marks.clone()));
        let empty = Marks { last_event: 0, link: None, forgotten: 0, moves: 0, aliases: 0 };
        assert_eq!(Marks::decode(&empty.encode()), Some(empty));
        let other_version =
            marks.encode().replacen(&format!("v{LAYOUT_VERSION} "), &format!("v{} ", LAYOUT_VERSION + 1), 1);
        assert_eq!(Marks::decode(&other_version), None);
        assert_eq!(Marks::decode(&(marks.encode() + " extra")), None);
        assert_eq!(Marks::decode("v1 1 2"), None);
    }
}
