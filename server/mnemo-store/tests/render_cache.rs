//! A process that keeps its renderings (`render_cache::keep_renders`, as the
//! language server and the MCP server do) renders exactly the bytes of a
//! whole rendering, whatever was written between two renderings and through
//! whichever handle: notes created, superseded, revoked, flagged, reinstated
//! and forgotten, in this workspace and in another, checkouts and mirrors.

use mnemo_core::memory_md::{Flavour, render_views};
use mnemo_core::{Actor, EventData, EventKind, Kind, NewNote, Priority, Provenance, Status, Timestamp};
use mnemo_store::document::{DocumentKind, render_workspace};
use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store};
use proptest::prelude::*;

const KINDS: [Kind; 4] = [Kind::Directive, Kind::Gotcha, Kind::Finding, Kind::Task];

fn note(kind: Kind, title: String) -> NewNote {
    NewNote {
        kind,
        priority: Priority::Medium,
        title,
        body: "A body\nof two lines".into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors: vec![],
    }
}

fn event(kind: EventKind) -> EventData {
    let reason = (kind != EventKind::Reinstated).then(|| "because".to_string());
    EventData { kind, actor: Actor::Agent, at: Timestamp(1_800_000_000), reason }
}

/// The rendering without any kept entries: every note read and rendered.
fn whole(store: &Store, workspace: &Workspace, kind: DocumentKind) -> String {
    let epoch = store.epoch().unwrap();
    let flavour = match kind {
        DocumentKind::Mirror => Flavour::Mirror,
        DocumentKind::Checkout => Flavour::Checkout { workspace: workspace.id.clone(), epoch },
    };
    let views = store.notes(&Scope::Workspace(workspace.id.clone())).unwrap();
    render_views(&flavour, workspace.display_name(), &views)
}

/// One write of a random kind (`op`) on a random note (`at`) of `name`.
fn write(store: &mut Store, name: &str, op: u8, at: usize, serial: usize) {
    let scope = Scope::Workspace(name.into());
    let ids: Vec<_> = store.notes(&scope).unwrap().into_iter().map(|v| (v.note.id, v.state.status)).collect();
    let target = ids.get(at % ids.len().max(1)).cloned();
    let _ = store.write(|w| {
        match (op % 7, target) {
            (0, _) | (_, None) => {
                w.create(name, note(KINDS[at % KINDS.len()], format!("note {serial}")), Actor::Agent, Timestamp(1))?;
            }
            (1, Some((id, Status::Active))) => {
                w.supersede(
                    &scope,
                    id,
                    note(Kind::Finding, format!("successor {serial}")),
                    Actor::Agent,
                    Timestamp(2),
                    None,
                )?;
            }
            (2, Some((id, _))) => {
                w.append(&scope, id, event(EventKind::Revoked))?;
            }
            (3, Some((id, _))) => {
                w.append(&scope, id, event(EventKind::StaleFlagged))?;
            }
            (4, Some((id, _))) => {
                w.append(&scope, id, event(EventKind::Reinstated))?;
            }
            (5, Some((id, _))) => w.forget(&scope, id)?,
            _ => {}
        }
        Ok(())
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_kept_rendering_brought_up_to_date_is_the_whole_rendering(
        steps in proptest::collection::vec((any::<bool>(), 0u8..7, 0usize..50, any::<bool>()), 1..40),
    ) {
        mnemo_store::render_cache::keep_renders();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        let mut writer = Store::open(&path).unwrap();
        let workspace = Workspace::named("w");
        let mut renders = 0;
        let before = mnemo_store::render_cache::brought_up_to_date();
        for (serial, (here, op, at, render)) in steps.into_iter().enumerate() {
            write(&mut writer, if here { "w" } else { "other" }, op, at, serial);
            if render {
                // Another handle on the same file, as the language server opens one per request.
                let reader = Store::open(&path).unwrap();
                for kind in [DocumentKind::Checkout, DocumentKind::Mirror] {
                    let kept = render_workspace(&reader, &workspace, kind).unwrap();
                    prop_assert_eq!(kept.text, whole(&reader, &workspace, kind));
                    prop_assert_eq!(kept.notes, reader.notes(&Scope::Workspace("w".into())).unwrap().len());
                    renders += 1;
                }
            }
        }
        // The mirror rendered right after the checkout, with nothing written
        // between, is always brought up to date: the kept path was walked.
        if renders >= 2 {
            prop_assert!(mnemo_store::render_cache::brought_up_to_date() > before);
        }
    }
}

#[test]
fn a_store_made_again_at_the_same_path_is_rendered_whole() {
    mnemo_store::render_cache::keep_renders();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let workspace = Workspace::named("w");
    let mut first = Store::open(&path).unwrap();
    for serial in 0..3 {
        write(&mut first, "w", 0, serial, serial);
    }
    render_workspace(&first, &workspace, DocumentKind::Mirror).unwrap();
    drop(first);
    for name in ["memory.db", "memory.db-wal", "memory.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(name));
    }
    // More events than the first store had, none of its notes.
    let mut second = Store::open(&path).unwrap();
    for serial in 0..8 {
        write(&mut second, "w", 0, serial, 100 + serial);
    }
    let kept = render_workspace(&second, &workspace, DocumentKind::Mirror).unwrap();
    assert_eq!(kept.text, whole(&second, &workspace, DocumentKind::Mirror));
    assert!(!kept.text.contains("note 0\n"), "{}", kept.text);
}
