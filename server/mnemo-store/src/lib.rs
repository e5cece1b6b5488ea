//! The SQLite event log of mnemo and everything that touches files for it:
//! opening and migrating the store, the one write path ([`Writer`]), reads
//! scoped to a workspace, the hash chain and replay verification, anchor
//! capture and drift, workspace and config resolution, rendering documents
//! and keeping the MEMORY.md mirror on disk, checkouts and check-ins,
//! recall's candidate stages, and the JSONL and vectr importers.
//!
//! Every note write goes through [`Store::write`]; nothing else in the
//! project issues INSERT/DELETE against the note tables.

pub mod anchor;
mod busy;
mod chain;
pub mod checkout;
pub mod config;
pub mod document;
pub mod drift;
mod error;
mod hex;
pub mod import_jsonl;
pub mod import_vectr;
pub mod kept_connections;
pub mod ledger;
mod lexical;
pub mod mirror;
pub mod paths;
pub mod person;
pub mod postgres;
mod read;
pub mod recall;
pub mod render_cache;
pub mod repo_file;
mod schema;
mod sql_codec;
mod store;
pub mod store_watch;
mod turns;
pub mod vector_cache;
mod vectors;
mod verify;
pub mod workspace;
mod write;

pub use error::StoreError;
pub use lexical::{QUERY_WORDS, match_expression, words_left_out};
pub use mnemo_core::NoteView;
pub use read::{ListFilter, Scope, Stats, StoredEvent};
pub use schema::SCHEMA_VERSION;
pub use store::Store;
pub use vectors::{NearestNotes, NoteEmbedding, UnembeddedNote, VectorModel};
pub use verify::VerifyReport;
pub use write::Writer;
