//! The command line, declared with clap. Names here are the public interface:
//! extend them, do not rename them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use mnemo_core::{Kind, Priority};

#[derive(Parser)]
#[command(name = "mnemo", version, about = "A memory store for AI coding agents that people can read, review and edit")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args)]
pub struct Global {
    /// The store file [default: $XDG_DATA_HOME/mnemo/memory.db]
    #[arg(long, global = true, env = "MNEMO_STORE", value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// The workspace: a project directory [default: the git root of the current directory]
    #[arg(long, global = true, env = "MNEMO_WORKSPACE", value_name = "DIR")]
    pub workspace: Option<String>,
    /// Print data as JSON
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Record a note; prints its id as #<id>
    #[command(after_help = "Examples:
  mnemo remember --kind gotcha --priority high --title \"Release the lock before restarting\" \\
      --body \"Restarting with the lock held deadlocks.\" --anchor src/lock.rs:10-24
  mnemo remember --kind directive --title \"Run tests inside the venv\" --as-human")]
    Remember(Remember),
    /// Show one note in full
    Show(NoteRef),
    /// Show a note's events, oldest first
    History(NoteRef),
    /// List notes as the index tier, one line a note
    #[command(
        after_help = "Examples:\n  mnemo list\n  mnemo list --kind gotcha --state stale_flagged\n  mnemo list --all-workspaces --json"
    )]
    List(List),
    /// The review queue: notes agents proposed (`[review]` in .mnemo/config.toml), in full
    #[command(after_help = "Then:\n  mnemo accept 41 44\n  mnemo reject 45 --reason \"duplicates #12\"")]
    Review,
    /// Accept proposals: they become active, endorsed by you (a person's act)
    Accept(Accept),
    /// Reject a proposal: it is revoked with your reason (a person's act)
    #[command(after_help = "Example:\n  mnemo reject 45 --reason \"duplicates #12\"")]
    Reject(Reject),
    /// What was delivered to agents: each delivery's session, moment, notes and bytes, newest first
    #[command(after_help = "Examples:\n  mnemo ledger --since 2d\n  mnemo ledger --session 4f1c… --json")]
    Ledger(Ledger),
    /// Revoke a note (it was wrong)
    #[command(after_help = "Example:\n  mnemo revoke 12 --reason \"the lock order changed in v2\"")]
    Revoke(WithReason),
    /// Replace a note by a new one; prints the new id
    Supersede(Supersede),
    /// Flag a note as stale (it may no longer hold)
    FlagStale(WithReason),
    /// Make a revoked, expired or stale note active again
    Reinstate(Action),
    /// Raise a note's provenance one step: auto → agent → human
    Promote(Action),
    /// Expire a note now
    Expire(Action),
    /// Delete a note and its events for good (the only delete)
    Forget(Forget),
    /// Ranked recall: the index tier, what the filters hid, and which ranking ran
    #[command(after_help = "Examples:
  mnemo recall \"why does the daemon deadlock on restart\"
  mnemo recall retries --kind gotcha --kind finding --limit 5 --expand")]
    Recall(Recall),
    /// Full bodies, anchors and provenance of notes
    Expand(Expand),
    /// The session-start bundle: every active directive, then the index tier for the query
    Context(ContextArgs),
    /// Re-embed every note with the loaded model (after installing or changing it)
    Reindex,
    /// Measure recall against labelled queries: recall@k, MRR, misses by stage
    Eval(Eval),
    /// Render the read-only MEMORY.md mirror; --enable keeps it current after every write
    Export(Export),
    /// Render an editable checkout of the memory (stdout, or --out FILE)
    Checkout(Checkout),
    /// Check in an edited checkout FILE: every change becomes events, per entry
    #[command(after_help = "Examples:
  mnemo checkout --out /tmp/memory.md   # edit it, then:
  mnemo checkin /tmp/memory.md
  mnemo checkin /tmp/memory.md --keep-mine 12   # after a conflict on #12")]
    Checkin(Checkin),
    /// Edit the memory in $VISUAL/$EDITOR: checkout, edit, check in
    Edit,
    /// Check every anchor of the workspace's notes against its file; flag notes whose text drifted
    Check,
    /// Speak the Language Server Protocol over stdio (for VS Code, Neovim, …)
    Lsp,
    /// Serve the Model Context Protocol over stdio (for agents: remember, recall, …)
    Mcp,
    /// Keep the embedding model loaded for other mnemo processes (started on demand; exits when idle)
    Daemon(Daemon),
    /// Agent-harness hooks: push memory into the agent's context at fixed moments
    #[command(subcommand)]
    Hook(HookCommand),
    /// Which workspace this is: its id, how it was found, the directories that share it
    #[command(after_help = "Examples:
  mnemo workspace            # the id, how it was found, where else it is checked out
  mnemo workspace init       # commit an id in .mnemo/workspace.toml: every clone shares one memory
  mnemo workspace join       # vouch for a committed id this store knows from another origin")]
    Workspace(WorkspaceArgs),
    /// Store maintenance
    #[command(subcommand)]
    Store(StoreCommand),
    /// Import notes from a file
    #[command(subcommand)]
    Import(ImportCommand),
}

#[derive(Args)]
pub struct WorkspaceArgs {
    #[command(subcommand)]
    pub action: Option<WorkspaceAction>,
}

#[derive(Subcommand)]
pub enum WorkspaceAction {
    /// Write a new id to .mnemo/workspace.toml (commit it); this directory's notes move to it
    Init {
        /// Replace an id already there (a copied or hostile one) with a new one
        #[arg(long)]
        new: bool,
    },
    /// Join the id .mnemo/workspace.toml claims although this store knows it from another origin
    Join,
}

#[derive(ValueEnum, Clone, Copy, PartialEq, Eq)]
pub enum RequestedProvenance {
    Auto,
    Agent,
}

#[derive(Args)]
pub struct Remember {
    /// directive, task, gotcha, finding, reference, decision or operational
    #[arg(long, value_parser = parse_word::<Kind>)]
    pub kind: Kind,
    /// One line that says it all (at most 500 characters)
    #[arg(long)]
    pub title: String,
    /// The detail, any number of lines (at most 64 KiB)
    #[arg(long, default_value = "")]
    pub body: String,
    /// high, medium or low
    #[arg(long, default_value = "medium", value_parser = parse_word::<Priority>)]
    pub priority: Priority,
    /// A code location PATH:START-END inside the workspace (repeatable)
    #[arg(long = "anchor", value_name = "PATH:START-END")]
    pub anchors: Vec<String>,
    /// auto: captured from tool output; agent: written by an agent
    #[arg(long, value_enum, default_value = "agent")]
    pub provenance: RequestedProvenance,
    /// The user's current message; a note stated in it verbatim becomes user-stated
    #[arg(long, value_name = "TEXT")]
    pub user_message: Option<String>,
    /// A note this one proves wrong: it is revoked, "contradicted by" the new one
    #[arg(long, value_name = "ID", value_parser = parse_id)]
    pub contradicts: Option<i64>,
    /// Keep it even though it looks like it holds a secret (with --as-human only)
    #[arg(long)]
    pub allow_secret: bool,
    #[command(flatten)]
    pub person: Person,
}

#[derive(Args)]
pub struct Person {
    /// You are a person, not an agent: record with provenance/actor human
    #[arg(long)]
    pub as_human: bool,
}

#[derive(Args)]
pub struct NoteRef {
    /// Note id (#12 or 12)
    #[arg(value_parser = parse_id)]
    pub id: i64,
    /// Reach notes of every workspace
    #[arg(long)]
    pub all_workspaces: bool,
}

#[derive(Args)]
pub struct List {
    #[arg(long, value_parser = parse_word::<Kind>)]
    pub kind: Option<Kind>,
    /// active, superseded, revoked, stale_flagged or expired
    #[arg(long, value_parser = parse_state)]
    pub state: Option<String>,
    /// List notes of every workspace
    #[arg(long)]
    pub all_workspaces: bool,
}

#[derive(Args)]
pub struct WithReason {
    /// The note's id (12 or #12)
    #[arg(value_parser = parse_id)]
    pub id: i64,
    /// Why, in a sentence (kept in the note's history)
    #[arg(long)]
    pub reason: String,
    #[command(flatten)]
    pub person: Person,
}

#[derive(Args)]
pub struct Ledger {
    /// Only this agent session (a harness's session id; `cli`; `mcp-PID`)
    #[arg(long)]
    pub session: Option<String>,
    /// Only since then: a date (2026-08-01), a time (2026-08-01T12:00:00Z), or an age (90m, 12h, 7d)
    #[arg(long, value_parser = parse_since)]
    pub since: Option<Since>,
    /// Only the deliveries that held this note (in full or listed)
    #[arg(long, value_name = "ID")]
    pub note: Option<mnemo_core::NoteId>,
    /// At most this many deliveries, newest first
    #[arg(long, default_value = "50")]
    pub limit: usize,
}

/// `--since`: a moment, or an age before now.
#[derive(Debug, Clone, Copy)]
pub enum Since {
    At(mnemo_core::Timestamp),
    Ago(i64),
}

fn parse_since(text: &str) -> Result<Since, String> {
    if let Some(at) = mnemo_core::Timestamp::parse(text) {
        return Ok(Since::At(at));
    }
    let unit = |suffix: char, seconds: i64| {
        text.strip_suffix(suffix).and_then(|n| n.parse::<i64>().ok()).filter(|n| *n >= 0).map(|n| n * seconds)
    };
    unit('m', 60).or_else(|| unit('h', 3600)).or_else(|| unit('d', 86_400)).map(Since::Ago).ok_or_else(|| {
        format!("'{text}' is not a date (2026-08-01), a time (2026-08-01T12:00:00Z) or an age (90m, 12h, 7d)")
    })
}

#[derive(Args)]
pub struct Accept {
    /// The proposals' ids (12 or #12)
    #[arg(value_parser = parse_id, required = true, num_args = 1..)]
    pub ids: Vec<i64>,
}

#[derive(Args)]
pub struct Reject {
    /// The proposal's id (12 or #12)
    #[arg(value_parser = parse_id)]
    pub id: i64,
    /// Why, in a sentence (kept in the note's history)
    #[arg(long)]
    pub reason: String,
}

#[derive(Args)]
pub struct Action {
    /// The note's id (12 or #12)
    #[arg(value_parser = parse_id)]
    pub id: i64,
    /// Why, in a sentence (kept in the note's history)
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub person: Person,
}

#[derive(Args)]
pub struct Supersede {
    /// The note to replace (12 or #12)
    #[arg(value_parser = parse_id)]
    pub id: i64,
    /// The new note's title
    #[arg(long)]
    pub title: String,
    /// [default: the old note's body]
    #[arg(long)]
    pub body: Option<String>,
    /// [default: the old note's priority]
    #[arg(long, value_parser = parse_word::<Priority>)]
    pub priority: Option<Priority>,
    /// [default: the old note's kind]
    #[arg(long, value_parser = parse_word::<Kind>)]
    pub kind: Option<Kind>,
    /// Anchors of the new note [default: the old note's anchors]
    #[arg(long = "anchor", value_name = "PATH:START-END")]
    pub anchors: Vec<String>,
    #[arg(long)]
    pub reason: Option<String>,
    #[arg(long, value_name = "TEXT")]
    pub user_message: Option<String>,
    #[command(flatten)]
    pub person: Person,
}

#[derive(Args)]
pub struct Forget {
    /// The note to delete with its whole history (12 or #12)
    #[arg(value_parser = parse_id)]
    pub id: i64,
    /// Required: forgetting cannot be undone
    #[arg(long)]
    pub confirm: bool,
}

/// Results `mnemo recall` returns unless `--limit` says otherwise.
pub const DEFAULT_LIMIT: usize = 10;

#[derive(Args)]
pub struct Recall {
    /// What you are about to do or want to know
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Only these kinds (repeatable) [default: every kind]
    #[arg(long = "kind", value_parser = parse_word::<Kind>)]
    pub kinds: Vec<Kind>,
    #[arg(long, default_value_t = DEFAULT_LIMIT)]
    pub limit: usize,
    /// Return stale-flagged notes as results instead of counting them
    #[arg(long)]
    pub include_stale: bool,
    /// Return superseded notes as results too (never above their successors)
    #[arg(long)]
    pub include_superseded: bool,
    /// Print full bodies instead of the index tier
    #[arg(long)]
    pub expand: bool,
    /// Return the best matches even when none is a confident match
    #[arg(long)]
    pub all: bool,
}

#[derive(Args)]
pub struct Expand {
    #[arg(required = true, value_parser = parse_id)]
    pub ids: Vec<i64>,
    #[arg(long)]
    pub all_workspaces: bool,
}

/// `mnemo hook …`: the moments a harness calls, and the installer.
#[derive(Subcommand)]
pub enum HookCommand {
    /// The session starts: every active directive in full, then the most recent notes as one line each
    SessionStart(Delivery),
    /// The user sent a prompt: keep it for quote binding, deliver the notes relevant to it
    UserPrompt(Delivery),
    /// The agent is about to edit files: the notes anchored to them or naming them, with their bodies
    PreEdit(Delivery),
    /// The context was compacted: the directives again, and everything may be delivered again
    PostCompaction(Delivery),
    /// Install the hooks and the MCP server into an agent harness (--claude-code, --codex)
    #[command(after_help = "Examples:
  mnemo hook install --claude-code
  mnemo hook install --claude-code --approve-mcp --absolute
  mnemo hook install --codex")]
    Install(HookInstall),
}

#[derive(Args)]
pub struct Delivery {
    /// The most context to print, in tokens (about 4 characters each); directives are never cut
    #[arg(long, default_value_t = mnemo_core::delivery::DEFAULT_HOOK_TOKENS)]
    pub budget: usize,
    /// Say on stderr why nothing (or what) was delivered
    #[arg(long)]
    pub explain: bool,
}

#[derive(Args)]
#[command(group = clap::ArgGroup::new("harness").required(true).multiple(true))]
pub struct HookInstall {
    /// Claude Code: hooks into .claude/settings.json, the MCP server into .mcp.json
    #[arg(long, group = "harness")]
    pub claude_code: bool,
    /// Codex: hooks into .codex/hooks.json, the MCP server into .codex/config.toml
    #[arg(long, group = "harness")]
    pub codex: bool,
    /// Call this mnemo binary by its absolute path (and name the store, when it is not the default)
    /// instead of a bare `mnemo` found on the harness's PATH
    #[arg(long)]
    pub absolute: bool,
    /// Claude Code: approve the project's MCP server in .claude/settings.local.json (personal,
    /// not committed), where the approval takes effect without trusting the workspace first
    #[arg(long, requires = "claude_code")]
    pub approve_mcp: bool,
}

#[derive(Args)]
pub struct ContextArgs {
    /// The task at hand; without it, the most recent notes follow the directives
    pub query: Vec<String>,
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Tokens (about four characters each) the directives' bodies share; one over its share is cut, saying so
    #[arg(long, default_value_t = 4000)]
    pub budget: usize,
}

#[derive(Args)]
pub struct Eval {
    /// Labelled queries (the schema of eval/queries.jsonl)
    #[arg(long)]
    pub queries: PathBuf,
    /// Load this corpus (eval/corpus.jsonl schema) into a fresh temporary
    /// store first [default: query the current store; its ids must be the corpus ids]
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Load the corpus into this empty PostgreSQL database (a postgres:// URL)
    /// instead of a temporary file, so recall runs on the database's full-text
    /// search and pgvector; the database keeps the corpus afterwards
    #[arg(long, value_name = "URL", requires = "corpus")]
    pub into: Option<String>,
    #[arg(long, default_value_t = 5)]
    pub k: usize,
    /// Candidates taken from each source
    #[arg(long, default_value_t = mnemo_store::recall::DEFAULT_POOL)]
    pub pool: usize,
    /// Fusion to measure: `weighted:VECTOR,LEXICAL` or `rrf:K,VECTOR,LEXICAL` [default: the built-in choice]
    #[arg(long, value_parser = parse_fusion)]
    pub fusion: Option<mnemo_core::recall::Fusion>,
    /// How many of the hybrid's best candidates late interaction reranks (0: measure the first stage alone)
    #[arg(long, default_value_t = mnemo_store::recall::DEFAULT_RERANK)]
    pub rerank: usize,
    /// Compare model directories side by side on the same corpus and queries
    /// (give it twice or more; each embeds the corpus into its own temporary store)
    #[arg(long = "model", value_name = "DIR")]
    pub models: Vec<PathBuf>,
}

#[derive(Args)]
pub struct Daemon {
    /// Exit after this many seconds with no client connected [default: MNEMO_DAEMON_IDLE_SECONDS, else 600]
    #[arg(long, value_name = "SECONDS")]
    pub idle_seconds: Option<u64>,
}

#[derive(Args)]
pub struct Export {
    /// Where to write, inside the workspace [default: the configured path, else MEMORY.md]
    #[arg(long, value_name = "FILE")]
    pub path: Option<PathBuf>,
    /// Opt this workspace in: every write from now on keeps the mirror current
    #[arg(long, conflicts_with_all = ["disable", "watch"])]
    pub enable: bool,
    /// Opt this workspace out; the file is left as it is
    #[arg(long, conflicts_with = "watch")]
    pub disable: bool,
    /// Keep running and re-render after writes by any process; stops at the end of stdin or Ctrl-C.
    /// For the workspace's own mirror (enabled, no --path) writers leave their renders to this process
    #[arg(long)]
    pub watch: bool,
}

#[derive(Args)]
pub struct Checkout {
    /// Write the checkout to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Args)]
pub struct Checkin {
    /// A checkout (from `mnemo checkout --out FILE`) that you edited; it is
    /// rewritten at the new epoch, keeping what was not applied as you typed it
    pub file: PathBuf,
    /// Resolve a conflict on note ID by applying your edit on top of the store's version
    #[arg(long = "keep-mine", value_name = "ID")]
    pub keep_mine: Vec<i64>,
    /// Resolve a conflict on note ID by dropping your edit (the store's version stays)
    #[arg(long = "take-theirs", value_name = "ID")]
    pub take_theirs: Vec<i64>,
}

#[derive(Subcommand)]
pub enum StoreCommand {
    /// Replay the event log and compare it with the state cache; exit 1 on any difference
    Verify,
    /// Counts of notes, events and states
    Stats {
        #[arg(long)]
        all_workspaces: bool,
    },
    /// Copy a store (every event, state and vector) into a PostgreSQL database; again copies only what is new
    #[command(after_help = "Examples:
  mnemo store copy --to postgres://mnemo@db.internal/mnemo
  mnemo store copy --from ~/old/memory.db --to 'postgres:///mnemo?host=/run/postgresql'")]
    Copy {
        /// The SQLite store to copy [default: this store]
        #[arg(long)]
        from: Option<PathBuf>,
        /// The PostgreSQL database: a postgres:// URL (a Unix socket as ?host=/dir)
        #[arg(long)]
        to: String,
    },
}

#[derive(Subcommand)]
pub enum ImportCommand {
    /// JSON Lines, one note record a line (the schema: docs/import-jsonl.md, as eval/corpus.jsonl)
    Jsonl {
        file: PathBuf,
        #[command(flatten)]
        person: Person,
    },
    /// A CLAUDE.md: each bullet or paragraph becomes a directive (provenance human); re-importing adds only new ones
    ClaudeMd { file: PathBuf },
    /// An AGENTS.md, the same way
    AgentsMd { file: PathBuf },
    /// A vectr store (SQLite): its notes and event log replayed as events, in order; re-importing adds only new notes
    Vectr {
        db: PathBuf,
        /// The vectr workspace to import (default: the only one, else the one named like this workspace)
        #[arg(long)]
        from_workspace: Option<String>,
    },
}

pub(crate) fn parse_word<T: std::str::FromStr<Err = mnemo_core::ParseEnumError>>(text: &str) -> Result<T, String> {
    text.parse().map_err(|e: mnemo_core::ParseEnumError| e.to_string())
}

fn parse_fusion(text: &str) -> Result<mnemo_core::recall::Fusion, String> {
    use mnemo_core::recall::Fusion;
    let bad = || {
        format!("'{text}' is not a fusion; use weighted:VECTOR,LEXICAL (e.g. weighted:1,0.3) or rrf:K,VECTOR,LEXICAL")
    };
    let (name, numbers) = text.split_once(':').ok_or_else(bad)?;
    let numbers: Vec<f64> =
        numbers.split(',').map(|n| n.trim().parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
    match (name, numbers.as_slice()) {
        ("weighted", [vector, lexical]) => Ok(Fusion::Weighted { vector: *vector, lexical: *lexical }),
        ("rrf", [k, vector, lexical]) => Ok(Fusion::Rrf { k: *k, vector: *vector, lexical: *lexical }),
        ("saturating", [lexical, half]) => Ok(Fusion::Saturating { lexical: *lexical, half: *half }),
        _ => Err(bad()),
    }
}

fn parse_id(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix('#').unwrap_or(text);
    match digits.parse::<i64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(format!("'{text}' is not a note id; ids look like 12 or #12")),
    }
}

fn parse_state(text: &str) -> Result<String, String> {
    let names = mnemo_core::Status::NAMES;
    let normalized = if text == "stale" { "stale_flagged" } else { text };
    if names.contains(&normalized) {
        Ok(normalized.to_string())
    } else {
        Err(format!("unknown state '{text}'; expected one of: {}", names.join(", ")))
    }
}
