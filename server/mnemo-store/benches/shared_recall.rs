//! Benchmark: recall of one workspace alone against the same workspace inside
//! a shared store that holds other workspaces too (`-- 9` others by default,
//! each a copy of it under another name, with the same vectors: a realistic
//! spread of similarities without embedding the copies again). Reports p50 /
//! p95 over 50 warm queries of the ranking from a given vector (first stage),
//! and with late interaction over the whole pool (the default), and the
//! ratio shared / alone — with sqlite-vec scanning the vectors (a one-shot
//! command) and with them kept in memory (`vector_cache`: a language
//! server, an MCP server). Run with
//! `cargo bench -p mnemo-store --bench shared_recall [-- NOTES [OTHERS]]`
//! (10000 notes and 9 other workspaces by default: 10k inside 100k; `kept`
//! among the arguments: only the recalls with the vectors kept, not their
//! stages one by one). The
//! two stores are built once (embedding the notes takes minutes) under
//! `target/bench-stores/shared-recall-NOTES-OTHERS/` and reused while the
//! model is the same; remove that directory after a change to what a write
//! stores.

mod common;

use common::{QUERIES, corpus, measure};
use mnemo_core::recall::RecallRequest;
use mnemo_core::recall::token_signs::QueryTokens;
use mnemo_core::{Actor, Timestamp};
use mnemo_store::import_jsonl::{prepare, write};
use mnemo_store::recall::{DEFAULT_POOL, DEFAULT_RERANK};
use mnemo_store::{Scope, Store};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let count = args.first().copied().unwrap_or(10_000);
    let others = args.get(1).copied().unwrap_or(9);
    // `-- kept`: only the recalls with the vectors kept (for a profile).
    let kept_only = std::env::args().any(|a| a == "kept");
    let mut embedder = common::embedder();
    let identity = embedder.identity().to_string();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../target/bench-stores/shared-recall-{count}-{others}"));
    let ready = dir.join("ready");
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(identity.as_str()) {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        build_stores(&mut embedder, &dir, count, others);
        std::fs::write(&ready, &identity).unwrap();
    }
    let alone = Store::open(&dir.join("alone.db")).unwrap();
    let shared = Store::open(&dir.join("shared.db")).unwrap();

    let request = RecallRequest::new("bench", 10);
    let vectors = embedder.embed_queries(&QUERIES).unwrap();
    let tokens: Vec<QueryTokens> =
        QUERIES.iter().map(|q| QueryTokens::new(&embedder.query_token_vectors(q).unwrap(), embedder.dims())).collect();
    println!(
        "| notes in the workspace | notes in the store | vectors | first stage p50 / p95 | with late interaction p50 / p95 |"
    );
    println!("|---:|---:|---|---:|---:|");
    let mut rows = Vec::new();
    // One-shot (sqlite-vec scans the vectors), then with the vectors kept in
    // memory as a language server, an MCP server or the eval harness keeps them.
    for (store, total, kept) in [
        (&alone, count, false),
        (&shared, count * (others + 1), false),
        (&alone, count, true),
        (&shared, count * (others + 1), true),
    ] {
        if kept_only && !kept {
            rows.push(((0.0, 0.0), (0.0, 0.0)));
            continue;
        }
        if kept {
            mnemo_store::vector_cache::keep_vectors();
            let started = std::time::Instant::now();
            store.recall(QUERIES[0], Some(&vectors[0]), &request, DEFAULT_POOL).unwrap();
            eprintln!("  first recall with vectors kept (reads them): {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
        }
        for q in 0..QUERIES.len() {
            store.recall(QUERIES[q], Some(&vectors[q]), &request, DEFAULT_POOL).unwrap();
        }
        let first = measure(|q| {
            store.recall(QUERIES[q], Some(&vectors[q]), &request, DEFAULT_POOL).unwrap();
        });
        let late = measure(|q| {
            store
                .recall_reranked(
                    QUERIES[q],
                    Some(&vectors[q]),
                    &request,
                    DEFAULT_POOL,
                    DEFAULT_RERANK,
                    Some(&tokens[q]),
                )
                .unwrap();
        });
        let how = if kept { "kept in memory" } else { "sqlite-vec" };
        println!(
            "| {count} | {total} | {how} | {:.1} / {:.1} ms | {:.1} / {:.1} ms |",
            first.0, first.1, late.0, late.1
        );
        if kept_only {
            rows.push((first, late));
            continue;
        }
        let ws = Scope::Workspace("bench".into());
        let stages = [
            ("lexical, workspace", measure(|q| drop(store.lexical_matches(QUERIES[q], DEFAULT_POOL, &ws).unwrap()))),
            (
                "lexical, store",
                measure(|q| drop(store.lexical_matches(QUERIES[q], DEFAULT_POOL, &Scope::All).unwrap())),
            ),
            (
                "every word, workspace",
                measure(|q| drop(store.every_word_matches(QUERIES[q], DEFAULT_POOL, &ws).unwrap())),
            ),
            ("vector, workspace", measure(|q| drop(store.nearest(&vectors[q], DEFAULT_POOL, &ws).unwrap()))),
            ("vector, store", measure(|q| drop(store.nearest(&vectors[q], DEFAULT_POOL, &Scope::All).unwrap()))),
        ];
        let stages: Vec<String> = stages.iter().map(|(name, (p50, _))| format!("{name} {p50:.1} ms")).collect();
        eprintln!("  stages (p50): {}", stages.join(", "));
        rows.push((first, late));
    }
    let ratio = |a: f64, b: f64| b / a;
    for (how, at) in [("sqlite-vec", 0), ("kept in memory", 2)].into_iter().filter(|(_, at)| !kept_only || *at == 2) {
        let (alone, shared) = (rows[at], rows[at + 1]);
        println!(
            "\nshared / alone, vectors {how}: first stage p50 {:.2}x, p95 {:.2}x; with late interaction p50 {:.2}x, p95 {:.2}x",
            ratio(alone.0.0, shared.0.0),
            ratio(alone.0.1, shared.0.1),
            ratio(alone.1.0, shared.1.0),
            ratio(alone.1.1, shared.1.1),
        );
    }
}

/// The workspace alone, and inside a store with `others` copies of it.
fn build_stores(embedder: &mut mnemo_embed::Embedder, dir: &std::path::Path, count: usize, others: usize) {
    let identity = embedder.identity().to_string();
    let text = corpus(count);
    let grouped = embedder.embed_notes(&prepare(text.as_bytes(), Actor::Agent).unwrap().texts(), |_, _| {}).unwrap();
    let mut alone = Store::open(&dir.join("alone.db")).unwrap();
    let mut shared = Store::open(&dir.join("shared.db")).unwrap();
    let at = Timestamp(1_800_000_000);
    write(&mut alone, prepare(text.as_bytes(), Actor::Agent).unwrap(), at, Some((&grouped, &identity))).unwrap();
    for other in 0..=others {
        let workspace = if other == 0 { "bench".to_string() } else { format!("other-{other}") };
        let copy = text.replace(r#""workspace": "bench""#, &format!(r#""workspace": "{workspace}""#));
        write(&mut shared, prepare(copy.as_bytes(), Actor::Agent).unwrap(), at, Some((&grouped, &identity))).unwrap();
    }
}
