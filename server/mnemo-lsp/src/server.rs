//! The `LanguageServer` implementation: thin handlers that convert, call the
//! core and the store, and convert back. Store reads run on blocking threads,
//! each with its own connection.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, RwLock};

use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc::UnboundedSender;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::actions::{COMMANDS, actions_for, conflict_actions, parse_command, proposal_lenses};
use crate::anchors::{DriftSnapshot, anchors_at, code_lenses, relative_path, source_actions};
use crate::completion::{completion_items, inlay_hints, priority_items, typing_priority, typing_reference};
use crate::document_owner::{Previewer, RefreshSupport, Snapshot, spawn_owner};
use crate::documents::DocumentKind;
use crate::documents::{Document, DocumentEvent};
use crate::ext::{CheckoutParams, CheckoutResult, MirrorParams, MirrorResult, checkout_uri};
use crate::hover::{markdown, reference_at};
use crate::mirror_entries::MirrorEntries;
use crate::outline::{document_links, document_symbols, folding_ranges, parse_document};
use crate::refresh::{self, Checkouts, HandedOut, Refresher};
use crate::symbols::{container, entry_location, hidden_summary};
use crate::to_proto::{byte_offset, char_index};
use crate::{Ranking, ServerConfig};
use mnemo_core::recall::{Ranked, RankingMode, RecallAnswer, RecallRequest};
use mnemo_core::{Kind, NoteId, Status};
use mnemo_store::mirror;
use mnemo_store::mirror::sync::{MirrorEvent, MirrorSync};
use mnemo_store::recall::DEFAULT_POOL;

pub async fn serve(input: impl AsyncRead + Unpin, output: impl AsyncWrite + Unpin, config: ServerConfig) {
    let (direct, direct_frames) = crate::direct_out::channel();
    let (service, socket) = LspService::build(|client| Backend::new(client, direct, config))
        .custom_method("memory/checkout", Backend::checkout)
        .custom_method("memory/checkin", Backend::checkin)
        .custom_method("memory/mirror", Backend::mirror)
        .custom_method(crate::frames::MALFORMED, Backend::malformed)
        .finish();
    let input = crate::frames::WellFormed::new(input);
    // The library writes into a pipe; `forward` passes its frames on, and
    // the diagnostics serialised directly between them.
    let (library_out, library_frames) = tokio::io::duplex(crate::direct_out::PIPE_CAPACITY);
    let serving = async move {
        Server::new(input, library_out, socket).serve(crate::panic_guard::CatchPanics(service)).await;
    };
    let forwarding = crate::direct_out::forward(library_frames, direct_frames, output);
    let ((), forwarded) = tokio::join!(serving, forwarding);
    if let Err(e) = forwarded {
        tracing::debug!("the client's output closed: {e}");
    }
}

pub(crate) struct Backend {
    pub(crate) client: Client,
    /// Diagnostics are sent around the library (`direct_out`).
    pub(crate) direct: crate::direct_out::DirectOut,
    /// Writes are serialised here, in arrival order (a fair lock).
    pub(crate) writer: tokio::sync::Mutex<()>,
    pub(crate) config: ServerConfig,
    /// The workspace the client named at `initialize` (else the configured one).
    workspace: Arc<OnceLock<Workspace>>,
    pub(crate) checkouts: Checkouts,
    /// The store file (the client's `storePath` setting may change it).
    pub(crate) store_path: Arc<RwLock<PathBuf>>,
    /// The client's `modelDir` setting.
    pub(crate) model_dir: RwLock<Option<PathBuf>>,
    /// Loaded on first need (or after `initialized`); reset when a setting changes it.
    pub(crate) ranking: Arc<tokio::sync::Mutex<Option<Ranking>>>,
    /// Keeps the store watch alive (other processes' writes refresh open documents).
    pub(crate) watch: std::sync::Mutex<Option<mnemo_store::store_watch::StoreWatcher>>,
    /// Stands for the workspace's mirror while the server runs
    /// (`mirror::standing`): every writer — the agents' commands, this
    /// server's check-ins — leaves the render to it.
    pub(crate) stand: std::sync::Mutex<Option<MirrorSync>>,
    pub(crate) documents: UnboundedSender<DocumentEvent>,
    pub(crate) snapshot: Snapshot,
    pub(crate) preview: Previewer,
    /// How long typing in a checkout must pause before it is previewed.
    pub(crate) pause: Arc<std::sync::Mutex<std::time::Duration>>,
    /// Whether the client accepts `window/workDoneProgress/create`.
    pub(crate) progress: std::sync::atomic::AtomicBool,
    /// A problem with the settings sent at `initialize`, shown once initialized.
    pub(crate) settings_problem: std::sync::Mutex<Option<String>>,
    /// The latest drift check of the workspace's anchors.
    pub(crate) drift: DriftSnapshot,
    /// Asks the drift task for a check.
    pub(crate) drift_requests: tokio::sync::mpsc::UnboundedSender<()>,
    /// Whether the first drift check has run.
    pub(crate) first_drift_check: crate::drift_watch::FirstCheck,
    /// Whether the client takes `workspace/codeLens/refresh` and `…/inlayHint/refresh`.
    pub(crate) refresh_support: Arc<RefreshSupport>,
    /// Where the mirror's entries are, read once per version of the file.
    pub(crate) mirror_entries: Arc<MirrorEntries>,
}

impl Drop for Backend {
    /// An editor that exits without `shutdown` (or vanishes): the standing
    /// worker catches the mirror up on a blocking thread, which the runtime
    /// waits for as it stops, never on the thread that serves requests.
    fn drop(&mut self) {
        let stand = self.stand.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        match (stand, tokio::runtime::Handle::try_current()) {
            (Some(stand), Ok(runtime)) => drop(runtime.spawn_blocking(move || drop(stand))),
            (stand, _) => drop(stand),
        }
    }
}

/// The default pause before a checkout's check-in preview.
const DEFAULT_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// A preview of checking a checkout's text in, against the store now.
fn previewer(store_path: Arc<RwLock<PathBuf>>, workspace: Arc<OnceLock<Workspace>>, fallback: Workspace) -> Previewer {
    Arc::new(move |text: &str| {
        let workspace = workspace.get().cloned().unwrap_or_else(|| fallback.clone());
        let path = store_path.read().unwrap_or_else(|e| e.into_inner()).clone();
        let result = Store::open(&path).and_then(|store| store.preview_checkin(&workspace, text));
        Some(result.unwrap_or_else(|e| {
            let mut plan = mnemo_core::checkin::CheckinPlan {
                diagnostics: mnemo_core::memory_md::parse_checkout(text).diagnostics,
                ..Default::default()
            };
            plan.diagnostics.push(mnemo_core::memory_md::Diagnostic {
                line: 0,
                start_column: 0,
                end_column: 0,
                severity: mnemo_core::memory_md::Severity::Error,
                message: format!("cannot check this checkout in: {e}"),
            });
            plan
        }))
    })
}

/// The `#id` under `position` in `doc`.
fn reference_in(doc: &Document, position: Position) -> Option<NoteId> {
    let line = position.line as usize;
    if line >= doc.text.len_lines() {
        return None;
    }
    let text = doc.text.line(line).to_string();
    reference_at(&text, byte_offset(&text, position.character))
}

impl Backend {
    fn new(client: Client, direct: crate::direct_out::DirectOut, config: ServerConfig) -> Backend {
        crate::log::forward_to(&client);
        let workspace: Arc<OnceLock<Workspace>> = Arc::default();
        let store_path = Arc::new(RwLock::new(config.store_path.clone()));
        let preview = previewer(store_path.clone(), workspace.clone(), config.workspace.clone());
        let pause = Arc::new(std::sync::Mutex::new(DEFAULT_PAUSE));
        let drift: DriftSnapshot = Arc::default();
        let refresh_support: Arc<RefreshSupport> = Arc::default();
        let (documents, snapshot) = spawn_owner(
            client.clone(),
            direct.clone(),
            preview.clone(),
            pause.clone(),
            drift.clone(),
            refresh_support.clone(),
        );
        let (drift_requests, first_drift_check) = crate::drift_watch::spawn(crate::drift_watch::DriftWatch {
            store_path: store_path.clone(),
            workspace: workspace.clone(),
            fallback: config.workspace.clone(),
            clock: config.clock.clone(),
            snapshot: drift.clone(),
            documents: documents.clone(),
        });
        Backend {
            client,
            direct,
            writer: tokio::sync::Mutex::new(()),
            config,
            workspace,
            checkouts: Arc::default(),
            store_path,
            model_dir: RwLock::new(None),
            ranking: Arc::default(),
            watch: std::sync::Mutex::new(None),
            stand: std::sync::Mutex::new(None),
            documents,
            snapshot,
            preview,
            pause,
            progress: std::sync::atomic::AtomicBool::new(false),
            settings_problem: std::sync::Mutex::new(None),
            drift,
            drift_requests,
            first_drift_check,
            refresh_support,
            mirror_entries: Arc::default(),
        }
    }

    /// The watch on the store: other processes' writes refresh open documents.
    pub(crate) fn start_watch(&self) {
        let watch = refresh::spawn(Refresher {
            client: self.client.clone(),
            direct: self.direct.clone(),
            store_path: self.store_path.clone(),
            workspace: self.workspace.clone(),
            fallback: self.config.workspace.clone(),
            snapshot: self.snapshot.clone(),
            checkouts: self.checkouts.clone(),
            preview: self.preview.clone(),
            documents: self.documents.clone(),
            drift: self.drift.clone(),
            drift_requests: self.drift_requests.clone(),
        })
        .map_err(|e| eprintln!("mnemo lsp: cannot watch the store for other processes' writes: {e}"))
        .ok();
        *self.watch.lock().unwrap_or_else(|e| e.into_inner()) = watch;
        self.stand_for_mirror();
    }

    /// Stand for the workspace's mirror in the store now configured (the
    /// caller stopped the one before: `stop_standing`). A render that fails
    /// is shown to the person as a warning, as a check-in's own render
    /// problem is, and said in the server's log.
    fn stand_for_mirror(&self) {
        let path = self.store_path.read().unwrap_or_else(|e| e.into_inner()).clone();
        let (client, runtime) = (self.client.clone(), tokio::runtime::Handle::current());
        let stand = MirrorSync::stand(&path, self.workspace(), move |event| match event {
            MirrorEvent::Rendered { epoch, written } => {
                tracing::debug!(epoch, written, "mirror rendered for the writers")
            }
            MirrorEvent::Failed(problem) => {
                let problem = mirror::not_updated(&problem);
                eprintln!("mnemo lsp: warning: {problem}");
                let client = client.clone();
                runtime.spawn(async move { client.show_message(MessageType::WARNING, problem).await });
            }
        });
        let old = self.stand.lock().unwrap_or_else(|e| e.into_inner()).replace(stand);
        if let Some(old) = old {
            // Not expected (`start_watch` callers stop it first); never dropped here, where it may render.
            tokio::task::spawn_blocking(move || drop(old));
        }
    }

    /// Stop standing for the mirror, once it is caught up (at shutdown, and
    /// before standing for the mirror of another store).
    pub(crate) async fn stop_standing(&self) {
        let stand = self.stand.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(stand) = stand {
            let _ = tokio::task::spawn_blocking(move || drop(stand)).await;
        }
    }

    /// A clone of an open document, after every change sent before this request.
    pub(crate) async fn document(&self, uri: &Uri) -> Option<Document> {
        let (done, applied) = tokio::sync::oneshot::channel();
        if self.documents.send(DocumentEvent::Barrier(done)).is_ok() {
            let _ = applied.await;
        }
        self.snapshot.lock().unwrap_or_else(|e| e.into_inner()).get(&crate::uris::canonical(uri)).cloned()
    }

    /// The note referenced (`#id`, `[#id]`) at a position of an open document.
    async fn reference(&self, position: &TextDocumentPositionParams) -> Option<NoteId> {
        reference_in(&self.document(&position.text_document.uri).await?, position.position)
    }

    pub(crate) fn now(&self) -> mnemo_core::Timestamp {
        (self.config.clock)()
    }

    /// What the latest drift check says of the anchors of `ids`: (note, position, status).
    pub(crate) fn drift_of(&self, ids: &[NoteId]) -> Vec<(NoteId, usize, String)> {
        let drift = self.drift.lock().unwrap_or_else(|e| e.into_inner());
        drift
            .checks
            .iter()
            .filter(|c| ids.contains(&c.note))
            .map(|c| (c.note, c.position, crate::anchors::drift_status(c)))
            .collect()
    }

    /// The anchors (of the latest drift check) over `line` of a source file;
    /// in an open source file (`in_source`), once the first drift check has
    /// run (a server started with the file opened is asked at once).
    pub(crate) async fn anchors_at(
        &self,
        uri: &Uri,
        line: u32,
        in_source: bool,
    ) -> Vec<mnemo_store::drift::AnchorCheck> {
        if in_source {
            self.first_drift_check.ran().await;
        }
        let drift = self.drift.lock().unwrap_or_else(|e| e.into_inner());
        relative_path(uri, drift.root.as_deref()).map_or(Vec::new(), |path| anchors_at(&path, line, &drift))
    }

    pub(crate) fn workspace(&self) -> Workspace {
        self.workspace.get().cloned().unwrap_or_else(|| self.config.workspace.clone())
    }

    /// Run `f` with a store connection on a blocking thread.
    pub(crate) async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> std::result::Result<T, mnemo_store::StoreError> + Send + 'static,
    ) -> Result<T> {
        let path = self.store_path.read().unwrap_or_else(|e| e.into_inner()).clone();
        tokio::task::spawn_blocking(move || {
            let mut store = Store::open(&path).map_err(internal)?;
            f(&mut store).map_err(internal)
        })
        .await
        .map_err(|e| internal(format!("the store task failed: {e}")))?
    }

    /// A frame the client sent could not be read (`frames.rs` replaced it):
    /// say so in the client's log rather than end the session.
    async fn malformed(&self, params: serde_json::Value) {
        let reason = params["reason"].as_str().unwrap_or("a malformed message");
        self.client.log_message(MessageType::ERROR, format!("mnemo: {reason}")).await;
    }

    async fn checkout(&self, params: CheckoutParams) -> Result<CheckoutResult> {
        let workspace = self.requested_workspace(params.workspace.as_deref())?;
        let uri = checkout_uri(&workspace.id);
        let document = self.with_store(move |store| store.checkout(&workspace)).await?;
        let handed = HandedOut { epoch: document.epoch, text: document.text.clone(), pristine: true };
        self.checkouts.lock().unwrap_or_else(|e| e.into_inner()).insert(uri.clone(), handed);
        Ok(CheckoutResult { text: document.text, epoch: document.epoch, uri })
    }

    /// The workspace a request names, which must be this server's own: reads
    /// are scoped like writes, so one workspace's server never hands out
    /// another's memory.
    fn requested_workspace(&self, dir: Option<&str>) -> Result<Workspace> {
        let own = self.workspace();
        let Some(dir) = dir else { return Ok(own) };
        let asked = Workspace::resolve(Some(dir), std::path::Path::new("/")).map_err(|e| invalid(e.to_string()))?;
        // The same directory, or a checkout of the same (admitted) workspace.
        if asked.root != own.root && asked.id != own.id {
            return Err(invalid(format!(
                "this language server serves the workspace {}; {dir} is another workspace, served by its own server (open it as a folder of its own)",
                own.id
            )));
        }
        Ok(Workspace { root: asked.root, ..own })
    }

    /// `memory/mirror`: where the workspace's mirror is, as configured.
    async fn mirror(&self, params: MirrorParams) -> Result<MirrorResult> {
        let workspace = self.requested_workspace(params.workspace.as_deref())?;
        let location = mirror::location(&workspace).map_err(internal)?;
        Ok(MirrorResult {
            path: location.as_ref().map(|l| l.path.display().to_string()),
            enabled: location.is_some_and(|l| l.enabled),
        })
    }
}

/// Re-render the workspace's mirror after a write when it is enabled — or
/// leave it to the process standing for it (this server's worker, most of
/// the time: `Backend::stand_for_mirror`), whose failure it shows itself; a
/// problem is returned for the editor to show, never an error of the write.
pub(crate) fn refresh_mirror(store: &Store, workspace: &Workspace) -> Option<String> {
    // Rendered only when behind: the store watch calls this after every write,
    // most of which the writing process has already rendered.
    match mirror::enabled_target(workspace) {
        Ok(Some(target)) => mirror::keep_current(store, &target).err().map(|e| mirror::not_updated(&e)),
        Ok(None) => None,
        Err(problem) => Some(mirror::not_updated(&problem)),
    }
}

pub(crate) fn invalid(message: String) -> Error {
    Error { code: ErrorCode::InvalidParams, message: message.into(), data: None }
}

pub(crate) fn internal(e: impl std::fmt::Display) -> Error {
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
    let path = crate::uris::file_path(&uri)?;
    Workspace::resolve(Some(path.to_str()?), std::path::Path::new("/")).ok()
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let claimed = workspace_from(&params);
        let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        let workspace_caps = params.capabilities.workspace.as_ref();
        let lens = workspace_caps.and_then(|w| w.code_lens.as_ref()).and_then(|c| c.refresh_support).unwrap_or(false);
        let hints = workspace_caps.and_then(|w| w.inlay_hint.as_ref()).and_then(|c| c.refresh_support).unwrap_or(false);
        self.refresh_support.code_lens.store(lens, std::sync::atomic::Ordering::Relaxed);
        self.refresh_support.inlay_hints.store(hints, std::sync::atomic::Ordering::Relaxed);
        self.progress.store(progress, std::sync::atomic::Ordering::Relaxed);
        if let (_, Some(problem)) = self.apply_settings(params.initialization_options.as_ref()) {
            *self.settings_problem.lock().unwrap_or_else(|e| e.into_inner()) = Some(problem);
        }
        if let Some(claimed) = claimed {
            // The id the folder's repository claims, as the (configured) store admits it.
            let path = self.store_path.read().unwrap_or_else(|e| e.into_inner()).clone();
            let now = (self.config.clock)();
            let admitted =
                tokio::task::spawn_blocking(move || mnemo_store::workspace::admit_at(&path, claimed, now, false))
                    .await
                    .map_err(internal)?;
            // A refused committed id: the editor says why and how to go on.
            let _ = self.workspace.set(admitted.map_err(|e| invalid(e.to_string()))?);
        }
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(true) })),
                    ..TextDocumentSyncOptions::default()
                })),
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
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
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

    async fn initialized(&self, _: InitializedParams) {
        self.start_watch();
        let _ = self.drift_requests.send(());
        let problem = self.settings_problem.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(problem) = problem {
            self.client.show_message(MessageType::ERROR, problem).await;
        }
        self.preload_ranking();
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        self.change_settings(params.settings).await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.stop_standing().await;
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let uri = crate::uris::canonical(&doc.uri);
        let _ = self.documents.send(DocumentEvent::Opened { uri, text: doc.text, version: doc.version });
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let doc = params.text_document;
        let _ = self.documents.send(DocumentEvent::Changed {
            uri: crate::uris::canonical(&doc.uri),
            version: doc.version,
            changes: params.content_changes,
        });
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.checkin_saved_file(params).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let _ = self.documents.send(DocumentEvent::Closed { uri: crate::uris::canonical(&params.text_document.uri) });
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
        let Some((mirror, lines)) = self.mirror_entries().await else { return Ok(None) };
        let lines = lines.unwrap_or_default();
        let query = params.query.trim().to_string();
        let Ranking { embed, lexical_reason } = self.load_ranking().await;
        let vector = match (&embed, query.is_empty()) {
            (Some(embed), false) => embed(&query),
            _ => None,
        };
        let (mode, reason) = match &vector {
            Some(_) => (RankingMode::Hybrid, None),
            None => (RankingMode::LexicalOnly, lexical_reason.as_deref()),
        };
        let ranking = mnemo_core::recall::describe_ranking(mode, reason, 0, None);
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
                    // The symbol picker is a person searching, who sees every
                    // line and filters as they type: weak matches are shown,
                    // ranked, rather than held back as they are for agents.
                    request.abstain = false;
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
        // Said even when nothing is returned, so an empty answer is never silent.
        let said = format!("mnemo recall '{}': {} results; {summary}", params.query.trim(), notes.len());
        self.client.log_message(MessageType::INFO, said).await;
        #[allow(deprecated)]
        let symbols = notes
            .iter()
            .filter_map(|view| {
                Some(SymbolInformation {
                    name: format!("#{} {}", view.note.id, view.note.content.title),
                    kind: SymbolKind::KEY,
                    tags: None,
                    deprecated: None,
                    location: entry_location(&mirror, &lines, view.note.id)?,
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
        let before = doc.text.slice(start..cursor).to_string();
        if doc.kind == DocumentKind::Checkout && typing_priority(&before) {
            return Ok(Some(CompletionResponse::Array(priority_items())));
        }
        if !typing_reference(&before) {
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
        Ok(Some(inlay_hints(&doc.whole_text(), &views, self.now())))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let Some(doc) = self.document(&uri).await else { return Ok(None) };
        let mut actions = if doc.kind == DocumentKind::Source {
            let anchors = self.anchors_at(&uri, params.range.start.line, true).await;
            source_actions(&anchors, &self.drift.lock().unwrap_or_else(|e| e.into_inner()))
        } else {
            let Some((_, parsed)) = parse_document(&doc) else { return Ok(None) };
            let line = params.range.start.line as usize;
            let mut actions = conflict_actions(&uri, &params.context.diagnostics);
            if let Some(entry) = parsed.entries.iter().find(|e| e.first_line <= line && line <= e.last_line) {
                actions.extend(actions_for(&entry.entry));
            }
            actions
        };
        // Asked automatically (a light bulb as the cursor moves): fixes only;
        // acting on a note is offered when the person asks for actions.
        if params.context.trigger_kind == Some(CodeActionTriggerKind::AUTOMATIC) && params.context.only.is_none() {
            actions.retain(|a| {
                matches!(a, CodeActionOrCommand::CodeAction(action) if action.kind == Some(CodeActionKind::QUICKFIX))
            });
        }
        // The client may ask for some kinds only (`refactor`, `quickfix`, …).
        if let Some(only) = &params.context.only {
            actions.retain(|a| match a {
                CodeActionOrCommand::CodeAction(action) => action.kind.as_ref().is_some_and(|kind| {
                    only.iter()
                        .any(|o| kind.as_str() == o.as_str() || kind.as_str().starts_with(&format!("{}.", o.as_str())))
                }),
                CodeActionOrCommand::Command(_) => false,
            });
        }
        Ok(Some(actions).filter(|a| !a.is_empty()))
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        if let Some(doc) = self.document(&params.text_document.uri).await
            && doc.kind != DocumentKind::Source
        {
            let Some((_, parsed)) = parse_document(&doc) else { return Ok(None) };
            return Ok(Some(proposal_lenses(&parsed)).filter(|l| !l.is_empty()));
        }
        // A client that takes `workspace/codeLens/refresh` is asked again
        // after the first check; one that does not gets them once, after it.
        if !self.refresh_support.code_lens.load(std::sync::atomic::Ordering::Relaxed) {
            self.first_drift_check.ran().await;
        }
        let mut lenses = {
            let drift = self.drift.lock().unwrap_or_else(|e| e.into_inner());
            let relative = relative_path(&params.text_document.uri, drift.root.as_deref());
            relative.map(|path| code_lenses(&path, &drift)).unwrap_or_default()
        };
        if lenses.is_empty() {
            return Ok(None);
        }
        // Notes told to agents before the file last changed: worth re-checking.
        let changed = crate::uris::file_path(&params.text_document.uri)
            .and_then(|p| std::fs::metadata(p).ok()?.modified().ok())
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| mnemo_core::Timestamp(d.as_secs() as i64));
        if let Some(changed) = changed {
            let scope = Scope::Workspace(self.workspace().id);
            let ids: Vec<Vec<NoteId>> = lenses.iter().map(crate::anchors::lens_notes).collect();
            let told = self
                .with_store(move |store| {
                    ids.iter()
                        .map(|ids| {
                            let mut before = 0;
                            for id in ids {
                                let filter =
                                    mnemo_store::ledger::LedgerFilter { note: Some(*id), ..Default::default() };
                                before += store.ledger(&scope, &filter)?.iter().filter(|d| d.at < changed).count();
                            }
                            Ok(before)
                        })
                        .collect::<std::result::Result<Vec<usize>, mnemo_store::StoreError>>()
                })
                .await?;
            for (lens, told) in lenses.iter_mut().zip(told) {
                if let (Some(command), true) = (lens.command.as_mut(), told > 0) {
                    let times = if told == 1 { "once".to_string() } else { format!("{told} times") };
                    command.title.push_str(&format!(" · told to agents {times}; code changed since"));
                }
            }
        }
        Ok(Some(lenses))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let request = parse_command(&params.command, &params.arguments).map_err(invalid)?;
        self.run_command(request).await.map(Some)
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        let position = params.text_document_position_params;
        let Some(id) = self.reference(&position).await else { return Ok(None) };
        let Some((mirror, Some(lines))) = self.mirror_entries().await else { return Ok(None) };
        if !lines.contains_key(&id) {
            return Ok(None);
        }
        Ok(entry_location(&mirror, &lines, id).map(GotoDefinitionResponse::Scalar))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = params.text_document_position_params;
        // A `#id` under the cursor; else, in a source file, the notes anchored to this line.
        let doc = self.document(&position.text_document.uri).await;
        let ids: Vec<NoteId> = match doc.as_ref().and_then(|doc| reference_in(doc, position.position)) {
            Some(id) => vec![id],
            None => {
                let in_source = doc.is_some_and(|doc| doc.kind == DocumentKind::Source);
                let anchors = self.anchors_at(&position.text_document.uri, position.position.line, in_source).await;
                anchors.iter().map(|c| c.note).collect()
            }
        };
        if ids.is_empty() {
            return Ok(None);
        }
        let scope = Scope::Workspace(self.workspace().id);
        let now = self.now();
        let drift = self.drift_of(&ids);
        let found = self
            .with_store(move |store| {
                let mut shown = Vec::new();
                for id in ids {
                    let drift: Vec<(usize, String)> =
                        drift.iter().filter(|(note, _, _)| *note == id).map(|(_, p, s)| (*p, s.clone())).collect();
                    match store.note(&scope, id) {
                        Ok(view) => {
                            let (count, latest) = store.deliveries_of(&scope, id)?;
                            let mut text = markdown(&view, &store.history(&scope, id)?, now, &drift);
                            text.push('\n');
                            text.push_str(&crate::hover::delivered(count, latest.as_ref(), now));
                            shown.push(text);
                        }
                        Err(
                            mnemo_store::StoreError::NoSuchNote { .. } | mnemo_store::StoreError::OtherWorkspace { .. },
                        ) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(shown)
            })
            .await?;
        Ok(Some(found).filter(|f| !f.is_empty()).map(|shown| Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: shown.join("\n---\n\n"),
            }),
            range: None,
        }))
    }
}
