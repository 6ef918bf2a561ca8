//! The partitions the routers enforce at the boundaries between SANs
//! (docs/partitions.md "At the routers", docs/spec-notes.md 75): per port,
//! the partitions of every node of that port's SAN, as that SAN's master
//! gives them to this box. The control thread builds the guard whenever
//! the tables change and publishes it with the FIB set, so a worker reads
//! it without locks.
//!
//! A port whose SAN's master gave no tables, or only the default one
//! (every node a full member of the default partition), is **open**: its
//! nodes may send and receive in the default partition and in no other.
//! A packet between two open ports in the default partition costs one
//! test ([`PartitionGuard::admits`]).

use arrayvec::ArrayVec;
use rrp::partition_mark::DEFAULT_KEY;
use rrp::router::PortMask;
use rrp::router::mcast::bit;
use rrp::{Address, PartitionMark, PerPort, PortId};

/// The most partitions one SAN has (the default one included): a node's
/// memberships are bitmaps of this width.
pub const MAX_SAN_PARTITIONS: usize = 64;

/// The node addresses a table indexes (0x0000-0x7FFF; logical addresses
/// are no node's).
const NODE_SPACE: usize = 0x8000;

/// Slot of a key that is not a partition of the SAN.
const NO_SLOT: u8 = u8::MAX;

/// A node's memberships: bit `s` for the SAN's partition in slot `s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Memberships {
    member: u64,
    full: u64,
}

/// One SAN's partitions, as a port of this box sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SanPartitions {
    /// The key of each slot.
    keys: ArrayVec<u16, MAX_SAN_PARTITIONS>,
    /// Per key (15 bits), its slot, or [`NO_SLOT`].
    slot_of_key: Box<[u8; NODE_SPACE]>,
    /// Per node address, its entry in `sets`; 0: not a node of the SAN.
    set_of: Box<[u16; NODE_SPACE]>,
    /// The distinct memberships of the SAN's nodes; entry 0 is none.
    sets: Vec<Memberships>,
}

/// Why the tables a master gave could not be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardError {
    /// More partitions than a SAN may have.
    TooManyPartitions,
    /// A member that is not a node address, or a key 0.
    BadEntry(Address),
}

impl std::fmt::Display for GuardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuardError::TooManyPartitions => {
                write!(f, "more than {MAX_SAN_PARTITIONS} partitions on one SAN")
            }
            GuardError::BadEntry(a) => write!(f, "{a}: not a node address, or a partition key 0"),
        }
    }
}

impl std::error::Error for GuardError {}

impl SanPartitions {
    /// The partitions of a SAN whose nodes are `members`, each with its
    /// table (key, full). A node listed twice keeps the union.
    pub fn new<I, T>(members: I) -> Result<SanPartitions, GuardError>
    where
        I: IntoIterator<Item = (Address, T)>,
        T: IntoIterator<Item = (u16, bool)>,
    {
        let mut s = SanPartitions {
            keys: ArrayVec::new(),
            slot_of_key: vec![NO_SLOT; NODE_SPACE]
                .into_boxed_slice()
                .try_into()
                .expect("node space"),
            set_of: vec![0u16; NODE_SPACE]
                .into_boxed_slice()
                .try_into()
                .expect("node space"),
            sets: vec![Memberships::default()],
        };
        for (a, table) in members {
            if !a.is_node() {
                return Err(GuardError::BadEntry(a));
            }
            let mut m = s.sets[s.set_of[a.0 as usize] as usize];
            for (key, full) in table {
                let key = key & rrp::partition_mark::KEY;
                if key == 0 {
                    return Err(GuardError::BadEntry(a));
                }
                let slot = s.slot(key)?;
                m.member |= 1 << slot;
                if full {
                    m.full |= 1 << slot;
                }
            }
            let i = match s.sets.iter().position(|x| *x == m) {
                Some(i) => i,
                None => {
                    s.sets.push(m);
                    s.sets.len() - 1
                }
            };
            s.set_of[a.0 as usize] = i as u16;
        }
        Ok(s)
    }

    /// The slot of `key`, given one if it has none.
    fn slot(&mut self, key: u16) -> Result<u8, GuardError> {
        match self.slot_of_key[key as usize] {
            NO_SLOT => {
                let slot = self.keys.len() as u8;
                self.keys
                    .try_push(key)
                    .map_err(|_| GuardError::TooManyPartitions)?;
                self.slot_of_key[key as usize] = slot;
                Ok(slot)
            }
            s => Ok(s),
        }
    }

    /// Whether every node is a full member of the default partition and
    /// of nothing else: the SAN is open.
    pub fn is_open(&self) -> bool {
        let default_full = Memberships { member: 1, full: 1 };
        self.keys.as_slice() == [DEFAULT_KEY] && self.sets[1..].iter().all(|m| *m == default_full)
            || self.sets.len() == 1
    }

    /// Whether `a` is a node of the SAN (the master gave its table).
    #[inline(always)]
    pub fn knows(&self, a: u16) -> bool {
        self.set_of.get(a as usize).is_some_and(|&i| i != 0)
    }

    /// `a`'s membership of `key`: `Some(full)`, or `None` when it is not
    /// a member.
    #[inline(always)]
    pub fn membership(&self, a: u16, key: u16) -> Option<bool> {
        let slot = self.slot_of_key[(key & rrp::partition_mark::KEY) as usize];
        if slot == NO_SLOT {
            return None;
        }
        let i = *self.set_of.get(a as usize)? as usize;
        let m = self.sets[i];
        (m.member >> slot & 1 == 1).then_some(m.full >> slot & 1 == 1)
    }

    /// The SAN's partition keys, in slot order.
    pub fn keys(&self) -> &[u16] {
        &self.keys
    }

    /// The nodes the SAN's master gave tables for.
    pub fn nodes(&self) -> usize {
        self.set_of.iter().filter(|&&i| i != 0).count()
    }
}

/// Which check refused a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusedAt {
    /// At the source's SAN: the source is not a member of the packet's
    /// partition (or not with the membership it claims), is not the node
    /// its SA names, or a node of an open SAN marked another partition.
    Source,
    /// At the destination's SAN: the destination is not a member, or both
    /// ends are limited members.
    Destination,
}

/// A packet the partitions do not allow: which check, and its partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Refusal {
    /// Which check.
    pub at: RefusedAt,
    /// The packet's mark.
    pub mark: PartitionMark,
}

/// What the forwarding path tells the guard about one packet: it asks
/// only what a port with partitions, or a marked packet, needs.
pub trait Crossing {
    /// The packet came from the native address the ingress HR's LRT has
    /// for its SA: it comes from its source.
    fn came_from_source(&self) -> bool;
    /// The packet came from another router of the ingress SAN (a buddy's
    /// native address): it entered the MessageWay elsewhere.
    fn came_from_router(&self) -> bool;
    /// The next hop is a router of the egress SAN: the destination is
    /// further on.
    fn goes_to_router(&self) -> bool;
}

/// Per port, its SAN's partitions (docs/partitions.md "At the routers").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionGuard {
    /// The ports whose SAN is not open.
    on: PortMask,
    per_port: PerPort<Option<Box<SanPartitions>>>,
}

impl PartitionGuard {
    /// A guard of `ports` ports, each given its SAN's partitions (`None`:
    /// its master gave none, the port is open).
    pub fn new(ports: impl IntoIterator<Item = Option<SanPartitions>>) -> PartitionGuard {
        let mut on = 0;
        let per_port: Vec<_> = ports
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let s = s.filter(|s| !s.is_open())?;
                on |= bit(PortId(i as u16));
                Some(Box::new(s))
            })
            .collect();
        PartitionGuard {
            on,
            per_port: PerPort::new(per_port),
        }
    }

    /// The ports whose SAN has partitions (not open).
    pub fn on(&self) -> PortMask {
        self.on
    }

    /// `port`'s SAN's partitions, unless the port is open.
    #[inline(always)]
    pub fn san(&self, port: PortId) -> Option<&SanPartitions> {
        self.per_port.get(port).and_then(|s| s.as_deref())
    }

    /// Whether a packet from `sa` to `da` marked `mark`, received on
    /// `in_port` and leaving on `out_port`, may cross the box
    /// ([`Ingress::admits`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn admits<C: Crossing>(
        &self,
        in_port: PortId,
        out_port: PortId,
        sa: u16,
        da: u16,
        mark: PartitionMark,
        c: &C,
    ) -> Result<(), Refusal> {
        self.ingress(in_port).admits(out_port, sa, da, mark, c)
    }

    /// The guard as packets received on `port` meet it: taken once per
    /// burst by the forwarding path, so that a packet looks up only its
    /// egress port's SAN.
    #[inline(always)]
    pub fn ingress(&self, port: PortId) -> Ingress<'_> {
        Ingress {
            guard: self,
            port,
            tables: self.san(port),
        }
    }
}

/// The guard seen from one ingress port ([`PartitionGuard::ingress`]).
#[derive(Debug, Clone, Copy)]
pub struct Ingress<'g> {
    guard: &'g PartitionGuard,
    port: PortId,
    /// The ingress SAN's partitions, unless the port is open.
    tables: Option<&'g SanPartitions>,
}

impl Ingress<'_> {
    /// Whether a packet from `sa` to `da` marked `mark`, received on this
    /// port and leaving on `out_port`, may cross the box: the source check
    /// where it enters from its source's SAN, the destination check where
    /// it leaves onto its destination's SAN; `c` answers the questions
    /// about where it came from and goes, only when they are asked. A
    /// packet of the default partition between two open ports takes no
    /// table. Inline: the forwarding path's instance with partitions runs
    /// it for every packet it forwards (docs/performance.md "Partitions").
    #[inline(always)]
    pub fn admits<C: Crossing>(
        &self,
        out_port: PortId,
        sa: u16,
        da: u16,
        mark: PartitionMark,
        c: &C,
    ) -> Result<(), Refusal> {
        let out = self.guard.san(out_port);
        if self.tables.is_none() && out.is_none() && mark.is_default() {
            return Ok(());
        }
        let refuse = |at| Err(Refusal { at, mark });
        if !source_admits(self.tables, sa, mark, c) {
            return refuse(RefusedAt::Source);
        }
        // The destination, where the packet leaves onto its SAN.
        let destination_ok = match out {
            Some(s) => match s.membership_of_node(da, mark.key()) {
                Known::Member(full) => mark.receiver_may_take(full),
                Known::NotMember => false,
                Known::NotNode => c.goes_to_router(),
            },
            None => mark.is_default() || c.goes_to_router(),
        };
        if !destination_ok {
            return refuse(RefusedAt::Destination);
        }
        Ok(())
    }

    /// The ingress port.
    pub fn port(&self) -> PortId {
        self.port
    }
}

/// The source check of a packet from `sa` marked `mark`, entering where
/// the SAN's partitions are `tables` (`None`: an open port).
#[inline(always)]
fn source_admits<C: Crossing>(
    tables: Option<&SanPartitions>,
    sa: u16,
    mark: PartitionMark,
    c: &C,
) -> bool {
    match tables {
        // A node of the SAN: a member of the key with the membership it
        // claims, from its own native address, or brought back onto the
        // SAN by one of its routers (which made this check where the node
        // sent it: a redirect's way). The tables first: they need no
        // native address.
        Some(s) => match s.membership_of_node(sa, mark.key()) {
            Known::Member(full) => {
                mark.sender_may_claim(full) && (c.came_from_source() || c.came_from_router())
            }
            Known::NotMember => false,
            // Not a node of a SAN with partitions: only a router may bring
            // it in.
            Known::NotNode => c.came_from_router(),
        },
        // A node of an open SAN (a full member of the default partition
        // only): only a router may bring it in another partition.
        None => mark.is_default() || c.came_from_router(),
    }
}

/// What a SAN's tables say of one address and key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// A node of the SAN, a member of the key (full or not).
    Member(bool),
    /// A node of the SAN, not a member of the key.
    NotMember,
    /// Not a node of the SAN's tables.
    NotNode,
}

impl SanPartitions {
    /// `a`'s membership of `key`, telling a node that is no member from an
    /// address that is no node: one look at each table.
    #[inline(always)]
    fn membership_of_node(&self, a: u16, key: u16) -> Known {
        let i = match self.set_of.get(a as usize) {
            Some(&i) if i != 0 => i as usize,
            _ => return Known::NotNode,
        };
        let slot = self.slot_of_key[(key & rrp::partition_mark::KEY) as usize];
        let Some(m) = self.sets.get(i) else {
            return Known::NotNode;
        };
        if slot == NO_SLOT || m.member >> slot & 1 == 0 {
            return Known::NotMember;
        }
        Known::Member(m.full >> slot & 1 == 1)
    }
}

impl PartitionGuard {
    /// The source part of [`PartitionGuard::admits`]: whether a packet
    /// from `sa` marked `mark` may enter on `in_port`, where it comes from
    /// the source's SAN. Group packets are checked so at the box they
    /// enter by (docs/partitions.md "At the routers").
    #[inline(always)]
    pub fn source_admits<C: Crossing>(
        &self,
        in_port: PortId,
        sa: u16,
        mark: PartitionMark,
        c: &C,
    ) -> bool {
        source_admits(self.san(in_port), sa, mark, c)
    }

    /// The ports of `ports` onto which a group packet marked `mark` may
    /// go: those whose SAN has a member that may receive it (a member of
    /// its key; a full one when the sender is limited). An open port takes
    /// the default partition only.
    pub fn branches(&self, ports: PortMask, mark: PartitionMark) -> PortMask {
        let mut kept = 0;
        let mut rest = ports;
        while rest != 0 {
            let p = PortId(rest.trailing_zeros() as u16);
            rest &= rest - 1;
            let ok = match self.san(p) {
                Some(s) => s.has_member(mark.key(), !mark.full()),
                None => mark.is_default(),
            };
            if ok {
                kept |= bit(p);
            }
        }
        kept
    }
}

impl SanPartitions {
    /// Whether a node of the SAN is a member of `key` (a full member, with
    /// `full`).
    pub fn has_member(&self, key: u16, full: bool) -> bool {
        let slot = self.slot_of_key[(key & rrp::partition_mark::KEY) as usize];
        if slot == NO_SLOT {
            return false;
        }
        self.sets[1..].iter().any(|m| {
            let bits = if full { m.full } else { m.member };
            bits >> slot & 1 == 1
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where a test packet comes from and goes.
    struct At {
        source: bool,
        came_from_router: bool,
        goes_to_router: bool,
    }

    impl Crossing for At {
        fn came_from_source(&self) -> bool {
            self.source
        }
        fn came_from_router(&self) -> bool {
            self.came_from_router
        }
        fn goes_to_router(&self) -> bool {
            self.goes_to_router
        }
    }

    const DIRECT: At = At {
        source: true,
        came_from_router: false,
        goes_to_router: false,
    };
    const TENANT: u16 = 0x0010;
    const FULL_DEFAULT: (u16, bool) = (DEFAULT_KEY, true);

    /// Port 0: SAN A with 0x100 (tenant full), 0x101 (tenant limited),
    /// 0x102 (default only), 0x115 (a router); port 1: SAN C the same
    /// way with 0x104, 0x105, 0x106; port 2: an open SAN.
    fn guard() -> PartitionGuard {
        let san = |base: u16| {
            SanPartitions::new([
                (Address(base), vec![(TENANT, true), (DEFAULT_KEY, false)]),
                (
                    Address(base + 1),
                    vec![(TENANT, false), (DEFAULT_KEY, false)],
                ),
                (Address(base + 2), vec![FULL_DEFAULT]),
                (Address(0x115), vec![FULL_DEFAULT]),
            ])
            .unwrap()
        };
        PartitionGuard::new([Some(san(0x100)), Some(san(0x104)), None])
    }

    fn admits(g: &PartitionGuard, sa: u16, da: u16, mark: PartitionMark, c: &At) -> bool {
        let (i, o) = (
            PortId(sa.saturating_sub(0x100) / 4),
            PortId(da.saturating_sub(0x100) / 4),
        );
        g.admits(i, o, sa, da, mark, c).is_ok()
    }

    #[test]
    fn members_talk_in_their_partition_and_limited_ones_only_with_full_ones() {
        let g = guard();
        let full = PartitionMark::new(TENANT, true);
        let limited = PartitionMark::new(TENANT, false);
        assert!(admits(&g, 0x100, 0x104, full, &DIRECT));
        assert!(admits(&g, 0x100, 0x105, full, &DIRECT), "full to limited");
        assert!(
            admits(&g, 0x101, 0x104, limited, &DIRECT),
            "limited to full"
        );
        assert!(!admits(&g, 0x101, 0x105, limited, &DIRECT), "two limited");
        assert!(!admits(&g, 0x101, 0x104, full, &DIRECT), "claims full");
        assert!(!admits(&g, 0x100, 0x106, full, &DIRECT), "not a member");
        assert!(
            !admits(&g, 0x102, 0x104, full, &DIRECT),
            "source not a member"
        );
        let default = PartitionMark::UNMARKED;
        assert!(admits(&g, 0x102, 0x106, default, &DIRECT));
        assert!(
            !admits(&g, 0x100, 0x104, default, &DIRECT),
            "limited in default"
        );
        assert!(
            admits(
                &g,
                0x100,
                0x106,
                PartitionMark::new(DEFAULT_KEY, false),
                &DIRECT
            ),
            "limited to full in default"
        );
    }

    #[test]
    fn a_source_must_come_from_its_own_native_address() {
        let g = guard();
        let spoofed = At {
            source: false,
            ..DIRECT
        };
        assert!(!admits(
            &g,
            0x100,
            0x104,
            PartitionMark::new(TENANT, true),
            &spoofed
        ));
        let refusal = g
            .admits(
                PortId(0),
                PortId(1),
                0x100,
                0x104,
                PartitionMark::new(TENANT, true),
                &spoofed,
            )
            .unwrap_err();
        assert_eq!(refusal.at, RefusedAt::Source);
        // Brought back onto its SAN by another router of it (a redirect's
        // way): that router checked the source; the membership still holds.
        let redirected = At {
            source: false,
            came_from_router: true,
            goes_to_router: false,
        };
        let full = PartitionMark::new(TENANT, true);
        assert!(admits(&g, 0x100, 0x104, full, &redirected));
        assert!(!admits(&g, 0x101, 0x104, full, &redirected), "claims full");
    }

    #[test]
    fn transit_needs_a_router_on_each_side() {
        let g = guard();
        let m = PartitionMark::new(TENANT, true);
        // 0x0300 is a node of no SAN of this box.
        let came_from_router = At {
            source: false,
            came_from_router: true,
            goes_to_router: false,
        };
        assert!(
            g.admits(PortId(0), PortId(1), 0x0300, 0x104, m, &came_from_router)
                .is_ok()
        );
        assert!(
            g.admits(PortId(0), PortId(1), 0x0300, 0x104, m, &DIRECT)
                .is_err()
        );
        let through = At {
            goes_to_router: true,
            ..DIRECT
        };
        assert!(
            g.admits(PortId(0), PortId(1), 0x100, 0x0300, m, &through)
                .is_ok()
        );
        assert_eq!(
            g.admits(PortId(0), PortId(1), 0x100, 0x0300, m, &DIRECT)
                .unwrap_err()
                .at,
            RefusedAt::Destination
        );
    }

    #[test]
    fn an_open_san_sends_and_receives_the_default_partition_only() {
        let g = guard();
        let (open, c) = (PortId(2), PortId(1));
        let default = PartitionMark::UNMARKED;
        assert!(g.admits(open, c, 0x200, 0x106, default, &DIRECT).is_ok());
        let tenant = PartitionMark::new(TENANT, true);
        assert!(g.admits(open, c, 0x200, 0x104, tenant, &DIRECT).is_err());
        assert!(
            g.admits(PortId(0), open, 0x100, 0x200, tenant, &DIRECT)
                .is_err()
        );
        let transit = At {
            source: false,
            came_from_router: true,
            goes_to_router: true,
        };
        assert!(g.admits(open, open, 0x300, 0x400, tenant, &transit).is_ok());
        // Two open ports, the default partition: no question asked.
        struct Unasked;
        impl Crossing for Unasked {
            fn came_from_source(&self) -> bool {
                unreachable!()
            }
            fn came_from_router(&self) -> bool {
                unreachable!()
            }
            fn goes_to_router(&self) -> bool {
                unreachable!()
            }
        }
        assert!(
            g.admits(open, open, 0x200, 0x201, default, &Unasked)
                .is_ok()
        );
    }

    #[test]
    fn a_san_with_the_default_table_only_is_open() {
        let s = SanPartitions::new([(Address(0x100), vec![FULL_DEFAULT])]).unwrap();
        assert!(s.is_open());
        let g = PartitionGuard::new([Some(s), None]);
        assert_eq!(g.on(), 0);
        assert!(
            guard()
                .san(PortId(0))
                .is_some_and(|s| s.nodes() == 4 && s.keys().len() == 2)
        );
        assert_eq!(guard().on(), 0b011);
    }

    #[test]
    fn group_branches_go_only_where_a_member_may_receive() {
        let g = guard();
        let all = 0b111;
        let full = PartitionMark::new(TENANT, true);
        let limited = PartitionMark::new(TENANT, false);
        assert_eq!(g.branches(all, full), 0b011, "the open port pruned");
        assert_eq!(g.branches(all, limited), 0b011, "full members on both");
        assert_eq!(g.branches(all, PartitionMark::UNMARKED), 0b111);
        assert_eq!(g.branches(all, PartitionMark::new(0x0030, true)), 0);
        // SAN D: only a limited member of the tenant's partition.
        let d = SanPartitions::new([(Address(0x200), vec![(TENANT, false)])]).unwrap();
        assert!(d.has_member(TENANT, false) && !d.has_member(TENANT, true));
        let g = PartitionGuard::new([Some(d)]);
        assert_eq!(g.branches(0b1, full), 0b1);
        assert_eq!(g.branches(0b1, limited), 0, "two limited");
    }

    #[test]
    fn a_group_source_is_checked_as_any_source() {
        let g = guard();
        let full = PartitionMark::new(TENANT, true);
        assert!(g.source_admits(PortId(0), 0x100, full, &DIRECT));
        assert!(!g.source_admits(PortId(0), 0x102, full, &DIRECT));
        let spoofed = At {
            source: false,
            ..DIRECT
        };
        assert!(!g.source_admits(PortId(0), 0x100, full, &spoofed));
        assert!(!g.source_admits(PortId(2), 0x200, full, &DIRECT), "open");
        assert!(g.source_admits(PortId(2), 0x200, PartitionMark::UNMARKED, &DIRECT));
    }

    #[test]
    fn bad_tables_are_refused() {
        assert_eq!(
            SanPartitions::new([(Address(0x8001), vec![FULL_DEFAULT])]),
            Err(GuardError::BadEntry(Address(0x8001)))
        );
        assert_eq!(
            SanPartitions::new([(Address(0x100), vec![(0, true)])]),
            Err(GuardError::BadEntry(Address(0x100)))
        );
        let many = (1..=65u16).map(|k| (k, true));
        assert_eq!(
            SanPartitions::new([(Address(0x100), many)]),
            Err(GuardError::TooManyPartitions)
        );
    }
}
