//! A manager's counters.

rrp::counter_set! {
    /// Counters of a manager.
    pub struct ManagerStats in "mgmt_manager" {
        /// Transitions.
        pub transitions: u64 => counter "transitions",
        /// Discovery rounds.
        pub rounds: u64 => counter "rounds",
        /// Sweeps as master.
        pub sweeps: u64 => counter "sweeps",
        /// Polls of the master sent.
        pub polls: u64 => counter "polls",
        /// Polls without an answer.
        pub polls_missed: u64 => counter "polls_missed",
        /// Requests sent: every request the manager starts, whatever its
        /// attribute (SMInfo, its sweeps, Sets, Reports, a standby's copies).
        pub requests: u64 => counter "requests",
        /// Handovers given.
        pub handovers_given: u64 => counter "handovers_given",
        /// Handovers taken.
        pub handovers_taken: u64 => counter "handovers_taken",
        /// Heavy sweeps.
        pub heavy_sweeps: u64 => counter "heavy_sweeps",
        /// Agents given the SAN's M_Key.
        pub keys_given: u64 => counter "keys_given",
        /// Agents that refused it.
        pub keys_refused: u64 => counter "keys_refused",
        /// Control Sets refused.
        pub controls_refused: u64 => counter "controls_refused",
        /// Announcements of nodes without an address heard as master.
        pub announcements: u64 => counter "announcements",
        /// Addresses given.
        pub addresses_assigned: u64 => counter "addresses_assigned",
        /// Address Sets that failed (no answer, or refused).
        pub assign_failed: u64 => counter "assign_failed",
        /// Nodes left without an address: the pool used up.
        pub pool_exhausted: u64 => counter "pool_exhausted",
        /// Duplicate addresses found.
        pub duplicates: u64 => counter "duplicates",
        /// Records copied from the master (a standby's).
        pub synced: u64 => counter "synced",
        /// Multicast groups created.
        pub mc_creates: u64 => counter "mc_creates",
        /// Multicast groups deleted.
        pub mc_deletes: u64 => counter "mc_deletes",
        /// Joins accepted.
        pub mc_joins: u64 => counter "mc_joins",
        /// Leaves.
        pub mc_leaves: u64 => counter "mc_leaves",
        /// Creates and joins refused (every status).
        pub mc_refused: u64 => counter "mc_refused",
        /// Member records pruned.
        pub mc_pruned: u64 => counter "mc_pruned",
        /// Joins refused because the node is not a member of the group's
        /// partition (status 0x1400; also in `mc_refused`).
        pub mc_not_in_partition: u64 => counter "mc_not_in_partition",
        /// Member records removed because the partitions in force no
        /// longer make the node a member of its group's partition.
        pub mc_partition_removed: u64 => counter "mc_partition_removed",
        /// Subscriptions (InformInfo Sets) taken, renewals not counted.
        pub subscriptions: u64 => counter "subscriptions",
        /// Subscriptions refused: the SAN's bound reached, or a bad record.
        pub subscriptions_refused: u64 => counter "subscriptions_refused",
        /// Subscriptions whose lease ran out.
        pub subscriptions_expired: u64 => counter "subscriptions_expired",
        /// Reports sent to subscribers (each notice to each, repeats not counted).
        pub reports_sent: u64 => counter "reports_sent",
        /// Repeats of Reports not answered by ReportResp in time.
        pub reports_retried: u64 => counter "reports_retried",
        /// Reports given up: no ReportResp after every try.
        pub reports_given_up: u64 => counter "reports_given_up",
        /// Members' partition tables set (every block taken).
        pub tables_set: u64 => counter "tables_set",
        /// Sets of a member's partition table that failed (no answer, or
        /// refused): tried again at the next sweep.
        pub table_sets_failed: u64 => counter "table_sets_failed",
        /// Copies of the master's partitions taken (a standby's; each new
        /// version once).
        pub partitions_copied: u64 => counter "partitions_copied",
        /// Copies of the master's partitions refused whole (too large, not
        /// the version announced, not UTF-8, or not parsed; each version
        /// once): the partitions held do not change.
        pub partitions_copy_refused: u64 => counter "partitions_copy_refused",
        /// Members' tables set at the SAN's routers, removals included
        /// (every block taken).
        pub member_tables_set: u64 => counter "member_tables_set",
        /// Sets of a member's table at a router that failed (no answer, or
        /// refused): tried again at the next sweep.
        pub member_table_sets_failed: u64 => counter "member_table_sets_failed",
    }
}
