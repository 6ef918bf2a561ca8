//! The budget of each punt class (docs/dataplane.md "Punt classes";
//! docs/spec-notes.md 61), declared once: the workers' token buckets
//! (`dataplane::ChannelConfig`) and, with the `serde` feature, the daemon's
//! `[rates.punt]` table (docs/configuration.md "[rates]"), each class a
//! key with its default and its check in [`PuntBudgets::validate`].

use crate::punt_class::PuntClass;
use crate::router::ConfigError;

/// One class's token bucket, per worker: `per_s` packets a second (0 =
/// unlimited) in bursts of up to `burst`. A source of a class shared by
/// source gets an eighth of both (`dataplane::punt::SOURCE_SHARE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct PuntBudget {
    /// Packets per second (0 = unlimited).
    pub per_s: u64,
    /// The most packets at once (>= 1).
    pub burst: u64,
}

impl PuntBudget {
    /// `per_s` a second in bursts of `burst`.
    pub const fn new(per_s: u64, burst: u64) -> PuntBudget {
        PuntBudget { per_s, burst }
    }
}

/// The budgets of the punt classes, one field per class named as the
/// class is (`PuntClass::NAMES`, checked by a test).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct PuntBudgets {
    /// RRP and ERR from the HRs' buddies: a sweep's answers and a
    /// neighbour's whole RT table after it comes up arrive at once.
    pub routing: PuntBudget,
    /// RRP and ERR from nodes and strangers; each source an eighth.
    pub request: PuntBudget,
    /// Management datagrams; each source an eighth (a SAN manager's sweep
    /// of a 16-port box is a few dozen at once).
    pub management: PuntBudget,
    /// Every other packet for the box; each source an eighth.
    pub local: PuntBudget,
}

impl Default for PuntBudgets {
    fn default() -> Self {
        PuntBudgets {
            routing: PuntBudget::new(50_000, 1024),
            request: PuntBudget::new(10_000, 256),
            management: PuntBudget::new(10_000, 256),
            local: PuntBudget::new(10_000, 256),
        }
    }
}

impl PuntBudgets {
    /// Every class with the same budget.
    pub const fn uniform(b: PuntBudget) -> PuntBudgets {
        PuntBudgets {
            routing: b,
            request: b,
            management: b,
            local: b,
        }
    }

    /// The budget of `class`.
    pub const fn of(&self, class: PuntClass) -> PuntBudget {
        match class {
            PuntClass::Routing => self.routing,
            PuntClass::Request => self.request,
            PuntClass::Management => self.management,
            PuntClass::Local => self.local,
        }
    }

    /// Every budget in class order.
    pub fn all(&self) -> [PuntBudget; PuntClass::COUNT] {
        PuntClass::ALL.map(|c| self.of(c))
    }

    /// What the daemon refuses: a burst of 0 (nothing would ever pass).
    /// Errors name the key as `rates.punt.<class>.burst`.
    pub fn validate(&self) -> Result<(), Vec<ConfigError>> {
        let errs: Vec<ConfigError> = PuntClass::ALL
            .iter()
            .filter(|c| self.of(**c).burst == 0)
            .map(|c| ConfigError {
                field: format!("rates.punt.{}.burst", c.name()),
                why: "must be >= 1".into(),
            })
            .collect();
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_its_budget_and_a_burst() {
        let d = PuntBudgets::default();
        assert_eq!(d.validate(), Ok(()));
        assert_eq!(d.of(PuntClass::Routing), d.routing);
        assert!(d.all().iter().all(|b| b.burst >= 1));
        let mut z = d;
        z.management.burst = 0;
        let e = z.validate().unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].field, "rates.punt.management.burst");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn the_keys_are_the_classes_names() {
        let v = serde_json::to_value(PuntBudgets::default()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut names = PuntClass::NAMES.to_vec();
        names.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(keys, names);
        for c in PuntClass::ALL {
            assert_eq!(
                v[c.name()]["per_s"].as_u64(),
                Some(PuntBudgets::default().of(c).per_s)
            );
        }
    }
}
