//! The one write path: a [`Writer`] lives inside one transaction opened by
//! [`crate::Store::write`]. It checks every event against the core lifecycle
//! before appending it, keeps the materialised `note_state` cache in step, and
//! reports whether the epoch must be bumped.
//!
//! **Invariant:** no other code inserts into or deletes from `notes`,
//! `anchors`, `events` or `note_state`.

use mnemo_core::expiry::ExpiryPolicy;
use mnemo_core::lifecycle::created;
use mnemo_core::model::{MAX_REASON_CHARS, RuleError, normalize_reason};
use mnemo_core::review::ProposedLink;
use mnemo_core::{Actor, EventData, EventKind, Kind, NewNote, NoteId, NoteState, Timestamp, apply};

/// How far behind a note's latest event a clock may be and still write (its
/// event is then dated at that latest event): the skew between machines.
const CLOCK_SKEW_SECONDS: i64 = 24 * 3600;
use rusqlite::{OptionalExtension, Transaction, params};

use crate::error::StoreError;
use crate::person::Person;
use crate::read::Scope;
use crate::sql_codec::{EventColumns, StateColumns};

pub struct Writer<'s> {
    tx: Transaction<'s>,
    wrote: bool,
    /// A person's explicit override: notes may hold what looks like a secret.
    secrets_allowed: bool,
    /// Who is writing, recorded with each event.
    person: Option<Person>,
    /// Notes whose vectors this transaction put or dropped, and whether it
    /// dropped them all: what a shared store pushes (vec0 takes no triggers).
    pub(crate) vectors_touched: Vec<NoteId>,
    pub(crate) vectors_cleared: bool,
    /// Whether a note was forgotten: this process's kept copies of the
    /// store then go (`vector_cache::drop_kept`).
    pub(crate) purged: bool,
}

impl<'s> Writer<'s> {
    pub(crate) fn new(tx: Transaction<'s>, person: Option<Person>) -> Writer<'s> {
        Writer {
            tx,
            wrote: false,
            secrets_allowed: false,
            person,
            vectors_touched: Vec::new(),
            vectors_cleared: false,
            purged: false,
        }
    }

    /// Let the notes this writer creates hold what looks like a secret (a
    /// person's explicit `--allow-secret`; never an agent's).
    pub fn allow_secrets(&mut self) {
        self.secrets_allowed = true;
    }

    pub(crate) fn transaction(&self) -> &Transaction<'s> {
        &self.tx
    }

    /// The epoch moves at commit: something other than an event changed what readers see.
    pub(crate) fn mark_written(&mut self) {
        self.wrote = true;
    }

    /// Commit; returns the new epoch when anything was written.
    pub(crate) fn finish(self) -> Result<Option<i64>, StoreError> {
        let epoch = if self.wrote {
            Some(self.tx.query_row(
                "UPDATE meta SET value = value + 1 WHERE key = 'epoch' RETURNING value",
                [],
                |r| r.get(0),
            )?)
        } else {
            None
        };
        self.tx.commit()?;
        Ok(epoch)
    }

    /// Store a new note in `workspace` with its `created` event.
    pub fn create(
        &mut self,
        workspace: &str,
        note: NewNote,
        actor: Actor,
        at: Timestamp,
    ) -> Result<NoteId, StoreError> {
        let note = note.validated(actor)?;
        if !self.secrets_allowed {
            note.secret_check()?;
        }
        let id: NoteId = self
            .tx
            .prepare_cached(
                "INSERT INTO notes (workspace, kind, priority, title, body, provenance, quote, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
            )?
            .query_row(
                params![
                    workspace,
                    note.kind.as_str(),
                    note.priority.as_str(),
                    note.title,
                    note.body,
                    note.provenance.as_str(),
                    note.quote,
                    at.0
                ],
                |r| r.get(0),
            )?;
        let mut insert_anchor = self.tx.prepare_cached(
            "INSERT INTO anchors (note_id, position, path, start_line, end_line, content_sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (position, anchor) in note.anchors.iter().enumerate() {
            insert_anchor.execute(params![
                id,
                position as i64,
                anchor.path,
                anchor.start_line,
                anchor.end_line,
                anchor.content_sha256
            ])?;
        }
        drop(insert_anchor);
        let event = EventData { kind: EventKind::Created { provenance: note.provenance }, actor, at, reason: None };
        let event_id = self.insert_event(id, &event)?;
        let state = created(note.provenance, at);
        let c = StateColumns::from_state(&state);
        self.tx
            .prepare_cached(
                "INSERT INTO note_state (note_id, workspace, status, status_at, status_reason, superseded_by, provenance, live_since, last_event_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![id, workspace, c.status, c.status_at, c.status_reason, c.superseded_by, c.provenance, c.live_since, event_id])?;
        self.wrote = true;
        Ok(id)
    }

    /// Append one event to note `id` after checking it against the lifecycle.
    pub fn append(&mut self, scope: &Scope, id: NoteId, mut event: EventData) -> Result<NoteState, StoreError> {
        event.reason = event.reason.map(|r| normalize_reason(&r)).filter(|r| !r.is_empty());
        if let Some(got) = event.reason.as_deref().map(|r| r.chars().count()).filter(|n| *n > MAX_REASON_CHARS) {
            return Err(StoreError::Rule(RuleError::TooLong {
                field: "reason",
                got,
                limit: MAX_REASON_CHARS,
                unit: "characters",
                advice: "say why in a sentence",
            }));
        }
        let (workspace, state) = self.state_of(scope, id)?;
        // A note's history moves forward. A clock a little behind the note's
        // latest event (two machines' skew) is clamped to it; one far behind
        // is a wrong clock, and would rewrite what was known when: refused.
        let latest: i64 = self
            .tx
            .prepare_cached("SELECT COALESCE(MAX(at), 0) FROM events WHERE note_id = ?1")?
            .query_row([id], |r| r.get(0))?;
        if event.at.0 < latest {
            // A person is never blocked from fixing a note (say, reinstating
            // tasks a wrong clock expired): their event is dated at the latest.
            if latest - event.at.0 > CLOCK_SKEW_SECONDS && event.actor != Actor::Human {
                return Err(StoreError::ClockBehind { id, at: event.at, latest: Timestamp(latest) });
            }
            event.at = Timestamp(latest);
        }
        if let EventKind::Superseded { by } = event.kind {
            let (successor_workspace, _) = self.state_of(&Scope::All, by)?;
            if successor_workspace != workspace {
                return Err(StoreError::OtherWorkspace { id: by, owner: successor_workspace });
            }
        }
        let next = apply(&state, &event).map_err(|source| StoreError::Transition { id, source })?;
        let event_id = self.insert_event(id, &event)?;
        let c = StateColumns::from_state(&next);
        self.tx
            .prepare_cached(
                "UPDATE note_state SET status = ?2, status_at = ?3, status_reason = ?4, superseded_by = ?5,
                 provenance = ?6, live_since = ?7, last_event_id = ?8 WHERE note_id = ?1",
            )?
            .execute(params![
                id,
                c.status,
                c.status_at,
                c.status_reason,
                c.superseded_by,
                c.provenance,
                c.live_since,
                event_id
            ])?;
        self.wrote = true;
        if event.kind == EventKind::Accepted
            && let Some(link) = state.status_reason.as_deref().and_then(ProposedLink::from_reason)
        {
            self.apply_accepted_link(scope, id, link, &event)?;
        }
        Ok(next)
    }

    /// Store `note` as a proposal (`[review]`): created, then `proposed`, in
    /// this transaction. A `link` to an older note is checked now but applied
    /// only when a person accepts the proposal; until then the older note stands.
    pub fn propose(
        &mut self,
        scope: &Scope,
        workspace: &str,
        note: NewNote,
        actor: Actor,
        at: Timestamp,
        link: Option<ProposedLink>,
    ) -> Result<NoteId, StoreError> {
        if let Some(link) = link {
            let (old, kind) = match link {
                ProposedLink::Supersedes(old) => (old, EventKind::Superseded { by: old }),
                ProposedLink::Contradicts(old) => (old, EventKind::Revoked),
            };
            let (_, state) = self.state_of(scope, old)?;
            let check = EventData { kind, actor, at, reason: Some(link.reason()) };
            apply(&state, &check).map_err(|source| StoreError::Transition { id: old, source })?;
        }
        let id = self.create(workspace, note, actor, at)?;
        let reason = link.map(ProposedLink::reason);
        self.append(scope, id, EventData { kind: EventKind::Proposed, actor, at, reason })?;
        Ok(id)
    }

    /// What an accepted proposal said it would do to an older note, done now
    /// by the person who accepted it; skipped when that note has meanwhile
    /// left the state it applies to (revoked by someone else, say).
    fn apply_accepted_link(
        &mut self,
        scope: &Scope,
        accepted: NoteId,
        link: ProposedLink,
        acceptance: &EventData,
    ) -> Result<(), StoreError> {
        let (old, kind, reason) = match link {
            ProposedLink::Supersedes(old) => (old, EventKind::Superseded { by: accepted }, None),
            ProposedLink::Contradicts(old) => (old, EventKind::Revoked, Some(format!("contradicted by #{accepted}"))),
        };
        let event = EventData { kind, actor: acceptance.actor, at: acceptance.at, reason };
        let Ok((_, state)) = self.state_of(scope, old) else { return Ok(()) };
        if apply(&state, &event).is_ok() {
            self.append(scope, old, event)?;
        }
        Ok(())
    }

    /// Store `replacement` in the old note's workspace and supersede `old` by it.
    /// The old note's lifecycle is checked first, so nothing is created on refusal.
    pub fn supersede(
        &mut self,
        scope: &Scope,
        old: NoteId,
        replacement: NewNote,
        actor: Actor,
        at: Timestamp,
        reason: Option<String>,
    ) -> Result<NoteId, StoreError> {
        let (workspace, state) = self.state_of(scope, old)?;
        let superseded = |by| EventData { kind: EventKind::Superseded { by }, actor, at, reason: reason.clone() };
        apply(&state, &superseded(old)).map_err(|source| StoreError::Transition { id: old, source })?;
        let new_id = self.create(&workspace, replacement, actor, at)?;
        self.append(scope, old, superseded(new_id))?;
        Ok(new_id)
    }

    /// Hard-delete one note with its anchors, events and state: the only delete.
    /// Refused while an older note's history names it as its successor.
    pub fn forget(&mut self, scope: &Scope, id: NoteId) -> Result<(), StoreError> {
        self.state_of(scope, id)?;
        let predecessors: Vec<NoteId> = self
            .tx
            .prepare("SELECT DISTINCT note_id FROM events WHERE superseded_by = ?1 ORDER BY note_id")?
            .query_map([id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if !predecessors.is_empty() {
            return Err(StoreError::ForgetBlocked { id, predecessors });
        }
        self.purge(id)
    }

    /// Delete note `id` and everything that hangs on it (forget's work once
    /// it is allowed; a replica does it when the shared store forgot it).
    pub(crate) fn purge(&mut self, id: NoteId) -> Result<(), StoreError> {
        self.purged = true;
        self.delete_vector(id)?;
        // The full-text index drops the note's terms at once, not at a later merge.
        self.tx.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('secure-delete', 1)", [])?;
        crate::checkout::purge_note_from_bases(&self.tx, id)?;
        self.tx.execute("INSERT INTO forget_permit (note_id) VALUES (?1)", [id])?;
        self.tx.execute("DELETE FROM note_state WHERE note_id = ?1", [id])?;
        self.tx.execute("DELETE FROM anchors WHERE note_id = ?1", [id])?;
        self.tx.execute("DELETE FROM drift_observations WHERE note_id = ?1", [id])?;
        self.tx.execute("DELETE FROM delivered_notes WHERE note_id = ?1", [id])?;
        // A delivery of this note alone goes with it (it would be a record of nothing).
        self.tx.execute(
            "DELETE FROM deliveries WHERE NOT EXISTS (SELECT 1 FROM delivered_notes n WHERE n.delivery_id = deliveries.id)",
            [],
        )?;
        // The chain keeps their links; verify follows it across them.
        self.tx.execute("INSERT INTO forgotten_events (event_id) SELECT id FROM events WHERE note_id = ?1", [id])?;
        self.tx.execute("DELETE FROM events WHERE note_id = ?1", [id])?;
        self.tx.execute("DELETE FROM notes WHERE id = ?1", [id])?;
        self.tx.execute("DELETE FROM forget_permit WHERE note_id = ?1", [id])?;
        self.wrote = true;
        Ok(())
    }

    /// Record that `note`'s anchor into `path` showed `observation`; true when
    /// it is new (and the caller may flag the note), false when seen before.
    pub fn observe_drift(
        &mut self,
        note: NoteId,
        path: &str,
        observation: &str,
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        let inserted = self.tx.execute(
            "INSERT OR IGNORE INTO drift_observations (note_id, path, observation, observed_at) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![note, path, observation, at.0],
        )?;
        Ok(inserted == 1)
    }

    /// Append `expired` (actor system) to every live note of `workspace` whose
    /// kind's time-to-live has run out at `now`. Returns the expired ids.
    pub fn expire_due(
        &mut self,
        workspace: &str,
        policy: &ExpiryPolicy,
        now: Timestamp,
    ) -> Result<Vec<NoteId>, StoreError> {
        // Only the kinds with a time-to-live, only notes live long enough: this
        // runs in every write transaction, so it must not read the whole
        // workspace (it did: 80 ms per write at 100k notes, all under the lock).
        let mut candidates: Vec<(NoteId, Kind)> = Vec::new();
        for &kind in Kind::ALL {
            let Some(days) = policy.days(kind) else { continue };
            let live_before = now.0 - i64::from(days) * 86_400;
            let sql = format!(
                "SELECT n.id FROM notes n JOIN note_state s ON s.note_id = n.id
                 WHERE {} AND n.kind = ?2 AND s.status IN ('active', 'stale_flagged') AND s.live_since <= ?3",
                crate::workspace::born_in("n.workspace", "?1")
            );
            let ids = self
                .tx
                .prepare_cached(&sql)?
                .query_map(params![workspace, kind.as_str(), live_before], |r| r.get::<_, NoteId>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            candidates.extend(ids.into_iter().map(|id| (id, kind)));
        }
        candidates.sort_unstable();
        let scope = Scope::Workspace(workspace.to_string());
        let mut expired = Vec::new();
        for (id, kind) in candidates {
            let (_, state) = self.state_of(&scope, id)?;
            if policy.is_due(kind, &state, now) {
                let event = EventData {
                    kind: EventKind::Expired,
                    actor: Actor::System,
                    at: now,
                    reason: Some(policy.reason(kind)),
                };
                self.append(&scope, id, event)?;
                expired.push(id);
            }
        }
        Ok(expired)
    }

    fn insert_event(&mut self, id: NoteId, event: &EventData) -> Result<i64, StoreError> {
        let c = EventColumns::from_event(event);
        let event_id: i64 = self
            .tx
            .prepare_cached(
                "INSERT INTO events (note_id, kind, actor, at, reason, superseded_by, provenance, person, machine)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
            )?
            .query_row(
                params![
                    id,
                    c.kind,
                    c.actor,
                    c.at,
                    c.reason,
                    c.superseded_by,
                    c.provenance,
                    self.person.as_ref().map(|p| &p.name),
                    self.person.as_ref().map(|p| &p.machine)
                ],
                |r| r.get(0),
            )?;
        crate::chain::append(&self.tx, event_id)?;
        Ok(event_id)
    }

    /// The workspace and cached state of note `id`, checked against `scope`.
    fn state_of(&self, scope: &Scope, id: NoteId) -> Result<(String, NoteState), StoreError> {
        let row = self
            .tx
            .prepare_cached(
                "SELECT workspace, status, status_at, status_reason, superseded_by, provenance, live_since
                 FROM note_state WHERE note_id = ?1",
            )?
            .query_row([id], |r| Ok((r.get::<_, String>(0)?, StateColumns::from_row(r, 1)?)))
            .optional()?;
        let Some((workspace, columns)) = row else {
            return Err(StoreError::NoSuchNote { id, workspace: scope.describe() });
        };
        scope.check(id, &workspace)?;
        Ok((workspace, columns.into_state()?))
    }
}
