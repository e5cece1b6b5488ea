//! Completion of note references: after `#`, the workspace's live notes,
//! newest first, labelled with id, title and kind, the body as documentation.
//! At the start of a new entry in a checkout, its priority with the `·`
//! separator. Inlay hints after an entry's `[#id]` in memory documents:
//! provenance and age.

use mnemo_core::{NoteView, Status, Timestamp};
use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, Documentation, InlayHint, InlayHintKind, InlayHintLabel, MarkupContent,
    MarkupKind, Position,
};

use crate::to_proto::utf16_column;

/// Whether the text before the cursor ends in a reference being typed (`#`, `#4`).
pub fn typing_reference(before_cursor: &str) -> bool {
    let digits = before_cursor.trim_end_matches(|c: char| c.is_ascii_digit());
    digits.ends_with('#')
}

/// Whether a new entry's priority is being typed: `- `, `- h`, `- med` at
/// the start of a line of a checkout.
pub fn typing_priority(before_cursor: &str) -> bool {
    before_cursor
        .strip_prefix("- ")
        .is_some_and(|word| word.chars().all(|c| c.is_ascii_lowercase()) && word.len() < "medium".len())
}

/// `high · `, `medium · `, `low · `: the start of a new entry, with the
/// separator a keyboard cannot easily type.
pub fn priority_items() -> Vec<CompletionItem> {
    ["high", "medium", "low"]
        .iter()
        .enumerate()
        .map(|(rank, priority)| CompletionItem {
            label: format!("{priority} · "),
            kind: Some(CompletionItemKind::KEYWORD),
            detail: Some("a new note: `- <priority> · <title>`".into()),
            insert_text: Some(format!("{priority} · ")),
            filter_text: Some(priority.to_string()),
            sort_text: Some(format!("{rank}")),
            ..CompletionItem::default()
        })
        .collect()
}

pub fn completion_items(views: &[NoteView]) -> Vec<CompletionItem> {
    let mut live: Vec<&NoteView> =
        views.iter().filter(|v| matches!(v.state.status, Status::Active | Status::StaleFlagged)).collect();
    live.sort_by_key(|v| std::cmp::Reverse(v.note.id));
    live.iter()
        .enumerate()
        .map(|(rank, v)| {
            let c = &v.note.content;
            CompletionItem {
                label: format!("#{} {}", v.note.id, c.title),
                kind: Some(CompletionItemKind::REFERENCE),
                detail: Some(format!("{}/{} · {}", c.kind, c.priority, v.state.provenance)),
                documentation: (!c.body.is_empty()).then(|| {
                    Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: c.body.clone() })
                }),
                insert_text: Some(v.note.id.to_string()),
                filter_text: Some(format!("{} {}", v.note.id, c.title)),
                sort_text: Some(format!("{rank:06}")),
                ..CompletionItem::default()
            }
        })
        .collect()
}

/// `agent · 3d` after each `- [#id]` of a memory document.
pub fn inlay_hints(text: &str, views: &[NoteView], now: Timestamp) -> Vec<InlayHint> {
    text.lines()
        .enumerate()
        .filter_map(|(line, content)| {
            let rest = content.strip_prefix("- [#")?;
            let (digits, _) = rest.split_once(']')?;
            let id: i64 = digits.parse().ok()?;
            let view = views.iter().find(|v| v.note.id == id)?;
            let end = 4 + digits.len() + 1;
            Some(InlayHint {
                position: Position::new(line as u32, utf16_column(content, end)),
                label: InlayHintLabel::String(format!("{} · {}", view.state.provenance, view.note.created_at.age(now))),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: None,
                padding_left: Some(true),
                padding_right: Some(false),
                data: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_is_being_typed_after_a_hash() {
        assert!(typing_reference("see #"));
        assert!(typing_reference("see #41"));
        assert!(!typing_reference("see 41"));
        assert!(!typing_reference(""));
    }
}
