//! Check-in planning, pure: compare the checkout's base entries, the entries
//! a person saved, and the store's entries now, and turn every difference
//! into a [`Change`] — or into a diagnostic or a [`Conflict`] when it cannot
//! be applied (docs/format.md, "Editing a checkout" and "Conflicts").
//!
//! Per entry, never all-or-nothing: each entry is judged on its own. An
//! entry the person did not touch yields nothing, whatever the store did
//! meanwhile; an entry both sides changed is a conflict and is not applied.
//! The store applies the changes through the one write path.

use std::borrow::Borrow;

use std::collections::HashSet;

use foldhash::HashMap;

use crate::memory_md::parse::UNEXPECTED_TEXT;
use crate::memory_md::{AnchorLink, Diagnostic, Entry, ParsedCheckout, Severity, StateMarker};
use crate::model::{Kind, NoteId, Priority, normalize_body, normalize_reason, normalize_title};

/// The reason recorded when a person deletes an entry.
pub const DELETED_REASON: &str = "deleted in MEMORY.md";

/// The reason recorded when a person deletes a proposal's entry.
pub const REJECTED_REASON: &str = "rejected: deleted in MEMORY.md";

/// What a person's edit asks of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A new entry (no id): a note with provenance `human`.
    Create {
        line: usize,
        content: Content,
    },
    Revoke {
        line: usize,
        id: NoteId,
        reason: String,
    },
    FlagStale {
        line: usize,
        id: NoteId,
        reason: String,
    },
    Reinstate {
        line: usize,
        id: NoteId,
    },
    /// A proposal's `PROPOSED` marker removed: the person accepts it.
    Accept {
        line: usize,
        id: NoteId,
    },
    /// Changed content or section: a new note replaces the old one.
    Supersede {
        line: usize,
        id: NoteId,
        content: Content,
    },
}

impl Change {
    /// What applying the change did, given the id it touched or created.
    pub fn describe(&self, applied: NoteId) -> String {
        match self {
            Change::Create { .. } => format!("created #{applied}"),
            Change::Supersede { id, .. } => format!("#{id} superseded by #{applied}"),
            Change::Revoke { reason, .. } => format!("revoked #{applied} ({reason})"),
            Change::FlagStale { reason, .. } => format!("flagged #{applied} stale ({reason})"),
            Change::Reinstate { .. } => format!("reinstated #{applied}"),
            Change::Accept { .. } => format!("accepted #{applied}"),
        }
    }
}

/// The editable content of an entry, normalised as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Content {
    pub kind: Kind,
    pub priority: Priority,
    pub title: String,
    pub body: String,
    pub anchors: Vec<AnchorLink>,
}

/// An entry both the person and the store changed since the checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub line: usize,
    pub id: NoteId,
    /// The person's version; `None` when they deleted it.
    pub mine: Option<Entry>,
    /// The store's version now; `None` when it was forgotten.
    pub theirs: Option<Entry>,
    /// When the store superseded the note: the live note at the end of the
    /// chain, which is what the other side's text now is.
    pub successor: Option<Entry>,
}

impl Conflict {
    /// Both sides as a person reads them: each version's line and body; the
    /// store's side is its successor's text when it was superseded.
    pub fn sides(&self) -> (String, String) {
        let mine = self.mine.as_ref().map_or("deleted".to_string(), version_text);
        let theirs = match (&self.theirs, &self.successor) {
            (Some(_), Some(successor)) => {
                format!("superseded by #{}: {}", successor.id.unwrap_or_default(), version_text(successor))
            }
            (Some(theirs), None) => version_text(theirs),
            (None, _) => "forgotten".to_string(),
        };
        (mine, theirs)
    }
}

/// One version of an entry in a conflict: its summary line and, when it has
/// one, its body (cut at 300 characters), in «».
pub fn version_text(entry: &Entry) -> String {
    let body = normalize_body(&entry.body);
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let body = match body.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &body[..cut]),
        None => body,
    };
    if body.is_empty() { format!("«{}»", summary(entry)) } else { format!("«{} — {body}»", summary(entry)) }
}

/// The entries that carry an id, by id.
fn by_id<E: Borrow<Entry>>(entries: &[E]) -> HashMap<NoteId, &Entry> {
    let mut by_id = HashMap::with_capacity_and_hasher(entries.len(), Default::default());
    by_id.extend(entries.iter().map(Borrow::borrow).filter_map(|e: &Entry| Some((e.id?, e))));
    by_id
}

/// The live note at the end of `entry`'s supersession chain in `current`.
fn successor_of(entry: &Entry, current: &HashMap<NoteId, &Entry>) -> Option<Entry> {
    let mut at = entry;
    for _ in 0..64 {
        match shown(at) {
            Shown::Superseded(by) => at = current.get(&by)?,
            _ => return (!std::ptr::eq(at, entry)).then(|| at.clone()),
        }
    }
    None
}

/// Everything a check-in would do and everything it refuses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckinPlan {
    pub changes: Vec<Change>,
    pub conflicts: Vec<Conflict>,
    pub diagnostics: Vec<Diagnostic>,
}

/// How a person resolved conflicts, per note id (docs/format.md, "Conflicts").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Resolutions {
    /// "Keep mine": apply my edit on top of the store's current state.
    pub keep_mine: HashSet<NoteId>,
    /// "Take theirs": drop my edit; the store's version stands.
    pub take_theirs: HashSet<NoteId>,
}

/// The lifecycle state an entry's marker shows, dates aside.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shown {
    Active,
    Revoked(String),
    Stale(String),
    Expired,
    Superseded(NoteId),
    Proposed,
}

fn shown(entry: &Entry) -> Shown {
    match &entry.marker {
        None => Shown::Active,
        Some(StateMarker::Revoked { reason, .. }) => Shown::Revoked(normalize_reason(reason)),
        Some(StateMarker::Stale { reason, .. }) => Shown::Stale(normalize_reason(reason)),
        Some(StateMarker::Expired { .. }) => Shown::Expired,
        Some(StateMarker::Superseded { by, .. }) => Shown::Superseded(*by),
        Some(StateMarker::Proposed { .. }) => Shown::Proposed,
    }
}

fn content(entry: &Entry) -> Content {
    Content {
        kind: entry.kind,
        priority: entry.priority,
        title: normalize_title(&entry.title),
        body: normalize_body(&entry.body),
        anchors: entry.anchors.clone(),
    }
}

/// "Keep mine": my edit, as a change from `base`, replayed on the store's
/// version `now`: content I did not touch takes the store's value; the state
/// is mine (an entry I edited as active stays active).
fn rebase(mine: &Entry, base: &Entry, now: &Entry) -> Entry {
    let mut rebased = mine.clone();
    if content(mine) == content(base) {
        rebased.kind = now.kind;
        rebased.priority = now.priority;
        rebased.title = now.title.clone();
        rebased.body = now.body.clone();
        rebased.anchors = now.anchors.clone();
    }
    rebased
}

/// Whether two versions of an entry differ in anything a person can edit.
fn differs(a: &Entry, b: &Entry) -> bool {
    content(a) != content(b) || shown(a) != shown(b)
}

fn diagnostic(line: usize, severity: Severity, message: String) -> Diagnostic {
    Diagnostic { line, start_column: 0, end_column: 0, severity, message }
}

/// Plan the check-in of `edited` against its `base` entries and the store's
/// `current` entries of the same workspace, honouring `resolutions`.
/// `current` needs to hold only the [`consulted`] notes and the notes that
/// superseded them; notes it lacks are taken as forgotten. `base` holds
/// each id once (a rendering, or a base carried from one: `carry.rs`).
/// Only the window of the edit is looked at (`checkin/window.rs`).
pub fn plan_checkin(
    base: &[impl Borrow<Entry>],
    edited: &ParsedCheckout,
    current: &[Entry],
    resolutions: &Resolutions,
) -> CheckinPlan {
    let mut plan = CheckinPlan { diagnostics: edited.diagnostics.clone(), ..CheckinPlan::default() };
    if edited.refused_mirror {
        return plan;
    }
    if edited.epoch.is_none() {
        plan.diagnostics.push(diagnostic(0, Severity::Error, "nothing was checked in: without the checkout header the edit has no base; restore line 1 from a fresh checkout".into()));
        return plan;
    }
    // Only the entries between the runs the edit shares with its base (`window.rs`).
    let window = window::window(base, edited, resolutions);
    let narrowed = window.narrowed(base.len(), edited.entries.len());
    let (whole_base, base) = (base, &base[window.base.clone()]);
    let entries = &edited.entries[window.edited.clone()];
    let base_by_id = by_id(base);
    let current_by_id = by_id(current);
    // Whether a note is the base's; the base outside the window is read
    // only when a new entry is compared with the notes created since the
    // checkout, and then once.
    let outside: std::cell::OnceCell<foldhash::HashSet<NoteId>> = std::cell::OnceCell::new();
    let in_base = |id: NoteId| {
        base_by_id.contains_key(&id)
            || narrowed
                && outside
                    .get_or_init(|| whole_base.iter().filter_map(|e| Borrow::<Entry>::borrow(e).id).collect())
                    .contains(&id)
    };
    let mut seen: foldhash::HashSet<NoteId> = foldhash::HashSet::default();
    // A problem inside an entry, or between it and the next one, may mean
    // its text was cut or swallowed: leave the entry alone until it is fixed.
    let troubled = troubled_entries(edited, window.edited.clone());
    let identity = identity::identities(base, whole_base, &base_by_id, entries, &troubled);
    let probably = |index: usize| {
        identity
            .probably
            .get(&index)
            .map_or(String::new(), |was| format!(" (was this #{was}? an id cannot be changed)"))
    };
    for (index, parsed) in entries.iter().enumerate() {
        let line = parsed.first_line;
        let mine = &parsed.entry;
        if troubled.contains(&index) {
            if let Some(id) = mine.id {
                seen.insert(id);
            }
            let what = mine.id.map_or("this new entry".to_string(), |id| format!("#{id}"));
            plan.diagnostics.push(diagnostic(
                line,
                Severity::Error,
                format!("{what} was not checked in: fix the problem in or below it first"),
            ));
            continue;
        }
        if mine.id.is_none() && mine.marker.is_some() {
            plan.diagnostics.push(diagnostic(
                line,
                Severity::Error,
                "a new entry cannot carry a state marker; write it without one".into(),
            ));
            continue;
        }
        let Some(id) = mine.id else {
            // Checking the same file in twice must not create the note twice.
            let wanted = content(mine);
            let already = current.iter().any(|c| c.id.is_some_and(|id| !in_base(id)) && content(c) == wanted);
            if !already {
                plan.changes.push(Change::Create { line, content: wanted });
            }
            continue;
        };
        if let Some(message) = identity.refused.get(&index) {
            plan.diagnostics.push(diagnostic(line, Severity::Error, message.clone()));
            continue;
        }
        if !seen.insert(id) {
            plan.diagnostics.push(diagnostic(
                line,
                Severity::Error,
                format!("#{id} appears twice; keep one entry per note{}", probably(index)),
            ));
            continue;
        }
        let Some(before) = base_by_id.get(&id) else {
            let message = if current_by_id.contains_key(&id) {
                format!("#{id} was not in this checkout; take a fresh checkout to edit it{}", probably(index))
            } else {
                format!(
                    "there is no note #{id} in this workspace; remove the id to create a new note{}",
                    probably(index)
                )
            };
            plan.diagnostics.push(diagnostic(line, Severity::Error, message));
            continue;
        };
        if resolutions.take_theirs.contains(&id) {
            continue;
        }
        if before.created != mine.created {
            plan.diagnostics.push(diagnostic(
                line,
                Severity::Error,
                format!("the date of #{id} is the note's creation date and cannot be changed"),
            ));
            continue;
        }
        if resolutions.keep_mine.contains(&id) {
            match current_by_id.get(&id) {
                // The store superseded it: my edit goes on top of the live successor.
                Some(now) => match successor_of(now, &current_by_id).and_then(|s| Some((s.id?, s))) {
                    Some((head, successor)) => {
                        let mine = rebase(mine, before, &successor);
                        judge(&mut plan, line, head, &successor, Some(&mine), &current_by_id)
                    }
                    None => judge(&mut plan, line, id, now, Some(&rebase(mine, before, now)), &current_by_id),
                },
                None => plan.diagnostics.push(diagnostic(
                    line,
                    Severity::Error,
                    format!("#{id} was forgotten in the store, so there is nothing to keep it on; remove its id to create it anew"),
                )),
            }
            continue;
        }
        judge(&mut plan, line, id, before, Some(mine), &current_by_id);
    }
    for before in base.iter().map(Borrow::borrow) {
        let Some(id) = before.id else { continue };
        if seen.contains(&id)
            || edited.unreadable_ids.iter().any(|(_, unreadable)| *unreadable == id)
            || identity.protected.contains(&id)
            || resolutions.take_theirs.contains(&id)
        {
            continue;
        }
        let before = match resolutions.keep_mine.contains(&id) {
            true => match current_by_id.get(&id) {
                Some(now) => now,
                None => continue,
            },
            false => before,
        };
        judge(&mut plan, 0, id, before, None, &current_by_id);
    }
    plan
}

/// The entries of `within` (by index from its start) with a problem inside
/// them, or a stray line between them and the next entry: each is looked
/// up among the problems sorted by line, so a checkout with thousands of
/// each costs no more than reading them.
fn troubled_entries(edited: &ParsedCheckout, within: std::ops::Range<usize>) -> foldhash::HashSet<usize> {
    let mut serious: Vec<(usize, bool)> = edited
        .diagnostics
        .iter()
        .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
        .map(|d| (d.line, d.message == UNEXPECTED_TEXT))
        .collect();
    serious.sort_unstable();
    let mut troubled = foldhash::HashSet::default();
    let start = within.start;
    for (index, parsed) in edited.entries[within].iter().enumerate() {
        let next = edited.entries.get(start + index + 1).map_or(usize::MAX, |e| e.first_line);
        let after_first = serious.partition_point(|&(line, _)| line <= parsed.first_line);
        let hit = serious[after_first..].iter().take_while(|&&(line, _)| line < next).any(|&(line, stray)| {
            let inside = line <= parsed.last_line;
            inside || stray
        });
        if hit {
            troubled.insert(index);
        }
    }
    troubled
}

/// Which notes' state in the store now a plan of `edited` against `base`
/// can consult: the store reads only these (and the notes that superseded
/// them), so a check-in costs in proportion to the edit, not the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Consulted {
    /// Every id the edit changed, deleted, repeated, or that the base lacks,
    /// and every id a resolution names.
    pub ids: HashSet<NoteId>,
    /// Whether the edit adds entries: then the notes created since the
    /// checkout are consulted too (checking the same new entry in twice
    /// must not create it twice).
    pub created_since_checkout: bool,
}

/// What [`plan_checkin`] will look up in the store's entries (see [`Consulted`]).
pub fn consulted(base: &[impl Borrow<Entry>], edited: &ParsedCheckout, resolutions: &Resolutions) -> Consulted {
    // The entries around the window the edit shares with its base are
    // neither changed nor repeated, and each base note there is still there.
    let window = window::window(base, edited, resolutions);
    let base_by_id = by_id(&base[window.base]);
    let mut consulted = Consulted::default();
    let mut in_edit: foldhash::HashSet<NoteId> = foldhash::HashSet::default();
    for parsed in &edited.entries[window.edited] {
        let entry: &Entry = &parsed.entry;
        let Some(id) = entry.id else {
            consulted.created_since_checkout |= entry.marker.is_none();
            continue;
        };
        let repeated = !in_edit.insert(id);
        // An entry taken over from the base as it was (`reparse.rs`) is the same entry: no fields compared.
        if repeated || base_by_id.get(&id).is_none_or(|before| !std::ptr::eq(*before, entry) && *before != entry) {
            consulted.ids.insert(id);
        }
    }
    consulted.ids.extend(base_by_id.keys().filter(|id| !in_edit.contains(id)));
    consulted.ids.extend(resolutions.keep_mine.iter().chain(&resolutions.take_theirs));
    consulted
}

/// One entry the checkout held: what the person did to it, against what the store did.
fn judge(
    plan: &mut CheckinPlan,
    line: usize,
    id: NoteId,
    before: &Entry,
    mine: Option<&Entry>,
    current: &HashMap<NoteId, &Entry>,
) {
    let now = current.get(&id).copied();
    // Most entries are untouched: equal as parsed means equal (no normalising needed).
    let person_changed = mine.is_none_or(|m| !std::ptr::eq(m, before) && m != before && differs(m, before));
    if !person_changed {
        return;
    }
    let already_applied = match (mine, now) {
        (Some(mine), Some(now)) => {
            // Unchanged, or superseded by a note holding exactly this edit.
            let successor = match shown(now) {
                Shown::Superseded(by) => current.get(&by).copied(),
                _ => None,
            };
            !differs(mine, now) || successor.is_some_and(|s| content(s) == content(mine) && shown(s) == Shown::Active)
        }
        (None, Some(now)) => !matches!(shown(now), Shown::Active | Shown::Stale(_) | Shown::Proposed),
        (_, None) => false,
    };
    if already_applied {
        return;
    }
    let store_changed = now.is_none_or(|n| differs(n, before));
    if store_changed {
        let successor = now.and_then(|n| successor_of(n, current));
        let conflict = Conflict { line, id, mine: mine.cloned(), theirs: now.cloned(), successor };
        let (mine_text, theirs_text) = conflict.sides();
        plan.conflicts.push(conflict);
        plan.diagnostics.push(diagnostic(
            line,
            Severity::Error,
            format!(
                "#{id} changed in the store since this checkout; keep mine or take theirs (mine: {mine_text}; theirs: {theirs_text})"
            ),
        ));
        return;
    }
    let refuse =
        |plan: &mut CheckinPlan, message: String| plan.diagnostics.push(diagnostic(line, Severity::Error, message));
    let was = shown(before);
    let Some(mine) = mine else {
        match was {
            Shown::Active | Shown::Stale(_) => {
                plan.changes.push(Change::Revoke { line, id, reason: DELETED_REASON.into() })
            }
            Shown::Proposed => plan.changes.push(Change::Revoke { line, id, reason: REJECTED_REASON.into() }),
            _ => {}
        }
        return;
    };
    if let Shown::Superseded(by) = was {
        refuse(plan, format!("#{id} was superseded by #{by}; edit #{by}"));
        return;
    }
    let wants = shown(mine);
    if content(mine) != content(before) {
        match (&was, &wants) {
            (Shown::Active, Shown::Active) => plan.changes.push(Change::Supersede { line, id, content: content(mine) }),
            // A reviewer's edit of a proposal is theirs: a new note replaces it,
            // whether or not they also removed the marker.
            (Shown::Proposed, Shown::Active | Shown::Proposed) => {
                plan.changes.push(Change::Supersede { line, id, content: content(mine) })
            }
            // Marker removed and text edited: back to active, then the new text.
            (Shown::Revoked(_) | Shown::Stale(_) | Shown::Expired, Shown::Active) => {
                plan.changes.push(Change::Reinstate { line, id });
                plan.changes.push(Change::Supersede { line, id, content: content(mine) });
            }
            (Shown::Active, _) => refuse(plan, format!("#{id}: change its text or its state, not both in one save")),
            _ => refuse(plan, format!("#{id} is not active; remove its marker (reinstate it) before editing its text")),
        }
        return;
    }
    match (was, wants) {
        (Shown::Active | Shown::Stale(_) | Shown::Proposed, Shown::Revoked(reason)) => {
            plan.changes.push(Change::Revoke { line, id, reason })
        }
        (Shown::Proposed, Shown::Active) => plan.changes.push(Change::Accept { line, id }),
        (_, Shown::Proposed) => refuse(
            plan,
            format!(
                "#{id}: PROPOSED is set by mnemo when an agent writes under review, not typed; use STALE (reason) or REVOKED (reason)"
            ),
        ),
        (Shown::Active, Shown::Stale(reason)) => plan.changes.push(Change::FlagStale { line, id, reason }),
        (Shown::Revoked(_) | Shown::Stale(_) | Shown::Expired, Shown::Active) => {
            plan.changes.push(Change::Reinstate { line, id })
        }
        (_, Shown::Superseded(_)) => {
            refuse(plan, format!("#{id}: SUPERSEDED is set by editing the newer note, not typed"))
        }
        (_, Shown::Expired) => {
            refuse(plan, format!("#{id}: EXPIRED is set by mnemo, not typed; use REVOKED (reason) instead"))
        }
        (from, to) => refuse(plan, format!("#{id}: cannot go from {} to {}", name(&from), name(&to))),
    }
}

/// One line for a version of an entry: its state, priority and title.
pub fn summary(entry: &Entry) -> String {
    let state = match shown(entry) {
        Shown::Active => String::new(),
        Shown::Revoked(reason) => format!("revoked ({reason}) · "),
        Shown::Stale(reason) => format!("stale ({reason}) · "),
        Shown::Expired => "expired · ".into(),
        Shown::Superseded(by) => format!("superseded by #{by} · "),
        Shown::Proposed => "proposed · ".into(),
    };
    let section = crate::memory_md::section_title(entry.kind);
    format!("{state}{} · {} [{section}]", entry.priority.as_str(), normalize_title(&entry.title))
}

fn name(shown: &Shown) -> &'static str {
    match shown {
        Shown::Active => "active",
        Shown::Revoked(_) => "revoked",
        Shown::Stale(_) => "stale",
        Shown::Expired => "expired",
        Shown::Superseded(_) => "superseded",
        Shown::Proposed => "proposed",
    }
}

mod carry;
mod identity;
#[cfg(test)]
mod tests;
mod window;

pub use carry::{Carried, carry_over};
