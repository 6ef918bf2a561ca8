//! The attribute layouts of docs/management.md "Attributes": one file and
//! one owned struct per attribute, each with its `ID`, `parse` (from the
//! attribute area, bytes 64 on of the MAD) and `emit` (which zeroes the
//! reserved bytes). Integers are big-endian. Errors name the attribute's
//! field and count from the attribute area's first byte.

pub mod address_record;
pub mod attribute;
pub mod class_port_info;
pub mod fib_block;
pub mod inform_info;
pub mod lrt_block;
pub mod mc_group_record;
pub mod mc_member_record;
pub mod neighbour;
pub mod node_description;
pub mod node_info;
pub mod node_record;
pub mod notice;
pub mod partition_table;
pub mod partitions_text;
pub mod path_record;
pub mod port_counters;
pub mod port_counters_extended;
pub mod port_info;
pub mod route_entry;
pub mod sm_info;
pub mod source_route;

pub use address_record::{AddressRecord, AddressTable};
pub use attribute::Attribute;
pub use class_port_info::ClassPortInfo;
pub use fib_block::{FibBlock, FibBlockEntry};
pub use inform_info::InformInfo;
pub use lrt_block::{LrtBlock, LrtBlockEntry};
pub use mc_group_record::McGroupRecord;
pub use mc_member_record::McMemberRecord;
pub use neighbour::Neighbour;
pub use node_description::NodeDescription;
pub use node_info::NodeInfo;
pub use node_record::NodeRecord;
pub use notice::{
    AddressAssigned, BadMkey, DuplicateAddress, HrDown, Notice, PortDrops, PortStateChange, RtLimit,
};
pub use partition_table::PartitionTable;
pub use partitions_text::PartitionsText;
pub use path_record::PathRecord;
pub use port_counters::PortCounters;
pub use port_counters_extended::PortCountersExtended;
pub use port_info::PortInfo;
pub use route_entry::RouteEntry;
pub use sm_info::SmInfo;
pub use source_route::SourceRoute;

use rrp::NativeAddr;
use rrp::native::MAX_NATIVE_LEN;

use crate::error::{Error, ErrorKind, Result};
use crate::wire::MgmtClass;

/// The name of attribute `id` in `class` (docs/management.md's table):
/// ClassPortInfo in every class, PortCounters and PortCountersExtended in
/// Perf, the others in Subn
/// and SubnDR; `None` for anything else.
pub const fn name(class: MgmtClass, id: u16) -> Option<&'static str> {
    if id == ClassPortInfo::ID {
        return Some("ClassPortInfo");
    }
    if class.0 == MgmtClass::SUBN_ADM.0 {
        return match id {
            NodeRecord::ID => Some("NodeRecord"),
            PathRecord::ID => Some("PathRecord"),
            McMemberRecord::ID => Some("McMemberRecord"),
            McGroupRecord::ID => Some("McGroupRecord"),
            AddressRecord::ID => Some("AddressRecord"),
            PartitionsText::ID => Some("PartitionsText"),
            InformInfo::ID => Some("InformInfo"),
            _ => None,
        };
    }
    if class.0 == MgmtClass::VENDOR_TRACE.0 {
        return if id == SourceRoute::ID {
            Some("SourceRoute")
        } else {
            None
        };
    }
    if class.0 == MgmtClass::PERF.0 {
        return match id {
            PortCounters::ID => Some("PortCounters"),
            PortCountersExtended::ID => Some("PortCountersExtended"),
            _ => None,
        };
    }
    if !class.is_smp() {
        return None;
    }
    Some(match id {
        Notice::ID => "Notice",
        NodeDescription::ID => "NodeDescription",
        NodeInfo::ID => "NodeInfo",
        PortInfo::ID => "PortInfo",
        PartitionTable::ID => "PartitionTable",
        SmInfo::ID => "SMInfo",
        RouteEntry::ID => "RouteEntry",
        FibBlock::ID => "FibBlock",
        LrtBlock::ID => "LrtBlock",
        Neighbour::ID => "Neighbour",
        _ => return None,
    })
}

/// Checks that `area` holds `len` bytes for parsing.
pub(crate) fn need(area: &[u8], len: usize, field: &'static str) -> Result<()> {
    if area.len() < len {
        return Err(Error::truncated(field, 0, len, area.len()));
    }
    Ok(())
}

/// Checks that `area` holds `len` bytes for emitting, and zeroes it.
pub(crate) fn prepare(area: &mut [u8], len: usize, field: &'static str) -> Result<()> {
    need(area, len, field)?;
    area.fill(0);
    Ok(())
}

/// The native address whose length byte is at `at`, its bytes after it (in
/// an 18-byte slot).
pub(crate) fn native_at(area: &[u8], at: usize, field: &'static str) -> Result<NativeAddr> {
    let n = area[at] as usize;
    if n > MAX_NATIVE_LEN {
        return Err(Error::new(ErrorKind::BadNative, field, at));
    }
    NativeAddr::from_bytes(&area[at + 1..at + 1 + n]).ok_or(Error::new(
        ErrorKind::BadNative,
        field,
        at,
    ))
}

/// Writes a native address as [`native_at`] reads it.
pub(crate) fn put_native(area: &mut [u8], at: usize, n: &NativeAddr) {
    area[at] = n.len() as u8;
    area[at + 1..at + 1 + n.len()].copy_from_slice(n.as_bytes());
}

/// `port << 16 | low`, the modifier of the per-port attributes.
pub(crate) const fn join_modifier(port: u8, low: u16) -> u32 {
    ((port as u32) << 16) | low as u32
}

/// The port and low half of a modifier; `None` when the port does not fit 8 bits.
pub(crate) const fn split_modifier(m: u32) -> Option<(u8, u16)> {
    if m >> 16 > u8::MAX as u32 {
        None
    } else {
        Some(((m >> 16) as u8, m as u16))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_class() {
        assert_eq!(name(MgmtClass::SUBN, 0x0011), Some("NodeInfo"));
        assert_eq!(name(MgmtClass::SUBN_DR, 0x0015), Some("PortInfo"));
        assert_eq!(name(MgmtClass::PERF, 0x0012), Some("PortCounters"));
        assert_eq!(name(MgmtClass::PERF, 0x001D), Some("PortCountersExtended"));
        assert_eq!(name(MgmtClass::SUBN, 0x001D), None);
        assert_eq!(name(MgmtClass::PERF, 0x0011), None);
        assert_eq!(name(MgmtClass::SUBN, 0x0012), None);
        assert_eq!(name(MgmtClass::VENDOR_TRACE, 1), Some("ClassPortInfo"));
        assert_eq!(name(MgmtClass::SUBN_ADM, 0x0011), Some("NodeRecord"));
        assert_eq!(name(MgmtClass::SUBN_ADM, 0x0035), Some("PathRecord"));
        assert_eq!(name(MgmtClass::SUBN_ADM, 0x0015), None);
        assert_eq!(name(MgmtClass::SUBN_ADM, 0xFF21), Some("AddressRecord"));
        assert_eq!(name(MgmtClass::SUBN_ADM, 0xFF22), Some("PartitionsText"));
        assert_eq!(name(MgmtClass::SUBN, 0xFF22), None);
        assert_eq!(name(MgmtClass::SUBN, 0xFF21), None);
        assert_eq!(name(MgmtClass::SUBN_ADM, 0x0003), Some("InformInfo"));
        assert_eq!(name(MgmtClass::SUBN, 0x0003), None);
        assert_eq!(name(MgmtClass::SUBN, 0xFF12), Some("LrtBlock"));
        assert_eq!(name(MgmtClass::VENDOR_TRACE, 0x0010), Some("SourceRoute"));
        assert_eq!(name(MgmtClass::SUBN, 0x0010), Some("NodeDescription"));
        assert_eq!(name(MgmtClass::SUBN_DR, 0x0016), Some("PartitionTable"));
        assert_eq!(name(MgmtClass::PERF, 0x0016), None);
    }
}
