//! Benchmark: a team's store on PostgreSQL beside the SQLite file, on the
//! same generated corpus (`common::corpus`, embedded with the real model).
//!
//! - Recall of one workspace (50 warm queries, ranking from a given vector:
//!   p50 / p95), in a store of NOTES notes and in one of NOTES × (OTHERS + 1)
//!   (the workspace and copies of it under other names, as `shared_recall`
//!   builds them): the file's FTS5 and sqlite-vec against the database's
//!   full-text search and exact pgvector, first stage and with late
//!   interaction, and each stage alone.
//! - Exact pgvector against an HNSW index on the large store: time and how
//!   many of the exact 50 nearest notes HNSW finds (why search.rs is exact).
//! - 16 writers for WRITE_SECONDS: on the file (16 connections), and on the
//!   database from two "machines" (8 writers on each of two replicas):
//!   writes/s, p50 / p99 per write, and every write found afterwards.
//!
//! Needs a server: `scripts/with-postgres cargo bench -p mnemo-store --bench
//! postgres [-- NOTES [OTHERS [WRITE_SECONDS]]]` (10000, 9, 10 by default).

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{QUERIES, corpus, measure, percentile};
use mnemo_core::recall::RecallRequest;
use mnemo_core::recall::token_signs::QueryTokens;
use mnemo_core::{Actor, Kind, NewNote, Priority, Provenance, Timestamp};
use mnemo_store::import_jsonl::{prepare, write};
use mnemo_store::recall::{DEFAULT_POOL, DEFAULT_RERANK};
use mnemo_store::{Scope, Store};

const WRITERS: usize = 16;

/// A new, empty database on the server `scripts/with-postgres` started.
fn new_database(server: &str, name: &str) -> String {
    let mut client = postgres::Client::connect(server, postgres::NoTls).expect("the server");
    client.batch_execute(&format!("DROP DATABASE IF EXISTS {name}")).unwrap();
    client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    server.replacen("/postgres?", &format!("/{name}?"), 1)
}

struct Queries {
    vectors: Vec<Vec<f32>>,
    tokens: Vec<QueryTokens>,
}

/// Recall p50 / p95 of `store`: first stage, with late interaction, and the stages alone.
fn recall_figures(store: &Store, q: &Queries) -> [(f64, f64); 5] {
    let request = RecallRequest::new("bench", 10);
    let ws = Scope::Workspace("bench".into());
    for (text, vector) in QUERIES.iter().zip(&q.vectors) {
        store.recall(text, Some(vector), &request, DEFAULT_POOL).unwrap();
    }
    [
        measure(|i| drop(store.recall(QUERIES[i], Some(&q.vectors[i]), &request, DEFAULT_POOL).unwrap())),
        measure(|i| {
            let late = Some(&q.tokens[i]);
            let vector = Some(q.vectors[i].as_slice());
            drop(store.recall_reranked(QUERIES[i], vector, &request, DEFAULT_POOL, DEFAULT_RERANK, late).unwrap())
        }),
        measure(|i| drop(store.lexical_matches(QUERIES[i], DEFAULT_POOL, &ws).unwrap())),
        measure(|i| drop(store.nearest(&q.vectors[i], DEFAULT_POOL, &ws).unwrap())),
        measure(|i| drop(store.nearest(&q.vectors[i], DEFAULT_POOL, &Scope::All).unwrap())),
    ]
}

/// Exact pgvector against an HNSW index (made here, dropped after) on `url`:
/// p50 of the 50 nearest notes in the workspace, and the share of the exact
/// answer HNSW finds.
fn hnsw_against_exact(url: &str, q: &Queries) {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let dims = q.vectors[0].len();
    let started = Instant::now();
    client
        .batch_execute(&format!(
            "CREATE INDEX bench_hnsw ON note_vectors USING hnsw ((embedding::vector({dims})) vector_cosine_ops)"
        ))
        .unwrap();
    let built = started.elapsed().as_secs_f64();
    let exact = "SELECT note_id FROM note_vectors WHERE workspace = 'bench'
                 GROUP BY note_id ORDER BY min(embedding <=> $1::text::vector), note_id LIMIT 50";
    let hnsw = format!(
        "SELECT note_id FROM (SELECT note_id, embedding::vector({dims}) <=> $1::text::vector({dims}) AS d
         FROM note_vectors WHERE workspace = 'bench' ORDER BY embedding::vector({dims}) <=> $1::text::vector({dims})
         LIMIT 200) c GROUP BY note_id ORDER BY min(d), note_id LIMIT 50"
    );
    client.batch_execute("SET hnsw.ef_search = 200; SET hnsw.iterative_scan = relaxed_order").unwrap();
    let ids = |client: &mut postgres::Client, sql: &str, v: &str| -> Vec<i64> {
        client.query(sql, &[&v]).unwrap().iter().map(|r| r.get(0)).collect()
    };
    let (mut found, mut total) = (0, 0);
    let texts: Vec<String> = q.vectors.iter().map(|v| mnemo_store::postgres::vector_literal(v)).collect();
    for v in &texts {
        let truth = ids(&mut client, exact, v);
        let approximate = ids(&mut client, &hnsw, v);
        found += truth.iter().filter(|id| approximate.contains(id)).count();
        total += truth.len();
    }
    let exact_time = measure(|i| drop(ids(&mut client, exact, &texts[i])));
    let hnsw_time = measure(|i| drop(ids(&mut client, &hnsw, &texts[i])));
    client.batch_execute("DROP INDEX bench_hnsw").unwrap();
    println!(
        "\nvector search of the workspace in the large store, 50 nearest notes: exact {:.1} / {:.1} ms; \
         HNSW (built in {built:.1} s, ef_search 200) {:.1} / {:.1} ms, finding {found} of the exact {total} ({:.1}%)",
        exact_time.0,
        exact_time.1,
        hnsw_time.0,
        hnsw_time.1,
        100.0 * found as f64 / total.max(1) as f64
    );
}

fn note(title: String) -> NewNote {
    NewNote {
        kind: Kind::Finding,
        priority: Priority::Medium,
        title,
        body: "written by the writers benchmark".into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors: vec![],
    }
}

/// `WRITERS` threads writing notes for `seconds`, each through its own
/// store opened by `open(writer)`: writes/s, p50 / p99 per write, and the
/// count of notes written.
fn writers(open: impl Fn(usize) -> Store + Sync, seconds: u64) -> (f64, f64, f64, usize) {
    let done = AtomicUsize::new(0);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut latencies: Vec<Duration> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let (open, done) = (&open, &done);
                scope.spawn(move || {
                    let mut store = open(writer);
                    let mut times = Vec::new();
                    let mut n = 0;
                    while Instant::now() < deadline {
                        let title = format!("Writer {writer} note {n}");
                        let started = Instant::now();
                        store
                            .write(|w| w.create("writers", note(title), Actor::Agent, Timestamp(1_800_000_000)))
                            .unwrap();
                        times.push(started.elapsed());
                        n += 1;
                    }
                    done.fetch_add(n, Ordering::SeqCst);
                    times
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let writes = done.load(Ordering::SeqCst);
    (writes as f64 / seconds as f64, percentile(&mut latencies, 0.5), percentile(&mut latencies, 0.99), writes)
}

fn main() {
    let server = std::env::var("MNEMO_TEST_POSTGRES")
        .expect("no server: run this under scripts/with-postgres (see the header of benches/postgres.rs)");
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let count = args.first().copied().unwrap_or(10_000);
    let others = args.get(1).copied().unwrap_or(9);
    let seconds = args.get(2).copied().unwrap_or(10) as u64;
    let mut embedder = common::embedder();
    let identity = embedder.identity().to_string();
    let text = corpus(count);
    eprintln!("embedding {count} notes");
    let grouped = embedder.embed_notes(&prepare(text.as_bytes(), Actor::Agent).unwrap().texts(), |_, _| {}).unwrap();
    let queries = Queries {
        vectors: embedder.embed_queries(&QUERIES).unwrap(),
        tokens: QUERIES
            .iter()
            .map(|q| QueryTokens::new(&embedder.query_token_vectors(q).unwrap(), embedder.dims()))
            .collect(),
    };

    let dir = tempfile::tempdir().unwrap();
    let at = Timestamp(1_800_000_000);
    println!(
        "| notes in the store | store | copy into the database | first stage p50 / p95 | with late interaction p50 / p95 | lexical, workspace p50 | vector, workspace p50 | vector, store p50 |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|");
    let mut large_url = String::new();
    for copies in [0, others] {
        let total = count * (copies + 1);
        let file = dir.path().join(format!("store-{total}.db"));
        let mut store = Store::open(&file).unwrap();
        for copy in 0..=copies {
            let workspace = if copy == 0 { "bench".to_string() } else { format!("other-{copy}") };
            let text = text.replace(r#""workspace": "bench""#, &format!(r#""workspace": "{workspace}""#));
            write(&mut store, prepare(text.as_bytes(), Actor::Agent).unwrap(), at, Some((&grouped, &identity)))
                .unwrap();
        }
        let url = new_database(&server, &format!("bench_{total}"));
        let started = Instant::now();
        mnemo_store::postgres::copy_into(&store, &mut mnemo_store::postgres::connect(&url).unwrap()).unwrap();
        let copied = started.elapsed().as_secs_f64();
        let replica = dir.path().join(format!("replica-{total}.db"));
        let shared = mnemo_store::postgres::open_with_replica(&url, &replica).unwrap();
        for (name, store, copy) in
            [("SQLite file", &store, String::new()), ("PostgreSQL", &shared, format!("{copied:.1} s"))]
        {
            let [first, late, lexical, vector, vector_all] = recall_figures(store, &queries);
            println!(
                "| {total} | {name} | {copy} | {:.1} / {:.1} ms | {:.1} / {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms |",
                first.0, first.1, late.0, late.1, lexical.0, vector.0, vector_all.0
            );
        }
        large_url = url;
    }
    hnsw_against_exact(&large_url, &queries);

    println!("\n{WRITERS} writers for {seconds} s, one note a write:\n");
    println!("| store | writes/s | p50 | p99 | notes written | notes found |");
    println!("|---|---:|---:|---:|---:|---:|");
    let file = dir.path().join("writers.db");
    drop(Store::open(&file).unwrap());
    let (rate, p50, p99, written) = writers(|_| Store::open(&file).unwrap(), seconds);
    let found = Store::open(&file).unwrap().stats(&Scope::All).unwrap().notes;
    println!("| SQLite file, {WRITERS} connections | {rate:.0} | {p50:.1} ms | {p99:.1} ms | {written} | {found} |");
    let url = new_database(&server, "bench_writers");
    let machines: Vec<PathBuf> = ["a", "b"].iter().map(|m| dir.path().join(format!("machine-{m}.db"))).collect();
    drop(mnemo_store::postgres::open_with_replica(&url, &machines[0]).unwrap());
    let open = |writer: usize| mnemo_store::postgres::open_with_replica(&url, &machines[writer % 2]).unwrap();
    let (rate, p50, p99, written) = writers(open, seconds);
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let found: i64 = client.query_one("SELECT count(*) FROM notes", &[]).unwrap().get(0);
    println!(
        "| PostgreSQL, two machines of {} writers | {rate:.0} | {p50:.1} ms | {p99:.1} ms | {written} | {found} |",
        WRITERS / 2
    );
    assert_eq!(found as usize, written, "every write is in the database");
}
