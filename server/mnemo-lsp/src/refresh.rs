//! Noticing writes by other processes: a `notify` watch on the store file
//! pokes two tasks, each waiting a burst of writes out (`debounced.rs`):
//!
//! - **open documents**, after a short quiet spell ([`DOCUMENTS`]): an open
//!   mirror is reloaded from disk (whoever rendered it: the mirror's record
//!   is no epoch bump, so this is done whatever the epoch says); when the
//!   epoch moved, a drift check is asked for and open checkouts are
//!   refreshed — a clean buffer gets the new render through a
//!   `memory/didChange` notification; a dirty one gets a warning that the
//!   store changed since its checkout, with its conflicts as of now.
//! - **the mirror**, caught up when the writing process could not render it
//!   (`mirror::keep_current`, through `server::refresh_mirror`), after the
//!   workspace's `[memory_export] debounce_seconds` ([`mirror_timing`]); an
//!   open mirror is then reloaded. While this server stands for the mirror
//!   (`Backend::stand_for_mirror`) the render is its standing worker's, and
//!   the mirror's record it writes pokes the watch that reloads open mirrors.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mnemo_core::debounce::default_max_wait;
use mnemo_store::Store;
use mnemo_store::config::{MemoryExport, WorkspaceConfig};
use mnemo_store::mirror;
use mnemo_store::store_watch::{StoreWatcher, watch_store};
use mnemo_store::workspace::Workspace;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::{Diagnostic, DiagnosticSeverity, Position, Range, Uri};

use crate::debounced::{DebouncedPokes, Timing};
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

/// How the open-documents task waits: a burst of writes is over after
/// 150 ms of quiet, and a steady stream is served at least every second.
pub const DOCUMENTS: Timing = Timing { quiet: Duration::from_millis(150), max_wait: Duration::from_secs(1) };

/// How the mirror task waits: `[memory_export] debounce_seconds` of quiet,
/// and at most the longest wait the core allows for it.
pub fn mirror_timing(config: &MemoryExport) -> Timing {
    let quiet = config.debounce.as_millis() as u64;
    Timing { quiet: config.debounce, max_wait: Duration::from_millis(default_max_wait(quiet)) }
}

pub struct Refresher {
    pub client: Client,
    /// Diagnostics are sent around the library (`direct_out`).
    pub(crate) direct: crate::direct_out::DirectOut,
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

/// Watch the store; returns the watcher, which must be kept alive (the
/// tasks end once it is dropped).
pub fn spawn(refresher: Refresher) -> notify::Result<StoreWatcher> {
    let (documents_pokes, documents_received) = mpsc::unbounded_channel::<()>();
    let (mirror_pokes, mirror_received) = mpsc::unbounded_channel::<()>();
    let path = refresher.store_path.read().unwrap_or_else(|e| e.into_inner()).clone();
    let watcher = watch_store(&path, move || {
        let _ = documents_pokes.send(());
        let _ = mirror_pokes.send(());
    })?;
    let refresher = Arc::new(refresher);
    let documents = refresher.clone();
    tokio::spawn(async move {
        let mut pokes = DebouncedPokes::new("store watch: open documents", documents_received, DOCUMENTS);
        let mut last_epoch: Option<i64> = None;
        while pokes.burst().await {
            last_epoch = documents.refresh(last_epoch).await;
        }
    });
    tokio::spawn(async move {
        let mut pokes =
            DebouncedPokes::new("store watch: mirror", mirror_received, mirror_timing(&MemoryExport::default()));
        loop {
            // Read before each burst, so a changed setting applies to the next one.
            pokes.set_timing(refresher.mirror_timing().await);
            if !pokes.burst().await {
                break;
            }
            refresher.catch_up_mirror().await;
        }
    });
    Ok(watcher)
}

impl Refresher {
    fn workspace(&self) -> Workspace {
        self.workspace.get().cloned().unwrap_or_else(|| self.fallback.clone())
    }

    fn store_path(&self) -> PathBuf {
        self.store_path.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The open mirrors, by URI.
    fn open_mirrors(&self) -> Vec<Uri> {
        let docs = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        docs.of_kind(DocumentKind::Mirror).into_iter().map(|(uri, _)| uri).collect()
    }

    /// Have the document owner reload each open mirror from disk (it
    /// republishes only a mirror whose text changed).
    fn reload(&self, mirrors: Vec<(Uri, String)>) {
        for (uri, text) in mirrors {
            let _ = self.documents.send(DocumentEvent::Reloaded { uri, text });
        }
    }

    /// How the mirror task waits, as the workspace's config says now.
    async fn mirror_timing(&self) -> Timing {
        let root = self.workspace().root;
        let config = tokio::task::spawn_blocking(move || WorkspaceConfig::load(root.as_deref())).await;
        // A broken config is reported where the mirror is rendered; wait as by default meanwhile.
        let export = config.ok().and_then(Result::ok).map(|c| c.memory_export).unwrap_or_default();
        mirror_timing(&export)
    }

    /// Render the mirror if it is behind the store, then reload it where it is open.
    async fn catch_up_mirror(&self) {
        let (workspace, path, open_mirrors) = (self.workspace(), self.store_path(), self.open_mirrors());
        let caught_up = tokio::task::spawn_blocking(move || {
            let store = Store::open(&path).map_err(|e| mirror::not_updated(&e))?;
            match crate::server::refresh_mirror(&store, &workspace) {
                Some(problem) => Err(problem),
                None => Ok(read_mirrors(open_mirrors)),
            }
        })
        .await;
        match caught_up {
            Ok(Ok(mirrors)) => {
                tracing::debug!(open = mirrors.len(), "mirror caught up with the store after its debounce");
                self.reload(mirrors);
            }
            Ok(Err(problem)) => eprintln!("mnemo lsp: {problem}"),
            Err(_) => {}
        }
    }

    /// Bring open documents up to date with the store after a burst of writes.
    async fn refresh(&self, last_epoch: Option<i64>) -> Option<i64> {
        let (workspace, path, open_mirrors) = (self.workspace(), self.store_path(), self.open_mirrors());
        let checkout_workspace = workspace.clone();
        let rendered = tokio::task::spawn_blocking(move || {
            let store = Store::open(&path).ok()?;
            let epoch = store.epoch().ok()?;
            // Whatever the epoch: the mirror may have been rendered since the last look.
            let mirrors = read_mirrors(open_mirrors);
            if Some(epoch) == last_epoch {
                return Some((epoch, None, mirrors));
            }
            Some((epoch, store.checkout(&checkout_workspace).ok(), mirrors))
        })
        .await
        .ok()
        .flatten();
        let Some((epoch, document, mirrors)) = rendered else {
            tracing::debug!("refresh skipped: the store could not be read");
            return last_epoch;
        };
        self.reload(mirrors);
        let Some(document) = document else {
            match Some(epoch) == last_epoch {
                true => tracing::debug!(epoch, "checkouts not refreshed: the epoch did not move"),
                false => tracing::debug!(epoch, "checkouts not refreshed: the checkout could not be rendered"),
            }
            return Some(epoch);
        };
        tracing::debug!(from = ?last_epoch, to = epoch, "refreshing after another write: the epoch moved");
        let _ = self.drift_requests.send(());
        let open = self.snapshot.lock().unwrap_or_else(|e| e.into_inner()).of_kind(DocumentKind::Checkout);
        for (uri, doc) in open {
            let handed_out = self.checkouts.lock().unwrap_or_else(|e| e.into_inner()).get(uri.as_str()).cloned();
            let Some(HandedOut { epoch: base_epoch, text: base_text, pristine }) = handed_out else { continue };
            if base_epoch == epoch {
                tracing::debug!(uri = uri.as_str(), epoch, "checkout already at this epoch");
                continue;
            }
            // Only a buffer that holds exactly a pure rendering is replaced:
            // unsaved edits, autosaved drafts and carried-over unapplied text stay.
            if pristine && doc.text == base_text {
                tracing::debug!(
                    uri = uri.as_str(),
                    from = base_epoch,
                    to = epoch,
                    "clean checkout: sent the new render"
                );
                let fresh = HandedOut { epoch, text: document.text.clone(), pristine: true };
                self.checkouts.lock().unwrap_or_else(|e| e.into_inner()).insert(uri.as_str().to_string(), fresh);
                let params =
                    MemoryDidChangeParams { uri: uri.as_str().to_string(), text: document.text.clone(), epoch };
                self.client.send_notification::<MemoryDidChange>(params).await;
            } else {
                tracing::debug!(
                    uri = uri.as_str(),
                    from = base_epoch,
                    to = epoch,
                    pristine,
                    "checkout kept as typed: warned that the store changed"
                );
                let text = doc.whole_text();
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
                self.direct.publish_diagnostics(&uri, &found, Some(doc.version)).await;
            }
        }
        Some(epoch)
    }
}

/// The text of each open mirror that can be read from disk now (blocking).
fn read_mirrors(open: Vec<Uri>) -> Vec<(Uri, String)> {
    open.into_iter()
        .filter_map(|uri| {
            let text = mnemo_store::repo_file::read_text(&crate::uris::file_path(&uri)?).ok()?;
            Some((uri, text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirror_waits_as_debounce_seconds_says_and_the_documents_do_not() {
        let config = |debounce: Duration| MemoryExport { debounce, ..MemoryExport::default() };
        assert_eq!(
            mirror_timing(&config(Duration::from_millis(250))),
            Timing { quiet: Duration::from_millis(250), max_wait: Duration::from_secs(10) }
        );
        assert_eq!(
            mirror_timing(&MemoryExport::default()),
            Timing { quiet: Duration::from_secs(3), max_wait: Duration::from_secs(30) },
            "the default: 3 s, held at most ten quiet spells"
        );
        assert!(
            DOCUMENTS.max_wait <= Duration::from_secs(1),
            "a steady stream of writes still refreshes open documents every second"
        );
    }
}
