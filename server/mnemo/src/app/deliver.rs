//! What a hook moment delivers to an agent session: the session's record
//! loaded, the workspace's trigger bundles read, the notes selected and
//! printed by the pure rules of `mnemo_core::delivery`, the record saved.
//! The caller (`commands/hook/`) turns the lines into its harness's answer.

use mnemo_core::delivery::{self, Budget, TitleLine};
use mnemo_core::recall::RecallRequest;
use mnemo_core::triggers::{Moment, TriggerBundles};

use crate::app::recall::{relevant_enough, rerank_setting, run_recall};
use crate::app::{ledger, session};
use crate::context::Context;
use crate::semantic::Semantic;

/// Why notes were not delivered again: this session has them.
fn already(ids: &[String], session: &str) -> String {
    format!(
        "{} already delivered in full in session {session} (they come again after a compaction, or when they change)",
        ids.join(", ")
    )
}

/// What the harness asked about.
pub struct Occasion<'a> {
    pub moment: Moment,
    /// The harness's session id ("default" when it names none).
    pub session: &'a str,
    /// Why a session (re)started: `resume` gets only what changed.
    pub source: Option<&'a str>,
    /// The user's prompt (user-prompt).
    pub prompt: String,
    /// The files about to be edited, workspace-relative (pre-edit).
    pub files: Vec<String>,
}

/// The lines to put into the agent's context (empty: nothing applies),
/// recorded in its session and the ledger; `why` gets what was delivered
/// and, for what was not, the reason (`mnemo hook … --explain`).
pub fn deliver(
    ctx: &Context,
    occasion: &Occasion,
    mut budget: Budget,
    why: &mut Vec<String>,
) -> anyhow::Result<Vec<String>> {
    let session_path = session::session_file(ctx, occasion.session);
    let mut session = session_path.as_deref().map(session::load).unwrap_or_default();
    session.workspace = Some(ctx.workspace.id.clone());
    session.ancestors = crate::process_tree::ancestors();
    let triggers = match ctx.config() {
        Ok(config) => config.triggers.clone(),
        Err(e) => {
            eprintln!("mnemo: {e}; delivering the default trigger bundles");
            TriggerBundles::default()
        }
    };
    let mut store = ctx.open()?;
    if occasion.moment == Moment::PostCompaction {
        session.told.forget_all();
    }
    let before = session.told.clone();
    let told = &mut session.told;
    let mut lines: Vec<String> = Vec::new();
    match occasion.moment {
        Moment::SessionStart | Moment::PostCompaction => {
            // Every note of the workspace: prompt recall, which runs before
            // every prompt, asks the index instead.
            let views = store.notes(&ctx.scope(false))?;
            let selection = delivery::at_start(&views, &triggers, occasion.moment);
            // A resumed conversation still holds what its session start delivered.
            let resumed = occasion.moment == Moment::SessionStart && occasion.source == Some("resume");
            let (directives, configured) = if resumed {
                (told.not_yet_delivered(selection.directives), told.not_yet_delivered(selection.configured))
            } else {
                (selection.directives, selection.configured)
            };
            let directives = delivery::in_full(&directives, TitleLine::Plain, ctx.now, told, &mut budget);
            if !directives.is_empty() {
                lines.push("Standing directives for this project (mnemo):".into());
                lines.extend(directives);
            }
            let configured = delivery::in_full(&configured, TitleLine::Plain, ctx.now, told, &mut budget);
            if !configured.is_empty() {
                let moment = occasion.moment;
                lines.push(format!("Delivered at every {moment} by .mnemo/config.toml [hooks.triggers] (mnemo):"));
                lines.extend(configured);
            }
            let index = delivery::listed(&selection.recent, ctx.now, told, &mut budget);
            if lines.is_empty() && index.is_empty() {
                why.push(match resumed {
                    true => "a resumed session holds every directive and recent note already".into(),
                    false => "the workspace has no active directive and no recent note".into(),
                });
            }
            if !index.is_empty() {
                lines.push("Recent notes (`mnemo expand ID` or the expand tool shows one in full):".into());
                lines.extend(index);
            }
        }
        Moment::UserPrompt => {
            let prompt = occasion.prompt.trim();
            let kinds = triggers.kinds_at(Moment::UserPrompt);
            if !prompt.is_empty() {
                session.user_message = Some(occasion.prompt.clone());
            }
            // A hook that delivers nothing says why, to whoever reads the log.
            if prompt.is_empty() {
                tracing::info!("prompt recall delivers nothing: the prompt is empty");
                why.push("the prompt is empty".into());
            } else if kinds.is_empty() {
                tracing::info!(
                    "prompt recall delivers nothing: .mnemo/config.toml [hooks.triggers] names no kind for it"
                );
                why.push(".mnemo/config.toml [hooks.triggers] names no kind for the user-prompt moment".into());
            }
            if !prompt.is_empty() && !kinds.is_empty() {
                let mut request = RecallRequest::new(ctx.workspace.id.clone(), 8);
                request.kinds = kinds;
                // Reranked like every recall: the notes' token signs are stored,
                // so late interaction costs one short run of the model on the prompt.
                let rerank = rerank_setting(ctx);
                let answer = run_recall(ctx, &mut store, &mut Semantic::load(ctx), prompt, request, rerank)?;
                let answer_was_confident = answer.answer.abstention.is_none();
                if let Some(abstention) = answer.answer.abstention {
                    tracing::info!(
                        held_back = abstention.held_back,
                        "prompt recall delivers nothing: {}",
                        abstention.describe()
                    );
                    why.push(abstention.describe());
                }
                let told = &mut session.told;
                let wanted = relevant_enough(answer);
                let fresh = told.not_yet_delivered(wanted.clone());
                if fresh.is_empty() && !wanted.is_empty() {
                    let ids: Vec<String> = wanted.iter().map(|v| format!("#{}", v.note.id)).collect();
                    tracing::info!(
                        "prompt recall delivers nothing new: {} already delivered in this session",
                        ids.join(", ")
                    );
                    why.push(already(&ids, occasion.session));
                } else if wanted.is_empty() && answer_was_confident {
                    tracing::info!("prompt recall delivers nothing: no note is similar enough to push unasked");
                    why.push("no note is similar enough to the prompt to push unasked".into());
                }
                let relevant = delivery::in_full(&fresh, TitleLine::Index, ctx.now, told, &mut budget);
                if !relevant.is_empty() {
                    lines.push("Notes from the project memory relevant to this prompt (mnemo):".into());
                    lines.extend(relevant);
                }
            }
        }
        Moment::PreEdit => {
            if occasion.files.is_empty() {
                why.push("the tool call names no file being edited".into());
            } else {
                let about = delivery::before_edit(store.notes(&ctx.scope(false))?, &occasion.files, &triggers);
                let files = occasion.files.join(", ");
                if about.is_empty() {
                    why.push(format!("no active note is anchored to or names {files}"));
                }
                let ids: Vec<String> =
                    about.iter().filter(|v| told.holds(v)).map(|v| format!("#{}", v.note.id)).collect();
                if !ids.is_empty() {
                    why.push(already(&ids, occasion.session));
                }
                let fresh = told.not_yet_delivered(about);
                let notes = delivery::in_full(&fresh, TitleLine::Index, ctx.now, told, &mut budget);
                if !notes.is_empty() {
                    lines.push(format!("Before editing {files}, the project memory says (mnemo):"));
                    lines.extend(notes);
                }
            }
        }
    }
    if let Some(path) = &session_path {
        session::save(path, &session);
    }
    if !lines.is_empty() {
        why.insert(0, format!("delivered {} lines to session {}", lines.len(), occasion.session));
    }
    let bytes = lines.iter().map(|l| l.len() + 1).sum();
    let told = ledger::told_since(&before, &session.told);
    ledger::record(ctx, &mut store, occasion.session, occasion.moment.as_str(), told, bytes);
    Ok(lines)
}
