//! The churn's timetable: an action due every so many seconds in the
//! soak's loop, and how late the loop came to it at worst.

use std::time::{Duration, Instant};

/// An action due every `period`, the first time `offset` after it is made.
#[derive(Debug, Clone)]
pub struct Every {
    period: Option<Duration>,
    next: Instant,
    max_lag: Duration,
}

impl Every {
    /// Every `period_s` seconds (0: never), first `offset_s` from now.
    pub fn new(period_s: f64, offset_s: f64) -> Every {
        Every::starting(Instant::now(), period_s, offset_s)
    }

    /// As [`Every::new`] from `now`.
    pub fn starting(now: Instant, period_s: f64, offset_s: f64) -> Every {
        Every {
            period: (period_s > 0.0).then(|| Duration::from_secs_f64(period_s)),
            next: now + Duration::from_secs_f64(offset_s.max(0.0)),
            max_lag: Duration::ZERO,
        }
    }

    /// Whether the action is due at `now`; if so, the next time is set (a
    /// whole period after the last, or after `now` when the loop fell
    /// behind by more than that).
    pub fn due(&mut self, now: Instant) -> bool {
        let Some(period) = self.period else {
            return false;
        };
        if now < self.next {
            return false;
        }
        self.max_lag = self.max_lag.max(now - self.next);
        self.next += period;
        if self.next < now {
            self.next = now + period;
        }
        true
    }

    /// The most the loop was late, seconds.
    pub fn max_lag_s(&self) -> f64 {
        self.max_lag.as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_once_per_period_and_never_for_zero() {
        let t0 = Instant::now();
        let mut e = Every::starting(t0, 2.0, 1.0);
        assert!(!e.due(t0));
        assert!(e.due(t0 + Duration::from_millis(1500)));
        assert!(!e.due(t0 + Duration::from_millis(2000)));
        assert!(e.due(t0 + Duration::from_millis(3000)));
        // Far behind: the next is a period after now.
        assert!(e.due(t0 + Duration::from_secs(20)));
        assert!(!e.due(t0 + Duration::from_millis(21_000)));
        assert!(e.due(t0 + Duration::from_secs(22)));
        assert!(e.max_lag_s() >= 15.0);
        let mut never = Every::starting(t0, 0.0, 0.0);
        assert!(!never.due(t0 + Duration::from_secs(100)));
    }
}
