//! A long-lived process that stands for a mirror: while it does, every
//! writer leaves the mirror's render to it and returns as soon as its write
//! is committed, and the standing process renders what was written — from
//! the rendering it keeps, so a burst of writes costs a few small renders
//! in one process instead of a render of the whole file in many.
//!
//! The one who stands holds `<store>-mirror-<key>.standing` (`turns.rs`);
//! a writer asks [`someone_stands`] before it takes its own render turn
//! (`keep_current`). Every write is still shown by a render begun after it
//! committed:
//!
//! - the stander watches the store *before* it stands, and renders once
//!   just after it stands: a write committed before it stood is seen by
//!   that render, one committed after by a poke of the watch;
//! - a writer that found it standing committed before it looked, so before
//!   the stander stops standing; after it stops, the stander catches the
//!   mirror up once more as any writer would ([`keep_current`]).
//!
//! A stander renders with the render turn, waiting for it (a writer that
//! rendered before it stood may still be at it): it renders in the
//! background, so the wait keeps no one waiting.

use super::{ExportOutcome, MirrorError, MirrorTarget, export, shows_at_least, turn_key};
use crate::store::Store;
use crate::turns::{RenderTurn, Turn};

/// This process stands for a mirror until this is dropped.
#[derive(Debug)]
pub struct Standing {
    _turn: Turn,
}

/// What came of trying to stand.
#[derive(Debug)]
pub enum Stood {
    /// This process stands until the value is dropped.
    Standing(Standing),
    /// Another process stands.
    Another,
    /// Turns cannot be taken beside this store: no one stands there, and
    /// every writer renders.
    NoTurns,
}

/// Stand for `target`'s mirror, unless another process already does.
pub fn stand(store: &Store, target: &MirrorTarget) -> Stood {
    match crate::turns::try_stand(store.path(), &turn_key(target)) {
        RenderTurn::Taken(turn) => Stood::Standing(Standing { _turn: turn }),
        RenderTurn::Held => Stood::Another,
        RenderTurn::Unavailable => Stood::NoTurns,
    }
}

/// Whether a process stands for `target`'s mirror (this one included: its
/// own writes are rendered by its standing thread too).
///
/// Looking takes the standing file's lock for an instant; a process that
/// tries to stand in that instant does not, this time, and tries again at
/// its next poke — meanwhile writers render as if no one stood.
pub(crate) fn someone_stands(store: &Store, target: &MirrorTarget) -> bool {
    matches!(crate::turns::try_stand(store.path(), &turn_key(target)), RenderTurn::Held)
}

/// Render `target`'s mirror if it is behind the store, for the process that
/// stands for it: waiting for the render turn rather than leaving the render
/// to whoever holds it. `Ok(None)` when there was nothing to render (or the
/// turn did not come in time: the next poke tries again).
pub fn catch_up(store: &Store, target: &MirrorTarget) -> Result<Option<ExportOutcome>, MirrorError> {
    if shows_at_least(store, target, store.epoch()?)? {
        return Ok(None);
    }
    let _turn = match crate::turns::take_render(store.path(), &turn_key(target)) {
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
