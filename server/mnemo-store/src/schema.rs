//! Schema migrations, tracked in `PRAGMA user_version`. Each entry of
//! `MIGRATIONS` moves the schema one version up; add new ones at the end and
//! never edit a released one.
//!
//! **Invariant:** events, notes and anchors are append-only, enforced by
//! triggers: an UPDATE always aborts, a DELETE aborts unless the note id is in
//! `forget_permit`, which only `Writer::forget` fills (and empties) inside its
//! own transaction.

use rusqlite::{Connection, TransactionBehavior};

use crate::error::StoreError;

const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE notes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace   TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('directive','task','gotcha','finding','reference','decision','operational')),
    priority    TEXT    NOT NULL CHECK (priority IN ('high','medium','low')),
    title       TEXT    NOT NULL CHECK (length(title) > 0),
    body        TEXT    NOT NULL,
    provenance  TEXT    NOT NULL CHECK (provenance IN ('auto','agent','user-stated','human')),
    quote       TEXT,
    created_at  INTEGER NOT NULL
);
CREATE INDEX notes_by_workspace ON notes (workspace, kind, id);

CREATE TABLE anchors (
    note_id         INTEGER NOT NULL REFERENCES notes (id),
    position        INTEGER NOT NULL,
    path            TEXT    NOT NULL,
    start_line      INTEGER NOT NULL,
    end_line        INTEGER NOT NULL,
    content_sha256  TEXT,
    PRIMARY KEY (note_id, position)
);

CREATE TABLE events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id        INTEGER NOT NULL REFERENCES notes (id),
    kind           TEXT    NOT NULL CHECK (kind IN ('created','superseded','revoked','stale_flagged','reinstated','promoted','expired')),
    actor          TEXT    NOT NULL CHECK (actor IN ('agent','human','system')),
    at             INTEGER NOT NULL,
    reason         TEXT,
    superseded_by  INTEGER REFERENCES notes (id),
    provenance     TEXT CHECK (provenance IN ('auto','agent','user-stated','human'))  -- created: the class; promoted: the new class
);
CREATE INDEX events_by_note ON events (note_id, id);

-- Materialised fold of each note's events: a cache, rebuilt and checked by `store verify`.
CREATE TABLE note_state (
    note_id        INTEGER PRIMARY KEY REFERENCES notes (id),
    workspace      TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    status_at      INTEGER NOT NULL,
    status_reason  TEXT,
    superseded_by  INTEGER,
    provenance     TEXT    NOT NULL,
    live_since     INTEGER NOT NULL,
    last_event_id  INTEGER NOT NULL
);
CREATE INDEX note_state_by_workspace ON note_state (workspace, status);

CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta (key, value) VALUES ('epoch', 0);

CREATE TABLE forget_permit (note_id INTEGER PRIMARY KEY);

CREATE TRIGGER events_are_append_only BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'mnemo: events are append-only; UPDATE is not allowed'); END;
CREATE TRIGGER events_deleted_only_by_forget BEFORE DELETE ON events
WHEN NOT EXISTS (SELECT 1 FROM forget_permit WHERE note_id = OLD.note_id)
BEGIN SELECT RAISE(ABORT, 'mnemo: events are deleted only by forget'); END;

CREATE TRIGGER notes_are_immutable BEFORE UPDATE ON notes
BEGIN SELECT RAISE(ABORT, 'mnemo: notes are immutable; UPDATE is not allowed'); END;
CREATE TRIGGER notes_deleted_only_by_forget BEFORE DELETE ON notes
WHEN NOT EXISTS (SELECT 1 FROM forget_permit WHERE note_id = OLD.id)
BEGIN SELECT RAISE(ABORT, 'mnemo: notes are deleted only by forget'); END;

CREATE TRIGGER anchors_are_immutable BEFORE UPDATE ON anchors
BEGIN SELECT RAISE(ABORT, 'mnemo: anchors are immutable; UPDATE is not allowed'); END;
CREATE TRIGGER anchors_deleted_only_by_forget BEFORE DELETE ON anchors
WHEN NOT EXISTS (SELECT 1 FROM forget_permit WHERE note_id = OLD.note_id)
BEGIN SELECT RAISE(ABORT, 'mnemo: anchors are deleted only by forget'); END;
"#,
    r#"
-- The epoch each mirror file was last rendered at, so a process that finds a
-- mirror behind the store re-renders it at start.
CREATE TABLE mirror_exports (
    workspace  TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    epoch      INTEGER NOT NULL,
    PRIMARY KEY (workspace, path)
);
"#,
    r#"
-- Full-text search over title and body (porter stemming, unicode words).
-- Notes are immutable, so inserts and the deletes of forget are all there is.
CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, content = 'notes', content_rowid = 'id', tokenize = 'porter unicode61');
INSERT INTO notes_fts (notes_fts) VALUES ('rebuild');
CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes
BEGIN INSERT INTO notes_fts (rowid, title, body) VALUES (new.id, new.title, new.body); END;
CREATE TRIGGER notes_fts_delete AFTER DELETE ON notes
BEGIN INSERT INTO notes_fts (notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body); END;

-- Which model the vectors in note_vectors were made with (model, dims).
-- note_vectors itself (sqlite-vec vec0) is created with the model's dims.
CREATE TABLE vector_index (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"#,
    r#"
-- The text of every checkout handed out, so a check-in can compare the
-- person's edit with exactly what they were given (its base).
CREATE TABLE checkouts (
    workspace  TEXT    NOT NULL,
    epoch      INTEGER NOT NULL,
    text       TEXT    NOT NULL,
    PRIMARY KEY (workspace, epoch)
);
"#,
    r#"
-- Every anchor drift already acted on: (note, file, what the file showed).
-- The stale flag a drift causes is appended only when its row is new, in
-- the same transaction, so the same drift never flags a note twice — across
-- processes and restarts — and a note reinstated after a drift stays fresh
-- until the text changes again.
CREATE TABLE drift_observations (
    note_id      INTEGER NOT NULL REFERENCES notes (id),
    path         TEXT    NOT NULL,
    observation  TEXT    NOT NULL,
    observed_at  INTEGER NOT NULL,
    PRIMARY KEY (note_id, path, observation)
);
"#,
    r#"
-- The tamper-evident log (chain.rs): one hash link per event, append-only
-- like the events; the ids of events `forget` deleted, so the chain can be
-- followed across them.
CREATE TABLE event_chain (event_id INTEGER PRIMARY KEY, hash TEXT NOT NULL);
CREATE TRIGGER event_chain_is_append_only BEFORE UPDATE ON event_chain
BEGIN SELECT RAISE(ABORT, 'mnemo: the event chain is append-only'); END;
CREATE TRIGGER event_chain_is_never_deleted BEFORE DELETE ON event_chain
BEGIN SELECT RAISE(ABORT, 'mnemo: the event chain is append-only'); END;
CREATE TABLE forgotten_events (event_id INTEGER PRIMARY KEY);
CREATE TRIGGER forgotten_events_are_append_only BEFORE UPDATE ON forgotten_events
BEGIN SELECT RAISE(ABORT, 'mnemo: forgotten_events is append-only'); END;
CREATE TRIGGER forgotten_events_are_never_deleted BEFORE DELETE ON forgotten_events
BEGIN SELECT RAISE(ABORT, 'mnemo: forgotten_events is append-only'); END;
"#,
    r#"
-- Each note's token vectors as sign bits (core::recall::token_signs), for
-- late interaction without running the model over the notes at query time.
-- Derived data like note_vectors: made by the model in vector_index,
-- replaced by reindex, deleted with the note.
CREATE TABLE note_token_signs (note_id INTEGER PRIMARY KEY, signs BLOB NOT NULL);
"#,
    r#"
-- The review queue: two more event kinds, 'proposed' (an agent's note waits
-- for a person) and 'accepted'. SQLite cannot change a CHECK in place, so
-- the events move to a table that allows them, ids and all (the hash chain
-- refers to them), and the append-only triggers are made again.
CREATE TABLE events_v2 (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id        INTEGER NOT NULL REFERENCES notes (id),
    kind           TEXT    NOT NULL CHECK (kind IN ('created','superseded','revoked','stale_flagged','reinstated','promoted','expired','proposed','accepted')),
    actor          TEXT    NOT NULL CHECK (actor IN ('agent','human','system')),
    at             INTEGER NOT NULL,
    reason         TEXT,
    superseded_by  INTEGER REFERENCES notes (id),
    provenance     TEXT CHECK (provenance IN ('auto','agent','user-stated','human'))
);
INSERT INTO events_v2 (id, note_id, kind, actor, at, reason, superseded_by, provenance)
    SELECT id, note_id, kind, actor, at, reason, superseded_by, provenance FROM events ORDER BY id;
-- Ids of forgotten events are never reused: the sequence carries over.
INSERT INTO sqlite_sequence (name, seq) SELECT 'events_v2', 0
    WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events_v2');
UPDATE sqlite_sequence SET seq = MAX(seq, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0))
    WHERE name = 'events_v2';
DROP TABLE events;
ALTER TABLE events_v2 RENAME TO events;
CREATE INDEX events_by_note ON events (note_id, id);
CREATE TRIGGER events_are_append_only BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'mnemo: events are append-only; UPDATE is not allowed'); END;
CREATE TRIGGER events_deleted_only_by_forget BEFORE DELETE ON events
WHEN NOT EXISTS (SELECT 1 FROM forget_permit WHERE note_id = OLD.note_id)
BEGIN SELECT RAISE(ABORT, 'mnemo: events are deleted only by forget'); END;
"#,
    r#"
-- The delivery ledger (ledger.rs): what was delivered to which agent
-- session, when. Append-only (UPDATE aborts); bounded per workspace, so the
-- oldest deliveries are deleted; a forgotten note leaves it with the note.
CREATE TABLE deliveries (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace  TEXT    NOT NULL,
    session    TEXT    NOT NULL,
    moment     TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    bytes      INTEGER NOT NULL
);
CREATE INDEX deliveries_by_workspace ON deliveries (workspace, id);
CREATE TABLE delivered_notes (
    delivery_id  INTEGER NOT NULL REFERENCES deliveries (id),
    note_id      INTEGER NOT NULL,
    shown        TEXT    NOT NULL CHECK (shown IN ('full', 'listed')),
    PRIMARY KEY (delivery_id, note_id)
);
CREATE INDEX delivered_notes_by_note ON delivered_notes (note_id, delivery_id);
CREATE TRIGGER deliveries_are_append_only BEFORE UPDATE ON deliveries
BEGIN SELECT RAISE(ABORT, 'mnemo: the delivery ledger is append-only'); END;
CREATE TRIGGER delivered_notes_are_append_only BEFORE UPDATE ON delivered_notes
BEGIN SELECT RAISE(ABORT, 'mnemo: the delivery ledger is append-only'); END;
"#,
    r#"
-- Stable workspace ids (workspace/admission.rs): each directory that joined
-- a shared id (a clone, a worktree), and each move of a workspace's notes to
-- another id (a path-keyed workspace joining its repository's). A note keeps
-- the id it was created in (the hash chain covers it); note_state holds the
-- one it is in now. A move is never undone or deleted.
CREATE TABLE workspace_roots (
    root       TEXT    PRIMARY KEY,
    workspace  TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    origin     TEXT,
    seen_at    INTEGER NOT NULL
);
CREATE INDEX workspace_roots_by_workspace ON workspace_roots (workspace);
CREATE TABLE workspace_moves (
    from_id  TEXT    PRIMARY KEY,
    to_id    TEXT    NOT NULL,
    at       INTEGER NOT NULL,
    root     TEXT
);
-- Every id that moved, and the id its notes are in now (moves followed to
-- the end): derived from workspace_moves, kept with each move.
CREATE TABLE workspace_aliases (
    alias      TEXT    PRIMARY KEY,
    workspace  TEXT    NOT NULL
);
CREATE INDEX workspace_aliases_by_workspace ON workspace_aliases (workspace);
CREATE TRIGGER workspace_moves_are_append_only BEFORE UPDATE ON workspace_moves
BEGIN SELECT RAISE(ABORT, 'mnemo: workspace moves are append-only'); END;
CREATE TRIGGER workspace_moves_are_never_deleted BEFORE DELETE ON workspace_moves
BEGIN SELECT RAISE(ABORT, 'mnemo: workspace moves are append-only'); END;
-- A delivery moves with its workspace; nothing else of it changes.
DROP TRIGGER deliveries_are_append_only;
CREATE TRIGGER deliveries_are_append_only BEFORE UPDATE OF id, session, moment, at, bytes ON deliveries
BEGIN SELECT RAISE(ABORT, 'mnemo: the delivery ledger is append-only'); END;
"#,
    r#"
-- Who wrote each event, as a person at a machine (person.rs); none for the
-- events written before. The hash chain covers them when present.
ALTER TABLE events ADD COLUMN person TEXT;
ALTER TABLE events ADD COLUMN machine TEXT;
"#,
    r#"
-- Checkout bases kept compactly (checkout/bases.rs): a key base holds its
-- whole text; any other holds '' and a line delta against its key's text.
ALTER TABLE checkouts ADD COLUMN key_epoch INTEGER;
ALTER TABLE checkouts ADD COLUMN delta BLOB;
"#,
    r#"
-- Which notes' vectors were written, in order (vector_cache.rs): a note's
-- row takes a new generation each time its vectors are written, so a
-- process keeping a copy of the vectors reads only what changed. The row
-- of note 0 marks the vector tables themselves (`made`: new each time
-- they are made). Local bookkeeping: never copied to a shared store.
CREATE TABLE vector_changes (
    generation  INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id     INTEGER NOT NULL UNIQUE,
    made        TEXT
);
INSERT INTO vector_changes (note_id, made)
    SELECT 0, lower(hex(randomblob(8))) WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'note_vector_chunks');
"#,
    r#"
-- The full-text index holds each note's workspace as one more column
-- (`ws`, weight 0), so a search of one workspace is narrowed inside FTS5
-- instead of matching every workspace's notes and dropping the others
-- (lexical.rs). The token is the id's bytes in hex written without
-- vowels, so the porter stemmer leaves it whole: 'w' and, per nibble,
-- 0-9 then b c d f g h (`lexical::workspace_token` writes the same; the
-- view and both triggers spell it out, and `tests/lexical_scope.rs` holds
-- the index to the view with FTS5's integrity check).
DROP TRIGGER notes_fts_insert;
DROP TRIGGER notes_fts_delete;
DROP TABLE notes_fts;
CREATE VIEW notes_fts_source AS SELECT id, title, body,
    'w' || replace(replace(replace(replace(replace(replace(hex(workspace), 'A', 'b'), 'B', 'c'), 'C', 'd'), 'D', 'f'), 'E', 'g'), 'F', 'h') AS ws
    FROM notes;
CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, ws, content = 'notes_fts_source', content_rowid = 'id', tokenize = 'porter unicode61');
INSERT INTO notes_fts (notes_fts) VALUES ('rebuild');
CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes
BEGIN INSERT INTO notes_fts (rowid, title, body, ws) VALUES (new.id, new.title, new.body,
    'w' || replace(replace(replace(replace(replace(replace(hex(new.workspace), 'A', 'b'), 'B', 'c'), 'C', 'd'), 'D', 'f'), 'E', 'g'), 'F', 'h')); END;
CREATE TRIGGER notes_fts_delete AFTER DELETE ON notes
BEGIN INSERT INTO notes_fts (notes_fts, rowid, title, body, ws) VALUES ('delete', old.id, old.title, old.body,
    'w' || replace(replace(replace(replace(replace(replace(hex(old.workspace), 'A', 'b'), 'B', 'c'), 'C', 'd'), 'D', 'f'), 'E', 'g'), 'F', 'h')); END;
"#,
    r#"
-- What each mirror file held when published (mirror/seed.rs): its length
-- and SHA-256 ('<bytes>:<hex>'), and the marks of the store it shows
-- (render_cache.rs), so the next process can bring the file up to date
-- instead of rendering every note. Empty for a file published before.
ALTER TABLE mirror_exports ADD COLUMN content TEXT;
ALTER TABLE mirror_exports ADD COLUMN marks TEXT;
"#,
    r#"
-- A number drawn anew whenever a checkout base's row is written, and the
-- key it leans on (checkout/bases.rs): a process that parsed a base knows
-- it is still the same text by this and its key's, without reading it. A
-- table of its own: a column of `checkouts` after its text is read only by
-- walking the text's overflow pages (2 MB for a 10k-note checkout). Kept by
-- triggers, so every write of a base draws one (a DELETE, then a plain
-- INSERT: an outer statement's OR IGNORE would pass on to an INSERT OR
-- REPLACE and leave an old mark by new text). A migration that makes
-- `checkouts` again must make these triggers again; `store verify` says
-- when one is gone.
CREATE TABLE checkout_made (
    workspace  TEXT    NOT NULL,
    epoch      INTEGER NOT NULL,
    key_epoch  INTEGER,
    made       INTEGER NOT NULL,
    PRIMARY KEY (workspace, epoch)
) WITHOUT ROWID;
INSERT INTO checkout_made (workspace, epoch, key_epoch, made) SELECT workspace, epoch, key_epoch, random() FROM checkouts;
CREATE TRIGGER checkout_made_insert AFTER INSERT ON checkouts
BEGIN DELETE FROM checkout_made WHERE workspace = new.workspace AND epoch = new.epoch;
    INSERT INTO checkout_made (workspace, epoch, key_epoch, made)
    VALUES (new.workspace, new.epoch, new.key_epoch, random()); END;
CREATE TRIGGER checkout_made_update AFTER UPDATE ON checkouts
BEGIN DELETE FROM checkout_made WHERE workspace = old.workspace AND epoch = old.epoch;
    DELETE FROM checkout_made WHERE workspace = new.workspace AND epoch = new.epoch;
    INSERT INTO checkout_made (workspace, epoch, key_epoch, made)
    VALUES (new.workspace, new.epoch, new.key_epoch, random()); END;
CREATE TRIGGER checkout_made_delete AFTER DELETE ON checkouts
BEGIN DELETE FROM checkout_made WHERE workspace = old.workspace AND epoch = old.epoch; END;
"#,
    r#"
-- How many notes were born in each workspace: a full-text search of one
-- workspace inside a shared store weighs its words by that workspace's
-- notes (lexical/bm25.rs), and counting them in `notes_by_workspace` was a
-- quarter of a millisecond of every search at 10k notes. Kept by triggers
-- (a note is only ever inserted, and deleted only by forget; its workspace
-- never changes); `store verify` holds the counts to the notes.
CREATE TABLE workspace_note_counts (
    workspace  TEXT    PRIMARY KEY,
    notes      INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO workspace_note_counts (workspace, notes) SELECT workspace, count(*) FROM notes GROUP BY workspace;
CREATE TRIGGER workspace_note_counts_insert AFTER INSERT ON notes
BEGIN INSERT INTO workspace_note_counts (workspace, notes) VALUES (new.workspace, 1)
    ON CONFLICT (workspace) DO UPDATE SET notes = notes + 1; END;
CREATE TRIGGER workspace_note_counts_delete AFTER DELETE ON notes
BEGIN UPDATE workspace_note_counts SET notes = notes - 1 WHERE workspace = old.workspace; END;
"#,
];

/// The append-only triggers `store verify` expects to find.
pub const GUARD_TRIGGERS: [&str; 12] = [
    "events_are_append_only",
    "events_deleted_only_by_forget",
    "notes_are_immutable",
    "notes_deleted_only_by_forget",
    "anchors_are_immutable",
    "anchors_deleted_only_by_forget",
    "event_chain_is_append_only",
    "event_chain_is_never_deleted",
    "forgotten_events_are_append_only",
    "forgotten_events_are_never_deleted",
    "workspace_moves_are_append_only",
    "workspace_moves_are_never_deleted",
];

/// The triggers that draw a checkout base's mark at every write of its row
/// (`checkout_made`): without one, a process could take a base it parsed
/// for a base written since. `store verify` expects them too.
pub const MARK_TRIGGERS: [&str; 3] = ["checkout_made_insert", "checkout_made_update", "checkout_made_delete"];

/// The triggers that keep `workspace_note_counts`: without one, a search of
/// a workspace would weigh its words by a wrong count. `store verify`
/// expects them, and the counts to be the notes'.
pub const COUNT_TRIGGERS: [&str; 2] = ["workspace_note_counts_insert", "workspace_note_counts_delete"];

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Bring the schema up to `SCHEMA_VERSION`; refuse a store from a newer mnemo.
/// Runs in one IMMEDIATE transaction so concurrent openers migrate once.
pub(crate) fn migrate(conn: &mut Connection, path: &std::path::Path) -> Result<(), StoreError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, supported: SCHEMA_VERSION });
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found: current, supported: SCHEMA_VERSION });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.execute_batch(sql).map_err(|e| StoreError::BrokenSchema {
            path: path.to_path_buf(),
            from: current,
            // SQLite's message, never the migration's SQL.
            reason: match &e {
                rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
                rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.split(" in ").next().unwrap_or(msg).to_string(),
                other => other.to_string().split(" in ").next().unwrap_or_default().chars().take(200).collect(),
            },
        })?;
        if sql.contains("CREATE TABLE event_chain") {
            // The events written before the chain existed are linked once, here.
            crate::chain::backfill(&tx)?;
        }
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}
