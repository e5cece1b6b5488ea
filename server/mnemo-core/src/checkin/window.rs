//! The part of an edit a check-in has to look at. An edit parsed beside its
//! base (`memory_md/reparse.rs`) shares every entry it took over as it was:
//! the same allocation as the base's. A person who changed a few entries of
//! a 100k-note checkout left a long run of shared entries before them and
//! after them; those yield nothing in a plan (an untouched entry is never
//! judged changed, whatever the store did), so the plan and the notes it
//! consults need only the entries between — when nothing between reaches
//! outside it.
//!
//! It does not when an entry between carries an id the window's base lacks
//! (a new id, one retyped to a note outside it, a copy of an entry outside
//! it) or repeats an id, or when a resolution names a note outside it: then
//! the whole edit is the window, as before. (An entry that no longer looks
//! like its note is still looked for as an exact copy of any note of the
//! base: `identity.rs` reads the whole base for the days of such entries.)
//! The run at each end stops at an entry without an id and at one a problem
//! the parse found touches (on its lines or below them, before the next
//! entry: such an entry is judged, not passed over). A base holds each id
//! once (a rendering, or a carried base made from one): an id repeated in
//! the runs would go unseen.

use std::borrow::Borrow;
use std::ops::Range;

use foldhash::HashSet;

use super::{Resolutions, by_id};
use crate::memory_md::{Entry, ParsedCheckout, Severity};
use crate::model::NoteId;

/// Which entries of the base and of the edit a plan looks at: the edit's
/// `edited` entries stand where the base's `base` stood, every entry
/// before and after both the same entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Window {
    pub base: Range<usize>,
    pub edited: Range<usize>,
}

impl Window {
    /// Every entry of both.
    fn whole(base: usize, edited: usize) -> Window {
        Window { base: 0..base, edited: 0..edited }
    }

    /// Whether the window leaves any entry out.
    pub fn narrowed(&self, base: usize, edited: usize) -> bool {
        *self != Window::whole(base, edited)
    }
}

/// The window of `edited` against `base` (see the module's header).
pub(super) fn window(base: &[impl Borrow<Entry>], edited: &ParsedCheckout, resolutions: &Resolutions) -> Window {
    let entries = &edited.entries;
    let whole = Window::whole(base.len(), entries.len());
    let same = |b: usize, e: usize| {
        let before: &Entry = base[b].borrow();
        before.id.is_some() && std::ptr::eq(before, &*entries[e].entry)
    };
    // Problems the plan judges entries by (`troubled_entries`): one after
    // an entry's first line and before the next entry's keeps the entry
    // inside the window.
    let mut problems: Vec<usize> = edited
        .diagnostics
        .iter()
        .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
        .map(|d| d.line)
        .collect();
    problems.sort_unstable();
    let untroubled = |e: usize| {
        let next = entries.get(e + 1).map_or(usize::MAX, |next| next.first_line);
        let after_first = problems.partition_point(|&line| line <= entries[e].first_line);
        problems.get(after_first).is_none_or(|&line| line >= next)
    };
    let shortest = base.len().min(entries.len());
    let mut before = 0;
    while before < shortest && same(before, before) && untroubled(before) {
        before += 1;
    }
    let mut after = 0;
    while before + after < shortest
        && same(base.len() - 1 - after, entries.len() - 1 - after)
        && untroubled(entries.len() - 1 - after)
    {
        after += 1;
    }
    if before + after == 0 {
        return whole;
    }
    let window = Window { base: before..base.len() - after, edited: before..entries.len() - after };
    // Nothing inside may reach outside: each id an entry carries is the
    // window's base's, once; each resolution names a note of it.
    let inside = by_id(&base[window.base.clone()]);
    let mut seen: HashSet<NoteId> = HashSet::default();
    let reaches_out = entries[window.edited.clone()]
        .iter()
        .filter_map(|p| p.entry.id)
        .any(|id| !inside.contains_key(&id) || !seen.insert(id));
    let resolved_outside =
        resolutions.keep_mine.iter().chain(&resolutions.take_theirs).any(|id| !inside.contains_key(id));
    if reaches_out || resolved_outside { whole } else { window }
}
