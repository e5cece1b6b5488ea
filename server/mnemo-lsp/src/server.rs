//! The `LanguageServer` implementation: thin handlers that convert, call the
//! core and the store, and convert back. Store reads run on blocking threads,
//! each with its own connection.

use std::sync::{Arc, OnceLock};

use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc::UnboundedSender;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::ServerConfig;
use crate::actions::{COMMANDS, actions_for, event_for};
use crate::completion::{completion_items, inlay_hints, typing_reference};
use crate::documents::DocumentKind;
use crate::documents::{Document, DocumentEvent, Snapshot, spawn_owner};
use crate::ext::{CheckoutParams, CheckoutResult, checkout_uri};
use crate::hover::{markdown, reference_at};
use crate::outline::{document_links, document_symbols, folding_ranges, parse_document};
use crate::refresh::{self, Checkouts, Refresher};
use crate::symbols::{container, entry_line, entry_location, hidden_summary};
use crate::to_proto::char_index;
use mnemo_core::recall::{Ranked, RankingMode, RecallAnswer, RecallRequest};
use mnemo_core::{Actor, EventData};
use mnemo_core::{Kind, NoteId, Status};
use mnemo_store::config::WorkspaceConfig;
use mnemo_store::mirror::{self, MirrorTarget};
use mnemo_store::recall::DEFAULT_POOL;

pub async fn serve(input: impl AsyncRead + Unpin, output: impl AsyncWrite, config: ServerConfig) {
    let (service, socket) = LspService::build(|client| Backend::new(client, config))
        .custom_method("memory/checkout", Backend::checkout)
        .finish();
    Server::new(input, output, socket).serve(service).await;
}

struct Backend {
    client: Client,
    /// Writes are serialised here, in arrival order (a fair lock).
    writer: tokio::sync::Mutex<()>,
    config: ServerConfig,
    /// The workspace the client named at `initialize` (else the configured one).
    workspace: Arc<OnceLock<Workspace>>,
    checkouts: Checkouts,
    /// Keeps the store watch alive (other processes' writes refresh open checkouts).
    _watch: Option<std::sync::Mutex<mnemo_store::store_watch::StoreWatcher>>,
    documents: UnboundedSender<DocumentEvent>,
    snapshot: Snapshot,
}

impl Backend {
    fn new(client: Client, config: ServerConfig) -> Backend {
        let (documents, snapshot) = spawn_owner(client.clone());
        let workspace: Arc<OnceLock<Workspace>> = Arc::default();
        let checkouts: Checkouts = Arc::default();
        let watch = refresh::spawn(Refresher {
            client: client.clone(),
            store_path: config.store_path.clone(),
            workspace: workspace.clone(),
            fallback: config.workspace.clone(),
            snapshot: snapshot.clone(),
            checkouts: checkouts.clone(),
        })
        .map_err(|e| eprintln!("mnemo lsp: cannot watch the store for other processes' writes: {e}"))
        .ok();
        Backend {
            client,
            writer: tokio::sync::Mutex::new(()),
            config,
            workspace,
            checkouts,
            _watch: watch.map(std::sync::Mutex::new),
            documents,
            snapshot,
        }
    }

    /// A clone of an open document, after every change sent before this request.
    async fn document(&self, uri: &Uri) -> Option<Document> {
        let (done, applied) = tokio::sync::oneshot::channel();
        if self.documents.send(DocumentEvent::Barrier(done)).is_ok() {
            let _ = applied.await;
        }
        self.snapshot.lock().unwrap_or_else(|e| e.into_inner()).get(uri).cloned()
    }

    /// The note referenced (`#id`, `[#id]`) at a position of an open document.
    async fn reference(&self, position: &TextDocumentPositionParams) -> Option<NoteId> {
        let doc = self.document(&position.text_document.uri).await?;
        let line = position.position.line as usize;
        if line >= doc.text.len_lines() {
            return None;
        }
        reference_at(&doc.text.line(line).to_string(), position.position.character)
    }

    fn workspace(&self) -> Workspace {
        self.workspace.get().cloned().unwrap_or_else(|| self.config.workspace.clone())
    }

    /// Run `f` with a store connection on a blocking thread.
    async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> std::result::Result<T, mnemo_store::StoreError> + Send + 'static,
    ) -> Result<T> {
        let path = self.config.store_path.clone();
        tokio::task::spawn_blocking(move || {
            let mut store = Store::open(&path).map_err(internal)?;
            f(&mut store).map_err(internal)
        })
        .await
        .map_err(|e| internal(format!("the store task failed: {e}")))?
    }

    async fn checkout(&self, params: CheckoutParams) -> Result<CheckoutResult> {
        let workspace = match params.workspace {
            Some(dir) => Workspace::resolve(Some(&dir), std::path::Path::new("/")).map_err(|e| Error {
                code: ErrorCode::InvalidParams,
                message: e.to_string().into(),
                data: None,
            })?,
            None => self.workspace(),
        };
        let uri = checkout_uri(&workspace.id);
        let document = self.with_store(move |store| store.checkout(&workspace)).await?;
        self.checkouts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uri.clone(), (document.epoch, document.text.clone()));
        Ok(CheckoutResult { text: document.text, epoch: document.epoch, uri })
    }
}

fn now() -> mnemo_core::Timestamp {
    mnemo_core::Timestamp(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64),
    )
}

/// Re-render the workspace's mirror after a write when it is enabled; a
/// problem is returned for the editor to show, never an error of the write.
fn refresh_mirror(store: &Store, workspace: &Workspace) -> Option<String> {
    let config = match WorkspaceConfig::load(workspace.root.as_deref()) {
        Ok(config) => config,
        Err(e) => return Some(e.to_string()),
    };
    if !config.memory_export.enabled {
        return None;
    }
    let result = MirrorTarget::resolve(workspace, std::path::Path::new(&config.memory_export.path))
        .and_then(|target| mirror::export(store, &target));
    result.err().map(|e| format!("the write is saved, but the mirror was not updated: {e}"))
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error { code: ErrorCode::InternalError, message: e.to_string().into(), data: None }
}

fn workspace_from(params: &InitializeParams) -> Option<Workspace> {
    #[allow(deprecated)]
    let uri = params
        .workspace_folders
        .as_ref()
        .and_then(|f| f.first())
        .map(|f| f.uri.clone())
        .or_else(|| params.root_uri.clone())?;
    let path = uri.to_file_path()?;
    Workspace::resolve(Some(path.to_str()?), std::path::Path::new("/")).ok()
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        if let Some(workspace) = workspace_from(&params) {
            let _ = self.workspace.set(workspace);
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::INCREMENTAL)),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                workspace_symbol_provider: Some(OneOf::Left(true)),
                definition_provider: Some(OneOf::Left(true)),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec!["#".into()]),
                    ..CompletionOptions::default()
                }),
                inlay_hint_provider: Some(OneOf::Left(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: COMMANDS.iter().map(|c| c.to_string()).collect(),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
                document_link_provider: Some(DocumentLinkOptions {
                    resolve_provider: Some(false),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo { name: "mnemo".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            ..InitializeResult::default()
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let _ = self.documents.send(DocumentEvent::Opened { uri: doc.uri, text: doc.text, version: doc.version });
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let doc = params.text_document;
        let _ = self.documents.send(DocumentEvent::Changed {
            uri: doc.uri,
            version: doc.version,
            changes: params.content_changes,
        });
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let _ = self.documents.send(DocumentEvent::Closed { uri: params.text_document.uri });
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let Some(doc) = self.document(&params.text_document.uri).await else { return Ok(None) };
        Ok(Some(DocumentSymbolResponse::Nested(document_symbols(&doc))))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        Ok(self.document(&params.text_document.uri).await.map(|doc| folding_ranges(&doc)))
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        let root = self.workspace().root;
        Ok(self.document(&params.text_document.uri).await.map(|doc| document_links(&doc, root.as_deref())))
    }

    async fn symbol(&self, params: WorkspaceSymbolParams) -> Result<Option<WorkspaceSymbolResponse>> {
        let workspace = self.workspace();
        let Some(root) = workspace.root.clone() else { return Ok(None) };
        let mirror = root.join("MEMORY.md");
        let mirror_text = std::fs::read_to_string(&mirror).ok();
        let query = params.query.trim().to_string();
        let vector = match (&self.config.embed, query.is_empty()) {
            (Some(embed), false) => embed(&query),
            _ => None,
        };
        let (mode, ranking) = match (&vector, &self.config.lexical_reason) {
            (Some(_), _) => (RankingMode::Hybrid, "hybrid".to_string()),
            (None, Some(reason)) => (RankingMode::LexicalOnly, format!("lexical only ({reason})")),
            (None, None) => (RankingMode::LexicalOnly, "lexical only".to_string()),
        };
        let workspace_id = workspace.id.clone();
        let (answer, notes) = self
            .with_store(move |store| {
                let scope = Scope::Workspace(workspace_id.clone());
                let answer = if query.is_empty() {
                    let directives = store
                        .notes(&scope)?
                        .into_iter()
                        .filter(|v| v.note.content.kind == Kind::Directive && v.state.status == Status::Active)
                        .map(|v| Ranked { id: v.note.id, score: 0.0, via_superseded: None })
                        .collect();
                    RecallAnswer { results: directives, ..RecallAnswer::default() }
                } else {
                    let mut request = RecallRequest::new(workspace_id, 50);
                    request.mode = mode;
                    store.recall(&query, vector.as_deref(), &request, DEFAULT_POOL)?.answer
                };
                let notes = answer
                    .results
                    .iter()
                    .map(|r| store.note(&scope, r.id))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Ok((answer, notes))
            })
            .await?;
        let summary = hidden_summary(&answer, &ranking);
        #[allow(deprecated)]
        let symbols = notes
            .iter()
            .filter_map(|view| {
                Some(SymbolInformation {
                    name: format!("#{} {}", view.note.id, view.note.content.title),
                    kind: SymbolKind::KEY,
                    tags: None,
                    deprecated: None,
                    location: entry_location(&mirror, mirror_text.as_deref(), view.note.id)?,
                    container_name: Some(container(view.note.content.kind, &summary)),
                })
            })
            .collect();
        Ok(Some(WorkspaceSymbolResponse::Flat(symbols)))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let position = params.text_document_position;
        let Some(doc) = self.document(&position.text_document.uri).await else { return Ok(None) };
        let line = position.position.line as usize;
        if line >= doc.text.len_lines() {
            return Ok(None);
        }
        let start = doc.text.line_to_char(line);
        let cursor = char_index(&doc.text, position.position);
        if !typing_reference(&doc.text.slice(start..cursor).to_string()) {
            return Ok(None);
        }
        let scope = Scope::Workspace(self.workspace().id);
        let views = self.with_store(move |store| store.notes(&scope)).await?;
        Ok(Some(CompletionResponse::Array(completion_items(&views))))
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let Some(doc) = self.document(&params.text_document.uri).await else { return Ok(None) };
        if doc.kind == DocumentKind::Source {
            return Ok(None);
        }
        let scope = Scope::Workspace(self.workspace().id);
        let views = self.with_store(move |store| store.notes(&scope)).await?;
        Ok(Some(inlay_hints(&doc.text.to_string(), &views, now())))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let Some(doc) = self.document(&params.text_document.uri).await else { return Ok(None) };
        let Some((_, parsed)) = parse_document(&doc) else { return Ok(None) };
        let line = params.range.start.line as usize;
        let entry = parsed.entries.iter().find(|e| e.first_line <= line && line <= e.last_line);
        Ok(entry.map(|e| actions_for(&e.entry)).filter(|a| !a.is_empty()))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let (id, kind, reason) = event_for(&params.command, &params.arguments).map_err(|message| Error {
            code: ErrorCode::InvalidParams,
            message: message.into(),
            data: None,
        })?;
        let workspace = self.workspace();
        let _writer = self.writer.lock().await;
        let scope = Scope::Workspace(workspace.id.clone());
        let now = now();
        let state = self
            .with_store(move |store| {
                let state =
                    store.write(|w| w.append(&scope, id, EventData { kind, actor: Actor::Human, at: now, reason }))?;
                if let Some(problem) = refresh_mirror(store, &workspace) {
                    return Ok((state, Some(problem)));
                }
                Ok((state, None))
            })
            .await;
        match state {
            Ok((state, problem)) => {
                if let Some(problem) = problem {
                    self.client.show_message(MessageType::WARNING, problem).await;
                }
                Ok(Some(serde_json::json!({ "id": id, "state": state.status.name(), "provenance": state.provenance })))
            }
            Err(e) => Err(e),
        }
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        let position = params.text_document_position_params;
        let Some(id) = self.reference(&position).await else { return Ok(None) };
        let Some(root) = self.workspace().root else { return Ok(None) };
        let mirror = root.join("MEMORY.md");
        let Ok(text) = std::fs::read_to_string(&mirror) else { return Ok(None) };
        if entry_line(&text, id).is_none() {
            return Ok(None);
        }
        Ok(entry_location(&mirror, Some(&text), id).map(GotoDefinitionResponse::Scalar))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = params.text_document_position_params;
        let Some(id) = self.reference(&position).await else { return Ok(None) };
        let scope = Scope::Workspace(self.workspace().id);
        let now = now();
        let found = self
            .with_store(move |store| match store.note(&scope, id) {
                Ok(view) => Ok(Some((store.history(&scope, id)?, view))),
                Err(mnemo_store::StoreError::NoSuchNote { .. } | mnemo_store::StoreError::OtherWorkspace { .. }) => {
                    Ok(None)
                }
                Err(e) => Err(e),
            })
            .await?;
        Ok(found.map(|(history, view)| Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown(&view, &history, now),
            }),
            range: None,
        }))
    }
}
