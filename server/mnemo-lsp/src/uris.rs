//! Document URIs, in one place. Editors spell the same `memory:` document
//! differently — VS Code sends `memory:/ws/MEMORY.md`, Neovim names its
//! buffer `memory:///ws/MEMORY.md`, and either may percent-encode the path
//! its own way — so every `memory:` URI that enters the server is turned
//! into one canonical form before it is used as a key: `memory:///` + the
//! path, percent-encoded only where a URI path must be. Other schemes pass
//! through unchanged. Only a `file:` URI is ever a file on disk.

use std::path::PathBuf;

use mnemo_core::memory_md::percent_decode;
use tower_lsp_server::ls_types::Uri;

/// The scheme of the editable checkout documents.
pub const MEMORY_SCHEME: &str = "memory";

/// Whether `uri` names a `memory:` document.
pub fn is_memory(uri: &str) -> bool {
    uri.len() > MEMORY_SCHEME.len()
        && uri[..MEMORY_SCHEME.len()].eq_ignore_ascii_case(MEMORY_SCHEME)
        && uri.as_bytes()[MEMORY_SCHEME.len()] == b':'
}

/// The canonical spelling of a URI string (see the module header).
pub fn canonical_str(uri: &str) -> String {
    if !is_memory(uri) {
        return uri.to_string();
    }
    let rest = &uri[MEMORY_SCHEME.len() + 1..];
    // `memory:/p`, `memory:///p` and `memory://host/p` all mean the path `/…`.
    let path = rest.trim_start_matches('/');
    let path = path.split(['?', '#']).next().unwrap_or(path);
    format!("{MEMORY_SCHEME}:///{}", encode_path(&percent_decode(path)))
}

/// The canonical form of `uri` (unchanged when the canonical string would not parse).
pub fn canonical(uri: &Uri) -> Uri {
    if !is_memory(uri.as_str()) {
        return uri.clone();
    }
    canonical_str(uri.as_str()).parse().unwrap_or_else(|_| uri.clone())
}

/// The `memory:` document of a workspace path.
pub fn memory_uri(workspace: &str) -> String {
    canonical_str(&format!("{MEMORY_SCHEME}:///{}/MEMORY.md", workspace.trim_start_matches('/')))
}

/// The file a URI names: only for the `file:` scheme.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    uri.to_file_path().map(|p| p.into_owned())
}

fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&byte);
        if keep {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_memory_document_is_one_key() {
        let canonical = "memory:///tmp/my%20project/MEMORY.md";
        for spelling in [
            "memory:/tmp/my%20project/MEMORY.md",
            "memory:///tmp/my%20project/MEMORY.md",
            "memory:///tmp/my project/MEMORY.md",
            "memory://tmp/my%20project/MEMORY.md",
            "MEMORY:/tmp/my%20project/MEMORY.md",
        ] {
            assert_eq!(canonical_str(spelling), canonical, "{spelling}");
        }
        assert_eq!(memory_uri("/tmp/my project"), canonical);
        assert_eq!(canonical_str("file:///tmp/a%20b.rs"), "file:///tmp/a%20b.rs", "other schemes pass through");
        let parsed: Uri = "memory:/w/MEMORY.md".parse().unwrap();
        assert_eq!(super::canonical(&parsed).as_str(), "memory:///w/MEMORY.md");
    }

    #[test]
    fn only_a_file_uri_is_a_file() {
        let memory: Uri = "memory:///w/MEMORY.md".parse().unwrap();
        assert_eq!(file_path(&memory), None);
        let file: Uri = "file:///w/MEMORY.md".parse().unwrap();
        assert_eq!(file_path(&file), Some(PathBuf::from("/w/MEMORY.md")));
    }
}
