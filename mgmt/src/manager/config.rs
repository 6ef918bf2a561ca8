//! A manager's settings (docs/manager.md "Timers and counts").

use rrp::Address;

use super::ManagerTimers;

/// A manager's settings (docs/manager.md "Timers and counts").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagerConfig {
    /// 0-15: the higher wins the election.
    pub priority: u8,
    /// The node identity (NodeInfo's): the tie-break, the lower wins.
    pub identity: u64,
    /// The SAN's SM key (0: none): control Sets must carry it.
    pub sm_key: u64,
    /// Its timers and counts.
    pub timers: ManagerTimers,
    /// The M_Key a master gives every member's agent, with its protect
    /// bits and lease (0: the master leaves the agents' keys alone).
    pub mkey: u64,
    /// Protect bits of that key, 0-3.
    pub mkey_protect: u8,
    /// Lease of that key in seconds (0: never runs out).
    pub mkey_lease_s: u16,
    /// The addresses a master gives nodes that start without one, first
    /// and last (none: it gives none).
    pub pool: Option<(Address, Address)>,
    /// The logical addresses a master chooses a group's from, first and
    /// last (docs/multicast.md "Groups").
    pub mcast_range: (Address, Address),
    /// Groups a master keeps at most.
    pub max_groups: usize,
    /// Member records a master keeps at most (all groups).
    pub max_group_members: usize,
}

impl ManagerConfig {
    /// The defaults of docs/manager.md for a manager of `priority` on a
    /// node of `identity`.
    pub fn new(priority: u8, identity: u64) -> ManagerConfig {
        ManagerConfig {
            priority: priority.min(15),
            identity,
            sm_key: 0,
            timers: ManagerTimers::default(),
            mkey: 0,
            mkey_protect: 0,
            mkey_lease_s: 0,
            pool: None,
            mcast_range: (Address(0x8000), Address(0xBFFF)),
            max_groups: 256,
            max_group_members: 4096,
        }
    }
}
