//! `mnemo daemon`: keep the embedding model loaded for other mnemo processes
//! (`mnemo_embed::resident`). Started on demand by the commands that embed;
//! exits when no client has been connected for a while.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::anyhow;
use mnemo_embed::Embedder;
use mnemo_embed::resident::{Served, serve};

use crate::cli::Daemon;
use crate::context::Context;
use crate::semantic::location_of;

pub fn run(ctx: &Context, args: Daemon) -> anyhow::Result<ExitCode> {
    let idle = match args.idle_seconds {
        Some(0) => anyhow::bail!("--idle-seconds must be at least 1"),
        Some(seconds) => Duration::from_secs(seconds),
        None => crate::resident::idle().map_err(|e| anyhow!(e))?,
    };
    let location = location_of(ctx.config().map_err(|e| e.to_string()), None).map_err(|e| anyhow!(e))?;
    let load = || {
        let embedder = Embedder::load(&location)?;
        eprintln!("serving {} to mnemo commands until no client for {} s", embedder.identity(), idle.as_secs());
        Ok(embedder)
    };
    match serve(&location, idle, load).map_err(|e| anyhow!(e))? {
        Served::AlreadyRunning(socket) => {
            eprintln!("a resident model already serves this model at {}; nothing to do", socket.display())
        }
        Served::Idle(socket) => eprintln!("no client for {} s; {} closed", idle.as_secs(), socket.display()),
    }
    Ok(ExitCode::SUCCESS)
}
