//! `mnemo checkin FILE` and `mnemo edit`: a person's edit of a checkout
//! becomes events, per entry. The file is then rewritten at the new epoch;
//! what could not be applied (conflicts, unknown ids, malformed lines) is
//! carried into it as typed and reported with its line: nothing typed is
//! lost. Exit 3 while anything is left to resolve.

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context as _, anyhow, bail};
use mnemo_core::checkin::Resolutions;
use mnemo_store::checkout::CheckinOutcome;
use mnemo_store::mirror::write_atomically;
use serde_json::json;

use crate::cli::Checkin;
use crate::context::Context;
use crate::output::print_json;

/// The exit code when conflicts or errors remain in the file.
const LEFT_TO_RESOLVE: u8 = 3;

pub fn checkin(ctx: &Context, args: Checkin) -> anyhow::Result<ExitCode> {
    let text = mnemo_store::repo_file::read_text(&args.file)
        .with_context(|| format!("cannot read {}; check the path", args.file.display()))?;
    let resolutions = Resolutions {
        keep_mine: args.keep_mine.iter().copied().collect(),
        take_theirs: args.take_theirs.iter().copied().collect(),
    };
    if let Some(id) = resolutions.keep_mine.intersection(&resolutions.take_theirs).next() {
        bail!("#{id} is both --keep-mine and --take-theirs; choose one");
    }
    let outcome = check_in_file(ctx, &args.file, &text, &resolutions)?;
    Ok(report(ctx, &args.file, &outcome))
}

/// Check `text` in, then write the re-rendered text back to `file`.
fn check_in_file(ctx: &Context, file: &Path, text: &str, resolutions: &Resolutions) -> anyhow::Result<CheckinOutcome> {
    let mut store = ctx.open()?;
    let outcome = store.checkin(&ctx.workspace, text, resolutions, ctx.now)?;
    if !outcome.applied.is_empty() {
        ctx.after_write(&store);
    }
    if let Some(document) = &outcome.document
        && document.text != text
    {
        // The person's file keeps its mode (a 0600 file stays private).
        let mode = std::fs::metadata(file).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        write_atomically(file, document.text.as_bytes(), mode).with_context(|| {
            format!("the check-in is saved, but {} could not be rewritten; take a fresh checkout", file.display())
        })?;
    }
    Ok(outcome)
}

/// Print what happened and what is left, with lines in the file as it is now.
fn report(ctx: &Context, file: &Path, outcome: &CheckinOutcome) -> ExitCode {
    let plan = &outcome.plan;
    let applied: Vec<String> = plan.changes.iter().zip(&outcome.applied).map(|(c, id)| c.describe(*id)).collect();
    // (line, message) of each problem; (note id, line) of each conflict.
    let (left, left_conflicts) = outcome.left();
    let problems: Vec<(usize, String)> = left.iter().map(|d| (d.line, d.message.clone())).collect();
    let conflicts: Vec<(i64, usize)> = left_conflicts.iter().map(|c| (c.id, c.line)).collect();
    if ctx.json {
        print_json(&json!({
            "applied": applied,
            "epoch": outcome.document.as_ref().map(|d| d.epoch),
            "conflicts": conflicts.iter().map(|(id, line)| json!({"id": id, "line": line + 1})).collect::<Vec<_>>(),
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
        if !conflicts.is_empty() {
            let ids: Vec<String> = conflicts.iter().map(|(id, _)| id.to_string()).collect();
            eprintln!(
                "resolve with `mnemo checkin {} --keep-mine ID` or `--take-theirs ID` (conflicting: {})",
                file.display(),
                ids.join(", ")
            );
        }
    }
    if outcome.has_problems() { ExitCode::from(LEFT_TO_RESOLVE) } else { ExitCode::SUCCESS }
}

pub fn edit(ctx: &Context) -> anyhow::Result<ExitCode> {
    let store = ctx.open()?;
    let document = store.checkout(&ctx.workspace)?;
    drop(store);
    let dir = mnemo_store::paths::store_files_dir(&ctx.store_path)
        .ok_or_else(|| anyhow::anyhow!("no place for kept edits: set XDG_DATA_HOME or HOME"))?
        .join("edits");
    mnemo_store::paths::ensure_private_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let kept = kept_edits(&dir, &ctx.workspace.id);
    if !kept.is_empty() {
        let files: Vec<String> = kept.iter().map(|f| f.display().to_string()).collect();
        eprintln!(
            "earlier edits of this workspace are kept, not yet applied: {}; check one in with `mnemo checkin FILE`",
            files.join(", ")
        );
    }
    let file = new_edit_file(&dir, document.epoch, &document.text)?;
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
    let outcome = check_in_file(ctx, &file, &text, &Resolutions::default())
        .with_context(|| format!("your edit is kept in {}", file.display()))?;
    let code = report(ctx, &file, &outcome);
    // Removed only once everything in it is in the store: a pure rendering is left.
    let pure = outcome.document.as_ref().is_some_and(|d| d.unapplied == 0) && !outcome.has_problems();
    if code == ExitCode::SUCCESS && pure {
        let _ = std::fs::remove_file(&file);
    } else {
        eprintln!(
            "what was not applied is still in {}, as you typed it; fix it there and run `mnemo checkin {}`",
            file.display(),
            file.display()
        );
    }
    Ok(code)
}

/// A new file for an edit, never an existing one: two `mnemo edit`s at the
/// same epoch (of any workspaces) each get their own, and a kept edit is
/// never overwritten.
fn new_edit_file(dir: &Path, epoch: i64, text: &str) -> anyhow::Result<PathBuf> {
    use std::io::Write;
    let pid = std::process::id();
    for attempt in 0..1000 {
        let file = dir.join(format!("MEMORY-{epoch}-{pid}-{attempt}.md"));
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&file) {
            Ok(mut out) => {
                out.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", file.display()))?;
                return Ok(file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(anyhow!("cannot create {}: {e}", file.display())),
        }
    }
    bail!("cannot find a free file name for the edit in {}; clear out old edits there", dir.display())
}

/// Edits of `workspace` kept in `dir` because something in them was not applied.
fn kept_edits(dir: &Path, workspace: &str) -> Vec<PathBuf> {
    // Line 1 says whose checkout a file is; the parser reads it (header escapes included).
    let of_workspace = |path: &Path| {
        use std::io::Read;
        let mut head = Vec::new();
        let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
        let first = String::from_utf8_lossy(&head);
        let first = first.lines().next().unwrap_or_default();
        read.is_ok() && mnemo_core::memory_md::parse_checkout(first).workspace.as_deref() == Some(workspace)
    };
    let mut kept: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter(|p| of_workspace(p))
        .collect();
    kept.sort();
    kept
}
