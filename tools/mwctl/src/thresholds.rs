//! The thresholds of `mwctl errors` (docs/management.md "mwctl errors"):
//! the counters it checks, each with the most it may read before its port
//! is reported, as ibqueryerrors' thresholds (docs/spec-notes.md 69). The
//! counters are PortCounters' rx_errors and drops by reason, and the
//! losses of PortCountersExtended (the kernel's and the device's drops and
//! errors below the port); their names are the attributes', so the stats
//! area's slot names (docs/stats.md).

use std::collections::BTreeMap;
use std::path::Path;

use mgmt::attr::{PortCounters, PortCountersExtended};

/// The limit of every counter unless a thresholds file says otherwise: any
/// count is reported, as ibqueryerrors' default of 0.
pub const DEFAULT_LIMIT: u64 = 0;

/// The counters of PortCounters that are errors, before the drops by
/// reason (which are all checked). Not `inject_failed`: an HR alone on its
/// SAN fails every injection to its SAN's members, having none.
const ERROR_COUNTERS: [&str; 1] = ["rx_errors"];

/// The first counter of PortCountersExtended that is a loss (after
/// rx_bytes and tx_bytes).
const FIRST_LINK_LOSS: usize = 2;

/// Which attribute a counter checked is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attr {
    /// PortCounters, at this index.
    Counters(usize),
    /// PortCountersExtended, at this index.
    Link(usize),
}

/// The counters `mwctl errors` checks, in the order they are printed.
pub fn watched() -> Vec<(&'static str, Attr)> {
    let mut w: Vec<(&'static str, Attr)> = PortCounters::NAMES
        .iter()
        .enumerate()
        .filter(|(i, n)| *i >= PortCounters::FIRST_DROP || ERROR_COUNTERS.contains(n))
        .map(|(i, n)| (*n, Attr::Counters(i)))
        .collect();
    w.extend(
        PortCountersExtended::NAMES
            .iter()
            .enumerate()
            .skip(FIRST_LINK_LOSS)
            .map(|(i, n)| (*n, Attr::Link(i))),
    );
    w
}

/// Every counter checked, with its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thresholds {
    limits: Vec<(&'static str, Attr, u64)>,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            limits: watched()
                .into_iter()
                .map(|(n, a)| (n, a, DEFAULT_LIMIT))
                .collect(),
        }
    }
}

impl Thresholds {
    /// The counters with their limits, in [`watched`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Attr, u64)> + '_ {
        self.limits.iter().copied()
    }

    /// The limit of the counter named `name`, if it is checked.
    pub fn limit(&self, name: &str) -> Option<u64> {
        self.limits
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, _, l)| *l)
    }

    /// The defaults with the limits of a thresholds file: a TOML table of
    /// counter name to limit (`"dropped.no-route" = 100`; a dotted key,
    /// `dropped.no-route = 100`, or a `[dropped]` table say the same).
    /// A name that is not checked, or a limit that is not a number from 0,
    /// is refused with the reason.
    pub fn parse(text: &str) -> Result<Self, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        let mut flat = BTreeMap::new();
        flatten("", &toml::Value::Table(table), &mut flat)?;
        let mut t = Thresholds::default();
        for (name, limit) in flat {
            match t.limits.iter_mut().find(|(n, _, _)| *n == name) {
                Some(slot) => slot.2 = limit,
                None => {
                    let known: Vec<&str> = t.limits.iter().map(|(n, _, _)| *n).collect();
                    return Err(format!(
                        "{name:?} is not a counter errors checks (those are: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        Ok(t)
    }

    /// [`Thresholds::parse`] of the file at `path`.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The limits in a line: those not at the default by name, then the
    /// rest (`dropped.no-route > 100; every other counter > 0 (18)`).
    pub fn summary(&self) -> String {
        let named: Vec<String> = self
            .limits
            .iter()
            .filter(|(_, _, l)| *l != DEFAULT_LIMIT)
            .map(|(n, _, l)| format!("{n} > {l}"))
            .collect();
        let rest = self.limits.len() - named.len();
        if named.is_empty() {
            format!("every counter > {DEFAULT_LIMIT} ({rest} counters checked)")
        } else if rest == 0 {
            named.join(", ")
        } else {
            format!(
                "{}; every other counter > {DEFAULT_LIMIT} ({rest})",
                named.join(", ")
            )
        }
    }
}

/// The leaves of `v` by their dotted names.
fn flatten(prefix: &str, v: &toml::Value, out: &mut BTreeMap<String, u64>) -> Result<(), String> {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&name, v, out)?;
            }
            Ok(())
        }
        toml::Value::Integer(i) => {
            let limit = u64::try_from(*i)
                .map_err(|_| format!("{prefix:?}: a limit is a number from 0, not {i}"))?;
            out.insert(prefix.to_string(), limit);
            Ok(())
        }
        other => Err(format!(
            "{prefix:?}: a limit is a number from 0, not {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_drop_reason_and_link_loss_is_checked() {
        let w = watched();
        let names: Vec<&str> = w.iter().map(|(n, _)| *n).collect();
        for n in &PortCounters::NAMES[PortCounters::FIRST_DROP..] {
            assert!(names.contains(n), "{n}");
        }
        for n in [
            "rx_errors",
            "rx_missed",
            "rx_no_buffer",
            "rx_link_errors",
            "tx_link_errors",
        ] {
            assert!(names.contains(&n), "{n}");
        }
        for n in [
            "received",
            "forwarded",
            "rx_bytes",
            "tx_bytes",
            "inject_failed",
        ] {
            assert!(!names.contains(&n), "{n}");
        }
        assert_eq!(w[0], ("rx_errors", Attr::Counters(1)));
        assert_eq!(w.last(), Some(&("tx_link_errors", Attr::Link(5))));
        let t = Thresholds::default();
        assert!(t.iter().all(|(_, _, l)| l == DEFAULT_LIMIT));
    }

    #[test]
    fn a_file_sets_limits_by_name() {
        let t =
            Thresholds::parse("\"dropped.no-route\" = 100\nrx_missed = 5\n[dropped]\nmtu = 7\n")
                .unwrap();
        assert_eq!(t.limit("dropped.no-route"), Some(100));
        assert_eq!(t.limit("dropped.mtu"), Some(7));
        assert_eq!(t.limit("rx_missed"), Some(5));
        assert_eq!(t.limit("rx_errors"), Some(DEFAULT_LIMIT));
        assert_eq!(t.limit("received"), None);
        assert_eq!(
            t.summary(),
            "dropped.no-route > 100, dropped.mtu > 7, rx_missed > 5; every other counter > 0 (16)"
        );
        assert_eq!(
            Thresholds::default().summary(),
            "every counter > 0 (19 counters checked)"
        );
        assert_eq!(Thresholds::parse("").unwrap(), Thresholds::default());
    }

    #[test]
    fn a_bad_file_is_refused_with_the_reason() {
        let e = Thresholds::parse("received = 3").unwrap_err();
        assert!(
            e.contains("\"received\" is not a counter errors checks"),
            "{e}"
        );
        assert!(
            e.contains("(those are: rx_errors, dropped.truncated, "),
            "{e}"
        );
        let e = Thresholds::parse("rx_errors = -1").unwrap_err();
        assert!(e.contains("a number from 0, not -1"), "{e}");
        let e = Thresholds::parse("rx_errors = \"ten\"").unwrap_err();
        assert!(e.contains("a number from 0"), "{e}");
        assert!(Thresholds::parse("rx_errors = ").is_err());
        let e = Thresholds::read(Path::new("/nonexistent/thresholds.toml")).unwrap_err();
        assert!(e.starts_with("/nonexistent/thresholds.toml: "), "{e}");
    }
}
