//! Where the store lives by default: `$XDG_DATA_HOME/mnemo/memory.db`, falling
//! back to `~/.local/share/mnemo/memory.db`. `--store` / `MNEMO_STORE` override
//! it in the binary.

use std::path::PathBuf;

/// The default store path for the given environment values.
pub fn default_store_path(xdg_data_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let data = match xdg_data_home.filter(|d| d.starts_with('/')) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(home.filter(|h| !h.is_empty())?).join(".local/share"),
    };
    Some(data.join("mnemo").join("memory.db"))
}

/// The default store path from this process's environment.
pub fn default_store_path_from_env() -> Option<PathBuf> {
    let xdg = std::env::var("XDG_DATA_HOME").ok();
    let home = std::env::var("HOME").ok();
    default_store_path(xdg.as_deref(), home.as_deref())
}

/// The directory where this machine keeps a store's own files (hook
/// sessions, kept edits): beside a store file; for a shared
/// (`postgres://`) store, `$XDG_DATA_HOME/mnemo/shared/<hash of its URL>`
/// (not beside the replica, which is a cache: kept edits are a person's
/// unapplied text).
pub fn store_files_dir(store: &std::path::Path) -> Option<PathBuf> {
    match store.to_str().filter(|s| crate::postgres::is_postgres(s)) {
        Some(url) => {
            let data = default_store_path_from_env()?.parent()?.to_path_buf();
            Some(data.join("shared").join(crate::postgres::url_digest(url)))
        }
        None => Some(
            store.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new(".")).to_path_buf(),
        ),
    }
}

/// Create `dir` (and its missing parents) readable by its owner only
/// (0700): the store, its session files and kept edits hold a person's
/// memory and prompts. An existing directory is left as it is.
pub fn ensure_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// A warning when `path` (an existing store) can be read by other users.
pub fn openness_warning(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "the store {} can be read by other users (mode {mode:o}); it holds your memory: chmod 600 {}",
            path.display(),
            path.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdg_then_home() {
        assert_eq!(default_store_path(Some("/x"), Some("/h")), Some(PathBuf::from("/x/mnemo/memory.db")));
        assert_eq!(
            default_store_path(Some("relative"), Some("/h")),
            Some(PathBuf::from("/h/.local/share/mnemo/memory.db"))
        );
        assert_eq!(default_store_path(None, Some("/h")), Some(PathBuf::from("/h/.local/share/mnemo/memory.db")));
        assert_eq!(default_store_path(None, None), None);
    }
}
