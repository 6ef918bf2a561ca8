//! PortInfo (0x0015, Subn): one port (HR) of a box, and the box's M_Key
//! (docs/management.md "PortInfo").

use rrp::{Address, LinkKind, NativeAddr};

use crate::attr::{native_at, need, prepare, put_native};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be16, be32, be64, put16, put32, put64};

/// Byte offsets of PortInfo.
pub mod field {
    /// M_Key (64 bits).
    pub const MKEY: usize = 0;
    /// Address.
    pub const ADDRESS: usize = 8;
    /// SAN-ID.
    pub const SAN_ID: usize = 10;
    /// ManagerAddress.
    pub const MANAGER_ADDRESS: usize = 12;
    /// M_KeyLeasePeriod.
    pub const MKEY_LEASE_PERIOD: usize = 14;
    /// MTU (32 bits).
    pub const MTU: usize = 16;
    /// Cost.
    pub const COST: usize = 20;
    /// LocalPortNum.
    pub const LOCAL_PORT_NUM: usize = 22;
    /// PortState.
    pub const PORT_STATE: usize = 23;
    /// M_KeyProtectBits.
    pub const MKEY_PROTECT_BITS: usize = 24;
    /// LinkKind.
    pub const LINK_KIND: usize = 25;
    /// M_KeyViolations.
    pub const MKEY_VIOLATIONS: usize = 26;
    /// LRT entries.
    pub const LRT_ENTRIES: usize = 28;
    /// Buddies.
    pub const BUDDIES: usize = 30;
    /// Native address length; the address follows (18 bytes).
    pub const NATIVE_LEN: usize = 32;
}

/// PortInfo.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PortInfo {
    /// M_Key (the box's); reads 0 at protect bits 1 and up unless the
    /// request had the key.
    pub mkey: u64,
    /// The HR's address.
    pub address: Address,
    /// The SAN's SAN-ID.
    pub san_id: Address,
    /// ManagerAddress: where traps go (0: none).
    pub manager_address: Address,
    /// M_KeyLeasePeriod in seconds, 0: never.
    pub mkey_lease_period: u16,
    /// MTU in bytes.
    pub mtu: u32,
    /// Cost.
    pub cost: u16,
    /// LocalPortNum.
    pub local_port_num: u8,
    /// PortState: [`PortInfo::DOWN`], [`PortInfo::ACTIVE`].
    pub port_state: u8,
    /// M_KeyProtectBits, 0..=3.
    pub mkey_protect_bits: u8,
    /// LinkKind: [`PortInfo::LINK_MEMORY`], [`PortInfo::LINK_UDP`],
    /// [`PortInfo::LINK_ETHERNET`].
    pub link_kind: u8,
    /// M_KeyViolations.
    pub mkey_violations: u16,
    /// Entries of the HR's LRT.
    pub lrt_entries: u16,
    /// Buddies (routers on the SAN).
    pub buddies: u16,
    /// The HR's native address on its SAN.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_util::native"))]
    pub native: NativeAddr,
}

impl PortInfo {
    /// AttributeID.
    pub const ID: u16 = 0x0015;
    /// Bytes of the layout (51 used, 13 reserved).
    pub const LEN: usize = 64;
    /// PortState: down.
    pub const DOWN: u8 = 1;
    /// PortState: active.
    pub const ACTIVE: u8 = 4;
    /// LinkKind: in-memory.
    pub const LINK_MEMORY: u8 = 0;
    /// LinkKind: UDP.
    pub const LINK_UDP: u8 = 1;
    /// LinkKind: Ethernet.
    pub const LINK_ETHERNET: u8 = 2;

    /// The LinkKind value of `k`.
    pub const fn link_kind_of(k: LinkKind) -> u8 {
        match k {
            LinkKind::Memory => Self::LINK_MEMORY,
            LinkKind::Udp => Self::LINK_UDP,
            LinkKind::Ethernet => Self::LINK_ETHERNET,
        }
    }

    /// `link_kind` as an `rrp::LinkKind`, when it is one.
    pub const fn link(&self) -> Option<LinkKind> {
        match self.link_kind {
            Self::LINK_MEMORY => Some(LinkKind::Memory),
            Self::LINK_UDP => Some(LinkKind::Udp),
            Self::LINK_ETHERNET => Some(LinkKind::Ethernet),
            _ => None,
        }
    }

    /// `"down"`, `"active"`, or `None`.
    pub const fn port_state_name(&self) -> Option<&'static str> {
        match self.port_state {
            Self::DOWN => Some("down"),
            Self::ACTIVE => Some("active"),
            _ => None,
        }
    }

    /// Reads the attribute area (at least 64 bytes; reserved bytes and
    /// bits 2-7 of M_KeyProtectBits ignored). A native address length above
    /// 18 is [`ErrorKind::BadNative`].
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "port_info")?;
        Ok(PortInfo {
            mkey: be64(area, field::MKEY),
            address: Address(be16(area, field::ADDRESS)),
            san_id: Address(be16(area, field::SAN_ID)),
            manager_address: Address(be16(area, field::MANAGER_ADDRESS)),
            mkey_lease_period: be16(area, field::MKEY_LEASE_PERIOD),
            mtu: be32(area, field::MTU),
            cost: be16(area, field::COST),
            local_port_num: area[field::LOCAL_PORT_NUM],
            port_state: area[field::PORT_STATE],
            mkey_protect_bits: area[field::MKEY_PROTECT_BITS] & 0x03,
            link_kind: area[field::LINK_KIND],
            mkey_violations: be16(area, field::MKEY_VIOLATIONS),
            lrt_entries: be16(area, field::LRT_ENTRIES),
            buddies: be16(area, field::BUDDIES),
            native: native_at(area, field::NATIVE_LEN, "port_info.native_len")?,
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest; M_KeyProtectBits above 3 is refused.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        if self.mkey_protect_bits > 3 {
            return Err(Error::new(
                ErrorKind::BadValue("M_KeyProtectBits above 3"),
                "port_info.mkey_protect_bits",
                field::MKEY_PROTECT_BITS,
            ));
        }
        prepare(area, Self::LEN, "port_info")?;
        put64(area, field::MKEY, self.mkey);
        put16(area, field::ADDRESS, self.address.0);
        put16(area, field::SAN_ID, self.san_id.0);
        put16(area, field::MANAGER_ADDRESS, self.manager_address.0);
        put16(area, field::MKEY_LEASE_PERIOD, self.mkey_lease_period);
        put32(area, field::MTU, self.mtu);
        put16(area, field::COST, self.cost);
        area[field::LOCAL_PORT_NUM] = self.local_port_num;
        area[field::PORT_STATE] = self.port_state;
        area[field::MKEY_PROTECT_BITS] = self.mkey_protect_bits;
        area[field::LINK_KIND] = self.link_kind;
        put16(area, field::MKEY_VIOLATIONS, self.mkey_violations);
        put16(area, field::LRT_ENTRIES, self.lrt_entries);
        put16(area, field::BUDDIES, self.buddies);
        put_native(area, field::NATIVE_LEN, &self.native);
        Ok(())
    }
}
