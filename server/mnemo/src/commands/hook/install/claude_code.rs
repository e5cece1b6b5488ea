//! Claude Code: the hooks go into the project's `.claude/settings.json`, the
//! MCP server into `.mcp.json`. Claude Code asks a person to approve a
//! project's MCP server (`claude mcp list` calls it pending until then;
//! Claude Code 2.1.197 in `-p` uses it regardless), and reads the approval
//! (`enabledMcpjsonServers`) from the project's shared settings only after
//! the workspace is trusted; `--approve-mcp` writes it into
//! `.claude/settings.local.json` (personal, not committed), where it takes
//! effect at once.

use std::path::Path;

use mnemo_core::triggers::Moment;
use serde_json::{Value, json};

use super::Invocation;
use super::json_settings::{HookSpec, merge_hooks, object_at, read_object, write_object};

/// The hooks: session start (not after compaction, which has its own),
/// the user's prompt, and each tool that edits a file (Edit, Write and
/// NotebookEdit; Bash edits are not seen).
const HOOKS: [HookSpec; 4] = [
    HookSpec { event: "SessionStart", matcher: Some("startup|resume|clear"), moment: Moment::SessionStart },
    HookSpec { event: "SessionStart", matcher: Some("compact"), moment: Moment::PostCompaction },
    HookSpec { event: "UserPromptSubmit", matcher: None, moment: Moment::UserPrompt },
    HookSpec { event: "PreToolUse", matcher: Some("Edit|Write|NotebookEdit"), moment: Moment::PreEdit },
];

pub fn install(root: &Path, mnemo: &Invocation, approve_mcp: bool) -> anyhow::Result<()> {
    let settings_path = root.join(".claude/settings.json");
    let mcp_path = root.join(".mcp.json");
    let local_path = root.join(".claude/settings.local.json");
    // Read everything first: a broken file stops the install before anything is written.
    let mut settings = read_object(&settings_path)?;
    let mut mcp = read_object(&mcp_path)?;
    let mut local = if approve_mcp { Some(read_object(&local_path)?) } else { None };

    let (added, updated) = merge_hooks(&mut settings, &HOOKS, mnemo, &settings_path)?;
    let servers = object_at(&mut mcp, "mcpServers", &mcp_path)?;
    let wanted = json!({ "command": mnemo.program(), "args": mnemo.args(&["mcp"]) });
    let server = match servers.get_mut("mnemo") {
        None => {
            servers.insert("mnemo".into(), wanted);
            "added"
        }
        Some(existing) if existing["command"] == wanted["command"] && existing["args"] == wanted["args"] => "already",
        Some(existing) => {
            // Their other keys (env, …) stay.
            existing["command"] = wanted["command"].clone();
            existing["args"] = wanted["args"].clone();
            "updated"
        }
    };
    let approval = match &mut local {
        Some(local) => Some(approve(local, &local_path)?),
        None => None,
    };

    write_object(&settings_path, settings)?;
    write_object(&mcp_path, mcp)?;
    if let Some(local) = local {
        write_object(&local_path, local)?;
    }
    println!(
        "Claude Code: {added} hooks added, {updated} updated in {}; MCP server {server} in {}",
        settings_path.display(),
        mcp_path.display()
    );
    match approval {
        Some(done) => println!("Claude Code: the MCP server is {done} in {}", local_path.display()),
        None => println!(
            "Claude Code asks you to approve a project's MCP server (`claude mcp list` shows it pending until \
             then): approve \"mnemo\" when Claude Code asks, or run this again with --approve-mcp to \
             approve it in .claude/settings.local.json."
        ),
    }
    Ok(())
}

/// Add "mnemo" to `enabledMcpjsonServers`; say whether it was there.
fn approve(local: &mut serde_json::Map<String, Value>, file: &Path) -> anyhow::Result<&'static str> {
    let enabled = local.entry("enabledMcpjsonServers").or_insert_with(|| json!([]));
    let enabled = enabled
        .as_array_mut()
        .ok_or_else(|| anyhow::anyhow!("enabledMcpjsonServers in {} is not a list; fix it first", file.display()))?;
    if enabled.iter().any(|name| name == "mnemo") {
        return Ok("already approved");
    }
    enabled.push(json!("mnemo"));
    Ok("approved")
}
