//! The store's side of stable workspace ids: which directories joined which
//! id (`workspace_roots`), and moving a workspace's notes to the id its
//! repository claims (`workspace_moves`, `workspace_aliases`), so a store
//! keyed by paths migrates without losing a note the first time a clone is
//! used under its new id.
//!
//! A committed id (`.mnemo/workspace.toml`) is a claim any repository can
//! copy. It is admitted when the id is new to this store (no directory and
//! no note under it, so not an imported workspace's name), when the clone's
//! origin matches one already seen under it, or when a person joins it
//! (`mnemo workspace join`); otherwise the command is refused and says so,
//! so a hostile repository cannot read another project's memory.
//!
//! A note keeps the id it was created in (`notes.workspace`, covered by the
//! hash chain); `note_state.workspace` is where it is now, and queries by
//! `notes.workspace` take the aliases with [`born_in`].

use std::path::Path;

use mnemo_core::Timestamp;
use rusqlite::{OptionalExtension, params};

use super::{IdSource, Workspace};
use crate::error::StoreError;
use crate::store::Store;
use crate::write::Writer;

/// SQL: `column` (a `notes.workspace`) is the workspace `param`, unless it
/// moved away, or an id that moved into it.
pub(crate) fn born_in(column: &str, param: &str) -> String {
    format!("{column} IN ({})", born_in_ids(param))
}

/// SQL: the ids whose notes are the workspace `param`'s — it, unless it
/// moved away, and every id that moved into it.
pub(crate) fn born_in_ids(param: &str) -> String {
    format!(
        "SELECT {param} WHERE NOT EXISTS (SELECT 1 FROM workspace_aliases WHERE alias = {param})
         UNION ALL SELECT alias FROM workspace_aliases WHERE workspace = {param}"
    )
}

/// A directory this store has seen under a workspace id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownRoot {
    pub root: String,
    pub workspace: String,
    pub source: String,
    pub origin: Option<String>,
    pub seen_at: Timestamp,
}

/// `claimed` as the store at `store_path` admits it ([`Store::admit`]). A
/// store that does not exist yet knows no directory; one that cannot be
/// opened is left to the caller's own open to report: the claim stands.
pub fn admit_at(store_path: &Path, claimed: Workspace, now: Timestamp, join: bool) -> Result<Workspace, StoreError> {
    let nothing_to_follow = claimed.source == IdSource::Directory || claimed.root.is_none();
    if nothing_to_follow && !store_path.exists() {
        return Ok(claimed);
    }
    match Store::open(store_path) {
        Ok(mut store) => store.admit(claimed, now, join),
        Err(_) => Ok(claimed),
    }
}

impl Store {
    /// `claimed` as this store knows it: an id that moved is followed to
    /// where its notes are; a directory that joined a shared id keeps it; a
    /// new clone of a known repository joins (its old notes move with it).
    /// `join`: a person vouches for a committed id the store cannot match.
    pub fn admit(&mut self, claimed: Workspace, now: Timestamp, join: bool) -> Result<Workspace, StoreError> {
        let mut workspace = claimed;
        let Some(root) = workspace.path_id().map(str::to_string) else {
            workspace.id = self.follow(&workspace.id)?;
            return Ok(workspace);
        };
        let registered = self.root(&root)?.map(|known| known.workspace);
        if workspace.source == IdSource::Directory {
            // A directory claims only itself: one that joined a shared id keeps it.
            workspace.id = self.follow(registered.as_deref().unwrap_or(&workspace.id))?;
            return Ok(workspace);
        }
        let id = self.follow(&workspace.id)?;
        if let Some(registered) = &registered
            && self.follow(registered)? == id
        {
            workspace.id = id;
            return Ok(workspace);
        }
        if workspace.source == IdSource::Committed && !join {
            // New to this store (no directory, no note), or a clone of a repository seen under it.
            let known = self.roots_of(&id)?;
            let matched = known.iter().any(|k| k.origin.is_some() && k.origin == workspace.origin);
            let unclaimed = known.is_empty() && !self.holds_anything(&id)?;
            if !matched && !unclaimed {
                return Err(StoreError::UnknownClone {
                    id,
                    root,
                    origin: workspace.origin.clone().unwrap_or_else(|| "none".into()),
                    known: known
                        .iter()
                        .map(|k| format!("{} (origin {})", k.root, k.origin.as_deref().unwrap_or("none")))
                        .collect(),
                });
            }
        }
        let before = self.follow(registered.as_deref().unwrap_or(&root))?;
        let source = workspace.source.as_str().to_string();
        let origin = workspace.origin.clone();
        // A shared id this directory leaves stays with the other directories
        // that joined it; only a workspace of this directory's own moves.
        let shared_elsewhere = self.roots_of(&before)?.iter().any(|known| known.root != root);
        let holds_notes = before != id && !shared_elsewhere && self.holds_anything(&before)?;
        self.write(|w| {
            if holds_notes {
                w.move_workspace(&before, &id, &root, now)?;
            }
            w.register_root(&KnownRoot { root: root.clone(), workspace: id.clone(), source, origin, seen_at: now })
        })?;
        workspace.id = id;
        Ok(workspace)
    }

    /// Where the notes of `id` are now: `id`, or the id it moved into.
    pub fn follow(&self, id: &str) -> Result<String, StoreError> {
        let moved: Option<String> = self
            .conn
            .prepare_cached("SELECT workspace FROM workspace_aliases WHERE alias = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        Ok(moved.unwrap_or_else(|| id.to_string()))
    }

    /// Whether workspace `id` has notes or deliveries (an empty one has nothing to move).
    fn holds_anything(&self, id: &str) -> Result<bool, StoreError> {
        let sql = "SELECT EXISTS (SELECT 1 FROM note_state WHERE workspace = ?1)
                       OR EXISTS (SELECT 1 FROM deliveries WHERE workspace = ?1)";
        Ok(self.conn.prepare_cached(sql)?.query_row([id], |r| r.get(0))?)
    }

    /// What this store knows of directory `root`.
    pub fn root(&self, root: &str) -> Result<Option<KnownRoot>, StoreError> {
        let sql = "SELECT root, workspace, source, origin, seen_at FROM workspace_roots WHERE root = ?1";
        Ok(self.conn.prepare_cached(sql)?.query_row([root], known_root).optional()?)
    }

    /// The directories that joined workspace `id`, by root.
    pub fn roots_of(&self, id: &str) -> Result<Vec<KnownRoot>, StoreError> {
        let sql =
            "SELECT root, workspace, source, origin, seen_at FROM workspace_roots WHERE workspace = ?1 ORDER BY root";
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map([id], known_root)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The ids that moved into `id`, oldest first.
    pub fn moved_into(&self, id: &str) -> Result<Vec<(String, Timestamp)>, StoreError> {
        let sql = "SELECT m.from_id, m.at FROM workspace_aliases a JOIN workspace_moves m ON m.from_id = a.alias
                   WHERE a.workspace = ?1 ORDER BY m.at, m.from_id";
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map([id], |r| Ok((r.get(0)?, Timestamp(r.get(1)?))))?.collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

fn known_root(r: &rusqlite::Row<'_>) -> rusqlite::Result<KnownRoot> {
    Ok(KnownRoot {
        root: r.get(0)?,
        workspace: r.get(1)?,
        source: r.get(2)?,
        origin: r.get(3)?,
        seen_at: Timestamp(r.get(4)?),
    })
}

impl Writer<'_> {
    /// Move every note of workspace `from` (an id no move left yet) into `to`
    /// (one no move left either), with what hangs on the workspace: the
    /// ledger, checkouts, mirror records, vectors and joined directories.
    pub(crate) fn move_workspace(
        &mut self,
        from: &str,
        to: &str,
        root: &str,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let tx = self.transaction();
        crate::vectors::move_partition(tx, from, to)?;
        tx.execute(
            "INSERT INTO workspace_moves (from_id, to_id, at, root) VALUES (?1, ?2, ?3, ?4)",
            params![from, to, now.0, root],
        )?;
        tx.execute("UPDATE workspace_aliases SET workspace = ?2 WHERE workspace = ?1", params![from, to])?;
        tx.execute("INSERT INTO workspace_aliases (alias, workspace) VALUES (?1, ?2)", params![from, to])?;
        tx.execute("UPDATE note_state SET workspace = ?2 WHERE workspace = ?1", params![from, to])?;
        tx.execute("UPDATE deliveries SET workspace = ?2 WHERE workspace = ?1", params![from, to])?;
        tx.execute("UPDATE workspace_roots SET workspace = ?2 WHERE workspace = ?1", params![from, to])?;
        // Per-workspace records keyed with an epoch or a path: the target's own win.
        // A base that leans on a key is written out whole first: the key at its
        // epoch may be the target's own once they are moved.
        crate::checkout::write_out_bases(tx, from)?;
        for table in ["checkouts", "mirror_exports"] {
            tx.execute(
                &format!("UPDATE OR IGNORE {table} SET workspace = ?2 WHERE workspace = ?1"),
                params![from, to],
            )?;
            tx.execute(&format!("DELETE FROM {table} WHERE workspace = ?1"), params![from])?;
        }
        self.mark_written();
        Ok(())
    }

    /// Remember that directory `known.root` is in workspace `known.workspace`.
    pub(crate) fn register_root(&mut self, known: &KnownRoot) -> Result<(), StoreError> {
        self.transaction().execute(
            "INSERT INTO workspace_roots (root, workspace, source, origin, seen_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (root) DO UPDATE SET workspace = ?2, source = ?3, origin = ?4, seen_at = ?5",
            params![known.root, known.workspace, known.source, known.origin, known.seen_at.0],
        )?;
        Ok(())
    }
}
