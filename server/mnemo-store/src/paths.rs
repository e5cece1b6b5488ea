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
