//! The custom methods (mirrored by the editor clients): `memory/checkout`
//! returns an editable checkout of the workspace as the text of the virtual
//! document `memory:///<workspace>/MEMORY.md`, recorded as a check-in base;
//! `memory/checkin` checks an edited checkout in and returns the new text;
//! `memory/mirror` says where the workspace's read-only mirror is.

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::Diagnostic;

#[derive(Debug, Deserialize)]
pub struct CheckoutParams {
    /// A workspace directory; the server's workspace when absent.
    pub workspace: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct CheckoutResult {
    pub text: String,
    pub epoch: i64,
    pub uri: String,
}

/// The virtual document's URI for a workspace path.
pub fn checkout_uri(workspace: &str) -> String {
    crate::uris::memory_uri(workspace)
}

#[derive(Debug, Default, Deserialize)]
pub struct MirrorParams {
    /// A workspace directory; the server's workspace when absent.
    pub workspace: Option<String>,
}

/// `memory/mirror`: where the workspace's read-only mirror is (or would be).
#[derive(Debug, Serialize)]
pub struct MirrorResult {
    /// The mirror file as configured (`[memory_export] path`), absolute;
    /// `None` for a workspace without a directory or a path outside it.
    pub path: Option<String>,
    /// Whether writes keep it current (`[memory_export] enabled`).
    pub enabled: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckinParams {
    /// The checkout document (`memory:///…/MEMORY.md`, or a file holding a checkout).
    pub uri: String,
    /// The text to check in; the open document's text when absent.
    pub text: Option<String>,
    /// Conflicts resolved by applying the person's edit on the store's version.
    #[serde(default)]
    pub keep_mine: Vec<i64>,
    /// Conflicts resolved by dropping the person's edit.
    #[serde(default)]
    pub take_theirs: Vec<i64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckinResult {
    /// What was applied, one line per event group ("revoked #12 (reason)").
    pub applied: Vec<String>,
    /// The document re-rendered at the new epoch, with what was not applied
    /// carried over as typed; `None` when the header was unreadable (the
    /// buffer must then be left as it is).
    pub text: Option<String>,
    pub epoch: Option<i64>,
    /// What is left, on the lines of `text` (or of the sent text when `text` is `None`).
    pub diagnostics: Vec<Diagnostic>,
    pub conflicts: Vec<ConflictInfo>,
    /// How many entries (or stray lines) of the sent text were not applied
    /// and are carried into `text` as typed: while it is not 0 the document
    /// holds text the store does not, and must not be replaced by a refresh.
    pub unapplied: usize,
}

/// A conflict, with both versions as one line each.
#[derive(Debug, Serialize)]
pub struct ConflictInfo {
    pub id: i64,
    /// 0-based line in the result's text.
    pub line: usize,
    /// `None` when the person deleted the entry.
    pub mine: Option<String>,
    /// `None` when the note was forgotten.
    pub theirs: Option<String>,
}
