//! Anchor capture: `PATH:START-END` is resolved inside the workspace, checked
//! against the file, and stored with the sha256 of those lines.
//!
//! **Boundary:** no file outside the workspace root is ever read: `..`,
//! absolute paths elsewhere and symlinks that escape are refused before any
//! read.

use std::path::{Component, Path};

use mnemo_core::Anchor;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnchorError {
    #[error("anchor '{0}' is not PATH:START-END (for example src/lock.rs:10-24)")]
    Syntax(String),
    #[error("anchor '{0}': line numbers start at 1 and START must not exceed END")]
    BadRange(String),
    #[error("anchor '{given}' is outside the workspace {root}; anchors must name files inside it")]
    OutsideWorkspace { given: String, root: String },
    #[error("anchors need a workspace directory, and this workspace ({0}) is only a name; pass --workspace DIR")]
    NoWorkspaceDirectory(String),
    #[error("anchor file '{0}' does not exist in the workspace")]
    Missing(String),
    #[error("anchor '{given}' is past the end of {path}, which has {lines} lines")]
    PastEnd { given: String, path: String, lines: usize },
    #[error("cannot read anchor file '{path}': {reason}")]
    Unreadable { path: String, reason: String },
}

/// A workspace-relative path MEMORY.md can render as a link: no `..`, not
/// absolute, no control characters, no `](`.
pub fn is_plain_relative_path(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && !p.is_absolute()
        && !p.components().any(|c| c == Component::ParentDir)
        && !path.chars().any(char::is_control)
        && !path.contains("](")
}

/// Split `PATH:START-END` (or `PATH:LINE`) into its parts.
pub fn parse_spec(spec: &str) -> Result<(&str, u32, u32), AnchorError> {
    let syntax = || AnchorError::Syntax(spec.to_string());
    let (path, range) = spec.rsplit_once(':').ok_or_else(syntax)?;
    let (start, end) = range.split_once('-').unwrap_or((range, range));
    let start: u32 = start.trim().parse().map_err(|_| syntax())?;
    let end: u32 = end.trim().parse().map_err(|_| syntax())?;
    if path.is_empty() {
        return Err(syntax());
    }
    if start == 0 || end < start {
        return Err(AnchorError::BadRange(spec.to_string()));
    }
    Ok((path, start, end))
}

/// Resolve and hash an anchor given as `PATH:START-END` relative to `root`
/// (the canonical workspace directory).
pub fn capture(root: &Path, spec: &str) -> Result<Anchor, AnchorError> {
    let (given_path, start, end) = parse_spec(spec)?;
    let outside = || AnchorError::OutsideWorkspace { given: spec.to_string(), root: root.display().to_string() };
    if given_path.chars().any(char::is_control) || given_path.contains("](") {
        return Err(AnchorError::Syntax(spec.replace('\0', "\\0")));
    }
    let given = Path::new(given_path);
    if given.components().any(|c| c == Component::ParentDir) {
        return Err(outside());
    }
    let joined = if given.is_absolute() { given.to_path_buf() } else { root.join(given) };
    if !joined.starts_with(root) {
        return Err(outside());
    }
    let canonical = match joined.canonicalize() {
        Ok(path) => path,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(AnchorError::Missing(given_path.to_string()));
        }
        Err(e) => {
            return Err(AnchorError::Unreadable { path: given_path.to_string(), reason: e.to_string() });
        }
    };
    let relative = canonical.strip_prefix(root).map_err(|_| outside())?;
    let relative = relative.to_str().ok_or_else(|| AnchorError::Syntax(spec.to_string()))?.to_string();
    if !canonical.is_file() {
        return Err(AnchorError::Unreadable { path: relative, reason: "not a regular file".into() });
    }
    let content = std::fs::read(&canonical)
        .map_err(|e| AnchorError::Unreadable { path: relative.clone(), reason: e.to_string() })?;
    let lines = line_count(&content);
    let hash = hash_lines(&content, start, end).ok_or_else(|| AnchorError::PastEnd {
        given: spec.to_string(),
        path: relative.clone(),
        lines,
    })?;
    Ok(Anchor { path: relative, start_line: start, end_line: end, content_sha256: Some(hash) })
}

pub(crate) fn lines(content: &[u8]) -> impl Iterator<Item = &[u8]> {
    let content = content.strip_suffix(b"\n").unwrap_or(content);
    content.split(|b| *b == b'\n').filter(move |_| !content.is_empty())
}

/// Number of lines in `content` (a final newline does not start a new line).
pub fn line_count(content: &[u8]) -> usize {
    lines(content).count()
}

/// Hex sha256 of lines `start..=end` (1-based) joined by `\n`; `None` when the
/// range does not fit the content.
pub fn hash_lines(content: &[u8], start: u32, end: u32) -> Option<String> {
    let (start, end) = (start as usize, end as usize);
    if start == 0 || end < start || end > line_count(content) {
        return None;
    }
    let mut hasher = Sha256::new();
    for (i, line) in lines(content).enumerate().skip(start - 1).take(end - start + 1) {
        if i + 1 > start {
            hasher.update(b"\n");
        }
        hasher.update(line);
    }
    Some(crate::hex::hex(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lock.rs"), "one\ntwo\nthree\n").unwrap();
        (dir, root)
    }

    #[test]
    fn captures_relative_path_range_and_hash() {
        let (_dir, root) = workspace();
        let anchor = capture(&root, "src/lock.rs:2-3").unwrap();
        assert_eq!(anchor.path, "src/lock.rs");
        assert_eq!((anchor.start_line, anchor.end_line), (2, 3));
        let expected: String = Sha256::digest(b"two\nthree").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(anchor.content_sha256, Some(expected));
        let absolute = format!("{}:1", root.join("src/lock.rs").display());
        assert_eq!(capture(&root, &absolute).unwrap().path, "src/lock.rs");
    }

    #[test]
    fn refuses_escapes_missing_files_and_bad_ranges() {
        let (_dir, root) = workspace();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("escape.rs")).unwrap();
        let cases = [
            ("../etc/passwd:1-2", "outside the workspace"),
            ("/etc/passwd:1-2", "outside the workspace"),
            ("escape.rs:1", "outside the workspace"),
            ("src/nope.rs:1-2", "does not exist"),
            ("src/lock.rs:2-4", "past the end of src/lock.rs, which has 3 lines"),
            ("src/lock.rs:0-1", "line numbers start at 1"),
            ("src/lock.rs:3-2", "line numbers start at 1"),
            ("src/lock.rs", "is not PATH:START-END"),
            ("src/lock.rs:a-b", "is not PATH:START-END"),
            ("src\0x:1", "is not PATH:START-END"),
            ("src/a\nb.rs:1", "is not PATH:START-END"),
            ("src/a](b.rs:1", "is not PATH:START-END"),
            ("src:1", "not a regular file"),
        ];
        for (spec, expected) in cases {
            let err = capture(&root, spec).unwrap_err().to_string();
            assert!(err.contains(expected), "{spec}: {err}");
        }
    }

    #[test]
    fn hash_depends_on_exactly_the_range() {
        let content = b"a\nb\nc";
        assert_eq!(line_count(content), 3);
        assert_eq!(line_count(b""), 0);
        assert_ne!(hash_lines(content, 1, 2), hash_lines(content, 2, 3));
        assert_eq!(hash_lines(b"x\na\nb\n", 2, 3), hash_lines(b"a\nb\nzzz", 1, 2));
        assert_eq!(hash_lines(content, 3, 4), None);
    }
}
