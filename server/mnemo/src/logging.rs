//! `MNEMO_LOG`: the diagnostic log, for a person asking why mnemo did what it
//! did. Off unless the variable is set, so nothing changes for anyone who does
//! not ask; its value is a `tracing` filter as `RUST_LOG` takes it (`debug`,
//! `mnemo_store=debug,mnemo_lsp=trace`).
//!
//! **Invariant:** log events never reach stdout, where the CLI's output, the
//! MCP protocol and the LSP protocol live. The language server sends them to
//! its client as `window/logMessage` (`mnemo_lsp::log`); every other command
//! writes them to stderr. Messages for the person (warnings, errors, notes)
//! are output, not log events: they are printed whatever `MNEMO_LOG` says.

use tracing_subscriber::fmt;
use tracing_subscriber::layer::{Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, registry};

use crate::cli::Command;

/// The environment variable holding the filter.
pub const VARIABLE: &str = "MNEMO_LOG";

/// Install the log for `command` when `MNEMO_LOG` asks for one.
pub fn init(command: &Command) {
    let Some(filter) = filter_from_env() else { return };
    let installed = match command {
        Command::Lsp => registry().with(mnemo_lsp::log::client_log_layer().with_filter(filter)).try_init(),
        _ => registry().with(fmt::layer().with_writer(std::io::stderr).with_filter(filter)).try_init(),
    };
    if let Err(e) = installed {
        eprintln!("warning: {VARIABLE} is ignored: {e}");
    }
}

/// The filter `MNEMO_LOG` holds; `None` when it is unset or empty, or (with a
/// warning) not a filter.
fn filter_from_env() -> Option<EnvFilter> {
    let directives = std::env::var(VARIABLE).ok()?;
    parse_filter(&directives).unwrap_or_else(|e| {
        eprintln!("warning: {VARIABLE} is ignored: {e}");
        None
    })
}

fn parse_filter(directives: &str) -> Result<Option<EnvFilter>, String> {
    if directives.trim().is_empty() {
        return Ok(None);
    }
    EnvFilter::builder().parse(directives).map(Some).map_err(|e| {
        format!("'{directives}' is not a log filter ({e}); try {VARIABLE}=debug or {VARIABLE}=mnemo_store=debug")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_or_empty_means_no_log() {
        assert!(parse_filter("").unwrap().is_none());
        assert!(parse_filter("  ").unwrap().is_none());
    }

    #[test]
    fn levels_and_per_crate_directives_are_filters() {
        for directives in ["debug", "mnemo_lsp=trace", "warn,mnemo_store=debug"] {
            assert!(parse_filter(directives).unwrap().is_some(), "{directives}");
        }
    }

    #[test]
    fn a_malformed_filter_is_refused_with_an_example() {
        let error = parse_filter("mnemo_store=loud").unwrap_err();
        assert!(error.contains("'mnemo_store=loud' is not a log filter"), "{error}");
        assert!(error.contains("MNEMO_LOG=debug"), "{error}");
    }
}
