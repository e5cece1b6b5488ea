//! Settings files in JSON (Claude Code's `.claude/settings.json`,
//! `.mcp.json`, Codex's `.codex/hooks.json`), and writing any settings file: read without ever overwriting
//! what cannot be parsed, mnemo's hook entries merged in the hooks format
//! both harnesses share, written in one step.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use mnemo_core::triggers::Moment;
use serde_json::{Map, Value, json};

use super::{Invocation, is_mnemo_hook};

/// One hook mnemo installs: the harness's event, its matcher, mnemo's moment.
pub struct HookSpec {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub moment: Moment,
}

/// The JSON object in `path`; an empty object when the file is missing or empty.
pub fn read_object(path: &Path) -> anyhow::Result<Map<String, Value>> {
    let value = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => json!({}),
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!("{} is not valid JSON ({e}); fix it first — mnemo never overwrites it", path.display())
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => anyhow::bail!("{} must hold a JSON object; fix it first — mnemo never overwrites it", path.display()),
    }
}

/// Write `object` to `path` (pretty); see [`write_text`].
pub fn write_object(path: &Path, object: Map<String, Value>) -> anyhow::Result<()> {
    write_text(path, &(serde_json::to_string_pretty(&Value::Object(object))? + "\n"))
}

/// Write a settings file in one step (a reader sees the old or the new
/// text), keeping its mode; creates the directory.
pub fn write_text(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    }
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o644);
    mnemo_store::mirror::write_atomically(path, text.as_bytes(), mode)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// The object under `key`, created when missing.
pub fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    file: &Path,
) -> anyhow::Result<&'a mut Map<String, Value>> {
    map.entry(key)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| anyhow::anyhow!("\"{key}\" in {} is not an object; fix it first", file.display()))
}

/// Merge mnemo's `hooks` into the `hooks` object of `settings`: a hook
/// already there (however it calls mnemo) is updated in place, a missing one
/// added. Returns (added, updated).
pub fn merge_hooks(
    settings: &mut Map<String, Value>,
    hooks: &[HookSpec],
    mnemo: &Invocation,
    file: &Path,
) -> anyhow::Result<(usize, usize)> {
    let by_event = object_at(settings, "hooks", file)?;
    let (mut added, mut updated) = (0, 0);
    for spec in hooks {
        let entries = by_event.entry(spec.event).or_insert_with(|| json!([]));
        let entries = entries
            .as_array_mut()
            .ok_or_else(|| anyhow::anyhow!("hooks.{} in {} is not a list; fix it first", spec.event, file.display()))?;
        let command = mnemo.hook_command(spec.moment);
        let mut wanted = json!({ "hooks": [{ "type": "command", "command": command }] });
        if let Some(matcher) = spec.matcher {
            wanted["matcher"] = json!(matcher);
        }
        let ours = entries.iter_mut().find(|entry| {
            entry["hooks"].as_array().is_some_and(|hooks| {
                hooks.iter().any(|h| h["command"].as_str().is_some_and(|c| is_mnemo_hook(c, spec.moment)))
            })
        });
        match ours {
            Some(entry) if *entry == wanted => {}
            Some(entry) => {
                *entry = wanted;
                updated += 1;
            }
            None => {
                entries.push(wanted);
                added += 1;
            }
        }
    }
    Ok((added, updated))
}
