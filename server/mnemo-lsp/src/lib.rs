//! The mnemo language server (`mnemo lsp`): the memory as a document in the
//! editor. This crate is the only one that knows LSP types and JSON-RPC; it
//! converts, calls the core and the store, and converts back.
//!
//! **Invariant:** document changes are applied in arrival order by one task
//! (`document_owner::spawn_owner`, which feeds `documents::OpenDocuments::apply`);
//! handlers only send to it or read snapshots.

mod actions;
mod anchors;
mod checkin;
mod commands;
mod completion;
mod debounced;
mod diagnostics;
mod direct_out;
mod document_owner;
mod documents;
mod drift_watch;
mod ext;
mod frames;
mod hover;
pub mod log;
mod memory;
mod mirror_entries;
mod outline;
mod panic_guard;
mod refresh;
mod server;
mod settings;
mod startup;
mod symbols;
mod to_proto;
mod uris;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mnemo_store::workspace::Workspace;

pub use settings::{SETTING_NAMES, Settings};

/// Turns a query into its embedding (`None`: no model; recall is lexical).
pub type EmbedQuery = Arc<dyn Fn(&str) -> Option<Vec<f32>> + Send + Sync>;

/// The semantic stage of recall: the query embedder, or why there is none.
#[derive(Clone, Default)]
pub struct Ranking {
    pub embed: Option<EmbedQuery>,
    /// Why there is no model, when there is none (shown with every answer).
    pub lexical_reason: Option<String>,
}

/// Loads the ranking for a store file and, when the client set one, a model
/// directory. Blocking: it loads the model and embeds notes written without one.
pub type RankingLoader = Arc<dyn Fn(&Path, Option<&Path>) -> Ranking + Send + Sync>;

/// The server's clock (the binary pins it with `MNEMO_NOW` for tests).
pub type Clock = Arc<dyn Fn() -> mnemo_core::Timestamp + Send + Sync>;

/// What the binary hands the server.
#[derive(Clone)]
pub struct ServerConfig {
    /// The store file, unless the client's settings name another.
    pub store_path: PathBuf,
    /// Used when the client names no workspace folder.
    pub workspace: Workspace,
    pub load_ranking: RankingLoader,
    pub clock: Clock,
}

pub use server::serve;

/// Serve LSP over stdin/stdout until the client says exit or closes stdin.
pub fn run_stdio(config: ServerConfig) -> std::io::Result<()> {
    memory::share_arenas();
    // Checkouts are rendered again at every epoch: only what changed is read.
    mnemo_store::render_cache::keep_renders();
    // Workspace symbols run a recall per keystroke: vectors are searched in memory.
    mnemo_store::vector_cache::keep_vectors();
    // Every request opens the store: on a connection kept from an earlier one.
    mnemo_store::kept_connections::keep_connections();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(server::serve(tokio::io::stdin(), tokio::io::stdout(), config));
    Ok(())
}
