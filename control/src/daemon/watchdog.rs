//! When the control thread feeds systemd's watchdog (`WatchdogSec=`,
//! docs/daemon.md "systemd"): at half the interval, and only if every
//! worker made progress since the last feed (its `polls` counter in the
//! stats area moved, docs/stats.md). The control thread runs the check on
//! its loop, so a stuck control thread stops the feeding as well; either
//! way systemd kills and restarts the daemon.

use std::time::{Duration, Instant};

/// What the check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// Not due yet.
    NotDue,
    /// Due and every worker progressed: send WATCHDOG=1.
    Feed,
    /// Due, but this worker (the first found) has not polled since the
    /// last feed: no WATCHDOG=1.
    Stalled(usize),
}

/// The watchdog's state on the control thread.
#[derive(Debug)]
pub struct Watchdog {
    every: Duration,
    last: Instant,
    polls: Vec<u64>,
}

impl Watchdog {
    /// A watchdog of systemd's `interval`, fed every half of it, starting
    /// from the workers' `polls` at `now`.
    pub fn new(interval: Duration, now: Instant, polls: Vec<u64>) -> Watchdog {
        Watchdog {
            every: interval / 2,
            last: now,
            polls,
        }
    }

    /// Whether a check is due at `now` (cheap: the control thread asks
    /// at every turn of its loop, and reads the workers' counters only
    /// then).
    pub fn due(&self, now: Instant) -> bool {
        now.duration_since(self.last) >= self.every
    }

    /// Decides at `now` with the workers' `polls` counters now. A stalled
    /// worker leaves the baseline where it was, so that it must progress
    /// past the last feed before the next.
    pub fn check(&mut self, now: Instant, polls: &[u64]) -> Feed {
        if !self.due(now) {
            return Feed::NotDue;
        }
        let stalled = polls
            .iter()
            .zip(self.polls.iter().chain(std::iter::repeat(&0)))
            .position(|(now, before)| now == before);
        if let Some(w) = stalled.or((polls.len() < self.polls.len()).then_some(polls.len())) {
            return Feed::Stalled(w);
        }
        self.last = now;
        self.polls = polls.to_vec();
        Feed::Feed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeds_at_half_the_interval_while_every_worker_polls() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut w = Watchdog::new(Duration::from_secs(30), t0, vec![0, 0]);
        assert_eq!(w.check(t0 + 14 * s, &[5, 5]), Feed::NotDue);
        assert_eq!(w.check(t0 + 15 * s, &[5, 5]), Feed::Feed);
        assert_eq!(w.check(t0 + 29 * s, &[9, 9]), Feed::NotDue);
        assert_eq!(w.check(t0 + 30 * s, &[9, 9]), Feed::Feed);
    }

    #[test]
    fn a_worker_that_stops_polling_stops_the_feeding() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut w = Watchdog::new(Duration::from_secs(2), t0, vec![0, 0]);
        assert_eq!(w.check(t0 + s, &[3, 4]), Feed::Feed);
        assert_eq!(w.check(t0 + 2 * s, &[7, 4]), Feed::Stalled(1));
        // Still stuck later: still no feed.
        assert_eq!(w.check(t0 + 3 * s, &[9, 4]), Feed::Stalled(1));
        // It polls again: fed again.
        assert_eq!(w.check(t0 + 4 * s, &[9, 5]), Feed::Feed);
    }

    #[test]
    fn a_missing_worker_is_stalled() {
        let t0 = Instant::now();
        let mut w = Watchdog::new(Duration::from_secs(2), t0, vec![1, 1]);
        assert_eq!(w.check(t0 + Duration::from_secs(1), &[2]), Feed::Stalled(1));
    }
}
