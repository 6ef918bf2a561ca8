//! How MessageWay packets travel on the SANs mwrouter attaches to
//! (docs/architecture.md "Wire"; docs/encapsulation.md).

/// What a SAN's native addresses are, and how MessageWay travels on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkKind {
    /// Ethernet II: 6-byte MACs, EtherType 0x88B5.
    Ethernet,
    /// UDP: IPv4 address + port (6 bytes) or IPv6 address + port (18 bytes).
    Udp,
    /// In-memory (tests and benchmarks): 6-byte addresses, no encapsulation.
    Memory,
}

impl LinkKind {
    /// Every kind.
    pub const ALL: [LinkKind; 3] = [LinkKind::Ethernet, LinkKind::Udp, LinkKind::Memory];

    /// Its name in tables, JSON and logs.
    pub const fn name(self) -> &'static str {
        match self {
            LinkKind::Ethernet => "ethernet",
            LinkKind::Udp => "udp",
            LinkKind::Memory => "memory",
        }
    }

    /// The kind of this name.
    pub fn from_name(name: &str) -> Option<LinkKind> {
        LinkKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// EtherType of MessageWay over Ethernet II.
pub const ETHERTYPE: u16 = 0x88B5;
/// EtherType of an IEEE 802.1Q tag: the Ethernet backends accept one tag
/// on receive and strip it with the header, its VLAN id not looked at
/// (docs/backends.md).
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// The UDP port of MessageWay over UDP: 34997 = 0x88B5, the EtherType's value.
pub const UDP_PORT: u16 = 34997;
/// Ethernet frames shorter than this are padded; the packet's end comes from DL.
pub const ETH_MIN_FRAME: usize = 60;
/// Ethernet II header length.
pub const ETH_HEADER_LEN: usize = 14;
/// pcap link type of a bare MessageWay packet (LINKTYPE_USER0).
pub const LINKTYPE_MESSAGEWAY: u32 = 147;
/// pcap link type of Ethernet.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// pcap link type of raw IPv4/IPv6.
pub const LINKTYPE_RAW: u32 = 101;
/// pcap link type of raw IPv4.
pub const LINKTYPE_IPV4: u32 = 228;
/// pcap link type of raw IPv6.
pub const LINKTYPE_IPV6: u32 = 229;
