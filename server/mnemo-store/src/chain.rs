//! The tamper-evident log: a hash chain over events. Each event's link is
//! `sha256(previous link, the event's digest)`, where the digest covers the
//! event's columns and, for a `created` event, the note's whole content and
//! anchors — so changing, deleting, reordering or slipping in an event, or
//! editing a note's text behind the triggers' back, breaks the chain at that
//! event. Links live in `event_chain` (append-only like the events); `forget`
//! deletes a note's events but records their ids in `forgotten_events`, and
//! verify carries the chain across them on their stored links.
//!
//! A chain kept in the same file cannot stop someone who rewrites all of it;
//! `store verify` prints the head link so it can be recorded elsewhere.

use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

/// The link before the first event.
pub const GENESIS: &str = "mnemo event chain v1";

use crate::hex::hex;

/// The link that follows `previous` for an event with `digest`.
pub fn link(previous: &str, digest: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(previous.as_bytes());
    hasher.update(b"\n");
    hasher.update(digest.as_bytes());
    hex(hasher.finalize())
}

/// One field of a canonical record: its length first, so no value can
/// imitate a field boundary.
fn field(out: &mut String, value: Option<&str>) {
    match value {
        Some(value) => out.push_str(&format!("{}:{value};", value.len())),
        None => out.push_str("-;"),
    }
}

/// The digest of event `event_id` as stored now, or `None` when it is gone.
pub fn event_digest(conn: &Connection, event_id: i64) -> rusqlite::Result<Option<String>> {
    let row = conn
        .prepare_cached(
            "SELECT note_id, kind, actor, at, reason, superseded_by, provenance, person, machine FROM events WHERE id = ?1",
        )?
        .query_row([event_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, Option<String>>(6)?,
                (r.get::<_, Option<String>>(7)?, r.get::<_, Option<String>>(8)?),
            ))
        })
        .optional()?;
    let Some((note, kind, actor, at, reason, superseded_by, provenance, by)) = row else { return Ok(None) };
    let mut record = String::new();
    for value in [
        Some(event_id.to_string()),
        Some(note.to_string()),
        Some(kind.clone()),
        Some(actor),
        Some(at.to_string()),
        reason,
        superseded_by.map(|s| s.to_string()),
        provenance,
    ] {
        field(&mut record, value.as_deref());
    }
    // Who wrote it, when recorded (events from before have no such fields, and keep their digests).
    if by.0.is_some() || by.1.is_some() {
        record.push_str("by;");
        field(&mut record, by.0.as_deref());
        field(&mut record, by.1.as_deref());
    }
    if kind == "created" {
        record.push_str(&note_digest(conn, note)?);
    }
    Ok(Some(hex(Sha256::digest(record.as_bytes()))))
}

/// The note's content and anchors, as a canonical record.
fn note_digest(conn: &Connection, note: i64) -> rusqlite::Result<String> {
    let mut record = String::from("note;");
    let row = conn
        .prepare_cached(
            "SELECT workspace, kind, priority, title, body, provenance, quote, created_at FROM notes WHERE id = ?1",
        )?
        .query_row([note], |r| {
            let mut values = Vec::new();
            for index in 0..7 {
                values.push(r.get::<_, Option<String>>(index)?);
            }
            values.push(Some(r.get::<_, i64>(7)?.to_string()));
            Ok(values)
        })
        .optional()?;
    match row {
        Some(values) => values.iter().for_each(|v| field(&mut record, v.as_deref())),
        None => record.push_str("missing;"),
    }
    let mut anchors = conn.prepare_cached(
        "SELECT position, path, start_line, end_line, content_sha256 FROM anchors WHERE note_id = ?1 ORDER BY position",
    )?;
    let rows = anchors.query_map([note], |r| {
        Ok([
            Some(r.get::<_, i64>(0)?.to_string()),
            Some(r.get::<_, String>(1)?),
            Some(r.get::<_, i64>(2)?.to_string()),
            Some(r.get::<_, i64>(3)?.to_string()),
            r.get::<_, Option<String>>(4)?,
        ])
    })?;
    for row in rows {
        record.push_str("anchor;");
        row?.iter().for_each(|v| field(&mut record, v.as_deref()));
    }
    Ok(record)
}

/// The last link of the chain (the genesis when it is empty).
pub fn head(conn: &Connection) -> rusqlite::Result<String> {
    Ok(conn
        .prepare_cached("SELECT hash FROM event_chain ORDER BY event_id DESC LIMIT 1")?
        .query_row([], |r| r.get(0))
        .optional()?
        .unwrap_or_else(|| GENESIS.to_string()))
}

/// Chain event `event_id` (just inserted) onto the head.
pub fn append(conn: &Connection, event_id: i64) -> rusqlite::Result<()> {
    let digest = event_digest(conn, event_id)?.unwrap_or_default();
    let linked = link(&head(conn)?, &digest);
    conn.prepare_cached("INSERT INTO event_chain (event_id, hash) VALUES (?1, ?2)")?
        .execute(params![event_id, linked])?;
    Ok(())
}

/// Chain every event that has no link yet, in id order (the migration that
/// introduced the chain, for the events written before it).
pub fn backfill(conn: &Connection) -> rusqlite::Result<()> {
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM events WHERE id NOT IN (SELECT event_id FROM event_chain) ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in ids {
        append(conn, id)?;
    }
    Ok(())
}

/// What the chain says is wrong, each with the event it concerns.
pub fn problems(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut found = Vec::new();
    let forgotten: std::collections::HashSet<i64> = conn
        .prepare("SELECT event_id FROM forgotten_events")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let links: Vec<(i64, String)> = conn
        .prepare("SELECT event_id, hash FROM event_chain ORDER BY event_id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut previous = GENESIS.to_string();
    for (event_id, stored) in &links {
        match event_digest(conn, *event_id)? {
            Some(digest) => {
                if link(&previous, &digest) != *stored {
                    found.push((
                        format!("event {event_id}"),
                        "its hash link does not match: the event, its note's text or an earlier link was changed"
                            .into(),
                    ));
                }
            }
            None if forgotten.contains(event_id) => {}
            None => {
                found.push((format!("event {event_id}"), "is missing from the log: deleted without `forget`".into()))
            }
        }
        previous = stored.clone();
    }
    let unlinked: Vec<i64> = conn
        .prepare("SELECT id FROM events WHERE id NOT IN (SELECT event_id FROM event_chain) ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in unlinked {
        found.push((format!("event {id}"), "is not in the hash chain: written behind mnemo's back".into()));
    }
    Ok(found)
}
