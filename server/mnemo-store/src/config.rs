//! The workspace config, `.mnemo/config.toml`. Sections this build does not
//! know are left for the features that read them; the ones it knows are
//! checked strictly, so a typo is an error rather than a silent default.
//!
//! ```toml
//! [expiry]            # days a note of a kind stays live; 0 = never
//! task = 30
//!
//! [hooks.triggers]    # when the hooks deliver a kind (default: the ladder
//! gotcha = ["pre-edit", "user-prompt"]   # in mnemo_core::triggers)
//!
//! [review]            # notes agents write wait for a person (default: live)
//! agent = "propose"
//! kinds = ["directive", "decision"]   # only these kinds (default: every kind)
//!
//! [load_budget]       # how much of MEMORY.md the agent's harness loads
//! harness = "Claude Code"             # (the default: 200 lines or 25000 bytes)
//! lines = 200
//! bytes = 25000
//!
//! [memory_export]     # keep a MEMORY.md mirror current after every write
//! enabled = true
//! path = "MEMORY.md"  # inside the workspace
//! debounce_seconds = 3.0
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mnemo_core::Kind;
use mnemo_core::expiry::ExpiryPolicy;
use mnemo_core::load_budget::LoadLimit;
use mnemo_core::review::ReviewPolicy;
use mnemo_core::triggers::TriggerBundles;

/// The config file, relative to the workspace root.
pub const CONFIG_PATH: &str = ".mnemo/config.toml";

/// The mirror's default path, relative to the workspace root.
pub const DEFAULT_MIRROR_PATH: &str = "MEMORY.md";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid workspace config {path}: {message}; fix the file or remove the setting")]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkspaceConfig {
    pub expiry: ExpiryPolicy,
    pub memory_export: MemoryExport,
    pub recall: RecallConfig,
    pub triggers: TriggerBundles,
    pub review: ReviewPolicy,
    pub load_limit: LoadLimit,
}

/// `[recall]`: where the embedding model and ONNX Runtime are (absolute, or
/// relative to the workspace root). `MNEMO_MODEL_DIR` / `ORT_DYLIB_PATH` win.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallConfig {
    pub model_dir: Option<PathBuf>,
    pub onnxruntime: Option<PathBuf>,
    /// How many of the hybrid's best candidates late interaction reranks in
    /// `mnemo recall`, `context`, the MCP tools and prompt recall (0: off).
    pub rerank: usize,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig { model_dir: None, onnxruntime: None, rerank: crate::recall::DEFAULT_RERANK }
    }
}

/// `[memory_export]`: whether and where the mirror is kept current.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryExport {
    pub enabled: bool,
    /// Relative to the workspace root (checked when exporting).
    pub path: String,
    /// Quiet time after a burst of writes before a long-lived process renders.
    pub debounce: Duration,
}

impl Default for MemoryExport {
    fn default() -> Self {
        MemoryExport { enabled: false, path: DEFAULT_MIRROR_PATH.into(), debounce: Duration::from_secs(3) }
    }
}

#[derive(serde::Deserialize, Default)]
struct RawConfig {
    #[serde(default)]
    expiry: BTreeMap<String, u32>,
    memory_export: Option<RawMemoryExport>,
    recall: Option<RawRecall>,
    hooks: Option<RawHooks>,
    review: Option<RawReview>,
    load_budget: Option<RawLoadBudget>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoadBudget {
    harness: Option<String>,
    lines: Option<usize>,
    bytes: Option<usize>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReview {
    agent: Option<String>,
    #[serde(default)]
    kinds: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHooks {
    #[serde(default)]
    triggers: BTreeMap<String, Vec<String>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecall {
    model_dir: Option<PathBuf>,
    onnxruntime: Option<PathBuf>,
    rerank: Option<usize>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemoryExport {
    #[serde(default)]
    enabled: bool,
    path: Option<String>,
    debounce_seconds: Option<f64>,
}

impl WorkspaceConfig {
    /// Read the config of the workspace at `root`; defaults when there is no file
    /// (or no root: an opaque workspace has no config).
    pub fn load(root: Option<&Path>) -> Result<WorkspaceConfig, ConfigError> {
        let Some(root) = root else {
            return Ok(WorkspaceConfig::default());
        };
        let path = root.join(CONFIG_PATH);
        let text = match crate::repo_file::read_text(&path) {
            Ok(text) => text,
            Err(e) if e.is_not_found() => {
                return Ok(WorkspaceConfig::default());
            }
            Err(e) => {
                return Err(ConfigError { path, message: e.to_string() });
            }
        };
        let config = WorkspaceConfig::parse(&text).map_err(|message| ConfigError { path: path.clone(), message })?;
        // A workspace is often a cloned repository: it must not be able to
        // choose native code for mnemo to load. Model paths must lie outside it.
        for (key, value) in [("model_dir", &config.recall.model_dir), ("onnxruntime", &config.recall.onnxruntime)] {
            let Some(value) = value else { continue };
            let joined = root.join(value);
            let resolved = joined.canonicalize().unwrap_or(joined);
            let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
            if !value.is_absolute() || resolved.starts_with(&root) {
                return Err(ConfigError {
                    path,
                    message: format!(
                        "[recall] {key} = {} points inside the workspace; a repository must not choose native code for mnemo to load: use an absolute path outside it, or MNEMO_MODEL_DIR / ORT_DYLIB_PATH",
                        value.display()
                    ),
                });
            }
        }
        Ok(config)
    }

    pub fn parse(text: &str) -> Result<WorkspaceConfig, String> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| e.message().trim().to_string())?;
        let mut expiry = ExpiryPolicy::default();
        for (kind, days) in raw.expiry {
            let kind: Kind = kind.parse().map_err(|e: mnemo_core::ParseEnumError| format!("[expiry]: {e}"))?;
            expiry = expiry.with_days(kind, days).map_err(|e| e.to_string())?;
        }
        let mut memory_export = MemoryExport::default();
        if let Some(raw) = raw.memory_export {
            memory_export.enabled = raw.enabled;
            if let Some(path) = raw.path {
                if path.trim().is_empty() {
                    return Err("[memory_export] path is empty".into());
                }
                memory_export.path = path;
            }
            if let Some(seconds) = raw.debounce_seconds {
                if !(0.0..=3600.0).contains(&seconds) {
                    return Err(format!("[memory_export] debounce_seconds = {seconds} is outside 0..=3600"));
                }
                memory_export.debounce = Duration::from_secs_f64(seconds);
            }
        }
        let mut recall = RecallConfig::default();
        if let Some(raw) = raw.recall {
            if raw.rerank.is_some_and(|n| n > 200) {
                return Err("[recall] rerank must be between 0 (off) and 200 candidates".into());
            }
            recall = RecallConfig {
                model_dir: raw.model_dir,
                onnxruntime: raw.onnxruntime,
                rerank: raw.rerank.unwrap_or(recall.rerank),
            };
        }
        let mut triggers = TriggerBundles::default();
        for (kind, moments) in raw.hooks.map(|h| h.triggers).unwrap_or_default() {
            let kind: Kind = kind.parse().map_err(|e: mnemo_core::ParseEnumError| format!("[hooks.triggers]: {e}"))?;
            triggers = triggers.with_bundle(kind, &moments).map_err(|e| format!("[hooks.triggers] {kind}: {e}"))?;
        }
        let mut review = ReviewPolicy::default();
        if let Some(raw) = raw.review {
            review.agent_proposes = match raw.agent.as_deref() {
                None | Some("live") => false,
                Some("propose") => true,
                Some(other) => {
                    return Err(format!(
                        "[review] agent = \"{other}\" is not a choice: \"propose\" (agents' notes wait for a person) or \"live\" (the default)"
                    ));
                }
            };
            for kind in raw.kinds {
                let kind: Kind =
                    kind.parse().map_err(|e: mnemo_core::ParseEnumError| format!("[review] kinds: {e}"))?;
                review.kinds.push(kind);
            }
        }
        let mut load_limit = LoadLimit::default();
        if let Some(raw) = raw.load_budget {
            if raw.lines == Some(0) || raw.bytes == Some(0) {
                return Err("[load_budget] lines and bytes must be at least 1".into());
            }
            load_limit = LoadLimit {
                harness: raw.harness.filter(|h| !h.trim().is_empty()).unwrap_or_else(|| "the agent's harness".into()),
                lines: raw.lines.unwrap_or(usize::MAX),
                bytes: raw.bytes.unwrap_or(usize::MAX),
            };
        }
        Ok(WorkspaceConfig { expiry, memory_export, recall, triggers, review, load_limit })
    }

    /// Turn the mirror on or off in `root`'s config file, keeping every other
    /// setting and comment as it was. `path` replaces the configured path when given.
    pub fn set_memory_export(root: &Path, enabled: bool, path: Option<&str>) -> Result<(), ConfigError> {
        let file = root.join(CONFIG_PATH);
        let error = |message: String| ConfigError { path: file.clone(), message };
        let text = match crate::repo_file::read_text(&file) {
            Ok(text) => text,
            Err(e) if e.is_not_found() => String::new(),
            Err(e) => return Err(error(e.to_string())),
        };
        let mut doc: toml_edit::DocumentMut =
            text.parse().map_err(|e: toml_edit::TomlError| error(e.message().to_string()))?;
        let table = doc
            .entry("memory_export")
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_mut()
            .ok_or_else(|| error("memory_export is not a table".into()))?;
        table["enabled"] = toml_edit::value(enabled);
        if let Some(path) = path {
            table["path"] = toml_edit::value(path);
        }
        if !table.contains_key("path") {
            table["path"] = toml_edit::value(DEFAULT_MIRROR_PATH);
        }
        if !table.contains_key("debounce_seconds") {
            table["debounce_seconds"] = toml_edit::value(3.0);
        }
        let new_text = doc.to_string();
        WorkspaceConfig::parse(&new_text).map_err(error)?;
        std::fs::create_dir_all(root.join(".mnemo")).map_err(|e| error(e.to_string()))?;
        std::fs::write(&file, new_text).map_err(|e| error(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_overrides_and_errors() {
        let config = WorkspaceConfig::parse("[expiry]\ntask = 0\nfinding = 7\n[lsp]\nanything = 'x'\n").unwrap();
        assert_eq!(config.expiry.days(Kind::Task), None);
        assert_eq!(config.expiry.days(Kind::Finding), Some(7));
        assert!(WorkspaceConfig::parse("[expiry]\ntasks = 3").unwrap_err().contains("unknown kind 'tasks'"));
        assert!(WorkspaceConfig::parse("[expiry]\ndirective = 3").unwrap_err().contains("directives never expire"));
        assert!(WorkspaceConfig::parse("[expiry]\ntask = -1").is_err());
        assert!(WorkspaceConfig::parse("[expiry").is_err());
    }

    #[test]
    fn rerank_depth() {
        assert_eq!(WorkspaceConfig::parse("").unwrap().recall.rerank, crate::recall::DEFAULT_RERANK);
        assert_eq!(WorkspaceConfig::parse("[recall]\nrerank = 0").unwrap().recall.rerank, 0);
        let review = WorkspaceConfig::parse("[review]\nagent = 'propose'\nkinds = ['directive']").unwrap().review;
        assert_eq!(review, ReviewPolicy { agent_proposes: true, kinds: vec![Kind::Directive] });
        assert!(WorkspaceConfig::parse("[review]\nagent = 'yes'").unwrap_err().contains("\"propose\""));
        let limit = WorkspaceConfig::parse("[load_budget]\nharness = 'Codex'\nbytes = 32768").unwrap().load_limit;
        assert_eq!((limit.harness.as_str(), limit.lines, limit.bytes), ("Codex", usize::MAX, 32768));
        assert!(WorkspaceConfig::parse("[load_budget]\nlines = 0").is_err());
        assert!(WorkspaceConfig::parse("[review]\nkinds = ['gotchas']").unwrap_err().contains("[review] kinds"));
        assert!(WorkspaceConfig::parse("[review]\nagents = 'propose'").unwrap_err().contains("unknown field `agents`"));
        assert!(WorkspaceConfig::parse("[recall]\nrerank = 500").unwrap_err().contains("between 0 (off) and 200"));
        assert!(WorkspaceConfig::parse("[recall]\nrerank = -1").is_err());
    }

    #[test]
    fn trigger_bundles() {
        use mnemo_core::triggers::Moment;
        let config = WorkspaceConfig::parse("[hooks.triggers]\nfinding = ['pre-edit', 'user-prompt']\n").unwrap();
        assert!(config.triggers.delivers(Kind::Finding, Moment::PreEdit));
        assert!(config.triggers.delivers(Kind::Gotcha, Moment::PreEdit), "other kinds keep the ladder");
        let err = WorkspaceConfig::parse("[hooks.triggers]\nfindings = []").unwrap_err();
        assert!(err.contains("[hooks.triggers]: unknown kind 'findings'"), "{err}");
        let err = WorkspaceConfig::parse("[hooks.triggers]\ngotcha = ['on-edit']").unwrap_err();
        assert!(err.contains("[hooks.triggers] gotcha: unknown hook moment 'on-edit'"), "{err}");
        let err = WorkspaceConfig::parse("[hooks.triggers]\ndirective = []").unwrap_err();
        assert!(err.contains("directives are always delivered"), "{err}");
        assert!(WorkspaceConfig::parse("[hooks]\ntrigger = {}").unwrap_err().contains("unknown field `trigger`"));
    }

    #[test]
    fn memory_export_settings() {
        let config = WorkspaceConfig::parse(
            "[memory_export]\nenabled = true\npath = 'docs/MEMORY.md'\ndebounce_seconds = 0.25\n",
        )
        .unwrap();
        assert_eq!(
            config.memory_export,
            MemoryExport { enabled: true, path: "docs/MEMORY.md".into(), debounce: Duration::from_millis(250) }
        );
        assert_eq!(WorkspaceConfig::parse("").unwrap().memory_export, MemoryExport::default());
        assert!(
            WorkspaceConfig::parse("[memory_export]\nenable = true").unwrap_err().contains("unknown field `enable`")
        );
        assert!(WorkspaceConfig::parse("[memory_export]\ndebounce_seconds = -1.0").unwrap_err().contains("outside"));
    }

    #[test]
    fn enabling_the_export_keeps_other_settings_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".mnemo")).unwrap();
        std::fs::write(dir.path().join(CONFIG_PATH), "# my settings\n[expiry]\ntask = 10 # short\n").unwrap();
        WorkspaceConfig::set_memory_export(dir.path(), true, None).unwrap();
        let text = std::fs::read_to_string(dir.path().join(CONFIG_PATH)).unwrap();
        assert!(text.starts_with("# my settings\n[expiry]\ntask = 10 # short\n"), "{text}");
        let config = WorkspaceConfig::load(Some(dir.path())).unwrap();
        assert!(config.memory_export.enabled);
        assert_eq!(config.expiry.days(Kind::Task), Some(10));
        WorkspaceConfig::set_memory_export(dir.path(), false, Some("notes/M.md")).unwrap();
        let config = WorkspaceConfig::load(Some(dir.path())).unwrap();
        assert_eq!((config.memory_export.enabled, config.memory_export.path.as_str()), (false, "notes/M.md"));
    }

    #[test]
    fn recall_paths_must_lie_outside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".mnemo")).unwrap();
        std::fs::write(
            dir.path().join(CONFIG_PATH),
            "[recall]\nmodel_dir = '/opt/minilm'\nonnxruntime = '/opt/ort.so'\n",
        )
        .unwrap();
        let config = WorkspaceConfig::load(Some(dir.path())).unwrap();
        assert_eq!(config.recall.model_dir, Some(PathBuf::from("/opt/minilm")));
        assert_eq!(config.recall.onnxruntime, Some(PathBuf::from("/opt/ort.so")));
        let absolute_inside = format!("model_dir = '{}/x'", dir.path().display());
        for inside in ["model_dir = 'vendor/m'", "onnxruntime = 'lib/libonnxruntime.so'", absolute_inside.as_str()] {
            std::fs::write(dir.path().join(CONFIG_PATH), format!("[recall]\n{inside}\n")).unwrap();
            let err = WorkspaceConfig::load(Some(dir.path())).unwrap_err().to_string();
            assert!(err.contains("points inside the workspace; a repository must not choose native code"), "{err}");
        }
        assert!(WorkspaceConfig::parse("[recall]\nmodel = 'x'").unwrap_err().contains("unknown field `model`"));
    }

    #[test]
    fn missing_file_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(WorkspaceConfig::load(Some(dir.path())).unwrap(), WorkspaceConfig::default());
        assert_eq!(WorkspaceConfig::load(None).unwrap(), WorkspaceConfig::default());
    }
}
