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

    /// The draft's name of the control message of this type with extension
    /// `te` (`"RRP#7"`, `"ERR UNK"`), if it is one the draft defines.
    pub const fn control_name(self, te: u16) -> Option<&'static str> {
        match self {
            PacketType::RRP => match RrpType::from_code(te) {
                Some(t) => Some(t.name()),
                None => None,
            },
            PacketType::ERR => match ErrorCode::from_code(te) {
                Some(c) => Some(c.message_name()),
                None => None,
            },
            _ => None,
        }
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

crate::code_points! {
    /// RRP message numbers, carried in TE when PT is RRP (Appendix A2).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum RrpType: u16 {
        /// RRP#1: please give me L2-routes to node (address).
        RouteRequest = 1 => "RRP#1",
        /// RRP#2: here are L2-routes to node (address).
        Routes = 2 => "RRP#2",
        /// RRP#3: redirect to node (address) via a neighbour HR (address).
        Redirect = 3 => "RRP#3",
        /// RRP#4: please tell me about node (address | name | capabilities).
        InfoRequest = 4 => "RRP#4",
        /// RRP#5: info about node (address, name, capabilities).
        Info = 5 => "RRP#5",
        /// RRP#6: which HR should I use for node (address).
        WhichHr = 6 => "RRP#6",
        /// RRP#7: who/what are you?
        WhoAreYou = 7 => "RRP#7",
        /// RRP#8: please give me your RTs.
        RtRequest = 8 => "RRP#8",
        /// RRP#9: here is an RT.
        RouteTable = 9 => "RRP#9",
    }
}

crate::code_points! {
    /// ERR codes, carried in TE when PT is ERR (Appendix A4).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ErrorCode: u16 {
        /// UNK: destination unknown.
        Unknown = 1 => "UNK",
        /// HRDOWN: an HR is down.
        HrDown = 2 => "HRDOWN",
        /// LINKDOWN: a link is down.
        LinkDown = 3 => "LINKDOWN",
        /// GENERAL: the enclosed message could not be handled.
        General = 4 => "GENERAL",
    }
}

impl ErrorCode {
    /// The draft's name of an error message with this code (`"ERR UNK"`).
    pub const fn message_name(self) -> &'static str {
        match self {
            ErrorCode::Unknown => "ERR UNK",
            ErrorCode::HrDown => "ERR HRDOWN",
            ErrorCode::LinkDown => "ERR LINKDOWN",
            ErrorCode::General => "ERR GENERAL",
        }
    }
}

crate::code_points! {
    /// Node capability codes (Appendix A5).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum CapabilityCode: u8 {
        /// 1: GP computing node.
        GpComputing = 1 => "gp-computing",
        /// 2: router; parameters: SAN-IDs, 2 bytes each.
        Router = 2 => "router",
        /// 3: MessageWay server.
        Server = 3 => "messageway-server",
        /// 4: network multicast server.
        MulticastServer = 4 => "multicast-server",
        /// 5: NFS.
        Nfs = 5 => "nfs",
        /// 6: NPS (paging server).
        PagingServer = 6 => "paging-server",
        /// 7: floating-point DSP; parameters: IEEE word sizes in bytes, 1 byte each.
        FloatDsp = 7 => "float-dsp",
        /// 8: fixed-point DSP; parameters: word sizes in bytes, 1 byte each.
        FixedDsp = 8 => "fixed-dsp",
        /// 9: printer.
        Printer = 9 => "printer",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_names_follow_the_numbers() {
        for te in 0..=10u16 {
            let rrp = PacketType::RRP.control_name(te);
            assert_eq!(
                rrp.map(String::from),
                RrpType::from_code(te).map(|_| format!("RRP#{te}"))
            );
            let err = PacketType::ERR.control_name(te);
            assert_eq!(
                err.map(String::from),
                ErrorCode::from_code(te).map(|c| format!("ERR {}", c.name()))
            );
            assert_eq!(PacketType::MANAGEMENT.control_name(te), None);
        }
    }
}
