//! The `mnemo` binary: parses the command line, runs one command, and maps
//! failures to one-line errors and exit statuses (1 for errors, 2 for broken
//! lifecycle rules and usage errors).

mod app;
mod cli;
mod clock;
mod commands;
mod context;
mod logging;
mod output;
mod process_tree;
mod resident;
mod semantic;
mod stop_signals;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    logging::init(&cli.command);
    if !matches!(cli.command, cli::Command::Lsp | cli::Command::Mcp) {
        quiet_on_closed_pipe();
    }
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", context::one_line(&error));
            ExitCode::from(context::exit_status(&error))
        }
    }
}

/// `mnemo list | head`: when the reader stops early, end quietly as every
/// Unix tool does (killed by SIGPIPE) instead of panicking on a failed
/// print. The protocol servers keep Rust's default (the write fails, the
/// session ends cleanly).
fn quiet_on_closed_pipe() {
    // SAFETY: restoring the default disposition of one signal at start-up,
    // before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
