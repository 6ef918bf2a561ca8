//! The box's standing towards transit traffic (docs/spec-notes.md 74):
//! starting, serving or draining. While starting or draining, every twin
//! hop of the box costs the largest Q (all-1, "the worst" of Part-2), so
//! its buddies' and its nodes' routes move to other routers while the box
//! still forwards what it receives; its routes are never withdrawn (the
//! draft has no withdrawal, and a route at the worst Q still carries
//! traffic where there is no other path). A change of standing gives every
//! RT the box passes on a newer SN (buddies ignore an equal SN as a
//! refresh) and sends the full set at once.

use super::engine::*;

/// The largest Q (Part-2: "all-1 the worst").
pub const Q_WORST: u16 = 0xFFFF;

/// When a starting box takes transit traffic (docs/daemon.md "Draining
/// before maintenance").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaveConfig {
    /// The box starts at the largest cost and serves once its FIBs have
    /// been quiet this long (no row changed), the FIBs taken as complete.
    pub start_quiet_ms: u64,
    /// The most the box stays starting; 0: it serves at once.
    pub start_max_ms: u64,
}

impl Default for LeaveConfig {
    fn default() -> Self {
        LeaveConfig {
            start_quiet_ms: 1_000,
            start_max_ms: 0,
        }
    }
}

impl LeaveConfig {
    /// Checks the bounds; the error names the field.
    pub fn validate(&self) -> Result<(), super::ConfigError> {
        let err = |f: &str, why: &str| {
            Err(super::ConfigError {
                field: format!("leave.{f}"),
                why: why.to_string(),
            })
        };
        if self.start_max_ms > super::config::MAX_TIMER_MS {
            return err("start_max_ms", "at most MAX_TIMER_MS");
        }
        if self.start_max_ms > 0 && self.start_quiet_ms == 0 {
            return err("start_quiet_ms", ">= 1 when the box starts held");
        }
        if self.start_quiet_ms > super::config::MAX_TIMER_MS {
            return err("start_quiet_ms", "at most MAX_TIMER_MS");
        }
        Ok(())
    }
}

/// The box's standing towards transit traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Since `since`: its FIBs are not yet complete; it attracts no transit
    /// (its twin hops cost [`Q_WORST`]) until `until` or a quiet FIB.
    Starting {
        /// When the box started.
        since: Time,
        /// When it serves at the latest.
        until: Time,
    },
    /// Normal costs.
    Serving,
    /// Since `since`: leaving; its twin hops cost [`Q_WORST`].
    Draining {
        /// When the drain began.
        since: Time,
    },
}

impl Standing {
    /// The name `mwctl show rrp` prints.
    pub fn name(&self) -> &'static str {
        match self {
            Standing::Starting { .. } => "starting",
            Standing::Serving => "serving",
            Standing::Draining { .. } => "draining",
        }
    }
}

impl Router {
    /// The box's standing.
    pub fn standing(&self) -> Standing {
        self.standing
    }

    /// Changes of standing since start (`mwctl show rrp`).
    pub fn standing_changes(&self) -> u64 {
        self.standing_changes
    }

    /// The cost of a twin hop of this box as it advertises routes and as
    /// its nodes are told (answers, redirects): the configured router cost
    /// while serving, [`Q_WORST`] while starting or draining.
    pub(super) fn router_cost(&self) -> u16 {
        match self.standing {
            Standing::Serving => self.cfg.router_cost,
            _ => Q_WORST,
        }
    }

    /// The cost of a twin hop as the box chooses its own next hops: always
    /// the configured router cost. A starting or draining box still
    /// forwards what reaches it through its own twin hops: sending it back
    /// onto the SAN it came from would meet buddies that have not yet heard
    /// of the change and still route through this box (a `loop` drop).
    pub(super) fn forwarding_cost(&self) -> u16 {
        self.cfg.router_cost
    }

    /// Begins leaving at `now`: every route of the box is advertised at the
    /// largest cost at once, and the box's own answers (RRP#6, RRP#2,
    /// redirects) name other first HRs. It keeps forwarding; the host stops
    /// it once its forwarded counters have gone quiet. Draining again does
    /// nothing.
    pub fn drain(&mut self, now: Time) {
        if matches!(self.standing, Standing::Draining { .. }) {
            return;
        }
        self.set_standing(now, Standing::Draining { since: now });
    }

    /// Ends a drain (or a start hold) at `now`: normal costs again.
    pub fn serve(&mut self, now: Time) {
        if self.standing != Standing::Serving {
            self.set_standing(now, Standing::Serving);
        }
    }

    /// The standing the box starts in for `cfg` at `now`.
    pub(super) fn initial_standing(cfg: &super::RouterConfig, now: Time) -> Standing {
        if cfg.leave.start_max_ms == 0 {
            Standing::Serving
        } else {
            Standing::Starting {
                since: now,
                until: now + cfg.leave.start_max_ms,
            }
        }
    }

    /// When a starting box next looks whether it may serve.
    pub(super) fn next_standing_check(&self) -> Option<Time> {
        match self.standing {
            Standing::Starting { until, .. } => Some(
                until.min(self.last_fib_change.max(self.started) + self.cfg.leave.start_quiet_ms),
            ),
            _ => None,
        }
    }

    /// A starting box serves once its FIBs have been quiet for
    /// `start_quiet_ms` (complete) or at its bound.
    pub(super) fn standing_due(&mut self, now: Time) {
        if let Some(t) = self.next_standing_check()
            && now >= t
        {
            self.serve(now);
        }
    }

    fn set_standing(&mut self, now: Time, s: Standing) {
        let from = self.standing;
        self.standing = s;
        self.adv_epoch = self.adv_epoch.wrapping_add(1);
        self.fib_all_changed();
        self.fib_at = self.fib_at.min(now);
        self.advertise(true);
        self.next_adv = now + self.cfg.timers.advertise_ms;
        if from != s {
            self.standing_changes += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_needs_a_quiet_period() {
        let mut l = LeaveConfig {
            start_quiet_ms: 0,
            start_max_ms: 1000,
        };
        assert!(l.validate().is_err());
        l.start_quiet_ms = 100;
        assert!(l.validate().is_ok());
    }
}
