//! [`PartitionStats`]: the counters of one partition at one ingress port
//! (docs/partitions.md "At the routers"), counted by the workers that
//! refuse its packets.

crate::counter_set! {
    /// One partition's counters at one ingress port.
    pub struct PartitionStats in "partition" {
        /// Packets of the partition refused at a boundary between SANs
        /// (counted also under the drop reason `partition` of their ingress
        /// port).
        pub dropped: u64 => counter "dropped_packets",
    }
}
