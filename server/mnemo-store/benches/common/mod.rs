//! The generated corpus the benchmarks share: `count` notes in the
//! `eval/corpus.jsonl` schema, mixed kinds, priorities and states, a tenth
//! superseded by the following note; the queries the recall benchmarks
//! ask of it, how their times are summed up, and the model they load.
#![allow(dead_code)] // each benchmark uses its share

use std::time::{Duration, Instant};

use mnemo_embed::{Embedder, ModelLocation, default_model_dir};

/// The recall benchmarks' queries over the corpus.
pub const QUERIES: [&str; 10] = [
    "why does the proxy drop the cache after a config reload",
    "restart the daemon safely while it holds the lock",
    "which timeout applies to upstream requests",
    "how do I purge a prefix from the segment store",
    "metrics for eviction under memory pressure",
    "tls certificate reload without downtime",
    "header size limits on the proxy",
    "index rebuild takes too long after restart",
    "what is the eviction policy of the segment cache",
    "config option for upstream keepalive",
];

/// The `p` percentile of `samples`, in milliseconds.
pub fn percentile(samples: &mut [Duration], p: f64) -> f64 {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
}

/// p50 and p95 of five passes of `run` over the queries (by index).
pub fn measure(mut run: impl FnMut(usize)) -> (f64, f64) {
    let mut times = Vec::new();
    for _ in 0..5 {
        for q in 0..QUERIES.len() {
            let started = Instant::now();
            run(q);
            times.push(started.elapsed());
        }
    }
    (percentile(&mut times, 0.5), percentile(&mut times, 0.95))
}

/// The installed model, found as mnemo finds it (`MNEMO_MODEL_DIR`, else the default directory).
pub fn embedder() -> Embedder {
    let env = |name: &str| std::env::var(name).ok();
    let location = ModelLocation::resolve(
        env("MNEMO_MODEL_DIR").as_deref(),
        env("ORT_DYLIB_PATH").as_deref(),
        None,
        None,
        default_model_dir(env("XDG_DATA_HOME").as_deref(), env("HOME").as_deref()),
    )
    .expect("a model location");
    Embedder::load(&location).unwrap_or_else(|e| panic!("{e}"))
}

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
