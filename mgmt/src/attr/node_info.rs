//! NodeInfo (0x0011, Subn): what a node is and which port the request came
//! in by (docs/management.md "NodeInfo").

use rrp::Address;

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};
use rrp::wire::bytes::{be16, be24, be32, be64, put16, put24, put32, put64};

/// Byte offsets of NodeInfo.
pub mod field {
    /// BaseVersion.
    pub const BASE_VERSION: usize = 0;
    /// ClassVersion.
    pub const CLASS_VERSION: usize = 1;
    /// NodeType.
    pub const NODE_TYPE: usize = 2;
    /// NumPorts.
    pub const NUM_PORTS: usize = 3;
    /// SystemImageIdentity (64 bits).
    pub const SYSTEM_IMAGE_IDENTITY: usize = 4;
    /// NodeIdentity (64 bits).
    pub const NODE_IDENTITY: usize = 12;
    /// PortIdentity (64 bits).
    pub const PORT_IDENTITY: usize = 20;
    /// PartitionCap (16 bits).
    pub const PARTITION_CAP: usize = 28;
    /// ImplementationLevel (16 bits).
    pub const IMPLEMENTATION_LEVEL: usize = 30;
    /// Revision (32 bits).
    pub const REVISION: usize = 32;
    /// LocalPortNum.
    pub const LOCAL_PORT_NUM: usize = 36;
    /// VendorID (24 bits).
    pub const VENDOR_ID: usize = 37;
    /// LocalPortAddress (16 bits).
    pub const LOCAL_PORT_ADDRESS: usize = 40;
}

/// NodeInfo.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeInfo {
    /// BaseVersion (1).
    pub base_version: u8,
    /// ClassVersion (1).
    pub class_version: u8,
    /// NodeType: [`NodeInfo::HOST`] or [`NodeInfo::ROUTER`].
    pub node_type: u8,
    /// NumPorts: HRs (1 for a host).
    pub num_ports: u8,
    /// SystemImageIdentity (= NodeIdentity).
    pub system_image_identity: u64,
    /// NodeIdentity: 64 bits that survive restarts.
    pub node_identity: u64,
    /// PortIdentity: NodeIdentity + LocalPortNum + 1.
    pub port_identity: u64,
    /// PartitionCap (0).
    pub partition_cap: u16,
    /// ImplementationLevel: 1-4 for levels A-D.
    pub implementation_level: u16,
    /// Revision: major << 16 | minor << 8 | patch.
    pub revision: u32,
    /// LocalPortNum: the port the request arrived on.
    pub local_port_num: u8,
    /// VendorID (24 bits; 0).
    pub vendor_id: u32,
    /// LocalPortAddress: that port's address.
    pub local_port_address: Address,
}

impl NodeInfo {
    /// AttributeID.
    pub const ID: u16 = 0x0011;
    /// Bytes of the layout (42 used, 22 reserved).
    pub const LEN: usize = 64;
    /// NodeType of a host.
    pub const HOST: u8 = 1;
    /// NodeType of a router.
    pub const ROUTER: u8 = 3;

    /// `"host"`, `"router"`, or `None` for another NodeType.
    pub const fn node_type_name(&self) -> Option<&'static str> {
        match self.node_type {
            Self::HOST => Some("host"),
            Self::ROUTER => Some("router"),
            _ => None,
        }
    }

    /// Reads the attribute area (at least 64 bytes; reserved bytes ignored).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "node_info")?;
        Ok(NodeInfo {
            base_version: area[field::BASE_VERSION],
            class_version: area[field::CLASS_VERSION],
            node_type: area[field::NODE_TYPE],
            num_ports: area[field::NUM_PORTS],
            system_image_identity: be64(area, field::SYSTEM_IMAGE_IDENTITY),
            node_identity: be64(area, field::NODE_IDENTITY),
            port_identity: be64(area, field::PORT_IDENTITY),
            partition_cap: be16(area, field::PARTITION_CAP),
            implementation_level: be16(area, field::IMPLEMENTATION_LEVEL),
            revision: be32(area, field::REVISION),
            local_port_num: area[field::LOCAL_PORT_NUM],
            vendor_id: be24(area, field::VENDOR_ID),
            local_port_address: Address(be16(area, field::LOCAL_PORT_ADDRESS)),
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest; a VendorID above 24 bits is refused.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        if self.vendor_id > 0x00FF_FFFF {
            return Err(Error::new(
                ErrorKind::BadValue("VendorID above 24 bits"),
                "node_info.vendor_id",
                field::VENDOR_ID,
            ));
        }
        prepare(area, Self::LEN, "node_info")?;
        area[field::BASE_VERSION] = self.base_version;
        area[field::CLASS_VERSION] = self.class_version;
        area[field::NODE_TYPE] = self.node_type;
        area[field::NUM_PORTS] = self.num_ports;
        put64(
            area,
            field::SYSTEM_IMAGE_IDENTITY,
            self.system_image_identity,
        );
        put64(area, field::NODE_IDENTITY, self.node_identity);
        put64(area, field::PORT_IDENTITY, self.port_identity);
        put16(area, field::PARTITION_CAP, self.partition_cap);
        put16(area, field::IMPLEMENTATION_LEVEL, self.implementation_level);
        put32(area, field::REVISION, self.revision);
        area[field::LOCAL_PORT_NUM] = self.local_port_num;
        put24(area, field::VENDOR_ID, self.vendor_id);
        put16(area, field::LOCAL_PORT_ADDRESS, self.local_port_address.0);
        Ok(())
    }
}
