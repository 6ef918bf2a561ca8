//! PortCountersExtended (0x001D, Perf): one port's link counters, the
//! bytes the link carried and the packets it lost below the port
//! (`rrp::LinkStats`; docs/stats.md "The link's counters"), in
//! [`PortCounters`](super::PortCounters)' layout; a Set clears the port's
//! counters (docs/management.md "PortCountersExtended"). InfiniBand carries
//! its 64-bit data counters in an attribute of this name and number beside
//! PortCounters; docs/spec-notes.md 65 maps its fields and PortCounters' to
//! these.

use crate::attr::port_counters::{CounterFields, emit_counters, parse_counters};
use crate::error::Result;

pub use crate::attr::port_counters::field;

/// PortCountersExtended.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PortCountersExtended {
    /// PortSelect.
    pub port_select: u8,
    /// The counters, in [`PortCountersExtended::NAMES`] order (6 today;
    /// an older agent may send fewer).
    pub counters: Vec<u64>,
}

const FIELDS: CounterFields = CounterFields {
    area: "port_counters_extended",
    count: "port_counters_extended.counter_count",
    counters: "port_counters_extended.counters",
};

impl PortCountersExtended {
    /// AttributeID (InfiniBand's PortCountersExtended).
    pub const ID: u16 = 0x001D;
    /// The counters' names in wire order: the admin stats' slot names of
    /// the link's counters.
    pub const NAMES: [&'static str; 6] = [
        "rx_bytes",
        "tx_bytes",
        "rx_missed",
        "rx_no_buffer",
        "rx_link_errors",
        "tx_link_errors",
    ];
    /// Counters today.
    pub const COUNT: usize = Self::NAMES.len();

    /// Counter `i`, when carried.
    pub fn counter(&self, i: usize) -> Option<u64> {
        self.counters.get(i).copied()
    }
    /// The counter named `name` (one of [`PortCountersExtended::NAMES`]),
    /// when carried.
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
    /// Bytes the link received (InfiniBand's PortRcvData counts 4-byte
    /// words; this counts bytes).
    pub fn rx_bytes(&self) -> Option<u64> {
        self.counter(0)
    }
    /// Bytes the link transmitted (PortXmitData, in bytes).
    pub fn tx_bytes(&self) -> Option<u64> {
        self.counter(1)
    }
    /// Packets the link lost before the port read them: `rx_missed`,
    /// `rx_no_buffer` and `rx_link_errors`, when all three are carried.
    pub fn rx_lost(&self) -> Option<u64> {
        Some(self.counter(2)? + self.counter(3)? + self.counter(4)?)
    }
    /// Packets the link did not send (`tx_link_errors`).
    pub fn tx_lost(&self) -> Option<u64> {
        self.counter(5)
    }

    /// Reads the attribute area: PortSelect, N, then N counters.
    pub fn parse(area: &[u8]) -> Result<Self> {
        let (port_select, counters) = parse_counters(area, &FIELDS)?;
        Ok(PortCountersExtended {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every counter the attribute carries is a slot of the port's counter
    /// set, by name, and a field of the link's counters.
    #[test]
    fn names_are_the_links_port_stats_slots() {
        use rrp::counters::CounterSet;
        let l = rrp::LinkStats {
            rx_bytes: 1,
            tx_bytes: 2,
            rx_missed: 3,
            rx_no_buffer: 4,
            rx_link_errors: 5,
            tx_link_errors: 6,
        };
        let mut p = rrp::PortStats::default();
        p.set_link(&l);
        let values: Vec<u64> = PortCountersExtended::NAMES
            .iter()
            .map(|n| p.get(n).unwrap_or_else(|| panic!("{n} is no slot")))
            .collect();
        assert_eq!(values, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn round_trip_and_accessors() {
        let p = PortCountersExtended {
            port_select: 3,
            counters: vec![1000, 2000, 3, 4, 5, 6],
        };
        let mut area = vec![0xEE; 192];
        p.emit(&mut area).unwrap();
        assert_eq!(&area[..8], &[3, 6, 0, 0, 0, 0, 0, 0]);
        assert_eq!(PortCountersExtended::parse(&area).unwrap(), p);
        assert_eq!(area[8 + 8 * 6..], [0; 192 - 56]);
        assert_eq!((p.rx_bytes(), p.tx_bytes()), (Some(1000), Some(2000)));
        assert_eq!((p.rx_lost(), p.tx_lost()), (Some(12), Some(6)));
        assert_eq!(p.by_name("rx_missed"), Some(3));
        let old = PortCountersExtended {
            port_select: 0,
            counters: vec![7, 8],
        };
        assert_eq!(old.rx_lost(), None, "an agent that sends fewer");
        let e = PortCountersExtended::parse(&[0, 4, 0, 0, 0, 0, 0, 0, 1]).unwrap_err();
        assert_eq!(e.field, "port_counters_extended.counters");
    }
}
