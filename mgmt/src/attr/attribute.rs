//! Any attribute of docs/management.md, chosen by class and AttributeID:
//! for code that handles MADs of every attribute (decoders, fuzzing).

use crate::attr::{
    AddressRecord, AddressTable, ClassPortInfo, FibBlock, InformInfo, LrtBlock, McGroupRecord,
    McMemberRecord, Neighbour, NodeDescription, NodeInfo, NodeRecord, Notice, PartitionTable,
    PartitionsText, PathRecord, PortCounters, PortCountersExtended, PortInfo, RouteEntry, SmInfo,
    SourceRoute, name,
};
use crate::error::Result;
use crate::wire::MgmtClass;

/// One attribute, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Attribute {
    /// ClassPortInfo (0x0001).
    ClassPortInfo(ClassPortInfo),
    /// Notice (0x0002).
    Notice(Notice),
    /// NodeDescription (0x0010).
    NodeDescription(NodeDescription),
    /// NodeInfo (0x0011).
    NodeInfo(NodeInfo),
    /// PortCounters (0x0012).
    PortCounters(PortCounters),
    /// PortCountersExtended (0x001D).
    PortCountersExtended(PortCountersExtended),
    /// PortInfo (0x0015).
    PortInfo(PortInfo),
    /// PartitionTable (0x0016).
    PartitionTable(PartitionTable),
    /// SMInfo (0x0020).
    SmInfo(SmInfo),
    /// RouteEntry (0xFF10).
    RouteEntry(RouteEntry),
    /// FibBlock (0xFF11).
    FibBlock(FibBlock),
    /// LrtBlock (0xFF12).
    LrtBlock(LrtBlock),
    /// SourceRoute (0x0010, vendor class 0x30).
    SourceRoute(SourceRoute),
    /// Neighbour (0xFF13).
    Neighbour(Neighbour),
    /// NodeRecord (0x0011, SubnAdm).
    NodeRecord(NodeRecord),
    /// PathRecord (0x0035, SubnAdm).
    PathRecord(PathRecord),
    /// McMemberRecord (0x0038, SubnAdm).
    McMemberRecord(McMemberRecord),
    /// McGroupRecord (0xFF20, SubnAdm).
    McGroupRecord(McGroupRecord),
    /// AddressRecord (0xFF21, SubnAdm): a GetTable's template or its
    /// answer's table.
    AddressTable(AddressTable),
    /// InformInfo (0x0003, SubnAdm).
    InformInfo(InformInfo),
    /// PartitionsText (0xFF22, SubnAdm): a GetTable's template or a chunk
    /// of the master's partitions.
    PartitionsText(PartitionsText),
}

impl Attribute {
    /// Parses `area` as attribute `id` of `class`; `Ok(None)` when `class`
    /// has no such attribute ([`name`] is `None`).
    pub fn parse(class: MgmtClass, id: u16, area: &[u8]) -> Result<Option<Attribute>> {
        if name(class, id).is_none() {
            return Ok(None);
        }
        if class.0 == MgmtClass::SUBN_ADM.0 {
            match id {
                NodeRecord::ID => return Ok(Some(Attribute::NodeRecord(NodeRecord::parse(area)?))),
                PathRecord::ID => return Ok(Some(Attribute::PathRecord(PathRecord::parse(area)?))),
                McMemberRecord::ID => {
                    return Ok(Some(Attribute::McMemberRecord(McMemberRecord::parse(
                        area,
                    )?)));
                }
                McGroupRecord::ID => {
                    return Ok(Some(Attribute::McGroupRecord(McGroupRecord::parse(area)?)));
                }
                AddressRecord::ID => {
                    return Ok(Some(Attribute::AddressTable(AddressTable::parse(area)?)));
                }
                InformInfo::ID => {
                    return Ok(Some(Attribute::InformInfo(InformInfo::parse(area)?)));
                }
                PartitionsText::ID => {
                    return Ok(Some(Attribute::PartitionsText(PartitionsText::parse(
                        area,
                    )?)));
                }
                _ => {}
            }
        }
        if class.0 == MgmtClass::PERF.0 && id == PortCountersExtended::ID {
            return Ok(Some(Attribute::PortCountersExtended(
                PortCountersExtended::parse(area)?,
            )));
        }
        if class.0 == MgmtClass::VENDOR_TRACE.0 && id == SourceRoute::ID {
            return Ok(Some(Attribute::SourceRoute(SourceRoute::parse(area)?)));
        }
        Ok(Some(match id {
            ClassPortInfo::ID => Attribute::ClassPortInfo(ClassPortInfo::parse(area)?),
            Notice::ID => Attribute::Notice(Notice::parse(area)?),
            NodeDescription::ID => Attribute::NodeDescription(NodeDescription::parse(area)?),
            NodeInfo::ID => Attribute::NodeInfo(NodeInfo::parse(area)?),
            PortCounters::ID => Attribute::PortCounters(PortCounters::parse(area)?),
            PortInfo::ID => Attribute::PortInfo(PortInfo::parse(area)?),
            PartitionTable::ID => Attribute::PartitionTable(PartitionTable::parse(area)?),
            SmInfo::ID => Attribute::SmInfo(SmInfo::parse(area)?),
            RouteEntry::ID => Attribute::RouteEntry(RouteEntry::parse(area)?),
            FibBlock::ID => Attribute::FibBlock(FibBlock::parse(area)?),
            LrtBlock::ID => Attribute::LrtBlock(LrtBlock::parse(area)?),
            Neighbour::ID => Attribute::Neighbour(Neighbour::parse(area)?),
            _ => return Ok(None),
        }))
    }

    /// The AttributeID.
    pub const fn id(&self) -> u16 {
        match self {
            Attribute::ClassPortInfo(_) => ClassPortInfo::ID,
            Attribute::Notice(_) => Notice::ID,
            Attribute::NodeDescription(_) => NodeDescription::ID,
            Attribute::NodeInfo(_) => NodeInfo::ID,
            Attribute::PortCounters(_) => PortCounters::ID,
            Attribute::PortCountersExtended(_) => PortCountersExtended::ID,
            Attribute::PortInfo(_) => PortInfo::ID,
            Attribute::PartitionTable(_) => PartitionTable::ID,
            Attribute::SmInfo(_) => SmInfo::ID,
            Attribute::RouteEntry(_) => RouteEntry::ID,
            Attribute::FibBlock(_) => FibBlock::ID,
            Attribute::LrtBlock(_) => LrtBlock::ID,
            Attribute::SourceRoute(_) => SourceRoute::ID,
            Attribute::Neighbour(_) => Neighbour::ID,
            Attribute::NodeRecord(_) => NodeRecord::ID,
            Attribute::PathRecord(_) => PathRecord::ID,
            Attribute::McMemberRecord(_) => McMemberRecord::ID,
            Attribute::McGroupRecord(_) => McGroupRecord::ID,
            Attribute::AddressTable(_) => AddressRecord::ID,
            Attribute::InformInfo(_) => InformInfo::ID,
            Attribute::PartitionsText(_) => PartitionsText::ID,
        }
    }

    /// Writes the attribute into `area`.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        match self {
            Attribute::ClassPortInfo(a) => a.emit(area),
            Attribute::Notice(a) => a.emit(area),
            Attribute::NodeDescription(a) => a.emit(area),
            Attribute::NodeInfo(a) => a.emit(area),
            Attribute::PortCounters(a) => a.emit(area),
            Attribute::PortCountersExtended(a) => a.emit(area),
            Attribute::PortInfo(a) => a.emit(area),
            Attribute::PartitionTable(a) => a.emit(area),
            Attribute::SmInfo(a) => a.emit(area),
            Attribute::RouteEntry(a) => a.emit(area),
            Attribute::FibBlock(a) => a.emit(area),
            Attribute::LrtBlock(a) => a.emit(area),
            Attribute::SourceRoute(a) => a.emit(area),
            Attribute::Neighbour(a) => a.emit(area),
            Attribute::NodeRecord(a) => a.emit(area),
            Attribute::PathRecord(a) => a.emit(area),
            Attribute::McMemberRecord(a) => a.emit(area),
            Attribute::McGroupRecord(a) => a.emit(area),
            Attribute::AddressTable(a) => a.emit(area),
            Attribute::InformInfo(a) => a.emit(area),
            Attribute::PartitionsText(a) => a.emit(area),
        }
    }
}
