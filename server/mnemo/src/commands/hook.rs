//! `mnemo hook <event>`: the harness pushes memory into the agent's context
//! at fixed moments, because agents asked to recall on their own rarely do.
//!
//! - session-start: every active directive (never cut), then the most recent
//!   notes, within the budget;
//! - user-prompt: keeps the prompt as the session's current user message (a
//!   later `remember` that states it binds the quote), prints the notes
//!   relevant to it;
//! - pre-edit: the notes anchored to the file about to be edited or naming
//!   it, of the kinds delivered there (gotchas and operational notes);
//! - post-compaction: the directives again.
//!
//! Which kinds each moment delivers is the workspace's trigger bundles
//! (`[hooks.triggers]`, default ladder in `mnemo_core::triggers`).
//!
//! Input follows Claude Code's hooks (JSON on stdin: `session_id`, `prompt`,
//! `tool_input.file_path`, `hook_event_name`); with such input the output is
//! `{"hookSpecificOutput": {"hookEventName", "additionalContext"}}`, else
//! plain text for other harnesses. Notes already injected in a session are
//! not injected again (per session: [`super::session`]).

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use mnemo_core::index_line::index_line;
use mnemo_core::recall::{RecallRequest, trust_frame};
use mnemo_core::triggers::{Moment, TriggerBundles};
use mnemo_core::{Kind, NoteView, Status};
use serde_json::{Value, json};

use crate::cli::{Hook, HookEvent};
use crate::commands::recall::run_recall;
use crate::commands::session::{self, SessionState};
use crate::context::Context;
use crate::semantic::Semantic;

/// A budget in characters (about four per token).
struct Budget(usize);

impl Budget {
    fn take(&mut self, text: &str) -> bool {
        if text.len() > self.0 {
            return false;
        }
        self.0 -= text.len();
        true
    }
}

fn framed(view: &NoteView) -> String {
    format!("({})", trust_frame(view.state.provenance, view.note.content.quote.as_deref()))
}

/// Every active note of `kinds`: the unconditional tier. Every title is
/// delivered; the bodies share the budget, and one over its share is cut
/// with a line saying so and how to read the rest.
fn whole_lines(views: &[NoteView], kinds: &[Kind], budget: &mut Budget) -> Vec<String> {
    let mut whole: Vec<NoteView> = views
        .iter()
        .filter(|v| kinds.contains(&v.note.content.kind) && v.state.status == Status::Active)
        .cloned()
        .collect();
    let titles: usize = whole.iter().map(|v| v.note.content.title.len() + 40).sum();
    mnemo_core::budget::clip_bodies(&mut whole, budget.0.saturating_sub(titles), 2);
    let mut out = Vec::new();
    for view in &whole {
        out.push(format!("- [#{}] {} {}", view.note.id, view.note.content.title, framed(view)));
        out.extend(view.note.content.body.lines().map(|l| format!("  {l}")));
    }
    let used: usize = out.iter().map(|l| l.len() + 1).sum();
    budget.0 = budget.0.saturating_sub(used);
    out
}

/// Index lines of `views` not yet injected, within the budget; records what it printed.
fn index_lines(ctx: &Context, views: &[NoteView], session: &mut SessionState, budget: &mut Budget) -> Vec<String> {
    let mut out = Vec::new();
    for view in views {
        if session.injected.contains(&view.note.id) {
            continue;
        }
        let line = format!("{} {}", index_line(&view.note, &view.state, ctx.now), framed(view));
        if !budget.take(&line) {
            break;
        }
        session.injected.push(view.note.id);
        out.push(line);
    }
    out
}

pub fn run(ctx: &Context, args: Hook) -> anyhow::Result<ExitCode> {
    if args.event == HookEvent::Install {
        return install(ctx, args.claude_code);
    }
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    let payload: Option<Value> = serde_json::from_str(&input).ok();
    let field = |name: &str| payload.as_ref().and_then(|p| p.get(name)).and_then(Value::as_str).map(str::to_string);
    let session_path = session::session_file(ctx, &field("session_id").unwrap_or_else(|| "default".into()));
    let mut session = session::load(&session_path);
    session.workspace = Some(ctx.workspace.id.clone());
    session.ancestors = crate::process_tree::ancestors();
    let mut budget = Budget(args.budget.saturating_mul(4));
    let triggers = match ctx.config() {
        Ok(config) => config.triggers.clone(),
        Err(e) => {
            eprintln!("mnemo: {e}; delivering the default trigger bundles");
            TriggerBundles::default()
        }
    };
    let mut store = ctx.open()?;
    // Every note of the workspace, for the hooks that filter them (not for
    // prompt recall, which runs before every prompt and asks the index).
    let all_notes = |store: &mnemo_store::Store| store.notes(&ctx.scope(false));
    let mut lines: Vec<String> = Vec::new();
    match args.event {
        HookEvent::SessionStart | HookEvent::PostCompaction => {
            let moment = if args.event == HookEvent::PostCompaction {
                session.injected.clear();
                Moment::PostCompaction
            } else {
                Moment::SessionStart
            };
            let views = all_notes(&store)?;
            let always = triggers.kinds_at(moment);
            let directives = whole_lines(&views, &[Kind::Directive], &mut budget);
            if !directives.is_empty() {
                lines.push("Standing directives for this project (mnemo):".into());
                lines.extend(directives);
            }
            let others: Vec<Kind> = always.iter().copied().filter(|k| *k != Kind::Directive).collect();
            let configured = whole_lines(&views, &others, &mut budget);
            if !configured.is_empty() {
                lines.push(format!("Delivered at every {moment} by .mnemo/config.toml [hooks.triggers] (mnemo):"));
                lines.extend(configured);
            }
            let mut recent: Vec<NoteView> = views
                .iter()
                .filter(|v| v.state.status == Status::Active && !always.contains(&v.note.content.kind))
                .filter(|v| Moment::ALL.iter().any(|&m| triggers.delivers(v.note.content.kind, m)))
                .cloned()
                .collect();
            recent.reverse();
            let index = index_lines(ctx, &recent, &mut session, &mut budget);
            if !index.is_empty() {
                lines.push("Recent notes (`mnemo expand ID` or the expand tool shows one in full):".into());
                lines.extend(index);
            }
        }
        HookEvent::UserPrompt => {
            let prompt = field("prompt").unwrap_or_else(|| input.trim().to_string());
            let kinds = triggers.kinds_at(Moment::UserPrompt);
            if !prompt.trim().is_empty() {
                session.user_message = Some(prompt.clone());
            }
            if !prompt.trim().is_empty() && !kinds.is_empty() {
                let mut request = RecallRequest::new(ctx.workspace.id.clone(), 8);
                request.kinds = kinds;
                // The first stage only: this runs before every prompt.
                let answer = run_recall(ctx, &mut store, &mut Semantic::load(ctx), &prompt, request, 0)?;
                let index = index_lines(ctx, &answer.views, &mut session, &mut budget);
                if !index.is_empty() {
                    lines.push("Notes from the project memory relevant to this prompt (mnemo):".into());
                    lines.extend(index);
                }
            }
        }
        HookEvent::PreEdit => {
            let file = payload
                .as_ref()
                .and_then(|p| p.pointer("/tool_input/file_path"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| input.trim().to_string());
            let relative = match &ctx.workspace.root {
                Some(root) => Path::new(&file)
                    .strip_prefix(root)
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or(file.clone()),
                None => file.clone(),
            };
            let name = Path::new(&relative).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let relevant: Vec<NoteView> = all_notes(&store)?
                .into_iter()
                .filter(|v| v.state.status == Status::Active && triggers.delivers(v.note.content.kind, Moment::PreEdit))
                .filter(|v| {
                    let c = &v.note.content;
                    let anchored = c.anchors.iter().any(|a| a.path == relative);
                    let names = !name.is_empty()
                        && (c.title.contains(&relative) || c.body.contains(&relative) || c.title.contains(&name));
                    anchored || names
                })
                .collect();
            let index = index_lines(ctx, &relevant, &mut session, &mut budget);
            if !index.is_empty() {
                lines.push(format!("Before editing {relative}, the project memory says (mnemo):"));
                lines.extend(index);
            }
        }
        HookEvent::Install => unreachable!("handled above"),
    }
    session::save(&session_path, &session);
    let text = lines.join("\n");
    match field("hook_event_name") {
        Some(event) => {
            let out = json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } });
            println!("{out}");
        }
        None if !text.is_empty() => println!("{text}"),
        None => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// The hooks mnemo installs into Claude Code: (event, matcher, command).
const CLAUDE_CODE_HOOKS: [(&str, Option<&str>, &str); 4] = [
    ("SessionStart", Some("startup|resume|clear"), "mnemo hook session-start"),
    ("SessionStart", Some("compact"), "mnemo hook post-compaction"),
    ("UserPromptSubmit", None, "mnemo hook user-prompt"),
    ("PreToolUse", Some("Edit|Write|MultiEdit"), "mnemo hook pre-edit"),
];

fn read_json(path: &Path) -> anyhow::Result<Value> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(json!({})),
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!("{} is not valid JSON ({e}); fix it first — mnemo never overwrites it", path.display())
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(json!({})),
        Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// `mnemo hook install --claude-code`: merge the hooks into
/// `.claude/settings.json` and the MCP server into `.mcp.json`, keeping every
/// setting already there; running it twice changes nothing.
pub fn install(ctx: &Context, claude_code: bool) -> anyhow::Result<ExitCode> {
    if !claude_code {
        anyhow::bail!("say which harness: `mnemo hook install --claude-code` (see the README for Codex and others)");
    }
    let root = ctx.workspace.root.clone().ok_or_else(|| {
        anyhow::anyhow!("the workspace {} is only a name; run this in the project directory", ctx.workspace.id)
    })?;
    let settings_path = root.join(".claude/settings.json");
    let mut settings = read_json(&settings_path)?;
    let mcp_path = root.join(".mcp.json");
    let mut mcp = read_json(&mcp_path)?;
    let (Some(settings_map), Some(mcp_map)) = (settings.as_object_mut(), mcp.as_object_mut()) else {
        anyhow::bail!("{} and {} must hold JSON objects", settings_path.display(), mcp_path.display());
    };
    let hooks = settings_map.entry("hooks").or_insert_with(|| json!({}));
    let mut added = 0;
    for (event, matcher, command) in CLAUDE_CODE_HOOKS {
        let list = hooks
            .as_object_mut()
            .ok_or_else(|| anyhow::anyhow!("\"hooks\" in {} is not an object", settings_path.display()))?;
        let entries = list.entry(event).or_insert_with(|| json!([]));
        let entries = entries.as_array_mut().ok_or_else(|| anyhow::anyhow!("hooks.{event} is not a list"))?;
        let present =
            entries.iter().any(|e| e["hooks"].as_array().is_some_and(|h| h.iter().any(|h| h["command"] == command)));
        if !present {
            let mut entry = json!({ "hooks": [{ "type": "command", "command": command }] });
            if let Some(matcher) = matcher {
                entry["matcher"] = json!(matcher);
            }
            entries.push(entry);
            added += 1;
        }
    }
    let servers = mcp_map.entry("mcpServers").or_insert_with(|| json!({}));
    let servers = servers
        .as_object_mut()
        .ok_or_else(|| anyhow::anyhow!("\"mcpServers\" in {} is not an object", mcp_path.display()))?;
    let server_added = !servers.contains_key("mnemo");
    if server_added {
        servers.insert("mnemo".into(), json!({ "command": "mnemo", "args": ["mcp"] }));
    }
    std::fs::create_dir_all(root.join(".claude"))?;
    std::fs::write(&settings_path, serde_json::to_string_pretty(&settings)? + "\n")?;
    std::fs::write(&mcp_path, serde_json::to_string_pretty(&mcp)? + "\n")?;
    println!(
        "{added} hooks added to {}; MCP server {} in {}",
        settings_path.display(),
        if server_added { "added" } else { "already" },
        mcp_path.display()
    );
    Ok(ExitCode::SUCCESS)
}
