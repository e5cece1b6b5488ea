//! How a hook puts notes into the agent's context, within a budget, and
//! what the session remembers of it. Two forms, never confused:
//!
//! - **listed**: one index line (id, kind, priority, provenance, title, age),
//!   what session start shows of the recent notes; a listed note is not
//!   listed again in the session;
//! - **delivered in full**: the title line and the whole body, what every
//!   hook gives a note that applies to the moment (a directive at session
//!   start, a gotcha before an edit of its file, a note relevant to the
//!   prompt). A note delivered in full is not delivered again in the
//!   session until it changes; a note whose body the budget cut was not
//!   delivered in full.

use mnemo_core::index_line::index_line;
use mnemo_core::recall::trust_frame;
use mnemo_core::{NoteView, Status};
use sha2::{Digest, Sha256};

use crate::commands::session::SessionState;
use crate::context::Context;

/// A budget in characters (about four per token).
pub struct Budget(pub usize);

impl Budget {
    pub fn from_tokens(tokens: usize) -> Budget {
        Budget(tokens.saturating_mul(4))
    }

    fn take(&mut self, text: &str) -> bool {
        if text.len() > self.0 {
            return false;
        }
        self.0 -= text.len();
        true
    }
}

fn framed(view: &NoteView) -> String {
    format!("({})", trust_frame(view.state.provenance, view.note.content.quote.as_deref()))
}

/// What identifies the version of a note an agent was given: a change to
/// what it says or whether it holds is a new version.
pub fn fingerprint(view: &NoteView) -> String {
    let c = &view.note.content;
    let mut hash = Sha256::new();
    for part in [c.kind.to_string(), c.priority.to_string(), c.title.clone(), c.body.clone()] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hash.update(format!("{:?}", view.state.status).as_bytes());
    for anchor in &c.anchors {
        hash.update(format!("{}:{}-{}", anchor.path, anchor.start_line, anchor.end_line).as_bytes());
    }
    hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Whether the session already holds this version of the note in full.
pub fn already_delivered(session: &SessionState, view: &NoteView) -> bool {
    session.delivered.get(&view.note.id).is_some_and(|f| *f == fingerprint(view))
}

/// The notes of `views` in full: each title line (always), the bodies
/// sharing what is left of the budget (one over its share is cut, saying
/// so and how to read the rest). `index` chooses the title line: the
/// plain `- [#id] title (trust)` of directives, or the index line.
/// Records every note whose body went out whole as delivered.
pub fn in_full(
    ctx: &Context,
    views: &[NoteView],
    index: bool,
    session: &mut SessionState,
    budget: &mut Budget,
) -> Vec<String> {
    let mut whole: Vec<NoteView> = views.to_vec();
    let title_line = |view: &NoteView| {
        if index {
            format!("- {} {}", index_line(&view.note, &view.state, ctx.now), framed(view))
        } else {
            format!("- [#{}] {} {}", view.note.id, view.note.content.title, framed(view))
        }
    };
    let titles: usize = whole.iter().map(|v| title_line(v).len() + 1).sum();
    let cut = mnemo_core::budget::clip_bodies(&mut whole, budget.0.saturating_sub(titles), 2);
    let mut out = Vec::new();
    for (original, view) in views.iter().zip(&whole) {
        out.push(title_line(view));
        out.extend(view.note.content.body.lines().map(|l| format!("  {l}")));
        if !cut.contains(&view.note.id) {
            session.delivered.insert(view.note.id, fingerprint(original));
        }
        if !session.listed.contains(&view.note.id) {
            session.listed.push(view.note.id);
        }
    }
    let used: usize = out.iter().map(|l| l.len() + 1).sum();
    budget.0 = budget.0.saturating_sub(used);
    out
}

/// Index lines of `views` not yet listed nor delivered, within the budget;
/// records what it printed as listed.
pub fn listed(ctx: &Context, views: &[NoteView], session: &mut SessionState, budget: &mut Budget) -> Vec<String> {
    let mut out = Vec::new();
    for view in views {
        if session.listed.contains(&view.note.id) {
            continue;
        }
        let line = format!("{} {}", index_line(&view.note, &view.state, ctx.now), framed(view));
        if !budget.take(&line) {
            break;
        }
        session.listed.push(view.note.id);
        out.push(line);
    }
    out
}

/// The active notes of `views` this session does not hold in full yet.
pub fn not_yet_delivered(views: Vec<NoteView>, session: &SessionState) -> Vec<NoteView> {
    views.into_iter().filter(|v| v.state.status == Status::Active && !already_delivered(session, v)).collect()
}
