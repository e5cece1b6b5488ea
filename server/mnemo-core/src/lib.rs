//! The pure heart of mnemo: the note model, the event lifecycle, the fold of
//! events into state, provenance from evidence and the text forms shared by
//! every front end.
//!
//! Nothing here does I/O: no SQLite, no files, no clock, no tokio, no LSP types.
//! Time, ids and the user's message are inputs, so every rule is testable by data.

pub mod budget;
pub mod checkin;
pub mod debounce;
pub mod delivery;
pub mod expiry;
pub mod index_line;
pub mod instructions;
pub mod lifecycle;
pub mod load_budget;
pub mod memory_md;
pub mod model;
pub mod quote;
pub mod recall;
pub mod review;
pub mod secrets;
pub mod time;
pub mod triggers;

pub use lifecycle::{EventData, EventKind, NoteState, Status, TransitionError, apply, fold};
pub use model::{
    Actor, Anchor, Kind, NewNote, Note, NoteId, NoteView, ParseEnumError, Priority, Provenance, RuleError,
};
pub use time::Timestamp;
