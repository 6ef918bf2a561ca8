//! ClassPortInfo (0x0001, every class): what an agent of a class supports
//! (docs/management.md "ClassPortInfo").

use rrp::Address;

use crate::attr::{need, prepare};
use crate::error::Result;
use rrp::wire::bytes::{be16, be32, put16, put32};

/// Byte offsets of ClassPortInfo.
pub mod field {
    /// BaseVersion.
    pub const BASE_VERSION: usize = 0;
    /// ClassVersion.
    pub const CLASS_VERSION: usize = 1;
    /// CapabilityMask (16 bits).
    pub const CAPABILITY_MASK: usize = 2;
    /// RespTimeValue (32 bits).
    pub const RESP_TIME_VALUE: usize = 4;
    /// TrapAddress (16 bits).
    pub const TRAP_ADDRESS: usize = 8;
}

/// ClassPortInfo.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ClassPortInfo {
    /// BaseVersion (1).
    pub base_version: u8,
    /// ClassVersion (1).
    pub class_version: u8,
    /// CapabilityMask: [`ClassPortInfo::CAP_TRAPS`], [`ClassPortInfo::CAP_DIRECTED_ROUTES`],
    /// [`ClassPortInfo::CAP_MKEY`].
    pub capability_mask: u16,
    /// RespTimeValue: the agent's expected maximum answer time in ms.
    pub resp_time_value: u32,
    /// TrapAddress: where this agent sends traps (0: none).
    pub trap_address: Address,
}

impl ClassPortInfo {
    /// AttributeID.
    pub const ID: u16 = 0x0001;
    /// Bytes of the layout (10 used, 54 reserved).
    pub const LEN: usize = 64;
    /// CapabilityMask bit 0: the agent sends traps.
    pub const CAP_TRAPS: u16 = 1 << 0;
    /// CapabilityMask bit 1: the agent answers and relays directed routes.
    pub const CAP_DIRECTED_ROUTES: u16 = 1 << 1;
    /// CapabilityMask bit 2: the agent checks M_Keys.
    pub const CAP_MKEY: u16 = 1 << 2;

    /// Reads the attribute area (at least 64 bytes; reserved bytes ignored).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "class_port_info")?;
        Ok(ClassPortInfo {
            base_version: area[field::BASE_VERSION],
            class_version: area[field::CLASS_VERSION],
            capability_mask: be16(area, field::CAPABILITY_MASK),
            resp_time_value: be32(area, field::RESP_TIME_VALUE),
            trap_address: Address(be16(area, field::TRAP_ADDRESS)),
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the rest.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "class_port_info")?;
        area[field::BASE_VERSION] = self.base_version;
        area[field::CLASS_VERSION] = self.class_version;
        put16(area, field::CAPABILITY_MASK, self.capability_mask);
        put32(area, field::RESP_TIME_VALUE, self.resp_time_value);
        put16(area, field::TRAP_ADDRESS, self.trap_address.0);
        Ok(())
    }
}
