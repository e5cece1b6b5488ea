//! Benchmark: the language server on generated stores of 10k and 100k notes
//! (release binary over stdio, the real model): time from `initialize` to the
//! first diagnostics of the open mirror, hover p50/p95 over entry ids,
//! workspace-symbol (hybrid recall) p50/p95, and the server's RSS; then a
//! checkout saved twenty times with one entry changed (`memory/checkin`, the
//! text there and back, as the editors send it: what a person waits for on
//! save; the store and mirror are put back after). Stores are built once
//! (import with embedding) under `target/bench-stores/` and reused.
//! Run with `cargo bench -p mnemo --bench lsp` (pass sizes to override;
//! `-- --no-model` runs the server without a model, on stores imported without
//! embedding: its own memory, and the lexical side of workspace symbols).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

#[path = "../../mnemo-store/benches/common/mod.rs"]
mod common;

const WORDS: [&str; 10] = [
    "cache eviction",
    "tls proxy",
    "daemon restart",
    "index reload",
    "timeout metrics",
    "purge header",
    "upstream lock",
    "segment config",
    "restart lock",
    "proxy timeout",
];

/// `mnemo lsp` on a generated store, through the shared test client.
struct Server(lsp_test_client::Client);

impl Server {
    fn start(root: &Path, store: &Path, model: &Path) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mnemo"));
        command
            .arg("lsp")
            .current_dir(root)
            .env("MNEMO_STORE", store)
            .env("MNEMO_MODEL_DIR", model)
            .stderr(Stdio::null());
        Server(lsp_test_client::Client::spawn(command).with_timeout(Duration::from_secs(600)))
    }

    /// Resident and peak resident memory, in MB.
    fn memory(&mut self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.child().id())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
                .map_or(0.0, |kb| kb / 1024.0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl std::ops::Deref for Server {
    type Target = lsp_test_client::Client;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    times[((times.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3
}

/// The model directory the server gets: the installed model, or with
/// `--no-model` a directory that holds none.
fn installed_model(none: bool) -> PathBuf {
    if none {
        return PathBuf::from("/nonexistent/mnemo-bench-no-model");
    }
    let home = std::env::var("HOME").unwrap();
    let dir = std::env::var("MNEMO_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or(PathBuf::from(home).join(".local/share/mnemo/model"));
    assert!(dir.join("model.onnx").is_file(), "no model at {}: run scripts/install-model", dir.display());
    dir
}

/// A workspace with `count` notes (embedded) and its mirror, built once.
fn store(count: usize, model: &Path) -> (PathBuf, PathBuf) {
    let stores = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-stores");
    std::fs::create_dir_all(&stores).unwrap();
    let name = if model.join("model.onnx").is_file() { count.to_string() } else { format!("{count}-no-model") };
    let base = stores.canonicalize().unwrap().join(name);
    let root = base.join("workspace");
    let store = base.join("memory.db");
    if !base.join("ready").exists() {
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let corpus =
            common::corpus(count).replace(r#""workspace": "bench""#, &format!(r#""workspace": "{}""#, root.display()));
        let file = base.join("corpus.jsonl");
        std::fs::write(&file, corpus).unwrap();
        let run = |args: &[&str]| {
            let out = Command::new(env!("CARGO_BIN_EXE_mnemo"))
                .args(args)
                .current_dir(&root)
                .env("MNEMO_STORE", &store)
                .env("MNEMO_MODEL_DIR", model)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        eprintln!("building the {count}-note store (import, embedding when there is a model)...");
        run(&["import", "jsonl", file.to_str().unwrap()]);
        run(&["export"]);
        let mirror = std::fs::read_to_string(root.join("MEMORY.md")).unwrap();
        assert!(mirror.lines().filter(|l| l.starts_with("- [#")).count() == count, "the mirror shows every note");
        std::fs::write(base.join("ready"), "").unwrap();
    }
    (root.canonicalize().unwrap(), store)
}

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![10_000, 100_000] } else { sizes };
    let model = installed_model(std::env::args().any(|a| a == "--no-model"));
    println!(
        "| notes | initialize → first diagnostics | hover p50 | hover p95 | workspace symbol p50 | workspace symbol p95 | RSS | peak RSS |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut saved = Vec::new();
    for count in sizes {
        let (root, store_path) = store(count, &model);
        let mirror = root.join("MEMORY.md");
        let text = std::fs::read_to_string(&mirror).unwrap();
        // The saves below write to the store and the mirror: put back after.
        let kept = keep_aside(&[&store_path, &store_path.with_extension("db-wal"), &mirror]);
        let mut server = Server::start(&root, &store_path, &model);
        let started = Instant::now();
        server.request(
            "initialize",
            json!({ "processId": null, "rootUri": format!("file://{}", root.display()), "capabilities": {} }),
        );
        server.notify("initialized", json!({}));
        let mirror_uri = format!("file://{}", mirror.display());
        server.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": mirror_uri, "languageId": "markdown", "version": 1, "text": text } }),
        );
        server.wait(|m| m["method"] == "textDocument/publishDiagnostics");
        let first_diagnostics = started.elapsed();

        let entry_lines: Vec<usize> =
            text.lines().enumerate().filter(|(_, l)| l.starts_with("- [#")).map(|(i, _)| i).collect();
        let mut hovers = Vec::new();
        for i in 0..300 {
            let line = entry_lines[(i * 7919) % entry_lines.len()];
            let started = Instant::now();
            let answer = server.request(
                "textDocument/hover",
                json!({ "textDocument": { "uri": mirror_uri }, "position": { "line": line, "character": 4 } }),
            );
            hovers.push(started.elapsed());
            assert!(answer["result"]["contents"]["value"].is_string(), "{answer}");
        }
        // The first query waits for the model; measure warm ones.
        server.request("workspace/symbol", json!({ "query": "warm up" }));
        let mut symbols = Vec::new();
        for i in 0..50 {
            let started = Instant::now();
            let answer = server.request("workspace/symbol", json!({ "query": WORDS[i % WORDS.len()] }));
            symbols.push(started.elapsed());
            assert!(answer["result"].as_array().is_some_and(|r| !r.is_empty()), "{answer}");
        }
        // Memory freed after a large text is given back shortly after (mnemo-lsp `memory.rs`).
        std::thread::sleep(Duration::from_secs(1));
        let (rss, peak) = server.memory();
        let saves = saved_again_and_again(&mut server, &root);
        server.0.shutdown();
        put_back(&store_path, kept);
        println!(
            "| {count} | {:.0} ms | {:.2} ms | {:.2} ms | {:.1} ms | {:.1} ms | {rss:.0} MB | {peak:.0} MB |",
            first_diagnostics.as_secs_f64() * 1e3,
            percentile(&mut hovers, 0.5),
            percentile(&mut hovers, 0.95),
            percentile(&mut symbols, 0.5),
            percentile(&mut symbols, 0.95),
        );
        saved.push((count, saves));
    }
    println!();
    println!("| notes | a checkout with one entry changed, saved (`memory/checkin`: text there and back) p50 | p95 |");
    println!("|---:|---:|---:|");
    for (count, mut saves) in saved {
        println!("| {count} | {:.1} ms | {:.1} ms |", percentile(&mut saves, 0.5), percentile(&mut saves, 0.95));
    }
}

/// Copies of `files` (the store first; those that exist) beside them, to
/// [`put_back`]; a run that stopped before putting its copies back has them
/// put back first.
fn keep_aside(files: &[&Path]) -> Vec<(PathBuf, PathBuf)> {
    let copy_of = |file: &Path| PathBuf::from(format!("{}.bench-kept", file.display()));
    let left: Vec<(PathBuf, PathBuf)> =
        files.iter().map(|file| (file.to_path_buf(), copy_of(file))).filter(|(_, copy)| copy.exists()).collect();
    if !left.is_empty() {
        put_back(files[0], left);
    }
    files
        .iter()
        .filter(|file| file.exists())
        .map(|file| {
            let copy = copy_of(file);
            std::fs::copy(file, &copy).unwrap();
            (file.to_path_buf(), copy)
        })
        .collect()
}

/// The files [`keep_aside`] copied, as they were, with the `store`'s
/// write-ahead log and shared memory gone (nothing remembers the writes undone).
fn put_back(store: &Path, kept: Vec<(PathBuf, PathBuf)>) {
    let _ = std::fs::remove_file(store.with_extension("db-wal"));
    let _ = std::fs::remove_file(store.with_extension("db-shm"));
    for (file, copy) in kept {
        std::fs::rename(copy, file).unwrap();
    }
}

/// What an editor does when a person saves a checkout, twenty times: one
/// entry's title changed, the whole text sent with `memory/checkin` (as
/// the VS Code and Neovim clients send it), the new text back in the
/// answer; each save of the text the one before gave back. The time is
/// the round trip: what the person waits for before the buffer shows the
/// store. (After the figures above: a checkout adds its text to the
/// server's memory.)
fn saved_again_and_again(server: &mut Server, root: &Path) -> Vec<Duration> {
    let checkout = server.request("memory/checkout", json!({ "workspace": root }));
    let uri = checkout["result"]["uri"].as_str().expect("a checkout's uri").to_string();
    let mut text = checkout["result"]["text"].as_str().expect("a checkout's text").to_string();
    let mut times = Vec::new();
    for n in 0..20 {
        let active =
            |l: &&str| !["REVOKED", "STALE", "SUPERSEDED", "EXPIRED", "PROPOSED"].iter().any(|m| l.contains(m));
        let line = text.lines().filter(|l| l.starts_with("- [#")).find(active);
        let line = line.expect("an active entry").to_string();
        let edited = text.replacen(&line, &format!("{line} (saved {n})"), 1);
        let started = Instant::now();
        let answer = server.request("memory/checkin", json!({ "uri": uri, "text": edited }));
        times.push(started.elapsed());
        assert_eq!(answer["result"]["applied"].as_array().map(Vec::len), Some(1), "{answer}");
        text = answer["result"]["text"].as_str().expect("the new text").to_string();
    }
    times
}
