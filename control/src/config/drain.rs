//! `[drain]`: how the box leaves and how it comes back (docs/daemon.md
//! "Draining before maintenance", docs/spec-notes.md 74). Draining
//! advertises every route of the box at the largest cost; the daemon stops
//! once its forwarded counters have stayed near zero for `quiet_ms`, or
//! after `timeout_ms`. A starting box advertises at the largest cost until
//! its FIBs have been quiet for `start_quiet_ms`, at most `start_max_ms`.

use serde::{Deserialize, Serialize};

/// `[drain]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrainSection {
    /// SIGTERM drains before the daemon stops (a second SIGTERM, or the
    /// unit's stop timeout, stops it at once).
    pub on_sigterm: bool,
    /// The longest a drain waits for traffic to move (`mwctl drain
    /// --timeout` overrides it), 1..=600000 ms.
    pub timeout_ms: u64,
    /// How long the forwarded counters must stay near zero, 1..=timeout_ms.
    pub quiet_ms: u64,
    /// Packets forwarded per second still taken as "near zero".
    pub quiet_pps: u64,
    /// A starting box serves once its FIBs have not changed for this long
    /// (1..=start_max_ms).
    pub start_quiet_ms: u64,
    /// The most a starting box advertises at the largest cost; 0: it
    /// serves at once. At most 600000 ms.
    pub start_max_ms: u64,
}

impl Default for DrainSection {
    fn default() -> Self {
        DrainSection {
            on_sigterm: true,
            timeout_ms: 10_000,
            quiet_ms: 1_000,
            quiet_pps: 10,
            start_quiet_ms: 1_000,
            start_max_ms: 10_000,
        }
    }
}

/// The longest drain or start hold.
pub const MAX_DRAIN_MS: u64 = 600_000;

impl DrainSection {
    /// The engine's start hold.
    pub fn engine(&self) -> rrp::router::LeaveConfig {
        rrp::router::LeaveConfig {
            start_quiet_ms: self.start_quiet_ms,
            start_max_ms: self.start_max_ms,
        }
    }

    /// Every problem, each naming its key (`drain.quiet_ms`).
    pub fn validate(&self) -> Vec<(&'static str, String)> {
        let mut e = Vec::new();
        if !(1..=MAX_DRAIN_MS).contains(&self.timeout_ms) {
            e.push(("drain.timeout_ms", format!("must be 1..={MAX_DRAIN_MS}")));
        }
        if !(1..=self.timeout_ms).contains(&self.quiet_ms) {
            e.push(("drain.quiet_ms", "must be 1..=drain.timeout_ms".to_string()));
        }
        if self.start_max_ms > MAX_DRAIN_MS {
            e.push((
                "drain.start_max_ms",
                format!("must be at most {MAX_DRAIN_MS}"),
            ));
        }
        if self.start_max_ms > 0 && !(1..=self.start_max_ms).contains(&self.start_quiet_ms) {
            e.push((
                "drain.start_quiet_ms",
                "must be 1..=drain.start_max_ms".to_string(),
            ));
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_and_bad_bounds_are_named() {
        assert!(DrainSection::default().validate().is_empty());
        let d = DrainSection {
            start_max_ms: 10_000,
            timeout_ms: 0,
            quiet_ms: 0,
            start_quiet_ms: 20_000,
            ..DrainSection::default()
        };
        let keys: Vec<_> = d.validate().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            ["drain.timeout_ms", "drain.quiet_ms", "drain.start_quiet_ms"]
        );
    }
}
