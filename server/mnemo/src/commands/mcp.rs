//! `mnemo mcp`: the Model Context Protocol over stdio (rmcp), so agents
//! write to and read from the same store as people. Tools: remember, recall,
//! expand, revoke, reinstate, flag_stale, history, context — every write as
//! the agent, through the one write path; none promotes a note to `human` or
//! forgets one. The mirror is a resource, `memory://<workspace>/MEMORY.md`,
//! with `notifications/resources/updated` when any process writes.
//! A bad argument is a tool error an agent can act on, never a crash.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use mnemo_core::recall::RecallRequest;
use mnemo_core::{Actor, EventKind, Kind, NewNote, NoteId, Priority, Provenance, Status};
use mnemo_store::Store;
use mnemo_store::document::{DocumentKind, render_workspace};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    AnnotateAble, Implementation, ListResourcesResult, PaginatedRequestParams, RawResource, ReadResourceRequestParams,
    ReadResourceResult, ResourceContents, ResourceUpdatedNotificationParam, ServerCapabilities, ServerInfo,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::app::recall::{answer_json, context_json, note_with_trust, rerank_setting, run_recall, session_context};
use crate::app::remember::{Links, bind_provenance, capture_anchors, create_linked_note};
use crate::cli::parse_word as parse;
use crate::context::Context;
use crate::output::event_json;
use crate::semantic::Semantic;

/// What every tool works with: the context (store, workspace, clock) and the model.
struct State {
    ctx: Context,
    semantic: Semantic,
}

#[derive(Clone)]
pub struct MemoryServer {
    state: Arc<Mutex<State>>,
    tool_router: ToolRouter<MemoryServer>,
    /// The watch on the store while a client is subscribed to the mirror resource.
    watch: Arc<Mutex<Option<mnemo_store::store_watch::StoreWatcher>>>,
}

type ToolResult = Result<String, String>;

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| e.to_string())
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RememberArgs {
    /// directive, task, gotcha, finding, reference, decision or operational
    pub kind: String,
    /// One line that says the whole point
    pub title: String,
    /// Why, and what to do about it
    #[serde(default)]
    pub body: String,
    /// high, medium (default) or low
    pub priority: Option<String>,
    /// Code locations PATH:START-END inside the workspace
    #[serde(default)]
    pub anchors: Vec<String>,
    /// The id of a note this one replaces (it becomes superseded)
    pub supersedes: Option<NoteId>,
    /// The id of a note this one proves wrong (it is revoked, "contradicted by" this one)
    pub contradicts: Option<NoteId>,
    /// The user's current message, when the note states it. It binds the quote (provenance
    /// user-stated) only as far as the harness's user-prompt hook recorded that message:
    /// an agent cannot make its own words the user's.
    pub user_message: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RecallArgs {
    /// What you are about to do, or want to know
    pub query: String,
    /// Only these kinds (default: all)
    #[serde(default)]
    pub kinds: Vec<String>,
    /// How many notes (default 10)
    pub limit: Option<usize>,
    /// Return stale-flagged notes as results too
    #[serde(default)]
    pub include_stale: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct IdsArgs {
    /// Note ids, as numbers
    pub ids: Vec<NoteId>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct IdArgs {
    /// A note id
    pub id: NoteId,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReasonArgs {
    /// A note id
    pub id: NoteId,
    /// Why: a sentence another agent or a person will read
    pub reason: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ContextArgs {
    /// The task at hand (optional): the notes relevant to it follow the directives
    #[serde(default)]
    pub query: String,
    /// How many notes after the directives (default 10)
    pub limit: Option<usize>,
    /// Tokens the directives' bodies share (default 4000); a body over its share is cut, saying so
    pub budget: Option<usize>,
}

impl MemoryServer {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> anyhow::Result<T>) -> Result<T, String> {
        let mut state = self.state.lock().map_err(|_| "the mnemo server is in a bad state; restart it".to_string())?;
        // A long-lived server reads the clock per call.
        if let Ok(now) = state.ctx.clock.now() {
            state.ctx.now = now;
        }
        f(&mut state).map_err(|e| format!("{e:#}"))
    }

    fn event(&self, id: NoteId, kind: EventKind, reason: Option<String>) -> ToolResult {
        self.with(|s| {
            let state = crate::app::lifecycle::append(&s.ctx, id, kind, false, reason)?;
            Ok(pretty(&json!({ "id": id, "state": state.status.name(), "provenance": state.provenance })))
        })
    }
}

#[tool_router]
impl MemoryServer {
    #[tool(
        description = "Record a note in the project memory: a finding, a gotcha, a decision, a standing directive, a task, a reference or an operational fact. Write one note per point, with a one-line title that says it all. Returns the new id."
    )]
    fn remember(&self, Parameters(args): Parameters<RememberArgs>) -> ToolResult {
        let kind: Kind = parse(&args.kind)?;
        let priority: Priority = args.priority.as_deref().map(parse).transpose()?.unwrap_or(Priority::Medium);
        self.with(|s| {
            let anchors = capture_anchors(&s.ctx, &args.anchors)?;
            // Only what the user-prompt hook recorded is the user's: a message the
            // caller passes binds only when it is part of that recording.
            let recorded = crate::app::session::latest_user_message(&s.ctx);
            let message = match (&args.user_message, recorded) {
                (Some(claimed), Some(recorded)) => {
                    let squash = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
                    squash(&recorded).contains(&squash(claimed)).then_some(recorded)
                }
                (None, recorded) => recorded,
                (Some(_), None) => None,
            };
            let (provenance, quote) = bind_provenance(Provenance::Agent, &args.title, &args.body, message.as_deref());
            let note = NewNote { kind, priority, title: args.title, body: args.body, provenance, quote, anchors };
            let mut store = s.ctx.open()?;
            let links = Links { supersedes: args.supersedes, contradicts: args.contradicts, allow_secrets: false };
            let id = create_linked_note(&s.ctx, &mut store, &mut s.semantic, note, Actor::Agent, links)?;
            Ok(pretty(&json!({
                "id": id, "provenance": provenance, "supersedes": args.supersedes, "contradicts": args.contradicts
            })))
        })
    }

    #[tool(
        description = "Recall the notes relevant to a query, ranked. Returns the index tier (id, kind, title, trust frame) plus what the filters hid (stale, superseded, other kinds) and which ranking ran; use expand for full bodies."
    )]
    fn recall(&self, Parameters(args): Parameters<RecallArgs>) -> ToolResult {
        let kinds = args.kinds.iter().map(|k| parse::<Kind>(k)).collect::<Result<Vec<_>, _>>()?;
        if args.query.trim().is_empty() {
            return Err("recall needs a query; for the session-start bundle use the context tool".into());
        }
        self.with(|s| {
            let mut store = s.ctx.open()?;
            let mut request = RecallRequest::new(s.ctx.workspace.id.clone(), args.limit.unwrap_or(10).clamp(1, 100));
            if !kinds.is_empty() {
                request.kinds = kinds;
            }
            if args.include_stale {
                request.states.push(Status::StaleFlagged.name());
            }
            let rerank = rerank_setting(&s.ctx);
            let answer = run_recall(&s.ctx, &mut store, &mut s.semantic, &args.query, request, rerank)?;
            Ok(pretty(&answer_json(&s.ctx, &answer)))
        })
    }

    #[tool(description = "The full notes for these ids: body, anchors, provenance with its trust frame, state.")]
    fn expand(&self, Parameters(args): Parameters<IdsArgs>) -> ToolResult {
        self.with(|s| {
            let store = s.ctx.open()?;
            let scope = s.ctx.scope(false);
            let notes = args
                .ids
                .iter()
                .map(|id| Ok(note_with_trust(&s.ctx, &store.note(&scope, *id)?)))
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok(pretty(&json!(notes)))
        })
    }

    #[tool(description = "Revoke a note that is wrong, with the reason. The note stays in the log.")]
    fn revoke(&self, Parameters(args): Parameters<ReasonArgs>) -> ToolResult {
        self.event(args.id, EventKind::Revoked, Some(args.reason))
    }

    #[tool(description = "Flag a note stale (it may no longer hold, e.g. the code changed), with the reason.")]
    fn flag_stale(&self, Parameters(args): Parameters<ReasonArgs>) -> ToolResult {
        self.event(args.id, EventKind::StaleFlagged, Some(args.reason))
    }

    #[tool(description = "Reinstate a revoked, stale or expired note that holds again.")]
    fn reinstate(&self, Parameters(args): Parameters<IdArgs>) -> ToolResult {
        self.event(args.id, EventKind::Reinstated, None)
    }

    #[tool(
        description = "The event history of a note: created, superseded, revoked, …, with dates, actors and reasons."
    )]
    fn history(&self, Parameters(args): Parameters<IdArgs>) -> ToolResult {
        self.with(|s| {
            let store = s.ctx.open()?;
            let events = store.history(&s.ctx.scope(false), args.id)?;
            Ok(pretty(&json!(events.iter().map(event_json).collect::<Vec<_>>())))
        })
    }

    #[tool(
        description = "The session-start bundle: every active directive (unranked; bodies share the budget and a cut one says so), then the notes relevant to the task (or the most recent ones)."
    )]
    fn context(&self, Parameters(args): Parameters<ContextArgs>) -> ToolResult {
        self.with(|s| {
            let mut store = s.ctx.open()?;
            let limit = args.limit.unwrap_or(10).clamp(1, 100);
            let budget = args.budget.unwrap_or(4000).clamp(100, 100_000);
            let (directives, relevant) =
                session_context(&s.ctx, &mut store, &mut s.semantic, &args.query, limit, budget)?;
            Ok(pretty(&context_json(&s.ctx, &directives, &relevant)))
        })
    }
}

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
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(
            ServerCapabilities::builder().enable_tools().enable_resources().enable_resources_subscribe().build(),
        )
        .with_server_info(Implementation::new("mnemo", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "mnemo is this project's memory. At the start of a task call `context`; before changing code call \
                 `recall` with what you are about to do; when you learn something another session would need \
                 (a gotcha, a finding, a decision, a rule the user states), call `remember` with one note per point.",
        )
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let uri = self.mirror_uri()?;
        let mut resource = RawResource::new(uri, "MEMORY.md");
        resource.description = Some("The workspace's memory as MEMORY.md (read-only mirror)".into());
        resource.mime_type = Some("text/markdown".into());
        Ok(ListResourcesResult::with_all_items(vec![resource.no_annotation()]))
    }

    /// Subscribing to the mirror: every store write (by any process) is
    /// announced with `notifications/resources/updated`, debounced.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = self.requested_mirror(&request.uri)?;
        let store_path =
            self.state.lock().map_err(|_| ErrorData::internal_error("bad state", None))?.ctx.store_path.clone();
        let (sender, mut changes) = tokio::sync::mpsc::unbounded_channel::<()>();
        let watcher = mnemo_store::store_watch::watch_store(&store_path, move || {
            let _ = sender.send(());
        })
        .map_err(|e| ErrorData::internal_error(format!("cannot watch the store: {e}"), None))?;
        let peer = context.peer.clone();
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

    async fn unsubscribe(&self, _: UnsubscribeRequestParams, _: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        *self.watch.lock().map_err(|_| ErrorData::internal_error("bad state", None))? = None;
        Ok(())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        if request.uri == crate::commands::mcp_stdin::REFUSED_URI {
            return Err(ErrorData::invalid_request(crate::commands::mcp_stdin::refusal_message(), None));
        }
        let uri = self.requested_mirror(&request.uri)?;
        let text = self
            .with(|s| {
                let store: Store = s.ctx.open()?;
                Ok(render_workspace(&store, &s.ctx.workspace, DocumentKind::Mirror)?.text)
            })
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]))
    }
}

pub fn run(ctx: Context) -> anyhow::Result<ExitCode> {
    drop(ctx.open()?);
    let semantic = Semantic::load(&ctx);
    let server = MemoryServer {
        state: Arc::new(Mutex::new(State { ctx, semantic })),
        tool_router: MemoryServer::tool_router(),
        watch: Arc::default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async {
        let (stdin, stdout) = rmcp::transport::stdio();
        let service = server.serve((crate::commands::mcp_stdin::WholeLines::new(stdin), stdout)).await?;
        service.waiting().await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
