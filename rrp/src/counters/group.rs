//! [`GroupStats`]: one multicast group's counters (docs/multicast.md
//! "Counters"), counted by the workers that replicate its packets.

crate::counter_set! {
    /// One group's counters.
    pub struct GroupStats in "mcast" {
        /// Group packets accepted for forwarding.
        pub packets: u64 => counter "packets",
        /// Copies of group packets handed to the egress ports (one per branch).
        pub copies: u64 => counter "copies",
        /// Branches a group packet was too large for (dropped there only).
        pub branch_mtu: u64 => counter "branch_mtu",
        /// Copies of group packets that could not be made or sent.
        pub copy_failed: u64 => counter "copy_failed",
    }
}
