//! Benchmark: check in 1, 100 and 1,000 changed entries of a checkout of a
//! 10k-note workspace (the generated corpus): the preview (parse + plan, what
//! the language server runs at each pause in typing: the base parsed by the
//! one before) and the whole check-in (plan, apply in one transaction,
//! re-render, carry over); then one entry changed and saved a hundred times
//! in turn, each check-in of the text the one before left; then a preview
//! of a checkout with a stray line after every 20th entry (each a
//! diagnostic, the worst case for matching problems to entries); then what
//! the kept checkout bases weigh after 40 checkouts with a note written
//! between each (a language server hands one out at every epoch). Median of
//! seven runs per row, each on a fresh copy of one imported store (opened
//! anew, as a one-shot command or a language server's request opens it);
//! run with `cargo bench -p mnemo-store --bench checkin` (pass a corpus
//! size to override 10000; `-- again`: only the check-ins of one entry one
//! after another, each of the text the one before left — for a profile).

use std::time::{Duration, Instant};

mod common;

use common::corpus;
use mnemo_core::checkin::Resolutions;
use mnemo_core::{Actor, Kind, NewNote, Priority, Provenance, Timestamp};
use mnemo_store::Store;
use mnemo_store::import_jsonl::import;
use mnemo_store::workspace::Workspace;

/// Retitle the first `count` active entries (each a supersession: two events and a new note).
fn edit(text: &str, count: usize) -> String {
    let mut left = count;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let active = line.starts_with("- [#")
                && !["REVOKED", "STALE", "SUPERSEDED", "EXPIRED"].iter().any(|m| line.contains(m));
            if active && left > 0 {
                left -= 1;
                format!("{line} (edited)")
            } else {
                line.to_string()
            }
        })
        .collect();
    assert_eq!(left, 0, "the corpus has enough active entries");
    lines.join("\n") + "\n"
}

/// A stray line of text after every `every`th entry.
fn with_stray_lines(text: &str, every: usize) -> (String, usize) {
    let mut out = String::with_capacity(text.len() + text.len() / 10);
    let (mut entries, mut strays) = (0, 0);
    for line in text.lines() {
        if line.starts_with("- [#") {
            if entries > 0 && entries % every == 0 {
                out.push_str("stray words typed between entries\n");
                strays += 1;
            }
            entries += 1;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, strays)
}

/// Runs per row (each on a fresh copy of one imported store); the median is shown.
const RUNS: usize = 7;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let size: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000);
    let text = corpus(size);
    let workspace = Workspace::named("bench");
    // One import, copied for every run: each run starts from the same file.
    let template = tempfile::tempdir().unwrap();
    {
        let mut store = Store::open(&template.path().join("memory.db")).unwrap();
        import(&mut store, text.as_bytes(), Actor::Agent, Timestamp(1_800_000_000)).unwrap();
        store.checkpoint().unwrap();
    }
    let fresh_store = || {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(template.path().join("memory.db"), dir.path().join("memory.db")).unwrap();
        let store = Store::open(&dir.path().join("memory.db")).unwrap();
        (dir, store)
    };
    // `-- again`: only the check-ins one after another (for a profile).
    if std::env::args().any(|a| a == "again") {
        saved_again_and_again(size, &workspace, fresh_store().1);
        return;
    }
    // A one-shot command first (`mnemo checkin`), then a process that keeps
    // its renderings (the language server, which rendered the checkout it
    // handed out): the flag holds for the rest of the process.
    let mut rows = Vec::new();
    for kept in [false, true] {
        if kept {
            mnemo_store::render_cache::keep_renders();
        }
        for (row, changed) in [1, 100, 1_000].into_iter().enumerate() {
            let (mut previews, mut checkins, mut events) = (Vec::new(), Vec::new(), 0);
            for _ in 0..RUNS {
                let (_dir, mut store) = fresh_store();
                let checkout = store.checkout(&workspace).unwrap();
                let edited = edit(&checkout.text, changed);
                // The first preview parses the base; the person's next
                // pauses in typing find it parsed (the one timed).
                store.preview_checkin(&workspace, &edited).unwrap();
                let started = Instant::now();
                let plan = store.preview_checkin(&workspace, &edited).unwrap();
                previews.push(started.elapsed());
                assert_eq!(plan.changes.len(), changed);
                let before = store.stats(&mnemo_store::Scope::All).unwrap().events;
                let started = Instant::now();
                let outcome =
                    store.checkin(&workspace, &edited, &Resolutions::default(), Timestamp(1_800_000_100)).unwrap();
                checkins.push(started.elapsed());
                assert_eq!(outcome.applied.len(), changed);
                assert!(outcome.document.unwrap().diagnostics.is_empty());
                events = store.stats(&mnemo_store::Scope::All).unwrap().events - before;
            }
            if kept {
                let (_, preview, once, events): &mut (usize, Duration, Duration, usize) = &mut rows[row];
                println!(
                    "| {size} | {changed} | {:.1} ms | {:.1} ms | {:.1} ms | {events} |",
                    preview.as_secs_f64() * 1e3,
                    once.as_secs_f64() * 1e3,
                    median(checkins).as_secs_f64() * 1e3,
                );
            } else {
                rows.push((changed, median(previews), median(checkins), events));
            }
        }
        if !kept {
            println!(
                "| notes | changed entries | preview (parse + plan) | check-in (plan, apply, re-render) | the same in a process that keeps its renderings | events appended |"
            );
            println!("|---:|---:|---:|---:|---:|---:|");
        }
    }
    saved_again_and_again(size, &workspace, fresh_store().1);

    let (dir, mut store) = fresh_store();
    let checkout = store.checkout(&workspace).unwrap();
    let (strayed, strays) = with_stray_lines(&checkout.text, 20);
    let mut previews = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let plan = store.preview_checkin(&workspace, &strayed).unwrap();
        previews.push(started.elapsed());
        assert!(plan.changes.is_empty() && plan.diagnostics.len() >= strays);
    }
    println!();
    println!("| notes | stray lines | preview (parse + plan) |");
    println!("|---:|---:|---:|");
    println!("| {size} | {strays} | {:.1} ms |", median(previews).as_secs_f64() * 1e3);

    for i in 0..40 {
        let title = format!("note {i} written between checkouts");
        let note = NewNote {
            kind: Kind::Finding,
            priority: Priority::Medium,
            title,
            body: "Its body.".into(),
            provenance: Provenance::Agent,
            quote: None,
            anchors: vec![],
        };
        store.write(|w| w.create("bench", note, Actor::Agent, Timestamp(1_800_000_200))).unwrap();
        store.checkout(&workspace).unwrap();
    }
    let (kept, bytes): (i64, i64) = rusqlite::Connection::open(dir.path().join("memory.db"))
        .unwrap()
        .query_row("SELECT count(*), sum(length(text) + coalesce(length(delta), 0)) FROM checkouts", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let one = store.checkout(&workspace).unwrap().text.len();
    println!();
    println!("| notes | checkouts | bases kept | bytes they hold | one checkout |");
    println!("|---:|---:|---:|---:|---:|");
    println!("| {size} | 41 | {kept} | {:.2} MB | {:.2} MB |", bytes as f64 / 1e6, one as f64 / 1e6);
}

/// Check-ins of one entry, each of the text the one before left, in a
/// process that keeps its renderings: a person saving again and again in
/// the language server (each check-in's new text is the next one's base).
fn saved_again_and_again(size: usize, workspace: &Workspace, mut store: Store) {
    mnemo_store::render_cache::keep_renders();
    let mut text = store.checkout(workspace).unwrap().text;
    let mut times = Vec::new();
    for _ in 0..100 {
        let edited = edit(&text, 1);
        let started = Instant::now();
        let outcome = store.checkin(workspace, &edited, &Resolutions::default(), Timestamp(1_800_000_100)).unwrap();
        times.push(started.elapsed());
        assert_eq!(outcome.applied.len(), 1);
        let document = outcome.document.unwrap();
        assert!(document.diagnostics.is_empty() && document.unapplied == 0);
        text = document.text;
    }
    println!();
    println!("| notes | one entry changed and saved, again and again | median check-in |");
    println!("|---:|---:|---:|");
    println!("| {size} | 100 times | {:.1} ms |", median(times).as_secs_f64() * 1e3);
}
