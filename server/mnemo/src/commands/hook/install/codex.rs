//! Codex: hooks in Claude Code's format in the project's `.codex/hooks.json`.
//! (Filled in from what Codex 0.171.0 reads.)

use std::path::Path;

use super::Invocation;

pub fn install(_root: &Path, _mnemo: &Invocation) -> anyhow::Result<()> {
    anyhow::bail!("not yet")
}
