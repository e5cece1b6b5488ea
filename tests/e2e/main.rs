//! End-to-end tests: the real `mnemo` binary driven over its command line the
//! way an agent or a person drives it, against a real store file in a temp dir.

mod budgets;
mod checkin;
mod cli_errors;
mod cli_lifecycle;
mod cli_reads;
mod concurrency;
mod daemon;
mod drift;
mod faults;
mod fuzz;
mod hooks;
mod hostile;
mod import_vectr;
mod isolation;
mod ledger;
mod load;
mod logging;
pub(crate) mod lsp;
mod lsp_editing;
pub(crate) mod mcp;
mod mirror;
mod models;
mod pg_server;
mod recall;
mod review;
mod store_copy;
mod support;
mod team;
mod trust;
mod workspaces;
