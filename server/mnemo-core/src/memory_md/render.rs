//! The renderer: entries in, MEMORY.md text out. Deterministic by
//! construction: it sorts by (kind order, id) itself and never relies on
//! the order it was given; it formats dates from stored values only.

use std::fmt::Write as _;

use super::{AnchorLink, Entry, Flavour, StateMarker, section_title};
use crate::model::{Kind, NoteView};

/// The entries of a store view, in render order.
pub fn entries_of(views: &[NoteView]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = views.iter().map(Entry::from_view).collect();
    sort(&mut entries);
    entries
}

/// Render the notes of one workspace.
pub fn render_views(flavour: &Flavour, display_name: &str, views: &[NoteView]) -> String {
    render(flavour, display_name, &entries_of(views))
}

/// Sections in kind order; ids ascending inside a section; new entries (no
/// id) after the stored ones, in their given order (the sort is stable).
fn render_order(entry: &Entry) -> (Kind, bool, Option<crate::model::NoteId>) {
    (entry.kind, entry.id.is_none(), entry.id)
}

fn sort(entries: &mut [Entry]) {
    entries.sort_by_key(render_order);
}

/// Render `entries` (any order) as the given flavour.
pub fn render(flavour: &Flavour, display_name: &str, entries: &[Entry]) -> String {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by_key(|e| render_order(e));
    let size: usize = entries.iter().map(|e| e.title.len() + e.body.len() + 64 + e.anchors.len() * 80).sum();
    layout(flavour, display_name, sorted.into_iter().map(|e| (e.kind, e)), size, render_entry)
}

/// The version of what [`entry_text`] writes for a note and [`layout`]
/// around it: raise it with any change to either (the golden mirror of
/// `mnemo-store/tests/golden/mirror.md` changes with them). A mirror
/// published at another version is never brought up to date entry by
/// entry, so a new mnemo never keeps an old one's entries.
pub const LAYOUT_VERSION: u32 = 1;

/// One entry as a document shows it, without the blank line before it.
pub fn entry_text(entry: &Entry) -> String {
    let mut out = String::with_capacity(entry.title.len() + entry.body.len() + 64 + entry.anchors.len() * 80);
    render_entry(&mut out, entry);
    out
}

/// The document around entries already rendered by [`entry_text`], given
/// in render order (kind order, then id ascending): the same bytes as
/// [`render`] of those entries. `size` is their total length.
pub fn assemble<'a>(
    flavour: &Flavour,
    display_name: &str,
    entries: impl Iterator<Item = (Kind, &'a str)>,
    size: usize,
) -> String {
    layout(flavour, display_name, entries, size + entries_overhead(), |out, text| out.push_str(text))
}

/// The entries of a text [`layout`] wrote with stored entries only (a
/// mirror, say), each as its kind, its id and its [`entry_text`], in render
/// order: the inverse of [`assemble`]. `None` when the text is not laid out
/// so (a section missing or out of order, an entry without an id, ids not
/// ascending). Only a text known to be a rendering should be read so: it
/// relies on what the renderer guarantees (a body or anchor line is always
/// indented, so a line that starts `## ` or `- [#` after a blank line begins
/// a section or an entry) and checks nothing an entry says.
pub fn laid_out_entries(text: &str) -> Option<Vec<(Kind, crate::model::NoteId, &str)>> {
    let text = text.strip_suffix('\n')?;
    if !(text.starts_with(super::MIRROR_MARK) || text.starts_with(super::CHECKOUT_MARK)) {
        return None;
    }
    let mut kinds = Kind::ALL.iter();
    let mut section: Option<(Kind, Option<crate::model::NoteId>)> = None;
    let mut entry_at: Option<usize> = None;
    // Where the blank line after a heading must be (or the text end).
    let mut heading_ends: Option<usize> = None;
    let mut out = Vec::new();
    let mut end_entry = |at: Option<usize>, end: usize, section: &mut Option<(Kind, Option<crate::model::NoteId>)>| {
        let Some(start) = at else { return Some(()) };
        let (kind, last) = section.as_mut()?;
        let entry = &text[start..end];
        let digits = entry.strip_prefix("- [#")?.split_once("] ")?.0;
        let id: crate::model::NoteId = digits.parse().ok().filter(|_| digits.bytes().all(|b| b.is_ascii_digit()))?;
        if last.is_some_and(|last| last >= id) {
            return None;
        }
        *last = Some(id);
        out.push((*kind, id, entry));
        Some(())
    };
    // Every blank line before a line that starts a section or an entry.
    for at in memchr::memchr_iter(b'\n', text.as_bytes()) {
        let next = &text[at + 1..];
        let Some(line) = next.strip_prefix('\n') else { continue };
        let heading = line.strip_prefix("## ");
        if heading.is_none() && !line.starts_with("- [#") {
            continue;
        }
        if heading_ends.take().is_some_and(|end| end != at) {
            return None;
        }
        end_entry(entry_at.take(), at, &mut section)?;
        match heading {
            Some(heading) => {
                let title = heading.split('\n').next().unwrap_or(heading);
                section = Some((*kinds.next().filter(|kind| section_title(**kind) == title)?, None));
                heading_ends = Some(at + 5 + title.len());
            }
            None => entry_at = Some(at + 2),
        }
    }
    if heading_ends.is_some_and(|end| end != text.len()) {
        return None;
    }
    end_entry(entry_at, text.len(), &mut section)?;
    kinds.next().is_none().then_some(out)
}

/// Room for the header, the title and the section headings.
fn entries_overhead() -> usize {
    512
}

/// The one layout of a document: its header, its title, then every
/// section in kind order with its entries (`write` puts one in `out`),
/// each after a blank line.
fn layout<T>(
    flavour: &Flavour,
    display_name: &str,
    entries: impl Iterator<Item = (Kind, T)>,
    size: usize,
    write: impl Fn(&mut String, T),
) -> String {
    let mut out = String::with_capacity(size + entries_overhead());
    out.push_str(&flavour.header());
    out.push_str("\n# Memory · ");
    // One line, whatever the directory is called.
    out.push_str(&crate::model::neutralize_controls(&display_name.replace(['\n', '\r'], " ")));
    let mut next = entries.peekable();
    for kind in Kind::ALL {
        out.push_str("\n\n## ");
        out.push_str(section_title(*kind));
        while let Some((_, entry)) = next.next_if(|(k, _)| k == kind) {
            out.push_str("\n\n");
            write(&mut out, entry);
        }
    }
    out.push('\n');
    out
}

fn render_entry(out: &mut String, entry: &Entry) {
    out.push_str("- ");
    if let Some(id) = entry.id {
        let _ = write!(out, "[#{id}] ");
    }
    if let Some(created) = &entry.created {
        out.push_str(created);
        out.push_str(" · ");
    }
    out.push_str(entry.priority.as_str());
    out.push_str(" · ");
    if let Some(marker) = &entry.marker {
        out.push_str(&render_marker(marker));
        out.push_str(" · ");
    }
    out.push_str(&entry.title);
    for line in entry.body.lines() {
        out.push('\n');
        if !line.is_empty() {
            out.push_str("  ");
            out.push_str(&escape_body_line(line));
        }
    }
    for anchor in &entry.anchors {
        out.push_str("\n  ");
        out.push_str(&render_anchor(anchor));
    }
}

/// A body line that would read back as something else (an entry, an anchor
/// link), or that starts with the escape character itself, gets a backslash
/// after its indentation; the parser removes exactly one. So no note's text
/// can change the file's structure, and every body round-trips.
pub(super) fn escape_body_line(line: &str) -> std::borrow::Cow<'_, str> {
    let indent = line.len() - line.trim_start().len();
    let rest = &line[indent..];
    let looks_structural =
        rest.starts_with('\\') || rest.starts_with("- [#") || super::parse::parse_anchor(line).is_some();
    if looks_structural { format!("{}\\{rest}", &line[..indent]).into() } else { line.into() }
}

/// `STALE 2026-08-09 (reason)` and friends.
pub(super) fn render_marker(marker: &StateMarker) -> String {
    let dated = |word: &str, date: &Option<String>| match date {
        Some(date) => format!("{word} {date}"),
        None => word.to_string(),
    };
    match marker {
        StateMarker::Superseded { date, by } => format!("SUPERSEDED {date} by #{by}"),
        StateMarker::Revoked { date, reason } => format!("{} ({reason})", dated("REVOKED", date)),
        StateMarker::Stale { date, reason } => format!("{} ({reason})", dated("STALE", date)),
        StateMarker::Expired { date } => dated("EXPIRED", date),
        StateMarker::Proposed { date } => dated("PROPOSED", date),
    }
}

/// `[path:10-24](path#L10-L24)`.
pub(super) fn render_anchor(anchor: &AnchorLink) -> String {
    let AnchorLink { path, start_line: a, end_line: b } = anchor;
    format!("[{path}:{a}-{b}]({path}#L{a}-L{b})")
}
