//! SMInfo (0x0020, Subn): the SAN manager's state, read by a Get and sent
//! with the controls of a Set (docs/management.md "SMInfo", docs/manager.md).

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be32, be64, put32, put64};

/// Byte offsets of SMInfo.
pub mod field {
    /// Identity (64 bits).
    pub const IDENTITY: usize = 0;
    /// SM_Key (64 bits).
    pub const SM_KEY: usize = 8;
    /// ActCount (32 bits).
    pub const ACT_COUNT: usize = 16;
    /// Priority (bits 4-7) and SMState (bits 0-3).
    pub const PRIORITY_STATE: usize = 20;
}

/// SMInfo.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SmInfo {
    /// Identity.
    pub identity: u64,
    /// SM_Key: in a request, the key the requester gives; in an answer,
    /// the manager's key if the requester gave it, else 0.
    pub sm_key: u64,
    /// ActCount.
    pub act_count: u32,
    /// Priority, 0..=15.
    pub priority: u8,
    /// SMState, 0..=15 (0: not active).
    pub sm_state: u8,
}

impl SmInfo {
    /// AttributeID.
    pub const ID: u16 = 0x0020;
    /// Bytes of the layout (21 used, 43 reserved).
    pub const LEN: usize = 64;

    /// Reads the attribute area (at least 64 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "sm_info")?;
        let ps = area[field::PRIORITY_STATE];
        Ok(SmInfo {
            identity: be64(area, field::IDENTITY),
            sm_key: be64(area, field::SM_KEY),
            act_count: be32(area, field::ACT_COUNT),
            priority: ps >> 4,
            sm_state: ps & 0x0F,
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest; Priority or SMState above 15 is refused.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        if self.priority > 15 || self.sm_state > 15 {
            return Err(Error::new(
                ErrorKind::BadValue("Priority or SMState above 4 bits"),
                "sm_info.priority_state",
                field::PRIORITY_STATE,
            ));
        }
        prepare(area, Self::LEN, "sm_info")?;
        put64(area, field::IDENTITY, self.identity);
        put64(area, field::SM_KEY, self.sm_key);
        put32(area, field::ACT_COUNT, self.act_count);
        area[field::PRIORITY_STATE] = (self.priority << 4) | self.sm_state;
        Ok(())
    }
}
