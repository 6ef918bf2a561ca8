//! [`WorkerStats`]: what one dataplane worker did with its core
//! (docs/stats.md "Workers"; `mwctl show workers`): its passes over its
//! receive queues, the bursts they brought, and the time-stamp counter's
//! cycles spent on passes that brought packets (busy) and on passes that
//! brought none (idle, pauses included). VPP's `show runtime` and OVS's
//! `dpif-netdev/pmd-perf-show` are the models: cycles per packet and the
//! average burst are the figures to watch when a worker nears its limit.

crate::counter_set! {
    /// One worker's passes, bursts and cycles, and the packets of its ports
    /// it received, transmitted and dropped (the sums of its share of the
    /// ports' counters, taken when it publishes).
    pub struct WorkerStats in "worker" {
        /// Packets the worker received (all its ports).
        pub received: u64 => counter "received_packets",
        /// Packets the worker transmitted (forwarded, replicated and injected).
        pub transmitted: u64 => counter "transmitted_packets",
        /// Packets the worker dropped (all ports, all reasons).
        pub dropped: u64 => counter "dropped_packets",
        /// Passes over the worker's receive queues.
        pub polls: u64 => counter "polls",
        /// Passes that received no packet.
        pub idle_polls: u64 => counter "idle_polls",
        /// Receive bursts that brought at least one packet (received / bursts is the average burst).
        pub bursts: u64 => counter "rx_bursts",
        /// Time-stamp counter cycles of the passes that received packets.
        pub busy_cycles: u64 => counter "busy_cycles",
        /// Time-stamp counter cycles of the passes that received none, pauses included.
        pub idle_cycles: u64 => counter "idle_cycles",
        /// The time-stamp counter's frequency (cycles a second; 0: not known).
        pub tsc_hz: u64 => gauge "tsc_hz",
    }
}

impl WorkerStats {
    /// Busy cycles per packet received (0 before the first packet).
    pub fn cycles_per_packet(&self) -> f64 {
        if self.received == 0 {
            0.0
        } else {
            self.busy_cycles as f64 / self.received as f64
        }
    }

    /// Packets per burst that brought any (0 before the first).
    pub fn average_burst(&self) -> f64 {
        if self.bursts == 0 {
            0.0
        } else {
            self.received as f64 / self.bursts as f64
        }
    }

    /// The share of cycles that were busy, in percent (0 before any).
    pub fn busy_percent(&self) -> f64 {
        let all = self.busy_cycles.saturating_add(self.idle_cycles);
        if all == 0 {
            0.0
        } else {
            100.0 * self.busy_cycles as f64 / all as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::CounterSet;

    #[test]
    fn derived_figures_follow_the_counters() {
        let w = WorkerStats {
            received: 320,
            bursts: 20,
            busy_cycles: 32_000,
            idle_cycles: 96_000,
            ..WorkerStats::default()
        };
        assert_eq!(w.cycles_per_packet(), 100.0);
        assert_eq!(w.average_burst(), 16.0);
        assert_eq!(w.busy_percent(), 25.0);
        let zero = WorkerStats::default();
        assert_eq!(
            (
                zero.cycles_per_packet(),
                zero.average_burst(),
                zero.busy_percent()
            ),
            (0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn the_clock_rate_is_a_gauge_a_clear_leaves() {
        let base = WorkerStats {
            polls: 10,
            tsc_hz: 2_000_000_000,
            ..WorkerStats::default()
        };
        let now = WorkerStats { polls: 15, ..base };
        let shown = now.since(&base);
        assert_eq!((shown.polls, shown.tsc_hz), (5, 2_000_000_000));
    }
}
