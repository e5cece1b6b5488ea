//! Waiting for another writer: SQLite calls [`retry_soon`] while the store
//! is locked. Its default busy handler (`busy_timeout`) sleeps longer the
//! longer a connection has waited (up to 100 ms a try), so a writer that has
//! waited long keeps waiting while newcomers get in: with 16 writers, p50 9 ms
//! and p99 744 ms (`tests/e2e/load.rs`). Retrying every half to one
//! millisecond, with jitter so waiters do not wake together, keeps every
//! wait short until [`BUSY_TIMEOUT`](crate::store::BUSY_TIMEOUT) has passed.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::store::BUSY_TIMEOUT;

thread_local! {
    /// When this thread's current wait began (SQLite counts tries from 0).
    static WAIT_STARTED: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Sleep briefly and try again (`true`), or give up once the wait has lasted
/// [`BUSY_TIMEOUT`] (`false`: the statement fails with `SQLITE_BUSY`).
pub(crate) fn retry_soon(tries: i32) -> bool {
    let now = Instant::now();
    let started = WAIT_STARTED.with(|cell| {
        if tries == 0 || cell.get().is_none() {
            cell.set(Some(now));
        }
        cell.get().unwrap_or(now)
    });
    if now.duration_since(started) >= BUSY_TIMEOUT {
        return false;
    }
    // 500–1000 µs, the jitter from the wall clock's low bits (no generator
    // needed): waiters that started together wake apart.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let jitter = u64::from(nanos % 500_000) / 1000;
    std::thread::sleep(Duration::from_micros(500 + jitter));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_retries_quickly_and_starts_again_at_try_zero() {
        let started = Instant::now();
        for tries in 0..20 {
            assert!(retry_soon(tries));
        }
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(10) && elapsed < Duration::from_millis(200), "{elapsed:?}");
        WAIT_STARTED.with(|cell| cell.set(Some(Instant::now() - BUSY_TIMEOUT)));
        assert!(!retry_soon(21), "a wait that has lasted BUSY_TIMEOUT gives up");
        assert!(retry_soon(0), "the next wait starts its own clock");
    }
}
