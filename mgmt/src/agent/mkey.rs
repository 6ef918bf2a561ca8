//! The management key (M_Key) of a box, as InfiniBand's PortInfo defines it
//! (docs/management.md "Management key"): a 64-bit key, protect bits 0-3, a lease.
//!
//! | protect | Get without the key | Set without the key |
//! | ---: | --- | --- |
//! | 0 | answered, the key shown | refused (answered with status 0x0100) |
//! | 1 | answered, the key reads 0 | refused (answered with status 0x0100) |
//! | 2, 3 | not answered | not answered |
//!
//! A key of 0 protects nothing. A failed check counts a violation, makes the
//! agent send trap 256, and starts the lease timer if it is not running; a
//! request with the right key stops it; when the lease runs out the protect
//! bits drop to 0, so that a new manager can take the SAN over. A lease
//! period of 0 never runs out.

use crate::agent::Time;

/// The key, its protection and its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MKey {
    /// The key (0: no protection).
    pub key: u64,
    /// Protect bits, 0-3.
    pub protect: u8,
    /// Lease period in seconds (0: never runs out).
    pub lease_s: u16,
    /// Failed checks (saturating, as PortInfo's 16-bit counter).
    pub violations: u16,
    /// When the running lease runs out.
    pub lease_until: Option<Time>,
}

/// What a check allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Go ahead; `show_key` says whether attributes may show the key.
    Allow {
        /// Whether PortInfo shows the key (else it reads 0).
        show_key: bool,
    },
    /// A Set without the key at protect 0 or 1: answered, not applied.
    RefuseSet,
    /// No answer (protect 2 and 3).
    Silent,
}

impl MKey {
    /// A key as configured.
    pub fn new(key: u64, protect: u8, lease_s: u16) -> MKey {
        MKey {
            key,
            protect: protect.min(3),
            lease_s,
            violations: 0,
            lease_until: None,
        }
    }

    /// Checks a request carrying `given`; `set` for a Set. A failed check
    /// is counted and starts the lease (the caller sends the trap).
    pub fn check(&mut self, now: Time, given: u64, set: bool) -> Check {
        if self.key == 0 {
            return Check::Allow { show_key: true };
        }
        if given == self.key {
            self.lease_until = None;
            return Check::Allow { show_key: true };
        }
        let outcome = match (self.protect, set) {
            (0, false) => return Check::Allow { show_key: true },
            (1, false) => return Check::Allow { show_key: false },
            (0 | 1, true) => Check::RefuseSet,
            _ => Check::Silent,
        };
        self.violations = self.violations.saturating_add(1);
        if self.lease_s != 0 && self.lease_until.is_none() {
            self.lease_until = Some(now + u64::from(self.lease_s) * 1000);
        }
        outcome
    }

    /// Runs out the lease when due: returns whether the protect bits
    /// dropped to 0 now.
    pub fn on_timer(&mut self, now: Time) -> bool {
        match self.lease_until {
            Some(t) if now >= t => {
                self.lease_until = None;
                let was = self.protect;
                self.protect = 0;
                was != 0
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: u64 = 0x1122_3344_5566_7788;

    /// Every protect level x right/wrong key x Get/Set.
    #[test]
    fn the_matrix() {
        for protect in 0..=3u8 {
            for right in [true, false] {
                for set in [false, true] {
                    let mut m = MKey::new(KEY, protect, 0);
                    let given = if right { KEY } else { 0xBAD };
                    let got = m.check(0, given, set);
                    let want = match (right, protect, set) {
                        (true, _, _) => Check::Allow { show_key: true },
                        (false, 0, false) => Check::Allow { show_key: true },
                        (false, 1, false) => Check::Allow { show_key: false },
                        (false, 0 | 1, true) => Check::RefuseSet,
                        (false, _, _) => Check::Silent,
                    };
                    assert_eq!(got, want, "protect {protect} right {right} set {set}");
                    let violation = !right && (set || protect >= 2);
                    assert_eq!(m.violations, u16::from(violation), "protect {protect}");
                }
            }
        }
    }

    #[test]
    fn no_key_protects_nothing() {
        let mut m = MKey::new(0, 3, 60);
        assert_eq!(m.check(0, 5, true), Check::Allow { show_key: true });
        assert_eq!(m.violations, 0);
    }

    #[test]
    fn the_lease_runs_out_unless_the_key_comes_back() {
        let mut m = MKey::new(KEY, 2, 10);
        assert_eq!(m.check(1_000, 1, false), Check::Silent);
        assert_eq!(m.lease_until, Some(11_000));
        // Another violation does not restart it.
        m.check(5_000, 1, false);
        assert_eq!(m.lease_until, Some(11_000));
        assert!(!m.on_timer(10_999));
        // The right key stops it.
        m.check(6_000, KEY, false);
        assert_eq!(m.lease_until, None);
        assert!(!m.on_timer(20_000));
        assert_eq!(m.protect, 2);
        // Unanswered, it runs out: protection drops to 0.
        m.check(30_000, 1, true);
        assert!(m.on_timer(40_000));
        assert_eq!(m.protect, 0);
        assert_eq!(m.check(40_001, 1, false), Check::Allow { show_key: true });
        assert_eq!(m.violations, 3);
    }

    #[test]
    fn a_lease_of_zero_never_runs_out() {
        let mut m = MKey::new(KEY, 3, 0);
        m.check(0, 1, false);
        assert_eq!(m.lease_until, None);
        assert!(!m.on_timer(u64::MAX));
        assert_eq!(m.protect, 3);
    }
}
