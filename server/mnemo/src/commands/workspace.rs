//! `mnemo workspace`: which workspace this directory is in — its id, how the
//! id was found (committed, the origin remote, the main worktree, the
//! directory), the directories on this machine that share it and the ids
//! that moved into it; `init` commits a new id in `.mnemo/workspace.toml`,
//! `join` vouches for a committed id the store knows from another origin.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use mnemo_store::Store;
use mnemo_store::workspace::identity::{COMMITTED_FILE, committed_id, new_committed_id};
use mnemo_store::workspace::{IdSource, Workspace};
use serde_json::json;

use crate::cli::{Global, WorkspaceAction, WorkspaceArgs};
use crate::clock::Clock;
use crate::output::print_json;
use mnemo_core::Timestamp;
use mnemo_store::workspace::admit_at;

pub fn run(global: &Global, args: WorkspaceArgs) -> anyhow::Result<ExitCode> {
    let store_path = crate::context::store_path(global)?;
    let now = Clock::from_env()?.now()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let claimed = || Workspace::resolve(global.workspace.as_deref(), &cwd);
    let workspace = match args.action {
        None => admit_at(&store_path, claimed()?, now, false)?,
        Some(WorkspaceAction::Join) => {
            let claimed = claimed()?;
            if claimed.source != IdSource::Committed {
                anyhow::bail!(
                    "nothing to join: {} claims no committed id ({}); `mnemo workspace init` makes one",
                    claimed.path_id().unwrap_or(&claimed.id),
                    COMMITTED_FILE
                );
            }
            admit_at(&store_path, claimed, now, true)?
        }
        Some(WorkspaceAction::Init { new }) => match init(&store_path, global, &cwd, new, now)? {
            Some(workspace) => workspace,
            None => return Ok(ExitCode::SUCCESS),
        },
    };
    show(&store_path, &workspace, global.json)
}

/// `init`: a new committed id in the workspace's directory (replacing one
/// only with `--new`; a broken file is replaced too, since nothing reads it),
/// and the directory's notes moved to it. `None` when an id stands and
/// nothing changed.
fn init(
    store_path: &Path,
    global: &Global,
    cwd: &Path,
    new: bool,
    now: Timestamp,
) -> anyhow::Result<Option<Workspace>> {
    let directory = Workspace::resolve_directory(global.workspace.as_deref(), cwd)?;
    let (Some(root), Some(path_id)) = (directory.root.clone(), directory.path_id().map(str::to_string)) else {
        anyhow::bail!(
            "workspace {} is a name, not a directory: there is no repository to commit an id in",
            directory.id
        );
    };
    if let Ok(Some(id)) = committed_id(&root)
        && !new
    {
        println!("{COMMITTED_FILE} already holds id {id}; nothing changed (`--new` replaces it)");
        return Ok(None);
    }
    let mut store = Store::open(store_path)?;
    // The notes this directory had (under its path or the id it joined) move with it.
    let from = store.root(&path_id)?.map_or(path_id, |known| known.workspace);
    let id = new_committed_id().context("cannot read random bytes for a new workspace id")?;
    let file = root.join(COMMITTED_FILE);
    std::fs::create_dir_all(root.join(".mnemo"))
        .with_context(|| format!("cannot create {}", root.join(".mnemo").display()))?;
    let text = format!(
        "# This repository's mnemo workspace: every clone and worktree shares its memory.\n# Commit this file. `mnemo workspace` shows what it joined.\nid = \"{id}\"\n"
    );
    std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
    let workspace = store.admit(Workspace::resolve(global.workspace.as_deref(), cwd)?, now, false)?;
    let moved = store.moved_into(&workspace.id)?.iter().any(|(old, _)| *old == from);
    let notes = if moved { format!("; the notes of {from} are in it now") } else { String::new() };
    eprintln!("wrote {COMMITTED_FILE} with id {id}: commit it, and every clone and worktree shares this memory{notes}");
    Ok(Some(workspace))
}

fn show(store_path: &std::path::Path, workspace: &Workspace, as_json: bool) -> anyhow::Result<ExitCode> {
    let store = Store::open(store_path)?;
    let roots = store.roots_of(&workspace.id)?;
    let moved = store.moved_into(&workspace.id)?;
    let notes = store.note_ids(&workspace.id)?.len();
    if as_json {
        let roots: Vec<_> = roots
            .iter()
            .map(|r| json!({ "root": r.root, "source": r.source, "origin": r.origin, "seen_at": r.seen_at.rfc3339() }))
            .collect();
        let moved: Vec<_> = moved.iter().map(|(id, at)| json!({ "from": id, "at": at.rfc3339() })).collect();
        print_json(&json!({
            "id": workspace.id,
            "found": workspace.source.describe(),
            "root": workspace.root.as_ref().map(|r| r.display().to_string()),
            "origin": workspace.origin,
            "notes": notes,
            "roots": roots,
            "moved_in": moved,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    println!("workspace {}", workspace.id);
    println!("  found: {}", workspace.source.describe());
    if let Some(root) = &workspace.root {
        println!("  here: {}", root.display());
    }
    if let Some(origin) = &workspace.origin {
        println!("  origin: {origin}");
    }
    println!("  notes: {notes}");
    for root in roots.iter().filter(|r| Some(r.root.as_str()) != workspace.path_id()) {
        println!("  also checked out at {} (since {})", root.root, root.seen_at.rfc3339());
    }
    for (from, at) in &moved {
        println!("  holds the notes of {from} (moved {})", at.rfc3339());
    }
    Ok(ExitCode::SUCCESS)
}
