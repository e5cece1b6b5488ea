//! Rendering a workspace's memory as one of the two MEMORY.md flavours, from
//! one consistent snapshot of the store (the epoch and the notes it shows are
//! read in the same transaction). A long-lived process brings its last
//! rendering up to date instead (`render_cache.rs`).

use mnemo_core::memory_md::{Flavour, render_views};

use crate::error::StoreError;
use crate::read::Scope;
use crate::render_cache;
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
}

/// Render every note of `workspace`, in every state.
pub fn render_workspace(
    store: &Store,
    workspace: &Workspace,
    kind: DocumentKind,
) -> Result<RenderedDocument, StoreError> {
    store.snapshot(|store| {
        let epoch = store.epoch()?;
        let flavour = match kind {
            DocumentKind::Mirror => Flavour::Mirror,
            DocumentKind::Checkout => Flavour::Checkout { workspace: workspace.id.clone(), epoch },
        };
        let name = workspace.display_name();
        if !render_cache::applies(store) {
            let views = store.notes(&Scope::Workspace(workspace.id.clone()))?;
            return Ok(RenderedDocument { text: render_views(&flavour, name, &views), epoch, notes: views.len() });
        }
        if let Some((text, notes)) = render_cache::render_from_kept(store, &workspace.id, &flavour, name)? {
            return Ok(RenderedDocument { text, epoch, notes });
        }
        let views = store.notes(&Scope::Workspace(workspace.id.clone()))?;
        let text = render_cache::render_and_keep(store, &workspace.id, &flavour, name, &views)?;
        Ok(RenderedDocument { text, epoch, notes: views.len() })
    })
}
