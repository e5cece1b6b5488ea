//! Keeping the mirror current in a long-lived process (`mnemo export
//! --watch`; the language server keeps it from its own store watch,
//! `mnemo-lsp/src/refresh.rs`). One worker thread owns its own store
//! connection.
//!
//! - [`MirrorSync::start`]: the debounced worker. It is poked by this
//!   process's commits (a commit listener on the one write path) and by a
//!   file watch on the store, which sees other processes' writes; a
//!   [`Debouncer`] turns a burst into one render. Nothing renders on a
//!   timer: with no writes, the worker sleeps. A failed render is reported
//!   and retried on the next poke.
//! - [`MirrorSync::stand`] (`stand.rs`): the worker that stands for the
//!   mirror (`mirror/standing.rs`): every writer leaves the render to it,
//!   so it renders promptly — at most every `stand::pace`, not after a quiet
//!   spell — and looks on a timer too (a sign of life; a lost poke).
//!
//! Neither ever touches the write that triggered a render.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mnemo_core::debounce::{Debouncer, default_max_wait};

use super::{ExportOutcome, MirrorError, MirrorTarget, keep_current};
use crate::store::Store;
use crate::store_watch::{StoreWatcher, watch_store};
use crate::workspace::Workspace;

/// What the worker reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MirrorEvent {
    Rendered { epoch: i64, written: bool },
    Failed(String),
}

mod stand;

enum Message {
    Poke,
    Flush(mpsc::Sender<()>),
    Stop,
}

/// A running mirror worker; dropping it renders what is pending and stops.
pub struct MirrorSync {
    sender: mpsc::Sender<Message>,
    worker: Option<JoinHandle<()>>,
    _watcher: Option<StoreWatcher>,
}

impl MirrorSync {
    /// Start the worker. It renders at once if the mirror is behind the store.
    /// Store-open and watch failures are reported through `report`.
    pub fn start(
        store_path: &Path,
        target: MirrorTarget,
        debounce: Duration,
        report: impl Fn(MirrorEvent) + Send + 'static,
    ) -> MirrorSync {
        let (sender, receiver) = mpsc::channel();
        let watcher =
            watch_store(store_path, poker(&sender)).map_err(|e| report(MirrorEvent::Failed(watch_failed(&e))));
        let store_path = store_path.to_path_buf();
        let worker = std::thread::Builder::new()
            .name("mnemo-mirror".into())
            .spawn(move || run(store_path, target, debounce, receiver, report))
            .expect("spawning the mirror thread");
        MirrorSync { sender, worker: Some(worker), _watcher: watcher.ok() }
    }

    /// Start a worker that stands for `workspace`'s mirror while its config
    /// keeps one and no other process stands for it, rendering every
    /// writer's writes. Only the process that stands watches the store (a
    /// watch costs every process that holds one a wake-up per write); one
    /// that does not looks again every `stand::RETRY`. When it is dropped it
    /// stops standing and catches the mirror up once more.
    pub fn stand(store_path: &Path, workspace: Workspace, report: impl Fn(MirrorEvent) + Send + 'static) -> MirrorSync {
        let (sender, receiver) = mpsc::channel();
        let (store_path, pokes) = (store_path.to_path_buf(), sender.clone());
        let worker = std::thread::Builder::new()
            .name("mnemo-mirror".into())
            .spawn(move || stand::stand_for_writers(store_path, workspace, pokes, receiver, report))
            .expect("spawning the mirror thread");
        MirrorSync { sender, worker: Some(worker), _watcher: None }
    }

    /// Tell the worker this process committed a write.
    pub fn poke(&self) {
        let _ = self.sender.send(Message::Poke);
    }

    /// A commit listener for [`Store::on_commit`] that pokes this worker.
    pub fn commit_listener(&self) -> impl FnMut(i64) + Send + 'static {
        let sender = self.sender.clone();
        move |_epoch| {
            let _ = sender.send(Message::Poke);
        }
    }

    /// Render now if the mirror is behind, and wait for it.
    pub fn flush(&self) {
        let (ack, done) = mpsc::channel();
        if self.sender.send(Message::Flush(ack)).is_ok() {
            let _ = done.recv();
        }
    }
}

/// A store watch's callback that pokes the worker behind `sender`.
fn poker(sender: &mpsc::Sender<Message>) -> impl Fn() + Send + 'static {
    let poke = std::sync::Mutex::new(sender.clone());
    move || {
        let _ = poke.lock().map(|s| s.send(Message::Poke));
    }
}

fn watch_failed(e: &notify::Error) -> String {
    format!("cannot watch the store for other processes' writes: {e}")
}

impl Drop for MirrorSync {
    fn drop(&mut self) {
        let _ = self.sender.send(Message::Stop);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn run(
    store_path: PathBuf,
    target: MirrorTarget,
    debounce: Duration,
    receiver: mpsc::Receiver<Message>,
    report: impl Fn(MirrorEvent),
) {
    let store = match Store::open(&store_path) {
        Ok(store) => store,
        Err(e) => {
            report(MirrorEvent::Failed(e.to_string()));
            return;
        }
    };
    let started = Instant::now();
    let now = || started.elapsed().as_millis() as u64;
    let quiet = debounce.as_millis() as u64;
    let mut debouncer = Debouncer::new(quiet, default_max_wait(quiet));
    let render_if_behind = || report_outcome(&report, keep_current(&store, &target));
    render_if_behind();
    loop {
        let message = match debouncer.deadline() {
            Some(deadline) => receiver.recv_timeout(Duration::from_millis(deadline.saturating_sub(now()))),
            None => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match message {
            Ok(Message::Poke) => debouncer.poke(now()),
            Ok(Message::Flush(ack)) => {
                render_if_behind();
                let _ = ack.send(());
            }
            Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => {
                if debouncer.is_pending() {
                    render_if_behind();
                }
                return;
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if debouncer.fire(now()) {
            render_if_behind();
        }
    }
}

fn report_outcome(report: &impl Fn(MirrorEvent), outcome: Result<Option<ExportOutcome>, MirrorError>) {
    match outcome {
        Ok(None) => {}
        Ok(Some(outcome)) => report(MirrorEvent::Rendered { epoch: outcome.epoch, written: outcome.written }),
        Err(e) => report(MirrorEvent::Failed(e.to_string())),
    }
}
