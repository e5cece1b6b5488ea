//! The generated corpus the benchmarks share: `count` notes in the
//! `eval/corpus.jsonl` schema, mixed kinds, priorities and states, a tenth
//! superseded by the following note.

const KINDS: [&str; 7] = ["directive", "task", "gotcha", "finding", "reference", "decision", "operational"];
const WORDS: [&str; 16] = [
    "cache", "segment", "reload", "config", "tls", "purge", "eviction", "timeout", "proxy", "metrics", "header",
    "upstream", "lock", "restart", "daemon", "index",
];

/// `count` notes in the corpus.jsonl schema: mixed kinds, priorities and
/// states, two workspaces, a tenth superseded by the following note.
pub fn corpus(count: usize) -> String {
    let mut out = String::with_capacity(count * 300);
    for i in 1..=count {
        let kind = KINDS[i % KINDS.len()];
        let word = |k: usize| WORDS[(i * 7 + k * 13) % WORDS.len()];
        let (status, extra) = match i % 10 {
            3 if i < count => ("superseded", format!(r#", "status_reason": "corrected", "superseded_by": {}"#, i + 1)),
            5 => ("revoked", r#", "status_reason": "wrong""#.to_string()),
            7 => ("stale_flagged", r#", "status_reason": "code changed""#.to_string()),
            _ => ("active", String::new()),
        };
        let provenance = if kind == "directive" { "agent" } else { ["agent", "auto"][i % 2] };
        out.push_str(&format!(
            r#"{{"id": {i}, "kind": "{kind}", "priority": "{}", "title": "Note {i}: {} {} {} behaviour", "body": "The {} path touches {} and {}; measured {} ms on run {i}. Keep {} in mind when changing {}.", "created": "2026-{:02}-{:02}", "workspace": "bench", "provenance": "{provenance}", "status": "{status}"{extra}}}"#,
            ["high", "medium", "low"][i % 3],
            word(1), word(2), word(3), word(4), word(5), word(6), i % 997, word(7), word(8),
            3 + i % 9, 1 + i % 28,
        ));
        out.push('\n');
    }
    out
}
