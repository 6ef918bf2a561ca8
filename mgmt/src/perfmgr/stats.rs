//! The performance manager's own counters (docs/stats.md "The fabric
//! scrape"): `mwrouter_perfmgr_<name>_total` in the scrape.

rrp::counter_set! {
    /// Counters of a performance manager.
    pub struct PerfStats in "perfmgr" {
        /// Sweeps started (each polls every node it knows once).
        pub sweeps: u64 => counter "sweeps",
        /// Requests sent (NodeInfo, NodeDescription, PortCounters, PortCountersExtended; a retry is not another).
        pub requests: u64 => counter "requests",
        /// Requests that had no answer after every try.
        pub timeouts: u64 => counter "timeouts",
        /// Answers with an error status or an attribute that did not parse.
        pub refused: u64 => counter "refused",
        /// Nodes that did not answer a sweep, one per node and sweep.
        pub nodes_unanswered: u64 => counter "nodes_unanswered",
        /// Port resets seen: a port's counter read lower than its last read (a restarted node, a clear).
        pub resets: u64 => counter "resets",
        /// Nodes left out of the scrape after `forget_sweeps` sweeps missing from the members.
        pub forgotten: u64 => counter "forgotten",
    }
}
