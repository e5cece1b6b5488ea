//! Codex: the hooks go into the project's `.codex/hooks.json` (Claude Code's
//! hooks format), the MCP server into the project's `.codex/config.toml`
//! (`[mcp_servers.mnemo]`, what `codex mcp add` writes into the user's,
//! with its tools approved).
//! Codex reads a project's `.codex/` only once the project is trusted, and
//! runs a hook only once the user trusted it (`/hooks` in Codex, which
//! records its hash in the user's config); an untrusted hook is skipped
//! without a word, so the installer says both steps.

use std::path::Path;

use mnemo_core::triggers::Moment;

use super::Invocation;
use super::json_settings::{HookSpec, merge_hooks, read_object, write_object, write_text};

/// The hooks: session start, compaction (a session start whose source is
/// "compact"), the user's prompt, and the tools that edit files
/// (apply_patch, whose patch names the files).
const HOOKS: [HookSpec; 4] = [
    HookSpec { event: "SessionStart", matcher: Some("startup|resume|clear"), moment: Moment::SessionStart },
    HookSpec { event: "SessionStart", matcher: Some("compact"), moment: Moment::PostCompaction },
    HookSpec { event: "UserPromptSubmit", matcher: None, moment: Moment::UserPrompt },
    HookSpec { event: "PreToolUse", matcher: Some("apply_patch|Edit|Write"), moment: Moment::PreEdit },
];

pub fn install(root: &Path, mnemo: &Invocation) -> anyhow::Result<()> {
    let hooks_path = root.join(".codex/hooks.json");
    let config_path = root.join(".codex/config.toml");
    let mut hooks = read_object(&hooks_path)?;
    let mut config = read_toml(&config_path)?;
    let (added, updated) = merge_hooks(&mut hooks, &HOOKS, mnemo, &hooks_path)?;
    let server = merge_mcp_server(&mut config, mnemo, &config_path)?;
    write_object(&hooks_path, hooks)?;
    if server != "already" {
        write_text(&config_path, &config.to_string())?;
    }
    println!(
        "Codex: {added} hooks added, {updated} updated in {}; MCP server {server} in {}",
        hooks_path.display(),
        config_path.display()
    );
    println!(
        "Codex reads a project's .codex/ only when the project is trusted (say yes when Codex asks, or set \
         [projects.\"{}\"] trust_level = \"trusted\" in ~/.codex/config.toml), and skips an untrusted hook \
         without a word: start codex here, type /hooks and trust mnemo's hooks (again after each reinstall \
         that changed them).",
        root.display()
    );
    Ok(())
}

/// Without it, Codex refuses every call of the server's tools when it runs
/// without asking (`codex exec`, approval policy "never"): the tools only
/// write notes as the agent, which a person reviews, revokes or reinstates.
/// A value the user chose is kept.
const APPROVAL: &str = "default_tools_approval_mode";

fn read_toml(path: &Path) -> anyhow::Result<toml_edit::DocumentMut> {
    match std::fs::read_to_string(path) {
        Ok(text) => text.parse().map_err(|e| {
            anyhow::anyhow!("{} is not valid TOML ({e}); fix it first — mnemo never overwrites it", path.display())
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(toml_edit::DocumentMut::new()),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    }
}

/// `[mcp_servers.mnemo]` with this invocation; their other keys (env, …)
/// and every other table stay as written.
fn merge_mcp_server(
    config: &mut toml_edit::DocumentMut,
    mnemo: &Invocation,
    file: &Path,
) -> anyhow::Result<&'static str> {
    let servers = config.entry("mcp_servers").or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| anyhow::anyhow!("mcp_servers in {} is not a table; fix it first", file.display()))?;
    let args: toml_edit::Array = mnemo.args(&["mcp"]).into_iter().collect();
    let existed = servers.contains_key("mnemo");
    let server = servers.entry("mnemo").or_insert_with(toml_edit::table);
    let server = server
        .as_table_like_mut()
        .ok_or_else(|| anyhow::anyhow!("mcp_servers.mnemo in {} is not a table; fix it first", file.display()))?;
    let same = server.get("command").and_then(|c| c.as_str()) == Some(mnemo.program())
        && server.get("args").and_then(|a| a.as_array()).is_some_and(|a| {
            a.iter().map(|v| v.as_str().unwrap_or_default()).eq(mnemo.args(&["mcp"]).iter().map(String::as_str))
        })
        && server.contains_key(APPROVAL);
    if same {
        return Ok("already");
    }
    server.insert("command", toml_edit::value(mnemo.program()));
    server.insert("args", toml_edit::value(args));
    if !server.contains_key(APPROVAL) {
        server.insert(APPROVAL, toml_edit::value("approve"));
    }
    Ok(if existed { "updated" } else { "added" })
}
