//! The server's one resource, the workspace's mirror as
//! `memory://<workspace>/MEMORY.md`: listing, reading (rendered from the
//! store, as `mnemo export` would write it) and the subscription that tells
//! a client of every burst of writes by any process, through the store watch.

use mnemo_store::Store;
use mnemo_store::document::{DocumentKind, render_workspace};
use rmcp::ErrorData;
use rmcp::model::{
    AnnotateAble, ListResourcesResult, RawResource, ReadResourceResult, ResourceContents,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{Peer, RoleServer};

use super::MemoryServer;
use super::stdin::{REFUSED_URI, refusal_message};

impl MemoryServer {
    /// This server's one resource: `memory://<workspace>/MEMORY.md`.
    fn mirror_uri(&self) -> Result<String, ErrorData> {
        let state =
            self.state.lock().map_err(|_| ErrorData::internal_error("the mnemo server is in a bad state", None))?;
        let id = &state.ctx.workspace.id;
        let path = if id.starts_with('/') { id.clone() } else { format!("/{id}") };
        Ok(format!("memory://{path}/MEMORY.md"))
    }

    /// The mirror's URI when `requested` names it, else a resource-not-found error.
    fn requested_mirror(&self, requested: &str) -> Result<String, ErrorData> {
        let uri = self.mirror_uri()?;
        if requested != uri {
            return Err(ErrorData::resource_not_found(format!("no resource {requested}; this server has {uri}"), None));
        }
        Ok(uri)
    }

    pub(super) fn list_mirror(&self) -> Result<ListResourcesResult, ErrorData> {
        let uri = self.mirror_uri()?;
        let mut resource = RawResource::new(uri, "MEMORY.md");
        resource.description = Some("The workspace's memory as MEMORY.md (read-only mirror)".into());
        resource.mime_type = Some("text/markdown".into());
        Ok(ListResourcesResult::with_all_items(vec![resource.no_annotation()]))
    }

    pub(super) fn read_mirror(&self, requested: &str) -> Result<ReadResourceResult, ErrorData> {
        if requested == REFUSED_URI {
            return Err(ErrorData::invalid_request(refusal_message(), None));
        }
        let uri = self.requested_mirror(requested)?;
        let text = self
            .with(|s| {
                let store: Store = s.ctx.open()?;
                Ok(render_workspace(&store, &s.ctx.workspace, DocumentKind::Mirror)?.text)
            })
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]))
    }

    /// Subscribing to the mirror: every store write (by any process) is
    /// announced to `peer` with `notifications/resources/updated`, debounced.
    pub(super) fn subscribe_mirror(&self, requested: &str, peer: Peer<RoleServer>) -> Result<(), ErrorData> {
        let uri = self.requested_mirror(requested)?;
        let store_path =
            self.state.lock().map_err(|_| ErrorData::internal_error("bad state", None))?.ctx.store_path.clone();
        let (sender, mut changes) = tokio::sync::mpsc::unbounded_channel::<()>();
        let watcher = mnemo_store::store_watch::watch_store(&store_path, move || {
            let _ = sender.send(());
        })
        .map_err(|e| ErrorData::internal_error(format!("cannot watch the store: {e}"), None))?;
        tokio::spawn(async move {
            // A burst of writes is announced once, 200 ms after its last
            // write, and never later than a second after its first: a steady
            // stream of writes still gets announced.
            let started = tokio::time::Instant::now();
            let now = || started.elapsed().as_millis() as u64;
            let mut debouncer = mnemo_core::debounce::Debouncer::new(200, 1_000);
            loop {
                // Some(true): a write; Some(false): the burst's deadline; None: unsubscribed.
                let change = match debouncer.deadline() {
                    Some(deadline) => {
                        let wait = std::time::Duration::from_millis(deadline.saturating_sub(now()));
                        match tokio::time::timeout(wait, changes.recv()).await {
                            Ok(write) => write.map(|()| true),
                            Err(_) => Some(false),
                        }
                    }
                    None => changes.recv().await.map(|()| true),
                };
                match change {
                    None => break,
                    Some(true) => debouncer.poke(now()),
                    Some(false) => {}
                }
                if debouncer.fire(now())
                    && peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone())).await.is_err()
                {
                    break;
                }
            }
        });
        *self.watch.lock().map_err(|_| ErrorData::internal_error("bad state", None))? = Some(watcher);
        Ok(())
    }

    pub(super) fn unsubscribe_mirror(&self) -> Result<(), ErrorData> {
        *self.watch.lock().map_err(|_| ErrorData::internal_error("bad state", None))? = None;
        Ok(())
    }
}
