//! `mnemo check`: the drift check of every anchor of the workspace's active
//! and stale notes. Prints each anchor that is not fresh (moved, drifted,
//! missing, unchecked) and the notes it flagged stale; a drift already
//! acted on is never flagged twice.

use std::process::ExitCode;

use mnemo_store::drift::{AnchorCheck, Drift};
use serde_json::json;

use crate::context::Context;
use crate::output::print_json;

fn describe(check: &AnchorCheck) -> String {
    let a = &check.anchor;
    let place = format!("#{} {}:{}-{}", check.note, a.path, a.start_line, a.end_line);
    match &check.drift {
        Drift::Fresh => format!("{place} fresh"),
        Drift::Moved { start_line, end_line } => {
            format!(
                "{place} moved to lines {start_line}-{end_line} (unchanged text; to follow it, edit the anchor line of the note to {start_line}-{end_line} in `mnemo edit`, or use \"Re-anchor\" on those lines in the editor)"
            )
        }
        Drift::Drifted { .. } => format!("{place} drifted: the lines changed since {}", check.since),
        Drift::Missing => format!("{place} missing: {} is gone (deleted or renamed)", a.path),
        Drift::Unchecked(why) => format!("{place} not checked: {why}"),
    }
}

pub fn run(ctx: &Context) -> anyhow::Result<ExitCode> {
    let mut store = ctx.open()?;
    let report = store.check_drift(&ctx.workspace, ctx.now)?;
    if !report.flagged.is_empty() {
        ctx.after_write(&store);
    }
    let count = |name: &str| report.anchors.iter().filter(|c| c.drift.name() == name).count();
    if ctx.json {
        print_json(&json!({
            "anchors": report.anchors.iter().map(|c| json!({
                "note": c.note,
                "path": c.anchor.path,
                "start_line": c.anchor.start_line,
                "end_line": c.anchor.end_line,
                "status": c.drift.name(),
                "moved_to": match c.drift { Drift::Moved { start_line, end_line } => json!([start_line, end_line]), _ => json!(null) },
                "why": match &c.drift { Drift::Unchecked(why) => json!(why), _ => json!(null) },
            })).collect::<Vec<_>>(),
            "files": report.files,
            "flagged": report.flagged,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    for check in report.anchors.iter().filter(|c| c.drift != Drift::Fresh) {
        println!("{}", describe(check));
    }
    println!(
        "{} anchors in {} files: {} fresh, {} moved, {} drifted, {} missing, {} not checked",
        report.anchors.len(),
        report.files,
        count("fresh"),
        count("moved"),
        count("drifted"),
        count("missing"),
        count("unchecked")
    );
    if !report.flagged.is_empty() {
        let ids: Vec<String> = report.flagged.iter().map(|id| format!("#{id}")).collect();
        println!("flagged stale: {}", ids.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
