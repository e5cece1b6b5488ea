//! Checkouts and check-ins. A checkout's text is recorded when it is handed
//! out, so that a check-in can plan against exactly that base
//! (`core::checkin::plan_checkin`); the plan's changes are then applied
//! through the one write path in one transaction, as a person (actor and
//! provenance `human`).

use std::path::Path;

use mnemo_core::checkin::{Change, CheckinPlan, Content, plan_checkin};
use mnemo_core::memory_md::{Entry, entries_of, parse_checkout};
use mnemo_core::{Actor, Anchor, EventData, EventKind, NewNote, NoteId, Provenance, Timestamp};
use rusqlite::OptionalExtension;

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
}

impl Store {
    /// Render a checkout of `workspace` and record it as a base for check-ins.
    pub fn checkout(&self, workspace: &Workspace) -> Result<RenderedDocument, StoreError> {
        let document = render_workspace(self, workspace, DocumentKind::Checkout)?;
        self.conn.execute(
            "INSERT OR REPLACE INTO checkouts (workspace, epoch, text) VALUES (?1, ?2, ?3)",
            rusqlite::params![workspace.id, document.epoch, document.text],
        )?;
        Ok(document)
    }

    fn checkout_base(&self, workspace: &str, epoch: i64) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT text FROM checkouts WHERE workspace = ?1 AND epoch = ?2",
                rusqlite::params![workspace, epoch],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Check in `text`, an edited checkout of `workspace`: plan it against its
    /// base and the store now, then apply what is valid in one transaction.
    pub fn checkin(&mut self, workspace: &Workspace, text: &str, now: Timestamp) -> Result<CheckinOutcome, StoreError> {
        let edited = parse_checkout(text);
        let base: Vec<Entry> = match (&edited.workspace, edited.epoch) {
            (Some(id), Some(epoch)) if *id == workspace.id => match self.checkout_base(id, epoch)? {
                Some(base) => parse_checkout(&base).entries.into_iter().map(|e| e.entry).collect(),
                None => return Err(StoreError::UnknownCheckout { epoch }),
            },
            (Some(id), Some(_)) => return Err(StoreError::CheckoutOfOtherWorkspace { workspace: id.clone() }),
            _ => Vec::new(),
        };
        let current = entries_of(&self.notes(&Scope::Workspace(workspace.id.clone()))?);
        let plan = plan_checkin(&base, &edited, &current);
        let mut outcome = CheckinOutcome { plan, ..CheckinOutcome::default() };
        let mut prepared: Vec<(usize, Change, Vec<Anchor>)> = Vec::new();
        for change in &outcome.plan.changes {
            let (line, anchors) = match change {
                Change::Create { line, content } | Change::Supersede { line, content, .. } => {
                    (*line, anchors_of(workspace.root.as_deref(), content))
                }
                Change::Revoke { line, .. } | Change::FlagStale { line, .. } | Change::Reinstate { line, .. } => {
                    (*line, Ok(Vec::new()))
                }
            };
            match anchors {
                Ok(anchors) => prepared.push((line, change.clone(), anchors)),
                Err(message) => outcome.refused.push((line, message)),
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
                };
                applied.push(id);
            }
            Ok(applied)
        })?;
        Ok(outcome)
    }
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

/// Anchors typed as links are hashed at check-in, like `--anchor`.
fn anchors_of(root: Option<&Path>, content: &Content) -> Result<Vec<Anchor>, String> {
    if content.anchors.is_empty() {
        return Ok(Vec::new());
    }
    let root = root.ok_or("anchors need a workspace directory")?;
    content
        .anchors
        .iter()
        .map(|a| capture(root, &format!("{}:{}-{}", a.path, a.start_line, a.end_line)).map_err(|e| e.to_string()))
        .collect()
}
