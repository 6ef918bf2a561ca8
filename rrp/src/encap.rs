//! How MessageWay packets travel on the SANs mwrouter attaches to
//! (DESIGN.md "Wire"; docs/encapsulation.md).

/// EtherType of MessageWay over Ethernet II.
pub const ETHERTYPE: u16 = 0x88B5;
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
