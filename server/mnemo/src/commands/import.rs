//! `mnemo import jsonl FILE`: bulk import in one transaction.

use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::json;

use crate::cli::ImportCommand;
use crate::context::Context;
use crate::output::print_json;
use crate::semantic::Semantic;
use mnemo_core::recall::RankingMode;
use mnemo_store::import_jsonl;

pub fn run(ctx: &Context, command: ImportCommand) -> anyhow::Result<ExitCode> {
    let ImportCommand::Jsonl { file, person } = command;
    let reader =
        std::fs::File::open(&file).with_context(|| format!("cannot open {}; check the path", file.display()))?;
    let mut store = ctx.open()?;
    // Opening for writing expires this workspace's due notes first.
    ctx.write(&mut store, |_| Ok(()))?;
    let prepared = import_jsonl::prepare(std::io::BufReader::new(reader), Context::actor(person.as_human))?;
    // Embed before the write, in batches, so the transaction stays short.
    let mut semantic = Semantic::load(ctx);
    let embedded = match semantic.ranking(&store) {
        (RankingMode::Hybrid, _) => semantic.embed_notes(&prepared.texts()).unwrap_or_else(|e| {
            eprintln!("warning: the notes are imported without vectors ({e}); `mnemo reindex` embeds them later");
            None
        }),
        _ => None,
    };
    let vectors = embedded.as_ref().map(|(v, model)| (v.as_slice(), model.as_str()));
    let report = import_jsonl::write(&mut store, prepared, ctx.now, vectors)?;
    ctx.after_write(&store);
    if ctx.json {
        print_json(
            &json!({ "notes": report.notes, "events": report.events, "embedded": embedded.is_some(), "ids": report.ids }),
        );
    } else {
        let how = if embedded.is_some() { "embedded" } else { "not embedded: no model" };
        println!("imported {} notes ({} events, {how}) from {}", report.notes, report.events, file.display());
    }
    Ok(ExitCode::SUCCESS)
}
