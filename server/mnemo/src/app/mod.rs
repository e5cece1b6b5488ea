//! The application layer: the operations behind every entry point. CLI
//! commands (`crate::commands`), MCP tools (`commands/mcp/`) and hooks
//! (`commands/hook/`) are thin adapters — they parse their input, call one
//! of these, and print in their own format — so a rule of what mnemo does
//! lives here once, not in the entry point that happened to need it first.
//!
//! - [`remember`]: write a note (anchors, quote binding, vectors, links);
//! - [`lifecycle`]: append one lifecycle event;
//! - [`recall`]: recall, the session-start bundle, what is relevant enough to push;
//! - [`recall_text`]: a recall answer's lines, one wording for the CLI and MCP;
//! - [`deliver`]: what a hook moment delivers to an agent session;
//! - [`session`]: what each agent session was told and its user's last message;
//! - [`ledger`]: recording each delivery to an agent in the store's ledger.

pub(crate) mod deliver;
pub(crate) mod ledger;
pub(crate) mod lifecycle;
pub(crate) mod recall;
pub(crate) mod recall_text;
pub(crate) mod remember;
pub(crate) mod session;
