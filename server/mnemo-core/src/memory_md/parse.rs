//! The checkout parser: text in, entries plus diagnostics out. It never
//! fails and never panics; what it cannot read it reports with a line and
//! column, and keeps going. A mirror header makes it refuse the whole text:
//! the mirror is never parsed back into the store.

use super::render::render_anchor;
use super::{AnchorLink, Entry, StateMarker, section_title};
use crate::model::{Kind, NoteId, Priority};
use crate::time::Timestamp;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

/// A problem at a place in the text: 0-based line, byte columns in that line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: usize,
    pub start_column: usize,
    pub end_column: usize,
    pub severity: Severity,
    pub message: String,
}

/// An entry and where it stands in the text (0-based, inclusive lines).
/// The entry is shared: a text parsed beside its base (`reparse.rs`) takes
/// over the base's entries without copying them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedEntry {
    pub entry: std::sync::Arc<Entry>,
    pub first_line: usize,
    pub last_line: usize,
}

/// What the parser understood.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedCheckout {
    /// Workspace and base epoch from line 1; `None` when the header is broken.
    pub workspace: Option<String>,
    pub epoch: Option<i64>,
    /// The name after `# Memory · `.
    pub display_name: Option<String>,
    pub entries: Vec<ParsedEntry>,
    pub diagnostics: Vec<Diagnostic>,
    /// True when the text is the read-only mirror: nothing was read.
    pub refused_mirror: bool,
    /// Ids on entry lines that could not be read, with their (0-based)
    /// lines: present, but not understood (a check-in must leave those
    /// notes alone, not take them as deleted).
    pub unreadable_ids: Vec<(usize, NoteId)>,
}

impl ParsedCheckout {
    fn error(&mut self, line: usize, text: &str, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic {
            line,
            start_column: 0,
            end_column: text.len(),
            severity: Severity::Error,
            message: message.into(),
        });
    }
}

/// The error on a line that is neither an entry, a section nor a body line
/// (a body line that lost its indentation reads like this).
pub(crate) const UNEXPECTED_TEXT: &str =
    "unexpected text; an entry starts with `- `, a section with `## `, and body lines are indented by two spaces";

/// Parse a checkout. Line endings may be LF or CRLF.
pub fn parse_checkout(text: &str) -> ParsedCheckout {
    parse_lines(text, None)
}

/// Parse the mirror's entries as those of a checkout at epoch 0 (to show
/// them, never to check them in): its first line is read as that header,
/// without copying the text (a 20 MB mirror at 100k notes).
pub fn parse_mirror_entries(text: &str) -> ParsedCheckout {
    parse_lines(text, Some("<!-- mnemo checkout · workspace mirror · epoch 0 -->"))
}

/// Parse `text`, its first line read as `header` when given.
fn parse_lines(text: &str, header: Option<&str>) -> ParsedCheckout {
    let mut lines: Vec<&str> = text_lines(text).collect();
    if let (Some(header), Some(first)) = (header, lines.first_mut()) {
        *first = header;
    }
    let mut out = ParsedCheckout::default();
    let header = lines.first().copied().unwrap_or("");
    if header.starts_with(super::MIRROR_MARK) {
        out.refused_mirror = true;
        out.error(0, header, "this is the read-only mirror, which is never checked in; edit a checkout (`mnemo checkout` or \"mnemo: Edit Memory\")");
        return out;
    }
    match parse_header(header) {
        Some((workspace, epoch)) => {
            out.workspace = Some(workspace);
            out.epoch = Some(epoch);
        }
        None => out.error(0, header, "line 1 must be the checkout header `<!-- mnemo checkout · workspace <path> · epoch <N> -->`; restore it from a fresh checkout"),
    }
    parse_body(&lines[1.min(lines.len())..], 1, None, &mut out);
    out
}

/// The first line's checkout header, read as [`parse_checkout`] reads it:
/// the workspace and the base epoch (to find the base before the rest is read).
pub fn checkout_header(text: &str) -> Option<(String, i64)> {
    parse_header(text_lines(text).next().unwrap_or(""))
}

/// The lines of a checkout as the parser reads them: LF or CRLF, and
/// without the byte order mark some editors save (it is no part of the header).
pub(crate) fn text_lines(text: &str) -> impl Iterator<Item = &str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// Parse the body lines `lines`, the first of which is line `first` of the
/// text (0-based), in `section` (the one a heading above them opened);
/// what is read goes to `out`. Returns the section in force after the
/// last line. An entry never reaches past the last of `lines`.
pub(crate) fn parse_body(
    lines: &[&str],
    first: usize,
    mut section: Option<Kind>,
    out: &mut ParsedCheckout,
) -> Option<Kind> {
    let mut index = 0;
    while index < lines.len() {
        let (line, at) = (lines[index], first + index);
        if line.is_empty() {
            index += 1;
        } else if let Some(name) = line.strip_prefix("# Memory · ") {
            if out.display_name.is_none() && at == 1 {
                out.display_name = Some(name.to_string());
            } else {
                out.error(at, line, "the `# Memory` title belongs on line 2 only");
            }
            index += 1;
        } else if let Some(heading) = line.strip_prefix("## ") {
            section = Kind::ALL.iter().copied().find(|k| section_title(*k) == heading);
            if section.is_none() {
                let names: Vec<&str> = Kind::ALL.iter().map(|k| section_title(*k)).collect();
                out.error(at, line, format!("unknown section '{heading}'; sections are {}", names.join(", ")));
            }
            index += 1;
        } else if let Some(rest) = line.strip_prefix("- ") {
            let last = entry_end(lines, index);
            match parse_entry(rest, section) {
                Ok((id, created, priority, marker, title)) => {
                    let (body, anchors) = parse_continuation(&lines[index + 1..=last], at + 1, out);
                    let entry = Entry {
                        id,
                        kind: section.expect("parse_entry checks the section"),
                        created,
                        priority,
                        marker,
                        title,
                        body,
                        anchors,
                    };
                    out.entries.push(ParsedEntry { entry: entry.into(), first_line: at, last_line: first + last });
                }
                Err(message) => {
                    out.error(at, line, message);
                    if let Some(id) = leading_id(rest) {
                        out.unreadable_ids.push((at, id));
                    }
                }
            }
            index = last + 1;
        } else {
            out.error(at, line, UNEXPECTED_TEXT);
            if let Some(id) = leading_id(line.trim_start_matches(['-', ' ', '\t'])) {
                out.unreadable_ids.push((at, id));
            }
            index += 1;
        }
    }
    section
}

/// The id of a line that reads like a whole entry line: `[#12] 2026-06-02 · …`.
fn leading_entry_id(rest: &str) -> Option<NoteId> {
    let id = leading_id(rest)?;
    let after = rest.split_once("] ")?.1;
    let date = after.get(..10)?;
    (Timestamp::from_date(date).is_some() && after[10..].starts_with(" · ")).then_some(id)
}

/// The id of `[#12] …`, however broken the rest of the line is.
pub(crate) fn leading_id(rest: &str) -> Option<NoteId> {
    let digits = rest.strip_prefix("[#")?.split(']').next()?;
    digits.parse().ok()
}

fn parse_header(line: &str) -> Option<(String, i64)> {
    let inner = line.strip_prefix("<!-- mnemo checkout · workspace ")?.strip_suffix(" -->")?;
    let (workspace, epoch) = inner.rsplit_once(" · epoch ")?;
    if workspace.is_empty() || !epoch.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((super::percent_decode(workspace), epoch.parse().ok()?))
}

/// The last line of the entry starting at `start`: the entry continues while
/// the next non-empty line is indented; trailing empty lines are not part of it.
fn entry_end(lines: &[&str], start: usize) -> usize {
    let mut last = start;
    let mut index = start + 1;
    while index < lines.len() {
        let line = lines[index];
        if line.is_empty() {
            index += 1;
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') {
            last = index;
            index += 1;
        } else {
            break;
        }
    }
    last
}

type EntryLine = (Option<NoteId>, Option<String>, Priority, Option<StateMarker>, String);

/// `[#id] date · priority · [MARKER · ]title`, or `priority · title` for a new entry.
fn parse_entry(rest: &str, section: Option<Kind>) -> Result<EntryLine, String> {
    if section.is_none() {
        return Err("this entry is under no known section; move it under one of the seven `## ` sections".into());
    }
    let (id, created, rest) = match rest.strip_prefix("[#") {
        Some(after) => {
            let (digits, after) =
                after.split_once("] ").ok_or("an entry id looks like `[#12] ` followed by the date")?;
            let id: NoteId =
                digits.parse().ok().filter(|id| *id > 0).ok_or_else(|| format!("'#{digits}' is not a note id"))?;
            let (date, after) =
                after.split_once(" · ").ok_or("expected `<date> · <priority> · <title>` after the id")?;
            if Timestamp::from_date(date).is_none() {
                let hint = if date.parse::<Priority>().is_ok() {
                    "the date is missing: an entry with an id reads `- [#id] YYYY-MM-DD · priority · title` (the note's creation date, as the checkout shows it); a new note has no id: `- high · title`".to_string()
                } else {
                    format!(
                        "'{date}' is not a date (YYYY-MM-DD); an entry with an id reads `- [#id] YYYY-MM-DD · priority · title`"
                    )
                };
                return Err(hint);
            }
            (Some(id), Some(date.to_string()), after)
        }
        None => (None, None, rest),
    };
    let is_priority = |(priority, _): &(&str, &str)| priority.parse::<Priority>().is_ok();
    let (priority, after) = match (id, rest.split_once(" · ")) {
        (Some(_), Some(split)) => split,
        (Some(_), None) => return Err("expected `<priority> · <title>` after the date".into()),
        // A new entry may be typed with ASCII: `- high - A new title`.
        (None, dotted) => dotted
            .filter(is_priority)
            .or_else(|| rest.split_once(" - ").filter(is_priority))
            .or(dotted)
            .ok_or("expected `<priority> · <title>` (or, typed by hand, `<priority> - <title>`), e.g. `- high · Release the lock first`")?,
    };
    let priority: Priority = priority.parse().map_err(|e: crate::model::ParseEnumError| e.to_string())?;
    let (marker, title) = match split_marker(after) {
        Some((marker, title)) => (Some(marker?), title),
        None => (None, after),
    };
    if title.trim().is_empty() {
        return Err("the title is empty".into());
    }
    // Spaces around a title are insignificant (docs/format.md); the canonical
    // rendering has none.
    Ok((id, created, priority, marker, title.trim().to_string()))
}

/// Split a state marker off the front of `text` when `text` is `MARKER · rest`.
/// `None` when `text` does not start with a marker keyword followed by its
/// grammar and ` · `; `Some(Err)` when it starts like one but is malformed
/// in a way a person likely meant (e.g. `REVOKED · title` without a reason).
pub fn split_marker(text: &str) -> Option<(Result<StateMarker, String>, &str)> {
    let (word, after_word) = ["SUPERSEDED", "REVOKED", "STALE", "EXPIRED", "PROPOSED"]
        .iter()
        .find_map(|w| text.strip_prefix(w).map(|after| (*w, after)))?;
    let (date, after_date) = match after_word.strip_prefix(' ') {
        Some(after)
            if after.len() >= 10 && after.is_char_boundary(10) && Timestamp::from_date(&after[..10]).is_some() =>
        {
            (Some(after[..10].to_string()), &after[10..])
        }
        _ => (None, after_word),
    };
    match word {
        "SUPERSEDED" => {
            let after = after_date.strip_prefix(" by #")?;
            let (digits, title) = after.split_once(" · ")?;
            let by: NoteId = digits.parse().ok()?;
            let date = date?;
            Some((Ok(StateMarker::Superseded { date, by }), title))
        }
        "REVOKED" | "STALE" => {
            if let Some(title) = after_date.strip_prefix(" · ") {
                let example = format!("{word} (why) · {title}");
                return Some((Err(format!("{word} needs a reason in parentheses: `{example}`")), title));
            }
            let after = after_date.strip_prefix(" (")?;
            let (reason, title) = after.split_once(") · ")?;
            let reason = reason.to_string();
            let marker = if word == "REVOKED" {
                StateMarker::Revoked { date, reason }
            } else {
                StateMarker::Stale { date, reason }
            };
            Some((Ok(marker), title))
        }
        "PROPOSED" => {
            let title = after_date.strip_prefix(" · ")?;
            Some((Ok(StateMarker::Proposed { date }), title))
        }
        _ => {
            let title = after_date.strip_prefix(" · ")?;
            Some((Ok(StateMarker::Expired { date }), title))
        }
    }
}

/// Body lines and the trailing anchor links of an entry.
fn parse_continuation(lines: &[&str], first_line: usize, out: &mut ParsedCheckout) -> (String, Vec<AnchorLink>) {
    // (text, escaped): an escaped line is body text whatever it looks like.
    let mut content: Vec<(String, bool)> = Vec::with_capacity(lines.len());
    for (offset, line) in lines.iter().enumerate() {
        if line.is_empty() {
            content.push((String::new(), false));
        } else if let Some(stripped) = line.strip_prefix("  ") {
            let indent = stripped.len() - stripped.trim_start().len();
            if let Some(unescaped) = stripped[indent..].strip_prefix('\\') {
                content.push((format!("{}{unescaped}", &stripped[..indent]), true));
                continue;
            }
            if let Some(id) = stripped.trim_start().strip_prefix("- ").and_then(leading_entry_id) {
                out.unreadable_ids.push((first_line + offset, id));
                out.diagnostics.push(Diagnostic {
                    line: first_line + offset,
                    start_column: 0,
                    end_column: line.len(),
                    severity: Severity::Warning,
                    message: format!(
                        "#{id} looks like an entry inside the body above; entries start at the beginning of the line"
                    ),
                });
            }
            content.push((stripped.to_string(), false));
        } else {
            out.diagnostics.push(Diagnostic {
                line: first_line + offset,
                start_column: 0,
                end_column: line.len() - line.trim_start().len(),
                severity: Severity::Warning,
                message: "body lines are indented by exactly two spaces".into(),
            });
            content.push((line.trim_start().to_string(), false));
        }
    }
    let mut anchors = Vec::new();
    while let Some(anchor) = content.last().filter(|(_, escaped)| !escaped).and_then(|(l, _)| parse_anchor(l)) {
        anchors.push(anchor);
        content.pop();
    }
    anchors.reverse();
    while content.last().is_some_and(|(l, _)| l.trim().is_empty()) {
        content.pop();
    }
    let body = content.iter().map(|(l, _)| l.trim_end()).collect::<Vec<_>>().join("\n");
    (body, anchors)
}

/// `[path:10-24](path#L10-L24)` with both halves agreeing.
/// Only the canonical rendering counts, so that what is read back renders
/// to the same bytes.
pub(crate) fn parse_anchor(line: &str) -> Option<AnchorLink> {
    let label = line.strip_prefix('[')?.split_once("](")?.0;
    let (path, range) = label.rsplit_once(':')?;
    let (start, end) = range.split_once('-')?;
    let anchor = AnchorLink { path: path.to_string(), start_line: start.parse().ok()?, end_line: end.parse().ok()? };
    (!path.is_empty() && render_anchor(&anchor) == line).then_some(anchor)
}
