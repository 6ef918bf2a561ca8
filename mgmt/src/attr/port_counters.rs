//! PortCounters (0x0012, Perf): one port's forwarding counters; a Set
//! clears them (docs/management.md "PortCounters"). The counters are the
//! dataplane's per-port counters in the admin stats' order, then the drops
//! by `rrp::DropReason`.

use rrp::DropReason;

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be64, put64};

/// Byte offsets of PortCounters.
pub mod field {
    /// PortSelect.
    pub const PORT_SELECT: usize = 0;
    /// CounterCount N.
    pub const COUNTER_COUNT: usize = 1;
    /// The first counter; counter i is at `COUNTERS + 8 * i`.
    pub const COUNTERS: usize = 8;
}

/// PortCounters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PortCounters {
    /// PortSelect.
    pub port_select: u8,
    /// The counters, in [`PortCounters::NAMES`] order (23 today, as many
    /// as the attribute holds; an older agent may send fewer).
    pub counters: Vec<u64>,
}

impl PortCounters {
    /// AttributeID.
    pub const ID: u16 = 0x0012;
    /// The counters' names in wire order: the admin stats' slot names.
    pub const NAMES: [&'static str; 23] = [
        "received",
        "rx_errors",
        "forwarded",
        "punted",
        "transmitted",
        "injected",
        "inject_failed",
        "notices",
        "notices_dropped",
        "dropped.truncated",
        "dropped.bad-version",
        "dropped.bad-header",
        "dropped.bad-l2rh",
        "dropped.too-many-l2rh",
        "dropped.no-route",
        "dropped.loop",
        "dropped.mtu",
        "dropped.tx-full",
        "dropped.punt-full",
        "dropped.punt-rate",
        "dropped.encap",
        "dropped.mcast-rpf",
        "dropped.mcast-pruned",
    ];
    /// Counters today.
    pub const COUNT: usize = Self::NAMES.len();
    /// Index of the first drop counter.
    pub const FIRST_DROP: usize = 9;
    /// The most counters a 192-byte Perf attribute area holds.
    pub const MAX_COUNTERS: usize = (192 - field::COUNTERS) / 8;

    /// Counters `i`, when carried.
    pub fn counter(&self, i: usize) -> Option<u64> {
        self.counters.get(i).copied()
    }
    /// The counter named `name` (one of [`PortCounters::NAMES`]), when carried.
    pub fn by_name(&self, name: &str) -> Option<u64> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .and_then(|i| self.counter(i))
    }
    /// The name of counter `i`, when known.
    pub fn name(i: usize) -> Option<&'static str> {
        Self::NAMES.get(i).copied()
    }
    /// Packets received.
    pub fn received(&self) -> Option<u64> {
        self.counter(0)
    }
    /// Received packets flagged with a receive error.
    pub fn rx_errors(&self) -> Option<u64> {
        self.counter(1)
    }
    /// Received packets transmitted on some port.
    pub fn forwarded(&self) -> Option<u64> {
        self.counter(2)
    }
    /// Received packets handed to the control plane.
    pub fn punted(&self) -> Option<u64> {
        self.counter(3)
    }
    /// Packets transmitted on this port.
    pub fn transmitted(&self) -> Option<u64> {
        self.counter(4)
    }
    /// Packets the control plane injected on this port.
    pub fn injected(&self) -> Option<u64> {
        self.counter(5)
    }
    /// Injections this port could not send.
    pub fn inject_failed(&self) -> Option<u64> {
        self.counter(6)
    }
    /// Notices queued for the control plane.
    pub fn notices(&self) -> Option<u64> {
        self.counter(7)
    }
    /// Notices not queued.
    pub fn notices_dropped(&self) -> Option<u64> {
        self.counter(8)
    }
    /// Drops of reason `r`, when carried (the first 14 reasons).
    pub fn dropped(&self, r: DropReason) -> Option<u64> {
        let i = Self::FIRST_DROP + r as usize;
        if i >= Self::COUNT {
            return None;
        }
        self.counter(i)
    }

    /// Reads the attribute area: PortSelect, N, then N counters.
    pub fn parse(area: &[u8]) -> Result<Self> {
        let (port_select, counters) = parse_counters(area, &FIELDS)?;
        Ok(PortCounters {
            port_select,
            counters,
        })
    }

    /// Writes the attribute into `area`, zeroing the rest. Refuses more
    /// counters than the area holds (or than N can count).
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        emit_counters(area, self.port_select, &self.counters, &FIELDS)
    }
}

/// The names errors give the parts of a layout of counters: the area, N,
/// the counters.
pub(crate) struct CounterFields {
    pub(crate) area: &'static str,
    pub(crate) count: &'static str,
    pub(crate) counters: &'static str,
}

const FIELDS: CounterFields = CounterFields {
    area: "port_counters",
    count: "port_counters.counter_count",
    counters: "port_counters.counters",
};

/// Reads PortSelect, N and N 64-bit counters ([`field`]): PortCounters'
/// layout, which PortCountersExtended shares.
pub(crate) fn parse_counters(area: &[u8], names: &CounterFields) -> Result<(u8, Vec<u64>)> {
    need(area, field::COUNTERS, names.area)?;
    let n = area[field::COUNTER_COUNT] as usize;
    let len = field::COUNTERS + 8 * n;
    if area.len() < len {
        return Err(Error::truncated(
            names.counters,
            field::COUNTERS,
            8 * n,
            area.len() - field::COUNTERS,
        ));
    }
    Ok((
        area[field::PORT_SELECT],
        (0..n)
            .map(|i| be64(area, field::COUNTERS + 8 * i))
            .collect(),
    ))
}

/// Writes what [`parse_counters`] reads, zeroing the rest of `area`.
pub(crate) fn emit_counters(
    area: &mut [u8],
    port_select: u8,
    counters: &[u64],
    names: &CounterFields,
) -> Result<()> {
    let n = counters.len();
    if n > u8::MAX as usize {
        return Err(Error::new(
            ErrorKind::BadValue("more than 255 counters"),
            names.count,
            field::COUNTER_COUNT,
        ));
    }
    prepare(area, field::COUNTERS + 8 * n, names.area)?;
    area[field::PORT_SELECT] = port_select;
    area[field::COUNTER_COUNT] = n as u8;
    for (i, c) in counters.iter().enumerate() {
        put64(area, field::COUNTERS + 8 * i, *c);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every counter the MAD carries is a slot of the port's counter set,
    /// by name; the set's later ones (strangers, dropped.spoofed-source)
    /// are not carried (docs/management.md "PortCounters").
    #[test]
    fn names_are_port_stats_slots() {
        use rrp::counters::CounterSet;
        let slots = rrp::PortStats::slot_names();
        for n in PortCounters::NAMES {
            assert!(slots.iter().any(|s| s == n), "{n}");
        }
        const { assert!(rrp::PortStats::SLOTS > PortCounters::COUNT) };
    }

    #[test]
    fn names_follow_drop_reasons() {
        assert_eq!(PortCounters::MAX_COUNTERS, 23);
        assert_eq!(PortCounters::COUNT, PortCounters::MAX_COUNTERS);
        // The drop reasons the attribute has room for, in their order (the
        // later ones are in the stats area only).
        for (i, r) in DropReason::ALL
            .iter()
            .take(PortCounters::COUNT - PortCounters::FIRST_DROP)
            .enumerate()
        {
            assert_eq!(
                PortCounters::NAMES[PortCounters::FIRST_DROP + i],
                format!("dropped.{}", r.name())
            );
        }
        let p = PortCounters {
            port_select: 1,
            counters: (0..23).collect(),
        };
        assert_eq!(p.dropped(DropReason::Encap), Some(20));
        assert_eq!(p.by_name("punted"), Some(3));
        assert_eq!(p.notices_dropped(), Some(8));
        assert_eq!(p.by_name("nope"), None);
    }
}
