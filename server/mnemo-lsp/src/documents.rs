//! Open documents and the one task that owns them. Handlers send
//! [`DocumentEvent`]s in the order they are called; the owner applies them
//! in that order, keeps the snapshot handlers read, and republishes
//! diagnostics after every change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mnemo_core::memory_md::MIRROR_HEADER;
use ropey::Rope;
use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

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
        let kind = if uri.scheme().as_str() == "memory" || text.starts_with("<!-- mnemo checkout") {
            DocumentKind::Checkout
        } else if text.starts_with(MIRROR_HEADER) || text.starts_with("<!-- mnemo mirror") {
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
    /// Answered once every event queued before it is applied, so a request
    /// sees the documents as of the notifications sent before it.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

/// Start the owner task; returns its queue and the snapshot it maintains.
pub fn spawn_owner(client: Client) -> (mpsc::UnboundedSender<DocumentEvent>, Snapshot) {
    let (sender, mut receiver) = mpsc::unbounded_channel::<DocumentEvent>();
    let snapshot: Snapshot = Arc::default();
    let documents = snapshot.clone();
    tokio::spawn(async move {
        while let Some(event) = receiver.recv().await {
            // Apply under the lock; publish after releasing it.
            let publish = {
                let mut docs = documents.lock().unwrap_or_else(|e| e.into_inner());
                match event {
                    DocumentEvent::Opened { uri, text, version } => {
                        let doc = Document::new(&uri, &text, version);
                        docs.insert(uri.clone(), doc.clone());
                        Some((uri, diagnostics(&doc), Some(version)))
                    }
                    DocumentEvent::Changed { uri, version, changes } => match docs.get_mut(&uri) {
                        Some(doc) if version > doc.version => {
                            doc.version = version;
                            changes.into_iter().for_each(|c| doc.apply(c));
                            Some((uri, diagnostics(doc), Some(version)))
                        }
                        _ => None,
                    },
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
            if let Some((uri, found, version)) = publish {
                client.publish_diagnostics(uri, found, version).await;
            }
        }
    });
    (sender, snapshot)
}
