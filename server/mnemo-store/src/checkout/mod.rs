//! Checkouts and check-ins. A checkout's text is recorded when it is handed
//! out, so that a check-in can plan against exactly that base
//! (`core::checkin::plan_checkin`); the plan's changes are then applied
//! through the one write path in one transaction, as a person (actor and
//! provenance `human`). Where bases are kept: `bases.rs`.

mod bases;
mod line_delta;

pub use bases::KEPT_CHECKOUTS;
pub(crate) use bases::{purge_note as purge_note_from_bases, write_out_all as write_out_bases};

use std::path::Path;

use std::collections::HashSet;
use std::sync::Arc;

use mnemo_core::checkin::{
    Change, CheckinPlan, Conflict, Consulted, Content, Resolutions, carry_over, consulted, plan_checkin,
};
use mnemo_core::memory_md::{
    Diagnostic, Entry, ParsedCheckout, Severity, checkout_header, entries_of, parse_checkout, parse_checkout_beside,
};
use mnemo_core::{Actor, Anchor, EventData, EventKind, NewNote, NoteId, Provenance, Status, Timestamp};

use crate::anchor::capture;
use crate::document::{DocumentKind, RenderedDocument, render_workspace};
use crate::error::StoreError;
use crate::read::Scope;
use crate::store::Store;
use crate::workspace::Workspace;

/// What a check-in did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckinOutcome {
    pub plan: CheckinPlan,
    /// Ids of the notes each applied change created or touched, in plan order.
    pub applied: Vec<NoteId>,
    /// Changes refused at apply time (an anchor that no longer fits, say), with why.
    pub refused: Vec<(usize, String)>,
    /// The text re-rendered after the check-in; `None` when the edit's
    /// header could not be read (then there is nothing to re-render against).
    pub document: Option<CheckedIn>,
}

impl CheckinOutcome {
    /// What is left to resolve after the check-in, and on the lines of which
    /// text: the re-rendered checkout's problems and conflicts; or, when the
    /// edit's header could not be read (nothing re-rendered), the plan's
    /// problems, the refusals and the conflicts on the lines of the edit as sent.
    pub fn left(&self) -> (Vec<Diagnostic>, &[Conflict]) {
        match &self.document {
            Some(document) => (document.diagnostics.clone(), &document.conflicts),
            None => (left_in_plan(&self.plan, &self.refused), &self.plan.conflicts),
        }
    }

    /// Whether anything was left unapplied (errors, conflicts, refusals).
    pub fn has_problems(&self) -> bool {
        match &self.document {
            Some(document) => !document.diagnostics.is_empty(),
            None => self.plan.diagnostics.iter().any(|d| d.severity == Severity::Error) || !self.refused.is_empty(),
        }
    }
}

/// The plan's problems and the changes refused at apply time, as problems
/// on the lines of the edited text.
fn left_in_plan(plan: &CheckinPlan, refused: &[(usize, String)]) -> Vec<Diagnostic> {
    let refusals = refused.iter().map(|(line, message)| Diagnostic {
        line: *line,
        start_column: 0,
        end_column: 0,
        severity: Severity::Error,
        message: message.clone(),
    });
    plan.diagnostics.iter().cloned().chain(refusals).collect()
}

/// The checkout after a check-in: rendered at the new epoch, with every
/// entry that was not applied carried over as typed, and what is still
/// wrong with it, on its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedIn {
    pub text: String,
    pub epoch: i64,
    pub diagnostics: Vec<Diagnostic>,
    pub conflicts: Vec<Conflict>,
    /// How many blocks of the edited text (entries, stray lines) were not
    /// applied and are carried into `text` as typed; 0 when `text` is a
    /// pure rendering of the store.
    pub unapplied: usize,
}

/// The last checkout base this process parsed or recorded at a check-in,
/// kept for the next preview (whichever store handle asks: the language
/// server opens one per request). Known to be still its base's text by the
/// row's mark (`bases::made`) without reading it; a base of another epoch is
/// parsed beside it.
static LAST_BASE: std::sync::Mutex<Option<Arc<ParsedBase>>> = std::sync::Mutex::new(None);

/// An edit parsed, and the base it was checked out from.
struct EditOfBase {
    edited: ParsedCheckout,
    /// The base's entries (none when the edit has no readable header).
    base: Arc<Vec<Arc<Entry>>>,
    /// The base's text; `None` when the edit has no readable header.
    base_text: Option<Arc<String>>,
}

/// A parsed checkout base.
#[derive(Debug, Clone)]
struct ParsedBase {
    /// The store, workspace and epoch it is the base of, and how its row
    /// was made (`None`: unknown, its text decides).
    store: std::path::PathBuf,
    workspace: String,
    epoch: i64,
    made: Option<bases::Made>,
    text: Arc<String>,
    parsed: Arc<ParsedCheckout>,
    /// The parse's entries, shared with it.
    entries: Arc<Vec<Arc<Entry>>>,
}

impl Store {
    /// Render a checkout of `workspace` and record it as a base for check-ins.
    pub fn checkout(&self, workspace: &Workspace) -> Result<RenderedDocument, StoreError> {
        let document = render_workspace(self, workspace, DocumentKind::Checkout)?;
        // A base already recorded at this epoch may keep older versions of
        // conflicting entries (see `checkin`); it is kept: it can only make a
        // check-in more careful, never lose an edit.
        self.exclusively(|store| bases::record(&store.conn, &workspace.id, document.epoch, &document.text, false))?;
        tracing::debug!(
            workspace = %workspace.id,
            epoch = document.epoch,
            notes = document.notes,
            "checkout handed out and recorded as a base"
        );
        Ok(document)
    }

    /// What checking in `text` would do, without doing it (the language
    /// server shows it as diagnostics while a person edits).
    pub fn preview_checkin(&self, workspace: &Workspace, text: &str) -> Result<CheckinPlan, StoreError> {
        let EditOfBase { edited, base, .. } = self.parse_edit(workspace, text)?;
        let resolutions = Resolutions::default();
        let current = self.current_entries(workspace, &base, &consulted(&base, &edited, &resolutions))?;
        let plan = plan_checkin(&base, &edited, &current, &resolutions);
        tracing::debug!(
            workspace = %workspace.id,
            base_epoch = ?edited.epoch,
            changes = plan.changes.len(),
            conflicts = plan.conflicts.len(),
            diagnostics = plan.diagnostics.len(),
            "check-in previewed"
        );
        Ok(plan)
    }

    /// The store's entries now for the notes a plan consults, and for the
    /// notes that superseded them (a conflict shows the live successor), all
    /// read from one state of the store. A note of another workspace, or
    /// forgotten, is left out: the plan then says there is no such note.
    fn current_entries(
        &self,
        workspace: &Workspace,
        base: &[Arc<Entry>],
        consulted: &Consulted,
    ) -> Result<Vec<Entry>, StoreError> {
        self.snapshot(|store| {
            let mut wanted: Vec<NoteId> = consulted.ids.iter().copied().collect();
            if consulted.created_since_checkout {
                let in_base: HashSet<NoteId> = base.iter().filter_map(|e| e.id).collect();
                wanted.extend(store.note_ids(&workspace.id)?.into_iter().filter(|id| !in_base.contains(id)));
            }
            let scope = Scope::Workspace(workspace.id.clone());
            let (mut views, mut read) = (Vec::new(), HashSet::new());
            while let Some(id) = wanted.pop() {
                if !read.insert(id) {
                    continue;
                }
                match store.note(&scope, id) {
                    Ok(view) => {
                        if let Status::Superseded { by } = view.state.status {
                            wanted.push(by);
                        }
                        views.push(view);
                    }
                    Err(StoreError::NoSuchNote { .. } | StoreError::OtherWorkspace { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            tracing::debug!(workspace = %workspace.id, notes = views.len(), "read the notes a check-in consults");
            Ok(entries_of(&views))
        })
    }

    /// Parse an edited checkout of `workspace`, beside the base it was
    /// checked out from (only what differs from the base is read again:
    /// `parse_checkout_beside`). The last base parsed in this process is
    /// kept ([`LAST_BASE`]): a language server previews every pause in
    /// typing against the same base.
    fn parse_edit(&self, workspace: &Workspace, text: &str) -> Result<EditOfBase, StoreError> {
        let Some(base) = self.base_of(workspace, checkout_header(text))? else {
            let edited = parse_checkout(text);
            return Ok(EditOfBase { edited, base: Arc::new(Vec::new()), base_text: None });
        };
        let edited = parse_checkout_beside(&base.text, &base.parsed, text);
        Ok(EditOfBase { edited, base: base.entries.clone(), base_text: Some(base.text.clone()) })
    }

    /// The base an edit with `header` (workspace, epoch) was checked out
    /// from, parsed; `None` when the edit has no readable header.
    fn base_of(
        &self,
        workspace: &Workspace,
        header: Option<(String, i64)>,
    ) -> Result<Option<Arc<ParsedBase>>, StoreError> {
        let Some((id, epoch)) = header else { return Ok(None) };
        // A checkout made before its workspace moved to its repository's id is still its own.
        let id = self.follow(&id)?;
        if id != workspace.id {
            return Err(StoreError::CheckoutOfOtherWorkspace { workspace: id });
        }
        let last = LAST_BASE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        let last = last.filter(|last| last.store == self.path() && last.workspace == id);
        // The same (workspace, epoch) can be recorded again with other text
        // (a check-in's carried base): the row's mark, or else the text, decides.
        if let Some(last) = last.as_ref().filter(|last| last.epoch == epoch && last.made.is_some())
            && bases::made(&self.conn, &id, epoch)? == last.made
        {
            return Ok(Some(last.clone()));
        }
        let Some((text, made)) = bases::text_made(&self.conn, &id, epoch)? else {
            return Err(StoreError::UnknownCheckout { epoch });
        };
        if let Some(last) = last.as_ref().filter(|last| *last.text == text) {
            if (last.epoch, last.made) == (epoch, made) {
                return Ok(Some(last.clone()));
            }
            // The same text written again (a new mark): kept under its new
            // mark, so the next look needs no text again.
            return Ok(Some(keep(ParsedBase { epoch, made, ..(**last).clone() })));
        }
        // Another epoch of the workspace is parsed beside the last one (a
        // checkout handed out after an agent's write differs from the one
        // before in a few entries).
        let parsed = match &last {
            Some(last) => parse_checkout_beside(&last.text, &last.parsed, &text),
            None => parse_checkout(&text),
        };
        drop(last);
        Ok(Some(keep_base(self, &id, epoch, made, text, parsed)))
    }

    /// Check in `text`, an edited checkout of `workspace`: plan it against its
    /// base and the store now, apply what is valid in one transaction, and
    /// re-render it with what was not applied carried over.
    pub fn checkin(
        &mut self,
        workspace: &Workspace,
        text: &str,
        resolutions: &Resolutions,
        now: Timestamp,
    ) -> Result<CheckinOutcome, StoreError> {
        let EditOfBase { edited, base, base_text } = self.parse_edit(workspace, text)?;
        let current = self.current_entries(workspace, &base, &consulted(&base, &edited, resolutions))?;
        let plan = plan_checkin(&base, &edited, &current, resolutions);
        let mut outcome = CheckinOutcome { plan, ..CheckinOutcome::default() };
        let mut prepared: Vec<(usize, Change, Vec<Anchor>)> = Vec::new();
        for change in &outcome.plan.changes {
            let (line, anchors) = match change {
                Change::Create { line, content } => (*line, anchors_of(workspace.root.as_deref(), content, &[])),
                Change::Supersede { line, content, id } if !content.anchors.is_empty() => {
                    let scope = Scope::Workspace(workspace.id.clone());
                    let old = self.note(&scope, *id).map(|v| v.note.content.anchors).unwrap_or_default();
                    (*line, anchors_of(workspace.root.as_deref(), content, &old))
                }
                Change::Supersede { line, .. } => (*line, Ok(Vec::new())),
                Change::Revoke { line, .. }
                | Change::FlagStale { line, .. }
                | Change::Reinstate { line, .. }
                | Change::Accept { line, .. } => (*line, Ok(Vec::new())),
            };
            // What looks like a secret is refused on its entry's line, before the write.
            let secret = match change {
                Change::Create { content, .. } | Change::Supersede { content, .. } => {
                    secret_in(content).map(|e| e.to_string())
                }
                _ => None,
            };
            match (anchors, secret) {
                (_, Some(message)) => outcome.refused.push((line, message)),
                (Ok(anchors), None) => prepared.push((line, change.clone(), anchors)),
                (Err(message), None) => outcome.refused.push((line, message)),
            }
        }
        let scope = Scope::Workspace(workspace.id.clone());
        outcome.applied = self.write(|w| {
            let mut applied = Vec::new();
            for (_, change, anchors) in prepared {
                let event = |kind, reason| EventData { kind, actor: Actor::Human, at: now, reason };
                let id = match change {
                    Change::Create { content, .. } => {
                        w.create(&workspace.id, new_note(content, anchors), Actor::Human, now)?
                    }
                    Change::Supersede { id, content, .. } => w.supersede(
                        &scope,
                        id,
                        new_note(content, anchors),
                        Actor::Human,
                        now,
                        Some("edited in MEMORY.md".into()),
                    )?,
                    Change::Revoke { id, reason, .. } => {
                        w.append(&scope, id, event(EventKind::Revoked, Some(reason)))?;
                        id
                    }
                    Change::FlagStale { id, reason, .. } => {
                        w.append(&scope, id, event(EventKind::StaleFlagged, Some(reason)))?;
                        id
                    }
                    Change::Reinstate { id, .. } => {
                        w.append(&scope, id, event(EventKind::Reinstated, None))?;
                        id
                    }
                    Change::Accept { id, .. } => {
                        w.append(&scope, id, event(EventKind::Accepted, None))?;
                        id
                    }
                };
                applied.push(id);
            }
            Ok(applied)
        })?;
        if let Some(base_text) = base_text.filter(|_| !edited.refused_mirror) {
            outcome.document = Some(self.re_render(workspace, text, &edited, &outcome, &base_text)?);
        }
        tracing::info!(
            workspace = %workspace.id,
            base_epoch = ?edited.epoch,
            applied = outcome.applied.len(),
            refused = outcome.refused.len(),
            conflicts = outcome.plan.conflicts.len(),
            diagnostics = outcome.plan.diagnostics.len(),
            new_epoch = ?outcome.document.as_ref().map(|d| d.epoch),
            unapplied = outcome.document.as_ref().map_or(0, |d| d.unapplied),
            "checked in"
        );
        Ok(outcome)
    }

    /// Render the checkout anew, carry over what `outcome` did not apply,
    /// record the base for the new text, and find what is still wrong with it.
    fn re_render(
        &self,
        workspace: &Workspace,
        text: &str,
        edited: &mnemo_core::memory_md::ParsedCheckout,
        outcome: &CheckinOutcome,
        base_text: &str,
    ) -> Result<CheckedIn, StoreError> {
        let rendered = render_workspace(self, workspace, DocumentKind::Checkout)?;
        let clean = left_in_plan(&outcome.plan, &outcome.refused).is_empty() && outcome.plan.conflicts.is_empty();
        if clean {
            // Everything was applied: the new text is the fresh rendering.
            let made = self.exclusively(|store| {
                bases::record(&store.conn, &workspace.id, rendered.epoch, &rendered.text, true)?;
                bases::made(&store.conn, &workspace.id, rendered.epoch)
            })?;
            // In a process that checks in again and again (the language
            // server), it is the next edit's base: parsed now, beside the
            // edit it differs from in a few entries.
            if crate::render_cache::keeps_renders() {
                let parsed = parse_checkout_beside(text, edited, &rendered.text);
                keep_base(self, &workspace.id, rendered.epoch, made, rendered.text.clone(), parsed);
            }
            return Ok(CheckedIn {
                text: rendered.text,
                epoch: rendered.epoch,
                diagnostics: vec![],
                conflicts: vec![],
                unapplied: 0,
            });
        }
        let carried = carry_over(text, edited, &outcome.plan, &outcome.refused, &rendered.text, base_text);
        let made = self.exclusively(|store| {
            bases::record(&store.conn, &workspace.id, rendered.epoch, &carried.base, true)?;
            bases::made(&store.conn, &workspace.id, rendered.epoch)
        })?;
        // The fresh rendering is the store's state at that epoch.
        let current = entries_in(&rendered.text);
        let base = parse_checkout(&carried.base);
        let base_entries: Vec<Arc<Entry>> = base.entries.iter().map(|e| e.entry.clone()).collect();
        if crate::render_cache::keeps_renders() {
            keep_base(self, &workspace.id, rendered.epoch, made, carried.base.clone(), base);
        }
        let mut left = plan_checkin(&base_entries, &parse_checkout(&carried.text), &current, &Resolutions::default());
        for (line, message) in &outcome.refused {
            let line = carried.moved.iter().find(|(from, _)| from == line).map_or(0, |(_, to)| *to);
            left.diagnostics.push(Diagnostic {
                line,
                start_column: 0,
                end_column: 0,
                severity: Severity::Error,
                message: message.clone(),
            });
        }
        left.diagnostics.sort_by_key(|d| d.line);
        Ok(CheckedIn {
            text: carried.text,
            epoch: rendered.epoch,
            diagnostics: left.diagnostics,
            conflicts: left.conflicts,
            unapplied: carried.moved.len(),
        })
    }
}

/// Drop the base and the key this process keeps (a note was forgotten, here
/// or by another process: no copy of its text stays in this one).
pub(crate) fn drop_kept() {
    let old = LAST_BASE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    drop(old);
    bases::drop_kept_key();
}

/// Keep `text`, the base of `workspace` at `epoch` in `store` just recorded
/// or read (its row `made` so), and its parse as the [`LAST_BASE`] this
/// process parsed.
fn keep_base(
    store: &Store,
    workspace: &str,
    epoch: i64,
    made: Option<bases::Made>,
    text: String,
    parsed: ParsedCheckout,
) -> Arc<ParsedBase> {
    let entries = parsed.entries.iter().map(|e| e.entry.clone()).collect();
    keep(ParsedBase {
        store: store.path().to_path_buf(),
        workspace: workspace.to_string(),
        epoch,
        made,
        parsed: Arc::new(parsed),
        entries: Arc::new(entries),
        text: Arc::new(text),
    })
}

/// Keep `base` as the [`LAST_BASE`].
fn keep(base: ParsedBase) -> Arc<ParsedBase> {
    let base = Arc::new(base);
    let old = LAST_BASE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).replace(base.clone());
    // The old parse is freed after the lock is let go.
    drop(old);
    base
}

fn entries_in(text: &str) -> Vec<Entry> {
    parse_checkout(text).entries.into_iter().map(|e| std::sync::Arc::unwrap_or_clone(e.entry)).collect()
}

/// The first secret an entry's text holds, as the refusal.
fn secret_in(content: &Content) -> Option<mnemo_core::RuleError> {
    let note = new_note(content.clone(), Vec::new());
    note.secret_check().err()
}

fn new_note(content: Content, anchors: Vec<Anchor>) -> NewNote {
    NewNote {
        kind: content.kind,
        priority: content.priority,
        title: content.title,
        body: content.body,
        provenance: Provenance::Human,
        quote: None,
        anchors,
    }
}

/// Anchors typed as links are hashed at check-in, like `--anchor` — except
/// one the person left as it was (same file and lines as in `old`, the note
/// being superseded): it keeps its hash (or its lack of one), so editing a
/// note's text never blesses whatever code now sits at its old lines.
fn anchors_of(root: Option<&Path>, content: &Content, old: &[Anchor]) -> Result<Vec<Anchor>, String> {
    if content.anchors.is_empty() {
        return Ok(Vec::new());
    }
    let root = root.ok_or("anchors need a workspace directory")?;
    content
        .anchors
        .iter()
        .map(|a| {
            let kept =
                old.iter().find(|o| o.path == a.path && o.start_line == a.start_line && o.end_line == a.end_line);
            match kept {
                Some(kept) => Ok(kept.clone()),
                None => {
                    capture(root, &format!("{}:{}-{}", a.path, a.start_line, a.end_line)).map_err(|e| e.to_string())
                }
            }
        })
        .collect()
}
