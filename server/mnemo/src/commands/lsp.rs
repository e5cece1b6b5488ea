//! `mnemo lsp`: load the model once (workspace symbols run hybrid recall
//! with it), then serve the Language Server Protocol over stdio.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use mnemo_core::recall::RankingMode;
use mnemo_lsp::{EmbedQuery, ServerConfig};
use mnemo_store::Scope;

use crate::context::Context;
use crate::semantic::Semantic;

pub fn run(ctx: &Context) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    let mut semantic = Semantic::load(ctx);
    if let Err(e) = semantic.catch_up(&mut store, &Scope::All) {
        eprintln!("warning: could not embed notes written without a model: {e}");
    }
    let (mode, reason) = semantic.ranking(&store);
    drop(store);
    let embed: Option<EmbedQuery> = (mode == RankingMode::Hybrid).then(|| {
        let semantic = Arc::new(Mutex::new(semantic));
        Arc::new(move |query: &str| -> Option<Vec<f32>> {
            let mut semantic = semantic.lock().ok()?;
            semantic.embedder()?.embed(&[query]).ok()?.pop()
        }) as EmbedQuery
    });
    let config = ServerConfig {
        store_path: ctx.store_path.clone(),
        workspace: ctx.workspace.clone(),
        embed,
        lexical_reason: reason,
    };
    mnemo_lsp::run_stdio(config)?;
    Ok(ExitCode::SUCCESS)
}
