//! Hearing other machines' writes to a shared store: a thread with its own
//! connection that `LISTEN`s on the channel every write notifies and pulls
//! this machine's replica up to date (`Store::open` pulls). The replica's
//! file changes, so whatever watches the store (`store_watch`) wakes as for
//! a local write. A lost connection is retried every few seconds (pulling
//! once on reconnecting: a notification may have been missed meanwhile).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;

use super::replica::CHANNEL;

/// The listening thread; dropping it stops the thread (within a second).
pub struct Listener {
    stop: Arc<AtomicBool>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Listen for writes to the shared store at `url` and pull them.
pub fn listen(url: &str) -> Listener {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let url = url.to_string();
    std::thread::spawn(move || {
        while !stopped.load(Ordering::SeqCst) {
            if let Err(e) = listen_once(&url, &stopped) {
                tracing::warn!(error = %e, "lost the shared store's notifications; retrying");
                std::thread::sleep(Duration::from_secs(3));
            }
        }
    });
    Listener { stop }
}

fn listen_once(url: &str, stopped: &AtomicBool) -> Result<(), crate::StoreError> {
    let mut client = super::connect_as_is(url)?;
    client.batch_execute(&format!("LISTEN {CHANNEL}")).map_err(|e| super::pg("cannot listen", e))?;
    pull(url);
    while !stopped.load(Ordering::SeqCst) {
        let mut notifications = client.notifications();
        let heard = notifications
            .timeout_iter(Duration::from_millis(500))
            .next()
            .map_err(|e| super::pg("cannot hear notifications", e))?;
        if heard.is_some() {
            // Those that came meanwhile are answered by the same pull.
            while notifications.iter().next().map_err(|e| super::pg("cannot hear notifications", e))?.is_some() {}
            pull(url);
        }
    }
    Ok(())
}

fn pull(url: &str) {
    if let Err(e) = crate::Store::open(std::path::Path::new(url)) {
        tracing::warn!(error = %e, "cannot pull the shared store's new writes");
    }
}
