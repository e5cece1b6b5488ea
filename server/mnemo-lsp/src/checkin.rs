//! Check-in from the editor, one implementation (`Store::checkin`) behind
//! every way in: the `memory/checkin` request, the "Keep mine" / "Take
//! theirs" commands on a conflict, `mnemo.checkin`, and didSave of a
//! checkout kept in a file. The new text goes back to the editor: in the
//! result, by `memory/didChange` for a `memory:` document, or by rewriting
//! the file.

use mnemo_core::checkin::Resolutions;
use mnemo_store::checkout::CheckinOutcome;
use mnemo_store::mirror::write_atomically;
use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{DidSaveTextDocumentParams, MessageType, Uri};

use crate::diagnostics::checkout_problem;
use crate::documents::DocumentKind;
use crate::ext::{CheckinParams, CheckinResult, ConflictInfo};
use crate::refresh::{MemoryDidChange, MemoryDidChangeParams};
use crate::server::{Backend, internal, invalid, refresh_mirror};
use crate::to_proto::Lines;

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
                doc.text.to_string()
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
            self.checkouts
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(params.uri, (document.epoch, document.text.clone()));
        }
        Ok(result_of(&outcome, &text))
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
            if uri.starts_with("memory:") {
                let params = MemoryDidChangeParams { uri: uri.clone(), text: text.clone(), epoch };
                self.client.send_notification::<MemoryDidChange>(params).await;
            } else if let Some(path) = uri.parse::<Uri>().ok().and_then(|u| u.to_file_path().map(|p| p.into_owned())) {
                write_atomically(&path, text.as_bytes(), 0o644).map_err(internal)?;
            }
        }
        serde_json::to_value(result).map_err(internal)
    }

    /// didSave of a checkout kept in a file: check it in and rewrite the file
    /// (`memory:` documents are checked in by their client through `memory/checkin`).
    pub(crate) async fn checkin_saved_file(&self, params: DidSaveTextDocumentParams) {
        let uri = params.text_document.uri;
        let Some(path) = uri.to_file_path().map(|p| p.into_owned()) else { return };
        let Some(doc) = self.document(&uri).await else { return };
        if doc.kind != DocumentKind::Checkout {
            return;
        }
        let text = params.text.unwrap_or_else(|| doc.text.to_string());
        match self.check_in(text.clone(), Resolutions::default()).await {
            Ok(outcome) => {
                let applied: Vec<String> =
                    outcome.plan.changes.iter().zip(&outcome.applied).map(|(c, id)| c.describe(*id)).collect();
                if !applied.is_empty() {
                    self.client.show_message(MessageType::INFO, format!("mnemo: {}", applied.join("; "))).await;
                }
                let Some(document) = outcome.document else { return };
                if document.text != text
                    && let Err(e) = write_atomically(&path, document.text.as_bytes(), 0o644)
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

/// The result of a check-in, with what is left on the lines of the new text.
fn result_of(outcome: &CheckinOutcome, sent: &str) -> CheckinResult {
    let applied = outcome.plan.changes.iter().zip(&outcome.applied).map(|(c, id)| c.describe(*id)).collect();
    let conflict_info = |c: &mnemo_core::checkin::Conflict| ConflictInfo {
        id: c.id,
        line: c.line,
        mine: c.mine.as_ref().map(mnemo_core::checkin::summary),
        theirs: c.theirs.as_ref().map(mnemo_core::checkin::summary),
    };
    match &outcome.document {
        Some(document) => CheckinResult {
            applied,
            text: Some(document.text.clone()),
            epoch: Some(document.epoch),
            diagnostics: {
                let lines = Lines::new(&document.text);
                document.diagnostics.iter().map(|d| checkout_problem(&lines, d, &document.conflicts)).collect()
            },
            conflicts: document.conflicts.iter().map(conflict_info).collect(),
        },
        None => {
            let plan = &outcome.plan;
            let lines = Lines::new(sent);
            let mut diagnostics: Vec<_> =
                plan.diagnostics.iter().map(|d| checkout_problem(&lines, d, &plan.conflicts)).collect();
            diagnostics.extend(outcome.refused.iter().map(|(line, message)| {
                let d = mnemo_core::memory_md::Diagnostic {
                    line: *line,
                    start_column: 0,
                    end_column: 0,
                    severity: mnemo_core::memory_md::Severity::Error,
                    message: message.clone(),
                };
                checkout_problem(&lines, &d, &[])
            }));
            CheckinResult {
                applied,
                text: None,
                epoch: None,
                diagnostics,
                conflicts: plan.conflicts.iter().map(conflict_info).collect(),
            }
        }
    }
}
