//! `mnemo lsp`: serve the Language Server Protocol over stdio. The server
//! loads the model itself once the client is initialized (its settings may
//! name another store or model directory), through the loader given here.

use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use mnemo_core::recall::RankingMode;
use mnemo_lsp::{EmbedQuery, Ranking, RankingLoader, ServerConfig};
use mnemo_store::config::WorkspaceConfig;
use mnemo_store::{Scope, Store};

use crate::context::Context;
use crate::semantic::Semantic;

pub fn run(ctx: &Context) -> anyhow::Result<ExitCode> {
    // Fail early, with the store's own error, when the store cannot be opened.
    drop(ctx.open()?);
    let config = ctx.config().cloned().map_err(|e| e.to_string());
    let load_ranking: RankingLoader = Arc::new(move |store_path: &Path, model_dir: Option<&Path>| {
        load(config.as_ref().map_err(Clone::clone), store_path, model_dir)
    });
    // The language server reads the clock per request: the process's clock, pinned or the system's.
    let clock = ctx.clock;
    let fallback = ctx.now;
    let clock: mnemo_lsp::Clock = Arc::new(move || clock.now().unwrap_or(fallback));
    let config =
        ServerConfig { store_path: ctx.store_path.clone(), workspace: ctx.workspace.clone(), load_ranking, clock };
    mnemo_lsp::run_stdio(config)?;
    Ok(ExitCode::SUCCESS)
}

/// Load the model, embed the notes written without one, and say which ranking runs.
fn load(config: Result<&WorkspaceConfig, String>, store_path: &Path, model_dir: Option<&Path>) -> Ranking {
    let mut store = match Store::open(store_path) {
        Ok(store) => store,
        Err(e) => return Ranking { embed: None, lexical_reason: Some(e.to_string()) },
    };
    let mut semantic = Semantic::load_from(config, model_dir);
    if let Err(e) = semantic.catch_up(&mut store, &Scope::All) {
        eprintln!("warning: could not embed notes written without a model: {e}");
    }
    let (mode, lexical_reason) = semantic.ranking(&store);
    if mode == RankingMode::Hybrid
        && let Err(e) = store.warm_vectors()
    {
        eprintln!("warning: could not read the vectors ahead of the first search: {e}");
    }
    let embed: Option<EmbedQuery> = (mode == RankingMode::Hybrid).then(|| {
        let semantic = Arc::new(Mutex::new(semantic));
        Arc::new(move |query: &str| -> Option<Vec<f32>> {
            let mut semantic = semantic.lock().ok()?;
            semantic.embedder()?.embed_queries(&[query]).ok()?.pop()
        }) as EmbedQuery
    });
    Ranking { embed, lexical_reason }
}
