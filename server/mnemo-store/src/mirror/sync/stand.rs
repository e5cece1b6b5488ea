//! The standing worker (`MirrorSync::stand`): stand for the mirror when no
//! other process does (`mirror/standing.rs`), render every writer's writes
//! while standing — at most once per [`pace`] — and, on stopping,
//! stop standing and catch the mirror up once more as any writer would.
//!
//! Only while standing does it watch the store: every process holding a
//! watch wakes for each write (under sixteen writers, eight servers each
//! watching took a fifth of the machine). Standing, it also looks every
//! `standing::HEARTBEAT` (its sign of life, and a lost poke found); not
//! standing, every [`RETRY`] — meanwhile writers render as they would
//! without it.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{Message, MirrorEvent, poker, watch_failed};
use crate::mirror::standing::{self, Standing, Stood};
use crate::mirror::{ExportOutcome, MirrorError, MirrorTarget, enabled_target, keep_current};
use crate::store::Store;
use crate::store_watch::{StoreWatcher, watch_store};
use crate::workspace::Workspace;

/// How often at most a standing worker renders: a steady stream of writes
/// is shown within about this long of each write, in one render per pace.
pub(crate) const STANDING_PACE: Duration = Duration::from_millis(50);

/// The wait between two renders under a steady stream of writes: at least
/// [`STANDING_PACE`], and twice the last render's time, so that rendering
/// a large mirror takes at most a third of a core from the writers.
pub(crate) fn pace(last_render_took: Duration) -> Duration {
    STANDING_PACE.max(last_render_took * 2)
}

/// How often a worker that does not stand looks whether it could.
pub(crate) const RETRY: Duration = Duration::from_secs(2);

pub(super) fn stand_for_writers(
    store_path: PathBuf,
    workspace: Workspace,
    pokes: mpsc::Sender<Message>,
    receiver: mpsc::Receiver<Message>,
    report: impl Fn(MirrorEvent),
) {
    let store = match Store::open(&store_path) {
        Ok(store) => store,
        Err(e) => return report(MirrorEvent::Failed(e.to_string())),
    };
    let mut duty = Duty {
        store: &store,
        store_path: &store_path,
        workspace: &workspace,
        target: None,
        pokes: &pokes,
        report: &report,
        standing: None,
        watch: None,
        failed: None,
        cannot_stand: false,
    };
    let mut took = duty.serve();
    let mut last_render = Instant::now();
    loop {
        // Standing, it looks every heartbeat (a sign of life, and a poke
        // that was lost); not standing, every retry.
        let look = if duty.standing.is_some() { standing::HEARTBEAT } else { RETRY };
        let mut stopping = false;
        match receiver.recv_timeout(look) {
            Ok(Message::Poke) | Err(RecvTimeoutError::Timeout) => {}
            Ok(Message::Flush(ack)) => {
                took = duty.serve();
                let _ = ack.send(());
                continue;
            }
            Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => stopping = true,
        }
        // Writes keep coming in a burst: gather them until the pace allows a render.
        let next = last_render + pace(took);
        while !stopping && let Some(left) = next.checked_duration_since(Instant::now()) {
            match receiver.recv_timeout(left) {
                Ok(Message::Poke) => {}
                Ok(Message::Flush(ack)) => {
                    duty.serve();
                    let _ = ack.send(());
                }
                Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => stopping = true,
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        if stopping {
            break;
        }
        took = duty.serve();
        last_render = Instant::now();
    }
    // No longer standing: writers render again; what they left to this one is rendered now.
    duty.stop_standing();
    if let Some(target) = duty.enabled_target() {
        let outcome = keep_current(&store, &target);
        duty.tell(outcome);
    }
}

/// What a standing worker holds between renders.
struct Duty<'a, R> {
    store: &'a Store,
    store_path: &'a Path,
    workspace: &'a Workspace,
    /// The mirror as the workspace's config said at the last look.
    target: Option<MirrorTarget>,
    pokes: &'a mpsc::Sender<Message>,
    report: &'a R,
    standing: Option<Standing>,
    /// The store watch, held only while standing.
    watch: Option<StoreWatcher>,
    /// The problem of this worker's last render, when it failed: it does
    /// not stand again until a render of its own succeeds, so the writers
    /// render, and each sees the problem; and a problem is told once.
    failed: Option<String>,
    /// The store could not be watched, or turns cannot be taken beside it:
    /// this worker never stands.
    cannot_stand: bool,
}

impl<R: Fn(MirrorEvent)> Duty<'_, R> {
    /// Stand if no one does and the mirror is still enabled here, then
    /// render if it is behind; returns how long that took.
    fn serve(&mut self) -> Duration {
        let started = Instant::now();
        let target = self.enabled_target();
        if target != self.target {
            // Turned on, off, or moved: a new mirror to stand for, if any.
            self.stop_standing();
            self.target = target;
        }
        let Some(target) = self.target.clone() else { return started.elapsed() };
        if self.standing.is_none() && self.failed.is_none() && !self.cannot_stand {
            self.try_to_stand(&target);
        }
        let outcome = match &self.standing {
            Some(standing) => {
                standing.heartbeat();
                standing::catch_up(self.store, &target)
            }
            None => keep_current(self.store, &target),
        };
        if outcome.is_err() {
            self.stop_standing();
        }
        self.tell(outcome);
        started.elapsed()
    }

    /// Report a render, and a problem once (until a render succeeds).
    fn tell(&mut self, outcome: Result<Option<ExportOutcome>, MirrorError>) {
        match outcome {
            Ok(None) => {}
            Ok(Some(outcome)) => {
                self.failed = None;
                (self.report)(MirrorEvent::Rendered { epoch: outcome.epoch, written: outcome.written });
            }
            Err(e) => {
                let problem = e.to_string();
                if self.failed.as_ref() != Some(&problem) {
                    (self.report)(MirrorEvent::Failed(problem.clone()));
                }
                self.failed = Some(problem);
            }
        }
    }

    /// Stand when no one does: the watch first, so that every write after
    /// standing pokes this worker (the render that follows sees the ones before).
    fn try_to_stand(&mut self, target: &MirrorTarget) {
        if standing::someone_stands(self.store, target) {
            return;
        }
        let watch = match watch_store(self.store_path, poker(self.pokes)) {
            Ok(watch) => watch,
            // Without a watch it would not see others' writes: it does not stand (said once).
            Err(e) => {
                self.cannot_stand = true;
                return (self.report)(MirrorEvent::Failed(watch_failed(&e)));
            }
        };
        match standing::stand(self.store, target) {
            Stood::Standing(standing) => {
                self.standing = Some(standing);
                self.watch = Some(watch);
            }
            Stood::Another => {}
            Stood::NoTurns => self.cannot_stand = true,
        }
    }

    /// The mirror the workspace's config keeps now (read at every look:
    /// writers go by it, and a mirror turned off is left as it is).
    fn enabled_target(&self) -> Option<MirrorTarget> {
        enabled_target(self.workspace).ok().flatten()
    }

    fn stop_standing(&mut self) {
        self.standing = None;
        self.watch = None;
    }
}
