//! A long-lived process that stands for a mirror: while it does, every
//! writer leaves the mirror's render to it and returns as soon as its write
//! is committed, and the standing process renders what was written — from
//! the rendering it keeps, so a burst of writes costs a few small renders
//! in one process instead of a render of the whole file in many.
//!
//! The one who stands holds `<store>-mirror-<key>.standing` (`turns.rs`)
//! and touches it every [`HEARTBEAT`]; a writer asks
//! [`someone_stands`] before it takes its own render turn (`keep_current`).
//! Every write is still shown by a render begun after it committed:
//!
//! - the stander watches the store *before* it stands, and renders once
//!   just after it stands: a write committed before it stood is seen by
//!   that render, one committed after by a poke of the watch — or, should
//!   a poke be lost, by the look it takes every [`HEARTBEAT`];
//! - a writer that found it standing committed before it looked, so before
//!   the stander stops standing; after it stops, the stander catches the
//!   mirror up once more as any writer would (`keep_current`);
//! - a stander that stops showing signs of life (stopped with Ctrl-Z, stuck)
//!   is passed over after [`STALE_AFTER`]: writers render again, as without
//!   it; one that is killed lets go of its lock, and the next command that
//!   opens the store catches the mirror up.
//!
//! Looking ([`someone_stands`]) takes the standing file's lock for an
//! instant, so a looker may find it held by another looker while no one
//! stands. That is safe because every looker that finds it free goes on to
//! render (or to stand, and then render) after its look: a writer that
//! found the lock held by a looker committed before that looker's render
//! began. (A test that looks must keep to that too.)
//!
//! A stander renders with the render turn, waiting for it (a writer that
//! rendered before it stood may still be at it) at most [`TURN_PATIENCE`];
//! it renders in the background, so the wait keeps no writer waiting.

use std::time::Duration;

use super::{ExportOutcome, MirrorError, MirrorTarget, export, shows_at_least, turn_key};
use crate::store::Store;
use crate::turns::{RenderTurn, StandTurn, Turn};

/// A stander that has shown no sign of life for this long is passed over:
/// writers render as if no one stood.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(5);

/// How often a stander shows a sign of life (and looks whether the mirror
/// is behind, should a poke have been lost).
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(1);

/// How long a stander waits for the render turn; then it tries again at its
/// next look. It shows no sign of life while it waits, so a wait and a
/// heartbeat must end well before writers pass it over.
pub(crate) const TURN_PATIENCE: Duration = Duration::from_secs(2);

const _: () = assert!(TURN_PATIENCE.as_secs() + HEARTBEAT.as_secs() < STALE_AFTER.as_secs());

/// This process stands for a mirror until this is dropped.
#[derive(Debug)]
pub(crate) struct Standing {
    turn: Turn,
}

impl Standing {
    /// A sign of life, for writers deciding whether to leave their render to this process.
    pub(crate) fn heartbeat(&self) {
        self.turn.touch();
    }
}

/// What came of trying to stand.
#[derive(Debug)]
pub(crate) enum Stood {
    /// This process stands until the value is dropped.
    Standing(Standing),
    /// Another process stands.
    Another,
    /// Turns cannot be taken beside this store: no one stands there, and
    /// every writer renders.
    NoTurns,
}

/// Stand for `target`'s mirror, unless another process already does.
pub(crate) fn stand(store: &Store, target: &MirrorTarget) -> Stood {
    match crate::turns::try_stand(store.path(), &turn_key(target)) {
        StandTurn::Taken(turn) => {
            let standing = Standing { turn };
            standing.heartbeat();
            Stood::Standing(standing)
        }
        StandTurn::Held { .. } => Stood::Another,
        StandTurn::Unavailable => Stood::NoTurns,
    }
}

/// Whether a living process stands for `target`'s mirror (this one
/// included: its own writes are rendered by its standing thread too). One
/// quiet for [`STALE_AFTER`] does not count.
pub(crate) fn someone_stands(store: &Store, target: &MirrorTarget) -> bool {
    match crate::turns::try_stand(store.path(), &turn_key(target)) {
        StandTurn::Held { quiet_for } if quiet_for < STALE_AFTER => true,
        StandTurn::Held { quiet_for } => {
            tracing::debug!(?quiet_for, path = %target.path.display(), "the process standing for the mirror is passed over: no sign of life");
            false
        }
        StandTurn::Taken(_) | StandTurn::Unavailable => false,
    }
}

/// Render `target`'s mirror if it is behind the store, for the process that
/// stands for it: waiting for the render turn (at most [`TURN_PATIENCE`])
/// rather than leaving the render to whoever holds it. `Ok(None)` when there
/// was nothing to render, or the turn did not come in time (the next look
/// tries again).
pub(crate) fn catch_up(store: &Store, target: &MirrorTarget) -> Result<Option<ExportOutcome>, MirrorError> {
    if shows_at_least(store, target, store.epoch()?)? {
        return Ok(None);
    }
    let _turn = match crate::turns::take_render(store.path(), &turn_key(target), TURN_PATIENCE) {
        RenderTurn::Taken(turn) => Some(turn),
        RenderTurn::Held => return Ok(None),
        RenderTurn::Unavailable => None,
    };
    // Whoever held the turn may have rendered what this process would.
    if shows_at_least(store, target, store.epoch()?)? {
        return Ok(None);
    }
    export(store, target).map(Some)
}
