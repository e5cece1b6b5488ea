//! Noticing writes to the store by any process: a `notify` watch on the
//! store's directory, filtered to the store file and its WAL/SHM siblings.
//! Long-lived processes (the mirror worker, the language server) wake on it
//! instead of polling.

use std::path::Path;

use notify::Watcher;

/// The watcher; dropping it stops the watch.
pub type StoreWatcher = notify::RecommendedWatcher;

/// Call `on_change` whenever the store file (or its `-wal`/`-shm`) changes.
pub fn watch_store(store_path: &Path, on_change: impl Fn() + Send + 'static) -> notify::Result<StoreWatcher> {
    let dir = store_path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let prefix = store_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let event = match event {
            Ok(event) => event,
            Err(e) => return tracing::debug!(error = %e, "store watch error; this change is not seen"),
        };
        let touches_store =
            event.paths.iter().any(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix)));
        if !event.kind.is_access() && touches_store {
            tracing::trace!(kind = ?event.kind, paths = ?event.paths, "store file changed");
            on_change();
        }
    })?;
    watcher.watch(&dir, notify::RecursiveMode::NonRecursive)?;
    tracing::debug!(dir = %dir.display(), "watching the store for other processes' writes");
    Ok(watcher)
}
