//! Every transition of the document state machine, without a runtime: an
//! event in, the effects out, in order.

use std::time::Duration;

use mnemo_core::memory_md::{Entry, Flavour, StateMarker, render};
use mnemo_core::{Kind, Priority};
use tokio::sync::oneshot;
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent, Uri};

use super::*;

const PAUSE: Duration = Duration::from_millis(250);

fn uri(text: &str) -> Uri {
    text.parse().unwrap()
}

fn inputs(drift: &DriftState) -> Inputs<'_> {
    Inputs { pause: PAUSE, drift, code_lens_refresh: false, inlay_hint_refresh: false }
}

/// Each effect in one line: what it is, for which document, at which version.
fn shown(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .map(|effect| match effect {
            Effect::Publish { uri, diagnostics, version } => {
                let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
                format!("publish {} {version:?} {messages:?}", uri.as_str())
            }
            Effect::Preview { uri, version, after } => format!("preview {} {version} after {after:?}", uri.as_str()),
            Effect::RefreshLenses { code_lens, inlay_hints } => {
                format!("refresh lenses {code_lens} hints {inlay_hints}")
            }
            Effect::Release(_) => "release".to_string(),
        })
        .collect()
}

fn apply(documents: &mut OpenDocuments, event: DocumentEvent) -> Vec<String> {
    shown(&documents.apply(event, &inputs(&DriftState::default())))
}

fn open(uri: &str, text: &str, version: i32) -> DocumentEvent {
    DocumentEvent::Opened { uri: self::uri(uri), text: text.into(), version }
}

fn replace(uri: &str, version: i32, text: &str) -> DocumentEvent {
    let change = TextDocumentContentChangeEvent { range: None, range_length: None, text: text.into() };
    DocumentEvent::Changed { uri: self::uri(uri), version, changes: vec![change] }
}

fn text_of(documents: &OpenDocuments, uri: &str) -> String {
    documents.get(&self::uri(uri)).unwrap().text.to_string()
}

/// A mirror showing one revoked note.
fn mirror_text() -> String {
    let entry = Entry {
        id: Some(7),
        kind: Kind::Task,
        created: Some("2026-08-01".into()),
        priority: Priority::Low,
        marker: Some(StateMarker::Revoked { date: Some("2026-08-02".into()), reason: "done elsewhere".into() }),
        title: "Port the cache".into(),
        body: String::new(),
        anchors: vec![],
    };
    render(&Flavour::Mirror, "project", &[entry])
}

const SOURCE: &str = "file:///w/src/lock.rs";
const MIRROR: &str = "file:///w/MEMORY.md";
const CHECKOUT: &str = "memory:///w/MEMORY.md";

#[test]
fn opening_a_file_publishes_its_diagnostics_at_its_version() {
    let mut documents = OpenDocuments::default();
    assert_eq!(apply(&mut documents, open(SOURCE, "fn main() {}\n", 3)), [format!("publish {SOURCE} Some(3) []")]);
    assert_eq!(
        apply(&mut documents, open(MIRROR, &mirror_text(), 1)),
        [format!("publish {MIRROR} Some(1) [\"#7 was revoked: done elsewhere\"]")]
    );
    assert_eq!(documents.get(&uri(SOURCE)).unwrap().kind, DocumentKind::Source);
    assert_eq!(documents.get(&uri(MIRROR)).unwrap().kind, DocumentKind::Mirror);
}

#[test]
fn opening_a_checkout_publishes_and_previews_at_once() {
    let mut documents = OpenDocuments::default();
    let effects = apply(&mut documents, open(CHECKOUT, "not a checkout", 1));
    assert_eq!(effects.len(), 2, "{effects:?}");
    let problem = format!("publish {CHECKOUT} Some(1) [\"line 1 must be the checkout header");
    assert!(effects[0].starts_with(&problem), "what parsing finds is published at once: {effects:?}");
    assert_eq!(effects[1], format!("preview {CHECKOUT} 1 after 0ns"), "then the check-in preview");
    assert_eq!(documents.get(&uri(CHECKOUT)).unwrap().kind, DocumentKind::Checkout, "the memory: scheme");
    let saved = "file:///w/checkout.md";
    let checkout_text = "<!-- mnemo checkout · workspace /w · epoch 1 -->\n";
    assert_eq!(apply(&mut documents, open(saved, checkout_text, 1)).len(), 2, "a checkout saved to a file");
    assert_eq!(documents.get(&uri(saved)).unwrap().kind, DocumentKind::Checkout);
}

#[test]
fn a_change_to_a_file_is_applied_and_published() {
    let mut documents = OpenDocuments::default();
    apply(&mut documents, open(SOURCE, "let a = 1;\nlet 🙂 = 2;\n", 1));
    let edit = TextDocumentContentChangeEvent {
        range: Some(Range::new(Position::new(1, 4), Position::new(1, 6))),
        range_length: None,
        text: "b".into(),
    };
    let event = DocumentEvent::Changed { uri: uri(SOURCE), version: 2, changes: vec![edit] };
    assert_eq!(apply(&mut documents, event), [format!("publish {SOURCE} Some(2) []")]);
    assert_eq!(text_of(&documents, SOURCE), "let a = 1;\nlet b = 2;\n", "ranges count UTF-16 units");
    assert_eq!(documents.get(&uri(SOURCE)).unwrap().version, 2);
}

#[test]
fn a_change_to_a_checkout_is_previewed_once_typing_pauses() {
    let mut documents = OpenDocuments::default();
    apply(&mut documents, open(CHECKOUT, "", 1));
    assert_eq!(
        apply(&mut documents, replace(CHECKOUT, 2, "typed")),
        [format!("preview {CHECKOUT} 2 after {PAUSE:?}")],
        "published with the preview only, so conflicts do not flicker"
    );
    assert_eq!(text_of(&documents, CHECKOUT), "typed");
}

#[test]
fn an_old_version_or_an_unopened_document_changes_nothing() {
    let mut documents = OpenDocuments::default();
    apply(&mut documents, open(SOURCE, "new", 5));
    assert!(apply(&mut documents, replace(SOURCE, 5, "same version")).is_empty());
    assert!(apply(&mut documents, replace(SOURCE, 4, "older")).is_empty());
    assert_eq!(text_of(&documents, SOURCE), "new");
    assert!(apply(&mut documents, replace(MIRROR, 9, "never opened")).is_empty());
    assert!(documents.get(&uri(MIRROR)).is_none());
}

#[test]
fn a_reloaded_mirror_is_published_only_when_its_text_changed() {
    let mut documents = OpenDocuments::default();
    let text = mirror_text();
    apply(&mut documents, open(MIRROR, "<!-- mnemo mirror -->\n", 4));
    let reloaded = |text: &str| DocumentEvent::Reloaded { uri: uri(MIRROR), text: text.into() };
    assert_eq!(
        apply(&mut documents, reloaded(&text)),
        [format!("publish {MIRROR} Some(4) [\"#7 was revoked: done elsewhere\"]")],
        "at the version the client gave it"
    );
    assert_eq!(text_of(&documents, MIRROR), text);
    assert!(apply(&mut documents, reloaded(&text)).is_empty(), "the same text again");
    assert!(
        apply(&mut documents, DocumentEvent::Reloaded { uri: uri(SOURCE), text: "x".into() }).is_empty(),
        "not open"
    );
}

#[test]
fn republishing_asks_for_lenses_publishes_files_and_previews_checkouts() {
    let mut documents = OpenDocuments::default();
    apply(&mut documents, open(SOURCE, "", 1));
    apply(&mut documents, open(CHECKOUT, "", 2));
    apply(&mut documents, replace(CHECKOUT, 3, "typed"));
    let drift = DriftState::default();
    let lenses = Inputs { code_lens_refresh: true, ..inputs(&drift) };
    assert_eq!(
        shown(&documents.apply(DocumentEvent::Republish, &lenses)),
        [
            "refresh lenses true hints false".to_string(),
            format!("publish {SOURCE} Some(1) []"),
            format!("preview {CHECKOUT} 3 after 0ns"),
        ]
    );
    assert_eq!(
        apply(&mut documents, DocumentEvent::Republish)[0],
        format!("publish {SOURCE} Some(1) []"),
        "no lens refresh for a client that does not take it"
    );
}

#[test]
fn closing_forgets_the_document_and_clears_its_diagnostics() {
    let mut documents = OpenDocuments::default();
    apply(&mut documents, open(MIRROR, &mirror_text(), 1));
    assert_eq!(
        apply(&mut documents, DocumentEvent::Closed { uri: uri(MIRROR) }),
        [format!("publish {MIRROR} None []")]
    );
    assert!(documents.get(&uri(MIRROR)).is_none());
    assert!(apply(&mut documents, DocumentEvent::Republish).is_empty());
}

#[test]
fn a_barrier_is_released_after_the_events_before_it() {
    let mut documents = OpenDocuments::default();
    apply(&mut documents, open(SOURCE, "a", 1));
    let (done, released) = oneshot::channel();
    let mut effects = documents.apply(DocumentEvent::Barrier(done), &inputs(&DriftState::default()));
    assert_eq!(shown(&effects), ["release"]);
    let Some(Effect::Release(done)) = effects.pop() else { unreachable!() };
    done.send(()).unwrap();
    assert_eq!(released.blocking_recv(), Ok(()));
}

#[test]
fn only_the_version_asked_for_is_current() {
    let mut documents = OpenDocuments::default();
    apply(&mut documents, open(CHECKOUT, "", 1));
    apply(&mut documents, replace(CHECKOUT, 2, "typed"));
    assert!(documents.at_version(&uri(CHECKOUT), 1).is_none(), "a preview of version 1 is dropped");
    assert_eq!(documents.at_version(&uri(CHECKOUT), 2).map(|d| d.text.to_string()), Some("typed".into()));
    assert_eq!(documents.of_kind(DocumentKind::Checkout).len(), 1);
    assert!(documents.of_kind(DocumentKind::Mirror).is_empty());
}
