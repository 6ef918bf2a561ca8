//! Partitions (docs/partitions.md, docs/spec-notes.md 75): which nodes may
//! talk to which. InfiniBand's partition key (P_Key) mapped onto
//! MessageWay: a partition is a 15-bit key; a node is a full or a limited
//! member of it; two nodes may talk when they share a partition in which
//! at least one of them is a full member (two limited members may not).
//! Every node is a member of the default partition, key
//! [`PartitionKey::DEFAULT`]: a full member when the SAN manager has no
//! partitions file, as the file says otherwise.
//!
//! The SAN's master holds the partitions, read from a file in OpenSM's
//! partitions.conf syntax ([`file`]); each node's own table of keys (its
//! P_KeyTable) is what [`Partitions::table_of`] gives for it.

pub mod file;

use std::fmt;

pub use file::{PartitionFileError, parse};

/// The most partitions a SAN has (the default one included): a node's
/// table and the routers' per-address sets are bitmaps of this width.
pub const MAX_PARTITIONS: usize = 64;

/// The most members one partition lists by identity.
pub const MAX_MEMBERS: usize = 4096;

/// The most members of a SAN whose tables a router keeps for its checks
/// on one HR (docs/partitions.md "At the routers").
pub const MAX_SAN_TABLES: usize = 4096;

/// A partition key: 15 bits, 0x0001-0x7FFF (InfiniBand's P_Key without
/// its membership bit; 0 is not a key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartitionKey(u16);

impl PartitionKey {
    /// The default partition's key (InfiniBand's 0x7FFF).
    pub const DEFAULT: PartitionKey = PartitionKey(0x7FFF);

    /// The key `k`, if it is one (1-0x7FFF).
    pub fn new(k: u16) -> Option<PartitionKey> {
        (1..=0x7FFF).contains(&k).then_some(PartitionKey(k))
    }

    /// Its 15 bits.
    pub fn get(self) -> u16 {
        self.0
    }
}

impl fmt::Display for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#06x}", self.0)
    }
}

/// How a node belongs to a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Membership {
    /// May talk to every member.
    Full,
    /// May talk to full members only.
    Limited,
}

impl Membership {
    /// The name in the file and in `mwctl` output.
    pub fn name(self) -> &'static str {
        match self {
            Membership::Full => "full",
            Membership::Limited => "limited",
        }
    }

    /// The stronger of two memberships (full wins).
    pub fn max(self, other: Membership) -> Membership {
        if self == Membership::Full || other == Membership::Full {
            Membership::Full
        } else {
            Membership::Limited
        }
    }
}

/// In JSON a key is a string, `"0x7fff"`; a number is accepted on
/// input; 0 and anything above 0x7FFF are refused. A membership is
/// `"full"` or `"limited"`.
#[cfg(feature = "serde")]
mod serde_impl {
    use super::{Membership, PartitionKey};
    use serde::de::{self, Deserializer};
    use serde::{Deserialize, Serialize, Serializer};

    impl Serialize for PartitionKey {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(self)
        }
    }

    /// A key as JSON gives it.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Number(u64),
        Text(String),
    }

    impl<'de> Deserialize<'de> for PartitionKey {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PartitionKey, D::Error> {
            let v = match Given::deserialize(d)? {
                Given::Number(n) => n,
                Given::Text(t) => {
                    let t = t.trim();
                    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                        Some(h) => u64::from_str_radix(h, 16),
                        None => t.parse(),
                    }
                    .map_err(|_| de::Error::custom(format!("{t:?} is not a partition key")))?
                }
            };
            u16::try_from(v)
                .ok()
                .and_then(PartitionKey::new)
                .ok_or_else(|| {
                    de::Error::custom(format!("{v:#x} is not a partition key (0x0001-0x7fff)"))
                })
        }
    }

    impl Serialize for Membership {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(self.name())
        }
    }

    impl<'de> Deserialize<'de> for Membership {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Membership, D::Error> {
            match String::deserialize(d)?.to_ascii_lowercase().as_str() {
                "full" => Ok(Membership::Full),
                "limited" => Ok(Membership::Limited),
                m => Err(de::Error::custom(format!("{m:?}: full or limited"))),
            }
        }
    }
}

/// Who a member entry names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Member {
    /// Every node of the SAN (`ALL`).
    All,
    /// Every host (`ALL_HOSTS`, or OpenSM's `ALL_CAS`).
    AllHosts,
    /// Every router (`ALL_ROUTERS`).
    AllRouters,
    /// The SAN manager's own node (`SELF`).
    Manager,
    /// The node of this identity (NodeInfo's NodeIdentity, as `mwctl
    /// discover` prints it: OpenSM's PortGUID).
    Node(u64),
}

impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Member::All => f.write_str("ALL"),
            Member::AllHosts => f.write_str("ALL_HOSTS"),
            Member::AllRouters => f.write_str("ALL_ROUTERS"),
            Member::Manager => f.write_str("SELF"),
            Member::Node(i) => write!(f, "{i:#018x}"),
        }
    }
}

/// One partition as the file declares it (its definitions with the same
/// key merged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// Its name (the first definition's; logs and `mwctl`).
    pub name: String,
    /// Its key.
    pub key: PartitionKey,
    /// Its members, in file order.
    pub members: Vec<(Member, Membership)>,
}

/// What the partitions need to know of a node to give it its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeFacts {
    /// Its NodeIdentity.
    pub identity: u64,
    /// Whether it is a router.
    pub router: bool,
    /// Whether it is the node of the SAN manager that gives the tables.
    pub manager: bool,
}

/// A SAN's partitions: those of the file and the default one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partitions {
    /// By first appearance in the file; the default partition is among
    /// them (as the file gives it, or as [`Partitions::open`] or
    /// [`parse`] adds it).
    pub list: Vec<Partition>,
}

impl Default for Partitions {
    /// No partitions file: every node a full member of the default
    /// partition (OpenSM's `Default=0x7fff : ALL=full ;`).
    fn default() -> Self {
        Partitions::open()
    }
}

impl Partitions {
    /// Every node a full member of the default partition.
    pub fn open() -> Partitions {
        Partitions {
            list: vec![Partition {
                name: "Default".into(),
                key: PartitionKey::DEFAULT,
                members: vec![(Member::All, Membership::Full)],
            }],
        }
    }

    /// Whether these are [`Partitions::open`]'s: every node a full member
    /// of the default partition, as with no file.
    pub fn is_open(&self) -> bool {
        *self == Partitions::open()
    }

    /// The partition of key `k`.
    pub fn get(&self, k: PartitionKey) -> Option<&Partition> {
        self.list.iter().find(|p| p.key == k)
    }

    /// The table of node `n`: every partition it is a member of, with its
    /// membership (the strongest the entries naming it give), by key.
    /// Routers and the SAN manager are always full members of the default
    /// partition: the routing and management protocols reach every node.
    pub fn table_of(&self, n: &NodeFacts) -> Vec<(PartitionKey, Membership)> {
        let mut t: Vec<(PartitionKey, Membership)> = Vec::new();
        for p in &self.list {
            let mut m: Option<Membership> = None;
            for (who, how) in &p.members {
                let hit = match who {
                    Member::All => true,
                    Member::AllHosts => !n.router,
                    Member::AllRouters => n.router,
                    Member::Manager => n.manager,
                    Member::Node(i) => *i == n.identity,
                };
                if hit {
                    m = Some(m.map_or(*how, |x| x.max(*how)));
                }
            }
            if p.key == PartitionKey::DEFAULT && (n.router || n.manager) {
                m = Some(Membership::Full);
            }
            if let Some(m) = m {
                t.push((p.key, m));
            }
        }
        t.sort();
        t
    }
}

/// Whether two nodes with tables `a` and `b` may talk: they share a
/// partition in which at least one of them is a full member.
pub fn may_talk(a: &[(PartitionKey, Membership)], b: &[(PartitionKey, Membership)]) -> bool {
    a.iter().any(|(ka, ma)| {
        b.iter()
            .any(|(kb, mb)| ka == kb && (*ma == Membership::Full || *mb == Membership::Full))
    })
}

/// The membership of `key` in a node's `table` (`None`: not a member).
pub fn membership_of(
    table: &[(PartitionKey, Membership)],
    key: PartitionKey,
) -> Option<Membership> {
    table.iter().find(|(k, _)| *k == key).map(|(_, m)| *m)
}

/// Why the routers refuse a packet in a partition (docs/partitions.md
/// "What is checked"): the first check it fails, in the order they make
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// The source is not a member of the packet's partition.
    SourceNotMember,
    /// The source is a limited member and the packet claims full.
    SourceClaimsFull,
    /// The destination is not a member.
    DestinationNotMember,
    /// A limited sender to a limited destination.
    BothLimited,
}

impl Refusal {
    /// In words, as `mwtrace` prints it.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::SourceNotMember => "source not a member",
            Refusal::SourceClaimsFull => "source a limited member, the packet claiming full",
            Refusal::DestinationNotMember => "destination not a member",
            Refusal::BothLimited => "a limited sender to a limited destination",
        }
    }

    /// Whether the source check refuses it (at the router where the packet
    /// enters from the source's SAN); else the destination check (where it
    /// leaves onto the destination's SAN).
    pub fn at_source(self) -> bool {
        matches!(self, Refusal::SourceNotMember | Refusal::SourceClaimsFull)
    }
}

/// Whether the routers admit a packet in partition `key` whose sender
/// claims `claimed`, from a source whose membership of `key` is `source`
/// to a destination whose membership is `destination` (`None`: not a
/// member): [`source_check`], then [`destination_check`].
pub fn admits(
    key: PartitionKey,
    claimed: Membership,
    source: Option<Membership>,
    destination: Option<Membership>,
) -> Result<(), Refusal> {
    source_check(key, claimed, source)?;
    destination_check(key, claimed, destination)
}

/// The routers' source check of a packet in partition `key` whose sender
/// claims `claimed`: the source, of membership `source` (`None`: not a
/// member), a member with the membership claimed. The same rule as the
/// forwarding path's (`rrp::PartitionMark::sender_may_claim`); where the
/// packet comes from (its native address, transit) is the forwarding
/// path's alone.
pub fn source_check(
    key: PartitionKey,
    claimed: Membership,
    source: Option<Membership>,
) -> Result<(), Refusal> {
    let mark = rrp::PartitionMark::new(key.get(), claimed == Membership::Full);
    let source = source.ok_or(Refusal::SourceNotMember)?;
    if !mark.sender_may_claim(source == Membership::Full) {
        return Err(Refusal::SourceClaimsFull);
    }
    Ok(())
}

/// The routers' destination check of a packet in partition `key` whose
/// sender claims `claimed`: the destination, of membership `destination`
/// (`None`: not a member), a member, and not a limited one when the sender
/// is limited (`rrp::PartitionMark::receiver_may_take`).
pub fn destination_check(
    key: PartitionKey,
    claimed: Membership,
    destination: Option<Membership>,
) -> Result<(), Refusal> {
    let mark = rrp::PartitionMark::new(key.get(), claimed == Membership::Full);
    let destination = destination.ok_or(Refusal::DestinationNotMember)?;
    if !mark.receiver_may_take(destination == Membership::Full) {
        return Err(Refusal::BothLimited);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(identity: u64) -> NodeFacts {
        NodeFacts {
            identity,
            router: false,
            manager: false,
        }
    }

    #[test]
    fn without_a_file_everyone_talks_to_everyone() {
        let p = Partitions::default();
        let (a, b) = (p.table_of(&host(1)), p.table_of(&host(2)));
        assert_eq!(a, [(PartitionKey::DEFAULT, Membership::Full)]);
        assert!(may_talk(&a, &b));
    }

    #[test]
    fn limited_members_reach_full_members_only() {
        let p = parse(
            "Default=0x7fff : ALL=limited ;\n\
             tenant=0x0010 : 0x11=full, 0x12, 0x13 ;\n",
        )
        .unwrap();
        let t = |i| p.table_of(&host(i));
        assert!(may_talk(&t(0x11), &t(0x12)), "full and limited");
        assert!(!may_talk(&t(0x12), &t(0x13)), "two limited members");
        assert!(!may_talk(&t(0x12), &t(0x99)), "a stranger");
        let router = NodeFacts {
            identity: 0x77,
            router: true,
            manager: false,
        };
        assert!(
            may_talk(&p.table_of(&router), &t(0x99)),
            "routers are full members of the default partition"
        );
    }

    #[test]
    fn admission_names_the_first_check_refused() {
        let k = PartitionKey::new(0x10).unwrap();
        let (f, l) = (Membership::Full, Membership::Limited);
        assert_eq!(admits(k, f, Some(f), Some(l)), Ok(()));
        assert_eq!(
            admits(k, l, Some(f), Some(f)),
            Ok(()),
            "a full member may claim limited"
        );
        assert_eq!(admits(k, l, Some(l), Some(f)), Ok(()));
        assert_eq!(admits(k, f, None, Some(f)), Err(Refusal::SourceNotMember));
        assert_eq!(
            admits(k, f, Some(l), Some(f)),
            Err(Refusal::SourceClaimsFull)
        );
        assert_eq!(
            admits(k, f, Some(f), None),
            Err(Refusal::DestinationNotMember)
        );
        assert_eq!(admits(k, l, Some(l), Some(l)), Err(Refusal::BothLimited));
        assert_eq!(admits(k, l, Some(f), Some(l)), Err(Refusal::BothLimited));
        assert!(Refusal::SourceClaimsFull.at_source() && !Refusal::BothLimited.at_source());
    }

    #[test]
    fn nodes_that_may_talk_have_a_partition_the_routers_admit() {
        let p = parse(
            "Default=0x7fff : ALL=limited ;\n\
             a=0x0010 : 0x11=full, 0x12, 0x13 ;\n\
             b=0x0020 : 0x13=full, 0x14 ;\n",
        )
        .unwrap();
        for x in 0x11..=0x15 {
            for y in 0x11..=0x15 {
                let (a, b) = (p.table_of(&host(x)), p.table_of(&host(y)));
                // The sender claims what its table says.
                let admitted = a
                    .iter()
                    .any(|(k, m)| admits(*k, *m, Some(*m), membership_of(&b, *k)).is_ok());
                assert_eq!(admitted, may_talk(&a, &b), "{x:#x} -> {y:#x}");
            }
        }
    }

    #[test]
    fn keys_are_fifteen_bits_and_never_zero() {
        assert!(PartitionKey::new(0).is_none());
        assert!(PartitionKey::new(0x8000).is_none());
        assert_eq!(PartitionKey::new(0x7FFF), Some(PartitionKey::DEFAULT));
        assert_eq!(PartitionKey::DEFAULT.to_string(), "0x7fff");
    }
}
