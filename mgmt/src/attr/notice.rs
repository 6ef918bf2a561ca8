//! Notice (0x0002, Subn): a trap from an agent to the manager, and the
//! Report and TrapRepress about it (docs/management.md "Notice"), with the
//! DataDetails of the traps mwrouter sends.

use rrp::wire::auth::AuthRefusal;
use rrp::{Address, NativeAddr};

use crate::attr::{native_at, need, prepare, put_native};
use crate::error::{Error, ErrorKind, Result};
use crate::wire::{Method, MgmtClass};
use rrp::wire::bytes::{be16, be24, be32, be64, put16, put24, put32, put64};

/// Byte offsets of Notice.
pub mod field {
    /// IsGeneric (bit 7) and Type (bits 0-6).
    pub const GENERIC_TYPE: usize = 0;
    /// ProducerType (24 bits).
    pub const PRODUCER_TYPE: usize = 1;
    /// TrapNumber (16 bits).
    pub const TRAP_NUMBER: usize = 4;
    /// IssuerAddress (16 bits).
    pub const ISSUER: usize = 6;
    /// NoticeToggle (bit 15) and NoticeCount (bits 0-14).
    pub const TOGGLE_COUNT: usize = 8;
    /// DataDetails (54 bytes).
    pub const DETAILS: usize = 10;
}

/// Bytes of DataDetails.
pub const DETAILS_LEN: usize = 54;

/// Notice.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Notice {
    /// IsGeneric: a generic notice (the traps below are all generic).
    pub is_generic: bool,
    /// Type (7 bits): [`Notice::FATAL`] .. [`Notice::INFO`].
    pub notice_type: u8,
    /// ProducerType (24 bits): [`Notice::PRODUCER_HOST`], [`Notice::PRODUCER_ROUTER`].
    pub producer_type: u32,
    /// TrapNumber.
    pub trap_number: u16,
    /// IssuerAddress.
    pub issuer: Address,
    /// NoticeToggle.
    pub toggle: bool,
    /// NoticeCount (15 bits).
    pub count: u16,
    /// DataDetails, per trap.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_util::array"))]
    pub details: [u8; DETAILS_LEN],
}

impl Default for Notice {
    fn default() -> Self {
        Notice {
            is_generic: false,
            notice_type: 0,
            producer_type: 0,
            trap_number: 0,
            issuer: Address(0),
            toggle: false,
            count: 0,
            details: [0; DETAILS_LEN],
        }
    }
}

/// Trap 128: an HR went down or up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PortStateChange {
    /// The port.
    pub port: u8,
    /// Its state: 1 down, 4 active (`PortInfo::DOWN`, `PortInfo::ACTIVE`).
    pub state: u8,
    /// The HR's address.
    pub hr: Address,
}

/// Trap 129: a port's drops crossed the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PortDrops {
    /// The port.
    pub port: u8,
    /// Drops in the last interval.
    pub drops: u64,
}

/// Trap 256: a request with a bad M_Key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BadMkey {
    /// The requester's address.
    pub requester: Address,
    /// The request's method.
    pub method: Method,
    /// The request's class.
    pub class: MgmtClass,
    /// The request's AttributeID.
    pub attribute: u16,
    /// The request's AttributeModifier.
    pub modifier: u32,
    /// The key given.
    pub key: u64,
}

/// Trap 1028: a SAN's master gave a node an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AddressAssigned {
    /// The node's identity.
    pub identity: u64,
    /// The address.
    pub address: Address,
    /// The address it had before.
    pub again: bool,
}

/// Trap 1029: a SAN's master found two nodes at one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DuplicateAddress {
    /// The address.
    pub address: Address,
    /// The identity seen before, the one seen now.
    pub identities: [u64; 2],
}

/// Trap 1024: a neighbour HR is down (RRP HR-DOWN).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HrDown {
    /// The HR that is down.
    pub hr: Address,
    /// The port that saw it.
    pub port: u8,
}

/// Trap 1026's details: an RT limit was reached (docs/management.md
/// "Traps and notices").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RtLimit {
    /// The neighbour whose RT was refused first.
    pub from: Address,
    /// The port.
    pub port: u8,
    /// Which limit: [`Notice::RT_LIMIT_NEIGHBOUR`] or [`Notice::RT_LIMIT_HR`].
    pub which: u8,
    /// The limit, in RTs.
    pub max: u32,
}

/// Trap 1027's details: a control packet failed the SAN's authentication
/// (docs/management.md "Traps and notices").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AuthRefused {
    /// The packet's SA (not proven: it did not authenticate).
    pub from: Address,
    /// The port it arrived on.
    pub port: u8,
    /// Why it was refused; `None` for a number this version does not know.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_util::auth_refusal"))]
    pub why: Option<AuthRefusal>,
    /// The native address it came from.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_util::native"))]
    pub native: NativeAddr,
}

/// Trap 1025: a node without an address asks its SAN's manager for one
/// (docs/manager.md "Address assignment").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NoAddress {
    /// The node's identity (NodeInfo's).
    pub identity: u64,
    /// Its port without an address.
    pub port: u8,
}

impl Notice {
    /// AttributeID.
    pub const ID: u16 = 0x0002;
    /// Bytes of the layout.
    pub const LEN: usize = 64;

    /// Type: fatal.
    pub const FATAL: u8 = 0;
    /// Type: urgent.
    pub const URGENT: u8 = 1;
    /// Type: security.
    pub const SECURITY: u8 = 2;
    /// Type: subnet management.
    pub const SUBNET_MANAGEMENT: u8 = 3;
    /// Type: info.
    pub const INFO: u8 = 4;
    /// ProducerType of a host.
    pub const PRODUCER_HOST: u32 = 1;
    /// ProducerType of a router.
    pub const PRODUCER_ROUTER: u32 = 3;

    /// Trap 128: an HR went down or up.
    pub const TRAP_PORT_STATE: u16 = 128;
    /// Trap 129: a port's drops crossed the threshold.
    pub const TRAP_DROPS: u16 = 129;
    /// Trap 256: bad M_Key.
    pub const TRAP_BAD_MKEY: u16 = 256;
    /// Trap 1024: a neighbour HR is down.
    pub const TRAP_HR_DOWN: u16 = 1024;
    /// Trap 1025: a node without an address.
    pub const TRAP_NO_ADDRESS: u16 = 1025;
    /// Trap 1026: an RT limit was reached.
    pub const TRAP_RT_LIMIT: u16 = 1026;
    /// Trap 1027: a control packet failed the SAN's authentication.
    pub const TRAP_AUTH_REFUSED: u16 = 1027;
    /// Trap 1028: a SAN's master gave a node an address (raised by the
    /// master itself, for its subscribers; docs/management.md "Events").
    pub const TRAP_ADDRESS_ASSIGNED: u16 = 1028;
    /// Trap 1029: a SAN's master found two nodes at one address.
    pub const TRAP_DUPLICATE_ADDRESS: u16 = 1029;
    /// Trap 1026's limit: the RTs of one neighbour (`limits.max_rts_per_neighbour`).
    pub const RT_LIMIT_NEIGHBOUR: u8 = 1;
    /// Trap 1026's limit: the RTs of one HR (`limits.max_rts_per_hr`).
    pub const RT_LIMIT_HR: u8 = 2;

    /// `"fatal"`, `"urgent"`, `"security"`, `"subnet management"`, `"info"`.
    pub const fn type_name(&self) -> Option<&'static str> {
        Some(match self.notice_type {
            Self::FATAL => "fatal",
            Self::URGENT => "urgent",
            Self::SECURITY => "security",
            Self::SUBNET_MANAGEMENT => "subnet management",
            Self::INFO => "info",
            _ => return None,
        })
    }

    /// `"host"`, `"router"`, or `None`.
    pub const fn producer_name(&self) -> Option<&'static str> {
        match self.producer_type {
            Self::PRODUCER_HOST => Some("host"),
            Self::PRODUCER_ROUTER => Some("router"),
            _ => None,
        }
    }

    /// The trap's meaning for the four generic traps mwrouter sends.
    pub const fn trap_name(&self) -> Option<&'static str> {
        if !self.is_generic {
            return None;
        }
        Some(match self.trap_number {
            Self::TRAP_PORT_STATE => "HR down or up",
            Self::TRAP_DROPS => "drops above the threshold",
            Self::TRAP_BAD_MKEY => "bad M_Key",
            Self::TRAP_HR_DOWN => "neighbour HR down",
            Self::TRAP_NO_ADDRESS => "node without an address",
            Self::TRAP_RT_LIMIT => "RT limit reached",
            Self::TRAP_AUTH_REFUSED => "authentication refused",
            Self::TRAP_ADDRESS_ASSIGNED => "address assigned",
            Self::TRAP_DUPLICATE_ADDRESS => "duplicate address",
            _ => return None,
        })
    }

    /// One line saying what the notice reports (`HR 0x0240 (port 1)
    /// down`, `bad M_Key 0x...: Set of 0x0015 from 0x0101`), for logs and
    /// `show management`; the key given is not shown.
    pub fn summary(&self) -> String {
        let state = |s: u8| match s {
            1 => "down".to_string(),
            4 => "up".to_string(),
            s => format!("state {s}"),
        };
        if let Some(d) = self.port_state_details() {
            format!("HR {} (port {}) {}", d.hr, d.port, state(d.state))
        } else if let Some(d) = self.drops_details() {
            format!("port {}: {} drops in one interval", d.port, d.drops)
        } else if let Some(d) = self.bad_mkey_details() {
            format!(
                "bad M_Key: {} {} of attribute {:#06x} from {}",
                d.class, d.method, d.attribute, d.requester
            )
        } else if let Some(d) = self.hr_down_details() {
            format!("neighbour HR {} on port {} down", d.hr, d.port)
        } else if let Some(d) = self.no_address_details() {
            format!("node {:#018x} (port {}) has no address", d.identity, d.port)
        } else if let Some(d) = self.rt_limit_details() {
            match d.which {
                Self::RT_LIMIT_HR => format!(
                    "port {}: the HR holds {} RTs, new ones refused (first from {})",
                    d.port, d.max, d.from
                ),
                _ => format!(
                    "port {}: {} sent {} RTs, its new ones refused",
                    d.port, d.from, d.max
                ),
            }
        } else if let Some(d) = self.auth_refused_details() {
            format!(
                "port {}: control packet with SA {} from {} refused: authentication {}",
                d.port,
                d.from,
                d.native,
                d.why.map_or("(unknown reason)", AuthRefusal::name)
            )
        } else if let Some(d) = self.address_assigned_details() {
            format!(
                "address {} given to node {:#018x}{}",
                d.address,
                d.identity,
                if d.again { " (its address before)" } else { "" }
            )
        } else if let Some(d) = self.duplicate_address_details() {
            format!(
                "duplicate address {}: nodes {:#018x} and {:#018x} answer at it",
                d.address, d.identities[0], d.identities[1]
            )
        } else if self.is_generic {
            format!("trap {}", self.trap_number)
        } else {
            format!("vendor notice {}", self.trap_number)
        }
    }

    /// A generic trap from a router (ProducerType 3; set `producer_type`
    /// to [`Notice::PRODUCER_HOST`] on a host), toggle and count 0.
    fn generic(issuer: Address, notice_type: u8, trap_number: u16) -> Notice {
        Notice {
            is_generic: true,
            notice_type,
            producer_type: Self::PRODUCER_ROUTER,
            trap_number,
            issuer,
            ..Notice::default()
        }
    }

    /// Trap 128 (subnet management): an HR went down or up. DataDetails
    /// 0: port, 1: state, 2-3: HR address.
    pub fn port_state(issuer: Address, port: u8, state: u8, hr: Address) -> Notice {
        let mut n = Self::generic(issuer, Self::SUBNET_MANAGEMENT, Self::TRAP_PORT_STATE);
        n.details[0] = port;
        n.details[1] = state;
        put16(&mut n.details, 2, hr.0);
        n
    }

    /// Trap 128's details, when this is a generic trap 128.
    pub fn port_state_details(&self) -> Option<PortStateChange> {
        (self.is_generic && self.trap_number == Self::TRAP_PORT_STATE).then(|| PortStateChange {
            port: self.details[0],
            state: self.details[1],
            hr: Address(be16(&self.details, 2)),
        })
    }

    /// Trap 129 (info): a port's drops crossed the threshold. DataDetails
    /// 0: port, 1: 0, 2-9: drops in the last interval.
    pub fn drops(issuer: Address, port: u8, drops: u64) -> Notice {
        let mut n = Self::generic(issuer, Self::INFO, Self::TRAP_DROPS);
        n.details[0] = port;
        put64(&mut n.details, 2, drops);
        n
    }

    /// Trap 129's details, when this is a generic trap 129.
    pub fn drops_details(&self) -> Option<PortDrops> {
        (self.is_generic && self.trap_number == Self::TRAP_DROPS).then(|| PortDrops {
            port: self.details[0],
            drops: be64(&self.details, 2),
        })
    }

    /// Trap 256 (security): bad M_Key. DataDetails 0-1: requester, 2:
    /// method, 3: class, 4-5: attribute, 6-9: modifier, 10-17: the key.
    pub fn bad_mkey(
        issuer: Address,
        requester: Address,
        method: Method,
        class: MgmtClass,
        attribute: u16,
        modifier: u32,
        key: u64,
    ) -> Notice {
        let mut n = Self::generic(issuer, Self::SECURITY, Self::TRAP_BAD_MKEY);
        put16(&mut n.details, 0, requester.0);
        n.details[2] = method.0;
        n.details[3] = class.0;
        put16(&mut n.details, 4, attribute);
        put32(&mut n.details, 6, modifier);
        put64(&mut n.details, 10, key);
        n
    }

    /// Trap 256's details, when this is a generic trap 256.
    pub fn bad_mkey_details(&self) -> Option<BadMkey> {
        let d = &self.details;
        (self.is_generic && self.trap_number == Self::TRAP_BAD_MKEY).then(|| BadMkey {
            requester: Address(be16(d, 0)),
            method: Method(d[2]),
            class: MgmtClass(d[3]),
            attribute: be16(d, 4),
            modifier: be32(d, 6),
            key: be64(d, 10),
        })
    }

    /// Trap 1024 (subnet management): a neighbour HR is down. DataDetails
    /// 0-1: the HR, 2: the port that saw it.
    pub fn hr_down(issuer: Address, hr: Address, port: u8) -> Notice {
        let mut n = Self::generic(issuer, Self::SUBNET_MANAGEMENT, Self::TRAP_HR_DOWN);
        put16(&mut n.details, 0, hr.0);
        n.details[2] = port;
        n
    }

    /// Trap 1024's details, when this is a generic trap 1024.
    pub fn hr_down_details(&self) -> Option<HrDown> {
        (self.is_generic && self.trap_number == Self::TRAP_HR_DOWN).then(|| HrDown {
            hr: Address(be16(&self.details, 0)),
            port: self.details[2],
        })
    }

    /// Trap 1026 (subnet management): an RT limit was reached, RTs past
    /// it are refused. DataDetails 0-1: the neighbour refused first, 2: the
    /// port, 3: which limit, 4-7: the limit in RTs.
    pub fn rt_limit(issuer: Address, from: Address, port: u8, which: u8, max: u32) -> Notice {
        let mut n = Self::generic(issuer, Self::SUBNET_MANAGEMENT, Self::TRAP_RT_LIMIT);
        put16(&mut n.details, 0, from.0);
        n.details[2] = port;
        n.details[3] = which;
        n.details[4..8].copy_from_slice(&max.to_be_bytes());
        n
    }

    /// Trap 1026's details, when this is a generic trap 1026.
    pub fn rt_limit_details(&self) -> Option<RtLimit> {
        (self.is_generic && self.trap_number == Self::TRAP_RT_LIMIT).then(|| RtLimit {
            from: Address(be16(&self.details, 0)),
            port: self.details[2],
            which: self.details[3],
            max: be32(&self.details, 4),
        })
    }

    /// Trap 1027 (security): a control packet that arrived on `port` from
    /// `native` with SA `from` failed the SAN's authentication for `why`.
    /// DataDetails 0-1: the SA, 2: the port, 3: the reason (its position in
    /// [`AuthRefusal`]: 0 missing, 1 malformed, 2 unknown key, 3 bad digest,
    /// 4 replay), 4: the native address's length, 5-22: the native address.
    pub fn auth_refused(
        issuer: Address,
        from: Address,
        port: u8,
        why: AuthRefusal,
        native: &NativeAddr,
    ) -> Notice {
        let mut n = Self::generic(issuer, Self::SECURITY, Self::TRAP_AUTH_REFUSED);
        put16(&mut n.details, 0, from.0);
        n.details[2] = port;
        n.details[3] = why as u8;
        put_native(&mut n.details, 4, native);
        n
    }

    /// Trap 1027's details, when this is a generic trap 1027 whose native
    /// address reads.
    pub fn auth_refused_details(&self) -> Option<AuthRefused> {
        if !(self.is_generic && self.trap_number == Self::TRAP_AUTH_REFUSED) {
            return None;
        }
        let d = &self.details;
        Some(AuthRefused {
            from: Address(be16(d, 0)),
            port: d[2],
            why: AuthRefusal::ALL.get(usize::from(d[3])).copied(),
            native: native_at(d, 4, "notice.details.native").ok()?,
        })
    }

    /// Trap 1025 (subnet management): a node without an address, sent to
    /// every member of its SAN from address 0x0000 until a manager gives it
    /// one. DataDetails 0-7: the node's identity, 8: its port.
    pub fn no_address(identity: u64, port: u8) -> Notice {
        let mut n = Self::generic(
            Address::UNSPECIFIED,
            Self::SUBNET_MANAGEMENT,
            Self::TRAP_NO_ADDRESS,
        );
        put64(&mut n.details, 0, identity);
        n.details[8] = port;
        n
    }

    /// Trap 1025's details, when this is a generic trap 1025.
    pub fn no_address_details(&self) -> Option<NoAddress> {
        (self.is_generic && self.trap_number == Self::TRAP_NO_ADDRESS).then(|| NoAddress {
            identity: be64(&self.details, 0),
            port: self.details[8],
        })
    }

    /// Trap 1028 (subnet management), raised by a SAN's master: it gave
    /// node `identity` the address `address` (`again`: the one it had
    /// before). DataDetails 0-7: the identity, 8-9: the address, 10: 1 when
    /// again.
    pub fn address_assigned(
        issuer: Address,
        identity: u64,
        address: Address,
        again: bool,
    ) -> Notice {
        let mut n = Self::generic(issuer, Self::SUBNET_MANAGEMENT, Self::TRAP_ADDRESS_ASSIGNED);
        put64(&mut n.details, 0, identity);
        put16(&mut n.details, 8, address.0);
        n.details[10] = u8::from(again);
        n
    }

    /// Trap 1028's details, when this is a generic trap 1028.
    pub fn address_assigned_details(&self) -> Option<AddressAssigned> {
        (self.is_generic && self.trap_number == Self::TRAP_ADDRESS_ASSIGNED).then(|| {
            AddressAssigned {
                identity: be64(&self.details, 0),
                address: Address(be16(&self.details, 8)),
                again: self.details[10] != 0,
            }
        })
    }

    /// Trap 1029 (urgent), raised by a SAN's master: two nodes answered at
    /// `address`. DataDetails 0-1: the address, 2-9: the identity seen
    /// before, 10-17: the one seen now.
    pub fn duplicate_address(issuer: Address, address: Address, identities: [u64; 2]) -> Notice {
        let mut n = Self::generic(issuer, Self::URGENT, Self::TRAP_DUPLICATE_ADDRESS);
        put16(&mut n.details, 0, address.0);
        put64(&mut n.details, 2, identities[0]);
        put64(&mut n.details, 10, identities[1]);
        n
    }

    /// Trap 1029's details, when this is a generic trap 1029.
    pub fn duplicate_address_details(&self) -> Option<DuplicateAddress> {
        (self.is_generic && self.trap_number == Self::TRAP_DUPLICATE_ADDRESS).then(|| {
            DuplicateAddress {
                address: Address(be16(&self.details, 0)),
                identities: [be64(&self.details, 2), be64(&self.details, 10)],
            }
        })
    }

    /// Reads the attribute area (at least 64 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "notice")?;
        let g = area[field::GENERIC_TYPE];
        let tc = be16(area, field::TOGGLE_COUNT);
        let mut details = [0u8; DETAILS_LEN];
        details.copy_from_slice(&area[field::DETAILS..field::DETAILS + DETAILS_LEN]);
        Ok(Notice {
            is_generic: g & 0x80 != 0,
            notice_type: g & 0x7F,
            producer_type: be24(area, field::PRODUCER_TYPE),
            trap_number: be16(area, field::TRAP_NUMBER),
            issuer: Address(be16(area, field::ISSUER)),
            toggle: tc & 0x8000 != 0,
            count: tc & 0x7FFF,
            details,
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest. Refuses a Type above 7 bits, a ProducerType above 24 bits and
    /// a NoticeCount above 15 bits.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        if self.notice_type > 0x7F {
            return Err(Error::new(
                ErrorKind::BadValue("Type above 7 bits"),
                "notice.type",
                field::GENERIC_TYPE,
            ));
        }
        if self.producer_type > 0x00FF_FFFF {
            return Err(Error::new(
                ErrorKind::BadValue("ProducerType above 24 bits"),
                "notice.producer_type",
                field::PRODUCER_TYPE,
            ));
        }
        if self.count > 0x7FFF {
            return Err(Error::new(
                ErrorKind::BadValue("NoticeCount above 15 bits"),
                "notice.count",
                field::TOGGLE_COUNT,
            ));
        }
        prepare(area, Self::LEN, "notice")?;
        area[field::GENERIC_TYPE] = if self.is_generic { 0x80 } else { 0 } | self.notice_type;
        put24(area, field::PRODUCER_TYPE, self.producer_type);
        put16(area, field::TRAP_NUMBER, self.trap_number);
        put16(area, field::ISSUER, self.issuer.0);
        put16(
            area,
            field::TOGGLE_COUNT,
            if self.toggle { 0x8000 } else { 0 } | self.count,
        );
        area[field::DETAILS..field::DETAILS + DETAILS_LEN].copy_from_slice(&self.details);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_limit_trap_round_trips() {
        let n = Notice::rt_limit(
            Address(0x0115),
            Address(0x0130),
            1,
            Notice::RT_LIMIT_HR,
            65_536,
        );
        let mut area = [0u8; Notice::LEN];
        n.emit(&mut area).unwrap();
        let back = Notice::parse(&area).unwrap();
        assert_eq!(
            back.rt_limit_details(),
            Some(RtLimit {
                from: Address(0x0130),
                port: 1,
                which: Notice::RT_LIMIT_HR,
                max: 65_536
            })
        );
        assert_eq!(back.trap_name(), Some("RT limit reached"));
        assert!(
            back.summary().contains("holds 65536 RTs"),
            "{}",
            back.summary()
        );
    }

    #[test]
    fn auth_refused_trap_round_trips() {
        let native = NativeAddr::mac([2, 0, 0, 0, 0x89, 0x1d]);
        let n = Notice::auth_refused(
            Address(0x0521),
            Address(0x0511),
            0,
            AuthRefusal::UnknownKey,
            &native,
        );
        assert_eq!(n.notice_type, Notice::SECURITY);
        let mut area = [0u8; Notice::LEN];
        n.emit(&mut area).unwrap();
        // DataDetails from byte 10: SA, port, reason 2, length 6, the
        // address and port.
        assert_eq!(
            &area[10..21],
            &[0x05, 0x11, 0, 2, 6, 2, 0, 0, 0, 0x89, 0x1d]
        );
        let back = Notice::parse(&area).unwrap();
        assert_eq!(
            back.auth_refused_details(),
            Some(AuthRefused {
                from: Address(0x0511),
                port: 0,
                why: Some(AuthRefusal::UnknownKey),
                native,
            })
        );
        assert_eq!(back.trap_name(), Some("authentication refused"));
        assert_eq!(
            back.summary(),
            "port 0: control packet with SA 0x0511 from 02:00:00:00:89:1d refused: authentication unknown-key"
        );
        let mut odd = back.clone();
        odd.details[3] = 9;
        assert_eq!(odd.auth_refused_details().unwrap().why, None);
        odd.details[4] = 19;
        assert_eq!(
            odd.auth_refused_details(),
            None,
            "a native address too long"
        );
    }

    #[test]
    fn typed_details_round_trip() {
        let a = Address(0x0111);
        let n = Notice::port_state(a, 2, 1, Address(0x0115));
        assert_eq!(
            n.port_state_details(),
            Some(PortStateChange {
                port: 2,
                state: 1,
                hr: Address(0x0115)
            })
        );
        assert_eq!(n.drops_details(), None);
        assert_eq!(n.notice_type, Notice::SUBNET_MANAGEMENT);
        let n = Notice::drops(a, 3, 1 << 40);
        assert_eq!(n.drops_details().unwrap().drops, 1 << 40);
        assert_eq!(n.notice_type, Notice::INFO);
        let n = Notice::bad_mkey(a, Address(0x0101), Method::SET, MgmtClass::SUBN, 0x15, 2, 9);
        let d = n.bad_mkey_details().unwrap();
        assert_eq!(
            (d.method, d.class, d.attribute, d.modifier, d.key),
            (Method::SET, MgmtClass::SUBN, 0x15, 2, 9)
        );
        assert_eq!(n.notice_type, Notice::SECURITY);
        let n = Notice::hr_down(a, Address(0x0122), 1);
        assert_eq!(
            n.hr_down_details(),
            Some(HrDown {
                hr: Address(0x0122),
                port: 1
            })
        );
        let mut area = [0xAAu8; 64];
        n.emit(&mut area).unwrap();
        assert_eq!(Notice::parse(&area).unwrap(), n);
    }
}
