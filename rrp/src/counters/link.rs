//! [`LinkStats`]: what the link under a port counted itself, below the
//! port's own counting (docs/stats.md "The link's counters",
//! docs/backends.md "The link's counters"): packets the kernel or the device
//! dropped before the port read them, the device's errors, and the bytes
//! received and transmitted. A port backend reports them (`ports::Port::link_stats`)
//! and the worker copies them into the port's [`PortStats`] when it
//! publishes its counters, off the per-packet path.

use super::PortStats;

/// The link's own counters of one port, as running totals since the port
/// was opened (the backend accumulates what its kernel or device resets on
/// read). Each field is the [`PortStats`] field of the same name, whose doc
/// comment says what it counts; docs/backends.md says what each backend
/// puts there. None of them is part of `received = forwarded + dropped +
/// punted`: the bytes count the link's traffic, and the drops happened
/// before the port received anything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Bytes the link received ([`PortStats::rx_bytes`]).
    pub rx_bytes: u64,
    /// Bytes the link transmitted ([`PortStats::tx_bytes`]).
    pub tx_bytes: u64,
    /// Packets the kernel or the device dropped before the port read them
    /// ([`PortStats::rx_missed`]).
    pub rx_missed: u64,
    /// Packets the device could not store for want of buffers
    /// ([`PortStats::rx_no_buffer`]).
    pub rx_no_buffer: u64,
    /// Packets the device received with errors and dropped
    /// ([`PortStats::rx_link_errors`]).
    pub rx_link_errors: u64,
    /// Packets the port took for transmission that the link did not send
    /// ([`PortStats::tx_link_errors`]).
    pub tx_link_errors: u64,
}

impl LinkStats {
    /// Adds `other` field by field (the link's counters of several queues
    /// of one port).
    pub fn add(&mut self, other: &LinkStats) {
        self.rx_bytes = self.rx_bytes.wrapping_add(other.rx_bytes);
        self.tx_bytes = self.tx_bytes.wrapping_add(other.tx_bytes);
        self.rx_missed = self.rx_missed.wrapping_add(other.rx_missed);
        self.rx_no_buffer = self.rx_no_buffer.wrapping_add(other.rx_no_buffer);
        self.rx_link_errors = self.rx_link_errors.wrapping_add(other.rx_link_errors);
        self.tx_link_errors = self.tx_link_errors.wrapping_add(other.tx_link_errors);
    }
}

impl PortStats {
    /// Takes the link's counters as they are now (running totals: they
    /// replace the values held, they are not added to them).
    pub fn set_link(&mut self, l: &LinkStats) {
        self.rx_bytes = l.rx_bytes;
        self.tx_bytes = l.tx_bytes;
        self.rx_missed = l.rx_missed;
        self.rx_no_buffer = l.rx_no_buffer;
        self.rx_link_errors = l.rx_link_errors;
        self.tx_link_errors = l.tx_link_errors;
    }

    /// The link's counters this set holds.
    pub fn link(&self) -> LinkStats {
        LinkStats {
            rx_bytes: self.rx_bytes,
            tx_bytes: self.tx_bytes,
            rx_missed: self.rx_missed,
            rx_no_buffer: self.rx_no_buffer,
            rx_link_errors: self.rx_link_errors,
            tx_link_errors: self.tx_link_errors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::CounterSet;

    fn sample() -> LinkStats {
        LinkStats {
            rx_bytes: 1,
            tx_bytes: 2,
            rx_missed: 3,
            rx_no_buffer: 4,
            rx_link_errors: 5,
            tx_link_errors: 6,
        }
    }

    /// Every field is the port's slot of the same name, and a link's
    /// counters leave the port's own accounting alone.
    #[test]
    fn fields_are_port_stats_slots_of_the_same_name() {
        let l = sample();
        let mut p = PortStats {
            received: 10,
            forwarded: 10,
            ..PortStats::default()
        };
        p.set_link(&l);
        assert_eq!(p.link(), l);
        assert!(p.balanced());
        for (name, v) in [
            ("rx_bytes", 1),
            ("tx_bytes", 2),
            ("rx_missed", 3),
            ("rx_no_buffer", 4),
            ("rx_link_errors", 5),
            ("tx_link_errors", 6),
        ] {
            assert_eq!(p.get(name), Some(v), "{name}");
        }
        let nonzero = p.named_slots().iter().filter(|(_, v)| *v != 0).count();
        assert_eq!(nonzero, 2 + 6, "set_link writes the six link slots only");
    }

    #[test]
    fn set_link_replaces_and_add_sums() {
        let mut p = PortStats::default();
        p.set_link(&sample());
        p.set_link(&sample());
        assert_eq!(p.link(), sample());
        let mut s = sample();
        s.add(&sample());
        assert_eq!(s.rx_bytes, 2);
        assert_eq!(s.tx_link_errors, 12);
    }
}
