//! `workspace/executeCommand`: each [`CommandRequest`] run against the
//! store. Writes take the server's fair writer lock, go through the one
//! write path as the person (actor `human`), and re-render the mirror (or
//! leave it to whoever stands for it: `server::refresh_mirror`).

use mnemo_core::{Actor, EventData, EventKind, NoteId};
use mnemo_store::Scope;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{MessageType, Position, Range, ShowDocumentParams, Uri};

use crate::actions::CommandRequest;
use crate::ext::checkout_uri;
use crate::hover::markdown;
use crate::server::{Backend, invalid, refresh_mirror};
use crate::symbols::entry_line;

impl Backend {
    pub(crate) async fn run_command(&self, request: CommandRequest) -> Result<Value> {
        match request {
            CommandRequest::Event { id, kind, reason } => self.append_event(id, kind, reason).await,
            CommandRequest::Supersede { id } => self.open_for_editing(id).await,
            CommandRequest::History { id } => self.history_of(id).await,
            CommandRequest::Forget { id, confirmed } => self.forget(id, confirmed).await,
            CommandRequest::Resolve { uri, id, keep_mine } => self.resolve(uri, id, keep_mine).await,
            CommandRequest::Checkin { uri } => self.check_in_open(uri).await,
            CommandRequest::Reanchor { id, position, lines } => self.reanchor(id, position, lines).await,
            CommandRequest::OpenNote { id } => self.open_note(id).await,
        }
    }

    async fn reanchor(&self, id: NoteId, position: usize, lines: (u32, u32)) -> Result<Value> {
        let workspace = self.workspace();
        let _writer = self.writer.lock().await;
        let now = self.now();
        let (new_id, problem) = self
            .with_store(move |store| {
                let new_id = store.reanchor(&workspace, id, position, lines, now)?;
                Ok((new_id, refresh_mirror(store, &workspace)))
            })
            .await?;
        if let Some(problem) = problem {
            self.client.show_message(MessageType::WARNING, problem).await;
        }
        let _ = self.drift_requests.send(());
        Ok(json!({ "id": id, "supersededBy": new_id }))
    }

    /// Show the note's entry: in the mirror when it is on disk, else in the checkout.
    async fn open_note(&self, id: NoteId) -> Result<Value> {
        let in_mirror = self.mirror_entries().await.and_then(|(mirror, lines)| {
            let line = *lines?.get(&id)?;
            Some((Uri::from_file_path(mirror)?, line))
        });
        let Some((uri, line)) = in_mirror else { return self.open_for_editing(id).await };
        let position = Position::new(line, 0);
        let shown = self
            .client
            .show_document(ShowDocumentParams {
                uri: uri.clone(),
                external: Some(false),
                take_focus: Some(true),
                selection: Some(Range::new(position, position)),
            })
            .await
            .unwrap_or(false);
        Ok(json!({ "uri": uri.as_str(), "line": line, "shown": shown }))
    }

    async fn append_event(&self, id: NoteId, kind: EventKind, reason: Option<String>) -> Result<Value> {
        let workspace = self.workspace();
        let _writer = self.writer.lock().await;
        let scope = Scope::Workspace(workspace.id.clone());
        let now = self.now();
        let (state, problem) = self
            .with_store(move |store| {
                let state =
                    store.write(|w| w.append(&scope, id, EventData { kind, actor: Actor::Human, at: now, reason }))?;
                Ok((state, refresh_mirror(store, &workspace)))
            })
            .await?;
        if let Some(problem) = problem {
            self.client.show_message(MessageType::WARNING, problem).await;
        }
        Ok(json!({ "id": id, "state": state.status.name(), "provenance": state.provenance }))
    }

    /// Supersede: open the entry in the checkout, where editing it and
    /// saving supersedes it (docs/format.md's edit table).
    async fn open_for_editing(&self, id: NoteId) -> Result<Value> {
        let workspace = self.workspace();
        let uri = checkout_uri(&workspace.id);
        let document = self.with_store(move |store| store.checkout(&workspace)).await?;
        let line = entry_line(&document.text, id)
            .ok_or_else(|| invalid(format!("there is no note #{id} in this workspace's memory")))?;
        let target: Uri = uri.parse().map_err(|_| invalid(format!("cannot make a URI of {uri}")))?;
        let position = Position::new(line as u32, 0);
        let shown = self
            .client
            .show_document(ShowDocumentParams {
                uri: target,
                external: Some(false),
                take_focus: Some(true),
                selection: Some(Range::new(position, position)),
            })
            .await
            .unwrap_or(false);
        Ok(json!({ "uri": uri, "line": line, "shown": shown }))
    }

    async fn history_of(&self, id: NoteId) -> Result<Value> {
        let scope = Scope::Workspace(self.workspace().id);
        let now = self.now();
        let drift: Vec<(usize, String)> = self.drift_of(&[id]).into_iter().map(|(_, p, s)| (p, s)).collect();
        let text = self
            .with_store(move |store| {
                let view = store.note(&scope, id)?;
                Ok(markdown(&view, &store.history(&scope, id)?, now, &drift))
            })
            .await?;
        Ok(json!({ "id": id, "markdown": text }))
    }

    async fn forget(&self, id: NoteId, confirmed: bool) -> Result<Value> {
        if !confirmed {
            return Err(invalid(format!(
                "forget deletes #{id} and its whole history for good; ask the person, then run mnemo.forget with [{id}, \"confirm\"] (or revoke it instead)"
            )));
        }
        let workspace = self.workspace();
        let _writer = self.writer.lock().await;
        let scope = Scope::Workspace(workspace.id.clone());
        let problem = self
            .with_store(move |store| {
                store.write(|w| w.forget(&scope, id))?;
                let _ = store.checkpoint();
                Ok(refresh_mirror(store, &workspace))
            })
            .await?;
        if let Some(problem) = problem {
            self.client.show_message(MessageType::WARNING, problem).await;
        }
        Ok(json!({ "id": id, "forgotten": true }))
    }
}
