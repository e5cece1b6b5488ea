//! MEMORY.md, the projection format (docs/format.md is the contract):
//! the [`Entry`] a note projects to, the two [`Flavour`]s, the renderer and
//! the checkout parser. `render` and `parse` are exact inverses on canonical
//! text; the property tests in `tests.rs` hold them to it.

pub(crate) mod parse;
mod render;
mod reparse;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use parse::leading_id;
pub use parse::{
    Diagnostic, ParsedCheckout, ParsedEntry, Severity, checkout_header, parse_checkout, parse_mirror_entries,
    split_marker,
};
pub use render::{LAYOUT_VERSION, assemble, entries_of, entry_text, laid_out_entries, render, render_views};
pub use reparse::parse_checkout_beside;

use crate::lifecycle::Status;
use crate::model::{Kind, NoteId, NoteView, Priority};

/// Section headings, in kind order.
pub fn section_title(kind: Kind) -> &'static str {
    match kind {
        Kind::Directive => "Directives",
        Kind::Task => "Tasks",
        Kind::Gotcha => "Gotchas",
        Kind::Finding => "Findings",
        Kind::Reference => "References",
        Kind::Decision => "Decisions",
        Kind::Operational => "Operational",
    }
}

/// Line 1 of the mirror flavour.
pub const MIRROR_HEADER: &str =
    "<!-- mnemo mirror · read-only view of the memory store; edit through the memory view or `mnemo edit` -->";

/// Which of the two flavours a text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flavour {
    /// The read-only file on disk; no epoch, no render time.
    Mirror,
    /// The editable document; its epoch is the base of a check-in.
    Checkout { workspace: String, epoch: i64 },
}

impl Flavour {
    pub fn header(&self) -> String {
        match self {
            Flavour::Mirror => MIRROR_HEADER.to_string(),
            Flavour::Checkout { workspace, epoch } => {
                format!("{CHECKOUT_MARK} · workspace {} · epoch {epoch} -->", header_escape(workspace))
            }
        }
    }
}

/// How line 1 of a mirror starts: the one test of "is this a mirror?".
pub const MIRROR_MARK: &str = "<!-- mnemo mirror";
/// How line 1 of a checkout starts: the one test of "is this a checkout?".
pub const CHECKOUT_MARK: &str = "<!-- mnemo checkout";

/// Whether `text` is a mirror (a byte order mark before line 1 allowed).
pub fn is_mirror_text(text: &str) -> bool {
    text.strip_prefix('\u{feff}').unwrap_or(text).starts_with(MIRROR_MARK)
}

/// Whether `text` is a checkout (a byte order mark before line 1 allowed).
pub fn is_checkout_text(text: &str) -> bool {
    text.strip_prefix('\u{feff}').unwrap_or(text).starts_with(CHECKOUT_MARK)
}

/// A workspace path as line 1 holds it: `%` and control characters (a line
/// break in a directory name) percent-encoded, so the header stays one line.
pub fn header_escape(workspace: &str) -> String {
    let mut out = String::with_capacity(workspace.len());
    for c in workspace.chars() {
        if c == '%' || c.is_control() {
            let mut bytes = [0u8; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `%XX` sequences decoded (invalid ones left as they are): the inverse of
/// [`header_escape`], and how the language server reads `memory:` URI paths.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[index] == b'%'
            && index + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[index + 1]), hex(bytes[index + 2]))
        {
            out.push((high * 16 + low) as u8);
            index += 3;
            continue;
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A non-active state as written before the title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateMarker {
    Superseded {
        date: String,
        by: NoteId,
    },
    /// The date is optional when a person types the marker.
    Revoked {
        date: Option<String>,
        reason: String,
    },
    Stale {
        date: Option<String>,
        reason: String,
    },
    Expired {
        date: Option<String>,
    },
    /// Written by an agent under review; a person accepts it by deleting the
    /// marker, rejects it by deleting the entry (or `REVOKED (why)`).
    Proposed {
        date: Option<String>,
    },
}

/// An anchor as rendered: a link; the content hash stays in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorLink {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// One entry of MEMORY.md: what a note projects to, and what the parser reads back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `None` for a new entry a person added to a checkout.
    pub id: Option<NoteId>,
    pub kind: Kind,
    /// `YYYY-MM-DD`; `None` for a new entry.
    pub created: Option<String>,
    pub priority: Priority,
    pub marker: Option<StateMarker>,
    pub title: String,
    pub body: String,
    pub anchors: Vec<AnchorLink>,
}

impl Entry {
    /// The projection of a stored note.
    pub fn from_view(view: &NoteView) -> Entry {
        let (note, state) = (&view.note, &view.state);
        let date = state.status_at.date();
        let reason = || state.status_reason.clone().unwrap_or_default();
        let marker = match state.status {
            Status::Active => None,
            Status::Superseded { by } => Some(StateMarker::Superseded { date, by }),
            Status::Revoked => Some(StateMarker::Revoked { date: Some(date), reason: reason() }),
            Status::StaleFlagged => Some(StateMarker::Stale { date: Some(date), reason: reason() }),
            Status::Expired => Some(StateMarker::Expired { date: Some(date) }),
            Status::Proposed => Some(StateMarker::Proposed { date: Some(date) }),
        };
        let c = &note.content;
        Entry {
            id: Some(note.id),
            kind: c.kind,
            created: Some(note.created_at.date()),
            priority: c.priority,
            marker,
            title: c.title.clone(),
            body: c.body.clone(),
            anchors: c
                .anchors
                .iter()
                .map(|a| AnchorLink { path: a.path.clone(), start_line: a.start_line, end_line: a.end_line })
                .collect(),
        }
    }
}

/// `text` (a checkout) without the entry of note `id`: its lines and the
/// blank line that separated it, so the rest stays as rendered. Used to
/// purge a forgotten note from stored copies of checkouts.
pub fn without_entry(text: &str, id: NoteId) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let marker = format!("- [#{id}] ");
    let Some(start) = lines.iter().position(|l| l.starts_with(&marker)) else { return text.to_string() };
    let mut end = start + 1;
    while end < lines.len() && !lines[end].starts_with("- ") && !lines[end].starts_with("## ") {
        end += 1;
    }
    // The entry's own lines, without the blank lines that end it.
    let mut last = end;
    while last > start + 1 && lines[last - 1].is_empty() {
        last -= 1;
    }
    let mut kept: Vec<&str> = lines[..start].to_vec();
    // One blank line separated it from what came before: drop it too.
    if kept.last().is_some_and(|l| l.is_empty()) && (last < lines.len() && lines[last].is_empty()) {
        kept.pop();
    }
    kept.extend_from_slice(&lines[last..]);
    kept.join("\n")
}
