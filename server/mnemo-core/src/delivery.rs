//! What the hooks put into an agent's context, decided as data: which notes
//! each moment selects (by the trigger bundles), how they are printed within
//! a budget, and what an agent session already holds. Two forms, never
//! confused:
//!
//! - **listed**: one index line (id, kind, priority, provenance, title, age),
//!   what session start shows of the recent notes; a listed note is not
//!   listed again in the session;
//! - **delivered in full**: the title line and the whole body, what a note
//!   gets at a moment it applies to (a directive at session start, a gotcha
//!   before an edit of its file, a note relevant to the prompt). A note
//!   delivered in full is not delivered again in the session until it
//!   changes; a note whose body the budget cut was not delivered in full.
//!
//! A note's content never changes (an edit is a new note), so "changed" is a
//! change of its status: the status delivered is the version's fingerprint.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::index_line::framed_index_line;
use crate::lifecycle::Status;
use crate::model::{Kind, NoteId, NoteView};
use crate::recall::trust_frame;
use crate::time::Timestamp;
use crate::triggers::{Moment, TriggerBundles};

/// Why an edit was held, for the agent: once per note version and session.
/// (Claude Code and Codex show a pre-edit hook's context to the model only
/// after the edit is made; a held call's reason is read before it.)
pub const HELD: &str = "mnemo held this edit once, so that these notes reach you before it is made rather than \
after. If they change nothing, make the same edit again: mnemo will not hold it for these notes again in this session.";

/// What one agent session has been told.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Told {
    /// Notes shown as one index line: not listed again.
    #[serde(default)]
    pub listed: Vec<NoteId>,
    /// Notes delivered in full, with the status they had: not delivered
    /// again until it changes.
    #[serde(default)]
    pub delivered: BTreeMap<NoteId, String>,
}

impl Told {
    /// Whether the session holds this version of the note in full.
    pub fn holds(&self, view: &NoteView) -> bool {
        self.delivered.get(&view.note.id).is_some_and(|status| *status == version(view))
    }

    /// The active notes of `views` the session does not hold in full yet.
    pub fn not_yet_delivered(&self, views: Vec<NoteView>) -> Vec<NoteView> {
        views.into_iter().filter(|v| v.state.status == Status::Active && !self.holds(v)).collect()
    }

    /// After compaction the agent's context forgot what it was told.
    pub fn forget_all(&mut self) {
        self.listed.clear();
        self.delivered.clear();
    }
}

fn version(view: &NoteView) -> String {
    view.state.status.name().to_string()
}

/// The hooks' budget when none is given (`--budget`), in tokens.
pub const DEFAULT_HOOK_TOKENS: usize = 1500;

/// What the session-start hook prints for `directives` delivered whole, in
/// characters: each title line and its indented body.
pub fn directives_size(directives: &[NoteView]) -> usize {
    directives
        .iter()
        .map(|v| {
            let title = format!("- [#{}] {} {}", v.note.id, v.note.content.title, framed(v)).len() + 1;
            title + v.note.content.body.lines().map(|l| l.len() + 3).sum::<usize>()
        })
        .sum()
}

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

/// How a note delivered in full is introduced: `- [#id] title (trust)` for
/// directives, or its index line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TitleLine {
    Plain,
    Index,
}

fn framed(view: &NoteView) -> String {
    format!("({})", trust_frame(view.state.provenance, view.note.content.quote.as_deref()))
}

/// The notes of `views` in full: each title line (always), the bodies
/// sharing what is left of the budget (one over its share is cut, saying so
/// and how to read the rest). Records every note whose body went out whole
/// as delivered, and every note as listed.
pub fn in_full(
    views: &[NoteView],
    title: TitleLine,
    now: Timestamp,
    told: &mut Told,
    budget: &mut Budget,
) -> Vec<String> {
    let mut whole: Vec<NoteView> = views.to_vec();
    let title_line = |view: &NoteView| match title {
        TitleLine::Index => format!("- {}", framed_index_line(view, now)),
        TitleLine::Plain => format!("- [#{}] {} {}", view.note.id, view.note.content.title, framed(view)),
    };
    let titles: usize = whole.iter().map(|v| title_line(v).len() + 1).sum();
    let cut = crate::budget::clip_bodies(&mut whole, budget.0.saturating_sub(titles), 2);
    let mut out = Vec::new();
    for (original, view) in views.iter().zip(&whole) {
        out.push(title_line(view));
        out.extend(view.note.content.body.lines().map(|l| format!("  {l}")));
        if !cut.contains(&view.note.id) {
            told.delivered.insert(view.note.id, version(original));
        }
        if !told.listed.contains(&view.note.id) {
            told.listed.push(view.note.id);
        }
    }
    let used: usize = out.iter().map(|l| l.len() + 1).sum();
    budget.0 = budget.0.saturating_sub(used);
    out
}

/// Index lines of `views` not yet listed, within the budget; records what
/// it printed as listed. What the budget left out is said in a last line,
/// with how to reach it (that line goes out whatever the budget).
pub fn listed(views: &[NoteView], now: Timestamp, told: &mut Told, budget: &mut Budget) -> Vec<String> {
    let mut out = Vec::new();
    let mut left_out: Vec<NoteId> = Vec::new();
    for view in views {
        if told.listed.contains(&view.note.id) {
            continue;
        }
        let line = framed_index_line(view, now);
        if !left_out.is_empty() || !budget.take(&line) {
            left_out.push(view.note.id);
            continue;
        }
        told.listed.push(view.note.id);
        out.push(line);
    }
    if let Some(line) = left_out_line(&left_out) {
        out.push(line);
    }
    out
}

/// `3 more notes left out for the budget: #12, #40, #7 (`mnemo expand ID`,
/// or recall, reaches them)`; at most ten ids are named.
fn left_out_line(ids: &[NoteId]) -> Option<String> {
    let named: Vec<String> = ids.iter().take(10).map(|id| format!("#{id}")).collect();
    let more = if ids.len() > 10 { ", …" } else { "" };
    let notes = if ids.len() == 1 { "note" } else { "notes" };
    (!ids.is_empty()).then(|| {
        format!(
            "{} more {notes} left out for the budget: {}{more} (`mnemo expand ID` or recall reaches them; a larger --budget lists them)",
            ids.len(),
            named.join(", ")
        )
    })
}

/// What a session (re)start delivers: directives and the kinds configured
/// for the moment in full, then the recent notes of the kinds some moment
/// delivers, newest first, to be listed.
#[derive(Debug, Default)]
pub struct StartSelection {
    pub directives: Vec<NoteView>,
    pub configured: Vec<NoteView>,
    pub recent: Vec<NoteView>,
}

/// The notes of a session start or post-compaction, from every note of the
/// workspace (in id order).
pub fn at_start(views: &[NoteView], triggers: &TriggerBundles, moment: Moment) -> StartSelection {
    let always = triggers.kinds_at(moment);
    let active = |v: &&NoteView| v.state.status == Status::Active;
    let of = |kinds: &[Kind]| -> Vec<NoteView> {
        views.iter().filter(active).filter(|v| kinds.contains(&v.note.content.kind)).cloned().collect()
    };
    let others: Vec<Kind> = always.iter().copied().filter(|k| *k != Kind::Directive).collect();
    let mut recent: Vec<NoteView> = views
        .iter()
        .filter(active)
        .filter(|v| !always.contains(&v.note.content.kind))
        .filter(|v| Moment::ALL.iter().any(|&m| triggers.delivers(v.note.content.kind, m)))
        .cloned()
        .collect();
    recent.reverse();
    let (mut directives, mut configured) = (of(&[Kind::Directive]), of(&others));
    by_priority(&mut directives);
    by_priority(&mut configured);
    StartSelection { directives, configured, recent }
}

/// The notes whose bodies a session start at `tokens` cuts: printed as the
/// hook prints them (directives, then the configured kinds, whole) into a
/// session that holds nothing yet. In the order they go out.
pub fn cut_at_start(selection: &StartSelection, now: Timestamp, tokens: usize) -> Vec<NoteId> {
    let (mut told, mut budget) = (Told::default(), Budget::from_tokens(tokens));
    in_full(&selection.directives, TitleLine::Plain, now, &mut told, &mut budget);
    in_full(&selection.configured, TitleLine::Plain, now, &mut told, &mut budget);
    let whole = selection.directives.iter().chain(&selection.configured);
    whole.map(|v| v.note.id).filter(|id| !told.delivered.contains_key(id)).collect()
}

/// Notes delivered whole go out high priority first (then by id), so a tight
/// budget cuts the low-priority bodies, not the first ones written.
pub fn by_priority(views: &mut [NoteView]) {
    views.sort_by_key(|v| (v.note.content.priority, v.note.id));
}

/// The notes delivered before an edit of `files` (workspace-relative): of
/// the kinds delivered at pre-edit, concerning one of the files.
pub fn before_edit(views: Vec<NoteView>, files: &[String], triggers: &TriggerBundles) -> Vec<NoteView> {
    views
        .into_iter()
        .filter(|v| triggers.delivers(v.note.content.kind, Moment::PreEdit))
        .filter(|v| files.iter().any(|file| concerns(v, file)))
        .collect()
}

/// Whether a note concerns `file` (workspace-relative): anchored to it, or
/// naming it (its path anywhere, or its file name in the title).
pub fn concerns(view: &NoteView, file: &str) -> bool {
    let c = &view.note.content;
    let name = Path::new(file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    c.anchors.iter().any(|a| a.path == file)
        || (!name.is_empty() && (c.title.contains(file) || c.body.contains(file) || c.title.contains(&name)))
}

#[cfg(test)]
mod tests;
