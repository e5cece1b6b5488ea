//! Which workspace a command works in: a project root (the git root of the
//! current directory by default, or `--workspace DIR`) and the stable id its
//! repository claims (`identity.rs`: committed, origin, main worktree, else
//! the canonical path), which the store admits (`admission.rs`: roots seen,
//! moves of path-keyed workspaces); or an opaque name for stores imported
//! from elsewhere (the eval corpus's `larder`). Every note belongs to exactly
//! one workspace; its root is per machine (anchors are root-relative).

mod admission;
pub mod identity;

use std::path::{Path, PathBuf};

pub use admission::{KnownRoot, admit_at};
pub(crate) use admission::{born_in, born_in_ids};
pub use identity::{IdSource, IdentityError};

/// A resolved workspace: its id in the store and, when it is a directory,
/// its root, how the id was found and the repository's normalised origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    pub id: String,
    pub root: Option<PathBuf>,
    pub source: IdSource,
    pub origin: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    #[error("workspace directory '{0}' does not exist; pass an existing directory to --workspace")]
    MissingDirectory(String),
    #[error("workspace path '{0}' is not valid UTF-8; mnemo stores workspace paths as text")]
    NotUtf8(String),
    #[error("cannot resolve the current directory: {0}")]
    NoCurrentDirectory(String),
    #[error(transparent)]
    Identity(#[from] IdentityError),
}

impl Workspace {
    /// Resolve `explicit` (from `--workspace` or `MNEMO_WORKSPACE`) or else the
    /// git root above `cwd` (or `cwd` itself outside a repository).
    ///
    /// An explicit value that names no directory is accepted as an opaque
    /// workspace name only when it looks like a name (no `/`, not `.`/`~`-led);
    /// a mistyped path is an error, not a new empty workspace.
    pub fn resolve(explicit: Option<&str>, cwd: &Path) -> Result<Workspace, WorkspaceError> {
        let directory = Workspace::resolve_directory(explicit, cwd)?;
        let (Some(root), Some(path_id)) = (&directory.root, directory.path_id()) else { return Ok(directory) };
        let claim = identity::claim(root, path_id)?;
        Ok(Workspace { id: claim.id, source: claim.source, origin: claim.origin, ..directory })
    }

    /// The workspace's directory as [`Workspace::resolve`] finds it, with its
    /// path as the id and nothing of the repository read (so a broken
    /// `.mnemo/workspace.toml` can be replaced: `mnemo workspace init --new`).
    pub fn resolve_directory(explicit: Option<&str>, cwd: &Path) -> Result<Workspace, WorkspaceError> {
        if let Some(given) = explicit.filter(|g| !g.is_empty()) {
            let path = cwd.join(given);
            if path.is_dir() {
                return Workspace::directory(&path);
            }
            if given.contains('/') || given.starts_with('.') || given.starts_with('~') {
                return Err(WorkspaceError::MissingDirectory(given.to_string()));
            }
            return Ok(Workspace::named(given));
        }
        let cwd = cwd.canonicalize().map_err(|e| WorkspaceError::NoCurrentDirectory(e.to_string()))?;
        let root = cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(&cwd);
        Workspace::directory(root)
    }

    fn directory(dir: &Path) -> Result<Workspace, WorkspaceError> {
        let canonical = dir.canonicalize().map_err(|_| WorkspaceError::MissingDirectory(dir.display().to_string()))?;
        let id =
            canonical.to_str().ok_or_else(|| WorkspaceError::NotUtf8(canonical.display().to_string()))?.to_string();
        Ok(Workspace { id, root: Some(canonical), source: IdSource::Directory, origin: None })
    }

    /// An opaque workspace (no directory), such as an imported store's.
    pub fn named(id: &str) -> Workspace {
        Workspace { id: id.to_string(), root: None, source: IdSource::Named, origin: None }
    }

    /// The id this workspace's directory had before stable ids: its path.
    pub fn path_id(&self) -> Option<&str> {
        self.root.as_deref().and_then(Path::to_str)
    }

    /// The name shown to people: the root's last component, or the opaque name.
    pub fn display_name(&self) -> &str {
        self.root.as_deref().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or(&self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_root_is_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        let ws = Workspace::resolve(None, &root.join("a/b")).unwrap();
        assert_eq!(ws.root.as_deref(), Some(root.as_path()));
        assert_eq!(ws.id, root.to_str().unwrap());
    }

    #[test]
    fn outside_git_the_current_directory_is_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::resolve(None, dir.path()).unwrap();
        assert_eq!(ws.root, Some(dir.path().canonicalize().unwrap()));
    }

    #[test]
    fn explicit_directory_name_or_missing_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("proj")).unwrap();
        let ws = Workspace::resolve(Some("proj"), dir.path()).unwrap();
        assert_eq!(ws.root, Some(dir.path().join("proj").canonicalize().unwrap()));
        assert_eq!(ws.display_name(), "proj");
        let named = Workspace::resolve(Some("larder"), dir.path()).unwrap();
        assert_eq!(named, Workspace::named("larder"));
        assert_eq!(named.display_name(), "larder");
        assert_eq!(
            Workspace::resolve(Some("./nope/x"), dir.path()),
            Err(WorkspaceError::MissingDirectory("./nope/x".into()))
        );
    }
}
