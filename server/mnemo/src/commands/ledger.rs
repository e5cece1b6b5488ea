//! `mnemo ledger`: what was delivered to agents in this workspace, newest
//! first — each delivery's moment, session, the notes in full and listed,
//! and its size (`mnemo_store::ledger`); `--note ID` keeps the deliveries
//! that held one note.

use std::process::ExitCode;

use mnemo_core::Timestamp;
use mnemo_store::ledger::LedgerFilter;
use serde_json::json;

use crate::cli::{Ledger, Since};
use crate::context::Context;
use crate::output::print_json;

pub fn run(ctx: &Context, args: Ledger) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let since = args.since.map(|since| match since {
        Since::At(at) => at,
        Since::Ago(seconds) => Timestamp(ctx.now.0 - seconds),
    });
    if let Some(id) = args.note {
        // Another workspace's id, or none: said as such, not as an empty ledger.
        store.note(&ctx.scope(false), id)?;
    }
    let filter = LedgerFilter { session: args.session, since, note: args.note, limit: args.limit };
    let deliveries = store.ledger(&ctx.scope(false), &filter)?;
    if ctx.json {
        let deliveries: Vec<_> = deliveries
            .iter()
            .map(|d| {
                json!({ "at": d.at.rfc3339(), "moment": d.moment, "session": d.session,
                        "full": d.full, "listed": d.listed, "bytes": d.bytes })
            })
            .collect();
        print_json(&json!({ "deliveries": deliveries }));
        return Ok(ExitCode::SUCCESS);
    }
    if deliveries.is_empty() {
        eprintln!("nothing was delivered to agents in workspace {} (with these filters)", ctx.workspace.id);
        return Ok(ExitCode::SUCCESS);
    }
    for d in &deliveries {
        let ids = |ids: &[i64]| ids.iter().map(|id| format!("#{id}")).collect::<Vec<_>>().join(" ");
        let mut what = Vec::new();
        if !d.full.is_empty() {
            what.push(format!("in full {}", ids(&d.full)));
        }
        if !d.listed.is_empty() {
            what.push(format!("listed {}", ids(&d.listed)));
        }
        println!(
            "{}  {} · session {} · {} · {} bytes ({})",
            d.at.rfc3339(),
            d.moment,
            d.session,
            what.join(", "),
            d.bytes,
            d.at.age(ctx.now)
        );
    }
    Ok(ExitCode::SUCCESS)
}
