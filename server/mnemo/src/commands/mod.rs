//! The command line: one module per group of subcommands, each a thin
//! adapter over `crate::app` (parse, call, print); `run` dispatches.

mod check;
mod checkin;
mod daemon;
mod eval;
mod export;
mod hook;
mod import;
mod ledger;
mod lifecycle;
mod lsp;
mod mcp;
mod read;
mod recall;
mod remember;
mod review;
mod store;
mod workspace;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::context::Context;

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // Which workspace this is, asked of the store itself (a refused id is its answer).
    if let Command::Workspace(args) = cli.command {
        return workspace::run(&cli.global, args);
    }
    let ctx = Context::new(&cli.global)?;
    match cli.command {
        Command::Remember(args) => remember::run(&ctx, args),
        Command::Show(args) => read::show(&ctx, args),
        Command::History(args) => read::history(&ctx, args),
        Command::List(args) => read::list(&ctx, args),
        Command::Review => review::list(&ctx),
        Command::Ledger(args) => ledger::run(&ctx, args),
        Command::Accept(args) => review::accept(&ctx, args),
        Command::Reject(args) => review::reject(&ctx, args),
        Command::Revoke(args) => lifecycle::revoke(&ctx, args),
        Command::Supersede(args) => lifecycle::supersede(&ctx, args),
        Command::FlagStale(args) => lifecycle::flag_stale(&ctx, args),
        Command::Reinstate(args) => lifecycle::reinstate(&ctx, args),
        Command::Promote(args) => lifecycle::promote(&ctx, args),
        Command::Expire(args) => lifecycle::expire(&ctx, args),
        Command::Forget(args) => lifecycle::forget(&ctx, args),
        Command::Recall(args) => recall::recall(&ctx, args),
        Command::Expand(args) => recall::expand(&ctx, args),
        Command::Context(args) => recall::context(&ctx, args),
        Command::Reindex => recall::reindex(&ctx),
        Command::Eval(args) => eval::run(&ctx, args),
        Command::Export(args) => export::export(&ctx, args),
        Command::Checkout(args) => export::checkout(&ctx, args),
        Command::Checkin(args) => checkin::checkin(&ctx, args),
        Command::Edit => checkin::edit(&ctx),
        Command::Check => check::run(&ctx),
        Command::Lsp => lsp::run(&ctx),
        Command::Mcp => mcp::run(ctx),
        Command::Daemon(args) => daemon::run(&ctx, args),
        Command::Hook(args) => hook::run(&ctx, args),
        Command::Workspace(_) => unreachable!("answered above"),
        Command::Store(command) => store::run(&ctx, command),
        Command::Import(command) => import::run(&ctx, command),
    }
}
