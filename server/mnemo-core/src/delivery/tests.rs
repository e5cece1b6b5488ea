use super::*;
use crate::lifecycle::created;
use crate::model::{Anchor, NewNote, Note, Priority, Provenance};

fn view(id: NoteId, kind: Kind, title: &str, body: &str, anchor: Option<&str>) -> NoteView {
    let anchors = anchor
        .map(|path| vec![Anchor { path: path.into(), start_line: 1, end_line: 3, content_sha256: None }])
        .unwrap_or_default();
    let content = NewNote {
        kind,
        priority: Priority::Medium,
        title: title.into(),
        body: body.into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors,
    };
    let note = Note { id, workspace: "/w".into(), content, created_at: Timestamp(0) };
    NoteView { note, state: created(Provenance::Agent, Timestamp(0)) }
}

fn store() -> Vec<NoteView> {
    vec![
        view(1, Kind::Directive, "Run the tests in the venv", "", None),
        view(2, Kind::Gotcha, "connect() needs timeout=30", "Two writers lock.", Some("src/db.py")),
        view(3, Kind::Finding, "The CSS bundle is built with esbuild", "", None),
        view(4, Kind::Operational, "Clear analysis.ipynb outputs", "nbconvert --clear-output", None),
        view(5, Kind::Gotcha, "Never log src/secrets.py", "It holds keys.", None),
    ]
}

#[test]
fn session_start_selects_directives_in_full_and_lists_the_rest_newest_first() {
    let selection = at_start(&store(), &TriggerBundles::default(), Moment::SessionStart);
    let ids = |views: &[NoteView]| views.iter().map(|v| v.note.id).collect::<Vec<_>>();
    assert_eq!(ids(&selection.directives), [1]);
    assert!(selection.configured.is_empty());
    assert_eq!(ids(&selection.recent), [5, 4, 3, 2]);
    let bundles = TriggerBundles::default().with_bundle(Kind::Finding, &["session-start".into()]).unwrap();
    let selection = at_start(&store(), &bundles, Moment::SessionStart);
    assert_eq!(ids(&selection.configured), [3]);
    assert_eq!(ids(&selection.recent), [5, 4, 2], "a kind delivered whole is not listed too");
}

#[test]
fn before_an_edit_the_notes_anchored_to_the_file_or_naming_it() {
    let files = |f: &[&str]| f.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let ids = |views: Vec<NoteView>| views.iter().map(|v| v.note.id).collect::<Vec<_>>();
    let bundles = TriggerBundles::default();
    assert_eq!(ids(before_edit(store(), &files(&["src/db.py"]), &bundles)), [2]);
    assert_eq!(ids(before_edit(store(), &files(&["analysis.ipynb"]), &bundles)), [4], "named in the title");
    assert_eq!(ids(before_edit(store(), &files(&["src/secrets.py", "src/db.py"]), &bundles)), [2, 5]);
    assert!(before_edit(store(), &files(&["README.md"]), &bundles).is_empty());
    assert!(before_edit(store(), &files(&["src/db.py"]), &bundles.with_bundle(Kind::Gotcha, &[]).unwrap()).is_empty());
}

#[test]
fn listed_is_not_delivered_and_delivered_holds_until_the_status_changes() {
    let mut told = Told::default();
    let notes = store();
    let mut budget = Budget::from_tokens(1500);
    let lines = listed(&notes[1..3], Timestamp(0), &mut told, &mut budget);
    assert_eq!(lines.len(), 2);
    assert!(listed(&notes[1..3], Timestamp(0), &mut told, &mut budget).is_empty(), "listed once");
    assert_eq!(told.not_yet_delivered(notes.clone()).len(), 5, "a listed note is not delivered");

    let lines = in_full(&notes[1..2], TitleLine::Index, Timestamp(0), &mut told, &mut budget);
    assert_eq!(
        lines,
        [
            "- [#2] gotcha/medium · agent · connect() needs timeout=30 · now (recorded by an agent session; verify before relying on it)",
            "  Two writers lock."
        ]
    );
    assert!(told.holds(&notes[1]));
    let mut stale = notes[1].clone();
    stale.state.status = Status::StaleFlagged;
    assert!(!told.holds(&stale), "a new status is a new version");
    told.forget_all();
    assert!(!told.holds(&notes[1]));
}

#[test]
fn notes_delivered_whole_go_out_high_priority_first() {
    let mut notes = vec![
        view(1, Kind::Directive, "low", "", None),
        view(2, Kind::Directive, "high", "", None),
        view(3, Kind::Directive, "medium", "", None),
        view(4, Kind::Directive, "high too", "", None),
    ];
    notes[0].note.content.priority = Priority::Low;
    notes[1].note.content.priority = Priority::High;
    notes[3].note.content.priority = Priority::High;
    let selection = at_start(&notes, &TriggerBundles::default(), Moment::SessionStart);
    let ids: Vec<NoteId> = selection.directives.iter().map(|v| v.note.id).collect();
    assert_eq!(ids, [2, 4, 3, 1]);
}

#[test]
fn what_the_budget_leaves_out_of_the_list_is_named_at_its_end() {
    let mut told = Told::default();
    let notes = store();
    let first = framed_index_line(&notes[1], Timestamp(0));
    let mut budget = Budget(first.len() + 5);
    let lines = listed(&notes[1..4], Timestamp(0), &mut told, &mut budget);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0], first);
    assert!(lines[1].starts_with("2 more notes left out for the budget: #3, #4 ("), "{lines:?}");
    assert!(!told.listed.contains(&3), "what was left out is not recorded as listed");
}

#[test]
fn a_body_the_budget_cut_was_not_delivered_in_full() {
    let mut told = Told::default();
    let long = view(9, Kind::Gotcha, "Long", &"a line of detail\n".repeat(400), None);
    let mut budget = Budget(400);
    let lines = in_full(std::slice::from_ref(&long), TitleLine::Plain, Timestamp(0), &mut told, &mut budget);
    assert!(lines.last().unwrap().contains("`mnemo expand 9`"), "{lines:?}");
    assert!(!told.holds(&long) && told.listed.contains(&9));
}

#[test]
fn what_a_session_start_cuts_is_what_the_hook_would_cut() {
    let short = view(1, Kind::Directive, "Short", "one line", None);
    let long = view(2, Kind::Directive, "Long", &"a line of detail\n".repeat(100), None);
    let selection = StartSelection { directives: vec![short.clone(), long.clone()], ..StartSelection::default() };
    assert_eq!(cut_at_start(&selection, Timestamp(0), 200), [2], "1,700 characters do not fit 800");
    assert!(cut_at_start(&selection, Timestamp(0), DEFAULT_HOOK_TOKENS).is_empty());
    // The same as printing it: the hook's record of what went out whole agrees.
    let (mut told, mut budget) = (Told::default(), Budget::from_tokens(200));
    in_full(&selection.directives, TitleLine::Plain, Timestamp(0), &mut told, &mut budget);
    assert!(told.holds(&short) && !told.holds(&long));
    let said = crate::load_budget::describe_start_cut(&[2], 200).unwrap();
    assert!(
        said.starts_with("the session-start hook cuts the body of #2 at its default --budget 200 tokens"),
        "{said}"
    );
}
