//! `mnemo checkin FILE` and `mnemo edit`: a person's edit of a checkout
//! becomes events, per entry. What cannot be applied (conflicts, unknown
//! ids, malformed lines) is reported with its line and left in the file:
//! nothing typed is lost.

use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context as _, anyhow, bail};
use mnemo_core::checkin::Change;
use mnemo_store::checkout::CheckinOutcome;
use serde_json::json;

use crate::cli::Checkin;
use crate::context::Context;
use crate::output::print_json;

pub fn checkin(ctx: &Context, args: Checkin) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}; check the path", args.file.display()))?;
    let outcome = check_in_text(ctx, &text)?;
    Ok(report(ctx, &args.file, &outcome))
}

fn check_in_text(ctx: &Context, text: &str) -> anyhow::Result<CheckinOutcome> {
    let mut store = ctx.open()?;
    let outcome = store.checkin(&ctx.workspace, text, ctx.now)?;
    if !outcome.applied.is_empty() {
        ctx.after_write(&store);
    }
    Ok(outcome)
}

fn describe(change: &Change, id: i64) -> String {
    match change {
        Change::Create { .. } => format!("created #{id}"),
        Change::Supersede { id: old, .. } => format!("#{old} superseded by #{id}"),
        Change::Revoke { reason, .. } => format!("revoked #{id} ({reason})"),
        Change::FlagStale { reason, .. } => format!("flagged #{id} stale ({reason})"),
        Change::Reinstate { .. } => format!("reinstated #{id}"),
    }
}

/// Print what happened; exit 1 when anything was left unapplied.
fn report(ctx: &Context, file: &Path, outcome: &CheckinOutcome) -> ExitCode {
    let plan = &outcome.plan;
    let applied: Vec<String> = plan.changes.iter().zip(&outcome.applied).map(|(c, id)| describe(c, *id)).collect();
    let problems: Vec<(usize, String)> =
        plan.diagnostics.iter().map(|d| (d.line, d.message.clone())).chain(outcome.refused.iter().cloned()).collect();
    if ctx.json {
        print_json(&json!({
            "applied": applied,
            "conflicts": plan.conflicts.iter().map(|c| json!({"id": c.id, "line": c.line + 1})).collect::<Vec<_>>(),
            "problems": problems.iter().map(|(line, message)| json!({"line": line + 1, "message": message})).collect::<Vec<_>>(),
        }));
    } else {
        for line in &applied {
            println!("{line}");
        }
        if applied.is_empty() {
            println!("nothing to check in");
        }
        for (line, message) in &problems {
            eprintln!("{}:{}: {message}", file.display(), line + 1);
        }
    }
    if problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

pub fn edit(ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let document = store.checkout(&ctx.workspace)?;
    drop(store);
    let dir = ctx.store_path.parent().unwrap_or(Path::new(".")).join("edits");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let file = dir.join(format!("MEMORY-{}.md", document.epoch));
    std::fs::write(&file, &document.text).with_context(|| format!("cannot write {}", file.display()))?;
    let editor = std::env::var("VISUAL").or_else(|_| std::env::var("EDITOR")).unwrap_or_else(|_| "vi".into());
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("mnemo-edit")
        .arg(&file)
        .status()
        .map_err(|e| anyhow!("cannot start the editor '{editor}': {e}; set VISUAL or EDITOR"))?;
    if !status.success() {
        bail!("the editor '{editor}' failed; nothing was checked in and your edit is kept in {}", file.display());
    }
    let text = std::fs::read_to_string(&file)?;
    let outcome = check_in_text(ctx, &text).with_context(|| format!("your edit is kept in {}", file.display()))?;
    let code = report(ctx, &file, &outcome);
    if code == ExitCode::SUCCESS {
        let _ = std::fs::remove_file(&file);
    } else {
        eprintln!(
            "what was not applied is still in {}; fix it there and run `mnemo checkin {}`",
            file.display(),
            file.display()
        );
    }
    Ok(code)
}
