//! A workspace's stable id, found in the repository so that every clone and
//! worktree of it shares one memory: the id committed in
//! `.mnemo/workspace.toml` (`mnemo workspace init` makes one), else the
//! repository's `origin` remote, normalised (`git:github.com/org/repo`:
//! scheme, user, password, port and `.git` dropped, host lower-cased), else
//! the main worktree's directory (a linked worktree shares its repository's),
//! else the directory itself, as before.
//!
//! Only what is in the directory is read (`.git` and its `config`), never
//! a `git` process. A committed id is a repository's claim, and a hostile
//! repository may copy another's: the store admits it only for a clone of a
//! repository already known under it (`admission.rs`).

use std::path::{Path, PathBuf};

/// The file that holds a committed workspace id.
pub const COMMITTED_FILE: &str = ".mnemo/workspace.toml";

/// How a workspace's id was found, strongest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdSource {
    /// `id` in `.mnemo/workspace.toml`, committed in the repository.
    Committed,
    /// The repository's `origin` remote (normalised, no credentials).
    Origin,
    /// The main worktree of the repository this linked worktree belongs to.
    MainWorktree,
    /// The directory itself: no repository, or one without a remote.
    Directory,
    /// An opaque name given with `--workspace` (an imported store).
    Named,
}

impl IdSource {
    /// The word stored for it (`workspace_roots.source`).
    pub fn as_str(&self) -> &'static str {
        match self {
            IdSource::Committed => "committed",
            IdSource::Origin => "origin",
            IdSource::MainWorktree => "main-worktree",
            IdSource::Directory => "directory",
            IdSource::Named => "named",
        }
    }

    /// How `mnemo workspace` says it.
    pub fn describe(&self) -> &'static str {
        match self {
            IdSource::Committed => "committed in .mnemo/workspace.toml",
            IdSource::Origin => "the repository's origin remote",
            IdSource::MainWorktree => "the main worktree of this repository",
            IdSource::Directory => "this directory (no committed id and no origin remote)",
            IdSource::Named => "named with --workspace",
        }
    }
}

/// What a directory claims as its workspace: the id, how it was found and
/// the repository's normalised origin (which admission compares).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub id: String,
    pub source: IdSource,
    pub origin: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error(
        "{file} holds no usable id ({why}); it should read `id = \"ws-…\"` (letters, digits, '.', '_', '-'; at most 64), as `mnemo workspace init` writes it"
    )]
    BadCommittedId { file: String, why: String },
}

/// The claim of `root` (canonical). `path_id` is its id as a directory.
pub fn claim(root: &Path, path_id: &str) -> Result<Claim, IdentityError> {
    let repository = GitDirs::of(root);
    let origin = repository.as_ref().and_then(|r| r.origin());
    if let Some(id) = committed_id(root)? {
        return Ok(Claim { id, source: IdSource::Committed, origin });
    }
    if let Some(url) = &origin {
        return Ok(Claim { id: format!("git:{url}"), source: IdSource::Origin, origin });
    }
    if let Some(main) = repository.and_then(|r| r.main_worktree()).filter(|m| m != root)
        && let Some(id) = main.to_str()
    {
        return Ok(Claim { id: id.to_string(), source: IdSource::MainWorktree, origin: None });
    }
    Ok(Claim { id: path_id.to_string(), source: IdSource::Directory, origin: None })
}

/// The id in `root/.mnemo/workspace.toml`, when there is the file.
pub fn committed_id(root: &Path) -> Result<Option<String>, IdentityError> {
    let path = root.join(COMMITTED_FILE);
    let bad = |why: String| IdentityError::BadCommittedId { file: COMMITTED_FILE.into(), why };
    let text = match crate::repo_file::read_text(&path) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(bad(e.to_string())),
    };
    #[derive(serde::Deserialize)]
    struct File {
        id: String,
    }
    let file: File = toml::from_str(&text).map_err(|e| bad(e.message().to_string()))?;
    check_committed_id(&file.id).map_err(bad)?;
    Ok(Some(file.id))
}

/// A committed id names nothing else: not a path, not an origin (`git:`),
/// no control character, short.
pub fn check_committed_id(id: &str) -> Result<(), String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
    if id.is_empty() || id.len() > 64 {
        return Err(format!("an id of {} characters", id.len()));
    }
    if !id.starts_with(|c: char| c.is_ascii_alphanumeric()) || !id.chars().all(plain) {
        return Err(format!("{id:?} is not a plain name"));
    }
    Ok(())
}

/// A new committed id: `ws-` and 16 random hex digits.
pub fn new_committed_id() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(format!("ws-{}", crate::hex::hex(bytes)))
}

/// The `.git` of a worktree: its own git directory and the repository's
/// common one (the same for the main worktree).
struct GitDirs {
    common: PathBuf,
}

impl GitDirs {
    fn of(root: &Path) -> Option<GitDirs> {
        let dot_git = root.join(".git");
        if dot_git.is_dir() {
            return Some(GitDirs { common: dot_git });
        }
        // A linked worktree: `.git` is a file `gitdir: <repo>/.git/worktrees/<name>`,
        // whose `commondir` names the repository's git directory.
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let own = root.join(text.strip_prefix("gitdir:")?.trim());
        let common = match std::fs::read_to_string(own.join("commondir")) {
            Ok(relative) => own.join(relative.trim()),
            Err(_) => own,
        };
        Some(GitDirs { common: common.canonicalize().ok()? })
    }

    /// The `url` of `[remote "origin"]` in the repository's config, normalised.
    fn origin(&self) -> Option<String> {
        let config = std::fs::read_to_string(self.common.join("config")).ok()?;
        normalise_remote(&remote_url(&config, "origin")?)
    }

    /// The directory the common git directory belongs to (not for bare repositories).
    fn main_worktree(&self) -> Option<PathBuf> {
        (self.common.file_name()? == ".git").then(|| self.common.parent().map(Path::to_path_buf))?
    }
}

/// The url of remote `name` in a git config's text.
fn remote_url(config: &str, name: &str) -> Option<String> {
    let header = format!("[remote \"{name}\"]");
    let mut inside = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == header;
        } else if inside
            && let Some((key, value)) = line.split_once('=')
            && key.trim() == "url"
        {
            return Some(value.trim().trim_matches('"').to_string());
        }
    }
    None
}

/// `git@github.com:Org/Repo.git`, `https://user:pw@GitHub.com:443/Org/Repo/`
/// and `ssh://git@github.com/Org/Repo` are all `github.com/Org/Repo`; a
/// local path stays a path. `None` for nothing usable.
pub fn normalise_remote(url: &str) -> Option<String> {
    let url = url.trim();
    let (host, path) = if let Some((_, rest)) = url.split_once("://") {
        if url.starts_with("file://") {
            ("", rest.to_string())
        } else {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            (authority, path.to_string())
        }
    } else if let Some((authority, path)) = url.split_once(':').filter(|(a, _)| !a.contains('/')) {
        (authority, path.to_string()) // scp-like: [user@]host:path
    } else {
        ("", url.to_string())
    };
    let host = host.rsplit('@').next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("").to_ascii_lowercase();
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).trim_matches('/');
    if path.is_empty() || url.chars().any(char::is_control) {
        return None;
    }
    Some(if host.is_empty() { format!("/{path}") } else { format!("{host}/{path}") })
}

#[cfg(test)]
mod tests;
