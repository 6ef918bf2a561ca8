//! A manager's counters.

/// Counters of a manager.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagerStats {
    /// Transitions.
    pub transitions: u64,
    /// Discovery rounds.
    pub rounds: u64,
    /// Sweeps as master.
    pub sweeps: u64,
    /// Polls of the master sent.
    pub polls: u64,
    /// Polls without an answer.
    pub polls_missed: u64,
    /// Requests sent (SMInfo Gets and Sets).
    pub requests: u64,
    /// Handovers given.
    pub handovers_given: u64,
    /// Handovers taken.
    pub handovers_taken: u64,
    /// Heavy sweeps.
    pub heavy_sweeps: u64,
    /// Agents given the SAN's M_Key.
    pub keys_given: u64,
    /// Agents that refused it.
    pub keys_refused: u64,
    /// Control Sets refused.
    pub controls_refused: u64,
    /// Announcements of nodes without an address heard as master.
    pub announcements: u64,
    /// Addresses given.
    pub addresses_assigned: u64,
    /// Address Sets that failed (no answer, or refused).
    pub assign_failed: u64,
    /// Nodes left without an address: the pool used up.
    pub pool_exhausted: u64,
    /// Duplicate addresses found.
    pub duplicates: u64,
    /// Records copied from the master (a standby's).
    pub synced: u64,
    /// Multicast groups created.
    pub mc_creates: u64,
    /// Multicast groups deleted.
    pub mc_deletes: u64,
    /// Joins accepted.
    pub mc_joins: u64,
    /// Leaves.
    pub mc_leaves: u64,
    /// Creates and joins refused (every status).
    pub mc_refused: u64,
    /// Member records pruned.
    pub mc_pruned: u64,
}

impl ManagerStats {
    /// Every counter with its name.
    pub fn fields(&self) -> [(&'static str, u64); 24] {
        [
            ("transitions", self.transitions),
            ("rounds", self.rounds),
            ("sweeps", self.sweeps),
            ("polls", self.polls),
            ("polls_missed", self.polls_missed),
            ("requests", self.requests),
            ("handovers_given", self.handovers_given),
            ("handovers_taken", self.handovers_taken),
            ("heavy_sweeps", self.heavy_sweeps),
            ("keys_given", self.keys_given),
            ("keys_refused", self.keys_refused),
            ("controls_refused", self.controls_refused),
            ("announcements", self.announcements),
            ("addresses_assigned", self.addresses_assigned),
            ("assign_failed", self.assign_failed),
            ("pool_exhausted", self.pool_exhausted),
            ("duplicates", self.duplicates),
            ("synced", self.synced),
            ("mc_creates", self.mc_creates),
            ("mc_deletes", self.mc_deletes),
            ("mc_joins", self.mc_joins),
            ("mc_leaves", self.mc_leaves),
            ("mc_refused", self.mc_refused),
            ("mc_pruned", self.mc_pruned),
        ]
    }
}
