//! Waiting out a burst of pokes: the async driver of the pure
//! [`Debouncer`] (`mnemo_core::debounce`) on tokio's clock, which the
//! refresh and drift tasks wait with. A burst ends `quiet` after its last
//! poke, but never later than `max_wait` after its first, so a steady
//! stream of writes still gets served. Every rule of when to fire is the
//! debouncer's; this file only turns channel messages and tokio's clock
//! into its inputs.

use std::time::Duration;

use mnemo_core::debounce::Debouncer;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::{Instant, timeout_at};

/// How long a burst is waited out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub quiet: Duration,
    pub max_wait: Duration,
}

/// Pokes (`()` on a channel), gathered into bursts.
pub struct DebouncedPokes {
    /// Which task waits (for the logs).
    task: &'static str,
    receiver: UnboundedReceiver<()>,
    debouncer: Debouncer,
    /// Applied once the burst under way (if any) has fired.
    next_timing: Option<Timing>,
    /// Time zero of the debouncer's milliseconds.
    origin: Instant,
    pokes_in_burst: u32,
}

/// What woke the waiting task.
enum Woken {
    Poke,
    Deadline,
    Closed,
}

impl DebouncedPokes {
    pub fn new(task: &'static str, receiver: UnboundedReceiver<()>, timing: Timing) -> DebouncedPokes {
        DebouncedPokes {
            task,
            receiver,
            debouncer: debouncer(timing),
            next_timing: None,
            origin: Instant::now(),
            pokes_in_burst: 0,
        }
    }

    /// Wait the next burst out with `timing` (a burst under way keeps its own).
    pub fn set_timing(&mut self, timing: Timing) {
        if self.debouncer.is_pending() {
            self.next_timing = Some(timing);
        } else {
            self.debouncer = debouncer(timing);
        }
    }

    /// Wait until a burst of pokes is over. `false` once no poke can come any
    /// more; a burst under way when the senders went away still ends with `true`.
    pub async fn burst(&mut self) -> bool {
        loop {
            let woken = match self.debouncer.deadline() {
                Some(deadline) => {
                    let at = self.origin + Duration::from_millis(deadline);
                    match timeout_at(at, self.receiver.recv()).await {
                        Ok(Some(())) => Woken::Poke,
                        Ok(None) => Woken::Closed,
                        Err(_) => Woken::Deadline,
                    }
                }
                None => match self.receiver.recv().await {
                    Some(()) => Woken::Poke,
                    None => Woken::Closed,
                },
            };
            let now = self.now();
            match woken {
                Woken::Poke => {
                    self.debouncer.poke(now);
                    self.pokes_in_burst += 1;
                }
                Woken::Deadline => {}
                Woken::Closed => {
                    self.pokes_in_burst = 0;
                    return self.debouncer.fire(u64::MAX);
                }
            }
            if self.debouncer.fire(now) {
                tracing::debug!(task = self.task, pokes = self.pokes_in_burst, "debounce fired: the burst is over");
                self.pokes_in_burst = 0;
                if let Some(timing) = self.next_timing.take() {
                    self.debouncer = debouncer(timing);
                }
                return true;
            }
        }
    }

    /// Milliseconds since `origin`, the debouncer's clock.
    fn now(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }
}

fn debouncer(timing: Timing) -> Debouncer {
    Debouncer::new(timing.quiet.as_millis() as u64, timing.max_wait.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc::unbounded_channel;

    const TIMING: Timing = Timing { quiet: Duration::from_millis(150), max_wait: Duration::from_millis(1000) };

    /// A burst ended at `elapsed` on the timer's millisecond grain.
    fn about(elapsed: Duration, expected: u64) -> bool {
        let expected = Duration::from_millis(expected);
        expected <= elapsed && elapsed < expected + Duration::from_millis(2)
    }

    // Time is tokio's paused clock: it advances only when every task waits,
    // straight to the next timer, so nothing here sleeps for real.
    #[tokio::test(start_paused = true)]
    async fn a_steady_stream_of_pokes_still_ends_a_burst_within_max_wait() {
        let (sender, receiver) = unbounded_channel();
        let mut pokes = DebouncedPokes::new("test", receiver, TIMING);
        let start = Instant::now();
        tokio::spawn(async move {
            while sender.send(()).is_ok() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        assert!(pokes.burst().await);
        assert!(about(start.elapsed(), 1000), "{:?}", start.elapsed());
        let first = Instant::now();
        assert!(pokes.burst().await, "the stream goes on: so do the bursts");
        // The poke due as the first burst ended may open the next one or not.
        let waited = first.elapsed();
        assert!(about(waited, 1000) || about(waited, 1050), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_ends_a_quiet_spell_after_its_last_poke() {
        let (sender, receiver) = unbounded_channel();
        let mut pokes = DebouncedPokes::new("test", receiver, TIMING);
        let start = Instant::now();
        tokio::spawn(async move {
            for _ in 0..3 {
                sender.send(()).unwrap();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            std::future::pending::<()>().await;
        });
        assert!(pokes.burst().await);
        assert!(about(start.elapsed(), 350), "the last poke at 200 ms, then 150 ms quiet: {:?}", start.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_under_way_when_the_senders_go_still_ends_then_waiting_stops() {
        let (sender, receiver) = unbounded_channel();
        let mut pokes = DebouncedPokes::new("test", receiver, TIMING);
        sender.send(()).unwrap();
        drop(sender);
        assert!(pokes.burst().await, "the pending burst");
        assert!(!pokes.burst().await, "nothing can come any more");
    }

    #[tokio::test(start_paused = true)]
    async fn new_timing_applies_from_the_next_burst() {
        let (sender, receiver) = unbounded_channel();
        let mut pokes = DebouncedPokes::new("test", receiver, TIMING);
        sender.send(()).unwrap();
        let start = Instant::now();
        let slow = Timing { quiet: Duration::from_millis(3000), max_wait: Duration::from_millis(30_000) };
        assert!(pokes.burst().await);
        assert!(about(start.elapsed(), 150), "{:?}", start.elapsed());
        sender.send(()).unwrap();
        pokes.set_timing(slow);
        let second = Instant::now();
        assert!(pokes.burst().await);
        assert!(about(second.elapsed(), 3000), "{:?}", second.elapsed());
    }
}
