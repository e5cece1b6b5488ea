//! `mnemo daemon`: keep the embedding model loaded for other mnemo processes
//! (`mnemo_embed::resident`). Started on demand by the commands that embed;
//! exits when no client has asked for a while.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::anyhow;
use mnemo_embed::Embedder;

use crate::cli::Daemon;
use crate::context::Context;
use crate::semantic::location_of;

pub fn run(ctx: &Context, args: Daemon) -> anyhow::Result<ExitCode> {
    let location = location_of(ctx.config().map_err(|e| e.to_string()), None).map_err(|e| anyhow!(e))?;
    let embedder = Embedder::load(&location)?;
    let idle = args.idle_seconds.map_or_else(crate::resident::idle, Duration::from_secs);
    mnemo_embed::resident::serve(embedder, &location, idle).map_err(|e| anyhow!(e))?;
    Ok(ExitCode::SUCCESS)
}
