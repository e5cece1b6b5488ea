//! `mnemo export` (the read-only mirror: once, opt in/out, or watch) and
//! `mnemo checkout` (the editable flavour).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, anyhow};
use mnemo_store::config::WorkspaceConfig;
use mnemo_store::mirror::sync::{MirrorEvent, MirrorSync};
use mnemo_store::mirror::{self, MirrorTarget};
use serde_json::json;

use crate::cli::{Checkout, Export};
use crate::context::Context;
use crate::output::print_json;
use crate::stop_signals::StopSignals;

pub fn export(ctx: &Context, args: Export) -> anyhow::Result<ExitCode> {
    let root = ctx
        .workspace
        .root
        .as_deref()
        .ok_or_else(|| anyhow!(mirror::MirrorError::NoWorkspaceDirectory(ctx.workspace.id.clone())))?;
    let config = WorkspaceConfig::load(Some(root))?;
    let given = match &args.path {
        Some(path) => std::env::current_dir()?.join(path),
        None => root.join(&config.memory_export.path),
    };
    let target = MirrorTarget::resolve(&ctx.workspace, &given)?;
    if args.disable {
        WorkspaceConfig::set_memory_export(root, false, args.path.as_ref().map(|_| target.relative.as_str()))?;
        println!("mirror export disabled for {}; {} is left as it is", ctx.workspace.id, target.relative);
        return Ok(ExitCode::SUCCESS);
    }
    if args.enable {
        WorkspaceConfig::set_memory_export(root, true, Some(&target.relative))?;
    }
    if args.watch {
        // The workspace's own mirror, kept for every write: this process
        // stands for it (writers leave the render to it) as an open editor does.
        let own_mirror = args.path.is_none() && (args.enable || config.memory_export.enabled);
        return watch(ctx, target, config.memory_export.debounce, own_mirror);
    }
    let store = ctx.open_without_catch_up()?;
    let outcome = mirror::export(&store, &target)?;
    if ctx.json {
        print_json(&json!({
            "path": target.path, "epoch": outcome.epoch, "notes": outcome.notes,
            "bytes": outcome.bytes, "written": outcome.written, "enabled": args.enable || config.memory_export.enabled,
        }));
    } else if outcome.written {
        println!("wrote {} ({} notes, epoch {})", target.relative, outcome.notes, outcome.epoch);
    } else {
        println!("{} is up to date ({} notes, epoch {})", target.relative, outcome.notes, outcome.epoch);
    }
    if args.enable {
        eprintln!(
            "every write to this workspace now keeps {} current ({})",
            target.relative,
            mnemo_store::config::CONFIG_PATH
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Keep `target` current until stdin closes: standing for the workspace's
/// own mirror (`own_mirror`: every writer leaves its render to this
/// process, which renders promptly and stops when the config turns the
/// mirror off), or else re-rendering `target` after writes, debounced.
fn watch(
    ctx: &Context,
    target: MirrorTarget,
    debounce: std::time::Duration,
    own_mirror: bool,
) -> anyhow::Result<ExitCode> {
    // Before the worker's threads start: Ctrl-C stops it as Ctrl-D does.
    let stop = StopSignals::block();
    drop(ctx.open_without_catch_up()?);
    if own_mirror {
        eprintln!(
            "keeping {} current for every writer (they leave the render to this process) until stdin closes or Ctrl-C",
            target.path.display()
        );
    } else {
        eprintln!(
            "keeping {} current (debounce {:.1}s) until stdin closes or Ctrl-C",
            target.path.display(),
            debounce.as_secs_f64()
        );
    }
    let json = ctx.json;
    let report = move |event| match event {
        MirrorEvent::Rendered { epoch, written } if json => {
            println!("{}", json!({ "rendered": epoch, "written": written }))
        }
        MirrorEvent::Rendered { epoch, written } => {
            eprintln!("rendered epoch {epoch}{}", if written { "" } else { " (unchanged)" })
        }
        MirrorEvent::Failed(message) => {
            eprintln!("warning: {}", mnemo_store::mirror::not_updated(&message))
        }
    };
    let sync = match own_mirror {
        true => MirrorSync::stand(&ctx.store_path, ctx.workspace.clone(), report),
        false => MirrorSync::start(&ctx.store_path, target, debounce, report),
    };
    let stopped = stop.wait();
    tracing::debug!(?stopped, "export --watch stopping");
    // The worker renders what is pending as it stops.
    drop(sync);
    Ok(ExitCode::SUCCESS)
}

pub fn checkout(ctx: &Context, args: Checkout) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let document = store.checkout(&ctx.workspace)?;
    match &args.out {
        Some(out) => {
            write_checkout(out, &document.text)?;
            if ctx.json {
                print_json(&json!({ "path": out, "epoch": document.epoch, "notes": document.notes }));
            } else {
                println!(
                    "wrote a checkout of {} notes at epoch {} to {}",
                    document.notes,
                    document.epoch,
                    out.display()
                );
            }
        }
        None if ctx.json => {
            print_json(&json!({ "text": document.text, "epoch": document.epoch, "notes": document.notes }))
        }
        None => print!("{}", document.text),
    }
    Ok(ExitCode::SUCCESS)
}

fn write_checkout(out: &Path, text: &str) -> anyhow::Result<()> {
    // Whatever its name: the mirror is a view, never overwritten by a checkout.
    let current = std::fs::read_to_string(out).unwrap_or_default();
    if mnemo_core::memory_md::is_mirror_text(&current) {
        return Err(anyhow!("{} is the read-only mirror; write the checkout somewhere else", out.display()));
    }
    std::fs::write(out, text).with_context(|| {
        format!("cannot write the checkout to {}; check the directory exists and is writable", out.display())
    })
}
