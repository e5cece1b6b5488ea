//! The tables a copy moves between SQLite and PostgreSQL, with their
//! columns, keys, the columns that must agree when a key is on both sides
//! (append-only rows), and the caches a copy refreshes. One list for both
//! directions (`copy.rs`, `copy_back.rs`). Local caches (checkouts, mirror
//! records) stay with their machine.

/// A column's type, for a NULL's sake.
#[derive(Clone, Copy)]
pub(super) enum Ty {
    Int,
    Text,
    Bytes,
}

pub(super) struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Ty)],
    pub key: &'static str,
    /// Columns compared when the key is there already (the row must be the same).
    pub same: &'static [&'static str],
    /// On a key already there: update these columns (a cache), or skip.
    pub refresh: bool,
}

use Ty::{Bytes, Int, Text};

pub(super) const TABLES: &[Table] = &[
    Table {
        name: "notes",
        columns: &[
            ("id", Int),
            ("workspace", Text),
            ("kind", Text),
            ("priority", Text),
            ("title", Text),
            ("body", Text),
            ("provenance", Text),
            ("quote", Text),
            ("created_at", Int),
        ],
        key: "id",
        same: &["workspace", "title", "body", "created_at"],
        refresh: false,
    },
    Table {
        name: "anchors",
        columns: &[
            ("note_id", Int),
            ("position", Int),
            ("path", Text),
            ("start_line", Int),
            ("end_line", Int),
            ("content_sha256", Text),
        ],
        key: "note_id, position",
        same: &[],
        refresh: false,
    },
    Table {
        name: "events",
        columns: &[
            ("id", Int),
            ("note_id", Int),
            ("kind", Text),
            ("actor", Text),
            ("at", Int),
            ("reason", Text),
            ("superseded_by", Int),
            ("provenance", Text),
            ("person", Text),
            ("machine", Text),
        ],
        key: "id",
        same: &["note_id", "kind", "at"],
        refresh: false,
    },
    Table {
        name: "event_chain",
        columns: &[("event_id", Int), ("hash", Text)],
        key: "event_id",
        same: &["hash"],
        refresh: false,
    },
    Table { name: "forgotten_events", columns: &[("event_id", Int)], key: "event_id", same: &[], refresh: false },
    Table {
        name: "note_state",
        columns: &[
            ("note_id", Int),
            ("workspace", Text),
            ("status", Text),
            ("status_at", Int),
            ("status_reason", Text),
            ("superseded_by", Int),
            ("provenance", Text),
            ("live_since", Int),
            ("last_event_id", Int),
        ],
        key: "note_id",
        same: &[],
        refresh: true,
    },
    Table {
        name: "drift_observations",
        columns: &[("note_id", Int), ("path", Text), ("observation", Text), ("observed_at", Int)],
        key: "note_id, path, observation",
        same: &[],
        refresh: false,
    },
    Table {
        name: "deliveries",
        columns: &[("id", Int), ("workspace", Text), ("session", Text), ("moment", Text), ("at", Int), ("bytes", Int)],
        key: "id",
        same: &["session", "at"],
        refresh: false,
    },
    Table {
        name: "delivered_notes",
        columns: &[("delivery_id", Int), ("note_id", Int), ("shown", Text)],
        key: "delivery_id, note_id",
        same: &[],
        refresh: false,
    },
    Table {
        name: "workspace_roots",
        columns: &[("root", Text), ("workspace", Text), ("source", Text), ("origin", Text), ("seen_at", Int)],
        key: "root",
        same: &[],
        refresh: true,
    },
    Table {
        name: "workspace_moves",
        columns: &[("from_id", Text), ("to_id", Text), ("at", Int), ("root", Text)],
        key: "from_id",
        same: &["to_id"],
        refresh: false,
    },
    Table {
        name: "workspace_aliases",
        columns: &[("alias", Text), ("workspace", Text)],
        key: "alias",
        same: &[],
        refresh: true,
    },
    Table {
        name: "vector_index",
        columns: &[("key", Text), ("value", Text)],
        key: "key",
        same: &["value"],
        refresh: false,
    },
    Table {
        name: "note_token_signs",
        columns: &[("note_id", Int), ("signs", Bytes)],
        key: "note_id",
        same: &[],
        refresh: true,
    },
];

/// How a side numbers its parameters: `$1` (PostgreSQL) or `?1` (SQLite).
pub(super) type Placeholder = fn(usize) -> String;

pub(super) fn dollar(i: usize) -> String {
    format!("${i}")
}

pub(super) fn question(i: usize) -> String {
    format!("?{i}")
}

impl Table {
    pub fn names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.0).collect()
    }

    pub fn key_columns(&self) -> Vec<&'static str> {
        self.key.split(", ").collect()
    }

    /// Insert a row; a key already there is skipped, or (a cache) refreshed.
    pub fn insert_sql(&self, placeholder: Placeholder) -> String {
        let names = self.names();
        let values: Vec<String> = (1..=names.len()).map(placeholder).collect();
        let on_conflict = if self.refresh {
            let sets: Vec<String> = names.iter().map(|n| format!("{n} = excluded.{n}")).collect();
            format!("ON CONFLICT ({}) DO UPDATE SET {}", self.key, sets.join(", "))
        } else {
            format!("ON CONFLICT ({}) DO NOTHING", self.key)
        };
        format!("INSERT INTO {} ({}) VALUES ({}) {on_conflict}", self.name, names.join(", "), values.join(", "))
    }

    /// The columns that must agree, of the row under a key (`None`: nothing to compare).
    pub fn same_sql(&self, placeholder: Placeholder) -> Option<String> {
        let keys = self.key_columns();
        let conditions: Vec<String> =
            keys.iter().enumerate().map(|(i, k)| format!("{k} = {}", placeholder(i + 1))).collect();
        (!self.same.is_empty())
            .then(|| format!("SELECT {} FROM {} WHERE {}", self.same.join(", "), self.name, conditions.join(" AND ")))
    }
}
