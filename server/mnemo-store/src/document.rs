//! Rendering a workspace's memory as one of the two MEMORY.md flavours, from
//! one consistent snapshot of the store (the epoch and the notes it shows are
//! read in the same transaction). A long-lived process brings its last
//! rendering up to date instead, and any process may bring the mirror file
//! up to date (`render_cache.rs`, `mirror/seed.rs`).

use mnemo_core::memory_md::{Flavour, render_views};

use crate::error::StoreError;
use crate::read::Scope;
use crate::render_cache::{self, Marks, Seed};
use crate::store::Store;
use crate::workspace::Workspace;

/// Which flavour to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    Mirror,
    Checkout,
}

/// A rendered document and the store state it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedDocument {
    pub text: String,
    pub epoch: i64,
    pub notes: usize,
    /// Whether it was brought up to date from an earlier rendering (only
    /// the notes written since were read) rather than rendered whole.
    pub brought_up_to_date: bool,
    /// The store's marks at `epoch` (recorded beside a mirror, so the next
    /// process can bring the file up to date).
    pub(crate) marks: Marks,
}

/// Render every note of `workspace`, in every state.
pub fn render_workspace(
    store: &Store,
    workspace: &Workspace,
    kind: DocumentKind,
) -> Result<RenderedDocument, StoreError> {
    render_workspace_from(store, workspace, kind, |_| None)
}

/// [`render_workspace`], starting — when this process keeps no rendering
/// of its own — from the entries `seed` reads back (inside the same read
/// transaction), if it finds any. A replica's rendering never starts from
/// a seed (its log's order is not the database's).
pub(crate) fn render_workspace_from(
    store: &Store,
    workspace: &Workspace,
    kind: DocumentKind,
    seed: impl FnOnce(&Store) -> Option<Seed>,
) -> Result<RenderedDocument, StoreError> {
    store.snapshot(|store| {
        let epoch = store.epoch()?;
        let marks = render_cache::marks(store)?;
        let flavour = match kind {
            DocumentKind::Mirror => Flavour::Mirror,
            DocumentKind::Checkout => Flavour::Checkout { workspace: workspace.id.clone(), epoch },
        };
        let name = workspace.display_name();
        let seed = || store.shared.is_none().then(|| seed(store)).flatten();
        if let Some((text, notes)) = render_cache::render_from_kept(store, &workspace.id, &flavour, name, &marks, seed)?
        {
            return Ok(RenderedDocument { text, epoch, notes, brought_up_to_date: true, marks });
        }
        let views = store.notes(&Scope::Workspace(workspace.id.clone()))?;
        let text = match render_cache::applies(store) {
            true => render_cache::render_and_keep(store, &workspace.id, &flavour, name, &views, &marks)?,
            false => render_views(&flavour, name, &views),
        };
        Ok(RenderedDocument { text, epoch, notes: views.len(), brought_up_to_date: false, marks })
    })
}
