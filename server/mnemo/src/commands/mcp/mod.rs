//! `mnemo mcp`: the Model Context Protocol over stdio (rmcp), so agents
//! write to and read from the same store as people. This module is the
//! server: its state, `ServerHandler` (what it offers, dispatch) and `run`.
//!
//! - `tools.rs`: the eight tools and their annotations; `args.rs`: their
//!   arguments and the checks of limits and budgets;
//! - `render.rs`: what the read tools answer within `max_tokens` — compact
//!   text and, for recall and context, `structuredContent` typed by
//!   `output.rs` (whose types are also the tools' `outputSchema`);
//! - `prompt.rs`: the `session-start` prompt, the bundle for clients
//!   without hooks;
//! - `resource.rs`: the mirror as `memory://<workspace>/MEMORY.md`, with
//!   `notifications/resources/updated` when any process writes;
//! - `stdin.rs`: standard input handed to rmcp in whole lines.
//!
//! The server opens the store per call, as a CLI command would; rmcp lives
//! only here.

mod args;
mod output;
mod prompt;
mod render;
mod resource;
mod stdin;
mod tools;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult, ServerCapabilities, ServerInfo,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool_handler};

use mnemo_store::mirror::sync::{MirrorEvent, MirrorSync};

use crate::context::Context;
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

impl MemoryServer {
    /// Run `f` on the state with the clock and the workspace's config read
    /// now (a long-lived server reads them per call); an error as the one
    /// line a tool error carries.
    fn with<T>(&self, f: impl FnOnce(&mut State) -> anyhow::Result<T>) -> Result<T, String> {
        let mut state = self.state.lock().map_err(|_| "the mnemo server is in a bad state; restart it".to_string())?;
        if let Ok(now) = state.ctx.clock.now() {
            state.ctx.now = now;
        }
        // The workspace's config may have changed since the last call (the mirror turned on or off).
        state.ctx.read_config_again();
        f(&mut state).map_err(|e| format!("{e:#}"))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("mnemo", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "mnemo is this project's memory. At the start of a task call `context` (or get the prompt \
             `session-start`); before changing code call `recall` with what you are about to do, and `expand` \
             the notes whose bodies you need; when you learn something another session would need (a gotcha, a \
             finding, a decision, a rule the user states), call `remember` with one note per point.",
        )
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(prompt::list())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResult, ErrorData> {
        self.get_session_start(request)
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.list_mirror()
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_mirror(&request.uri, context.peer.clone())
    }

    async fn unsubscribe(&self, _: UnsubscribeRequestParams, _: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.unsubscribe_mirror()
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        self.read_mirror(&request.uri)
    }
}

pub fn run(ctx: Context) -> anyhow::Result<ExitCode> {
    // Every tool call opens the store: on a connection kept from the last one.
    mnemo_store::kept_connections::keep_connections();
    let store = ctx.open()?;
    // The mirror is rendered after each write when enabled: only what changed is read.
    mnemo_store::render_cache::keep_renders();
    // Agents recall again and again: vectors are searched in memory, read
    // beside the server as it starts, so the first recall does not wait.
    mnemo_store::vector_cache::keep_vectors();
    // An agent's server lives for its session: it renders the workspace's
    // mirror (when its config keeps one) for every writer, so their writes
    // return without a render.
    let _standing = stand_for_mirror(&ctx);
    let semantic = Semantic::load(&ctx);
    if semantic.ranking(&store).0 == mnemo_core::recall::RankingMode::Hybrid {
        std::thread::spawn(move || {
            if let Err(e) = store.warm_vectors() {
                eprintln!("warning: could not read the vectors ahead of the first recall: {e}");
            }
        });
    } else {
        drop(store);
    }
    let server = MemoryServer {
        state: Arc::new(Mutex::new(State { ctx, semantic })),
        tool_router: MemoryServer::tool_router(),
        watch: Arc::default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async {
        let (stdin, stdout) = rmcp::transport::stdio();
        let service = server.serve((stdin::WholeLines::new(stdin), stdout)).await?;
        service.waiting().await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Stand for the workspace's mirror while the server runs (`mirror::standing`);
/// a render that fails is said on standard error, as the writers' own would be.
fn stand_for_mirror(ctx: &Context) -> MirrorSync {
    MirrorSync::stand(&ctx.store_path, ctx.workspace.clone(), |event| match event {
        MirrorEvent::Rendered { epoch, written } => tracing::debug!(epoch, written, "mirror rendered for the writers"),
        MirrorEvent::Failed(problem) => eprintln!("mnemo mcp: warning: {}", mnemo_store::mirror::not_updated(&problem)),
    })
}
