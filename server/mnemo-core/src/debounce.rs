//! A trailing-edge debouncer with time as an input: a burst of pokes within
//! `quiet` of each other fires once, `quiet` after the last poke, but never
//! later than `max_wait` after the first poke of the burst, so a steady stream
//! of writes still gets rendered. Milliseconds on any monotonic clock.

/// The longest a burst is held when nothing else says, for a `quiet` spell:
/// ten quiet spells, and at least ten seconds (the mirror's rule, shared by
/// every process that renders it).
pub fn default_max_wait(quiet: u64) -> u64 {
    quiet.saturating_mul(10).max(10_000)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Debouncer {
    quiet: u64,
    max_wait: u64,
    burst_started: Option<u64>,
    deadline: Option<u64>,
}

impl Debouncer {
    /// `max_wait` is raised to at least `quiet`.
    pub fn new(quiet: u64, max_wait: u64) -> Debouncer {
        Debouncer { quiet, max_wait: max_wait.max(quiet), burst_started: None, deadline: None }
    }

    /// Something happened at `now`.
    pub fn poke(&mut self, now: u64) {
        let started = *self.burst_started.get_or_insert(now);
        self.deadline = Some((now + self.quiet).min(started + self.max_wait));
    }

    /// When `fire` will next return true, if anything is pending.
    pub fn deadline(&self) -> Option<u64> {
        self.deadline
    }

    pub fn is_pending(&self) -> bool {
        self.deadline.is_some()
    }

    /// True once per burst, at or after its deadline; resets for the next burst.
    pub fn fire(&mut self, now: u64) -> bool {
        match self.deadline {
            Some(deadline) if now >= deadline => {
                self.deadline = None;
                self.burst_started = None;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_fires_once_after_the_quiet_period() {
        let mut d = Debouncer::new(3000, 30_000);
        assert!(!d.fire(0));
        for t in [0, 1000, 2500] {
            d.poke(t);
        }
        assert_eq!(d.deadline(), Some(5500));
        assert!(!d.fire(5499));
        assert!(d.fire(5500));
        assert!(!d.fire(9000), "fires once per burst");
        assert!(!d.is_pending());
    }

    #[test]
    fn a_steady_stream_still_fires_by_max_wait() {
        let mut d = Debouncer::new(3000, 10_000);
        let mut fired = Vec::new();
        for t in (0..25_000).step_by(1000) {
            d.poke(t);
            if d.fire(t) {
                fired.push(t);
            }
        }
        assert_eq!(fired, vec![10_000, 21_000]);
    }

    #[test]
    fn the_default_max_wait_is_ten_quiet_spells_and_at_least_ten_seconds() {
        assert_eq!(default_max_wait(3000), 30_000);
        assert_eq!(default_max_wait(250), 10_000);
        assert_eq!(default_max_wait(0), 10_000);
        assert_eq!(default_max_wait(u64::MAX), u64::MAX);
    }

    #[test]
    fn zero_quiet_fires_immediately() {
        let mut d = Debouncer::new(0, 0);
        d.poke(7);
        assert!(d.fire(7));
    }
}
