//! What an agent receives from the read tools, within the `max_tokens`
//! budget: compact text (the lines `app::recall_text` words, as the CLI
//! prints them) and, for recall and context, the same data as structured
//! content. Both forms fit the budget on their own, whichever a client hands
//! its model; what does not fit is cut from the end and named, never
//! dropped silently. No I/O: the tools hand in what they read.

use mnemo_core::budget::clip_bodies;
use mnemo_core::time::Timestamp;
use mnemo_core::{NoteId, NoteView};
use mnemo_store::StoredEvent;
use rmcp::model::{CallToolResult, Content};
use serde::Serialize;

use super::output::{ContextOutput, Directive, RecallOutput};
use crate::app::recall::{Answer, ranking_line};
use crate::app::recall_text::{
    context_heading, directive_lines, directives_heading, expanded_text, hidden_line, result_lines,
};
use crate::output::event_text;

/// How an agent over MCP sees weaker matches recall held back.
const SEE_HELD_BACK: &str = "call recall with all: true to see them";

/// A read tool's answer: the text, and the same data as structured content.
pub struct Rendered<T> {
    pub text: String,
    pub structured: T,
}

impl<T: Serialize> Rendered<T> {
    pub fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::success(vec![Content::text(self.text)]);
        result.structured_content = Some(serde_json::to_value(self.structured).expect("tool outputs serialise"));
        result
    }
}

/// A write tool's answer: its structured content, and the same as one line
/// of JSON for clients that read only the text.
pub fn written(structured: &impl Serialize) -> CallToolResult {
    CallToolResult::structured(serde_json::to_value(structured).expect("tool outputs serialise"))
}

/// The rendering of the most of `count` items that fits `budget` bytes as
/// text and as JSON (each on its own); the one with none when not even that
/// fits, since the parts that say what was cut always go out.
fn most_that_fit<T: Serialize>(count: usize, budget: usize, render: impl Fn(usize) -> (String, T)) -> (String, T) {
    let fits = |(text, structured): &(String, T)| {
        text.len() <= budget && serde_json::to_string(structured).is_ok_and(|json| json.len() <= budget)
    };
    (1..=count).rev().map(&render).find(fits).unwrap_or_else(|| render(0))
}

/// `3 more notes cut by max_tokens: #12, #40, #7; raise max_tokens or expand them`.
fn cut_line(cut: &[NoteId]) -> Option<String> {
    if cut.is_empty() {
        return None;
    }
    let ids: Vec<String> = cut.iter().map(|id| format!("#{id}")).collect();
    let notes = if cut.len() == 1 { "note" } else { "notes" };
    Some(format!("{} more {notes} cut by max_tokens: {}; raise max_tokens or expand them", cut.len(), ids.join(", ")))
}

/// The lines after a recall answer's notes: why there are none, what was
/// held back, cut and hidden.
fn answer_tail(answer: &Answer, cut: &[NoteId], hidden: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(abstention) = answer.answer.abstention {
        lines.push(format!("{}; {SEE_HELD_BACK}", abstention.describe()));
    } else if answer.views.is_empty() {
        lines.push("no notes match".into());
    }
    lines.extend(answer.answer.describe_unconfident());
    lines.extend(cut_line(cut));
    if hidden {
        lines.push(hidden_line(&answer.answer));
    }
    lines.push(ranking_line(answer));
    lines
}

fn joined(lines: impl IntoIterator<Item = String>) -> String {
    lines.into_iter().map(|line| line + "\n").collect()
}

/// `recall`: one line a note, then what was held back, cut and hidden, and the ranking.
pub fn recall(answer: &Answer, budget: usize, now: Timestamp) -> CallToolResult {
    let lines = result_lines(answer, now);
    let (text, structured) = most_that_fit(lines.len(), budget, |kept| {
        let structured = RecallOutput::of(answer, kept, now);
        let text = joined(lines[..kept].iter().cloned().chain(answer_tail(answer, &structured.cut, true)));
        (text, structured)
    });
    Rendered { text, structured }.into_result()
}

/// `context` and the session-start prompt: the directives whole (their
/// bodies sharing the budget), then the relevant or recent notes in what is
/// left of it.
pub fn context(
    directives: &[NoteView],
    relevant: &Answer,
    task: &str,
    budget: usize,
    now: Timestamp,
) -> Rendered<ContextOutput> {
    let render = |directives: &[NoteView], cut_bodies: &[NoteId], kept: usize| {
        let notes = RecallOutput::of(relevant, kept, now);
        let mut lines = vec![directives_heading(directives.len())];
        lines.extend(directives.iter().flat_map(directive_lines));
        lines.extend([String::new(), context_heading(task)]);
        lines.extend(result_lines(relevant, now).into_iter().take(kept));
        lines.extend(answer_tail(relevant, &notes.cut, !task.trim().is_empty()));
        lines.push("(expand with ids returns notes in full)".into());
        let structured = ContextOutput {
            directives: directives.iter().map(Directive::of).collect(),
            directive_bodies_cut: cut_bodies.to_vec(),
            task: task.to_string(),
            notes,
        };
        (joined(lines), structured)
    };
    // The bodies share what the bundle leaves them: the budget less every
    // other line, with no note after the directives. A cut body's notice
    // and JSON's escapes are not in that share: while the bundle is over,
    // the share shrinks by the excess (a body keeps its smallest share).
    let size = |(text, structured): &(String, ContextOutput)| {
        text.len().max(serde_json::to_string(structured).map_or(usize::MAX, |json| json.len()))
    };
    let mut bare = directives.to_vec();
    for view in &mut bare {
        view.note.content.body.clear();
    }
    let mut share = budget.saturating_sub(size(&render(&bare, &[], 0)));
    let (mut clipped, mut cut_bodies) = (directives.to_vec(), Vec::new());
    for _ in 0..8 {
        clipped = directives.to_vec();
        cut_bodies = clip_bodies(&mut clipped, share, 2);
        let over = size(&render(&clipped, &cut_bodies, 0)).saturating_sub(budget);
        if over == 0 || share == 0 {
            break;
        }
        share = share.saturating_sub(over);
    }
    let (text, structured) = most_that_fit(relevant.views.len(), budget, |kept| render(&clipped, &cut_bodies, kept));
    Rendered { text, structured }
}

/// `expand`: each note whole, its trust frame first; the bodies share the
/// budget and one over its share is cut, saying so.
pub fn expand(views: &[NoteView], budget: usize) -> CallToolResult {
    let render = |views: &[NoteView]| views.iter().map(expanded_text).collect::<Vec<_>>().join("---\n");
    let mut bare = views.to_vec();
    for view in &mut bare {
        view.note.content.body.clear();
    }
    let mut clipped = views.to_vec();
    let cut = clip_bodies(&mut clipped, budget.saturating_sub(render(&bare).len()), 0);
    let mut text = render(&clipped);
    if !cut.is_empty() {
        let ids: Vec<String> = cut.iter().map(|id| format!("#{id}")).collect();
        text.push_str(&format!(
            "bodies cut by max_tokens: {} (each says how much); raise max_tokens or expand fewer ids at once\n",
            ids.join(", ")
        ));
    }
    CallToolResult::success(vec![Content::text(text)])
}

/// `history`: one line an event, oldest first; the oldest are cut when the
/// budget is short, saying how many.
pub fn history(events: &[StoredEvent], budget: usize) -> CallToolResult {
    let lines: Vec<String> = events.iter().map(event_text).collect();
    let render = |kept: usize| {
        let cut = lines.len() - kept;
        let head = (cut > 0).then(|| {
            let events = if cut == 1 { "event" } else { "events" };
            format!("{cut} earlier {events} cut by max_tokens; raise max_tokens to see them")
        });
        (joined(head.into_iter().chain(lines[cut..].iter().cloned())), ())
    };
    let (text, ()) = most_that_fit(lines.len(), budget, render);
    CallToolResult::success(vec![Content::text(text)])
}
