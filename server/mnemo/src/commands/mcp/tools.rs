//! The MCP tools: remember, recall, expand, revoke, reinstate, flag_stale,
//! history, context. Each checks its arguments, calls `crate::app` as the
//! CLI command of the same name would, and hands the result to `render`.
//! Every write is the agent's, through the one write path; no tool promotes
//! a note to `human` or forgets one. A bad argument is a tool error that
//! says what to send instead.
//!
//! Annotations: the read tools are read-only and idempotent. `revoke` is
//! the one tool marked destructive: it withdraws a note — possibly one a
//! person endorsed — from every later session's recall (the note stays in
//! the log and `reinstate` brings it back). `flag_stale` and `reinstate`
//! change a state that asking twice leaves as it is; `remember` writes a
//! new note each time. Nothing reaches outside the store.

use mnemo_core::recall::RecallRequest;
use mnemo_core::{Actor, EventKind, Kind, NewNote, NoteId, Priority, Provenance, Status};
use mnemo_store::ledger::Shown;
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::{tool, tool_router};

use super::MemoryServer;
use super::args::{
    CONTEXT_TOKENS, ContextArgs, EXPAND_TOKENS, ExpandArgs, HISTORY_TOKENS, HistoryArgs, IdArgs, RECALL_TOKENS,
    ReasonArgs, RecallArgs, RememberArgs, budget_bytes, limit,
};
use super::output::{ContextOutput, NoteStateOutput, RecallOutput, Remembered};
use super::render;
use crate::app::recall::{rerank_setting, run_recall, session_context};
use crate::app::remember::{Links, bind_provenance, capture_anchors, create_linked_note};
use crate::cli::parse_word as parse;

type ToolResult = Result<CallToolResult, String>;

/// The most ids one `expand` takes.
const MAX_EXPAND_IDS: usize = 100;

/// A tool's `outputSchema`, from the type its structured content
/// serialises, without the formats JSON Schema does not define (schemars
/// writes `uint` for a count, which clients' validators warn about; its
/// `minimum: 0` stays).
fn schema<T: rmcp::schemars::JsonSchema + 'static>() -> std::sync::Arc<JsonObject> {
    fn standard_formats_only(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(object) => {
                if object.get("format").and_then(|f| f.as_str()).is_some_and(|f| f.starts_with("uint")) {
                    object.remove("format");
                }
                object.values_mut().for_each(standard_formats_only);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(standard_formats_only),
            _ => {}
        }
    }
    let schema =
        schema_for_output::<T>().unwrap_or_else(|e| panic!("the output schema of {}: {e}", std::any::type_name::<T>()));
    let mut object = (*schema).clone();
    object.values_mut().for_each(standard_formats_only);
    std::sync::Arc::new(object)
}

impl MemoryServer {
    /// Append a lifecycle event as the agent; the note's state after it.
    fn event(&self, id: NoteId, kind: EventKind, reason: Option<String>) -> ToolResult {
        self.with(|s| {
            let state = crate::app::lifecycle::append(&s.ctx, id, kind, false, reason)?;
            let provenance = state.provenance.as_str().into();
            Ok(render::written(&NoteStateOutput { id, state: state.status.name().into(), provenance }))
        })
    }

    /// The session-start bundle as the context tool and the prompt give it.
    pub(super) fn session_start(&self, args: ContextArgs) -> Result<render::Rendered<ContextOutput>, String> {
        let limit = limit(args.limit)?;
        let budget = budget_bytes(args.max_tokens, CONTEXT_TOKENS)?;
        self.with(|s| {
            let mut store = s.ctx.open()?;
            // Unclipped: the bodies share the whole answer's budget in render::context.
            let (directives, relevant) =
                session_context(&s.ctx, &mut store, &mut s.semantic, &args.query, limit, usize::MAX)?;
            let rendered = render::context(&directives, &relevant, &args.query, budget, s.ctx.now);
            let structured = serde_json::to_value(&rendered.structured)?;
            record_delivery(s, &mut store, "mcp context", &structured, rendered.text.len());
            Ok(rendered)
        })
    }
}

/// The bytes of an answer's text, as the agent receives it.
fn text_bytes(result: &CallToolResult) -> usize {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.len()).sum()
}

/// Record in the ledger what an answer delivered, read from its structured
/// content (what was sent, after the budget): `directives` in full,
/// `results` (also under `notes`) listed.
fn record_delivery(
    s: &mut super::State,
    store: &mut mnemo_store::Store,
    moment: &str,
    structured: &serde_json::Value,
    bytes: usize,
) {
    let ids =
        |v: &serde_json::Value| v.as_array().into_iter().flatten().filter_map(|e| e["id"].as_i64()).collect::<Vec<_>>();
    let mut notes: Vec<(NoteId, Shown)> =
        ids(&structured["directives"]).into_iter().map(|id| (id, Shown::Full)).collect();
    let listed = ids(&structured["results"]).into_iter().chain(ids(&structured["notes"]["results"]));
    notes.extend(listed.map(|id| (id, Shown::Listed)));
    record_notes(s, store, moment, notes, bytes);
}

/// Record `notes` as delivered to this server's agent. One MCP server
/// serves one agent session: the session is the process.
fn record_notes(
    s: &mut super::State,
    store: &mut mnemo_store::Store,
    moment: &str,
    notes: Vec<(NoteId, Shown)>,
    bytes: usize,
) {
    let session = format!("mcp-{}", std::process::id());
    crate::app::ledger::record(&s.ctx, store, &session, moment, notes, bytes);
}

#[tool_router(vis = "pub(super)")]
impl MemoryServer {
    #[tool(
        description = "Record a note in the project memory: a finding, a gotcha, a decision, a standing directive, a task, a reference or an operational fact. Write one note per point, with a one-line title that says it all. Returns the new id and its state: `proposed` when this project has a person review what agents write (it is then not recalled until accepted; do not write it again).",
        output_schema = schema::<Remembered>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    fn remember(&self, Parameters(args): Parameters<RememberArgs>) -> ToolResult {
        let kind: Kind = parse(&args.kind)?;
        let priority: Priority = args.priority.as_deref().map(parse).transpose()?.unwrap_or(Priority::Medium);
        self.with(|s| {
            let anchors = capture_anchors(&s.ctx, &args.anchors)?;
            // Only what the user-prompt hook recorded is the user's: a message the
            // caller passes binds only when it is part of that recording.
            let recorded = crate::app::session::latest_user_message(&s.ctx);
            let message = match (&args.user_message, recorded) {
                (Some(claimed), Some(recorded)) => {
                    let squash = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
                    squash(&recorded).contains(&squash(claimed)).then_some(recorded)
                }
                (None, recorded) => recorded,
                (Some(_), None) => None,
            };
            let (provenance, quote) = bind_provenance(Provenance::Agent, &args.title, &args.body, message.as_deref());
            let note = NewNote { kind, priority, title: args.title, body: args.body, provenance, quote, anchors };
            let mut store = s.ctx.open()?;
            let links = Links { supersedes: args.supersedes, contradicts: args.contradicts, allow_secrets: false };
            let id = create_linked_note(&s.ctx, &mut store, &mut s.semantic, note, Actor::Agent, links)?;
            let state = store.note(&s.ctx.scope(false), id)?.state.status.name().to_string();
            let warning = match kind {
                Kind::Directive => crate::app::remember::directives_over_budget(&s.ctx, &store)?,
                _ => None,
            };
            Ok(render::written(&Remembered {
                id,
                provenance: provenance.as_str().into(),
                supersedes: args.supersedes,
                contradicts: args.contradicts,
                state,
                warning,
            }))
        })
    }

    #[tool(
        description = "Recall the notes relevant to a query, ranked. Returns the index tier, one line per note (id, kind, priority, provenance, title, age, trust frame), then what the filters hid (stale, superseded, other kinds) and which ranking ran; the same as structured content. No bodies: use expand for them. Notes past max_tokens are cut and named.",
        output_schema = schema::<RecallOutput>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    fn recall(&self, Parameters(args): Parameters<RecallArgs>) -> ToolResult {
        let kinds = args.kinds.iter().map(|k| parse::<Kind>(k)).collect::<Result<Vec<_>, _>>()?;
        if args.query.trim().is_empty() {
            return Err("recall needs a query; for the session-start bundle use the context tool".into());
        }
        let limit = limit(args.limit)?;
        let budget = budget_bytes(args.max_tokens, RECALL_TOKENS)?;
        self.with(|s| {
            let mut store = s.ctx.open()?;
            let mut request = RecallRequest::new(s.ctx.workspace.id.clone(), limit);
            if !kinds.is_empty() {
                request.kinds = kinds;
            }
            if args.include_stale {
                request.states.push(Status::StaleFlagged.name());
            }
            request.abstain = !args.all;
            let rerank = rerank_setting(&s.ctx);
            let answer = run_recall(&s.ctx, &mut store, &mut s.semantic, &args.query, request, rerank)?;
            let result = render::recall(&answer, budget, s.ctx.now);
            let structured = result.structured_content.clone().unwrap_or_default();
            record_delivery(s, &mut store, "mcp recall", &structured, text_bytes(&result));
            Ok(result)
        })
    }

    #[tool(
        description = "The full notes for these ids: trust frame, body, anchors, state, provenance. Bodies past max_tokens are cut, each saying how much.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    fn expand(&self, Parameters(args): Parameters<ExpandArgs>) -> ToolResult {
        if args.ids.is_empty() || args.ids.len() > MAX_EXPAND_IDS {
            return Err(format!("expand takes 1 to {MAX_EXPAND_IDS} ids; got {}", args.ids.len()));
        }
        let budget = budget_bytes(args.max_tokens, EXPAND_TOKENS)?;
        self.with(|s| {
            let mut store = s.ctx.open()?;
            let scope = s.ctx.scope(false);
            let views = args.ids.iter().map(|id| store.note(&scope, *id)).collect::<Result<Vec<_>, _>>()?;
            let result = render::expand(&views, budget);
            let expanded = views.iter().map(|v| (v.note.id, Shown::Full)).collect();
            record_notes(s, &mut store, "mcp expand", expanded, text_bytes(&result));
            Ok(result)
        })
    }

    #[tool(
        description = "Revoke a note that is wrong, with the reason. It leaves recall for every later session; it stays in the log, and reinstate brings it back.",
        output_schema = schema::<NoteStateOutput>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    fn revoke(&self, Parameters(args): Parameters<ReasonArgs>) -> ToolResult {
        self.event(args.id, EventKind::Revoked, Some(args.reason))
    }

    #[tool(
        description = "Flag a note stale (it may no longer hold, e.g. the code changed), with the reason.",
        output_schema = schema::<NoteStateOutput>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    fn flag_stale(&self, Parameters(args): Parameters<ReasonArgs>) -> ToolResult {
        self.event(args.id, EventKind::StaleFlagged, Some(args.reason))
    }

    #[tool(
        description = "Reinstate a revoked, stale or expired note that holds again.",
        output_schema = schema::<NoteStateOutput>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    fn reinstate(&self, Parameters(args): Parameters<IdArgs>) -> ToolResult {
        self.event(args.id, EventKind::Reinstated, None)
    }

    #[tool(
        description = "The event history of a note, one line per event: created, superseded, revoked, …, with dates, actors and reasons. The oldest events past max_tokens are cut, saying how many.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    fn history(&self, Parameters(args): Parameters<HistoryArgs>) -> ToolResult {
        let budget = budget_bytes(args.max_tokens, HISTORY_TOKENS)?;
        self.with(|s| {
            let store = s.ctx.open()?;
            let events = store.history(&s.ctx.scope(false), args.id)?;
            Ok(render::history(&events, budget))
        })
    }

    #[tool(
        description = "The session-start bundle: every active directive with its body (unranked; the bodies share max_tokens and a cut one says so), then the index tier of the notes relevant to the task (or the most recent ones); the same as structured content. The prompt session-start gives the same.",
        output_schema = schema::<ContextOutput>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    fn context(&self, Parameters(args): Parameters<ContextArgs>) -> ToolResult {
        self.session_start(args).map(render::Rendered::into_result)
    }
}
