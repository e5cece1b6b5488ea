//! `mnemo import jsonl FILE`: bulk import in one transaction.

use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use crate::cli::ImportCommand;
use crate::context::Context;
use crate::output::print_json;

pub fn run(ctx: &Context, command: ImportCommand) -> anyhow::Result<ExitCode> {
    let ImportCommand::Jsonl { file, person } = command;
    let reader =
        std::fs::File::open(&file).with_context(|| format!("cannot open {}; check the path", file.display()))?;
    let mut store = ctx.open()?;
    // Opening for writing expires this workspace's due notes first.
    ctx.write(&mut store, |_| Ok(()))?;
    let report = mnemo_store::import_jsonl::import(
        &mut store,
        std::io::BufReader::new(reader),
        Context::actor(person.as_human),
        ctx.now,
    )?;
    if ctx.json {
        print_json(&json!(report));
    } else {
        println!("imported {} notes ({} events) from {}", report.notes, report.events, file.display());
    }
    Ok(ExitCode::SUCCESS)
}
