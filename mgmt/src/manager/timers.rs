//! A SAN manager's timers and counts (docs/manager.md "Timers and counts"),
//! declared once: the manager runs on them, and with the `serde` feature
//! they are mwrouterd's `management.manager_timers` (docs/configuration.md),
//! each field a key with its default and its bounds in [`ManagerTimers::validate`].

use rrp::router::ConfigError;

use super::Time;

/// How often a manager polls, sweeps and discovers, how long it waits and
/// how often it tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct ManagerTimers {
    /// Between two polls of the master by a standby.
    pub poll_ms: Time,
    /// Polls in a row without an answer before a standby rediscovers.
    pub poll_misses: u32,
    /// Between two sweeps of a master.
    pub sweep_ms: Time,
    /// Between two discovery rounds.
    pub discover_ms: Time,
    /// Wait per try of a request.
    pub timeout_ms: Time,
    /// Tries after the first of a request.
    pub retries: u32,
    /// A heavy sweep (every member's NodeInfo and NodeDescription again)
    /// every this many sweeps; the others ask only new members.
    pub heavy_every: u64,
    /// Subscriptions (InformInfo) a master keeps at most for its SAN; one
    /// more is refused with SubnAdm's "no resources" (docs/management.md
    /// "Events").
    pub max_subscriptions: u32,
    /// The lease of a subscription that asks for none, in seconds.
    pub lease_default_s: u32,
    /// The longest lease a subscription is given, in seconds (a longer one
    /// asked is cut to it).
    pub lease_max_s: u32,
    /// Wait per try of a Report to a subscriber.
    pub report_retry_ms: Time,
    /// Tries after the first of a Report; then it is given up.
    pub report_retries: u32,
}

impl Default for ManagerTimers {
    /// Ten times OpenSM's pace (docs/manager.md "Timers and counts").
    fn default() -> ManagerTimers {
        ManagerTimers {
            poll_ms: 1_000,
            poll_misses: 3,
            sweep_ms: 1_000,
            discover_ms: 200,
            timeout_ms: 100,
            retries: 2,
            heavy_every: 10,
            max_subscriptions: 16,
            lease_default_s: 60,
            lease_max_s: 3_600,
            report_retry_ms: 500,
            report_retries: 3,
        }
    }
}

impl ManagerTimers {
    /// Checks that every value is within its bounds, every problem at once;
    /// each error names its field (`poll_ms`).
    pub fn validate(&self) -> Result<(), Vec<ConfigError>> {
        let ManagerTimers {
            poll_ms,
            poll_misses,
            sweep_ms,
            discover_ms,
            timeout_ms,
            retries,
            heavy_every,
            max_subscriptions,
            lease_default_s,
            lease_max_s,
            report_retry_ms,
            report_retries,
        } = *self;
        let errs: Vec<ConfigError> = [
            ("poll_ms", poll_ms, 10, 600_000),
            ("poll_misses", u64::from(poll_misses), 1, 100),
            ("sweep_ms", sweep_ms, 10, 600_000),
            ("discover_ms", discover_ms, 10, 600_000),
            ("timeout_ms", timeout_ms, 1, 60_000),
            ("retries", u64::from(retries), 0, 10),
            ("heavy_every", heavy_every, 1, 1_000_000),
            ("max_subscriptions", u64::from(max_subscriptions), 0, 1_000),
            ("lease_default_s", u64::from(lease_default_s), 1, 86_400),
            ("lease_max_s", u64::from(lease_max_s), 1, 86_400),
            ("report_retry_ms", report_retry_ms, 1, 60_000),
            ("report_retries", u64::from(report_retries), 0, 10),
        ]
        .into_iter()
        .filter(|(_, v, min, max)| !(*min..=*max).contains(v))
        .map(|(key, v, min, max)| ConfigError {
            field: key.to_string(),
            why: format!("{v} is outside {min}..={max}"),
        })
        .collect();
        let mut errs = errs;
        if lease_default_s > lease_max_s {
            errs.push(ConfigError {
                field: "lease_default_s".to_string(),
                why: format!("{lease_default_s} is above lease_max_s ({lease_max_s})"),
            });
        }
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscription_limits_are_checked() {
        assert!(ManagerTimers::default().validate().is_ok());
        let t = ManagerTimers {
            lease_default_s: 600,
            lease_max_s: 60,
            report_retries: 11,
            ..ManagerTimers::default()
        };
        let errs = t.validate().unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["report_retries", "lease_default_s"]);
    }
}
