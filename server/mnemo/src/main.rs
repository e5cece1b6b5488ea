//! The `mnemo` binary: parses the command line, runs one command, and maps
//! failures to one-line errors and exit statuses (1 for errors, 2 for broken
//! lifecycle rules and usage errors).

mod cli;
mod commands;
mod context;
mod output;
mod process_tree;
mod semantic;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", context::one_line(&error));
            ExitCode::from(context::exit_status(&error))
        }
    }
}
