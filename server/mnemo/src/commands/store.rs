//! `mnemo store verify`, `mnemo store stats` and `mnemo store copy`.

use std::process::ExitCode;

use serde_json::json;

use crate::cli::StoreCommand;
use crate::context::Context;
use crate::output::print_json;

pub fn run(ctx: &Context, command: StoreCommand) -> anyhow::Result<ExitCode> {
    if let StoreCommand::Copy { from, to } = &command {
        return copy(ctx, from.as_deref(), to);
    }
    let shared = ctx.store_path.to_str().filter(|s| mnemo_store::postgres::is_postgres(s)).map(str::to_string);
    if let (Some(url), StoreCommand::Verify) = (&shared, &command) {
        let report = mnemo_store::postgres::verify(&mut mnemo_store::postgres::connect_as_is(url)?)?;
        return print_verify(ctx, &report);
    }
    let store = ctx.open()?;
    match command {
        StoreCommand::Copy { .. } => unreachable!("answered above"),
        StoreCommand::Verify => print_verify(ctx, &store.verify()?),

        StoreCommand::Stats { all_workspaces } => {
            let stats = store.stats(&ctx.scope(all_workspaces))?;
            // The ranking recall would run in, so an editor's status needs one call.
            let (mode, reason) = crate::semantic::Semantic::load(ctx).ranking(&store);
            if ctx.json {
                print_json(&json!({
                    "store": store.location(), "stats": stats, "ranking": mode.name(), "ranking_reason": reason
                }));
                return Ok(ExitCode::SUCCESS);
            }
            println!("store       {}", store.location());
            let scope = if all_workspaces { format!("all ({})", stats.workspaces) } else { ctx.workspace.id.clone() };
            println!("workspace   {scope}");
            println!("schema      {}", stats.schema_version);
            println!("epoch       {}", stats.epoch);
            println!("notes       {}", stats.notes);
            println!("events      {}", stats.events);
            match &stats.embedding_model {
                Some(model) => println!("embedded    {} notes ({model})", stats.embedded_notes),
                None => println!("embedded    0 notes (no vectors stored)"),
            }
            for (kind, n) in &stats.by_kind {
                println!("  kind {kind:<12} {n}");
            }
            for (status, n) in &stats.by_status {
                println!("  state {status:<11} {n}");
            }
            match reason {
                Some(reason) => println!("ranking     {} ({reason})", mode.name()),
                None => println!("ranking     {}", mode.name()),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `mnemo store copy`: a SQLite store into PostgreSQL, or back (`mnemo_store::postgres`).
fn copy(ctx: &Context, from: Option<&std::path::Path>, to: &str) -> anyhow::Result<ExitCode> {
    use mnemo_store::postgres::{self, is_postgres, redact};
    let from = from.unwrap_or(&ctx.store_path).to_str().unwrap_or_default().to_string();
    let report = match (is_postgres(&from), is_postgres(to)) {
        (false, true) => {
            if !std::path::Path::new(&from).is_file() {
                anyhow::bail!("no store at {from}: pass --from with a store file");
            }
            let store = mnemo_store::Store::open(std::path::Path::new(&from))?;
            postgres::copy_into(&store, &mut postgres::connect(to)?)?
        }
        (true, false) => {
            let mut client = postgres::connect_as_is(&from)?;
            let mut store = mnemo_store::Store::open(std::path::Path::new(to))?;
            postgres::copy_out(&mut client, &mut store)?
        }
        _ => anyhow::bail!(
            "one side of a copy is a postgres:// URL and the other a store file (got --from {} --to {})",
            redact(&from),
            redact(to)
        ),
    };
    if ctx.json {
        print_json(&json!(report));
    } else {
        println!(
            "copied {} notes, {} events and {} vectors into {} ({} events there now, chain head {})",
            report.notes_added,
            report.events_added,
            report.vectors_added,
            redact(to),
            report.events_total,
            report.chain_head
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn print_verify(ctx: &Context, report: &mnemo_store::VerifyReport) -> anyhow::Result<ExitCode> {
    if ctx.json {
        print_json(&json!(report));
    } else if report.is_clean() {
        println!(
            "clean: {} notes, {} events replayed; the state cache matches the log; the file, the hash chain, the append-only triggers and the event times hold",
            report.notes_checked, report.events_replayed
        );
        println!("chain head: {} (record it elsewhere to detect a rewrite of the whole log)", report.head);
    } else {
        for (id, difference) in &report.differences {
            println!("#{id}: {difference}");
        }
        for (place, problem) in &report.problems {
            println!("{place}: {problem}");
        }
        if !report.differences.is_empty() {
            eprintln!("{} of {} notes differ from their replayed log", report.differences.len(), report.notes_checked);
        }
        if !report.problems.is_empty() {
            eprintln!(
                "{} signs of damage or tampering; restore the store from a backup, or `mnemo store verify --json` for scripts",
                report.problems.len()
            );
        }
    }
    Ok(if report.is_clean() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
