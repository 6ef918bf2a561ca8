//! Management classes, methods and status values (docs/management.md
//! "Classes and methods", "Status"; InfiniBand Tables 27-1, 27-2).

use core::fmt;

/// The MgmtClass byte of a MAD (byte 1). In JSON a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct MgmtClass(pub u8);

impl MgmtClass {
    /// Subn: subnet management by address (L3).
    pub const SUBN: MgmtClass = MgmtClass(0x01);
    /// Subn directed route: relayed hop by hop along a path.
    pub const SUBN_DR: MgmtClass = MgmtClass(0x81);
    /// SubnAdm: answered by the SAN manager.
    pub const SUBN_ADM: MgmtClass = MgmtClass(0x03);
    /// Perf: performance counters.
    pub const PERF: MgmtClass = MgmtClass(0x04);
    /// The vendor class of the path tracer.
    pub const VENDOR_TRACE: MgmtClass = MgmtClass(0x30);

    /// `"Subn"`, `"SubnDR"`, `"SubnAdm"`, `"Perf"`, `"VendorTrace"`; `None`
    /// for a class docs/management.md does not assign.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x01 => "Subn",
            0x81 => "SubnDR",
            0x03 => "SubnAdm",
            0x04 => "Perf",
            0x30 => "VendorTrace",
            _ => return None,
        })
    }

    /// A subnet management class (0x01 or 0x81): 64-byte attribute area.
    pub const fn is_smp(self) -> bool {
        matches!(self.0, 0x01 | 0x81)
    }

    /// Whether MADs of this class are directed-route (0x81).
    pub const fn is_directed_route(self) -> bool {
        self.0 == 0x81
    }

    /// Bytes of the attribute area from byte 64: 64 for Subn and SubnDR,
    /// 192 (bytes 64-255) for every other class.
    pub const fn attribute_len(self) -> usize {
        if self.is_smp() { 64 } else { 192 }
    }
}

impl fmt::Display for MgmtClass {
    /// The name, or `0xNN` for an unassigned class.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "0x{:02x}", self.0),
        }
    }
}

/// The method byte of a MAD (byte 3), the R bit (bit 7) included: GetResp
/// is 0x81 = R | Get, as InfiniBand numbers them. In JSON a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct Method(pub u8);

impl Method {
    /// Get: a request, answered by GetResp.
    pub const GET: Method = Method(0x01);
    /// Set: a request, answered by GetResp with the attribute as it is after.
    pub const SET: Method = Method(0x02);
    /// Send: a message, not answered.
    pub const SEND: Method = Method(0x03);
    /// Trap: from an agent to the manager, repeated until TrapRepress.
    pub const TRAP: Method = Method(0x05);
    /// Report: a manager forwarding a notice, answered by ReportResp.
    pub const REPORT: Method = Method(0x06);
    /// TrapRepress: the manager asks to stop repeating a trap (same TID).
    pub const TRAP_REPRESS: Method = Method(0x07);
    /// GetTable (SubnAdm): every record that matches, answered by
    /// GetTableResp with a table of them (docs/spec-notes.md 63).
    pub const GET_TABLE: Method = Method(0x12);
    /// Delete (SubnAdm): removes a record, answered by DeleteResp.
    pub const DELETE: Method = Method(0x15);
    /// GetResp: the answer to Get and Set.
    pub const GET_RESP: Method = Method(0x81);
    /// DeleteResp: the answer to Delete, with the record as it was.
    pub const DELETE_RESP: Method = Method(0x95);
    /// GetTableResp: the answer to GetTable, a table of records.
    pub const GET_TABLE_RESP: Method = Method(0x92);
    /// ReportResp: the answer to Report.
    pub const REPORT_RESP: Method = Method(0x86);

    /// The R bit of the method byte.
    pub const RESPONSE_BIT: u8 = 0x80;

    /// `"Get"`, `"Set"`, `"Send"`, `"Trap"`, `"Report"`, `"TrapRepress"`,
    /// `"GetTable"`, `"Delete"`, and their answers' names; `None` for other
    /// values.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x01 => "Get",
            0x02 => "Set",
            0x03 => "Send",
            0x05 => "Trap",
            0x06 => "Report",
            0x07 => "TrapRepress",
            0x12 => "GetTable",
            0x15 => "Delete",
            0x81 => "GetResp",
            0x86 => "ReportResp",
            0x92 => "GetTableResp",
            0x95 => "DeleteResp",
            _ => return None,
        })
    }

    /// A request that is answered: Get, Set, Report, GetTable, Delete.
    pub const fn is_request(self) -> bool {
        matches!(self.0, 0x01 | 0x02 | 0x06 | 0x12 | 0x15)
    }

    /// The R bit is set: GetResp, ReportResp (or an unassigned response).
    pub const fn is_response(self) -> bool {
        self.0 & Method::RESPONSE_BIT != 0
    }

    /// The method that answers this request: GetResp for Get and Set,
    /// ReportResp for Report, GetTableResp for GetTable, DeleteResp for
    /// Delete; `None` for methods that are not answered.
    pub const fn response(self) -> Option<Method> {
        match self.0 {
            0x01 | 0x02 => Some(Method::GET_RESP),
            0x06 => Some(Method::REPORT_RESP),
            0x12 => Some(Method::GET_TABLE_RESP),
            0x15 => Some(Method::DELETE_RESP),
            _ => None,
        }
    }
}

impl fmt::Display for Method {
    /// The name, or `0xNN` for an unassigned method.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "0x{:02x}", self.0),
        }
    }
}

/// The Status field of a MAD (bytes 4-5; for class 0x81 bits 0-14, bit 15
/// being the direction). The low byte is common to all classes, the high
/// byte class-specific. In JSON a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct Status(pub u16);

impl Status {
    /// Success.
    pub const OK: Status = Status(0x0000);
    /// Busy: try again later.
    pub const BUSY: Status = Status(0x0001);
    /// Redirect.
    pub const REDIRECT: Status = Status(0x0002);
    /// Bad version: BaseVersion, ClassVersion, or a class this agent does not serve.
    pub const BAD_VERSION: Status = Status(0x0004);
    /// The method is not supported by the class.
    pub const METHOD_UNSUPPORTED: Status = Status(0x0008);
    /// The method/attribute combination is not supported (unknown
    /// attribute, Set on a read-only one).
    pub const METHOD_ATTR_UNSUPPORTED: Status = Status(0x000C);
    /// An invalid value in the attribute or the modifier.
    pub const INVALID_VALUE: Status = Status(0x001C);
    /// SubnAdm: no resources for another record (InfiniBand's SA
    /// ERR_NO_RESOURCES): a table is full.
    pub const SA_NO_RESOURCES: Status = Status(0x0100);
    /// SubnAdm: no record matches the query (InfiniBand's SA
    /// ERR_NO_RECORDS, in the class-specific upper byte).
    pub const SA_NO_RECORDS: Status = Status(0x0200);
    /// SubnAdm (mwrouter's): a join whose MTU is above the group's.
    pub const MC_MTU_ABOVE_GROUP: Status = Status(0x1000);
    /// SubnAdm (mwrouter's): a join on a SAN one of whose routers cannot
    /// carry the group's MTU.
    pub const MC_ROUTER_MTU: Status = Status(0x1100);
    /// SubnAdm (mwrouter's): a create of a group that exists elsewhere with
    /// a smaller MTU than asked.
    pub const MC_MTU_ELSEWHERE: Status = Status(0x1200);
    /// SubnAdm (mwrouter's): a create of a group this manager has already.
    pub const MC_EXISTS: Status = Status(0x1300);
    /// SubnAdm (mwrouter's): a join from a node that is not a member of
    /// the group's partition (docs/multicast.md "Groups in partitions";
    /// OpenSM answers ERR_REQ_INVALID).
    pub const MC_NOT_IN_PARTITION: Status = Status(0x1400);
    /// SubnAdm (mwrouter's): a join naming a partition other than the
    /// group's (InfiniBand's P_Key not the group's).
    pub const MC_OTHER_PARTITION: Status = Status(0x1500);

    /// Whether the status is success.
    pub const fn is_ok(self) -> bool {
        self.0 == 0
    }

    /// The status in words: `"ok"`, or its parts joined by `", "`: `"busy"`,
    /// `"redirect"`, the code of bits 2-4 (`"bad version"`, `"method not
    /// supported"`, `"method/attribute not supported"`, `"invalid value"`,
    /// `"reserved code N"`), `"reserved bits 0xNN"` for bits 5-7, and for
    /// the upper byte the SubnAdm code in words (docs/management.md
    /// "Status"), or `"class-specific 0xNN00"`.
    pub fn describe(self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let low = self.0 & 0x00FF;
        if low & 0x01 != 0 {
            parts.push("busy".into());
        }
        if low & 0x02 != 0 {
            parts.push("redirect".into());
        }
        match (low >> 2) & 0x7 {
            0 => {}
            1 => parts.push("bad version".into()),
            2 => parts.push("method not supported".into()),
            3 => parts.push("method/attribute not supported".into()),
            7 => parts.push("invalid value".into()),
            c => parts.push(format!("reserved code {c}")),
        }
        if low & 0xE0 != 0 {
            parts.push(format!("reserved bits 0x{:02x}", low & 0xE0));
        }
        match self.0 & 0xFF00 {
            0 => {}
            0x0100 => parts.push("SubnAdm: no resources".into()),
            0x0200 => parts.push("SubnAdm: no records".into()),
            0x1000 => parts.push("SubnAdm: the member's MTU is above the group's".into()),
            0x1100 => parts
                .push("SubnAdm: a router on the member's SAN cannot carry the group's MTU".into()),
            0x1200 => parts.push("SubnAdm: the group exists elsewhere with a smaller MTU".into()),
            0x1300 => parts.push("SubnAdm: the group exists".into()),
            0x1400 => parts.push("SubnAdm: not a member of the group's partition".into()),
            0x1500 => parts.push("SubnAdm: the group is in another partition".into()),
            hi => parts.push(format!("class-specific 0x{hi:04x}")),
        }
        if parts.is_empty() {
            "ok".into()
        } else {
            parts.join(", ")
        }
    }
}

impl fmt::Display for Status {
    /// `0xNNNN (description)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04x} ({})", self.0, self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(MgmtClass::SUBN_DR.name(), Some("SubnDR"));
        assert_eq!(MgmtClass(0x99).name(), None);
        assert_eq!(MgmtClass(0x99).to_string(), "0x99");
        assert!(MgmtClass::SUBN.is_smp() && MgmtClass::SUBN_DR.is_smp());
        assert!(!MgmtClass::PERF.is_smp());
        assert_eq!(MgmtClass::SUBN.attribute_len(), 64);
        assert_eq!(MgmtClass::SUBN_DR.attribute_len(), 64);
        assert_eq!(MgmtClass::PERF.attribute_len(), 192);
        assert_eq!(MgmtClass::VENDOR_TRACE.attribute_len(), 192);
        assert_eq!(MgmtClass::SUBN_ADM.attribute_len(), 192);
        assert_eq!(MgmtClass(0x42).attribute_len(), 192);
    }

    #[test]
    fn methods() {
        for m in [
            Method::GET,
            Method::SET,
            Method::REPORT,
            Method::GET_TABLE,
            Method::DELETE,
        ] {
            assert!(m.is_request() && !m.is_response());
            assert!(m.response().is_some_and(Method::is_response));
        }
        for m in [Method::SEND, Method::TRAP, Method::TRAP_REPRESS] {
            assert!(!m.is_request() && !m.is_response());
            assert_eq!(m.response(), None);
        }
        assert!(Method::GET_RESP.is_response());
        assert!(Method::REPORT_RESP.is_response());
        assert_eq!(Method::SET.response(), Some(Method::GET_RESP));
        assert_eq!(Method::REPORT.response(), Some(Method::REPORT_RESP));
        assert_eq!(Method::GET_TABLE.response(), Some(Method::GET_TABLE_RESP));
        assert_eq!(Method::GET_TABLE_RESP.to_string(), "GetTableResp");
        assert_eq!(Method::TRAP_REPRESS.to_string(), "TrapRepress");
        assert_eq!(Method(0x7F).to_string(), "0x7f");
    }

    #[test]
    fn statuses() {
        assert_eq!(Status::OK.describe(), "ok");
        assert_eq!(Status::BUSY.describe(), "busy");
        assert_eq!(Status::REDIRECT.describe(), "redirect");
        assert_eq!(Status::BAD_VERSION.describe(), "bad version");
        assert_eq!(
            Status::METHOD_UNSUPPORTED.describe(),
            "method not supported"
        );
        assert_eq!(
            Status::METHOD_ATTR_UNSUPPORTED.describe(),
            "method/attribute not supported"
        );
        assert_eq!(Status::INVALID_VALUE.describe(), "invalid value");
        assert_eq!(Status(0x0100).describe(), "SubnAdm: no resources");
        assert_eq!(
            Status::MC_MTU_ABOVE_GROUP.describe(),
            "SubnAdm: the member's MTU is above the group's"
        );
        assert_eq!(Status(0x0300).describe(), "class-specific 0x0300");
        assert_eq!(
            Status(0x1D03).describe(),
            "busy, redirect, class-specific 0x1d00"
        );
        assert_eq!(Status(0x0010).describe(), "reserved code 4");
        assert_eq!(Status(0x0040).describe(), "reserved bits 0x40");
        assert_eq!(Status(0x001C).to_string(), "0x001c (invalid value)");
    }
}
