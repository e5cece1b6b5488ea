//! The MCP tools' arguments: their JSON Schemas (what `tools/list` shows an
//! agent) and the checks rmcp's deserialising does not make. A number out
//! of range is refused with a message that says the range, never clamped
//! silently; a misspelt argument is refused rather than ignored.

use mnemo_core::NoteId;
use mnemo_core::delivery::Budget;
use rmcp::schemars;
use serde::Deserialize;

/// The fewest and most tokens a read tool's `max_tokens` may ask for.
pub const MIN_TOKENS: i64 = 100;
pub const MAX_TOKENS: i64 = 100_000;

/// Defaults of `max_tokens`: an index tier stays small; the session-start
/// bundle carries the directives' bodies; `expand` is asked for bodies.
pub const RECALL_TOKENS: i64 = 2_000;
pub const CONTEXT_TOKENS: i64 = 4_000;
pub const EXPAND_TOKENS: i64 = 8_000;
pub const HISTORY_TOKENS: i64 = 2_000;

/// The most notes recall or context returns, and the default.
const MAX_LIMIT: i64 = 100;
const DEFAULT_LIMIT: i64 = 10;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberArgs {
    /// directive, task, gotcha, finding, reference, decision or operational
    pub kind: String,
    /// One line that says the whole point
    pub title: String,
    /// Why, and what to do about it
    #[serde(default)]
    pub body: String,
    /// high, medium (default) or low
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub priority: Option<String>,
    /// Code locations PATH:START-END inside the workspace
    #[serde(default)]
    pub anchors: Vec<String>,
    /// The id of a note this one replaces (it becomes superseded)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "NoteId")]
    pub supersedes: Option<NoteId>,
    /// The id of a note this one proves wrong (it is revoked, "contradicted by" this one)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "NoteId")]
    pub contradicts: Option<NoteId>,
    /// The user's current message, when the note states it. It binds the quote (provenance
    /// user-stated) only as far as the harness's user-prompt hook recorded that message:
    /// an agent cannot make its own words the user's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub user_message: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// What you are about to do, or want to know
    pub query: String,
    /// Only these kinds (default: all)
    #[serde(default)]
    pub kinds: Vec<String>,
    /// How many notes, 1 to 100 (default 10)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64")]
    pub limit: Option<i64>,
    /// Return stale-flagged notes as results too
    #[serde(default)]
    pub include_stale: bool,
    /// Return the best matches even when none is a confident match (recall otherwise holds weak ones back, saying how many)
    #[serde(default)]
    pub all: bool,
    /// The most this answer may cost, in tokens (about 4 bytes each), 100 to 100000 (default 2000); the text and the structured content each fit it (a client gives its model one of them); notes past it are cut and named
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64")]
    pub max_tokens: Option<i64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpandArgs {
    /// Note ids, as numbers
    pub ids: Vec<NoteId>,
    /// The most this answer may cost, in tokens (about 4 bytes each), 100 to 100000 (default 8000); bodies past it are cut, each saying so
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64")]
    pub max_tokens: Option<i64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdArgs {
    /// A note id
    pub id: NoteId,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// A note id
    pub id: NoteId,
    /// The most this answer may cost, in tokens (about 4 bytes each), 100 to 100000 (default 2000); the oldest events past it are cut, saying how many
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64")]
    pub max_tokens: Option<i64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReasonArgs {
    /// A note id
    pub id: NoteId,
    /// Why: a sentence another agent or a person will read
    pub reason: String,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    /// The task at hand (optional): the notes relevant to it follow the directives
    #[serde(default)]
    pub query: String,
    /// How many notes after the directives, 1 to 100 (default 10)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64")]
    pub limit: Option<i64>,
    /// The most this answer may cost, in tokens (about 4 bytes each), 100 to 100000 (default 4000; the text and the structured content each fit it): the directives' bodies share it (one over its share is cut, saying so), the notes after them take what is left and those cut are named
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64")]
    pub max_tokens: Option<i64>,
}

/// `limit` checked: 1 to 100, 10 when absent.
pub fn limit(limit: Option<i64>) -> Result<usize, String> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(format!("limit must be between 1 and {MAX_LIMIT}; got {limit}"));
    }
    Ok(limit as usize)
}

/// `max_tokens` checked and turned into bytes by the delivery budget's rule
/// (about four a token); `default` tokens when absent.
pub fn budget_bytes(max_tokens: Option<i64>, default: i64) -> Result<usize, String> {
    let tokens = max_tokens.unwrap_or(default);
    if !(MIN_TOKENS..=MAX_TOKENS).contains(&tokens) {
        return Err(format!(
            "max_tokens must be between {MIN_TOKENS} and {MAX_TOKENS} (a token is about 4 bytes); got {tokens}"
        ));
    }
    Ok(Budget::from_tokens(tokens as usize).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_or_limit_out_of_range_is_refused_saying_the_range() {
        assert_eq!(budget_bytes(None, RECALL_TOKENS), Ok(8_000));
        assert_eq!(budget_bytes(Some(100), RECALL_TOKENS), Ok(400));
        let refused = budget_bytes(Some(-5), RECALL_TOKENS).unwrap_err();
        assert_eq!(refused, "max_tokens must be between 100 and 100000 (a token is about 4 bytes); got -5");
        assert!(budget_bytes(Some(1 << 40), RECALL_TOKENS).is_err());
        assert_eq!(limit(None), Ok(10));
        assert_eq!(limit(Some(0)).unwrap_err(), "limit must be between 1 and 100; got 0");
        assert!(limit(Some(101)).is_err());
    }
}
