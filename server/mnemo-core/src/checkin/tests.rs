//! Check-in planning by data: every edit of docs/format.md's table, conflicts,
//! refusals, and the law that an unchanged checkout checks in as nothing.

use proptest::prelude::*;

use super::*;
use crate::memory_md::tests::store_strategy;
use crate::memory_md::{Flavour, entries_of, parse_checkout, render};

const BASE: &str = "\
<!-- mnemo checkout · workspace /w · epoch 7 -->
# Memory · w

## Directives

- [#1] 2026-06-02 · high · Run tests inside the venv
  The global python lacks the pinned deps.

## Tasks

## Gotchas

- [#2] 2026-06-03 · medium · Lock order matters
  [src/lock.rs:10-24](src/lock.rs#L10-L24)

- [#3] 2026-06-04 · low · STALE 2026-06-09 (lock.rs changed) · Daemon restarts need the lock

- [#4] 2026-06-04 · low · REVOKED 2026-06-09 (wrong) · Old advice

## Findings

- [#5] 2026-06-05 · medium · SUPERSEDED 2026-06-10 by #6 · Cache hit ratio is 0.91

- [#6] 2026-06-10 · medium · Cache hit ratio is 0.93

## References

## Decisions

## Operational
";

fn entries(text: &str) -> Vec<Entry> {
    parse_checkout(text).entries.into_iter().map(|e| std::sync::Arc::unwrap_or_clone(e.entry)).collect()
}

fn plan(edited: &str) -> CheckinPlan {
    let base = entries(BASE);
    plan_checkin(&base, &parse_checkout(edited), &base, &Resolutions::default())
}

fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

fn content_of(kind: Kind, priority: Priority, title: &str, body: &str) -> Content {
    Content { kind, priority, title: title.into(), body: body.into(), anchors: vec![] }
}

#[test]
fn an_unchanged_checkout_and_insignificant_whitespace_check_in_as_nothing() {
    assert_eq!(plan(BASE), CheckinPlan::default());
    let crlf = BASE.replace('\n', "\r\n");
    assert_eq!(plan(&crlf), CheckinPlan::default());
    let spaced = edit("Lock order matters", "Lock  order matters   ").replace("\n\n## Findings", "\n\n\n\n## Findings");
    let spaced = spaced.replace("pinned deps.", "pinned deps.   ");
    assert_eq!(plan(&spaced), CheckinPlan::default());
}

#[test]
fn each_edit_maps_to_its_change() {
    let cases: Vec<(String, Change)> = vec![
        (
            edit("- [#2] 2026-06-03 · medium · Lock order matters\n  [src/lock.rs:10-24](src/lock.rs#L10-L24)\n\n", ""),
            Change::Revoke { line: 0, id: 2, reason: DELETED_REASON.into() },
        ),
        (
            edit("medium · Lock order", "medium · REVOKED (wrong order) · Lock order"),
            Change::Revoke { line: 12, id: 2, reason: "wrong order".into() },
        ),
        (
            edit("medium · Lock order", "medium · STALE (lock.rs moved) · Lock order"),
            Change::FlagStale { line: 12, id: 2, reason: "lock.rs moved".into() },
        ),
        (edit("STALE 2026-06-09 (lock.rs changed) · ", ""), Change::Reinstate { line: 15, id: 3 }),
        (edit("REVOKED 2026-06-09 (wrong) · ", ""), Change::Reinstate { line: 17, id: 4 }),
        (
            edit("STALE 2026-06-09 (lock.rs changed)", "REVOKED (obsolete)"),
            Change::Revoke { line: 15, id: 3, reason: "obsolete".into() },
        ),
        (
            edit("Lock order matters", "Lock order: A before B"),
            Change::Supersede {
                line: 12,
                id: 2,
                content: Content {
                    anchors: vec![AnchorLink { path: "src/lock.rs".into(), start_line: 10, end_line: 24 }],
                    ..content_of(Kind::Gotcha, Priority::Medium, "Lock order: A before B", "")
                },
            },
        ),
        (
            edit("medium · Lock order matters", "high · Lock order matters"),
            Change::Supersede {
                line: 12,
                id: 2,
                content: Content {
                    anchors: vec![AnchorLink { path: "src/lock.rs".into(), start_line: 10, end_line: 24 }],
                    ..content_of(Kind::Gotcha, Priority::High, "Lock order matters", "")
                },
            },
        ),
        (
            edit("  [src/lock.rs:10-24](src/lock.rs#L10-L24)\n", ""),
            Change::Supersede {
                line: 12,
                id: 2,
                content: content_of(Kind::Gotcha, Priority::Medium, "Lock order matters", ""),
            },
        ),
        (
            edit("## Tasks\n\n", "## Tasks\n\n- high · Port the cache\n  Step 1 of 3.\n\n"),
            Change::Create {
                line: 10,
                content: content_of(Kind::Task, Priority::High, "Port the cache", "Step 1 of 3."),
            },
        ),
    ];
    for (text, expected) in cases {
        let plan = plan(&text);
        assert_eq!(plan.changes, vec![expected], "{:?}\n{text}", plan.diagnostics);
        assert!(plan.conflicts.is_empty() && plan.diagnostics.is_empty(), "{plan:?}");
    }
}

#[test]
fn a_proposal_is_accepted_by_deleting_its_marker_rejected_by_deleting_it_and_edited_like_any_note() {
    let proposal = "- [#7] 2026-06-11 · medium · PROPOSED 2026-06-11 · Bump the cache size\n";
    let base_text = BASE.replacen("## Tasks\n", &format!("## Tasks\n\n{proposal}"), 1);
    let base = entries(&base_text);
    assert_eq!(
        base.iter().find(|e| e.id == Some(7)).unwrap().marker,
        Some(StateMarker::Proposed { date: Some("2026-06-11".into()) })
    );
    let plan_of = |edited: &str| plan_checkin(&base, &parse_checkout(edited), &base, &Resolutions::default());
    let with = |to: &str| base_text.replacen(proposal, to, 1);
    assert_eq!(plan_of(&base_text).changes, [], "untouched, nothing");
    let accepted = plan_of(&with("- [#7] 2026-06-11 · medium · Bump the cache size\n"));
    assert!(matches!(accepted.changes[..], [Change::Accept { id: 7, .. }]), "{accepted:?}");
    let rejected = plan_of(&with(""));
    assert!(
        matches!(&rejected.changes[..], [Change::Revoke { id: 7, reason, .. }] if reason == REJECTED_REASON),
        "{rejected:?}"
    );
    let with_reason = plan_of(&with("- [#7] 2026-06-11 · medium · REVOKED (duplicates #2) · Bump the cache size\n"));
    assert!(matches!(&with_reason.changes[..], [Change::Revoke { id: 7, reason, .. }] if reason == "duplicates #2"));
    for edited in [
        "- [#7] 2026-06-11 · medium · PROPOSED 2026-06-11 · Bump the cache size to 2 GB\n",
        "- [#7] 2026-06-11 · medium · Bump the cache size to 2 GB\n",
    ] {
        let plan = plan_of(&with(edited));
        assert!(
            matches!(&plan.changes[..], [Change::Supersede { id: 7, content, .. }] if content.title == "Bump the cache size to 2 GB"),
            "a reviewer's edit replaces the proposal: {plan:?}"
        );
    }
    let typed = plan_of(&base_text.replace("· high · Run tests", "· high · PROPOSED · Run tests"));
    assert_eq!(typed.changes, []);
    assert!(typed.diagnostics.iter().any(|d| d.message.contains("#1: PROPOSED is set by mnemo")), "{typed:?}");
}

#[test]
fn moving_an_entry_to_another_section_supersedes_it_with_the_new_kind() {
    let moved = edit("## Decisions\n", "## Decisions\n\n- [#1] 2026-06-02 · high · Run tests inside the venv\n  The global python lacks the pinned deps.\n")
        .replacen("- [#1] 2026-06-02 · high · Run tests inside the venv\n  The global python lacks the pinned deps.\n\n", "", 1);
    let plan = plan(&moved);
    assert_eq!(plan.diagnostics, vec![]);
    assert!(
        matches!(&plan.changes[..], [Change::Supersede { id: 1, content, .. }] if content.kind == Kind::Decision),
        "{plan:?}"
    );
}

#[test]
fn refusals_name_the_entry_and_leave_the_rest_applied() {
    let text = edit("Cache hit ratio is 0.91", "Cache hit ratio is 0.92")
        .replace("- [#6] 2026-06-10 · medium · Cache hit ratio is 0.93", "- [#6] 2026-06-10 · medium · Cache hit ratio is 0.93\n\n- [#6] 2026-06-10 · medium · twice\n\n- [#99] 2026-06-10 · medium · unknown\n\n- [#2] 2026-01-01 · medium · Lock order matters")
        .replace("- [#2] 2026-06-03 · medium · Lock order matters\n  [src/lock.rs:10-24](src/lock.rs#L10-L24)\n\n", "")
        .replace("REVOKED 2026-06-09 (wrong) · Old advice", "EXPIRED · Old advice")
        .replace("## Tasks\n", "## Tasks\n\n- low · Still applied\n");
    let plan = plan(&text);
    let messages: Vec<String> = plan.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        messages,
        [
            "#4: EXPIRED is set by mnemo, not typed; use REVOKED (reason) instead".to_string(),
            "#5 was superseded by #6; edit #6".to_string(),
            "#6 appears twice; keep one entry per note".to_string(),
            "there is no note #99 in this workspace; remove the id to create a new note".to_string(),
            "the date of #2 is the note's creation date and cannot be changed".to_string(),
        ]
    );
    assert_eq!(
        plan.changes,
        vec![Change::Create { line: 10, content: content_of(Kind::Task, Priority::Low, "Still applied", "") }]
    );
}

#[test]
fn a_malformed_entry_is_reported_and_never_taken_as_deleted() {
    let plan = plan(&edit("- [#2] 2026-06-03 · medium · Lock order", "- [#2] 2026-06-03 · urgent · Lock order"));
    assert!(plan.changes.is_empty(), "{plan:?}");
    assert_eq!(plan.diagnostics.len(), 1);
    assert_eq!(plan.diagnostics[0].line, 12);
}

#[test]
fn typos_that_lose_an_entry_line_never_revoke_or_truncate_notes() {
    let cases = [
        edit("- [#2] 2026-06-03", "-[#2] 2026-06-03"),
        edit("- [#2] 2026-06-03", "[#2] 2026-06-03"),
        edit("\n\n- [#3] 2026-06-04", "\n  - [#3] 2026-06-04"),
        edit("  The global python lacks the pinned deps.", "The global python lacks the pinned deps."),
    ];
    for text in cases {
        let plan = plan(&text);
        assert!(plan.changes.is_empty(), "{text}\n{plan:?}");
        assert!(!plan.diagnostics.is_empty());
    }
    let marked_new = plan(&edit("## Tasks\n", "## Tasks\n\n- low · REVOKED (x) · New\n"));
    assert!(marked_new.changes.is_empty());
    assert_eq!(marked_new.diagnostics[0].message, "a new entry cannot carry a state marker; write it without one");
}

#[test]
fn an_entry_changed_on_both_sides_is_a_conflict_and_one_changed_only_in_the_store_is_nothing() {
    let base = entries(BASE);
    let current = entries(
        &edit("Lock order matters", "Lock order matters (agent edit)")
            .replace("Run tests inside the venv", "Run tests inside .venv"),
    );
    let mine = parse_checkout(&edit("medium · Lock order", "medium · REVOKED (mine) · Lock order"));
    let plan = plan_checkin(&base, &mine, &current, &Resolutions::default());
    assert!(plan.changes.is_empty(), "{plan:?}");
    assert_eq!(plan.conflicts.len(), 1);
    assert_eq!(plan.conflicts[0].id, 2);
    assert_eq!(plan.conflicts[0].theirs.as_ref().unwrap().title, "Lock order matters (agent edit)");
    assert_eq!(
        plan.diagnostics[0].message,
        "#2 changed in the store since this checkout; keep mine or take theirs \
         (mine: «revoked (mine) · medium · Lock order matters [Gotchas]»; \
         theirs: «medium · Lock order matters (agent edit) [Gotchas]»)"
    );
}

#[test]
fn checking_in_the_same_edit_twice_changes_nothing_the_second_time() {
    let base = entries(BASE);
    let edited_text = edit("medium · Lock order", "medium · REVOKED (wrong) · Lock order")
        .replace("## Tasks\n", "## Tasks\n\n- low · New task\n");
    let after_first = edited_text
        .replace("REVOKED (wrong)", "REVOKED 2026-06-20 (wrong)")
        .replace("- low · New task", "- [#7] 2026-06-20 · low · New task");
    let plan = plan_checkin(&base, &parse_checkout(&edited_text), &entries(&after_first), &Resolutions::default());
    assert_eq!(plan, CheckinPlan::default(), "both changes are already in the store");
    let deleted =
        edit("- [#2] 2026-06-03 · medium · Lock order matters\n  [src/lock.rs:10-24](src/lock.rs#L10-L24)\n\n", "");
    let plan = plan_checkin(
        &base,
        &parse_checkout(&deleted),
        &entries(&edit("medium · Lock order", "medium · REVOKED 2026-06-20 (deleted in MEMORY.md) · Lock order")),
        &Resolutions::default(),
    );
    assert_eq!(plan, CheckinPlan::default());
}

#[test]
fn a_broken_header_or_a_mirror_checks_in_nothing() {
    let broken = BASE.replacen("epoch 7", "epoch seven", 1).replace("Lock order matters", "Changed");
    let refused = plan(&broken);
    assert!(refused.changes.is_empty());
    assert!(refused.diagnostics.iter().any(|d| d.message.starts_with("nothing was checked in")));
    let mirror = BASE.replacen("<!-- mnemo checkout · workspace /w · epoch 7 -->", crate::memory_md::MIRROR_HEADER, 1);
    let refused = plan(&mirror);
    assert!(refused.changes.is_empty() && refused.diagnostics.len() == 1);
}

/// The store after an agent renamed #2 and the person revoked it in the file.
fn conflicting() -> (Vec<Entry>, ParsedCheckout, Vec<Entry>, String) {
    let current_text = edit("Lock order matters", "Lock order matters (agent edit)");
    let mine = edit("medium · Lock order", "medium · REVOKED (mine) · Lock order");
    (entries(BASE), parse_checkout(&mine), entries(&current_text), mine)
}

#[test]
fn keep_mine_applies_my_edit_on_the_stores_version_and_take_theirs_drops_it() {
    let (base, mine, current, _) = conflicting();
    let keep = Resolutions { keep_mine: [2].into(), ..Resolutions::default() };
    let plan = plan_checkin(&base, &mine, &current, &keep);
    assert_eq!(plan.changes, vec![Change::Revoke { line: 12, id: 2, reason: "mine".into() }]);
    assert!(plan.conflicts.is_empty() && plan.diagnostics.is_empty(), "{plan:?}");

    let take = Resolutions { take_theirs: [2].into(), ..Resolutions::default() };
    assert_eq!(plan_checkin(&base, &mine, &current, &take), CheckinPlan::default());

    let forgotten: Vec<Entry> = current.iter().filter(|e| e.id != Some(2)).cloned().collect();
    let plan = plan_checkin(&base, &mine, &forgotten, &keep);
    assert!(plan.changes.is_empty());
    assert!(plan.diagnostics[0].message.starts_with("#2 was forgotten in the store"), "{plan:?}");
}

#[test]
fn a_re_render_carries_what_was_not_applied_and_keeps_the_conflict() {
    let (base, _, current, _) = conflicting();
    // The person: revoked #2 (conflicts), typed an unknown id, added a good
    // entry and a broken line, and left #1 alone while the store refreshed it.
    let typed = edit("medium · Lock order", "medium · REVOKED (mine) · Lock order").replace(
        "## Tasks\n",
        "## Tasks\n\n- [#99] 2026-06-02 · low · Not a note\n\n- low · A new task\n\n- lowish · broken\n",
    );
    let edited = parse_checkout(&typed);
    let plan = plan_checkin(&base, &edited, &current, &Resolutions::default());
    assert_eq!(plan.changes.len(), 1, "{plan:?}");
    assert_eq!(plan.conflicts.len(), 1);

    // The store after applying the new task, at epoch 8.
    let store_now = "\
<!-- mnemo checkout · workspace /w · epoch 8 -->
# Memory · w

## Directives

- [#1] 2026-06-02 · high · Run tests inside .venv
  The global python lacks the pinned deps.

## Tasks

- [#7] 2026-06-20 · low · A new task

## Gotchas

- [#2] 2026-06-03 · medium · Lock order matters (agent edit)
  [src/lock.rs:10-24](src/lock.rs#L10-L24)

- [#3] 2026-06-04 · low · STALE 2026-06-09 (lock.rs changed) · Daemon restarts need the lock

- [#4] 2026-06-04 · low · REVOKED 2026-06-09 (wrong) · Old advice

## Findings

- [#5] 2026-06-05 · medium · SUPERSEDED 2026-06-10 by #6 · Cache hit ratio is 0.91

- [#6] 2026-06-10 · medium · Cache hit ratio is 0.93

## References

## Decisions

## Operational
";
    let carried = carry_over(&typed, &edited, &plan, &[], store_now, BASE);
    let expected = store_now
        .replace(
            "low · A new task\n",
            "low · A new task\n\n- [#99] 2026-06-02 · low · Not a note\n\n- lowish · broken\n",
        )
        .replace(
            "- [#2] 2026-06-03 · medium · Lock order matters (agent edit)",
            "- [#2] 2026-06-03 · medium · REVOKED (mine) · Lock order matters",
        );
    assert_eq!(carried.text, expected);
    assert_eq!(carried.base, store_now.replace(" (agent edit)", ""), "the conflict keeps its old base");
    assert_eq!(carried.moved.len(), 3);

    // Checking the new text in finds the same problems, on their new lines, and changes nothing.
    let again = plan_checkin(
        &entries(&carried.base),
        &parse_checkout(&carried.text),
        &entries(store_now),
        &Resolutions::default(),
    );
    assert!(again.changes.is_empty(), "{again:?}");
    assert_eq!(again.conflicts.iter().map(|c| (c.id, c.line)).collect::<Vec<_>>(), vec![(2, 18)]);
    let lines: Vec<usize> = again.diagnostics.iter().map(|d| d.line).collect();
    assert_eq!(lines, vec![14, 12, 18], "{again:?}");
}

#[test]
fn a_deletion_that_conflicts_stays_deleted_in_the_new_text() {
    let current = entries(&edit("Lock order matters", "Lock order matters (agent edit)"));
    let deleted =
        edit("- [#2] 2026-06-03 · medium · Lock order matters\n  [src/lock.rs:10-24](src/lock.rs#L10-L24)\n\n", "");
    let edited = parse_checkout(&deleted);
    let plan = plan_checkin(&entries(BASE), &edited, &current, &Resolutions::default());
    assert_eq!(plan.conflicts.len(), 1);
    let rendered = edit("Lock order matters", "Lock order matters (agent edit)");
    let carried = carry_over(&deleted, &edited, &plan, &[], &rendered, BASE);
    assert!(!carried.text.contains("Lock order"), "{}", carried.text);
    assert!(carried.base.contains("Lock order matters\n"));
    let again =
        plan_checkin(&entries(&carried.base), &parse_checkout(&carried.text), &current, &Resolutions::default());
    assert_eq!(again.conflicts.len(), 1);
}

/// One random edit of a rendered checkout, as a person might type it.
fn edit_script(text: &str, ops: &[(u8, usize)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for &(op, at) in ops {
        let entry_lines: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("- [#")).collect();
        if entry_lines.is_empty() {
            break;
        }
        let i = entry_lines[at % entry_lines.len()];
        match op % 7 {
            0 => {
                lines.remove(i);
            }
            1 => lines[i] = lines[i].replacen("low · ", "low · REVOKED (x) · ", 1),
            2 => lines[i].push_str(" (edited)"),
            3 => lines[i] = lines[i].replacen("medium · ", "medium · STALE (y) · ", 1),
            4 => lines.insert(i, "- high · Typed by a person".into()),
            5 => lines.insert(i + 1, "garbage without indentation".into()),
            _ => {
                let copy = lines[i].clone();
                lines.insert(i, copy);
            }
        }
    }
    lines.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn carrying_nothing_over_reproduces_the_rendering(views in store_strategy()) {
        let text = render(&Flavour::Checkout { workspace: "/w".into(), epoch: 3 }, "w", &entries_of(&views));
        let carried = carry_over(&text, &parse_checkout(&text), &CheckinPlan::default(), &[], &text, &text);
        prop_assert_eq!(&carried.text, &text);
        prop_assert_eq!(carried.base, text);
    }

    #[test]
    fn random_edits_never_panic_and_what_is_left_checks_in_as_nothing(
        views in store_strategy(),
        ops in proptest::collection::vec((any::<u8>(), any::<usize>()), 0..6),
    ) {
        let base = entries_of(&views);
        let text = render(&Flavour::Checkout { workspace: "/w".into(), epoch: 3 }, "w", &base);
        let typed = edit_script(&text, &ops);
        let edited = parse_checkout(&typed);
        let plan = plan_checkin(&base, &edited, &base, &Resolutions::default());
        // Pretend nothing was applied: everything with a problem is carried
        // into the unchanged rendering, and checking that in again is quiet
        // for every entry that was not carried.
        let carried = carry_over(&typed, &edited, &plan, &[], &text, &text);
        let again = plan_checkin(&base, &parse_checkout(&carried.text), &base, &Resolutions::default());
        let carried_lines: Vec<usize> = carried.moved.iter().map(|(_, to)| *to).collect();
        for change in &again.changes {
            let line = match change {
                Change::Create { line, .. } | Change::Revoke { line, .. } | Change::FlagStale { line, .. }
                | Change::Reinstate { line, .. } | Change::Supersede { line, .. } | Change::Accept { line, .. } => *line,
            };
            prop_assert!(line == 0 || carried_lines.contains(&line), "{change:?} in\n{}\nTYPED\n{typed}\nBASE\n{text}", carried.text);
        }
    }

    #[test]
    fn garbage_checks_in_as_nothing(text in "\\PC{0,400}") {
        let base = entries(BASE);
        let plan = plan_checkin(&base, &parse_checkout(&text), &base, &Resolutions::default());
        prop_assert!(plan.changes.is_empty());
        let _ = carry_over(&text, &parse_checkout(&text), &plan, &[], BASE, BASE);
    }

    #[test]
    fn arbitrary_text_under_a_valid_header_never_panics(body in "(\\PC|\n|  |- |## |\\[#[0-9]\\] ){0,120}") {
        let typed = format!("<!-- mnemo checkout · workspace /w · epoch 7 -->\n# Memory · w\n{body}");
        let base = entries(BASE);
        let edited = parse_checkout(&typed);
        let plan = plan_checkin(&base, &edited, &base, &Resolutions::default());
        let _ = carry_over(&typed, &edited, &plan, &[], BASE, BASE);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn an_unchanged_rendered_checkout_checks_in_as_zero_changes(views in store_strategy()) {
        let base = entries_of(&views);
        let text = render(&Flavour::Checkout { workspace: "/w".into(), epoch: 3 }, "w", &base);
        let plan = plan_checkin(&base, &parse_checkout(&text), &base, &Resolutions::default());
        prop_assert_eq!(plan, CheckinPlan::default());
    }
}

#[test]
fn a_retyped_id_is_refused_on_its_line_and_changes_no_other_note() {
    // #2 retyped as an unknown id: refused, and #2 is not taken as deleted.
    let unknown = plan(&edit("- [#2] 2026-06-03", "- [#999] 2026-06-03"));
    assert!(unknown.changes.is_empty(), "{unknown:?}");
    assert_eq!(unknown.diagnostics.len(), 1, "{unknown:?}");
    assert_eq!(unknown.diagnostics[0].line, 12);
    assert!(unknown.diagnostics[0].message.contains("#2"), "{}", unknown.diagnostics[0].message);

    // #2 retyped as #3, whose own entry is still there: #3 is not superseded with #2's text.
    let onto_known = plan(&edit("- [#2] 2026-06-03", "- [#3] 2026-06-03"));
    assert!(onto_known.changes.is_empty(), "{onto_known:?}");
    assert_eq!(onto_known.diagnostics.len(), 1, "{onto_known:?}");
    assert!(
        onto_known.diagnostics[0].message.starts_with("this entry is #2 (its date and text) with its id changed to #3"),
        "{}",
        onto_known.diagnostics[0].message
    );

    // Two ids swapped: neither note changes.
    let swapped = plan(
        &BASE
            .replace("- [#3] 2026-06-04 · low · STALE", "- [#X] 2026-06-04 · low · STALE")
            .replace("- [#4] 2026-06-04", "- [#3] 2026-06-04")
            .replace("- [#X] 2026-06-04", "- [#4] 2026-06-04"),
    );
    assert!(swapped.changes.is_empty(), "{swapped:?}");
    assert_eq!(swapped.diagnostics.len(), 2, "{swapped:?}");

    // Retyped and its title edited too: an unknown id still protects the note of that date and section.
    let edited_too = plan(&edit(
        "- [#2] 2026-06-03 · medium · Lock order matters",
        "- [#77] 2026-06-03 · medium · Lock order is key",
    ));
    assert!(edited_too.changes.is_empty(), "{edited_too:?}");
    assert!(edited_too.diagnostics[0].message.ends_with("(was this #2? an id cannot be changed)"), "{edited_too:?}");

    // An unrelated deletion in the same save still applies.
    let with_deletion = plan(
        &edit("- [#2] 2026-06-03", "- [#999] 2026-06-03")
            .replace("- [#6] 2026-06-10 · medium · Cache hit ratio is 0.93\n", ""),
    );
    assert_eq!(with_deletion.changes, vec![Change::Revoke { line: 0, id: 6, reason: DELETED_REASON.into() }]);
}

#[test]
fn editing_a_note_fully_is_still_a_supersession_not_a_retyped_id() {
    let rewritten = plan(&edit(
        "- [#2] 2026-06-03 · medium · Lock order matters\n  [src/lock.rs:10-24](src/lock.rs#L10-L24)",
        "- [#2] 2026-06-03 · medium · Take locks in id order\n  Always a before b.",
    ));
    assert_eq!(rewritten.diagnostics, vec![], "{rewritten:?}");
    assert!(matches!(rewritten.changes.as_slice(), [Change::Supersede { id: 2, .. }]), "{rewritten:?}");
}

#[test]
fn keep_mine_on_a_note_the_store_superseded_supersedes_its_successor() {
    // Someone else superseded #2 by #7 meanwhile; I retitled #2.
    let current_text = edit(
        "- [#2] 2026-06-03 · medium · Lock order matters\n  [src/lock.rs:10-24](src/lock.rs#L10-L24)",
        "- [#2] 2026-06-03 · medium · SUPERSEDED 2026-06-11 by #7 · Lock order matters\n  [src/lock.rs:10-24](src/lock.rs#L10-L24)\n\n- [#7] 2026-06-11 · medium · Lock order matters, theirs\n  [src/lock.rs:10-24](src/lock.rs#L10-L24)",
    );
    let mine = parse_checkout(&edit("medium · Lock order matters", "high · Lock order matters, mine"));
    let base = entries(BASE);
    let current = entries(&current_text);
    let conflict = plan_checkin(&base, &mine, &current, &Resolutions::default());
    assert_eq!(conflict.conflicts.len(), 1, "{conflict:?}");
    assert!(
        conflict.diagnostics[0].message.contains("theirs: superseded by #7: «medium · Lock order matters, theirs"),
        "{conflict:?}"
    );
    let keep = Resolutions { keep_mine: [2].into(), ..Resolutions::default() };
    let plan = plan_checkin(&base, &mine, &current, &keep);
    assert!(plan.diagnostics.is_empty() && plan.conflicts.is_empty(), "{plan:?}");
    match plan.changes.as_slice() {
        [Change::Supersede { id: 7, content, .. }] => {
            assert_eq!((content.priority, content.title.as_str()), (Priority::High, "Lock order matters, mine"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_retyped_entry_carried_back_beside_its_restored_note_says_what_it_is() {
    // After a refused retype the re-render shows #2 again and the typed copy under #3's id.
    let text = edit(
        "- [#6] 2026-06-10 · medium · Cache hit ratio is 0.93\n",
        "- [#6] 2026-06-10 · medium · Cache hit ratio is 0.93\n\n- [#3] 2026-06-10 · medium · Cache hit ratio is 0.93\n",
    );
    let plan = plan(&text);
    assert!(plan.changes.is_empty(), "{plan:?}");
    assert_eq!(plan.diagnostics.len(), 1, "{plan:?}");
    assert!(
        plan.diagnostics[0].message.starts_with("this entry repeats #6 (its date and text) under the id #3"),
        "{plan:?}"
    );
}

/// `current` cut down to what a store reads for a check-in: the consulted
/// notes, the notes created since the checkout, and their successors.
fn only_consulted(base: &[Entry], edited: &ParsedCheckout, current: &[Entry]) -> Vec<Entry> {
    let wanted = consulted(base, edited, &Resolutions::default());
    let in_base: HashSet<NoteId> = base.iter().filter_map(|e| e.id).collect();
    let by_id: HashMap<NoteId, &Entry> = current.iter().filter_map(|e| Some((e.id?, e))).collect();
    let mut ids: Vec<NoteId> = wanted.ids.iter().copied().collect();
    if wanted.created_since_checkout {
        ids.extend(by_id.keys().filter(|id| !in_base.contains(id)));
    }
    let mut kept: HashMap<NoteId, Entry> = HashMap::default();
    while let Some(id) = ids.pop() {
        let Some(entry) = by_id.get(&id) else { continue };
        if kept.insert(id, (*entry).clone()).is_none()
            && let Some(crate::memory_md::StateMarker::Superseded { by, .. }) = &entry.marker
        {
            ids.push(*by);
        }
    }
    kept.into_values().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A store reads only the consulted notes for a check-in; the plan is
    /// the same as against every note of the workspace.
    #[test]
    fn planning_against_the_consulted_notes_is_planning_against_all(
        views in store_strategy(),
        now in store_strategy(),
        ops in proptest::collection::vec((any::<u8>(), any::<usize>()), 0..6),
    ) {
        let base = entries_of(&views);
        let text = render(&Flavour::Checkout { workspace: "/w".into(), epoch: 3 }, "w", &base);
        let edited = parse_checkout(&edit_script(&text, &ops));
        for current in [base.clone(), entries_of(&now)] {
            let all = plan_checkin(&base, &edited, &current, &Resolutions::default());
            let some = plan_checkin(&base, &edited, &only_consulted(&base, &edited, &current), &Resolutions::default());
            prop_assert_eq!(all, some);
        }
    }
}

#[test]
fn an_untouched_checkout_consults_nothing_and_each_kind_of_edit_its_notes() {
    let base = entries(BASE);
    let none = consulted(&base, &parse_checkout(BASE), &Resolutions::default());
    assert_eq!(none, Consulted::default());
    let retitled = consulted(
        &base,
        &parse_checkout(&edit("Lock order matters", "Lock order matters a lot")),
        &Resolutions::default(),
    );
    assert_eq!(retitled.ids, HashSet::from([2]));
    let deleted = consulted(
        &base,
        &parse_checkout(&edit("- [#4] 2026-06-04 · low · REVOKED 2026-06-09 (wrong) · Old advice\n", "")),
        &Resolutions::default(),
    );
    assert_eq!(deleted.ids, HashSet::from([4]));
    let added = consulted(
        &base,
        &parse_checkout(&edit("## Tasks\n\n", "## Tasks\n\n- high · Port the cache\n\n")),
        &Resolutions::default(),
    );
    assert!(added.ids.is_empty() && added.created_since_checkout);
}

/// [`edit_script`]'s edits, and those that reach outside the part of the
/// text they touch: an id retyped (to another note's, or to none of
/// them), an entry moved or copied elsewhere, a title and body rewritten.
fn edit_anywhere(text: &str, ops: &[(u8, usize, usize)]) -> String {
    let mut text = text.to_string();
    for &(op, at, to) in ops {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let entry_lines: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("- [#")).collect();
        if entry_lines.is_empty() {
            break;
        }
        let (i, j) = (entry_lines[at % entry_lines.len()], entry_lines[to % entry_lines.len()]);
        match op % 11 {
            7 => {
                let digits = |line: &str| {
                    line.find("[#").map(|at| line[at + 2..].chars().take_while(char::is_ascii_digit).count())
                };
                let other = lines[j].clone();
                if let (Some(n), Some(m)) = (digits(&lines[i]), digits(&other)) {
                    let new_id = if to % 3 == 0 { "999".to_string() } else { other[3..3 + m].to_string() };
                    lines[i].replace_range(3..3 + n, &new_id);
                }
            }
            8 => {
                let line = lines.remove(i);
                lines.insert(j.min(lines.len()), line);
            }
            9 => {
                let line = lines[i].clone();
                lines.insert(j, line);
            }
            10 => {
                let line = lines[i].clone();
                let cut = line.rfind(" · ").map_or(line.len(), |at| at + 3);
                lines[i] = format!("{}Rewritten entirely", &line[..cut]);
                if lines.get(i + 1).is_some_and(|next| next.starts_with("  ")) {
                    lines[i + 1] = "  and a new body too".into();
                }
            }
            _ => {
                text = edit_script(&text, &[(op % 7, at)]);
                continue;
            }
        }
        text = lines.join("\n") + "\n";
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// An edit parsed beside its base shares the entries it left alone, and
    /// the plan then looks only at the window between them (`window.rs`):
    /// the same plan, and the same notes consulted, as for the edit parsed
    /// by itself (no entry shared: the whole edit is its window).
    #[test]
    fn a_plan_of_the_edits_window_is_the_plan_of_the_whole_edit(
        views in store_strategy(),
        now in store_strategy(),
        ops in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 0..4),
        keep in proptest::collection::vec(any::<usize>(), 0..2),
        take in proptest::collection::vec(any::<usize>(), 0..2),
    ) {
        let text = render(&Flavour::Checkout { workspace: "/w".into(), epoch: 3 }, "w", &entries_of(&views));
        let parsed_base = parse_checkout(&text);
        let base: Vec<std::sync::Arc<Entry>> = parsed_base.entries.iter().map(|e| e.entry.clone()).collect();
        let typed = edit_anywhere(&text, &ops);
        let beside = crate::memory_md::parse_checkout_beside(&text, &parsed_base, &typed);
        let alone = parse_checkout(&typed);
        let ids: Vec<NoteId> = base.iter().filter_map(|e| e.id).chain([999]).collect();
        let named = |picks: &[usize]| picks.iter().map(|at| ids[at % ids.len()]).collect::<HashSet<NoteId>>();
        for resolutions in [Resolutions::default(), Resolutions { keep_mine: named(&keep), take_theirs: named(&take) }] {
            prop_assert_eq!(consulted(&base, &beside, &resolutions), consulted(&base, &alone, &resolutions));
            for current in [entries_of(&views), entries_of(&now)] {
                prop_assert_eq!(
                    plan_checkin(&base, &beside, &current, &resolutions),
                    plan_checkin(&base, &alone, &current, &resolutions),
                    "typed:\n{}", typed
                );
            }
        }
    }
}

#[test]
fn the_window_holds_what_the_person_changed_and_the_whole_edit_when_an_entry_reaches_outside_it() {
    use crate::memory_md::parse_checkout_beside;
    let mut views = Vec::new();
    let mut text = String::from("<!-- mnemo checkout · workspace /w · epoch 7 -->\n# Memory · w\n\n## Findings\n\n");
    for id in 1..=200 {
        text.push_str(&format!("- [#{id}] 2026-06-{:02} · medium · Finding number {id}\n\n", id % 28 + 1));
        views.push(id);
    }
    let parsed_base = parse_checkout(&text);
    let base: Vec<std::sync::Arc<Entry>> = parsed_base.entries.iter().map(|e| e.entry.clone()).collect();
    assert_eq!(base.len(), 200);
    let window_of = |typed: &str| {
        let edited = parse_checkout_beside(&text, &parsed_base, typed);
        (window::window(&base, &edited, &Resolutions::default()), edited)
    };
    // One entry retitled: the window is that entry, and the plan supersedes it.
    let retitled = text.replace("Finding number 120\n", "Finding number 120, retitled\n");
    let (window, edited) = window_of(&retitled);
    // (The reparse reads the entry before a change again too.)
    assert!(window.edited.contains(&119) && window.edited.len() <= 2 && window.base == window.edited, "{window:?}");
    let plan = plan_checkin(&base, &edited, &entries(&text), &Resolutions::default());
    assert!(matches!(plan.changes.as_slice(), [Change::Supersede { id: 120, .. }]), "{plan:?}");
    // One deleted and one added: the window spans the two.
    let typed = text.replace("- [#50] 2026-06-23 · medium · Finding number 50\n\n", "").replace(
        "- [#60] 2026-06-05 · medium · Finding number 60\n",
        "- medium · A new finding\n\n- [#60] 2026-06-05 · medium · Finding number 60\n",
    );
    let (window, _) = window_of(&typed);
    assert!(window.base.start >= 47 && window.base.start <= 49 && window.base.end == 59, "{window:?}");
    assert_eq!(window.edited.end, 59, "{window:?}");
    // An id retyped to another note's, a copy of an entry of the far end,
    // a new id: each reaches outside, and the window is the whole edit.
    for typed in [
        text.replace("[#120] ", "[#3] "),
        text.replace("Finding number 120\n", "Finding number 120\n\n- [#3] 2026-06-04 · medium · Finding number 3\n"),
        text.replace("[#120] ", "[#999] "),
    ] {
        let (window, edited) = window_of(&typed);
        assert!(
            !window.narrowed(200, edited.entries.len()),
            "{window:?} {}",
            &typed[typed.find("#11").unwrap_or(0)..][..300]
        );
    }
    // An entry rewritten as an exact copy of a note far from it (the same
    // day) is still refused as that copy, from within its window.
    let typed = text.replace("Finding number 120\n", "Finding number 92\n");
    let (window, edited) = window_of(&typed);
    assert!(window.edited.len() <= 2 && !window.edited.contains(&91), "{window:?}");
    let plan = plan_checkin(&base, &edited, &entries(&text), &Resolutions::default());
    assert!(plan.diagnostics.iter().any(|d| d.message.contains("repeats #92")), "{plan:?}");
    assert_eq!(plan, plan_checkin(&base, &parse_checkout(&typed), &entries(&text), &Resolutions::default()));
    // A problem the parse found keeps its entry inside the window.
    let typed = retitled.replace("Finding number 20\n", "Finding number 20\nstray words at the margin\n");
    let (window, _) = window_of(&typed);
    assert!(window.edited.start <= 19 && window.edited.end == 120, "{window:?}");
}
