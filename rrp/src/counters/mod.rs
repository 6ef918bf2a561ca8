//! Counters declared once (docs/architecture.md "Counters, timers and
//! limits"): a counter set is one `#[repr(C)]` struct of `u64`s, declared with
//! [`counter_set!`](crate::counter_set) where each field's doc comment is its
//! help text. From that one declaration follow the slot order of the stats
//! area (the struct's memory layout, read and written as [`bytemuck::Pod`]),
//! the JSON names ([`json`]), the Prometheus families and their help, the
//! baseline that `clear counters` subtracts ([`CounterSet::since`]) and the
//! sums over workers ([`CounterSet::add`]).
//!
//! A value is either one `u64` or a [`Counts`] array, one `u64` per variant of
//! an enum declared with [`named_enum!`](crate::named_enum) (a drop reason, a
//! refusal): one family with a label (`reason`) in Prometheus, a map by name
//! in JSON, `name.variant` as slot names (`dropped.no-route`).
//!
//! The sets: the ports' [`PortStats`] (here: the forwarding path and the
//! control plane both count into it), the multicast groups' [`GroupStats`],
//! the partitions' [`PartitionStats`],
//! the RRP engine's [`RouterStats`](crate::router::RouterStats), the daemon's
//! control thread's `admin::stats::PlaneStats`, the dataplane workers'
//! [`WorkerStats`]. docs/stats.md lists them.

mod declare;
mod group;
#[cfg(feature = "serde")]
pub mod json;
mod link;
mod partition;
mod port;
mod shared;
mod worker;

pub use bytemuck;
pub use group::GroupStats;
pub use link::LinkStats;
pub use partition::PartitionStats;
pub use port::PortStats;
pub use shared::SharedCounters;
pub use worker::WorkerStats;

/// Whether a value only grows (a counter) or says what is now (a gauge,
/// never subtracted by a baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Monotonic: Prometheus `counter`, family name ending in `_total`.
    Counter,
    /// A value as of now: Prometheus `gauge`.
    Gauge,
}

/// One field of a counter set, as its declaration gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The field's name: its JSON key and slot name (`received`).
    pub name: &'static str,
    /// The Prometheus family's stem: `mwrouter_<prefix>_<family>[_total]`.
    pub family: &'static str,
    /// The help text (the field's doc comment).
    pub help: &'static str,
    /// Counter or gauge.
    pub kind: Kind,
    /// For a [`Counts`] field: the label's name and its values in slot
    /// order; `None` for a single `u64`.
    pub labels: Option<Labels>,
}

/// The label of a [`Counts`] field: its name and the names of its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Labels {
    /// The label's name (`reason`).
    pub key: &'static str,
    /// The label's values, in slot order (the enum's names).
    pub values: &'static [&'static str],
}

impl Field {
    /// How many `u64` slots the field takes.
    pub const fn slots(&self) -> usize {
        match self.labels {
            Some(l) => l.values.len(),
            None => 1,
        }
    }

    /// The Prometheus family of this field in a set with `prefix`:
    /// `mwrouter_<prefix>_<family>`, with `_total` for a counter.
    pub fn metric(&self, prefix: &str) -> String {
        match self.kind {
            Kind::Counter => format!("mwrouter_{prefix}_{}_total", self.family),
            Kind::Gauge => format!("mwrouter_{prefix}_{}", self.family),
        }
    }
}

/// The type of a field of a counter set: one `u64`, or a [`Counts`] array
/// (its label values).
pub trait Value: bytemuck::Pod {
    /// The names of the slots of a [`Counts`] array; `None` for a `u64`.
    const LABELS: Option<&'static [&'static str]>;
}

impl Value for u64 {
    const LABELS: Option<&'static [&'static str]> = None;
}

/// One counter per variant of an enum declared with
/// [`named_enum!`](crate::named_enum): the type `named_enum!` declares beside
/// the enum when asked for one (`DropCounts` for `DropReason`).
pub trait Counts: Value {
    /// The enum whose variants index it.
    type Name: Copy;
    /// Every value, in the enum's order.
    fn as_array(&self) -> &[u64];
    /// The sum of every value.
    fn total(&self) -> u64 {
        self.as_array().iter().fold(0, |a, v| a.wrapping_add(*v))
    }
}

/// A set of counters declared with [`counter_set!`](crate::counter_set):
/// a `#[repr(C)]` struct of `u64`s and [`Counts`], read and written whole as
/// `u64` slots in declaration order.
pub trait CounterSet: bytemuck::Pod + Default + PartialEq + core::fmt::Debug {
    /// The Prometheus prefix of its families (`port`, `rrp`, `plane`).
    const PREFIX: &'static str;
    /// Its fields in declaration (slot) order.
    const FIELDS: &'static [Field];
    /// Its size in `u64` slots.
    const SLOTS: usize = core::mem::size_of::<Self>() / 8;

    /// The values as slots, in declaration order.
    fn slots(&self) -> &[u64] {
        bytemuck::cast_slice(core::slice::from_ref(self))
    }

    /// The values as slots, to write.
    fn slots_mut(&mut self) -> &mut [u64] {
        bytemuck::cast_slice_mut(core::slice::from_mut(self))
    }

    /// Adds `other` slot by slot (another worker's counters); gauges too.
    fn add(&mut self, other: &Self) {
        for (a, b) in self.slots_mut().iter_mut().zip(other.slots()) {
            *a = a.wrapping_add(*b);
        }
    }

    /// The counters since `base` (what `clear counters` shows): each
    /// counter less its value in `base`, at least 0; gauges as they are.
    fn since(&self, base: &Self) -> Self {
        let mut out = *self;
        let mut at = 0;
        for f in Self::FIELDS {
            let n = f.slots();
            if f.kind == Kind::Counter {
                for (o, b) in out.slots_mut()[at..at + n]
                    .iter_mut()
                    .zip(&base.slots()[at..at + n])
                {
                    *o = o.saturating_sub(*b);
                }
            }
            at += n;
        }
        out
    }

    /// Every slot with its name, in slot order: `received`, ...,
    /// `dropped.truncated`, ... (the names docs/stats.md lists).
    fn named_slots(&self) -> Vec<(String, u64)> {
        let mut out = Vec::with_capacity(Self::SLOTS);
        let mut s = self.slots().iter().copied();
        for f in Self::FIELDS {
            match f.labels {
                None => out.push((f.name.to_string(), s.next().unwrap_or(0))),
                Some(l) => out.extend(
                    l.values
                        .iter()
                        .map(|v| (format!("{}.{v}", f.name), s.next().unwrap_or(0))),
                ),
            }
        }
        out
    }

    /// The names of the slots, in slot order.
    fn slot_names() -> Vec<String> {
        Self::default()
            .named_slots()
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    /// The slot named `name` (as [`CounterSet::named_slots`] names it).
    fn get(&self, name: &str) -> Option<u64> {
        let mut at = 0;
        for f in Self::FIELDS {
            match f.labels {
                None if f.name == name => return Some(self.slots()[at]),
                Some(l) => {
                    if let Some(v) = name.strip_prefix(f.name).and_then(|r| r.strip_prefix('.'))
                        && let Some(i) = l.values.iter().position(|x| *x == v)
                    {
                        return Some(self.slots()[at + i]);
                    }
                }
                None => {}
            }
            at += f.slots();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DropReason;

    #[test]
    fn port_stats_slots_follow_the_declaration() {
        assert_eq!(
            PortStats::SLOTS,
            10 + DropReason::COUNT + 4 * crate::PuntClass::COUNT + 6
        );
        let slots: usize = PortStats::FIELDS.iter().map(Field::slots).sum();
        assert_eq!(slots, PortStats::SLOTS);
        let mut p = PortStats {
            received: 7,
            ..PortStats::default()
        };
        p.dropped[DropReason::Mtu] = 3;
        assert_eq!(p.slots()[0], 7);
        assert_eq!(p.slots()[10 + DropReason::Mtu as usize], 3);
        assert_eq!(p.get("dropped.mtu"), Some(3));
        assert_eq!(p.get("received"), Some(7));
        assert_eq!(p.get("dropped.nothing"), None);
        let names = PortStats::slot_names();
        assert_eq!(names[0], "received");
        assert_eq!(names[10], "dropped.truncated");
        assert_eq!(names[10 + DropReason::COUNT], "punted_by_class.routing");
        assert_eq!(names.len(), PortStats::SLOTS);
    }

    #[test]
    fn help_is_the_doc_comment() {
        let f = &PortStats::FIELDS[0];
        assert_eq!(f.help, "Packets received on the port.");
        assert_eq!(f.metric("port"), "mwrouter_port_received_packets_total");
    }

    #[test]
    fn since_saturates_and_add_sums() {
        let mut a = PortStats {
            received: 5,
            ..PortStats::default()
        };
        let b = PortStats {
            received: 9,
            ..PortStats::default()
        };
        assert_eq!(a.since(&b).received, 0);
        assert_eq!(b.since(&a).received, 4);
        a.add(&b);
        assert_eq!(a.received, 14);
    }
}
