//! [`PortStats`]: the counters of one port (docs/stats.md "Per port"),
//! counted by the workers that forward its packets and by the control plane
//! that takes the packets for this box; summed per port for readers.

use crate::{DropCounts, DropReason, PuntCounts};

crate::counter_set! {
    /// The counters of one port. Accounting, at quiescence: `received =
    /// forwarded + dropped (every reason) + punted`; packets the control
    /// plane injects and the notices sent to it are counted apart, and so
    /// are the link's own counters (the last six, [`LinkStats`](super::LinkStats)):
    /// its bytes, and what it lost before the port received it.
    pub struct PortStats in "port" {
        /// Packets received on the port.
        pub received: u64 => counter "received_packets",
        /// Packets received on the port with a receive-error flag.
        pub rx_errors: u64 => counter "rx_error_packets",
        /// Packets received on the port and forwarded.
        pub forwarded: u64 => counter "forwarded_packets",
        /// Packets received on the port and handed to the control plane.
        pub punted: u64 => counter "punted_packets",
        /// Packets transmitted on the port (forwarded from any port, and injected).
        pub transmitted: u64 => counter "transmitted_packets",
        /// Packets the control plane injected for transmission on the port.
        pub injected: u64 => counter "injected_packets",
        /// Injections the port could not send (no buffer, encapsulation, queue full).
        pub inject_failed: u64 => counter "inject_failed_packets",
        /// Notices (no route, MTU, redirect, partition) queued for the control plane.
        pub notices: u64 => counter "notices",
        /// Notices not queued (ring full or rate limit).
        pub notices_dropped: u64 => counter "notices_dropped",
        /// Packets for this box from a source the port's HR does not know (an SA not in its LRT, or a node's SA from another native address).
        pub strangers: u64 => counter "stranger_packets",
        /// Packets received on the port and dropped, by reason.
        pub dropped: DropCounts => counter "dropped_packets" by "reason",
        /// Packets received on the port and handed to the control plane, by punt class (their sum is `punted` as the workers count it).
        pub punted_by_class: PuntCounts => counter "punted_class_packets" by "class",
        /// Packets for this box dropped over their punt class's rate limit, by class (their sum is `dropped.punt-rate`).
        pub punt_rate_by_class: PuntCounts => counter "punt_rate_dropped_packets" by "class",
        /// Packets for this box dropped because their punt class's ring was full, by class (their sum is `dropped.punt-full`).
        pub punt_full_by_class: PuntCounts => counter "punt_full_dropped_packets" by "class",
        /// Packets for this box dropped because their source was over its share of its punt class's budget, by class (their sum is `dropped.punt-source`).
        pub punt_source_by_class: PuntCounts => counter "punt_source_dropped_packets" by "class",
        /// Bytes the port's link received, counted below the port (whole frames on Ethernet, datagrams on UDP; docs/backends.md "The link's counters"), frames the port then refused included.
        pub rx_bytes: u64 => counter "received_bytes",
        /// Bytes the port's link transmitted, counted below the port (whole frames on Ethernet, datagrams on UDP).
        pub tx_bytes: u64 => counter "transmitted_bytes",
        /// Packets the kernel or the device dropped before the port read them (socket buffer, packet ring or receive queue full); never in `received`.
        pub rx_missed: u64 => counter "rx_missed_packets",
        /// Packets the device could not store for want of receive buffers; never in `received`.
        pub rx_no_buffer: u64 => counter "rx_no_buffer_packets",
        /// Packets the device received with errors (a bad FCS, a frame too long) and dropped; never in `received`.
        pub rx_link_errors: u64 => counter "rx_link_error_packets",
        /// Packets the port took for transmission that the link did not send (the device failed them, or the kernel refused them); they are in `transmitted`.
        pub tx_link_errors: u64 => counter "tx_link_error_packets",
    }
}

impl PortStats {
    /// Drops of one reason.
    #[inline]
    pub fn dropped(&self, r: DropReason) -> u64 {
        self.dropped[r]
    }

    /// All drops.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.total()
    }

    /// Whether `received = forwarded + dropped + punted`.
    pub fn balanced(&self) -> bool {
        self.received == self.forwarded + self.dropped_total() + self.punted
    }
}
