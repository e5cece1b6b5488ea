//! Hover on a note reference (`#412` or `[#412]`) in any document: the
//! note's full body as markdown, its kind, priority, state, provenance with
//! the trust frame and bound quote, anchors, its event history, and how
//! often it was delivered to agents (the ledger).

use mnemo_core::index_line::state_marker;
use mnemo_core::recall::trust_frame;
use mnemo_core::{EventKind, NoteId, NoteView, Timestamp};
use mnemo_store::StoredEvent;
use mnemo_store::ledger::DeliveryRecord;

/// The note id referenced at byte `cursor` of `line` (an LSP column becomes
/// a byte offset through `to_proto::byte_offset`).
pub fn reference_at(line: &str, cursor: usize) -> Option<NoteId> {
    let bytes = line.as_bytes();
    let mut start = 0;
    while let Some(found) = line[start..].find('#') {
        let hash = start + found;
        let digits_end = hash + 1 + bytes[hash + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let span_start = if hash > 0 && bytes[hash - 1] == b'[' { hash - 1 } else { hash };
        let span_end = if bytes.get(digits_end) == Some(&b']') { digits_end + 1 } else { digits_end };
        if digits_end > hash + 1 && (span_start..span_end).contains(&cursor) {
            return line[hash + 1..digits_end].parse().ok();
        }
        start = hash + 1;
    }
    None
}

/// The hover text for a note.
/// `drift` says, per anchor position, what the latest drift check found.
pub fn markdown(view: &NoteView, history: &[StoredEvent], now: Timestamp, drift: &[(usize, String)]) -> String {
    let (note, state) = (&view.note, &view.state);
    let c = &note.content;
    let marker = state_marker(state.status).map(|m| format!(" {m}")).unwrap_or_default();
    let mut out = format!("**#{} {}**{marker}\n\n", note.id, c.title);
    out.push_str(&format!(
        "{} · {} · {} · created {} ({})\n\n",
        c.kind,
        c.priority,
        state.status,
        note.created_at.date(),
        note.created_at.age(now)
    ));
    out.push_str(&format!("*{}* — {}\n\n", state.provenance, trust_frame(state.provenance, c.quote.as_deref())));
    if !c.body.is_empty() {
        out.push_str(&c.body);
        out.push_str("\n\n");
    }
    if !c.anchors.is_empty() {
        out.push_str("Anchors:\n");
        for (position, a) in c.anchors.iter().enumerate() {
            let status = drift.iter().find(|(p, _)| *p == position).map_or(String::new(), |(_, s)| format!(" — {s}"));
            out.push_str(&format!("- `{}:{}-{}`{status}\n", a.path, a.start_line, a.end_line));
        }
        out.push('\n');
    }
    out.push_str("History:\n");
    for event in history {
        let d = &event.data;
        let detail = match d.kind {
            EventKind::Superseded { by } => format!(" by #{by}"),
            EventKind::Promoted { to } | EventKind::Created { provenance: to } => format!(" ({to})"),
            _ => String::new(),
        };
        let reason = d.reason.as_deref().map(|r| format!(" — {r}")).unwrap_or_default();
        let who = event.by.as_ref().map(|p| format!(" ({})", p.describe())).unwrap_or_default();
        out.push_str(&format!("- {} {}{detail} by {}{who}{reason}\n", d.at.date(), d.kind.name(), d.actor));
    }
    out
}

/// What the ledger says of a note: "Delivered to agents 3 times, last 2h
/// ago (session-start, session abc)", or that it never was.
pub fn delivered(count: usize, latest: Option<&DeliveryRecord>, now: Timestamp) -> String {
    match latest {
        Some(d) => {
            let when = match d.at.age(now) {
                age if age == "now" => "just now".to_string(),
                age => format!("{age} ago"),
            };
            format!(
                "Delivered to agents {count} time{}, last {when} ({}, session {})\n",
                if count == 1 { "" } else { "s" },
                d.moment,
                d.session
            )
        }
        None => "Never delivered to an agent\n".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::to_proto::byte_offset;

    #[test]
    fn references_are_found_under_the_cursor_only() {
        let line = "- [#412] 2026-08-01 · see #7 and #x or 🙂 #9";
        let at = |column: u32| reference_at(line, byte_offset(line, column));
        assert_eq!(at(2), Some(412), "on the bracket");
        assert_eq!(at(5), Some(412));
        assert_eq!(at(8), None, "just past the bracket");
        assert_eq!(at(27), Some(7));
        assert_eq!(at(34), None, "#x is no reference");
        let emoji = line.find('🙂').unwrap();
        let col = line[..emoji].encode_utf16().count() as u32 + 3;
        assert_eq!(at(col + 1), Some(9), "columns count UTF-16 units");
        assert_eq!(reference_at("", 0), None);
        assert_eq!(reference_at("#", 0), None);
        assert_eq!(reference_at("#7", 99), None, "past the end of the line");
    }
}
