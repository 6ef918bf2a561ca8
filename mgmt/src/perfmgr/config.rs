//! The performance manager's settings (docs/management.md "Fabric
//! performance manager"), declared once: the engine runs on them, and with
//! the `serde` feature they are mwrouterd's `[perf_manager]`
//! (docs/configuration.md), each field a key with its default and its
//! bounds in [`PerfConfig::validate`].

use rrp::router::ConfigError;

use super::Time;

/// Whom the performance manager polls, how often, how many requests it
/// keeps out at once and how long it waits for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct PerfConfig {
    /// Poll even where no SAN manager of this node is master: then the
    /// members of every SAN the node is on (its LRTs, a host's
    /// neighbours) and the node itself. Off, a node polls only the
    /// databases of the SANs it is master of (and itself).
    pub enabled: bool,
    /// Between the starts of two sweeps; a sweep that takes longer delays
    /// the next one (sweeps never overlap).
    pub interval_ms: Time,
    /// Requests out at once during a sweep (OpenSM's
    /// `perfmgr_max_outstanding_queries`).
    pub outstanding: u32,
    /// Wait per try of a request.
    pub timeout_ms: Time,
    /// Tries after the first of a request.
    pub retries: u32,
    /// Sweeps a node may be missing from the members before it leaves the
    /// scrape (until then it is polled, and marked when it does not answer).
    pub forget_sweeps: u32,
}

impl Default for PerfConfig {
    /// 10 s between sweeps, 16 requests out, 200 ms and one retry each.
    fn default() -> PerfConfig {
        PerfConfig {
            enabled: false,
            interval_ms: 10_000,
            outstanding: 16,
            timeout_ms: 200,
            retries: 1,
            forget_sweeps: 30,
        }
    }
}

impl PerfConfig {
    /// Checks that every value is within its bounds, every problem at once;
    /// each error names its field (`interval_ms`).
    pub fn validate(&self) -> Result<(), Vec<ConfigError>> {
        let PerfConfig {
            enabled: _,
            interval_ms,
            outstanding,
            timeout_ms,
            retries,
            forget_sweeps,
        } = *self;
        let mut errs: Vec<ConfigError> = [
            ("interval_ms", interval_ms, 100, 3_600_000),
            ("outstanding", u64::from(outstanding), 1, 1_024),
            ("timeout_ms", timeout_ms, 1, 60_000),
            ("retries", u64::from(retries), 0, 10),
            ("forget_sweeps", u64::from(forget_sweeps), 1, 100_000),
        ]
        .into_iter()
        .filter(|(_, v, min, max)| !(*min..=*max).contains(v))
        .map(|(key, v, min, max)| ConfigError {
            field: key.to_string(),
            why: format!("{v} is outside {min}..={max}"),
        })
        .collect();
        // One node's requests, every try waited out, must fit in a sweep.
        let per_request = timeout_ms.saturating_mul(u64::from(retries) + 1);
        if errs.is_empty() && per_request >= interval_ms {
            errs.push(ConfigError {
                field: "timeout_ms".to_string(),
                why: format!(
                    "{timeout_ms} ms x {} tries is not less than interval_ms ({interval_ms})",
                    retries + 1
                ),
            });
        }
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bounds_are_checked() {
        assert_eq!(PerfConfig::default().validate(), Ok(()));
        let bad = PerfConfig {
            interval_ms: 10,
            outstanding: 0,
            ..PerfConfig::default()
        };
        let e = bad.validate().unwrap_err();
        let fields: Vec<&str> = e.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["interval_ms", "outstanding"]);
        let slow = PerfConfig {
            interval_ms: 1_000,
            timeout_ms: 600,
            retries: 1,
            ..PerfConfig::default()
        };
        assert_eq!(slow.validate().unwrap_err()[0].field, "timeout_ms");
    }
}
