//! Check-in from the editor, one implementation (`Store::checkin`) behind
//! every way in: the `memory/checkin` request, the "Keep mine" / "Take
//! theirs" commands on a conflict, `mnemo.checkin`, and didSave of a
//! checkout kept in a file. The new text goes back to the editor: in the
//! result, by `memory/didChange` for a `memory:` document, or by rewriting
//! the file.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use mnemo_core::checkin::Resolutions;
use mnemo_core::memory_md::parse_checkout;
use mnemo_store::checkout::CheckinOutcome;
use mnemo_store::mirror::write_atomically;
use mnemo_store::workspace::Workspace;
use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{DidSaveTextDocumentParams, MessageType, Uri};

use crate::diagnostics::checkout_problem;
use crate::documents::DocumentKind;
use crate::ext::{CheckinParams, CheckinResult, ConflictInfo};
use crate::refresh::{HandedOut, MemoryDidChange, MemoryDidChangeParams};
use crate::server::{Backend, internal, invalid, refresh_mirror};
use crate::to_proto::Lines;
use crate::uris;

/// Whether two paths name the same file (the same path, or the same inode).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    a == b
        || match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
}

impl Backend {
    /// `memory/checkin`.
    pub(crate) async fn checkin(&self, params: CheckinParams) -> Result<CheckinResult> {
        let text = match params.text {
            Some(text) => text,
            None => {
                let uri: Uri = params.uri.parse().map_err(|_| invalid(format!("'{}' is not a URI", params.uri)))?;
                let doc = self
                    .document(&uri)
                    .await
                    .ok_or_else(|| invalid(format!("{} is not open; send its text in \"text\"", params.uri)))?;
                doc.whole_text()
            }
        };
        let resolutions = Resolutions {
            keep_mine: params.keep_mine.into_iter().collect(),
            take_theirs: params.take_theirs.into_iter().collect(),
        };
        if let Some(id) = resolutions.keep_mine.intersection(&resolutions.take_theirs).next() {
            return Err(invalid(format!("#{id} is both keepMine and takeTheirs; choose one")));
        }
        let outcome = self.check_in(text.clone(), resolutions).await?;
        if let Some(document) = &outcome.document {
            let handed =
                HandedOut { epoch: document.epoch, text: document.text.clone(), pristine: document.unapplied == 0 };
            self.checkouts.lock().unwrap_or_else(|e| e.into_inner()).insert(uris::canonical_str(&params.uri), handed);
        }
        Ok(result_of(outcome, &text))
    }

    async fn check_in(&self, text: String, resolutions: Resolutions) -> Result<CheckinOutcome> {
        let workspace = self.workspace();
        let _writer = self.writer.lock().await;
        let now = self.now();
        let (outcome, problem) = self
            .with_store(move |store| {
                let outcome = store.checkin(&workspace, &text, &resolutions, now)?;
                let problem = if outcome.applied.is_empty() { None } else { refresh_mirror(store, &workspace) };
                Ok((outcome, problem))
            })
            .await?;
        if let Some(problem) = problem {
            self.client.show_message(MessageType::WARNING, problem).await;
        }
        Ok(outcome)
    }

    /// Keep mine / take theirs on a conflict of an open checkout.
    pub(crate) async fn resolve(&self, uri: String, id: i64, keep_mine: bool) -> Result<Value> {
        let (keep_mine, take_theirs) = if keep_mine { (vec![id], vec![]) } else { (vec![], vec![id]) };
        self.check_in_and_send(CheckinParams { uri, text: None, keep_mine, take_theirs }).await
    }

    /// `mnemo.checkin`: what saving does, for an open checkout.
    pub(crate) async fn check_in_open(&self, uri: String) -> Result<Value> {
        self.check_in_and_send(CheckinParams { uri, ..CheckinParams::default() }).await
    }

    /// Check in, then hand the new text to the editor's buffer.
    async fn check_in_and_send(&self, params: CheckinParams) -> Result<Value> {
        let uri = params.uri.clone();
        let result = self.checkin(params).await?;
        if let (Some(text), Some(epoch)) = (&result.text, result.epoch) {
            if uris::is_memory(&uri) {
                let params = MemoryDidChangeParams { uri: uris::canonical_str(&uri), text: text.clone(), epoch };
                self.client.send_notification::<MemoryDidChange>(params).await;
            } else if let Some(path) = uri.parse::<Uri>().ok().as_ref().and_then(uris::file_path) {
                self.rewrite_checkout_file(&path, text).await.map_err(internal)?;
            }
        }
        serde_json::to_value(result).map_err(internal)
    }

    /// Rewrite a checkout kept in a file with its new text, keeping the
    /// file's mode, on a blocking thread (it reads the config and the file).
    /// Never the mirror: only the mirror writer writes that.
    async fn rewrite_checkout_file(&self, path: &Path, text: &str) -> std::result::Result<(), String> {
        let (workspace, path, text) = (self.workspace(), path.to_path_buf(), text.to_string());
        tokio::task::spawn_blocking(move || rewrite_checkout_file(&workspace, &path, &text))
            .await
            .map_err(|e| e.to_string())?
    }

    /// didSave of a checkout kept in a file: check it in and rewrite the file
    /// (`memory:` documents are checked in by their client through `memory/checkin`).
    pub(crate) async fn checkin_saved_file(&self, params: DidSaveTextDocumentParams) {
        let uri = params.text_document.uri;
        // Only a file is checked in here: a `memory:` document's client checks
        // it in through `memory/checkin`, once (a second check-in from didSave
        // would be a double, and its "file" is no file).
        let Some(path) = uris::file_path(&uri) else { return };
        let Some(doc) = self.document(&uri).await else { return };
        let text = params.text.unwrap_or_else(|| doc.whole_text());
        // A saved file without the checkout's line 1 is no checkout (docs/format.md).
        if doc.kind != DocumentKind::Checkout || !mnemo_core::memory_md::is_checkout_text(&text) {
            return;
        }
        match self.check_in(text.clone(), Resolutions::default()).await {
            Ok(outcome) => {
                let applied: Vec<String> =
                    outcome.plan.changes.iter().zip(&outcome.applied).map(|(c, id)| c.describe(*id)).collect();
                if !applied.is_empty() {
                    self.client.show_message(MessageType::INFO, format!("mnemo: {}", applied.join("; "))).await;
                }
                let Some(document) = outcome.document else { return };
                if document.text != text
                    && let Err(e) = self.rewrite_checkout_file(&path, &document.text).await
                {
                    let message = format!("checked in, but {} could not be rewritten: {e}", path.display());
                    self.client.show_message(MessageType::WARNING, message).await;
                }
            }
            Err(e) => {
                let message = format!("mnemo: nothing was checked in: {}; your text is unchanged", e.message);
                self.client.show_message(MessageType::ERROR, message).await;
            }
        }
    }
}

/// The result of a check-in, with what is left on the lines of the new text
/// (the new text moved into it, not copied: a 100k-note checkout is 20 MB).
fn result_of(outcome: CheckinOutcome, sent: &str) -> CheckinResult {
    let applied = outcome.plan.changes.iter().zip(&outcome.applied).map(|(c, id)| c.describe(*id)).collect();
    let conflict_info = |c: &mnemo_core::checkin::Conflict| {
        let (mine, theirs) = c.sides();
        ConflictInfo {
            id: c.id,
            line: c.line,
            mine: c.mine.as_ref().map(|_| mine),
            theirs: c.theirs.as_ref().map(|_| theirs),
        }
    };
    // Lines are indexed only when there is a problem to place on them.
    let placed = |text: &str, problems: &[mnemo_core::memory_md::Diagnostic], conflicts| match problems.is_empty() {
        true => Vec::new(),
        false => {
            let lines = Lines::new(text);
            problems.iter().map(|d| checkout_problem(&lines, d, conflicts)).collect()
        }
    };
    match outcome.document {
        Some(document) => CheckinResult {
            applied,
            diagnostics: placed(&document.text, &document.diagnostics, &document.conflicts),
            conflicts: document.conflicts.iter().map(conflict_info).collect(),
            text: Some(document.text),
            epoch: Some(document.epoch),
            unapplied: document.unapplied,
        },
        None => {
            let (left, conflicts) = outcome.left();
            let diagnostics = placed(sent, &left, conflicts);
            // The header could not be read: nothing was applied, the sent text stays as it is.
            let unapplied = parse_checkout(sent).entries.len().max(1);
            CheckinResult {
                applied,
                text: None,
                epoch: None,
                diagnostics,
                conflicts: conflicts.iter().map(conflict_info).collect(),
                unapplied,
            }
        }
    }
}

/// Rewrite the checkout file at `path` with `text`, keeping its mode; refuse
/// the workspace's mirror (by its configured path or its header).
fn rewrite_checkout_file(workspace: &Workspace, path: &Path, text: &str) -> std::result::Result<(), String> {
    let mirror = mnemo_store::mirror::location(workspace).ok().flatten().map(|l| l.path);
    let is_mirror_path = mirror.is_some_and(|m| same_file(&m, path));
    let holds_mirror = mnemo_store::repo_file::starts_with(path, mnemo_core::memory_md::MIRROR_MARK.as_bytes());
    if is_mirror_path || holds_mirror {
        return Err(format!("{} is the read-only mirror; mnemo never rewrites it from an editor", path.display()));
    }
    let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    write_atomically(path, text.as_bytes(), mode).map(|_| ()).map_err(|e| e.to_string())
}
