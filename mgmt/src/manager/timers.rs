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
        } = *self;
        let errs: Vec<ConfigError> = [
            ("poll_ms", poll_ms, 10, 600_000),
            ("poll_misses", u64::from(poll_misses), 1, 100),
            ("sweep_ms", sweep_ms, 10, 600_000),
            ("discover_ms", discover_ms, 10, 600_000),
            ("timeout_ms", timeout_ms, 1, 60_000),
            ("retries", u64::from(retries), 0, 10),
            ("heavy_every", heavy_every, 1, 1_000_000),
        ]
        .into_iter()
        .filter(|(_, v, min, max)| !(*min..=*max).contains(v))
        .map(|(key, v, min, max)| ConfigError {
            field: key.to_string(),
            why: format!("{v} is outside {min}..={max}"),
        })
        .collect();
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}
