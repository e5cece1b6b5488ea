//! The MEMORY.md mirror on disk: where it may be written (inside the
//! workspace only), rendering it from one consistent snapshot of the store,
//! writing it atomically with mode 0444, and recording the epoch it was
//! rendered at. [`sync::MirrorSync`] keeps it current in long-lived
//! processes, and one of them may stand for it ([`standing`]).
//!
//! **Invariant:** the mirror is a view. Nothing here reads it back into the
//! store; its bytes are compared to skip a write that changes nothing, and
//! read back only as a rendering to bring up to date when they are exactly
//! what was published ([`seed`]).

mod atomic_write;
mod seed;
pub mod standing;
pub mod sync;

use std::path::{Component, Path, PathBuf};

use rusqlite::OptionalExtension;

use crate::document::{DocumentKind, RenderedDocument, render_workspace_from};
use crate::error::StoreError;
use crate::render_cache;
use crate::store::Store;
use crate::turns::RenderTurn;
use crate::workspace::Workspace;
pub use atomic_write::{StagedFile, write_atomically};

#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    #[error("the mirror path '{given}' is outside the workspace {root}; the mirror must live inside it")]
    OutsideWorkspace { given: String, root: String },
    #[error("cannot write the mirror {path}: the directory {dir} does not exist; create it or choose another path")]
    MissingDirectory { path: String, dir: String },
    #[error("cannot write the mirror {path}: {reason}")]
    NotWritable { path: String, reason: String },
    #[error("the mirror needs a workspace directory, and this workspace ({0}) is only a name; pass --workspace DIR")]
    NoWorkspaceDirectory(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A validated mirror location: inside the workspace, parent directory exists,
/// not a symlink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorTarget {
    pub workspace: Workspace,
    /// Absolute path of the file.
    pub path: PathBuf,
    /// Path relative to the workspace root, as recorded in the store.
    pub relative: String,
}

impl MirrorTarget {
    /// Resolve `given` (relative to the workspace root, or absolute inside it).
    pub fn resolve(workspace: &Workspace, given: &Path) -> Result<MirrorTarget, MirrorError> {
        let root = workspace.root.as_deref().ok_or_else(|| MirrorError::NoWorkspaceDirectory(workspace.id.clone()))?;
        let shown = given.display().to_string();
        let outside = || MirrorError::OutsideWorkspace { given: shown.clone(), root: root.display().to_string() };
        if given.components().any(|c| c == Component::ParentDir) || shown.contains('\0') {
            return Err(outside());
        }
        let joined = root.join(given);
        let (Some(parent), Some(name)) = (joined.parent(), joined.file_name()) else {
            return Err(outside());
        };
        if !parent.is_dir() {
            return Err(MirrorError::MissingDirectory { path: shown, dir: parent.display().to_string() });
        }
        let parent = parent
            .canonicalize()
            .map_err(|e| MirrorError::NotWritable { path: shown.clone(), reason: e.to_string() })?;
        if !parent.starts_with(root) {
            return Err(outside());
        }
        let path = parent.join(name);
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if meta.file_type().is_symlink() {
                return Err(MirrorError::NotWritable {
                    path: shown,
                    reason: "it is a symbolic link; mnemo does not write through links".into(),
                });
            }
            if meta.is_dir() {
                return Err(MirrorError::NotWritable { path: shown, reason: "it is a directory".into() });
            }
            if !meta.is_file() {
                return Err(MirrorError::NotWritable {
                    path: shown,
                    reason: "it is not a regular file (a FIFO or a device?); move it aside or choose another path"
                        .into(),
                });
            }
            // Only a file that is already a mirror is ever replaced — an empty one is not.
            if !is_a_mirror(&path) {
                let what = if meta.len() == 0 {
                    "an empty file"
                } else {
                    "not a mnemo mirror (line 1 is not the mirror header)"
                };
                return Err(MirrorError::NotWritable {
                    path: shown,
                    reason: format!("it exists and is {what}; move it aside or choose another path"),
                });
            }
        }
        let relative = path.strip_prefix(root).map_err(|_| outside())?.to_string_lossy().into_owned();
        Ok(MirrorTarget { workspace: workspace.clone(), path, relative })
    }
}

/// Where a workspace's mirror lives and whether writes keep it current, as
/// its `.mnemo/config.toml` says (`[memory_export] path`, `MEMORY.md` by
/// default). The one answer to "where is the mirror?": the CLI, the
/// language server and, through it, the editor clients all ask here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorLocation {
    /// The configured file, absolute (it need not exist yet).
    pub path: PathBuf,
    /// As configured, relative to the workspace root (what messages show).
    pub configured: String,
    pub enabled: bool,
}

/// The configured mirror of `workspace`; `Ok(None)` for a workspace that is
/// only a name (it has no directory to hold a mirror).
pub fn location(workspace: &Workspace) -> Result<Option<MirrorLocation>, crate::config::ConfigError> {
    let Some(root) = workspace.root.as_deref() else { return Ok(None) };
    let config = crate::config::WorkspaceConfig::load(Some(root))?;
    let export = config.memory_export;
    Ok(Some(MirrorLocation { path: root.join(&export.path), configured: export.path, enabled: export.enabled }))
}

/// The configured mirror of `workspace`, validated for writing, when writes
/// keep it current; `Ok(None)` when export is off or there is no directory.
pub fn enabled_target(workspace: &Workspace) -> Result<Option<MirrorTarget>, String> {
    match location(workspace).map_err(|e| e.to_string())? {
        Some(location) if location.enabled => {
            MirrorTarget::resolve(workspace, Path::new(&location.configured)).map(Some).map_err(|e| e.to_string())
        }
        _ => Ok(None),
    }
}

/// What an export did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOutcome {
    pub epoch: i64,
    pub notes: usize,
    pub bytes: usize,
    /// False when the file already held exactly these bytes.
    pub written: bool,
    /// Whether the rendering was brought up to date (from the file itself,
    /// or this process's last rendering) rather than rendered whole.
    pub brought_up_to_date: bool,
}

/// Render and write the mirror, then record the epoch it shows. The
/// rendering starts from the file itself when it is what was published.
pub fn export(store: &Store, target: &MirrorTarget) -> Result<ExportOutcome, MirrorError> {
    publish(store, target, &render(store, target)?)
}

/// The mirror of `target` rendered, from the file itself when it is what
/// was published.
fn render(store: &Store, target: &MirrorTarget) -> Result<RenderedDocument, StoreError> {
    render_workspace_from(store, &target.workspace, DocumentKind::Mirror, |store| seed::read(store, target))
}

/// Write `document` (a mirror rendered from `store`, maybe by a process that
/// has since been overtaken) as the mirror, and record its epoch.
///
/// Writing the new text beside the file takes no lock. Putting it in place
/// (a rename) and recording its epoch happen under the store's write lock,
/// and only when no newer render was recorded meanwhile: otherwise a slow
/// process could put its older text over a newer one, or back after the file
/// was deleted, while the recorded epoch says the mirror is current.
pub fn publish(
    store: &Store,
    target: &MirrorTarget,
    document: &RenderedDocument,
) -> Result<ExportOutcome, MirrorError> {
    let not_writable =
        |e: std::io::Error| MirrorError::NotWritable { path: target.path.display().to_string(), reason: e.to_string() };
    let bytes = document.text.as_bytes();
    let digest = seed::content_digest(bytes);
    // The file holds what was recorded (or someone's edit): when that is not
    // this rendering, there is no need to read it to compare. (A record
    // not yet committed beside a file already placed makes this rewrite
    // the same bytes: a new mtime, nothing else.)
    let other_recorded = seed::recorded_content(store, target)?.is_some_and(|recorded| recorded != digest);
    let staged = match other_recorded {
        true => StagedFile::stage_over(&target.path, bytes, 0o444),
        false => StagedFile::stage(&target.path, bytes, 0o444),
    }
    .map_err(not_writable)?;
    let outcome = |written| ExportOutcome {
        epoch: document.epoch,
        notes: document.notes,
        bytes: document.text.len(),
        written,
        brought_up_to_date: document.brought_up_to_date,
    };
    store.exclusively(|store| {
        let recorded = recorded_epoch(store, target)?;
        if let Some(recorded) = recorded.filter(|&recorded| recorded > document.epoch) {
            // Overtaken: the newer render's file stands (or, deleted, is
            // behind and re-rendered by the next process); ours is dropped.
            tracing::debug!(
                path = %target.path.display(),
                epoch = document.epoch,
                recorded,
                "mirror skipped: a newer render was recorded"
            );
            return Ok(outcome(false));
        }
        let written = match staged {
            Some(staged) => staged.place().map(|()| true),
            // The file held these bytes when staging; another export may have
            // replaced them since, so compare again under the lock.
            None => write_atomically(&target.path, bytes, 0o444),
        }
        .map_err(not_writable)?;
        seed::record(store, target, document, &digest)?;
        if written {
            tracing::debug!(
                path = %target.path.display(),
                epoch = document.epoch,
                notes = document.notes,
                bytes = bytes.len(),
                "mirror written"
            );
        } else {
            tracing::debug!(
                path = %target.path.display(),
                epoch = document.epoch,
                "mirror skipped: the file already holds this render"
            );
        }
        Ok(outcome(written))
    })
}

/// True when the store changed since the mirror was last rendered (or it never was,
/// or the file is gone).
pub fn is_behind(store: &Store, target: &MirrorTarget) -> Result<bool, StoreError> {
    Ok(!shows_at_least(store, target, store.epoch()?)?)
}

/// The mirror-upkeep rule every process follows, after its own writes, on
/// opening the store, and when another process's write is seen: make sure
/// the mirror shows at least the store as it is now. One process renders a
/// mirror at a time (`turns::try_render`); a process that finds another
/// rendering it leaves its write to that one and returns at once, because
/// a renderer looks again after giving its turn back and renders again
/// when this workspace changed meanwhile — unless another process took the
/// turn, and with it the same duty. So every write is shown by a render
/// begun after it committed (unless the renderer fails or is killed first:
/// then the next command that opens the store catches the mirror up), a
/// burst of writes costs a few renders, and no writer waits for another's
/// render. When a long-lived process stands for the mirror ([`standing`]),
/// every render is left to it. Returns this process's last render, if it
/// made one.
pub fn keep_current(store: &Store, target: &MirrorTarget) -> Result<Option<ExportOutcome>, MirrorError> {
    if shows_at_least(store, target, store.epoch()?)? {
        return Ok(None);
    }
    if standing::someone_stands(store, target) {
        tracing::debug!(path = %target.path.display(), "mirror left to the process standing for it");
        return Ok(None);
    }
    let key = turn_key(target);
    let mut rendered = None;
    loop {
        let turn = match crate::turns::try_render(store.path(), &key) {
            RenderTurn::Taken(turn) => turn,
            RenderTurn::Held => {
                tracing::debug!(path = %target.path.display(), "mirror left to the process rendering it");
                return Ok(rendered);
            }
            // Without turns, each process renders after its own writes.
            RenderTurn::Unavailable => return export(store, target).map(Some),
        };
        // Looked at again with the turn: another process may have just
        // published what this one would.
        if rendered.is_none() && shows_at_least(store, target, store.epoch()?)? {
            return Ok(None);
        }
        let document = render(store, target)?;
        rendered = Some(publish(store, target, &document)?);
        drop(turn);
        if !render_cache::changed_since(store, &target.workspace.id, &document.marks)?
            || standing::someone_stands(store, target)
        {
            return Ok(rendered);
        }
        // Written while this process rendered: a pause in which a writer of
        // another process may take the turn (and this duty) over.
        std::thread::sleep(HAND_OVER);
    }
}

/// How long a renderer that is behind again lets others take the turn.
const HAND_OVER: std::time::Duration = std::time::Duration::from_millis(1);

/// The name of the render turn of `target`: one per mirror file of one
/// workspace (a store holds many workspaces, each with its own mirror).
fn turn_key(target: &MirrorTarget) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(target.workspace.id.as_bytes())
        .chain_update([0])
        .chain_update(target.relative.as_bytes())
        .finalize();
    crate::hex::hex(&digest[..8])
}

/// Whether the mirror file exists and shows the store at `epoch`: rendered
/// at `epoch` or later, or earlier with nothing of its workspace written
/// since and the file still what was published (`seed::unchanged_since`).
/// Other workspaces' writes leave a mirror as it is: a process standing for
/// one mirror of a store many workspaces write to would otherwise render it
/// again after each of their writes.
fn shows_at_least(store: &Store, target: &MirrorTarget, epoch: i64) -> Result<bool, StoreError> {
    let recorded = recorded_epoch(store, target)?;
    let exists = target.path.is_file();
    let covered = exists
        && match recorded {
            Some(recorded) if recorded >= epoch => true,
            Some(_) => seed::unchanged_since(store, target)?,
            None => false,
        };
    tracing::debug!(path = %target.path.display(), ?recorded, epoch, exists, covered, "mirror checked against the store");
    Ok(covered)
}

/// The one wording of an upkeep that failed, for the person: the write is
/// never lost for it, and the next write tries again.
pub fn not_updated(problem: &dyn std::fmt::Display) -> String {
    format!(
        "the mirror was not updated: {problem}; the write itself is saved, and the mirror is retried on the next write"
    )
}

fn recorded_epoch(store: &Store, target: &MirrorTarget) -> Result<Option<i64>, StoreError> {
    Ok(store
        .conn
        .query_row(
            "SELECT epoch FROM mirror_exports WHERE workspace = ?1 AND path = ?2",
            [&target.workspace.id, &target.relative],
            |r| r.get(0),
        )
        .optional()?)
}

/// Whether `path` starts with the mirror header (only a mirror is ever overwritten).
fn is_a_mirror(path: &Path) -> bool {
    crate::repo_file::starts_with(path, mnemo_core::memory_md::MIRROR_MARK.as_bytes())
}
