//! Running the drift check: at start, after the store changes (notes and
//! their anchors may have changed), and when an anchored file changes on
//! disk. A `notify` watch covers only the directories that hold anchored
//! files (so ignored trees such as `target/` or `node_modules/` are never
//! watched unless a note is anchored there), events for other files are
//! dropped, and a burst of requests is waited out ([`TIMING`], through
//! `debounced.rs`: a steady stream of edits is still checked every few
//! seconds); each check (with what the ledger and the session-start
//! budget say of the notes) updates the [`DriftSnapshot`] and has every open
//! document's diagnostics republished when the picture changed.
//!
//! `[memory_export] debounce_seconds` does not apply here: this wait is for
//! anchored source files and the notes' anchors, not for the mirror.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use mnemo_store::Store;
use mnemo_store::workspace::Workspace;
use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::Clock;
use crate::anchors::{DriftSnapshot, DriftState};
use crate::debounced::{DebouncedPokes, Timing};
use crate::documents::DocumentEvent;

/// A burst of requests is over after 200 ms of quiet; a steady stream is
/// checked at least every two seconds.
const TIMING: Timing = Timing { quiet: Duration::from_millis(200), max_wait: Duration::from_secs(2) };

pub struct DriftWatch {
    pub store_path: Arc<RwLock<PathBuf>>,
    pub workspace: Arc<OnceLock<Workspace>>,
    pub fallback: Workspace,
    pub clock: Clock,
    pub snapshot: DriftSnapshot,
    pub documents: UnboundedSender<DocumentEvent>,
}

/// How long a request that needs the anchors waits for the first check.
const FIRST_CHECK_WAIT: Duration = Duration::from_secs(5);

/// Whether the first drift check has run (whatever it found). A hover, code
/// action or code lens asked in a source file before then waits for it, at
/// most [`FIRST_CHECK_WAIT`]: a server started by opening that file is
/// asked at once, before its first check (200 ms of quiet, then the check)
/// has found any anchor.
#[derive(Clone)]
pub struct FirstCheck(tokio::sync::watch::Receiver<bool>);

impl FirstCheck {
    pub async fn ran(&self) {
        let mut ran = self.0.clone();
        let _ = tokio::time::timeout(FIRST_CHECK_WAIT, ran.wait_for(|ran| *ran)).await;
    }
}

/// Marks a check as run when dropped: at the end of each check, whichever
/// way it ends.
struct MarkRan<'a>(&'a tokio::sync::watch::Sender<bool>);

impl Drop for MarkRan<'_> {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

/// Start the checking task; send `()` to ask for a check.
pub fn spawn(watch: DriftWatch) -> (UnboundedSender<()>, FirstCheck) {
    let (requests, received) = unbounded_channel::<()>();
    let again = requests.clone();
    let (ran, first) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        let anchored: Arc<Mutex<BTreeSet<PathBuf>>> = Arc::default();
        let mut watcher: Option<notify::RecommendedWatcher> = None;
        let mut watched: BTreeSet<PathBuf> = BTreeSet::new();
        let mut requested = DebouncedPokes::new("drift check", received, TIMING);
        while requested.burst().await {
            let _ran = MarkRan(&ran);
            let workspace = watch.workspace.get().cloned().unwrap_or_else(|| watch.fallback.clone());
            let path = watch.store_path.read().unwrap_or_else(|e| e.into_inner()).clone();
            let now = (watch.clock)();
            let checked = workspace.clone();
            let report = tokio::task::spawn_blocking(move || {
                let mut store = Store::open(&path)?;
                let since = mnemo_core::Timestamp(now.0 - crate::anchors::QUIET_DAYS * 86_400);
                Ok::<_, mnemo_store::StoreError>((
                    store.check_drift(&checked, now)?,
                    store.quiet_notes(&checked.id, since)?,
                    cut_at_start(&store, &checked, now)?,
                ))
            })
            .await;
            let (report, quiet, start_cut) = match report {
                Ok(Ok(found)) => found,
                Ok(Err(e)) => {
                    eprintln!("mnemo lsp: the drift check failed: {e}");
                    continue;
                }
                Err(_) => continue,
            };
            let Some(root) = workspace.root.clone() else {
                tracing::debug!(workspace = workspace.id, "drift check: the workspace has no directory to watch");
                continue;
            };
            let files: BTreeSet<PathBuf> = report.anchors.iter().map(|c| root.join(&c.anchor.path)).collect();
            let dirs: BTreeSet<PathBuf> =
                files.iter().filter_map(|f| f.parent().map(PathBuf::from)).filter(|d| d.is_dir()).collect();
            *anchored.lock().unwrap_or_else(|e| e.into_inner()) = files;
            // Watch before showing the result: a file changed as soon as the
            // result shows must be seen. A new watch missed what changed while
            // this check read the files, so one more check follows it.
            if dirs != watched {
                tracing::debug!(
                    dirs = dirs.len(),
                    "drift check: the anchored directories changed; watching them, checking again"
                );
                watcher = watch_dirs(&dirs, anchored.clone(), again.clone());
                watched = dirs;
                let _ = again.send(());
            }
            let anchor_count = report.anchors.len();
            let changed = {
                let mut state = watch.snapshot.lock().unwrap_or_else(|e| e.into_inner());
                let mut next = DriftState::after(&state, root, report.anchors);
                next.quiet = quiet;
                next.start_cut = start_cut;
                let changed = next.checks != state.checks
                    || next.last_seen != state.last_seen
                    || next.quiet != state.quiet
                    || next.start_cut != state.start_cut
                    || state.root.is_none();
                *state = next;
                changed
            };
            // Only a changed picture is republished (and has the client re-ask for lenses).
            tracing::debug!(anchors = anchor_count, changed, "drift check ran");
            if changed {
                let _ = watch.documents.send(DocumentEvent::Republish);
            }
        }
        drop(watcher);
    });
    (requests, FirstCheck(first))
}

/// The notes whose bodies the session-start hook cuts at its default budget,
/// by the workspace's trigger bundles (the defaults when its config is unreadable).
fn cut_at_start(
    store: &Store,
    workspace: &Workspace,
    now: mnemo_core::Timestamp,
) -> Result<Vec<mnemo_core::NoteId>, mnemo_store::StoreError> {
    use mnemo_core::delivery::{DEFAULT_HOOK_TOKENS, at_start, cut_at_start};
    use mnemo_core::triggers::Moment;
    let config = mnemo_store::config::WorkspaceConfig::load(workspace.root.as_deref()).unwrap_or_default();
    let kinds = config.triggers.kinds_at(Moment::SessionStart);
    let whole = store.active_notes_of(&mnemo_store::Scope::Workspace(workspace.id.clone()), &kinds)?;
    let selection = at_start(&whole, &config.triggers, Moment::SessionStart);
    Ok(cut_at_start(&selection, now, DEFAULT_HOOK_TOKENS))
}

/// Watch `dirs` (not recursively); a change to an anchored file asks for a check.
fn watch_dirs(
    dirs: &BTreeSet<PathBuf>,
    anchored: Arc<Mutex<BTreeSet<PathBuf>>>,
    requests: UnboundedSender<()>,
) -> Option<notify::RecommendedWatcher> {
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        // Reading a file (the check itself does) is no change to it.
        if matches!(event.kind, notify::EventKind::Access(_)) {
            return;
        }
        let files = anchored.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(path) = event.paths.iter().find(|p| files.contains(*p)) {
            tracing::debug!(path = %path.display(), "an anchored file changed: drift check requested");
            let _ = requests.send(());
        }
    })
    .map_err(|e| eprintln!("mnemo lsp: cannot watch anchored files: {e}"))
    .ok()?;
    for dir in dirs {
        if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
            eprintln!("mnemo lsp: cannot watch {}: {e}", dir.display());
        }
    }
    Some(watcher)
}
