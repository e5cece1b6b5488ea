//! How notes and events are printed: human text and `--json`. The JSON shape
//! is the one agents parse; keep field names stable.

use mnemo_core::index_line::index_line;
use mnemo_core::{EventKind, Status, Timestamp};
use mnemo_store::{NoteView, StoredEvent};
use serde_json::{Value, json};

pub fn note_json(view: &NoteView, now: Timestamp) -> Value {
    let (note, state) = (&view.note, &view.state);
    let c = &note.content;
    let superseded_by = match state.status {
        Status::Superseded { by } => Some(by),
        _ => None,
    };
    json!({
        "id": note.id,
        "workspace": note.workspace,
        "kind": c.kind,
        "priority": c.priority,
        "title": c.title,
        "body": c.body,
        "provenance": state.provenance,
        "created_provenance": c.provenance,
        "quote": c.quote,
        "anchors": c.anchors,
        "created_at": note.created_at.rfc3339(),
        "age": note.created_at.age(now),
        "state": state.status.name(),
        "state_at": state.status_at.rfc3339(),
        "state_reason": state.status_reason,
        "superseded_by": superseded_by,
        "index_line": index_line(note, state, now),
    })
}

pub fn event_json(event: &StoredEvent) -> Value {
    let d = &event.data;
    let (superseded_by, provenance) = match d.kind {
        EventKind::Superseded { by } => (Some(by), None),
        EventKind::Created { provenance } | EventKind::Promoted { to: provenance } => (None, Some(provenance)),
        _ => (None, None),
    };
    json!({
        "id": event.id,
        "note_id": event.note_id,
        "kind": d.kind.name(),
        "actor": d.actor,
        "at": d.at.rfc3339(),
        "reason": d.reason,
        "superseded_by": superseded_by,
        "provenance": provenance,
        "person": event.by.as_ref().map(|p| &p.name),
        "machine": event.by.as_ref().map(|p| &p.machine),
    })
}

/// The full text form of `show`.
pub fn note_text(view: &NoteView) -> String {
    let (note, state) = (&view.note, &view.state);
    let c = &note.content;
    let mut out =
        format!("#{} {}/{} · {} · {}\n{}\n", note.id, c.kind, c.priority, state.provenance, state.status, c.title);
    if !c.body.is_empty() {
        out.push('\n');
        out.push_str(&c.body);
        out.push('\n');
    }
    if let Some(quote) = &c.quote {
        out.push_str(&format!("\nstated by the user: \"{quote}\"\n"));
    }
    if !c.anchors.is_empty() {
        out.push_str("\nanchors:\n");
        for a in &c.anchors {
            let hash = a
                .content_sha256
                .as_deref()
                .map_or("not hashed".to_string(), |h| format!("sha256 {}", &h[..12.min(h.len())]));
            out.push_str(&format!("  {}:{}-{} ({hash})\n", a.path, a.start_line, a.end_line));
        }
    }
    if state.status != Status::Active {
        let reason = state.status_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
        out.push_str(&format!("\n{} since {}{reason}\n", state.status, state.status_at.date()));
    }
    out.push_str(&format!("\ncreated {} in {}\n", note.created_at.rfc3339(), note.workspace));
    out
}

/// One line of `history`.
pub fn event_text(event: &StoredEvent) -> String {
    let d = &event.data;
    let detail = match d.kind {
        EventKind::Created { provenance } => format!(" as {provenance}"),
        EventKind::Superseded { by } => format!(" by #{by}"),
        EventKind::Promoted { to } => format!(" to {to}"),
        _ => String::new(),
    };
    let reason = d.reason.as_deref().map(|r| format!(" — {r}")).unwrap_or_default();
    let who = event.by.as_ref().map(|p| format!(", {}", p.describe())).unwrap_or_default();
    format!("{}  {}{detail} (by {}{who}){reason}", d.at.rfc3339(), d.kind.name(), d.actor)
}

pub fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).expect("JSON values serialise"));
}

/// `text` as one shell word, for a command printed for people to copy:
/// quoted only when it holds more than letters, digits, spaces and `-_./:`
/// (a query's words stay separate words when unquoted, which recall reads the same).
pub fn shell_words(text: &str) -> String {
    let plain = |c: char| c.is_alphanumeric() || " -_./:".contains(c);
    if text.chars().all(plain) { text.to_string() } else { format!("'{}'", text.replace('\'', "'\\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_quoted_only_when_the_shell_would_read_it_otherwise() {
        assert_eq!(shell_words("zebra quantum xylophone"), "zebra quantum xylophone");
        assert_eq!(shell_words("what's $HOME?"), "'what'\\''s $HOME?'");
    }
}
