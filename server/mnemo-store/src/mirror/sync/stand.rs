//! The standing worker (`MirrorSync::stand`): stand for the mirror when no
//! other process does (`mirror/standing.rs`), render every writer's writes
//! while standing — at most once per [`STANDING_PACE`] — and, on stopping,
//! stop standing and catch the mirror up once more as any writer would.
//!
//! Only while standing does it watch the store: every process holding a
//! watch wakes for each write (under sixteen writers, eight servers each
//! watching took a fifth of the machine). A worker that does not stand
//! looks again every [`RETRY`]; meanwhile writers render as they would
//! without it.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{Message, MirrorEvent, poker, report_outcome, watch_failed};
use crate::mirror::standing::{self, Standing, Stood};
use crate::mirror::{ExportOutcome, MirrorError, MirrorTarget, enabled_target, keep_current};
use crate::store::Store;
use crate::store_watch::{StoreWatcher, watch_store};

/// How often at most a standing worker renders: a steady stream of writes
/// is shown within about this long of each write, in one render per pace.
pub const STANDING_PACE: Duration = Duration::from_millis(50);

/// How often a worker that does not stand looks whether it could.
pub const RETRY: Duration = Duration::from_secs(2);

pub(super) fn stand_for_writers(
    store_path: PathBuf,
    target: MirrorTarget,
    pokes: mpsc::Sender<Message>,
    receiver: mpsc::Receiver<Message>,
    report: impl Fn(MirrorEvent),
) {
    let store = match Store::open(&store_path) {
        Ok(store) => store,
        Err(e) => return report(MirrorEvent::Failed(e.to_string())),
    };
    let mut duty =
        Duty { store: &store, target: &target, standing: None, watch: None, failed: false, cannot_stand: false };
    report_outcome(&report, duty.serve(&store_path, &pokes, &report));
    let mut last_render = Instant::now();
    loop {
        let waited = match duty.standing {
            Some(_) => receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
            None => receiver.recv_timeout(RETRY),
        };
        let mut stopping = false;
        match waited {
            Ok(Message::Poke) | Err(RecvTimeoutError::Timeout) => {}
            Ok(Message::Flush(ack)) => {
                report_outcome(&report, duty.serve(&store_path, &pokes, &report));
                let _ = ack.send(());
                continue;
            }
            Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => stopping = true,
        }
        // Writes keep coming in a burst: gather them until the pace allows a render.
        let next = last_render + STANDING_PACE;
        while !stopping && let Some(left) = next.checked_duration_since(Instant::now()) {
            match receiver.recv_timeout(left) {
                Ok(Message::Poke) => {}
                Ok(Message::Flush(ack)) => {
                    report_outcome(&report, duty.serve(&store_path, &pokes, &report));
                    let _ = ack.send(());
                }
                Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => stopping = true,
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        if stopping {
            break;
        }
        report_outcome(&report, duty.serve(&store_path, &pokes, &report));
        last_render = Instant::now();
    }
    // No longer standing: writers render again; what they left to this one is rendered now.
    duty.stop_standing();
    if duty.still_enabled() {
        report_outcome(&report, keep_current(&store, &target));
    }
}

/// What a standing worker holds between renders.
struct Duty<'a> {
    store: &'a Store,
    target: &'a MirrorTarget,
    standing: Option<Standing>,
    /// The store watch, held only while standing.
    watch: Option<StoreWatcher>,
    /// The last render failed: this worker does not stand again until one
    /// succeeds, so the writers render, and each sees the problem.
    failed: bool,
    /// The store could not be watched, or turns cannot be taken beside it:
    /// this worker never stands.
    cannot_stand: bool,
}

impl Duty<'_> {
    /// Stand if no one does and the mirror is still enabled here, then
    /// render if it is behind.
    fn serve(
        &mut self,
        store_path: &Path,
        pokes: &mpsc::Sender<Message>,
        report: &impl Fn(MirrorEvent),
    ) -> Result<Option<ExportOutcome>, MirrorError> {
        if !self.still_enabled() {
            self.stop_standing();
            return Ok(None);
        }
        if self.standing.is_none() && !self.failed && !self.cannot_stand {
            self.try_to_stand(store_path, pokes, report);
        }
        let outcome = match self.standing {
            Some(_) => standing::catch_up(self.store, self.target),
            None => keep_current(self.store, self.target),
        };
        self.failed = outcome.is_err();
        if self.failed {
            self.stop_standing();
        }
        outcome
    }

    /// Stand when no one does: the watch first, so that every write after
    /// standing pokes this worker (the render that follows sees the ones before).
    fn try_to_stand(&mut self, store_path: &Path, pokes: &mpsc::Sender<Message>, report: &impl Fn(MirrorEvent)) {
        if standing::someone_stands(self.store, self.target) {
            return;
        }
        let watch = match watch_store(store_path, poker(pokes)) {
            Ok(watch) => watch,
            // Without a watch it would not see others' writes: it does not stand (said once).
            Err(e) => {
                self.cannot_stand = true;
                return report(MirrorEvent::Failed(watch_failed(&e)));
            }
        };
        match standing::stand(self.store, self.target) {
            Stood::Standing(standing) => {
                self.standing = Some(standing);
                self.watch = Some(watch);
            }
            Stood::Another => {}
            Stood::NoTurns => self.cannot_stand = true,
        }
    }

    /// Whether the workspace's config still keeps this mirror (it is read
    /// again: writers go by it, and a mirror turned off is left as it is).
    fn still_enabled(&self) -> bool {
        matches!(enabled_target(&self.target.workspace), Ok(Some(now)) if now == *self.target)
    }

    fn stop_standing(&mut self) {
        self.standing = None;
        self.watch = None;
    }
}
