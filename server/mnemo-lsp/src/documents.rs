//! Open documents as a state machine: [`OpenDocuments::apply`] takes one
//! [`DocumentEvent`] and returns the [`Effect`]s it calls for — diagnostics
//! to publish, a check-in preview to run once typing pauses, lenses to ask
//! for again, a barrier to release. It performs no I/O and needs no
//! runtime; `document_owner.rs` is the task that feeds it events in arrival
//! order and performs its effects.

use std::collections::HashMap;
use std::time::Duration;

use mnemo_core::memory_md::{is_checkout_text, is_mirror_text};
use ropey::Rope;
use tokio::sync::oneshot;
use tower_lsp_server::ls_types::{Diagnostic, TextDocumentContentChangeEvent, Uri};

use crate::anchors::DriftState;
use crate::diagnostics::diagnostics;
use crate::to_proto::char_index;

#[cfg(test)]
mod tests;

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
    /// The whole text, in one allocation of its size (`Rope::to_string`
    /// grows a string by doubling: 32 MB for a 20 MB mirror).
    pub fn whole_text(&self) -> String {
        String::from(&self.text)
    }

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

#[derive(Debug)]
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
    Barrier(oneshot::Sender<()>),
}

/// What applying an event calls for, in the order it is to be done.
#[derive(Debug)]
pub enum Effect {
    /// Send `diagnostics` for `uri` (an empty list clears them; no version
    /// once the document is closed).
    Publish { uri: Uri, diagnostics: Vec<Diagnostic>, version: Option<i32> },
    /// After `after`, if `uri` is still at `version`, publish its diagnostics
    /// with a check-in preview (a checkout's conflicts, shown before saving).
    Preview { uri: Uri, version: i32, after: Duration },
    /// Ask the client to request code lenses and inlay hints again.
    RefreshLenses { code_lens: bool, inlay_hints: bool },
    /// Answer a [`DocumentEvent::Barrier`].
    Release(oneshot::Sender<()>),
}

/// What [`OpenDocuments::apply`] reads besides the documents.
pub struct Inputs<'a> {
    /// How long typing in a checkout must pause before it is previewed.
    pub pause: Duration,
    /// The latest drift check (diagnostics show it).
    pub drift: &'a DriftState,
    /// Whether the client takes `workspace/codeLens/refresh`.
    pub code_lens_refresh: bool,
    /// Whether the client takes `workspace/inlayHint/refresh`.
    pub inlay_hint_refresh: bool,
}

/// The open documents, by canonical URI, as last applied; handlers read clones.
#[derive(Debug, Default)]
pub struct OpenDocuments {
    open: HashMap<Uri, Document>,
}

impl OpenDocuments {
    pub fn get(&self, uri: &Uri) -> Option<&Document> {
        self.open.get(uri)
    }

    /// The document at `uri` if it is still at `version` (a result computed
    /// for an older version is dropped).
    pub fn at_version(&self, uri: &Uri, version: i32) -> Option<&Document> {
        self.open.get(uri).filter(|d| d.version == version)
    }

    /// Clones of the open documents of `kind`.
    pub fn of_kind(&self, kind: DocumentKind) -> Vec<(Uri, Document)> {
        self.open.iter().filter(|(_, d)| d.kind == kind).map(|(u, d)| (u.clone(), d.clone())).collect()
    }

    /// Apply one event; returns what is to be done about it.
    pub fn apply(&mut self, event: DocumentEvent, inputs: &Inputs) -> Vec<Effect> {
        let publish = |uri: &Uri, doc: &Document| Effect::Publish {
            uri: uri.clone(),
            diagnostics: diagnostics(uri, doc, None, inputs.drift),
            version: Some(doc.version),
        };
        match event {
            DocumentEvent::Opened { uri, text, version } => {
                let doc = Document::new(&uri, &text, version);
                // The text is in the rope now: freed before the diagnostics
                // parse it again (20 MB each for a mirror of 100k notes).
                drop(text);
                let mut effects = vec![publish(&uri, &doc)];
                if doc.kind == DocumentKind::Checkout {
                    effects.push(Effect::Preview { uri: uri.clone(), version, after: Duration::ZERO });
                }
                self.open.insert(uri, doc);
                effects
            }
            DocumentEvent::Changed { uri, version, changes } => match self.open.get_mut(&uri) {
                Some(doc) if version > doc.version => {
                    doc.version = version;
                    changes.into_iter().for_each(|c| doc.apply(c));
                    if doc.kind == DocumentKind::Checkout {
                        // Published with the preview, so conflicts do not flicker.
                        vec![Effect::Preview { uri, version, after: inputs.pause }]
                    } else {
                        vec![publish(&uri, doc)]
                    }
                }
                // An old version (or a document never opened) changes nothing.
                _ => Vec::new(),
            },
            DocumentEvent::Reloaded { uri, text } => match self.open.get_mut(&uri) {
                Some(doc) if doc.text != text.as_str() => {
                    doc.text = Rope::from_str(&text);
                    drop(text);
                    vec![publish(&uri, doc)]
                }
                _ => Vec::new(),
            },
            DocumentEvent::Republish => {
                // Lenses and hints come from the same state: ask the client again.
                let (code_lens, inlay_hints) = (inputs.code_lens_refresh, inputs.inlay_hint_refresh);
                let mut effects = Vec::new();
                if code_lens || inlay_hints {
                    effects.push(Effect::RefreshLenses { code_lens, inlay_hints });
                }
                let mut previews = Vec::new();
                for (uri, doc) in &self.open {
                    if doc.kind == DocumentKind::Checkout {
                        previews.push(Effect::Preview {
                            uri: uri.clone(),
                            version: doc.version,
                            after: Duration::ZERO,
                        });
                    } else {
                        effects.push(publish(uri, doc));
                    }
                }
                effects.extend(previews);
                effects
            }
            DocumentEvent::Closed { uri } => {
                self.open.remove(&uri);
                vec![Effect::Publish { uri, diagnostics: Vec::new(), version: None }]
            }
            DocumentEvent::Barrier(done) => vec![Effect::Release(done)],
        }
    }
}
