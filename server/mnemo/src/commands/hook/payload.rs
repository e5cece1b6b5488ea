//! What a harness hands a hook on stdin. Claude Code and Codex send one JSON
//! object (`session_id`, `cwd`, `hook_event_name`, `prompt`, `tool_name`,
//! `tool_input`); other harnesses send plain text (the prompt, or the paths
//! about to be edited, one per line). Only input that is not JSON is taken
//! as plain text: a JSON payload without a path names no file.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// A hook's input, parsed once.
pub struct Payload {
    json: Option<Value>,
    text: String,
}

impl Payload {
    pub fn parse(input: String) -> Payload {
        let json = serde_json::from_str::<Value>(&input).ok().filter(Value::is_object);
        Payload { json, text: input }
    }

    /// Whether the harness speaks JSON (and so wants JSON back).
    pub fn event_name(&self) -> Option<&str> {
        self.string("hook_event_name")
    }

    /// Why a session (re)started: `startup`, `resume`, `clear`, `compact`.
    pub fn source(&self) -> Option<&str> {
        self.string("source")
    }

    /// The tool about to run (`Edit`, `apply_patch`, …), for a tool-call hook.
    pub fn tool_name(&self) -> Option<&str> {
        self.string("tool_name")
    }

    pub fn session_id(&self) -> Option<&str> {
        self.string("session_id")
    }

    /// The user's prompt: `prompt` of a JSON payload, else the whole text.
    pub fn prompt(&self) -> String {
        match &self.json {
            Some(_) => self.string("prompt").unwrap_or_default().to_string(),
            None => self.text.trim().to_string(),
        }
    }

    /// The files the tool call is about to change, as given (absolute, or
    /// relative to the payload's `cwd`): `tool_input.file_path` (Edit,
    /// Write), `tool_input.notebook_path` (NotebookEdit), or the `*** Add
    /// File:` / `*** Update File:` / `*** Delete File:` / `*** Move to:`
    /// lines of an apply_patch patch anywhere in `tool_input`. Plain text:
    /// a patch's file lines, else one path per line.
    pub fn edited_paths(&self) -> Vec<String> {
        let mut paths = Vec::new();
        match &self.json {
            Some(json) => {
                let input = json.get("tool_input").unwrap_or(&Value::Null);
                for key in ["file_path", "notebook_path"] {
                    if let Some(path) = input.get(key).and_then(Value::as_str) {
                        paths.push(path.to_string());
                    }
                }
                if paths.is_empty() {
                    each_string(input, &mut |text| paths.extend(patch_paths(text)));
                }
            }
            None => {
                paths = patch_paths(&self.text);
                if paths.is_empty() {
                    paths = self.text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        paths.retain(|p| seen.insert(p.clone()));
        paths
    }

    /// The directory relative paths are relative to: the payload's `cwd`, else `fallback`.
    pub fn cwd(&self, fallback: &Path) -> PathBuf {
        self.string("cwd").map(PathBuf::from).filter(|p| p.is_absolute()).unwrap_or_else(|| fallback.to_path_buf())
    }

    fn string(&self, name: &str) -> Option<&str> {
        self.json.as_ref()?.get(name)?.as_str()
    }
}

/// Call `visit` with every string inside `value` (a patch may come as
/// `input`, `patch` or one element of a `command` list, by harness).
fn each_string(value: &Value, visit: &mut impl FnMut(&str)) {
    match value {
        Value::String(text) => visit(text),
        Value::Array(items) => items.iter().for_each(|v| each_string(v, visit)),
        Value::Object(map) => map.values().for_each(|v| each_string(v, visit)),
        _ => {}
    }
}

/// The file paths an apply_patch patch touches.
fn patch_paths(patch: &str) -> Vec<String> {
    const MARKERS: [&str; 4] = ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];
    patch
        .lines()
        .filter_map(|line| MARKERS.iter().find_map(|m| line.trim_start().strip_prefix(m)))
        .map(|path| path.trim().to_string())
        .filter(|path| !path.is_empty())
        .collect()
}

/// `path` (absolute, or relative to `cwd`) relative to the workspace
/// `root`, with `.` and `..` resolved by their names; outside the root, as given.
pub fn workspace_relative(path: &str, cwd: &Path, root: Option<&Path>) -> String {
    let joined = cwd.join(path);
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    match root.and_then(|root| normal.strip_prefix(root).ok()) {
        Some(relative) => relative.to_string_lossy().into_owned(),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(input: &str) -> Vec<String> {
        Payload::parse(input.to_string()).edited_paths()
    }

    #[test]
    fn each_harness_names_its_files_its_own_way() {
        let edit = r#"{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/r/src/db.py","old_string":"a"}}"#;
        assert_eq!(paths(edit), ["/r/src/db.py"]);
        let notebook = r#"{"hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{"notebook_path":"/r/a.ipynb"}}"#;
        assert_eq!(paths(notebook), ["/r/a.ipynb"]);
        let patch = "*** Begin Patch\n*** Update File: src/db.py\n@@\n-a\n+b\n*** Add File: src/new.py\n+x\n*** Update File: src/db.py\n*** End Patch";
        let codex = serde_json::json!({"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":["apply_patch", patch]}});
        assert_eq!(paths(&codex.to_string()), ["src/db.py", "src/new.py"]);
        assert_eq!(paths(patch), ["src/db.py", "src/new.py"], "a patch as plain text");
        assert_eq!(paths("src/a.rs\n\n src/b.rs \n"), ["src/a.rs", "src/b.rs"], "plain text: a path per line");
    }

    #[test]
    fn a_json_payload_without_a_path_names_no_file() {
        let bash = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
        assert!(paths(bash).is_empty());
        assert!(paths(r#"{"hook_event_name":"PreToolUse"}"#).is_empty());
    }

    #[test]
    fn paths_are_made_relative_to_the_workspace() {
        let root = Path::new("/r");
        assert_eq!(workspace_relative("/r/src/db.py", Path::new("/elsewhere"), Some(root)), "src/db.py");
        assert_eq!(workspace_relative("db.py", Path::new("/r/src"), Some(root)), "src/db.py");
        assert_eq!(workspace_relative("../lib/x.rs", Path::new("/r/src"), Some(root)), "lib/x.rs");
        assert_eq!(workspace_relative("/etc/passwd", Path::new("/r"), Some(root)), "/etc/passwd");
    }
}
