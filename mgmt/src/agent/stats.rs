//! An agent's counters (`show management`'s `agent`).

rrp::counter_set! {
    /// Counters of an agent.
    pub struct AgentStats in "mgmt_agent" {
        /// Management packets handed to the agent.
        pub received: u64 => counter "received",
        /// Requests answered (cached answers included).
        pub answered: u64 => counter "answered",
        /// Answers given again from the cache.
        pub cache_hits: u64 => counter "cache_hits",
        /// MADs that did not parse.
        pub malformed: u64 => counter "malformed",
        /// Requests of a class this agent does not serve (answered "bad version").
        pub bad_class: u64 => counter "bad_class",
        /// SubnAdm requests (the SAN manager's), dropped.
        pub not_manager: u64 => counter "not_manager",
        /// Sets applied.
        pub sets: u64 => counter "sets",
        /// Sets of PartitionTable refused: a block past 1, an entry of key
        /// 0 with the full bit, a key twice in the table.
        pub partition_sets_refused: u64 => counter "partition_sets_refused",
        /// Gets and Sets of a member's table (PartitionTable with a member
        /// address in the modifier) refused: on a host, a block past 1, a
        /// bad entry, a member past the bound of an HR.
        pub member_tables_refused: u64 => counter "member_tables_refused",
        /// Requests refused or left unanswered for the M_Key.
        pub mkey_refused: u64 => counter "mkey_refused",
        /// Directed-route MADs relayed on.
        pub relayed: u64 => counter "relayed",
        /// Directed-route MADs dropped: a path that does not fit this node.
        pub bad_path: u64 => counter "bad_path",
        /// Responses handed to the client.
        pub to_client: u64 => counter "to_client",
        /// Traps sent (first sends).
        pub traps_sent: u64 => counter "traps_sent",
        /// Traps sent again.
        pub traps_resent: u64 => counter "traps_resent",
        /// Traps repressed by the manager.
        pub traps_repressed: u64 => counter "traps_repressed",
        /// Traps given up without a TrapRepress.
        pub traps_unanswered: u64 => counter "traps_unanswered",
        /// Traps not sent: rate limit.
        pub traps_suppressed: u64 => counter "traps_suppressed",
        /// Traps not sent: no manager configured.
        pub traps_no_manager: u64 => counter "traps_no_manager",
        /// Traps and Reports received (this node plays the manager).
        pub notices_received: u64 => counter "notices_received",
        /// Traps and Reports received again with a TID already kept (the
        /// answer was lost): answered, not kept or handed on again.
        pub notices_repeated: u64 => counter "notices_repeated",
        /// Announcements sent: trap 1025, a port without an address.
        pub announcements: u64 => counter "announcements",
        /// Announcements of other nodes heard (handed to a SAN manager here).
        pub announcements_heard: u64 => counter "announcements_heard",
        /// Subscriptions to this node's traps taken here (InformInfo Sets at
        /// an agent that is not its SAN's master), renewals not counted.
        pub subscriptions: u64 => counter "subscriptions",
        /// Subscriptions refused here: the table full, or a requester that
        /// is not a node.
        pub subscriptions_refused: u64 => counter "subscriptions_refused",
        /// Subscriptions here whose lease ran out.
        pub subscriptions_expired: u64 => counter "subscriptions_expired",
        /// Reports of this node's traps sent to its subscribers (each trap to
        /// each, repeats not counted).
        pub reports_sent: u64 => counter "reports_sent",
        /// Repeats of those Reports not answered by ReportResp in time.
        pub reports_retried: u64 => counter "reports_retried",
        /// Those Reports given up: no ReportResp after every try.
        pub reports_given_up: u64 => counter "reports_given_up",
        /// Requests not answered and directed-route MADs not relayed: over
        /// the answers' bounds per requester or in all.
        pub answers_limited: u64 => counter "answers_limited",
    }
}
