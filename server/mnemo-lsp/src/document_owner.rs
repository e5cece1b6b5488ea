//! The one task that owns the open documents: handlers send
//! [`DocumentEvent`]s in the order they are called; this loop hands each to
//! [`OpenDocuments::apply`] under the snapshot's lock, in that order, and
//! then performs the effects it returned (publishing diagnostics, spawning
//! check-in previews and lens refreshes, releasing barriers). It decides
//! nothing itself: every rule is in `documents.rs`, tested without a runtime.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mnemo_core::checkin::CheckinPlan;
use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::Uri;

use crate::anchors::DriftSnapshot;
use crate::diagnostics::diagnostics;
use crate::direct_out::DirectOut;
use crate::documents::{DocumentEvent, Effect, Inputs, OpenDocuments};

/// The documents as last applied; handlers read clones.
pub type Snapshot = Arc<Mutex<OpenDocuments>>;

/// What checking a checkout's text in would do (`None`: cannot tell now).
pub type Previewer = Arc<dyn Fn(&str) -> Option<CheckinPlan> + Send + Sync>;

/// What the client can be asked to re-request (its capabilities, set at
/// `initialize`): lenses and hints depend on the drift check and the store,
/// which change without the document changing.
#[derive(Debug, Default)]
pub struct RefreshSupport {
    pub code_lens: AtomicBool,
    pub inlay_hints: AtomicBool,
}

/// Start the owner task; returns its queue and the snapshot it maintains.
/// `pause` is how long typing must pause before a checkout is previewed.
pub fn spawn_owner(
    client: Client,
    direct: DirectOut,
    preview: Previewer,
    pause: Arc<Mutex<Duration>>,
    drift: DriftSnapshot,
    refresh: Arc<RefreshSupport>,
) -> (mpsc::UnboundedSender<DocumentEvent>, Snapshot) {
    let (sender, mut receiver) = mpsc::unbounded_channel::<DocumentEvent>();
    let snapshot: Snapshot = Arc::default();
    let documents = snapshot.clone();
    tokio::spawn(async move {
        while let Some(event) = receiver.recv().await {
            let size = match &event {
                DocumentEvent::Opened { text, .. } | DocumentEvent::Reloaded { text, .. } => text.len(),
                // Rare, and it frees the whole document, however large.
                DocumentEvent::Closed { .. } => usize::MAX,
                _ => 0,
            };
            // Apply under the locks; perform the effects after releasing them.
            let effects = {
                let drift_state = drift.lock().unwrap_or_else(|e| e.into_inner());
                let inputs = Inputs {
                    pause: *pause.lock().unwrap_or_else(|e| e.into_inner()),
                    drift: &drift_state,
                    code_lens_refresh: refresh.code_lens.load(Ordering::Relaxed),
                    inlay_hint_refresh: refresh.inlay_hints.load(Ordering::Relaxed),
                };
                documents.lock().unwrap_or_else(|e| e.into_inner()).apply(event, &inputs)
            };
            for effect in effects {
                match effect {
                    Effect::Publish { uri, diagnostics, version } => {
                        direct.publish_diagnostics(&uri, &diagnostics, version).await;
                    }
                    Effect::Preview { uri, version, after } => {
                        let task = publish_preview(
                            direct.clone(),
                            documents.clone(),
                            preview.clone(),
                            drift.clone(),
                            uri,
                            version,
                            after,
                        );
                        tokio::spawn(task);
                    }
                    Effect::RefreshLenses { code_lens, inlay_hints } => {
                        let client = client.clone();
                        tokio::spawn(async move {
                            if code_lens {
                                let _ = client.code_lens_refresh().await;
                            }
                            if inlay_hints {
                                let _ = client.inlay_hint_refresh().await;
                            }
                        });
                    }
                    Effect::Release(done) => {
                        let _ = done.send(());
                    }
                }
            }
            crate::memory::release_after(size);
        }
    });
    (sender, snapshot)
}

/// After `pause`, if the document is still at `version`, publish its
/// diagnostics with a check-in preview.
async fn publish_preview(
    direct: DirectOut,
    documents: Snapshot,
    preview: Previewer,
    drift: DriftSnapshot,
    uri: Uri,
    version: i32,
    pause: Duration,
) {
    tokio::time::sleep(pause).await;
    let current =
        |documents: &Snapshot| documents.lock().unwrap_or_else(|e| e.into_inner()).at_version(&uri, version).cloned();
    let Some(doc) = current(&documents) else {
        tracing::debug!(uri = uri.as_str(), version, "check-in preview skipped: the document changed or closed");
        return;
    };
    let text = doc.whole_text();
    let plan = tokio::task::spawn_blocking(move || preview(&text)).await.ok().flatten();
    if current(&documents).is_none() {
        tracing::debug!(uri = uri.as_str(), version, "check-in preview dropped: the document changed meanwhile");
        return;
    }
    let found = {
        let drift = drift.lock().unwrap_or_else(|e| e.into_inner());
        diagnostics(&uri, &doc, plan.as_ref(), &drift)
    };
    direct.publish_diagnostics(&uri, &found, Some(version)).await;
}
