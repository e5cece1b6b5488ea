//! Noticing writes by other processes: a `notify` watch on the store file
//! wakes a task that waits for a short quiet spell, checks the store epoch,
//! re-renders the mirror and reloads it when open, and refreshes open checkouts — a clean buffer gets the new render through
//! a `memory/didChange` notification; a dirty one gets a warning that the
//! store changed since its checkout, with its conflicts as of now.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mnemo_store::Store;
use mnemo_store::store_watch::{StoreWatcher, watch_store};
use mnemo_store::workspace::Workspace;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::{Diagnostic, DiagnosticSeverity, Position, Range, Uri};

use crate::diagnostics::diagnostics;
use crate::document_owner::{Previewer, Snapshot};
use crate::documents::{DocumentEvent, DocumentKind};

/// The checkouts handed out, by canonical document URI (`uris.rs`).
pub type Checkouts = Arc<Mutex<HashMap<String, HandedOut>>>;

/// The text the server last gave a checkout document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedOut {
    pub epoch: i64,
    pub text: String,
    /// Whether `text` is a pure rendering of the store. A check-in's new text
    /// that carries unapplied entries is not: replacing it with a fresh
    /// render would drop what the person typed, so a refresh never does.
    pub pristine: bool,
}

/// `memory/didChange`: the new render of a clean checkout buffer.
pub enum MemoryDidChange {}

#[derive(Debug, Serialize, Deserialize)]
pub struct MemoryDidChangeParams {
    pub uri: String,
    pub text: String,
    pub epoch: i64,
}

impl Notification for MemoryDidChange {
    type Params = MemoryDidChangeParams;
    const METHOD: &'static str = "memory/didChange";
}

/// Quiet time after the last change to the store file before refreshing.
const QUIET: Duration = Duration::from_millis(150);

pub struct Refresher {
    pub client: Client,
    /// Read at each refresh; the watch itself is restarted when it changes.
    pub store_path: Arc<std::sync::RwLock<PathBuf>>,
    pub workspace: Arc<OnceLock<Workspace>>,
    pub fallback: Workspace,
    pub snapshot: Snapshot,
    pub checkouts: Checkouts,
    pub preview: Previewer,
    /// The document owner's queue (an open mirror is reloaded through it).
    pub documents: mpsc::UnboundedSender<DocumentEvent>,
    pub drift: crate::anchors::DriftSnapshot,
    /// Asks for a drift check (the notes and their anchors may have changed).
    pub drift_requests: mpsc::UnboundedSender<()>,
}

/// Watch the store; returns the watcher, which must be kept alive.
pub fn spawn(refresher: Refresher) -> notify::Result<StoreWatcher> {
    let (sender, mut receiver) = mpsc::unbounded_channel::<()>();
    let path = refresher.store_path.read().unwrap_or_else(|e| e.into_inner()).clone();
    let watcher = watch_store(&path, move || {
        let _ = sender.send(());
    })?;
    tokio::spawn(async move {
        let mut last_epoch: Option<i64> = None;
        while receiver.recv().await.is_some() {
            while let Ok(Some(())) = tokio::time::timeout(QUIET, receiver.recv()).await {}
            last_epoch = refresher.refresh(last_epoch).await;
        }
    });
    Ok(watcher)
}

impl Refresher {
    async fn refresh(&self, last_epoch: Option<i64>) -> Option<i64> {
        let workspace = self.workspace.get().cloned().unwrap_or_else(|| self.fallback.clone());
        let path = self.store_path.read().unwrap_or_else(|e| e.into_inner()).clone();
        let checkout_workspace = workspace.clone();
        let open_mirrors: Vec<Uri> = {
            let docs = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
            docs.of_kind(DocumentKind::Mirror).into_iter().map(|(uri, _)| uri).collect()
        };
        let rendered = tokio::task::spawn_blocking(move || {
            let store = Store::open(&path).ok()?;
            let epoch = store.epoch().ok()?;
            if Some(epoch) == last_epoch {
                return Some((epoch, None, Vec::new()));
            }
            // The writer re-renders the mirror too; this catches up when it
            // could not, then the open mirror is reloaded from disk.
            let problem = crate::server::refresh_mirror(&store, &checkout_workspace);
            if let Some(problem) = problem {
                eprintln!("mnemo lsp: {problem}");
            }
            let mirrors: Vec<(Uri, String)> = open_mirrors
                .into_iter()
                .filter_map(|uri| {
                    let text = mnemo_store::repo_file::read_text(&crate::uris::file_path(&uri)?).ok()?;
                    Some((uri, text))
                })
                .collect();
            Some((epoch, store.checkout(&checkout_workspace).ok(), mirrors))
        })
        .await
        .ok()
        .flatten();
        let Some((epoch, Some(document), mirrors)) = rendered else {
            return rendered.map(|(e, _, _)| e).or(last_epoch);
        };
        let _ = self.drift_requests.send(());
        for (uri, text) in mirrors {
            let _ = self.documents.send(DocumentEvent::Reloaded { uri, text });
        }
        let open = self.snapshot.lock().unwrap_or_else(|e| e.into_inner()).of_kind(DocumentKind::Checkout);
        for (uri, doc) in open {
            let handed_out = self.checkouts.lock().unwrap_or_else(|e| e.into_inner()).get(uri.as_str()).cloned();
            let Some(HandedOut { epoch: base_epoch, text: base_text, pristine }) = handed_out else { continue };
            if base_epoch == epoch {
                continue;
            }
            // Only a buffer that holds exactly a pure rendering is replaced:
            // unsaved edits, autosaved drafts and carried-over unapplied text stay.
            if pristine && doc.text == base_text {
                let fresh = HandedOut { epoch, text: document.text.clone(), pristine: true };
                self.checkouts.lock().unwrap_or_else(|e| e.into_inner()).insert(uri.as_str().to_string(), fresh);
                let params =
                    MemoryDidChangeParams { uri: uri.as_str().to_string(), text: document.text.clone(), epoch };
                self.client.send_notification::<MemoryDidChange>(params).await;
            } else {
                let text = doc.text.to_string();
                let preview = self.preview.clone();
                let plan = tokio::task::spawn_blocking(move || preview(&text)).await.ok().flatten();
                let mut found = {
                    let drift = self.drift.lock().unwrap_or_else(|e| e.into_inner());
                    diagnostics(&uri, &doc, plan.as_ref(), &drift)
                };
                found.push(Diagnostic {
                    range: Range::new(Position::new(0, 0), Position::new(0, 0)),
                    severity: Some(DiagnosticSeverity::WARNING),
                    source: Some("mnemo".into()),
                    message: format!("the store changed since this checkout (epoch {base_epoch} → {epoch}); your text is kept as it is: saving checks in your edits and shows any conflicts"),
                    ..Diagnostic::default()
                });
                self.client.publish_diagnostics(uri, found, Some(doc.version)).await;
            }
        }
        Some(epoch)
    }
}
