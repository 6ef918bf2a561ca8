//! Packet-type, RRP message and error-code assignments (Appendix A1, A2, A4;
//! the values of A1 are fixed by docs/architecture.md "Wire").

use core::fmt;

/// The EEP Packet Type field (PT).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PacketType(pub u16);

/// What a packet type value designates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketClass {
    /// ERR: error report; TE is the error code.
    Error,
    /// RRP: router-to-router protocol; TE is the message number.
    Rrp,
    /// The data block is an embedded MessageWay packet.
    Embedded,
    /// Memory read.
    MemoryRead,
    /// Memory write.
    MemoryWrite,
    /// In-band management, MAD format.
    Management,
    /// 0x0000 and 0x0007-0x00FF: not assigned.
    Reserved,
    /// 0x0100-0x05FF: user defined.
    User,
    /// 0x0600 and up: an Ether-type.
    EtherType,
}

impl PacketType {
    /// ERR.
    pub const ERR: PacketType = PacketType(0x0001);
    /// RRP.
    pub const RRP: PacketType = PacketType(0x0002);
    /// Embedded MessageWay packet.
    pub const EMBEDDED: PacketType = PacketType(0x0003);
    /// Memory read.
    pub const MEMORY_READ: PacketType = PacketType(0x0004);
    /// Memory write.
    pub const MEMORY_WRITE: PacketType = PacketType(0x0005);
    /// Management (MAD format).
    pub const MANAGEMENT: PacketType = PacketType(0x0006);
    /// First user-defined value.
    pub const FIRST_USER: PacketType = PacketType(0x0100);
    /// First Ether-type value.
    pub const FIRST_ETHERTYPE: PacketType = PacketType(0x0600);

    /// The class of this value.
    pub const fn class(self) -> PacketClass {
        match self.0 {
            0x0001 => PacketClass::Error,
            0x0002 => PacketClass::Rrp,
            0x0003 => PacketClass::Embedded,
            0x0004 => PacketClass::MemoryRead,
            0x0005 => PacketClass::MemoryWrite,
            0x0006 => PacketClass::Management,
            0x0100..=0x05FF => PacketClass::User,
            0x0600..=0xFFFF => PacketClass::EtherType,
            _ => PacketClass::Reserved,
        }
    }

    /// ERR or RRP: the control traffic that routers speak.
    pub const fn is_control(self) -> bool {
        matches!(self.0, 0x0001 | 0x0002)
    }
}

impl fmt::Debug for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04x}", self.0)
    }
}

impl fmt::Display for PacketClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PacketClass::Error => "ERR",
            PacketClass::Rrp => "RRP",
            PacketClass::Embedded => "EMBEDDED",
            PacketClass::MemoryRead => "MEMORY-READ",
            PacketClass::MemoryWrite => "MEMORY-WRITE",
            PacketClass::Management => "MANAGEMENT",
            PacketClass::Reserved => "RESERVED",
            PacketClass::User => "USER",
            PacketClass::EtherType => "ETHERTYPE",
        })
    }
}

/// RRP message numbers, carried in TE when PT is RRP (Appendix A2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum RrpType {
    /// RRP#1: please give me L2-routes to node (address).
    RouteRequest = 1,
    /// RRP#2: here are L2-routes to node (address).
    Routes = 2,
    /// RRP#3: redirect to node (address) via a neighbour HR (address).
    Redirect = 3,
    /// RRP#4: please tell me about node (address | name | capabilities).
    InfoRequest = 4,
    /// RRP#5: info about node (address, name, capabilities).
    Info = 5,
    /// RRP#6: which HR should I use for node (address).
    WhichHr = 6,
    /// RRP#7: who/what are you?
    WhoAreYou = 7,
    /// RRP#8: please give me your RTs.
    RtRequest = 8,
    /// RRP#9: here is an RT.
    RouteTable = 9,
}

impl RrpType {
    /// The message of number `te`, if it is one of 1..=9.
    pub const fn from_u16(te: u16) -> Option<RrpType> {
        Some(match te {
            1 => RrpType::RouteRequest,
            2 => RrpType::Routes,
            3 => RrpType::Redirect,
            4 => RrpType::InfoRequest,
            5 => RrpType::Info,
            6 => RrpType::WhichHr,
            7 => RrpType::WhoAreYou,
            8 => RrpType::RtRequest,
            9 => RrpType::RouteTable,
            _ => return None,
        })
    }
}

/// ERR codes, carried in TE when PT is ERR (Appendix A4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum ErrorCode {
    /// UNK: destination unknown.
    Unknown = 1,
    /// HRDOWN: an HR is down.
    HrDown = 2,
    /// LINKDOWN: a link is down.
    LinkDown = 3,
    /// GENERAL: the enclosed message could not be handled.
    General = 4,
}

impl ErrorCode {
    /// The error code `te`, if it is one of 1..=4.
    pub const fn from_u16(te: u16) -> Option<ErrorCode> {
        Some(match te {
            1 => ErrorCode::Unknown,
            2 => ErrorCode::HrDown,
            3 => ErrorCode::LinkDown,
            4 => ErrorCode::General,
            _ => return None,
        })
    }

    /// The draft's name of the code.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorCode::Unknown => "UNK",
            ErrorCode::HrDown => "HRDOWN",
            ErrorCode::LinkDown => "LINKDOWN",
            ErrorCode::General => "GENERAL",
        }
    }
}

/// Node capability codes (Appendix A5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CapabilityCode {
    /// 1: GP computing node.
    GpComputing = 1,
    /// 2: router; parameters: SAN-IDs, 2 bytes each.
    Router = 2,
    /// 3: MessageWay server.
    Server = 3,
    /// 4: network multicast server.
    MulticastServer = 4,
    /// 5: NFS.
    Nfs = 5,
    /// 6: NPS (paging server).
    PagingServer = 6,
    /// 7: floating-point DSP; parameters: IEEE word sizes in bytes, 1 byte each.
    FloatDsp = 7,
    /// 8: fixed-point DSP; parameters: word sizes in bytes, 1 byte each.
    FixedDsp = 8,
    /// 9: printer.
    Printer = 9,
}

impl CapabilityCode {
    /// The capability of code `cc`, if Appendix A5 assigns it.
    pub const fn from_u8(cc: u8) -> Option<CapabilityCode> {
        Some(match cc {
            1 => CapabilityCode::GpComputing,
            2 => CapabilityCode::Router,
            3 => CapabilityCode::Server,
            4 => CapabilityCode::MulticastServer,
            5 => CapabilityCode::Nfs,
            6 => CapabilityCode::PagingServer,
            7 => CapabilityCode::FloatDsp,
            8 => CapabilityCode::FixedDsp,
            9 => CapabilityCode::Printer,
            _ => return None,
        })
    }

    /// A short name for displays.
    pub const fn name(self) -> &'static str {
        match self {
            CapabilityCode::GpComputing => "gp-computing",
            CapabilityCode::Router => "router",
            CapabilityCode::Server => "messageway-server",
            CapabilityCode::MulticastServer => "multicast-server",
            CapabilityCode::Nfs => "nfs",
            CapabilityCode::PagingServer => "paging-server",
            CapabilityCode::FloatDsp => "float-dsp",
            CapabilityCode::FixedDsp => "fixed-dsp",
            CapabilityCode::Printer => "printer",
        }
    }
}
