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
        /// Announcements sent: trap 1025, a port without an address.
        pub announcements: u64 => counter "announcements",
        /// Announcements of other nodes heard (handed to a SAN manager here).
        pub announcements_heard: u64 => counter "announcements_heard",
        /// Requests not answered and directed-route MADs not relayed: over
        /// the answers' bounds per requester or in all.
        pub answers_limited: u64 => counter "answers_limited",
    }
}
