//! Render and parse, pinned: a golden rendering of every kind and state, the
//! ordering rules, parser diagnostics, and the round-trip laws of docs/format.md
//! as property tests over generated stores.

use expect_test::expect;
use proptest::prelude::*;

use super::*;
use crate::lifecycle::{NoteState, Status};
use crate::model::{Anchor, NewNote, Note, Provenance, normalize_body, normalize_reason, normalize_title};
use crate::time::Timestamp;

const DAY: i64 = 86_400;

fn view(id: NoteId, kind: Kind, title: &str, body: &str, status: Status, reason: Option<&str>) -> NoteView {
    NoteView {
        note: Note {
            id,
            workspace: "/w".into(),
            content: NewNote {
                kind,
                priority: Priority::Medium,
                title: title.into(),
                body: body.into(),
                provenance: Provenance::Agent,
                quote: None,
                anchors: vec![],
            },
            created_at: Timestamp(1_785_542_400 + id * DAY / 3),
        },
        state: NoteState {
            status,
            status_at: Timestamp(1_786_000_000 + id * DAY),
            status_reason: reason.map(str::to_string),
            provenance: Provenance::Agent,
            live_since: Timestamp(0),
        },
    }
}

fn sample() -> Vec<NoteView> {
    let mut gotcha = view(
        412,
        Kind::Gotcha,
        "Workspace lock must be released before daemon restart",
        "",
        Status::Revoked,
        Some("wrong lock order"),
    );
    gotcha.note.content.anchors = vec![Anchor {
        path: "server/src/lock.rs".into(),
        start_line: 10,
        end_line: 24,
        content_sha256: Some("ab".into()),
    }];
    vec![
        view(398, Kind::Finding, "Index rebuild reuses the embed cache on unchanged files.", "", Status::Active, None),
        gotcha,
        view(
            4,
            Kind::Directive,
            "Run tests inside the venv, not the global interpreter.",
            "The global python lacks the pinned deps; `make test` activates .venv first.\n\n  indented code\n## not a heading",
            Status::Active,
            None,
        ),
        view(7, Kind::Task, "Port the cache", "", Status::Expired, Some("task notes expire")),
        view(9, Kind::Decision, "Use rustls", "", Status::Superseded { by: 415 }, None),
        view(415, Kind::Reference, "Use rustls 0.23 [#9] · see · notes", "", Status::Active, None),
        view(12, Kind::Operational, "Deploy with helm", "", Status::StaleFlagged, Some("chart moved")),
    ]
}

#[test]
fn golden_mirror_of_every_kind_and_state() {
    let text = render_views(&Flavour::Mirror, "larder", &sample());
    expect![[r#"
        <!-- mnemo mirror · read-only view of the memory store; edit through the memory view or `mnemo edit` -->
        # Memory · larder

        ## Directives

        - [#4] 2026-08-02 · medium · Run tests inside the venv, not the global interpreter.
          The global python lacks the pinned deps; `make test` activates .venv first.

            indented code
          ## not a heading

        ## Tasks

        - [#7] 2026-08-03 · medium · EXPIRED 2026-08-13 · Port the cache

        ## Gotchas

        - [#412] 2026-12-16 · medium · REVOKED 2027-09-22 (wrong lock order) · Workspace lock must be released before daemon restart
          [server/src/lock.rs:10-24](server/src/lock.rs#L10-L24)

        ## Findings

        - [#398] 2026-12-11 · medium · Index rebuild reuses the embed cache on unchanged files.

        ## References

        - [#415] 2026-12-17 · medium · Use rustls 0.23 [#9] · see · notes

        ## Decisions

        - [#9] 2026-08-04 · medium · SUPERSEDED 2026-08-15 by #415 · Use rustls

        ## Operational

        - [#12] 2026-08-05 · medium · STALE 2026-08-18 (chart moved) · Deploy with helm
    "#]]
    .assert_eq(&text);
}

#[test]
fn an_empty_workspace_renders_seven_empty_sections() {
    let text = render(&Flavour::Checkout { workspace: "/w".into(), epoch: 0 }, "w", &[]);
    expect![[r#"
        <!-- mnemo checkout · workspace /w · epoch 0 -->
        # Memory · w

        ## Directives

        ## Tasks

        ## Gotchas

        ## Findings

        ## References

        ## Decisions

        ## Operational
    "#]]
    .assert_eq(&text);
    let parsed = parse_checkout(&text);
    assert!(parsed.entries.is_empty() && parsed.diagnostics.is_empty());
    assert_eq!((parsed.workspace.as_deref(), parsed.epoch), (Some("/w"), Some(0)));
}

#[test]
fn entries_are_ordered_by_kind_then_id_whatever_the_input_order() {
    let mut views = vec![
        view(30, Kind::Gotcha, "c", "", Status::Active, None),
        view(2, Kind::Gotcha, "a", "", Status::Active, None),
        view(11, Kind::Gotcha, "b", "", Status::Active, None),
        view(5, Kind::Directive, "d", "", Status::Active, None),
        view(100, Kind::Task, "moved by supersession", "", Status::Active, None),
    ];
    let forward = render_views(&Flavour::Mirror, "w", &views);
    let titles: Vec<&str> =
        forward.lines().filter(|l| l.starts_with("- ")).map(|l| l.rsplit(" · ").next().unwrap()).collect();
    assert_eq!(titles, ["d", "moved by supersession", "a", "b", "c"]);
    views.reverse();
    assert_eq!(render_views(&Flavour::Mirror, "w", &views), forward);
    views.swap(0, 3);
    assert_eq!(render_views(&Flavour::Mirror, "w", &views), forward);
}

#[test]
fn new_entries_render_after_stored_ones_in_their_own_order() {
    let entry = |id: Option<NoteId>, title: &str| Entry {
        id,
        kind: Kind::Gotcha,
        created: id.map(|_| "2026-01-01".to_string()),
        priority: Priority::High,
        marker: None,
        title: title.into(),
        body: String::new(),
        anchors: vec![],
    };
    let text = render(&Flavour::Mirror, "w", &[entry(None, "new b"), entry(Some(3), "old"), entry(None, "new a")]);
    assert!(text.contains("- [#3] 2026-01-01 · high · old\n\n- high · new b\n\n- high · new a\n"), "{text}");
}

#[test]
fn the_mirror_is_read_for_its_entries_as_a_checkout_at_epoch_0() {
    let mirror = render_views(&Flavour::Mirror, "w", &sample());
    let parsed = parse_mirror_entries(&mirror);
    let body = mirror.split_once('\n').unwrap().1;
    let as_checkout = parse_checkout(&format!("<!-- mnemo checkout · workspace mirror · epoch 0 -->\n{body}"));
    assert!(!parsed.refused_mirror && parsed.epoch == Some(0));
    assert_eq!(parsed.entries.len(), sample().len());
    assert_eq!(format!("{parsed:?}"), format!("{as_checkout:?}"));
}

#[test]
fn the_parser_refuses_the_mirror() {
    let parsed = parse_checkout(&render_views(&Flavour::Mirror, "w", &sample()));
    assert!(parsed.refused_mirror);
    assert!(parsed.entries.is_empty());
    assert_eq!(parsed.diagnostics.len(), 1);
    assert!(parsed.diagnostics[0].message.starts_with("this is the read-only mirror"));
}

#[test]
fn parser_diagnostics_name_the_line_and_keep_going() {
    let text = "\
<!-- mnemo checkout · workspace /w · epoch x -->
# Memory · w

## Directives

- [#4] 2026-06-02 · high · Good entry
  body

- [#x] 2026-06-02 · high · Bad id

- [#5] 2026-13-02 · high · Bad date

- [#6] 2026-06-02 · urgent · Bad priority

- [#7] 2026-06-02 · low · REVOKED · no reason given

- low · a new entry
 one-space body

stray text

## Misc

- [#8] 2026-06-02 · low · under an unknown section
";
    let parsed = parse_checkout(text);
    let entries: Vec<(Option<NoteId>, &str)> =
        parsed.entries.iter().map(|e| (e.entry.id, e.entry.title.as_str())).collect();
    assert_eq!(entries, [(Some(4), "Good entry"), (None, "a new entry")]);
    assert_eq!(parsed.entries[1].entry.body, "one-space body");
    assert_eq!(parsed.epoch, None);
    let summary: Vec<String> =
        parsed.diagnostics.iter().map(|d| format!("{}: {:?}: {}", d.line + 1, d.severity, d.message)).collect();
    expect![[r#"
        1: Error: line 1 must be the checkout header `<!-- mnemo checkout · workspace <path> · epoch <N> -->`; restore it from a fresh checkout
        9: Error: '#x' is not a note id
        11: Error: '2026-13-02' is not a date (YYYY-MM-DD); an entry with an id reads `- [#id] YYYY-MM-DD · priority · title`
        13: Error: unknown priority 'urgent'; expected one of: high, medium, low
        15: Error: REVOKED needs a reason in parentheses: `REVOKED (why) · no reason given`
        18: Warning: body lines are indented by exactly two spaces
        20: Error: unexpected text; an entry starts with `- `, a section with `## `, and body lines are indented by two spaces
        22: Error: unknown section 'Misc'; sections are Directives, Tasks, Gotchas, Findings, References, Decisions, Operational
        24: Error: this entry is under no known section; move it under one of the seven `## ` sections"#]]
    .assert_eq(&summary.join("\n"));
}

#[test]
fn headers_titles_ids_and_indentation_are_checked_exactly() {
    let header = |line: &str| parse_checkout(&format!("{line}\n# Memory · w\n")).epoch;
    assert_eq!(header("<!-- mnemo checkout · workspace /w · epoch 12 -->"), Some(12));
    assert_eq!(header("<!-- mnemo checkout · workspace  · epoch 12 -->"), None, "empty workspace");
    assert_eq!(header("<!-- mnemo checkout · workspace /w · epoch  -->"), None, "empty epoch");
    assert_eq!(header("<!-- mnemo checkout · workspace /w · epoch -1 -->"), None);
    assert_eq!(header("<!-- mnemo checkout · workspace /w · epoch 12"), None);

    let text = "<!-- mnemo checkout · workspace /w · epoch 1 -->\n# Memory · w\n\n## Tasks\n\n- [#0] 2026-01-01 · low · zero\n\n- [#1] 2026-01-01 · low · ok\n   three spaces keep one\n \tmixed\n\n# Memory · again\n";
    let parsed = parse_checkout(text);
    assert_eq!(parsed.display_name.as_deref(), Some("w"));
    let found: Vec<(usize, usize, usize, &str)> =
        parsed.diagnostics.iter().map(|d| (d.line, d.start_column, d.end_column, d.message.as_str())).collect();
    assert_eq!(
        found,
        [
            (5, 0, 32, "'#0' is not a note id"),
            (9, 0, 2, "body lines are indented by exactly two spaces"),
            (11, 0, 17, "the `# Memory` title belongs on line 2 only"),
        ]
    );
    assert_eq!(parsed.entries[0].entry.body, " three spaces keep one\nmixed");
}

#[test]
fn the_memory_title_counts_only_on_line_2() {
    let late = parse_checkout("<!-- mnemo checkout · workspace /w · epoch 1 -->\n\n# Memory · late\n");
    assert_eq!(late.display_name, None);
    assert_eq!(late.diagnostics.len(), 1);
    assert_eq!(late.diagnostics[0].message, "the `# Memory` title belongs on line 2 only");
}

#[test]
fn only_exact_anchor_links_are_anchors() {
    let entry = |last: &str| {
        let text = format!(
            "<!-- mnemo checkout · workspace /w · epoch 1 -->\n# Memory · w\n\n## Tasks\n\n- low · t\n  {last}\n"
        );
        let parsed = parse_checkout(&text);
        let e = &parsed.entries[0].entry;
        (e.anchors.len(), e.body.clone())
    };
    assert_eq!(entry("[a.rs:1-2](a.rs#L1-L2)"), (1, String::new()));
    for not_anchor in [
        "[a.rs:1-2](b.rs#L1-L2)",
        "[a.rs:+1-2](a.rs#L1-L2)",
        "[a.rs:1-+2](a.rs#L1-L2)",
        "[:1-2](#L1-L2)",
        "[a.rs:01-2](a.rs#L1-L2)",
        "[a.rs:1-2](a.rs#L1-L2",
    ] {
        assert_eq!(entry(not_anchor), (0, not_anchor.to_string()), "{not_anchor}");
    }
}

#[test]
fn typed_markers_without_dates_parse() {
    let text = "<!-- mnemo checkout · workspace /w · epoch 3 -->\n# Memory · w\n\n## Gotchas\n\n- [#4] 2026-06-02 · high · REVOKED (wrong) · t\n\n- [#5] 2026-06-02 · high · STALE (moved) · u\n\n- [#6] 2026-06-02 · high · EXPIRED · v\n";
    let markers: Vec<Option<StateMarker>> =
        parse_checkout(text).entries.into_iter().map(|e| e.entry.marker.clone()).collect();
    assert_eq!(
        markers,
        [
            Some(StateMarker::Revoked { date: None, reason: "wrong".into() }),
            Some(StateMarker::Stale { date: None, reason: "moved".into() }),
            Some(StateMarker::Expired { date: None }),
        ]
    );
}

#[test]
fn crlf_and_lf_parse_alike() {
    let text = render_views(&Flavour::Checkout { workspace: "/w".into(), epoch: 1 }, "w", &sample());
    let crlf = text.replace('\n', "\r\n");
    assert_eq!(parse_checkout(&crlf).entries, parse_checkout(&text).entries);
}

// ---- generated stores -------------------------------------------------------

fn text_strategy(max: usize) -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        "[a-zA-Z0-9 ]{1,12}",
        Just("#".to_string()),
        Just("## ".to_string()),
        Just(" · ".to_string()),
        Just("[#12]".to_string()),
        Just("REVOKED (x) · ".to_string()),
        Just("STALE 2026-01-01 (y) · ".to_string()),
        Just("EXPIRED · ".to_string()),
        Just("SUPERSEDED 2026-01-01 by #3 · ".to_string()),
        Just("- ".to_string()),
        Just("`code`".to_string()),
        Just("*emph*".to_string()),
        Just("é漢🙂".to_string()),
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("  ".to_string()),
        Just("\t".to_string()),
        Just("[a.rs:1-2](a.rs#L1-L2)".to_string()),
        Just("\n[a.rs:1-2](a.rs#L1-L2)".to_string()),
        Just("\n- [#7] 2026-01-01 · high · an entry in a body".to_string()),
        Just("\n  - [#8] 2026-01-01 · low · indented".to_string()),
        Just("\\".to_string()),
        Just("\n\\- [#9]".to_string()),
        Just("<!-- ".to_string()),
        Just("x".repeat(300)),
    ];
    prop::collection::vec(pieces, 0..max).prop_map(|p| p.concat())
}

fn reason_strategy() -> impl Strategy<Value = String> {
    text_strategy(4).prop_map(|r| {
        let r = normalize_reason(&r);
        if r.is_empty() { "why".to_string() } else { r }
    })
}

fn status_strategy() -> impl Strategy<Value = (Status, Option<String>)> {
    prop_oneof![
        Just((Status::Active, None)),
        (1i64..10_000).prop_map(|by| (Status::Superseded { by }, None)),
        reason_strategy().prop_map(|r| (Status::Revoked, Some(r))),
        reason_strategy().prop_map(|r| (Status::StaleFlagged, Some(r))),
        Just((Status::Expired, None)),
    ]
}

pub(crate) fn store_strategy() -> impl Strategy<Value = Vec<NoteView>> {
    let note = (
        0usize..7,
        0usize..3,
        text_strategy(6),
        text_strategy(12),
        status_strategy(),
        prop::collection::vec(("[a-z_./]{0,12}[a-z]", 1u32..500, 0u32..50), 0..3),
        0i64..4_000_000_000,
        0i64..4_000_000_000,
    );
    prop::collection::vec(note, 0..24).prop_map(|notes| {
        notes
            .into_iter()
            .enumerate()
            .map(|(i, (kind, priority, title, body, (status, reason), anchors, created, status_at))| {
                let title = normalize_title(&title);
                let mut v = view(
                    (i as i64) * 3 + 1,
                    Kind::ALL[kind],
                    if title.is_empty() { "untitled" } else { &title },
                    &normalize_body(&body),
                    status,
                    reason.as_deref(),
                );
                v.note.content.priority = Priority::ALL[priority];
                v.note.created_at = Timestamp(created);
                v.state.status_at = Timestamp(status_at);
                v.note.content.anchors = anchors
                    .into_iter()
                    .map(|(path, start, len)| Anchor {
                        path,
                        start_line: start,
                        end_line: start + len,
                        content_sha256: None,
                    })
                    .collect();
                v
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn parse_of_render_is_the_stores_entries(views in store_strategy(), epoch in 0i64..1_000_000) {
        let flavour = Flavour::Checkout { workspace: "/home/me/proj · x".into(), epoch };
        let text = render_views(&flavour, "proj", &views);
        let parsed = parse_checkout(&text);
        prop_assert!(parsed.diagnostics.is_empty(), "{:?}\n{}", parsed.diagnostics, text);
        prop_assert_eq!(parsed.epoch, Some(epoch));
        prop_assert_eq!(parsed.workspace.as_deref(), Some("/home/me/proj · x"));
        let entries: Vec<Entry> = parsed.entries.into_iter().map(|e| std::sync::Arc::unwrap_or_clone(e.entry)).collect();
        prop_assert_eq!(entries, entries_of(&views));
    }

    #[test]
    fn render_of_parse_is_the_text(views in store_strategy(), epoch in 0i64..1_000_000) {
        let flavour = Flavour::Checkout { workspace: "/w".into(), epoch };
        let text = render_views(&flavour, "w", &views);
        let parsed = parse_checkout(&text);
        let entries: Vec<Entry> = parsed.entries.into_iter().map(|e| std::sync::Arc::unwrap_or_clone(e.entry)).collect();
        let name = parsed.display_name.unwrap();
        prop_assert_eq!(render(&Flavour::Checkout { workspace: parsed.workspace.unwrap(), epoch: parsed.epoch.unwrap() }, &name, &entries), text);
    }

    #[test]
    fn a_rendering_splits_into_its_entry_texts(views in store_strategy()) {
        let text = render_views(&Flavour::Mirror, "w", &views);
        let entries = entries_of(&views);
        let expected: Vec<(Kind, NoteId, String)> =
            entries.iter().map(|e| (e.kind, e.id.unwrap(), entry_text(e))).collect();
        let split: Vec<(Kind, NoteId, String)> = laid_out_entries(&text)
            .unwrap_or_else(|| panic!("not split:\n{text}"))
            .into_iter()
            .map(|(kind, id, entry)| (kind, id, entry.to_string()))
            .collect();
        prop_assert_eq!(&split, &expected);
        let size = expected.iter().map(|(_, _, t)| t.len()).sum();
        prop_assert_eq!(assemble(&Flavour::Mirror, "w", expected.iter().map(|(k, _, t)| (*k, t.as_str())), size), text);
    }

    #[test]
    fn rendering_is_canonical_text(views in store_strategy()) {
        let text = render_views(&Flavour::Mirror, "w", &views);
        prop_assert!(text.ends_with('\n') && !text.ends_with("\n\n"));
        prop_assert!(!text.contains('\r'));
        prop_assert!(!text.contains("\n\n\n") || views.iter().any(|v| v.note.content.body.contains("\n\n")));
        prop_assert!(text.lines().all(|l| l == l.trim_end()), "no trailing spaces");
    }

    #[test]
    fn the_parser_never_panics(text in "\\PC{0,400}", lines in prop::collection::vec("(- |## |  |\\[#|<!-- )?\\PC{0,40}", 0..30)) {
        let _ = parse_checkout(&text);
        let _ = parse_checkout(&lines.join("\n"));
        let _ = parse_checkout(&format!("<!-- mnemo checkout · workspace /w · epoch 1 -->\n# Memory · w\n\n## Tasks\n\n{}", lines.join("\n")));
    }
}

#[test]
fn only_a_laid_out_text_splits_into_entries() {
    let text = render_views(&Flavour::Mirror, "w", &[view(3, Kind::Task, "T", "b\n\n- [#9] x", Status::Active, None)]);
    let split = laid_out_entries(&text).unwrap();
    assert_eq!(split.iter().map(|(k, id, _)| (*k, *id)).collect::<Vec<_>>(), [(Kind::Task, 3)]);
    assert!(split[0].2.ends_with("\\- [#9] x"), "{text}");
    let broken = [
        text.replace("## Tasks", "## Chores"),
        text.replace("## Tasks", "## Tasks\nstray"),
        text.replace("## Tasks\n\n", "## Tasks\n\n\n"),
        text.replace("## Findings\n\n", ""),
        text.replace("- [#3]", "- [#x]"),
        text.replace("- [#3]", "- [3]"),
        text.replace("<!-- mnemo mirror", "<!-- someone's notes"),
        text.trim_end().to_string(),
        text.replace("## Tasks\n\n", "## Tasks\n\n- [#5] 2026-08-01 · low · A\n\n"),
    ];
    for text in broken {
        assert!(laid_out_entries(&text).is_none(), "{text}");
    }
}

#[test]
fn a_person_can_type_what_a_keyboard_has_and_is_told_what_is_missing() {
    let head = "<!-- mnemo checkout · workspace /w · epoch 1 -->\n# Memory · w\n\n## Tasks\n\n";
    // A new entry with an ASCII separator; a title may still hold ` · `.
    let ascii = parse_checkout(&format!("{head}- high - Typed with ASCII\n\n- low - A · b\n"));
    let titles: Vec<(Priority, &str)> =
        ascii.entries.iter().map(|e| (e.entry.priority, e.entry.title.as_str())).collect();
    assert_eq!(titles, [(Priority::High, "Typed with ASCII"), (Priority::Low, "A · b")]);
    assert!(ascii.diagnostics.is_empty(), "{:?}", ascii.diagnostics);
    // An id without its date says so, instead of "'high' is not a date".
    let no_date = parse_checkout(&format!("{head}- [#999] high · Forgot the date\n"));
    assert!(no_date.diagnostics[0].message.starts_with("the date is missing"), "{:?}", no_date.diagnostics);
    // A byte order mark before the header is no part of it.
    let bom = parse_checkout(&format!("\u{feff}{head}- low · After a BOM\n"));
    assert_eq!((bom.epoch, bom.entries.len()), (Some(1), 1), "{:?}", bom.diagnostics);
}

#[test]
fn an_entry_is_removed_from_a_checkout_as_if_never_rendered() {
    let with = "<!-- mnemo checkout · workspace /w · epoch 3 -->\n# Memory · w\n\n## Directives\n\n- [#1] 2026-06-02 · high · Keep\n\n- [#2] 2026-06-02 · high · Secret token here\n  body of the secret\n\n  more body\n\n- [#3] 2026-06-02 · low · Also kept\n\n## Tasks\n\n- [#4] 2026-06-02 · low · Last\n";
    let without = super::without_entry(with, 2);
    assert!(
        !without.contains("Secret") && !without.contains("body of the secret") && !without.contains("more body"),
        "{without}"
    );
    assert_eq!(
        without,
        with.replace("- [#2] 2026-06-02 · high · Secret token here\n  body of the secret\n\n  more body\n\n", "")
    );
    let last = super::without_entry(with, 4);
    assert_eq!(last, with.replace("\n- [#4] 2026-06-02 · low · Last\n", ""));
    assert_eq!(super::without_entry(with, 9), with);
}

#[test]
fn a_workspace_path_with_a_line_break_or_a_percent_keeps_the_header_one_line() {
    for workspace in ["/w/with\nnewline", "/w/100% sure", "/w/plain"] {
        let header = Flavour::Checkout { workspace: workspace.into(), epoch: 4 }.header();
        assert_eq!(header.lines().count(), 1, "{header}");
        let parsed = parse_checkout(&format!("{header}\n# Memory · w\n"));
        assert_eq!((parsed.workspace.as_deref(), parsed.epoch), (Some(workspace), Some(4)));
    }
}
