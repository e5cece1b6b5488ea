//! Server settings, from `initializationOptions` and
//! `workspace/didChangeConfiguration`: `storePath`, `modelDir`,
//! `debounceMs`. Either bare or under a `mnemo` key (as editors send their
//! configuration sections). Unknown keys are ignored; a wrong type is an
//! error that names the key.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// The settings a client may send; `None` leaves the current value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The store file (default: what `mnemo lsp` was started with).
    pub store_path: Option<PathBuf>,
    /// The model directory (default: `MNEMO_MODEL_DIR`, the workspace config, the installed model).
    pub model_dir: Option<PathBuf>,
    /// How long typing in a checkout pauses before its check-in preview runs.
    pub debounce_ms: Option<u64>,
}

/// The names, for documentation and for the editor clients' tests.
pub const SETTING_NAMES: [&str; 3] = ["storePath", "modelDir", "debounceMs"];

/// Whether `value` is of the type setting `key` takes (unknown keys fit: they are ignored).
fn fits(key: &str, value: &Value) -> bool {
    serde_json::from_value::<Settings>(serde_json::json!({ key: value })).is_ok()
}

impl Settings {
    pub fn from_value(value: Option<&Value>) -> Result<Settings, String> {
        // Nothing set: absent, null, or an empty table that a Lua client encodes as `[]`.
        let unset = |v: &&Value| v.is_null() || v.as_array().is_some_and(Vec::is_empty);
        let Some(value) = value.filter(|v| !unset(v)) else { return Ok(Settings::default()) };
        let section = value.get("mnemo").unwrap_or(value);
        if unset(&section) {
            return Ok(Settings::default());
        }
        let mut settings: Settings = serde_json::from_value(section.clone()).map_err(|e| {
            // serde names the expected type, not the key: find the key whose value does not fit.
            let wrong = SETTING_NAMES.iter().find(|name| section.get(**name).is_some_and(|value| !fits(name, value)));
            match wrong {
                Some(name) => format!("mnemo settings: \"{name}\" {e}; the others still apply"),
                None => format!("mnemo settings: {e}"),
            }
        })?;
        // Editors send unset string settings as "": that means the default, not an empty path.
        settings.store_path = settings.store_path.filter(|p| !p.as_os_str().is_empty());
        settings.model_dir = settings.model_dir.filter(|p| !p.as_os_str().is_empty());
        Ok(settings)
    }

    /// Like [`Settings::from_value`], but a key of the wrong type is left out
    /// and reported while the others apply.
    pub fn lenient(value: Option<&Value>) -> (Settings, Option<String>) {
        match Settings::from_value(value) {
            Ok(settings) => (settings, None),
            Err(problem) => {
                let section = value.map(|v| v.get("mnemo").unwrap_or(v));
                let fitting: serde_json::Map<String, Value> = section
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter(|(key, value)| fits(key, value))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect();
                let settings = Settings::from_value(Some(&Value::Object(fitting))).unwrap_or_default();
                (settings, Some(problem))
            }
        }
    }

    pub fn debounce(&self) -> Option<Duration> {
        self.debounce_ms.map(|ms| Duration::from_millis(ms.min(10_000)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_come_bare_or_under_mnemo_and_a_wrong_type_names_the_key() {
        let bare = Settings::from_value(Some(&json!({ "storePath": "/s.db", "debounceMs": 40 }))).unwrap();
        assert_eq!(bare.store_path, Some(PathBuf::from("/s.db")));
        assert_eq!(bare.debounce(), Some(Duration::from_millis(40)));
        let nested = Settings::from_value(Some(&json!({ "mnemo": { "modelDir": "/m" }, "other": 1 }))).unwrap();
        assert_eq!(nested.model_dir, Some(PathBuf::from("/m")));
        assert_eq!(Settings::from_value(None).unwrap(), Settings::default());
        assert_eq!(Settings::from_value(Some(&json!([]))).unwrap(), Settings::default(), "Lua's empty table");
        assert_eq!(Settings::from_value(Some(&json!({ "mnemo": [] }))).unwrap(), Settings::default());
        let unset = Settings::from_value(Some(
            &json!({ "mnemo": { "storePath": "", "modelDir": "", "server": { "path": "" } } }),
        ));
        assert_eq!(unset.unwrap(), Settings::default(), "empty strings are unset; other keys are ignored");
        let wrong = Settings::from_value(Some(&json!({ "debounceMs": "soon" }))).unwrap_err();
        assert!(wrong.contains("\"debounceMs\" invalid type"), "{wrong}");
        let (kept, problem) = Settings::lenient(Some(&json!({ "debounceMs": "soon", "storePath": "/s.db" })));
        assert_eq!((kept.store_path, kept.debounce_ms), (Some(PathBuf::from("/s.db")), None));
        assert!(problem.is_some_and(|p| p.contains("debounceMs")));
    }
}
