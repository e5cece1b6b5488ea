//! Benchmark: import generated corpora of 1k, 10k and 100k notes into a fresh
//! store (one transaction through the one write path), then list, verify and
//! render the MEMORY.md mirror. Prints one table row per size; run with
//! `cargo bench -p mnemo-store --bench corpus` (pass sizes to override).

use std::time::Instant;

mod common;

use common::corpus;
use mnemo_core::memory_md::{Flavour, render_views};
use mnemo_core::{Actor, Timestamp};
use mnemo_store::document::{DocumentKind, render_workspace};
use mnemo_store::import_jsonl::import;
use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store};

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![1_000, 10_000, 100_000] } else { sizes };
    println!(
        "| notes | import | import notes/s | list all | verify | store size | render (in memory) | mirror export (read + render) | mirror size |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for count in sizes {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        let text = corpus(count);
        let mut store = Store::open(&path).unwrap();
        let started = Instant::now();
        let report = import(&mut store, text.as_bytes(), Actor::Agent, Timestamp(1_800_000_000)).unwrap();
        let import_time = started.elapsed();
        assert_eq!(report.notes, count);
        let started = Instant::now();
        let views = store.notes(&Scope::Workspace("bench".into())).unwrap();
        let list_time = started.elapsed();
        assert_eq!(views.len(), count);
        let pure_render_time = (0..5)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(render_views(&Flavour::Mirror, "bench", &views));
                started.elapsed()
            })
            .min()
            .unwrap();
        let started = Instant::now();
        assert!(store.verify().unwrap().is_clean());
        let verify_time = started.elapsed();
        let workspace = Workspace::named("bench");
        let render_time = (0..5)
            .map(|_| {
                let started = Instant::now();
                let document = render_workspace(&store, &workspace, DocumentKind::Mirror).unwrap();
                (started.elapsed(), document.text.len())
            })
            .min()
            .unwrap();
        drop(store);
        let size: u64 = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
        println!(
            "| {count} | {:.2} s | {:.0} | {:.0} ms | {:.0} ms | {:.1} MB | {:.0} ms | {:.0} ms | {:.1} MB |",
            import_time.as_secs_f64(),
            count as f64 / import_time.as_secs_f64(),
            list_time.as_secs_f64() * 1e3,
            verify_time.as_secs_f64() * 1e3,
            size as f64 / 1e6,
            pure_render_time.as_secs_f64() * 1e3,
            render_time.0.as_secs_f64() * 1e3,
            render_time.1 as f64 / 1e6,
        );
    }
}
