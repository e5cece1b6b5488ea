//! The `LanguageServer` implementation: thin handlers that convert, call the
//! core and the store, and convert back. Store reads run on blocking threads,
//! each with its own connection.

use std::sync::OnceLock;

use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc::UnboundedSender;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::ServerConfig;
use crate::documents::{Document, DocumentEvent, Snapshot, spawn_owner};
use crate::ext::{CheckoutParams, CheckoutResult, checkout_uri};
use crate::hover::{markdown, reference_at};
use crate::outline::{document_links, document_symbols, folding_ranges};

pub async fn serve(input: impl AsyncRead + Unpin, output: impl AsyncWrite, config: ServerConfig) {
    let (service, socket) = LspService::build(|client| Backend::new(client, config))
        .custom_method("memory/checkout", Backend::checkout)
        .finish();
    Server::new(input, output, socket).serve(service).await;
}

struct Backend {
    config: ServerConfig,
    /// The workspace the client named at `initialize` (else the configured one).
    workspace: OnceLock<Workspace>,
    documents: UnboundedSender<DocumentEvent>,
    snapshot: Snapshot,
}

impl Backend {
    fn new(client: Client, config: ServerConfig) -> Backend {
        let (documents, snapshot) = spawn_owner(client);
        Backend { config, workspace: OnceLock::new(), documents, snapshot }
    }

    /// A clone of an open document as last applied.
    fn document(&self, uri: &Uri) -> Option<Document> {
        self.snapshot.lock().unwrap_or_else(|e| e.into_inner()).get(uri).cloned()
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
        Ok(CheckoutResult { text: document.text, epoch: document.epoch, uri })
    }
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
        let Some(doc) = self.document(&params.text_document.uri) else { return Ok(None) };
        Ok(Some(DocumentSymbolResponse::Nested(document_symbols(&doc))))
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        Ok(self.document(&params.text_document.uri).map(|doc| folding_ranges(&doc)))
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        let root = self.workspace().root;
        Ok(self.document(&params.text_document.uri).map(|doc| document_links(&doc, root.as_deref())))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = params.text_document_position_params;
        let line = {
            let docs = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
            let Some(doc) = docs.get(&position.text_document.uri) else { return Ok(None) };
            if position.position.line as usize >= doc.text.len_lines() {
                return Ok(None);
            }
            doc.text.line(position.position.line as usize).to_string()
        };
        let Some(id) = reference_at(&line, position.position.character) else { return Ok(None) };
        let scope = Scope::Workspace(self.workspace().id);
        let now = mnemo_core::Timestamp(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64),
        );
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
