//! Parsing an edited checkout beside its base, in proportion to the edit:
//! a checkout is read again and again while a person edits a few entries
//! of it (a preview at every pause, then the check-in), and its base — the
//! text it was checked out as — is parsed already.
//!
//! The bytes the two texts share at the start and at the end are not read
//! again. Only the lines between are, from the last entry of the base that
//! starts before the first changed line (an entry line is read the same
//! whatever stood above it but the section, which that entry names) up to
//! the first entry of the base that starts after the last changed one; what
//! the base's parse found before and after is taken over, the lines after
//! shifted by the lines the edit added or removed. The result is what
//! [`parse_checkout`] gives for the whole text (a property test holds them
//! equal over random edits). A header that names another epoch of the same
//! workspace is read by itself (a check-in's new rendering is parsed beside
//! the edit it came from, to be the next edit's base). Where that cannot be
//! shown cheaply — another workspace or a broken header, a changed title, a
//! section that differs where the two meet again, a byte order mark — the
//! whole text is parsed.

use super::parse::{ParsedCheckout, checkout_header, parse_body, parse_checkout, text_lines};

/// [`parse_checkout`] of `text`, reading again only what differs from
/// `base_text`, whose parse is `base`.
pub fn parse_checkout_beside(base_text: &str, base: &ParsedCheckout, text: &str) -> ParsedCheckout {
    reparse(base_text, base, text).unwrap_or_else(|| parse_checkout(text))
}

fn reparse(base_text: &str, base: &ParsedCheckout, text: &str) -> Option<ParsedCheckout> {
    if base.refused_mirror || base_text.starts_with('\u{feff}') || text.starts_with('\u{feff}') {
        return None;
    }
    let (old, new) = (base_text.as_bytes(), text.as_bytes());
    // A header that names another epoch of the same workspace (the text a
    // check-in rendered, beside the edit it came from) is read by itself;
    // the rest is compared from the line after it in each text.
    let (epoch, old_start, new_start) = match (header_end(old), header_end(new)) {
        (o, n) if old[..o] == new[..n] => (base.epoch, 0, 0),
        (o, n) => match (checkout_header(base_text), checkout_header(text)) {
            (Some((was, _)), Some((workspace, epoch)))
                if was == workspace && base.workspace.as_ref() == Some(&workspace) =>
            {
                (Some(epoch), o, n)
            }
            _ => return None, // read with the whole text
        },
    };
    let (old_rest, new_rest) = (&old[old_start..], &new[new_start..]);
    let shared = common_prefix(old_rest, new_rest);
    if shared == old_rest.len() && shared == new_rest.len() {
        return Some(ParsedCheckout { epoch, ..base.clone() });
    }
    let (prefix_old, prefix_new) = (old_start + shared, new_start + shared);
    let room = old_rest.len().min(new_rest.len()) - shared;
    let suffix = common_suffix(&old[old.len() - room..], &new[new.len() - room..]);
    // Lines are counted by newlines (a `\r` before one is part of its line);
    // the header is one line in both texts.
    let first_changed = newlines(&new[..prefix_new]);
    if first_changed < 2 {
        return None; // the title (or a header that is no header): read with the whole text
    }
    let last_changed_old = first_changed + newlines(&old[prefix_old..old.len() - suffix]);
    let last_changed_new = first_changed + newlines(&new[prefix_new..new.len() - suffix]);

    // From the last base entry that starts before the change, in its section.
    let restart_entry = base.entries.iter().rposition(|e| e.first_line < first_changed);
    let (restart, section) = match restart_entry {
        Some(at) => (base.entries[at].first_line, Some(base.entries[at].entry.kind)),
        None => (1, None),
    };
    // To the first base entry that starts after it, where the texts meet again.
    let stop_entry = base.entries.iter().position(|e| e.first_line > last_changed_old);
    let (stop_old, stop_new) = match stop_entry {
        Some(at) => {
            let line = base.entries[at].first_line;
            // `line` is past the last changed line, so this never goes below zero.
            (line, line - last_changed_old + last_changed_new)
        }
        None => (newlines(old) + 1, newlines(new) + 1),
    };

    let mut out = ParsedCheckout {
        workspace: base.workspace.clone(),
        epoch,
        display_name: if restart > 1 { base.display_name.clone() } else { None },
        ..ParsedCheckout::default()
    };
    out.entries.extend(base.entries[..restart_entry.unwrap_or(0)].iter().cloned());
    out.diagnostics.extend(base.diagnostics.iter().filter(|d| d.line < restart).cloned());
    out.unreadable_ids.extend(base.unreadable_ids.iter().filter(|(line, _)| *line < restart).copied());

    let window = lines_between(text, restart, stop_new);
    let section_after = parse_body(&window, restart, section, &mut out);
    if let Some(at) = stop_entry
        && section_after != Some(base.entries[at].entry.kind)
    {
        return None; // the edit changed which section the rest is in
    }

    let shift = |line: usize| line - stop_old + stop_new;
    out.entries.extend(base.entries[stop_entry.unwrap_or(base.entries.len())..].iter().map(|e| {
        let mut e = e.clone();
        (e.first_line, e.last_line) = (shift(e.first_line), shift(e.last_line));
        e
    }));
    out.diagnostics.extend(base.diagnostics.iter().filter(|d| d.line >= stop_old).map(|d| {
        let mut d = d.clone();
        d.line = shift(d.line);
        d
    }));
    out.unreadable_ids
        .extend(base.unreadable_ids.iter().filter(|(line, _)| *line >= stop_old).map(|(line, id)| (shift(*line), *id)));
    Some(out)
}

/// Where the first line ends (after its newline), or the text's length.
fn header_end(bytes: &[u8]) -> usize {
    memchr::memchr(b'\n', bytes).map_or(bytes.len(), |at| at + 1)
}

fn newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Compared a block at a time, then byte by byte.
const BLOCK: usize = 256;

/// How many bytes `a` and `b` share at their start.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let blocks = a.chunks(BLOCK).zip(b.chunks(BLOCK)).take_while(|(x, y)| x == y).count();
    let at = blocks * BLOCK;
    at.min(a.len()).min(b.len())
        + a[at.min(a.len())..].iter().zip(&b[at.min(b.len())..]).take_while(|(x, y)| x == y).count()
}

/// How many bytes `a` and `b` share at their end.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let blocks = a.rchunks(BLOCK).zip(b.rchunks(BLOCK)).take_while(|(x, y)| x == y).count();
    let matched = (blocks * BLOCK).min(a.len()).min(b.len());
    let (a, b) = (&a[..a.len() - matched], &b[..b.len() - matched]);
    matched + a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count()
}

/// Lines `from..to` of `text` (0-based), as the parser reads lines.
fn lines_between(text: &str, from: usize, to: usize) -> Vec<&str> {
    text_lines(text).skip(from).take(to - from).collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::memory_md::tests::store_strategy;
    use crate::memory_md::{Flavour, entries_of, render};

    /// Lines a person (or a broken paste) might put anywhere.
    const TYPED: &[&str] = &[
        "- [#7] 2026-06-02 · high · Typed with an id",
        "- high · A new one",
        "- [#oops] broken",
        "## Gotchas",
        "## Tasks",
        "## Not a section",
        "  a body line",
        "  [src/a.rs:1-2](src/a.rs#L1-L2)",
        "  - [#3] 2026-01-01 · low · looks like an entry",
        "\tindented with a tab",
        "stray words",
        "# Memory · again",
        "",
    ];

    /// Apply `ops` to `text`: lines removed, typed, replaced or extended,
    /// and single characters put in or taken out anywhere.
    fn edited(text: &str, ops: &[(u8, usize, usize)]) -> String {
        let mut text = text.to_string();
        for &(op, at, pick) in ops {
            let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
            let i = at % lines.len();
            match op % 8 {
                0 => {
                    lines.remove(i);
                }
                1 => lines.insert(i, TYPED[pick % TYPED.len()].to_string()),
                2 => lines[i] = TYPED[pick % TYPED.len()].to_string(),
                3 => lines[i].push_str(" (edited)"),
                4 | 6 => {
                    let mut at = at % (text.len() + 1);
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    match op % 8 {
                        4 => text.insert(at, ['\n', ' ', '-', '#', 'x', '\r', '·'][pick % 7]),
                        _ if at < text.len() => {
                            text.remove(at);
                        }
                        _ => {}
                    }
                    continue;
                }
                5 => lines.insert(i, format!("{}\r", TYPED[pick % TYPED.len()])),
                _ => {
                    // A line typed again next to itself: the shared ends can line up more than one way.
                    let copy = lines[i].clone();
                    lines.insert(i, copy);
                }
            }
            text = lines.join("\n");
        }
        text
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn parsing_beside_the_base_is_parsing_the_whole_text(
            views in store_strategy(),
            base_ops in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 0..3),
            ops in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 0..6),
            crlf in any::<bool>(),
            epoch in 0..3u8,
        ) {
            let rendered = render(&Flavour::Checkout { workspace: "/w".into(), epoch: 3 }, "w", &entries_of(&views));
            // A base may itself hold what a check-in carried over (stray
            // lines, broken entries), and a checkout may be saved with CRLF.
            let rendered = if crlf { rendered.replace('\n', "\r\n") } else { rendered };
            let base_text = edited(&rendered, &base_ops);
            let base = parse_checkout(&base_text);
            let text = edited(&base_text, &ops);
            // The edit's header may name a later epoch (a check-in's new rendering).
            let text = match epoch { 0 => text.replacen("epoch 3", "epoch 12", 1), 1 => text.replacen("workspace /w", "workspace /v", 1), _ => text };
            prop_assert_eq!(parse_checkout_beside(&base_text, &base, &text), parse_checkout(&text), "base:\n{}\nedited:\n{}", base_text, text);
        }
    }

    proptest! {
        #[test]
        fn the_shared_ends_are_counted_exactly(a in proptest::collection::vec(0u8..3, 0..900), b in proptest::collection::vec(0u8..3, 0..900)) {
            let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
            prop_assert_eq!(common_prefix(&a, &b), prefix);
            prop_assert_eq!(common_suffix(&a, &b), suffix);
            let long: Vec<u8> = a.iter().chain(&a).copied().collect();
            prop_assert_eq!(common_prefix(&a, &long), a.len());
            prop_assert_eq!(common_suffix(&a, &long), a.len());
        }
    }

    #[test]
    fn an_edit_of_any_entry_past_the_title_is_read_beside_the_base() {
        let mut text = String::from("<!-- mnemo checkout · workspace /w · epoch 3 -->\n# Memory · w\n\n");
        for (section, kind) in [("Directives", "high"), ("Gotchas", "medium"), ("Findings", "low")] {
            text.push_str(&format!("## {section}\n\n"));
            for i in 1..=5 {
                text.push_str(&format!("- [#{i}] 2026-06-02 · {kind} · {section} {i}\n  Body.\n\n"));
            }
        }
        let base = parse_checkout(&text);
        for entry in &base.entries {
            let line = text.lines().nth(entry.first_line).unwrap();
            for edit in [format!("{line} (edited)"), String::new(), format!("{line}\n- low · typed after it")] {
                let edited = text.replacen(&format!("{line}\n"), &format!("{edit}\n"), 1);
                let beside = reparse(&text, &base, &edited);
                assert!(beside.is_some(), "read beside the base: {edit:?}");
                assert_eq!(beside.unwrap(), parse_checkout(&edited), "{edit:?}");
            }
        }
    }

    #[test]
    fn an_edit_in_the_middle_reads_only_the_lines_around_it() {
        let mut text =
            String::from("<!-- mnemo checkout · workspace /w · epoch 3 -->\n# Memory · w\n\n## Findings\n\n");
        for i in 1..=200 {
            text.push_str(&format!("- [#{i}] 2026-06-02 · medium · Finding {i}\n  Its body.\n\n"));
        }
        let base = parse_checkout(&text);
        let edit = text.replace("Finding 100\n", "Finding 100 (edited)\n  More body.\n");
        let beside = reparse(&text, &base, &edit).expect("read beside the base");
        assert_eq!(beside, parse_checkout(&edit));
        assert_eq!(beside.entries[99].entry.title, "Finding 100 (edited)");
        assert_eq!(beside.entries[100].first_line, base.entries[100].first_line + 1, "the lines after shifted");
        // The entries before and after were taken over from the base, not read again.
        let shared = |i: usize| std::sync::Arc::ptr_eq(&beside.entries[i].entry, &base.entries[i].entry);
        assert!(shared(0) && shared(97) && shared(100) && shared(199), "taken over");
        assert!(!shared(99), "the edited entry was read again");
        // A byte order mark: the whole text.
        assert!(reparse(&text, &base, &format!("\u{feff}{edit}")).is_none());
        // Another epoch of the same workspace: the header is read by itself.
        let later = edit.replace("epoch 3", "epoch 4");
        let beside = reparse(&text, &base, &later).expect("another epoch, read beside the base");
        assert_eq!(beside, parse_checkout(&later));
        assert!(std::sync::Arc::ptr_eq(&beside.entries[0].entry, &base.entries[0].entry), "taken over");
        let unchanged = reparse(&text, &base, &text.replace("epoch 3", "epoch 4")).unwrap();
        assert_eq!((unchanged.epoch, unchanged.entries.len()), (Some(4), 200));
        // Another workspace, a broken header or a changed title: the whole text.
        assert!(reparse(&text, &base, &text.replace("workspace /w", "workspace /v")).is_none());
        assert!(reparse(&text, &base, &text.replace("epoch 3 -->", "epoch 3")).is_none());
        assert!(reparse(&text, &base, &text.replace("# Memory · w", "# Memory · v")).is_none());
        // A section heading typed above the rest of the entries: they are in
        // another section now, so the whole text is read.
        let moved = text.replace("- [#150] ", "## Gotchas\n\n- [#150] ");
        assert!(reparse(&text, &base, &moved).is_none());
        assert_eq!(parse_checkout_beside(&text, &base, &moved), parse_checkout(&moved));
    }
}
