//! Benchmark: the drift check of 10k anchors over 2k files (100 lines each,
//! five anchored ranges per file): the first check after opening the store
//! (reads every note and file), a repeated one, and one file changed (five
//! anchors drift: the check plus their stale flags in one transaction).
//! Run with `cargo bench -p mnemo-store --bench drift` (pass a number of
//! files to override 2000).

use std::time::Instant;

use mnemo_core::{Actor, Kind, NewNote, Priority, Provenance, Timestamp};
use mnemo_store::Store;
use mnemo_store::anchor::capture;
use mnemo_store::workspace::Workspace;

fn main() {
    let files: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(2_000);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("project");
    for f in 0..files {
        let path = root.join(format!("src/m{}/file{f}.rs", f % 50));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text: String = (1..=100).map(|l| format!("fn f{f}_{l}() {{ /* line {l} */ }}\n")).collect();
        std::fs::write(path, text).unwrap();
    }
    let workspace = Workspace::resolve(Some(root.to_str().unwrap()), &root).unwrap();
    let store_path = dir.path().join("memory.db");
    let mut store = Store::open(&store_path).unwrap();
    store
        .write(|w| {
            for f in 0..files {
                for a in 0..5u32 {
                    let spec = format!("src/m{}/file{f}.rs:{}-{}", f % 50, a * 20 + 1, a * 20 + 10);
                    let note = NewNote {
                        kind: Kind::Gotcha,
                        priority: Priority::Medium,
                        title: format!("Note on {spec}"),
                        body: String::new(),
                        provenance: Provenance::Agent,
                        quote: None,
                        anchors: vec![capture(&root, &spec).unwrap()],
                    };
                    w.create(&workspace.id, note, Actor::Agent, Timestamp(1_800_000_000))?;
                }
            }
            Ok(())
        })
        .unwrap();
    drop(store);
    let now = Timestamp(1_800_000_100);

    let started = Instant::now();
    let mut store = Store::open(&store_path).unwrap();
    let first = store.check_drift(&workspace, now).unwrap();
    let cold = started.elapsed();
    assert_eq!((first.anchors.len(), first.files), (files * 5, files));
    let started = Instant::now();
    store.check_drift(&workspace, now).unwrap();
    let warm = started.elapsed();

    let changed = root.join("src/m7/file7.rs");
    let text = std::fs::read_to_string(&changed).unwrap().replace("/* line ", "/* changed line ");
    std::fs::write(&changed, text).unwrap();
    let started = Instant::now();
    let after = store.check_drift(&workspace, now).unwrap();
    let one_change = started.elapsed();
    assert_eq!(after.flagged.len(), 5);

    println!(
        "| anchors | files | first check (open + read all) | repeated check | one file changed (check + 5 stale flags) |"
    );
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {files} | {:.0} ms | {:.0} ms | {:.0} ms |",
        files * 5,
        cold.as_secs_f64() * 1e3,
        warm.as_secs_f64() * 1e3,
        one_change.as_secs_f64() * 1e3
    );
}
