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
//! One event is one line: a message that holds line breaks (a database
//! client's SQL) is joined onto its line.

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
        _ => registry().with(fmt::layer().with_writer(|| OneLine(std::io::stderr())).with_filter(filter)).try_init(),
    };
    if let Err(e) = installed {
        eprintln!("warning: {VARIABLE} is ignored: {e}");
    }
}

/// A writer that keeps each log event on one line: the formatter writes an
/// event whole, and every line break inside it (with the indentation after
/// it) becomes one space.
struct OneLine<W>(W);

impl<W: std::io::Write> std::io::Write for OneLine<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(&one_line(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

fn one_line(event: &[u8]) -> Vec<u8> {
    let (body, end) = match event.strip_suffix(b"\n") {
        Some(body) => (body, &b"\n"[..]),
        None => (event, &b""[..]),
    };
    let mut out = Vec::with_capacity(event.len());
    let mut joining = false;
    for &byte in body {
        match byte {
            b'\n' | b'\r' => joining = true,
            b' ' | b'\t' if joining => {}
            _ => {
                if joining {
                    out.push(b' ');
                    joining = false;
                }
                out.push(byte);
            }
        }
    }
    out.extend_from_slice(end);
    out
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
    fn an_event_with_line_breaks_is_one_line() {
        let event = b"2026-12-06T00:00:00Z DEBUG tokio_postgres: SELECT 1\n         FROM notes\n  WHERE x\n";
        assert_eq!(one_line(event), b"2026-12-06T00:00:00Z DEBUG tokio_postgres: SELECT 1 FROM notes WHERE x\n");
        assert_eq!(one_line(b"plain\n"), b"plain\n");
    }

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
