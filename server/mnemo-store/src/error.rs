//! Errors of the store. Each message says what failed and what to do; callers
//! branch on the variant (the CLI maps rule and transition errors to exit 2).

use std::path::PathBuf;

use mnemo_core::{NoteId, RuleError, TransitionError};

use crate::anchor::AnchorError;
use crate::config::ConfigError;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path} is not a mnemo store (not an SQLite database); move it aside or pass --store PATH")]
    NotAStore { path: PathBuf },
    #[error("{path} has schema version {found}, newer than this mnemo understands ({supported}); upgrade mnemo")]
    TooNew { path: PathBuf, found: i64, supported: i64 },
    #[error("cannot open the store at {path}: {reason}; check the path and its permissions, or pass --store PATH")]
    CannotOpen { path: PathBuf, reason: String },
    #[error(
        "the store at {path} could not be written: {reason}; nothing was written: free disk space (or lift the file-size limit), check the disk, and retry"
    )]
    WriteFailed { path: PathBuf, reason: String },
    #[error("the store at {path} is read-only; make it writable or pass --store PATH")]
    ReadOnly { path: PathBuf },
    #[error("the store at {path} stayed locked by another process for {seconds}s; retry, or find the stuck process")]
    Locked { path: PathBuf, seconds: u64 },
    #[error("no note #{id} in this workspace ({workspace}); `mnemo list` shows its notes")]
    NoSuchNote { id: NoteId, workspace: String },
    /// The owner is kept for callers, never shown: a refusal must not tell one
    /// workspace where another lives.
    #[error("note #{id} belongs to another workspace; pass --all-workspaces to reach it")]
    OtherWorkspace { id: NoteId, owner: String },
    #[error(
        "this checkout (epoch {epoch}) is unknown to this store: not handed out by it, or older than the 32 newest it keeps; nothing was applied and your text is unchanged: take a fresh checkout (`mnemo checkout`, `mnemo edit`) and copy your edits over"
    )]
    UnknownCheckout { epoch: i64 },
    #[error(
        "{root} claims workspace {id} (.mnemo/workspace.toml), which this store knows from {} — another repository, or a workspace of its own; this clone's origin is {origin}. If it is a clone of the same project, run `mnemo workspace join` here; otherwise remove or change .mnemo/workspace.toml (`mnemo workspace init --new`)",
        .known.join(", ")
    )]
    UnknownClone { id: String, root: String, origin: String, known: Vec<String> },
    #[error("PostgreSQL: {what}: {reason}")]
    Postgres { what: String, reason: String },
    #[error("this is a checkout of workspace {workspace}; check it in from there (or pass --workspace)")]
    CheckoutOfOtherWorkspace { workspace: String },
    #[error(
        "note #{id}: the clock says {}, before the note's latest event ({}); nothing was written: check the system clock (or MNEMO_NOW)",
        .at.rfc3339(), .latest.rfc3339()
    )]
    ClockBehind { id: NoteId, at: mnemo_core::Timestamp, latest: mnemo_core::Timestamp },
    #[error(
        "cannot upgrade the store at {path} from schema version {from}: {reason}; its version number does not match its tables (was it altered by hand?): restore it from a backup"
    )]
    BrokenSchema { path: PathBuf, from: i64, reason: String },
    #[error("note #{id}: {source}")]
    Transition { id: NoteId, source: TransitionError },
    #[error("cannot forget #{id}: the history of {} points at it as the successor; forget those first", list_ids(.predecessors))]
    ForgetBlocked { id: NoteId, predecessors: Vec<NoteId> },
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("note #{id} has no anchor number {position}")]
    NoSuchAnchor { id: NoteId, position: usize },
    #[error(transparent)]
    Anchor(#[from] AnchorError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("the store is inconsistent: {0}; run `mnemo store verify`")]
    Corrupt(String),
    #[error("store error: {0}")]
    Sqlite(rusqlite::Error),
}

impl StoreError {
    /// Whether the error is a broken lifecycle or creation rule (exit status 2).
    pub fn is_rule_violation(&self) -> bool {
        matches!(self, StoreError::Transition { .. } | StoreError::Rule(_) | StoreError::ForgetBlocked { .. })
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(e)
    }
}

fn list_ids(ids: &[NoteId]) -> String {
    ids.iter().map(|id| format!("#{id}")).collect::<Vec<_>>().join(", ")
}
