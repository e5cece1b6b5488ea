//! Benchmark: hybrid recall on generated stores of 1k, 10k and 100k notes
//! with the real packaged model (`scripts/install-model`; `MNEMO_MODEL_DIR`
//! or the default directory). Reports import throughput with embedding
//! (batched), the size of the stored token signs, and warm recall latency,
//! p50 and p95 over 50 queries, embedding the query included: the first
//! stage alone, then with late interaction reranking the best 30 and the
//! whole pool (the default), and the ranking alone from a given vector. Run with
//! `cargo bench -p mnemo-store --bench recall` (pass sizes to override).

mod common;

use std::time::Instant;

use common::{QUERIES, corpus, percentile};
use mnemo_core::recall::RecallRequest;
use mnemo_core::recall::token_signs::QueryTokens;
use mnemo_core::{Actor, Timestamp};
use mnemo_store::Store;
use mnemo_store::import_jsonl::{prepare, write};
use mnemo_store::recall::{DEFAULT_POOL, DEFAULT_RERANK};

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![1_000, 10_000, 100_000] } else { sizes };
    let mut embedder = common::embedder();
    println!(
        "| notes | import with embedding | notes/s | token signs | recall p50 / p95, first stage | reranking the best 30 | reranking the pool (default) | ranking only, first stage |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for count in sizes {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("memory.db")).unwrap();
        let text = corpus(count);
        let started = Instant::now();
        let prepared = prepare(text.as_bytes(), Actor::Agent).unwrap();
        let grouped = embedder.embed_notes(&prepared.texts(), |_, _| {}).unwrap();
        let identity = embedder.identity().to_string();
        write(&mut store, prepared, Timestamp(1_800_000_000), Some((&grouped, &identity))).unwrap();
        let import_time = started.elapsed();

        let signs_bytes: usize = grouped.iter().map(|n| n.token_signs.len()).sum();

        let request = RecallRequest::new("bench", 10);
        let query_vectors = embedder.embed_queries(&QUERIES).unwrap();
        for (query, vector) in QUERIES.iter().zip(&query_vectors) {
            store.recall(query, Some(vector), &request, DEFAULT_POOL).unwrap();
        }
        let mut columns = Vec::new();
        for depth in [0, 30, DEFAULT_RERANK] {
            let mut full = Vec::new();
            for round in 0..5 {
                for query in QUERIES {
                    let started = Instant::now();
                    let vector = embedder.embed_queries(&[query]).unwrap().pop().unwrap();
                    let tokens = (depth > 0)
                        .then(|| QueryTokens::new(&embedder.query_token_vectors(query).unwrap(), embedder.dims()));
                    let answer = store
                        .recall_reranked(query, Some(&vector), &request, DEFAULT_POOL, depth, tokens.as_ref())
                        .unwrap();
                    full.push(started.elapsed());
                    assert!(depth == 0 || answer.reranked > 0, "round {round}: nothing reranked");
                }
            }
            columns.push(format!("{:.1} / {:.1} ms", percentile(&mut full, 0.5), percentile(&mut full, 0.95)));
        }
        let mut ranking = Vec::new();
        for _ in 0..5 {
            for (query, vector) in QUERIES.iter().zip(&query_vectors) {
                let started = Instant::now();
                store.recall(query, Some(vector), &request, DEFAULT_POOL).unwrap();
                ranking.push(started.elapsed());
            }
        }
        println!(
            "| {count} | {:.1} s | {:.0} | {:.1} MB | {} | {:.1} / {:.1} ms |",
            import_time.as_secs_f64(),
            count as f64 / import_time.as_secs_f64(),
            signs_bytes as f64 / 1e6,
            columns.join(" | "),
            percentile(&mut ranking, 0.5),
            percentile(&mut ranking, 0.95),
        );
    }
}
