//! The workspace config, `.mnemo/config.toml`. Sections this build does not
//! know are left for the features that read them; the ones it knows are
//! checked strictly, so a typo is an error rather than a silent default.
//!
//! ```toml
//! [expiry]      # days a note of a kind stays live; 0 = never
//! task = 30
//! finding = 180
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mnemo_core::Kind;
use mnemo_core::expiry::ExpiryPolicy;

/// The config file, relative to the workspace root.
pub const CONFIG_PATH: &str = ".mnemo/config.toml";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid workspace config {path}: {message}; fix the file or remove the setting")]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceConfig {
    pub expiry: ExpiryPolicy,
}

#[derive(serde::Deserialize, Default)]
struct RawConfig {
    #[serde(default)]
    expiry: BTreeMap<String, u32>,
}

impl WorkspaceConfig {
    /// Read the config of the workspace at `root`; defaults when there is no file
    /// (or no root: an opaque workspace has no config).
    pub fn load(root: Option<&Path>) -> Result<WorkspaceConfig, ConfigError> {
        let Some(root) = root else {
            return Ok(WorkspaceConfig::default());
        };
        let path = root.join(CONFIG_PATH);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(WorkspaceConfig::default());
            }
            Err(e) => {
                return Err(ConfigError {
                    path,
                    message: e.to_string(),
                });
            }
        };
        WorkspaceConfig::parse(&text).map_err(|message| ConfigError { path, message })
    }

    pub fn parse(text: &str) -> Result<WorkspaceConfig, String> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| e.message().to_string())?;
        let mut expiry = ExpiryPolicy::default();
        for (kind, days) in raw.expiry {
            let kind: Kind = kind
                .parse()
                .map_err(|e: mnemo_core::ParseEnumError| format!("[expiry]: {e}"))?;
            expiry = expiry.with_days(kind, days).map_err(|e| e.to_string())?;
        }
        Ok(WorkspaceConfig { expiry })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_overrides_and_errors() {
        let config = WorkspaceConfig::parse(
            "[expiry]\ntask = 0\nfinding = 7\n[memory_export]\nenabled = true\n",
        )
        .unwrap();
        assert_eq!(config.expiry.days(Kind::Task), None);
        assert_eq!(config.expiry.days(Kind::Finding), Some(7));
        assert!(
            WorkspaceConfig::parse("[expiry]\ntasks = 3")
                .unwrap_err()
                .contains("unknown kind 'tasks'")
        );
        assert!(
            WorkspaceConfig::parse("[expiry]\ndirective = 3")
                .unwrap_err()
                .contains("directives never expire")
        );
        assert!(WorkspaceConfig::parse("[expiry]\ntask = -1").is_err());
        assert!(WorkspaceConfig::parse("[expiry").is_err());
    }

    #[test]
    fn missing_file_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            WorkspaceConfig::load(Some(dir.path())).unwrap(),
            WorkspaceConfig::default()
        );
        assert_eq!(
            WorkspaceConfig::load(None).unwrap(),
            WorkspaceConfig::default()
        );
    }
}
