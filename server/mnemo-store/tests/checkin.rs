//! Check-in against a real store: random edit scripts never panic, checking
//! the same text in twice changes nothing the second time, and after a clean
//! check-in the live notes are exactly the active entries the edit shows.
//! On a SQLite file, and (run by `scripts/with-postgres`) on PostgreSQL
//! (`backend`, fewer cases: each is a new database).

mod backend;

use mnemo_core::checkin::Resolutions;
use mnemo_core::memory_md::parse_checkout;
use mnemo_core::{Actor, EventData, EventKind, Kind, NewNote, Priority, Provenance, Status, Timestamp};
use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store};
use proptest::prelude::*;

fn note(kind: Kind, priority: Priority, title: String, body: &str) -> NewNote {
    NewNote { kind, priority, title, body: body.into(), provenance: Provenance::Agent, quote: None, anchors: vec![] }
}

/// Apply `ops` to a checkout the way a person might: delete, revoke, flag,
/// retitle, add, break, duplicate.
fn edit_script(text: &str, ops: &[(u8, usize)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for &(op, at) in ops {
        let entries: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("- [#")).collect();
        if entries.is_empty() {
            break;
        }
        let i = entries[at % entries.len()];
        match op % 12 {
            0 | 1 => {
                // The whole entry, body included.
                let end = (i + 1..lines.len()).find(|&j| lines[j].starts_with("- ") || lines[j].starts_with("## "));
                lines.drain(i..end.unwrap_or(lines.len()));
                lines.insert(i, String::new());
            }
            2 | 3 => lines[i] = lines[i].replacen(" · medium · ", " · medium · REVOKED (not true) · ", 1),
            4 | 5 => lines[i].push_str(" (edited)"),
            6 | 7 => lines[i] = lines[i].replacen(" · low · ", " · low · STALE (doubtful) · ", 1),
            8 => lines.insert(i, "- high · Typed by a person\n".into()),
            9 => lines[i] = lines[i].replacen(" · high · ", " · low · ", 1),
            10 => lines.insert(i + 1, "garbage without indentation".into()),
            _ => {
                let copy = lines[i].clone();
                lines.insert(i, copy);
            }
        }
    }
    lines.join("\n") + "\n"
}

/// The workspace of a directory `project` made in `dir`.
fn project_in(dir: &std::path::Path) -> Workspace {
    let root = dir.join("project");
    std::fs::create_dir_all(&root).unwrap();
    Workspace::resolve(Some(root.to_str().unwrap()), &root).unwrap()
}

/// `count` findings of `workspace`, titled `{name} {n} about the cache`.
fn findings(store: &mut Store, workspace: &Workspace, count: usize, name: &str, body: &str) {
    store
        .write(|w| {
            for n in 0..count {
                let new = note(Kind::Finding, Priority::Medium, format!("{name} {n} about the cache"), body);
                w.create(&workspace.id, new, Actor::Agent, Timestamp(86_400 * 200))?;
            }
            Ok(())
        })
        .unwrap();
}

const KINDS: [Kind; 4] = [Kind::Directive, Kind::Gotcha, Kind::Finding, Kind::Task];
const PRIORITIES: [Priority; 3] = [Priority::High, Priority::Medium, Priority::Low];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if backend::on_postgres() { 12 } else { 128 }))]

    #[test]
    fn random_edits_check_in_once_and_the_live_notes_match_the_edit(
        notes in proptest::collection::vec((0usize..4, 0usize..3, any::<bool>(), any::<bool>()), 1..10),
        ops in proptest::collection::vec((any::<u8>(), any::<usize>()), 0..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let workspace = project_in(dir.path());
        let mut store = Store::open(&backend::store_location(dir.path(), "memory.db")).unwrap();
        let scope = Scope::Workspace(workspace.id.clone());
        store.write(|w| {
            for (n, &(kind, priority, body, revoked)) in notes.iter().enumerate() {
                let body = if body { "Why it matters.\n\nAnd how." } else { "" };
                let new = note(KINDS[kind], PRIORITIES[priority], format!("Note {n} about the cache"), body);
                let id = w.create(&workspace.id, new, Actor::Agent, Timestamp(86_400 * 200))?;
                if revoked {
                    let event = EventData { kind: EventKind::Revoked, actor: Actor::Agent, at: Timestamp(86_400 * 201), reason: Some("wrong".into()) };
                    w.append(&scope, id, event)?;
                }
            }
            Ok(())
        }).unwrap();
        let checkout = store.checkout(&workspace).unwrap();
        let typed = edit_script(&checkout.text, &ops);
        let now = Timestamp(86_400 * 210);

        let first = store.checkin(&workspace, &typed, &Resolutions::default(), now).unwrap();
        let again = store.checkin(&workspace, &typed, &Resolutions::default(), now).unwrap();
        prop_assert!(again.applied.is_empty(), "the same text twice: {:?}", again.plan.changes);
        let document = first.document.clone().expect("a checkout with its header re-renders");
        let rechecked = store.checkin(&workspace, &document.text, &Resolutions::default(), now).unwrap();
        prop_assert!(rechecked.applied.is_empty(), "the new text: {:?}", rechecked.plan.changes);
        prop_assert_eq!(&rechecked.document.unwrap().diagnostics, &document.diagnostics);

        if document.diagnostics.is_empty() {
            let live = store.notes(&scope).unwrap().iter().filter(|v| v.state.status == Status::Active).count();
            let shown = |text: &str| parse_checkout(text).entries.iter().filter(|e| e.entry.marker.is_none()).count();
            prop_assert_eq!(live, shown(&typed), "typed:\n{}", typed);
            prop_assert_eq!(live, shown(&document.text));
        }
        prop_assert!(store.verify().unwrap().is_clean());
    }
}

#[test]
fn a_base_written_again_at_its_epoch_is_read_again_not_taken_from_this_processs_parse() {
    if backend::on_postgres() {
        return; // the raw write below is to the SQLite file, where the bases live
    }
    let dir = tempfile::tempdir().unwrap();
    let workspace = project_in(dir.path());
    let mut store = Store::open(&dir.path().join("memory.db")).unwrap();
    findings(&mut store, &workspace, 3, "Note", "Why.");
    let checkout = store.checkout(&workspace).unwrap();
    let now = Timestamp(86_400 * 210);
    // A check-in keeps its new rendering's parse as the next edit's base.
    let edited = checkout.text.replacen("Note 0 about the cache", "Note 0 about the cache, edited", 1);
    let document = store.checkin(&workspace, &edited, &Resolutions::default(), now).unwrap().document.unwrap();
    assert!(store.preview_checkin(&workspace, &document.text).unwrap().changes.is_empty());
    // Another process writes that base again at the same epoch (as a
    // check-in's carried base replaces the rendering it was made from).
    let raw = rusqlite::Connection::open(dir.path().join("memory.db")).unwrap();
    let other = document.text.replacen("Note 1 about the cache", "Note 1 as the base had it", 1);
    let written = raw
        .execute(
            "UPDATE checkouts SET text = ?1, key_epoch = NULL, delta = NULL WHERE epoch = ?2",
            rusqlite::params![other, document.epoch],
        )
        .unwrap();
    assert_eq!(written, 1);
    // The person retitles the note: against the base as it now is, the
    // store changed that note since (a conflict); against the parse this
    // process kept, it would be a plain edit.
    let typed = document.text.replacen("Note 1 about the cache", "Note 1, typed", 1);
    let plan = store.preview_checkin(&workspace, &typed).unwrap();
    assert_eq!((plan.changes.len(), plan.conflicts.len()), (0, 1), "{plan:#?}");
    // Without the triggers that draw the marks, `store verify` says so.
    assert!(store.verify().unwrap().is_clean());
    raw.execute_batch("DROP TRIGGER checkout_made_update").unwrap();
    let report = store.verify().unwrap();
    assert!(
        report.problems.iter().any(|(what, why)| what == "trigger checkout_made_update" && why.contains("stale base")),
        "{report:?}"
    );
}

/// The id on the entry line that holds `title`.
fn id_of(text: &str, title: &str) -> i64 {
    let line = text.lines().find(|l| l.starts_with("- [#") && l.contains(title)).expect(title);
    line[4..line.find(']').unwrap()].parse().unwrap()
}

/// In a process that keeps its renderings (a language server), each save's
/// new text is the next edit's base and a save is planned on the window of
/// the edit (`mnemo-core/src/checkin/window.rs`): an entry changed far from
/// the one saved before is applied alone, and an id retyped to a note far
/// away is refused, with neither note changed.
#[test]
fn saves_after_saves_in_a_process_that_keeps_its_base_apply_each_edit_and_refuse_a_retyped_id() {
    mnemo_store::render_cache::keep_renders();
    let dir = tempfile::tempdir().unwrap();
    let workspace = project_in(dir.path());
    let mut store = Store::open(&backend::store_location(dir.path(), "memory.db")).unwrap();
    findings(&mut store, &workspace, 200, "Finding", "");
    let scope = Scope::Workspace(workspace.id.clone());
    let now = Timestamp(86_400 * 210);
    let mut text = store.checkout(&workspace).unwrap().text;
    for n in [10, 150, 11] {
        let title = format!("Finding {n} about the cache");
        let id = id_of(&text, &title);
        let edited = text.replacen(&title, &format!("{title}, saved"), 1);
        let outcome = store.checkin(&workspace, &edited, &Resolutions::default(), now).unwrap();
        assert_eq!(outcome.applied.len(), 1, "{:?}", outcome.plan);
        assert!(matches!(store.note(&scope, id).unwrap().state.status, Status::Superseded { .. }));
        text = outcome.document.unwrap().text;
        assert!(store.preview_checkin(&workspace, &text).unwrap().changes.is_empty());
    }
    // An id retyped to a note far from it: refused on its line; neither note changes.
    let (mine, theirs) = (id_of(&text, "Finding 100 about"), id_of(&text, "Finding 5 about"));
    let typed = text.replacen(&format!("[#{mine}]"), &format!("[#{theirs}]"), 1);
    let outcome = store.checkin(&workspace, &typed, &Resolutions::default(), now).unwrap();
    assert!(outcome.applied.is_empty(), "{:?}", outcome.plan);
    assert!(
        outcome.plan.diagnostics.iter().any(|d| d.message.contains("an id cannot be changed")),
        "{:?}",
        outcome.plan
    );
    for id in [mine, theirs] {
        let view = store.note(&scope, id).unwrap();
        assert_eq!(view.state.status, Status::Active, "#{id}");
    }
}
