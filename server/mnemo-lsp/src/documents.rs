//! Open documents and the one task that owns them. Handlers send
//! [`DocumentEvent`]s in the order they are called; the owner applies them
//! in that order, keeps the snapshot handlers read, and republishes
//! diagnostics after every change. A checkout's diagnostics come from a
//! check-in preview against the store, run once typing pauses.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mnemo_core::checkin::CheckinPlan;
use mnemo_core::memory_md::{is_checkout_text, is_mirror_text};
use ropey::Rope;
use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use crate::anchors::DriftSnapshot;
use crate::diagnostics::diagnostics;
use crate::to_proto::char_index;

/// What a document is to mnemo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// The read-only MEMORY.md on disk.
    Mirror,
    /// An editable checkout (the `memory:` scheme, or a checkout saved to a file).
    Checkout,
    /// Any other file of the workspace: hover on `#id` still works.
    Source,
}

#[derive(Debug, Clone)]
pub struct Document {
    pub text: Rope,
    pub version: i32,
    pub kind: DocumentKind,
}

impl Document {
    fn new(uri: &Uri, text: &str, version: i32) -> Document {
        let kind = if crate::uris::is_memory(uri.as_str()) || is_checkout_text(text) {
            DocumentKind::Checkout
        } else if is_mirror_text(text) {
            DocumentKind::Mirror
        } else {
            DocumentKind::Source
        };
        Document { text: Rope::from_str(text), version, kind }
    }

    fn apply(&mut self, change: TextDocumentContentChangeEvent) {
        match change.range {
            Some(range) => {
                let start = char_index(&self.text, range.start);
                let end = char_index(&self.text, range.end).max(start);
                self.text.remove(start..end);
                self.text.insert(start, &change.text);
            }
            None => self.text = Rope::from_str(&change.text),
        }
    }
}

/// The documents as last applied; handlers read clones.
pub type Snapshot = Arc<Mutex<HashMap<Uri, Document>>>;

pub enum DocumentEvent {
    Opened {
        uri: Uri,
        text: String,
        version: i32,
    },
    Changed {
        uri: Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    },
    Closed {
        uri: Uri,
    },
    /// The drift check changed: republish every open document's diagnostics.
    Republish,
    /// The file under a read-only document (the mirror) changed on disk.
    Reloaded {
        uri: Uri,
        text: String,
    },
    /// Answered once every event queued before it is applied, so a request
    /// sees the documents as of the notifications sent before it.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

/// What checking a checkout's text in would do (`None`: cannot tell now).
pub type Previewer = Arc<dyn Fn(&str) -> Option<CheckinPlan> + Send + Sync>;

/// What the client can be asked to re-request (its capabilities, set at
/// `initialize`): lenses and hints depend on the drift check and the store,
/// which change without the document changing.
#[derive(Debug, Default)]
pub struct RefreshSupport {
    pub code_lens: std::sync::atomic::AtomicBool,
    pub inlay_hints: std::sync::atomic::AtomicBool,
}

/// Start the owner task; returns its queue and the snapshot it maintains.
/// `pause` is how long typing must pause before a checkout is previewed.
pub fn spawn_owner(
    client: Client,
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
            // Apply under the lock; publish after releasing it.
            let mut checkout = None;
            let mut republish = Vec::new();
            let mut checkouts_to_preview = Vec::new();
            let publish = {
                let drift_state = drift.lock().unwrap_or_else(|e| e.into_inner());
                let diagnostics = |uri: &Uri, doc: &Document| diagnostics(uri, doc, None, &drift_state);
                let mut docs = documents.lock().unwrap_or_else(|e| e.into_inner());
                match event {
                    DocumentEvent::Opened { uri, text, version } => {
                        let doc = Document::new(&uri, &text, version);
                        docs.insert(uri.clone(), doc.clone());
                        if doc.kind == DocumentKind::Checkout {
                            checkout = Some((uri.clone(), version, Duration::ZERO));
                        }
                        Some((uri.clone(), diagnostics(&uri, &doc), Some(version)))
                    }
                    DocumentEvent::Changed { uri, version, changes } => match docs.get_mut(&uri) {
                        Some(doc) if version > doc.version => {
                            doc.version = version;
                            changes.into_iter().for_each(|c| doc.apply(c));
                            if doc.kind == DocumentKind::Checkout {
                                // Published with the preview, so conflicts do not flicker.
                                let pause = *pause.lock().unwrap_or_else(|e| e.into_inner());
                                checkout = Some((uri, version, pause));
                                None
                            } else {
                                Some((uri.clone(), diagnostics(&uri, doc), Some(version)))
                            }
                        }
                        _ => None,
                    },
                    DocumentEvent::Reloaded { uri, text } => match docs.get_mut(&uri) {
                        Some(doc) if doc.text != text.as_str() => {
                            doc.text = Rope::from_str(&text);
                            Some((uri.clone(), diagnostics(&uri, doc), Some(doc.version)))
                        }
                        _ => None,
                    },
                    DocumentEvent::Republish => {
                        // Lenses and hints come from the same state: ask the client again.
                        use std::sync::atomic::Ordering::Relaxed;
                        let (lens, hints) = (refresh.code_lens.load(Relaxed), refresh.inlay_hints.load(Relaxed));
                        let client = client.clone();
                        tokio::spawn(async move {
                            if lens {
                                let _ = client.code_lens_refresh().await;
                            }
                            if hints {
                                let _ = client.inlay_hint_refresh().await;
                            }
                        });
                        for (uri, doc) in docs.iter() {
                            if doc.kind == DocumentKind::Checkout {
                                checkouts_to_preview.push((uri.clone(), doc.version));
                            } else {
                                republish.push((uri.clone(), diagnostics(uri, doc), Some(doc.version)));
                            }
                        }
                        None
                    }
                    DocumentEvent::Closed { uri } => {
                        docs.remove(&uri);
                        Some((uri, Vec::new(), None))
                    }
                    DocumentEvent::Barrier(done) => {
                        let _ = done.send(());
                        None
                    }
                }
            };
            for (uri, found, version) in publish.into_iter().chain(republish) {
                client.publish_diagnostics(uri, found, version).await;
            }
            let previews =
                checkout.into_iter().chain(checkouts_to_preview.into_iter().map(|(u, v)| (u, v, Duration::ZERO)));
            for (uri, version, pause) in previews {
                let task = publish_preview(
                    client.clone(),
                    documents.clone(),
                    preview.clone(),
                    drift.clone(),
                    uri,
                    version,
                    pause,
                );
                tokio::spawn(task);
            }
        }
    });
    (sender, snapshot)
}

/// After `pause`, if the document is still at `version`, publish its
/// diagnostics with a check-in preview.
async fn publish_preview(
    client: Client,
    documents: Snapshot,
    preview: Previewer,
    drift: DriftSnapshot,
    uri: Uri,
    version: i32,
    pause: Duration,
) {
    tokio::time::sleep(pause).await;
    let current = |documents: &Snapshot| {
        let docs = documents.lock().unwrap_or_else(|e| e.into_inner());
        docs.get(&uri).filter(|d| d.version == version).cloned()
    };
    let Some(doc) = current(&documents) else { return };
    let text = doc.text.to_string();
    let plan = tokio::task::spawn_blocking(move || preview(&text)).await.ok().flatten();
    if current(&documents).is_none() {
        return;
    }
    let found = {
        let drift = drift.lock().unwrap_or_else(|e| e.into_inner());
        diagnostics(&uri, &doc, plan.as_ref(), &drift)
    };
    client.publish_diagnostics(uri, found, Some(version)).await;
}
