//! Whose entry is it? An entry's id says which note it edits, but a person
//! can retype an id (`[#2]` → `[#3]`, `[#1]` → `[#999]`) and then the id
//! lies: taken at its word, the edit would supersede #3 with #2's text and
//! revoke #2 as deleted. docs/format.md: "change an id … nothing for that entry;
//! a diagnostic on that line" — and no other note may change because of it.
//!
//! An entry is its id's own when it still looks like that note in the base
//! (the same creation date, and the same title or body). One that does not,
//! but looks like another note of the base, is that other note with a
//! retyped id: refused, and the note it came from is protected from being
//! taken as deleted. An entry with an unknown or duplicated id protects a
//! vanished note of the same date and section it probably was.

use std::borrow::Borrow;

use foldhash::{HashMap, HashSet};

use crate::memory_md::{Entry, ParsedEntry};
use crate::model::{NoteId, normalize_body, normalize_title};

/// What the identity check found in an edited checkout.
#[derive(Debug, Default)]
pub(super) struct Identities {
    /// Entries (by index) whose id is not theirs, with why.
    pub refused: HashMap<usize, String>,
    /// Base notes that vanished from the text because an id was retyped:
    /// never taken as deleted.
    pub protected: HashSet<NoteId>,
    /// Entries (by index) with an unknown or duplicated id, and the vanished
    /// note they probably were.
    pub probably: HashMap<usize, NoteId>,
}

/// The same creation date, and the same title or the same (non-empty) body.
fn looks_like(entry: &Entry, base: &Entry) -> bool {
    // An entry taken over from the base as it was (`reparse.rs`) is the base's own.
    std::ptr::eq(entry, base)
        || entry.created == base.created
            && (entry.title == base.title
                || normalize_title(&entry.title) == normalize_title(&base.title)
                || (!base.body.trim().is_empty() && normalize_body(&entry.body) == normalize_body(&base.body)))
}

/// The identity of every entry of `edited` that carries an id, against `base`
/// (`by_id`: its entries by id, as the plan indexed them). `skip` holds
/// entries judged elsewhere (cut or swallowed text). `base` may be a window
/// of the `whole` base (`window.rs`) around `edited`: an exact copy of a
/// note is still looked for in the whole.
pub(super) fn identities(
    base: &[impl Borrow<Entry>],
    whole: &[impl Borrow<Entry>],
    by_id: &HashMap<NoteId, &Entry>,
    edited: &[ParsedEntry],
    skip: &HashSet<usize>,
) -> Identities {
    let base_entries = || base.iter().map(Borrow::borrow);
    // Whether each entry still looks like its id's note in the base.
    let own: Vec<bool> = edited
        .iter()
        .map(|p| p.entry.id.and_then(|id| by_id.get(&id)).is_some_and(|b| looks_like(&p.entry, b)))
        .collect();
    // How many entries carry each id (the refused ones taken off below).
    let mut count: HashMap<NoteId, usize> = HashMap::with_capacity_and_hasher(edited.len(), Default::default());
    for parsed in edited {
        if let Some(id) = parsed.entry.id {
            *count.entry(id).or_default() += 1;
        }
    }
    let strange = |index: usize, parsed: &ParsedEntry| {
        let Some(id) = parsed.entry.id else { return false };
        let unknown_or_repeated = !by_id.contains_key(&id) || count.get(&id).is_some_and(|n| *n > 1);
        !skip.contains(&index) && (!own[index] || unknown_or_repeated)
    };
    // Most edits keep every id its own: then nothing below is searched for.
    if !edited.iter().enumerate().any(|(index, parsed)| strange(index, parsed)) {
        return Identities::default();
    }
    // Every search below wants the same creation date first: the base notes
    // of each date, in base order, so a search reads one day's notes.
    let mut by_date: HashMap<&Option<String>, Vec<(NoteId, &Entry)>> = HashMap::default();
    for b in base_entries() {
        if let Some(id) = b.id {
            by_date.entry(&b.created).or_default().push((id, b));
        }
    }
    let same_day = |entry: &Entry| by_date.get(&entry.created).map_or(&[][..], Vec::as_slice).to_vec().into_iter();
    // The whole base's notes of the days searched, when `base` is a window
    // of it: read once, in base order.
    let mut whole_by_date: HashMap<&Option<String>, Vec<(NoteId, &Entry)>> = HashMap::default();
    let windowed = whole.len() != base.len();
    if windowed {
        let days: HashSet<&Option<String>> =
            edited.iter().enumerate().filter(|(index, p)| strange(*index, p)).map(|(_, p)| &p.entry.created).collect();
        for b in whole.iter().map(Borrow::borrow) {
            if let Some(id) = b.id
                && days.contains(&b.created)
            {
                whole_by_date.entry(&b.created).or_default().push((id, b));
            }
        }
    }
    let same_day_in_whole = |entry: &Entry| match windowed {
        true => whole_by_date.get(&entry.created).map_or(&[][..], Vec::as_slice).to_vec().into_iter(),
        false => same_day(entry),
    };
    // A base note is recognised when an entry with its id still looks like it.
    let recognised: HashSet<NoteId> =
        edited.iter().zip(&own).filter(|(_, own)| **own).filter_map(|(p, _)| p.entry.id).collect();
    let mut found = Identities::default();
    for (index, parsed) in edited.iter().enumerate() {
        let entry = &parsed.entry;
        let Some(id) = entry.id else { continue };
        if skip.contains(&index) || own[index] {
            continue;
        }
        // A note whose own entry is gone and which this entry looks like
        // (exactly its text first).
        let other = same_day(entry)
            .filter(|(other, b)| *other != id && !recognised.contains(other) && looks_like(entry, b))
            .max_by_key(|(other, b)| (b.title == entry.title && b.body == entry.body, std::cmp::Reverse(*other)))
            .map(|(other, _)| other);
        if let Some(other) = other {
            found.protected.insert(other);
            found.refused.insert(
                index,
                format!(
                    "this entry is #{other} (its date and text) with its id changed to #{id}; an id cannot be changed: put back [#{other}], or remove the id to make it a new note"
                ),
            );
            continue;
        }
        // An exact copy of a note that is still there, under another id (a
        // retyped id carried back next to its restored note, say).
        let copied = same_day_in_whole(entry).find(|(other, b)| {
            *other != id
                && b.created == entry.created
                && normalize_title(&b.title) == normalize_title(&entry.title)
                && normalize_body(&b.body) == normalize_body(&entry.body)
        });
        if let Some((other, _)) = copied {
            found.refused.insert(
                index,
                format!(
                    "this entry repeats #{other} (its date and text) under the id #{id}; an id cannot be changed: delete this copy, or remove its id to make it a new note"
                ),
            );
        }
    }
    // Unknown or duplicated ids: the vanished note of the same date and
    // section they sit in (counted without the entries refused above).
    // (Every id of the edit keeps its key in `count`, even at 0.)
    for index in found.refused.keys() {
        if let Some(n) = edited[*index].entry.id.and_then(|id| count.get_mut(&id)) {
            *n -= 1;
        }
    }
    for (index, parsed) in edited.iter().enumerate() {
        let entry = &parsed.entry;
        let Some(id) = entry.id else { continue };
        let doubtful = !by_id.contains_key(&id) || count.get(&id).is_some_and(|n| *n > 1);
        if !doubtful || found.refused.contains_key(&index) || skip.contains(&index) {
            continue;
        }
        let gone = same_day(entry).find(|(other, b)| {
            *other != id
                && !recognised.contains(other)
                && !count.contains_key(other)
                && !found.protected.contains(other)
                && b.created == entry.created
                && b.kind == entry.kind
        });
        if let Some((other, _)) = gone {
            found.protected.insert(other);
            found.probably.insert(index, other);
        }
    }
    found
}
