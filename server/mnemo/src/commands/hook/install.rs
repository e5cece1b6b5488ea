//! `mnemo hook install --claude-code | --codex`: write mnemo's hooks and MCP
//! server into a harness's project settings, keeping every setting already
//! there. Running it again changes nothing; running it with other options
//! updates mnemo's own entries in place (never a second copy of a hook, which
//! would deliver everything twice). A file that is not what it should be
//! (broken JSON, a list where an object belongs) is named and left as it is.
//!
//! What each harness needs is in [`claude_code`] and [`codex`]; how the
//! hooks call mnemo (bare `mnemo` on the harness's PATH, or this binary by
//! its absolute path with the store named) is [`Invocation`].

mod claude_code;
mod codex;
mod json_settings;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mnemo_core::triggers::Moment;

use crate::cli::HookInstall;
use crate::context::Context;

pub fn run(ctx: &Context, args: &HookInstall) -> anyhow::Result<ExitCode> {
    let root = ctx.workspace.root.clone().ok_or_else(|| {
        anyhow::anyhow!("the workspace {} is only a name; run this in the project directory", ctx.workspace.id)
    })?;
    let mnemo = Invocation::new(ctx, args.absolute)?;
    if args.claude_code {
        claude_code::install(&root, &mnemo, args.approve_mcp)?;
    }
    if args.codex {
        codex::install(&root, &mnemo)?;
    }
    println!(
        "This memory belongs to the workspace {}: another clone or worktree of the repository has its own. \
         To share this one, run that clone's agents with MNEMO_WORKSPACE={} (anchors are then read from this directory).",
        ctx.workspace.id,
        root.display()
    );
    if !args.absolute {
        println!(
            "The hooks call `mnemo` from the harness's PATH with its environment (MNEMO_STORE); \
             --absolute writes this binary's path and the store instead."
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// How the installed hooks and MCP server start mnemo.
pub struct Invocation {
    program: String,
    /// Options before the subcommand (`--store PATH` for a store that is not the default).
    options: Vec<String>,
}

impl Invocation {
    fn new(ctx: &Context, absolute: bool) -> anyhow::Result<Invocation> {
        if !absolute {
            return Ok(Invocation { program: "mnemo".into(), options: Vec::new() });
        }
        let exe = std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .map_err(|e| anyhow::anyhow!("cannot tell where this mnemo binary is ({e}); install without --absolute"))?;
        let mut options = Vec::new();
        let default = mnemo_store::paths::default_store_path_from_env();
        if default.as_deref() != Some(ctx.store_path.as_path()) {
            options = vec!["--store".into(), absolute_path(&ctx.store_path)?.display().to_string()];
        }
        Ok(Invocation { program: exe.display().to_string(), options })
    }

    /// The argument list of `mnemo <subcommand…>`, after the program.
    pub fn args(&self, subcommand: &[&str]) -> Vec<String> {
        self.options.iter().cloned().chain(subcommand.iter().map(|s| s.to_string())).collect()
    }

    pub fn program(&self) -> &str {
        &self.program
    }

    /// The hook of `moment` as one shell command line.
    pub fn hook_command(&self, moment: Moment) -> String {
        let moment = moment.to_string();
        std::iter::once(self.program.clone())
            .chain(self.args(&["hook", &moment]))
            .map(|word| shell_quote(&word))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Whether a hook command line is mnemo's hook of `moment`, however it calls mnemo.
pub fn is_mnemo_hook(command: &str, moment: Moment) -> bool {
    let command = command.trim();
    let program = match command.strip_prefix('\'') {
        Some(quoted) => quoted.split('\'').next().unwrap_or_default(),
        None => command.split_whitespace().next().unwrap_or_default(),
    };
    let calls_mnemo = Path::new(program).file_name().is_some_and(|name| name == "mnemo");
    let words: Vec<&str> = command.split_whitespace().collect();
    calls_mnemo && words.ends_with(&["hook", &moment.to_string()])
}

/// A store file's absolute path (a hook runs in another directory); a
/// `postgres://` store's URL as it is.
fn absolute_path(path: &Path) -> anyhow::Result<PathBuf> {
    if path.is_absolute() || path.to_str().is_some_and(mnemo_store::postgres::is_postgres) {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()?.join(path))
}

/// `word` as one shell word: as is when it holds nothing a shell treats
/// specially, else in single quotes.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%".contains(c));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_commands_are_shell_words_and_recognised_however_mnemo_is_called() {
        let bare = Invocation { program: "mnemo".into(), options: vec![] };
        assert_eq!(bare.hook_command(Moment::PreEdit), "mnemo hook pre-edit");
        let absolute = Invocation {
            program: "/opt/my tools/mnemo".into(),
            options: vec!["--store".into(), "/data/it's.db".into()],
        };
        let command = absolute.hook_command(Moment::SessionStart);
        assert_eq!(command, r"'/opt/my tools/mnemo' --store '/data/it'\''s.db' hook session-start");
        assert!(is_mnemo_hook(&bare.hook_command(Moment::PreEdit), Moment::PreEdit));
        assert!(is_mnemo_hook(&command, Moment::SessionStart));
        assert!(is_mnemo_hook("/usr/local/bin/mnemo --store /d/m.db hook pre-edit", Moment::PreEdit));
        assert!(!is_mnemo_hook("mnemo hook pre-edit", Moment::UserPrompt));
        assert!(!is_mnemo_hook("./guard.sh hook pre-edit", Moment::PreEdit));
    }
}
