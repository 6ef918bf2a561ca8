//! The multicast table the forwarding path reads (docs/multicast.md): the
//! control plane's [`rrp::router::McastTables`] flattened into direct
//! indices, published with the FIBs ([`crate::FibSet::set_mcast`]).
//!
//! - source node address -> the source SAN's entry: the upstream port, the
//!   native address packets from that SAN must come from there (none on the
//!   source's own SAN), the ports this box is the designated forwarder of;
//! - logical address -> the ports on a best route to a member SAN.
//!
//! A group packet leaves by `df & branches`, less its ingress port; one
//! lookup in each table and no branch per member.

use rrp::router::{McastTables, PortMask};
use rrp::{Address, NativeAddr, PortId};

/// Entries of each direct table: the node half and the logical half of the
/// address space.
const HALF: usize = 0x8000;

/// Groups counted one by one (per-group counters); a group beyond them is
/// forwarded and counted in the totals only.
pub const MCAST_SLOTS: usize = 1024;

/// The counter slot of a group without one.
pub const NO_SLOT: u16 = u16::MAX;

/// One source SAN's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McastSource {
    /// The upstream port.
    pub up: PortId,
    /// Whether packets must come from `from` (false: the source's own SAN).
    pub check_from: bool,
    /// The designated forwarder's native address on `up`'s SAN.
    pub from: NativeAddr,
    /// The ports this box forwards onto for this source SAN.
    pub df: PortMask,
}

/// What the forwarding path does with a group packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McastVerdict {
    /// Leave by these ports (never empty).
    Forward(PortMask),
    /// The reverse-path check failed (or the source is unknown).
    Rpf,
    /// The reverse-path check failed on a port where the sender is a
    /// router that should not forward there as this box sees it: on the
    /// upstream port, not the designated forwarder; elsewhere, on a SAN
    /// this box forwards onto itself. The control plane asks that router
    /// for its RTs (docs/multicast.md "Repair").
    Conflict,
    /// No branch leads to a member.
    Pruned,
}

/// The multicast table of one box.
#[derive(Debug, Clone)]
pub struct McastFib {
    /// Node address -> source entry + 1 (0: unknown source).
    sources: Box<[u16]>,
    entries: Vec<McastSource>,
    /// Logical address - 0x8000 -> the branch ports.
    branches: Box<[PortMask]>,
    /// Logical address - 0x8000 -> its counter slot ([`NO_SLOT`]: none).
    slots: Box<[u16]>,
    /// Groups with members and their counter slots, sorted by group.
    groups: Vec<(Address, u16)>,
    /// The control plane's version.
    pub version: u64,
}

impl Default for McastFib {
    fn default() -> Self {
        McastFib {
            sources: vec![0; HALF].into_boxed_slice(),
            entries: Vec::new(),
            branches: vec![0; HALF].into_boxed_slice(),
            slots: vec![NO_SLOT; HALF].into_boxed_slice(),
            groups: Vec::new(),
            version: 0,
        }
    }
}

impl McastFib {
    /// The forwarding path's form of `t`, with no counter slots taken
    /// before.
    pub fn from_tables(t: &McastTables) -> McastFib {
        McastFib::following(t, &McastFib::default())
    }

    /// The forwarding path's form of `t` after `prev`: a group keeps its
    /// counter slot; a new group takes the lowest slot free in both (so
    /// that a slot is not reused while a worker may still count the group
    /// that had it).
    pub fn following(t: &McastTables, prev: &McastFib) -> McastFib {
        let mut f = McastFib {
            version: t.version,
            ..McastFib::default()
        };
        f.entries = t
            .sans
            .iter()
            .map(|s| McastSource {
                up: s.up,
                check_from: s.from.is_some(),
                from: s.from.unwrap_or(NativeAddr::NONE),
                df: s.df,
            })
            .collect();
        for (a, i) in &t.sources {
            if usize::from(a.0) < HALF && usize::from(*i) < f.entries.len() {
                f.sources[usize::from(a.0)] = i + 1;
            }
        }
        let mut used = vec![false; MCAST_SLOTS];
        for (_, s) in &prev.groups {
            if let Some(u) = used.get_mut(usize::from(*s)) {
                *u = true;
            }
        }
        let mut next_free = 0;
        for g in &t.groups {
            if !g.group.is_logical() {
                continue;
            }
            let i = usize::from(g.group.0) - HALF;
            f.branches[i] = g.branches;
            let slot = match prev.slots[i] {
                NO_SLOT => {
                    while next_free < MCAST_SLOTS && used[next_free] {
                        next_free += 1;
                    }
                    if next_free < MCAST_SLOTS {
                        used[next_free] = true;
                        next_free as u16
                    } else {
                        NO_SLOT
                    }
                }
                s => s,
            };
            f.slots[i] = slot;
            f.groups.push((g.group, slot));
        }
        f
    }

    /// The counter slot of group `g` ([`NO_SLOT`]: none).
    #[inline(always)]
    pub fn slot(&self, g: u16) -> u16 {
        self.slots
            .get(usize::from(g).wrapping_sub(HALF))
            .copied()
            .unwrap_or(NO_SLOT)
    }

    /// The decision for a packet to group `g` from source `s` that arrived
    /// on `port` from `native`.
    #[inline(always)]
    pub fn decide(&self, g: u16, s: u16, port: PortId, native: &NativeAddr) -> McastVerdict {
        let i = match self.sources.get(usize::from(s)) {
            Some(&i) if i != 0 => i,
            _ => return McastVerdict::Rpf,
        };
        let e = &self.entries[usize::from(i - 1)];
        if e.up != port {
            return if e.df & rrp::router::mcast::bit(port) != 0 {
                McastVerdict::Conflict
            } else {
                McastVerdict::Rpf
            };
        }
        if e.check_from && e.from != *native {
            return McastVerdict::Conflict;
        }
        let b = self
            .branches
            .get(usize::from(g).wrapping_sub(HALF))
            .copied()
            .unwrap_or(0);
        match e.df & b & !rrp::router::mcast::bit(port) {
            0 => McastVerdict::Pruned,
            m => McastVerdict::Forward(m),
        }
    }

    /// The groups with members and their counter slots, sorted.
    pub fn groups(&self) -> &[(Address, u16)] {
        &self.groups
    }

    /// The branch ports of group `g`.
    pub fn branches(&self, g: Address) -> PortMask {
        self.branches
            .get(usize::from(g.0).wrapping_sub(HALF))
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::router::{McastGroup, SourceSan};

    #[test]
    fn decisions() {
        let up_native = NativeAddr::mac([2, 0, 0, 0, 1, 0x1c]);
        let t = McastTables {
            version: 3,
            sans: vec![
                SourceSan {
                    san: Address(0x0201),
                    up: PortId(0),
                    from: None,
                    df: 0b10,
                },
                SourceSan {
                    san: Address(0x0202),
                    up: PortId(1),
                    from: Some(up_native),
                    df: 0b01,
                },
            ],
            sources: vec![(Address(0x0100), 0), (Address(0x0102), 1)],
            groups: vec![McastGroup {
                group: Address(0x8001),
                member_sans: vec![Address(0x0202)],
                branches: 0b11,
                local: 0b10,
            }],
        };
        let f = McastFib::from_tables(&t);
        let any = NativeAddr::mac([2, 0, 0, 0, 0, 9]);
        assert_eq!(
            f.decide(0x8001, 0x0100, PortId(0), &any),
            McastVerdict::Forward(0b10)
        );
        // From SAN B: only from the designated forwarder; another sender
        // there is a conflict to repair.
        assert_eq!(
            f.decide(0x8001, 0x0102, PortId(1), &any),
            McastVerdict::Conflict
        );
        // On a SAN this box forwards onto itself: a conflict too.
        assert_eq!(
            f.decide(0x8001, 0x0100, PortId(1), &any),
            McastVerdict::Conflict
        );
        assert_eq!(
            f.decide(0x8001, 0x0102, PortId(0), &any),
            McastVerdict::Conflict
        );
        assert_eq!(f.decide(0x8001, 0x0102, PortId(2), &any), McastVerdict::Rpf);
        assert_eq!(
            f.decide(0x8001, 0x0102, PortId(1), &up_native),
            McastVerdict::Forward(0b01)
        );
        // Unknown source, a group without members.
        assert_eq!(f.decide(0x8001, 0x0105, PortId(0), &any), McastVerdict::Rpf);
        assert_eq!(
            f.decide(0x8002, 0x0100, PortId(0), &any),
            McastVerdict::Pruned
        );
        assert_eq!(f.decide(0x8001, 0xFFFF, PortId(0), &any), McastVerdict::Rpf);
        assert_eq!(f.groups(), &[(Address(0x8001), 0)]);
        assert_eq!(f.version, 3);
    }

    #[test]
    fn groups_keep_their_counter_slots() {
        let group = |g: u16| McastGroup {
            group: Address(g),
            member_sans: vec![Address(0x0201)],
            branches: 1,
            local: 1,
        };
        let tables = |gs: &[u16]| McastTables {
            groups: gs.iter().map(|g| group(*g)).collect(),
            ..McastTables::default()
        };
        let a = McastFib::from_tables(&tables(&[0x8001, 0x8002, 0x8003]));
        assert_eq!(a.slot(0x8002), 1);
        // 0x8002 leaves, 0x8004 comes: slot 1 stays free for one round.
        let b = McastFib::following(&tables(&[0x8001, 0x8003, 0x8004]), &a);
        assert_eq!((b.slot(0x8001), b.slot(0x8003), b.slot(0x8004)), (0, 2, 3));
        assert_eq!(b.slot(0x8002), NO_SLOT);
        let c = McastFib::following(&tables(&[0x8001, 0x8003, 0x8004, 0x8005]), &b);
        assert_eq!(c.slot(0x8005), 1);
        assert_eq!(c.slot(0x0100), NO_SLOT);
    }
}
