//! The server's one prompt, `session-start`: the session-start bundle the
//! `context` tool returns (the standing directives whole, then the notes
//! relevant to the task), as a user message a client puts at the start of a
//! session — for clients without hooks, which cannot have it pushed.

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage,
    PromptMessageRole,
};

use super::MemoryServer;
use super::args::ContextArgs;

pub const SESSION_START: &str = "session-start";

/// What `prompts/list` shows.
pub fn list() -> ListPromptsResult {
    let task = PromptArgument::new("task")
        .with_description(
            "The task at hand: the notes relevant to it follow the directives (default: the most recent notes)",
        )
        .with_required(false);
    let prompt = Prompt::new(
        SESSION_START,
        Some(
            "This project's memory at the start of a session: every standing directive in full, then the notes \
             relevant to the task",
        ),
        Some(vec![task]),
    );
    ListPromptsResult::with_all_items(vec![prompt])
}

impl MemoryServer {
    /// `prompts/get`: the bundle for the `task` argument; an unknown prompt
    /// or argument is an error that names what there is.
    pub(super) fn get_session_start(&self, request: GetPromptRequestParams) -> Result<GetPromptResult, ErrorData> {
        if request.name != SESSION_START {
            let unknown = format!("no prompt '{}'; this server has '{SESSION_START}'", request.name);
            return Err(ErrorData::invalid_params(unknown, None));
        }
        let mut task = String::new();
        for (name, value) in request.arguments.unwrap_or_default() {
            match (name.as_str(), value) {
                ("task", serde_json::Value::String(text)) => task = text,
                ("task", _) => return Err(ErrorData::invalid_params("the argument 'task' must be a string", None)),
                (other, _) => {
                    let unknown = format!("unknown argument '{other}'; {SESSION_START} takes 'task' (optional)");
                    return Err(ErrorData::invalid_params(unknown, None));
                }
            }
        }
        let bundle = self
            .session_start(ContextArgs { query: task, ..ContextArgs::default() })
            .map_err(|e| ErrorData::internal_error(e, None))?;
        let text = format!("This project's memory (mnemo), for this session:\n\n{}", bundle.text);
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(PromptMessageRole::User, text)])
            .with_description("mnemo: the session-start bundle"))
    }
}
