//! Noticing writes to the store by any process: a `notify` watch on the
//! store's directory, filtered to changes of the store file's or its
//! `-wal`'s content. Long-lived processes (the mirror workers, the language
//! server, an MCP server standing for its mirror) wake on it instead of
//! polling; a standing worker also looks on a timer (`mirror/sync/stand.rs`).
//!
//! Only a content change is a write. Merely opening and closing the store —
//! which every wake-up does to look — creates and removes the `-wal` and
//! `-shm` files and writes the shared-memory index; reacting to those made
//! an idle language server wake itself up, dozens of times a second.

use std::path::Path;

use notify::Watcher;

/// The watch; dropping it stops it.
pub struct StoreWatcher {
    _files: notify::RecommendedWatcher,
    _shared: Option<crate::postgres::listen::Listener>,
}

/// Call `on_change` whenever the content of the store file or its `-wal`
/// changes. For a shared (`postgres://`) store: whenever this machine's
/// replica changes, which other machines' writes do too (they are pulled as
/// they are notified: `postgres::listen`).
pub fn watch_store(store_path: &Path, on_change: impl Fn() + Send + 'static) -> notify::Result<StoreWatcher> {
    if let Some(url) = store_path.to_str().filter(|p| crate::postgres::is_postgres(p)) {
        let replica = crate::postgres::replica_path(url).map_err(|e| notify::Error::generic(&e.to_string()))?;
        let files = watch_file(&replica, on_change)?;
        return Ok(StoreWatcher { _files: files, _shared: Some(crate::postgres::listen::listen(url)) });
    }
    Ok(StoreWatcher { _files: watch_file(store_path, on_change)?, _shared: None })
}

fn watch_file(store_path: &Path, on_change: impl Fn() + Send + 'static) -> notify::Result<notify::RecommendedWatcher> {
    // SQLite keeps the log beside the file a link resolves to: watch there.
    let store_path = std::fs::canonicalize(store_path).unwrap_or_else(|_| store_path.to_path_buf());
    let dir = store_path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let prefix = store_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let event = match event {
            Ok(event) => event,
            // A change may have been missed: look, as after a write.
            Err(e) => {
                tracing::debug!(error = %e, "store watch error; looking at the store in case a change was missed");
                return on_change();
            }
        };
        if event.need_rescan() {
            tracing::debug!("store watch overflowed; looking at the store in case a change was missed");
            return on_change();
        }
        let wal = format!("{prefix}-wal");
        let is_store_content = |p: &std::path::PathBuf| {
            p.file_name().is_some_and(|n| n.to_string_lossy() == prefix || n.to_string_lossy() == wal)
        };
        if is_write(&event.kind) && event.paths.iter().any(is_store_content) {
            tracing::trace!(kind = ?event.kind, paths = ?event.paths, "store file changed");
            on_change();
        }
    })?;
    watcher.watch(&dir, notify::RecursiveMode::NonRecursive)?;
    tracing::debug!(dir = %dir.display(), "watching the store for other processes' writes");
    Ok(watcher)
}

/// Whether an event changes a file's content (a write, or a file replaced
/// by a rename onto it) rather than its existence, metadata or access.
fn is_write(kind: &notify::EventKind) -> bool {
    use notify::event::{ModifyKind, RenameMode};
    matches!(kind, notify::EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any | ModifyKind::Name(RenameMode::To)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::Store;

    #[test]
    fn opening_the_store_is_not_a_write_and_a_write_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        drop(Store::open(&path).unwrap());
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        let _watch = watch_store(&path, move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        for _ in 0..20 {
            let store = Store::open(&path).unwrap();
            store.epoch().unwrap();
            drop(store);
        }
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(seen.load(Ordering::SeqCst), 0, "opening and reading the store woke the watch");
        a_write_is_seen(&path, &seen, "a write was not seen");
    }

    #[test]
    fn a_store_reached_through_a_link_is_watched_where_its_file_is() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("real")).unwrap();
        let real = dir.path().join("real/memory.db");
        drop(Store::open(&real).unwrap());
        let link = dir.path().join("memory.db");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        let _watch = watch_store(&link, move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
        a_write_is_seen(&link, &seen, "a write through the link was not seen");
    }

    /// Write a note to the store at `path`, and wait (at most 5 s) for the watch to count it in `seen`.
    fn a_write_is_seen(path: &Path, seen: &AtomicUsize, unseen: &str) {
        let mut store = Store::open(path).unwrap();
        store
            .write(|w| {
                w.create("/w", test_note(), mnemo_core::Actor::Agent, mnemo_core::Timestamp(0))?;
                Ok(())
            })
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while seen.load(Ordering::SeqCst) == 0 {
            assert!(std::time::Instant::now() < deadline, "{unseen}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn test_note() -> mnemo_core::NewNote {
        mnemo_core::NewNote {
            kind: mnemo_core::Kind::Finding,
            priority: mnemo_core::Priority::Medium,
            title: "A write".into(),
            body: String::new(),
            provenance: mnemo_core::Provenance::Agent,
            quote: None,
            anchors: vec![],
        }
    }
}
