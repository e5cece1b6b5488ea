//! Recall answers as text: the wording every entry point that prints one
//! shares (the CLI's `recall` and `context`, the MCP tools and the
//! session-start prompt). One line a note — its index line with the trust
//! frame — then what the filters hid and the ranking that ran. Wording only:
//! what is recalled is `app::recall`'s, and a budget is the caller's.

use mnemo_core::NoteView;
use mnemo_core::index_line::framed_index_line;
use mnemo_core::recall::{Ranked, RecallAnswer, trust_frame};
use mnemo_core::time::Timestamp;

use crate::app::recall::Answer;
use crate::output::note_text;

/// One recalled note: its framed index line, and the superseded note it was
/// found through, `[#15] finding/medium · agent · … · 2d (recorded by an
/// agent session; verify before relying on it) (replaces #9, which matched)`.
pub(crate) fn result_line(view: &NoteView, ranked: Option<&Ranked>, now: Timestamp) -> String {
    let line = framed_index_line(view, now);
    match ranked.and_then(|r| r.via_superseded) {
        Some(old) => format!("{line} (replaces #{old}, which matched)"),
        None => line,
    }
}

/// Every note of the answer, one line each, best first.
pub(crate) fn result_lines(answer: &Answer, now: Timestamp) -> Vec<String> {
    answer.views.iter().enumerate().map(|(i, view)| result_line(view, answer.answer.results.get(i), now)).collect()
}

/// `hidden: 1 stale (#12), 2 other workspace`, or `hidden: nothing`.
pub(crate) fn hidden_line(answer: &RecallAnswer) -> String {
    format!("hidden: {}", answer.describe_hidden())
}

/// A standing directive delivered whole: `- [#3] Title — trust frame`, then
/// its body indented by two spaces.
pub(crate) fn directive_lines(view: &NoteView) -> Vec<String> {
    let c = &view.note.content;
    let head =
        format!("- [#{}] {} — {}", view.note.id, c.title, trust_frame(view.state.provenance, c.quote.as_deref()));
    std::iter::once(head).chain(c.body.lines().map(|line| format!("  {line}"))).collect()
}

/// The heading of the session-start bundle's notes after the directives.
pub(crate) fn context_heading(task: &str) -> String {
    if task.trim().is_empty() { "## Recent notes".to_string() } else { format!("## Notes relevant to: {task}") }
}

/// The heading of the session-start bundle's directives.
pub(crate) fn directives_heading(count: usize) -> String {
    format!("## Standing directives ({count})")
}

/// A note in full, as `expand` gives it: its trust frame, then the note.
pub(crate) fn expanded_text(view: &NoteView) -> String {
    let c = &view.note.content;
    format!("({})\n{}", trust_frame(view.state.provenance, c.quote.as_deref()), note_text(view))
}
