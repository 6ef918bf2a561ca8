//! Byte-exact MADs (`tests/vectors/*.hex`), written by hand from the tables
//! of docs/management.md: each parses to the MadRepr and attribute given
//! here field by field, and emitting those gives the bytes again.
//!
//! Vector format: hex bytes separated by whitespace; `#` starts a comment.

use std::path::PathBuf;

use mgmt::attr::{
    AddressRecord, AddressTable, Attribute, InformInfo, NodeInfo, Notice, PartitionTable,
    PartitionsText, PortCounters, PortCountersExtended, PortInfo,
};
use mgmt::partition::{Membership, PartitionKey};
use mgmt::wire::{
    DrRoute, MAD_LEN, Mad, MadRepr, Method, MgmtClass, PathHop, Status, mad_in, mad_packet,
};
use rrp::wire::Packet;
use rrp::{Address, NativeAddr};

/// The values the vectors use.
mod values {
    use rrp::Address;

    /// The requester (a host, the manager).
    pub const REQUESTER: Address = Address(0x0101);
    /// The router HR asked by address.
    pub const ROUTER_HR: Address = Address(0x0111);
    /// The box's M_Key.
    pub const MKEY: u64 = 0x0123_4567_89ab_cdef;
    /// TID of the NodeInfo exchange.
    pub const TID: u64 = 0x1122_3344_5566_7788;
    /// TID of the directed-route exchange.
    pub const DR_TID: u64 = 0x42;
    /// NodeIdentity of router A.
    pub const NODE_IDENTITY: u64 = 0x0200_0000_0000_0a01;
}

use values::*;

fn vector(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let digits: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split_whitespace())
        .collect();
    assert!(
        digits.len().is_multiple_of(2),
        "{name}: odd number of digits"
    );
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("hex"))
        .collect()
}

fn mac(last: u8) -> NativeAddr {
    NativeAddr::mac([2, 0, 0, 0, 1, last])
}

/// Parses the vector, compares with `want`, emits `want` and compares with
/// the bytes; returns the attribute area.
fn check_mad(name: &str, want: &MadRepr) -> Vec<u8> {
    let b = vector(name);
    assert_eq!(b.len(), MAD_LEN, "{name}");
    let view = Mad::new_checked(&b[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
    let got = MadRepr::parse(&view).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(&got, want, "{name}: parsed");
    assert_eq!(want.to_bytes().unwrap(), &b[..], "{name}: emitted");
    view.attribute_data().to_vec()
}

/// The attribute `want` is `area` exactly.
fn check_attr(name: &str, class: MgmtClass, id: u16, area: &[u8], want: &Attribute) {
    let got = Attribute::parse(class, id, area)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .unwrap_or_else(|| panic!("{name}: attribute 0x{id:04x} unknown"));
    assert_eq!(&got, want, "{name}: attribute parsed");
    let mut out = vec![0xEEu8; area.len()];
    want.emit(&mut out).unwrap();
    assert_eq!(out, area, "{name}: attribute emitted");
}

fn node_info_get() -> MadRepr {
    MadRepr {
        class: MgmtClass::SUBN,
        class_version: 1,
        response: false,
        method: Method::GET,
        status: Status::OK,
        tid: TID,
        attribute: NodeInfo::ID,
        modifier: 0,
        mkey: MKEY,
        data: vec![0; 64],
        dr: None,
    }
}

fn router_node_info() -> NodeInfo {
    NodeInfo {
        base_version: 1,
        class_version: 1,
        node_type: NodeInfo::ROUTER,
        num_ports: 2,
        system_image_identity: NODE_IDENTITY,
        node_identity: NODE_IDENTITY,
        port_identity: NODE_IDENTITY + 1,
        partition_cap: 64,
        implementation_level: 4,
        revision: 0x0000_0100,
        local_port_num: 0,
        vendor_id: 0,
        local_port_address: ROUTER_HR,
    }
}

#[test]
fn subn_get_node_info() {
    let area = check_mad("subn-get-node-info.hex", &node_info_get());
    assert!(area.iter().all(|&b| b == 0));
}

#[test]
fn subn_getresp_node_info() {
    let ni = router_node_info();
    let mut data = vec![0; 64];
    ni.emit(&mut data).unwrap();
    let want = MadRepr {
        data,
        ..node_info_get().response(Status::OK)
    };
    assert_eq!(want.method, Method::GET_RESP);
    let area = check_mad("subn-getresp-node-info.hex", &want);
    check_attr(
        "subn-getresp-node-info.hex",
        MgmtClass::SUBN,
        NodeInfo::ID,
        &area,
        &Attribute::NodeInfo(ni),
    );
}

fn initial_path() -> Vec<PathHop> {
    vec![
        PathHop::new(Address(0x0000), mac(0x11)),
        PathHop::new(Address(0x0113), mac(0x22)),
    ]
}

fn dr_get_port_info() -> MadRepr {
    MadRepr {
        class: MgmtClass::SUBN_DR,
        class_version: 1,
        response: false,
        method: Method::GET,
        status: Status::OK,
        tid: DR_TID,
        attribute: PortInfo::ID,
        modifier: 1,
        mkey: MKEY,
        data: vec![0; 64],
        dr: Some(DrRoute {
            returning: false,
            hop_pointer: 1,
            hop_count: 2,
            initial: initial_path(),
            ret: vec![],
        }),
    }
}

#[test]
fn dr_get_port_info_outbound() {
    let want = dr_get_port_info();
    assert_eq!(want.dr, Some(DrRoute::outbound(initial_path())));
    check_mad("dr-get-port-info-outbound.hex", &want);
}

#[test]
fn dr_getresp_port_info_returning() {
    let pi = PortInfo {
        mkey: MKEY,
        address: Address(0x0122),
        san_id: Address(0x0202),
        manager_address: REQUESTER,
        mkey_lease_period: 60,
        mtu: 1500,
        cost: 1,
        local_port_num: 1,
        port_state: PortInfo::ACTIVE,
        mkey_protect_bits: 1,
        link_kind: PortInfo::LINK_ETHERNET,
        mkey_violations: 0,
        lrt_entries: 5,
        buddies: 1,
        native: mac(0x22),
    };
    let mut data = vec![0; 64];
    pi.emit(&mut data).unwrap();
    let mut want = dr_get_port_info().response(Status::OK);
    want.data = data;
    want.dr = Some(DrRoute {
        returning: true,
        hop_pointer: 1,
        hop_count: 2,
        initial: initial_path(),
        ret: vec![
            PathHop::new(Address(0x0111), mac(0x01)),
            PathHop::new(Address(0x0122), mac(0x13)),
        ],
    });
    let name = "dr-getresp-port-info-returning.hex";
    let area = check_mad(name, &want);
    check_attr(
        name,
        MgmtClass::SUBN_DR,
        PortInfo::ID,
        &area,
        &Attribute::PortInfo(pi),
    );
    // The view: D and the 15-bit status apart.
    let b = vector(name);
    let v = Mad::new_checked(&b[..]).unwrap();
    assert!(v.direction_return());
    assert_eq!(v.status(), Status::OK);
    assert_eq!(v.class_specific(), 0x0102);
}

#[test]
fn perf_getresp_port_counters() {
    let mut counters = vec![0u64; 21];
    counters[0] = 1000;
    counters[2] = 900;
    counters[3] = 90;
    counters[4] = 0x0000_0001_0000_0032;
    counters[5] = 50;
    counters[7] = 3;
    counters[9] = 1;
    counters[10] = 2;
    counters[14] = 7;
    let pc = PortCounters {
        port_select: 2,
        counters,
    };
    let mut data = vec![0; 192];
    pc.emit(&mut data).unwrap();
    let want = MadRepr {
        class: MgmtClass::PERF,
        class_version: 1,
        response: true,
        method: Method::GET_RESP,
        status: Status::OK,
        tid: 9,
        attribute: PortCounters::ID,
        modifier: 2,
        mkey: MKEY,
        data,
        dr: None,
    };
    let name = "perf-getresp-port-counters.hex";
    let area = check_mad(name, &want);
    assert_eq!(area.len(), 192);
    check_attr(
        name,
        MgmtClass::PERF,
        PortCounters::ID,
        &area,
        &Attribute::PortCounters(pc.clone()),
    );
    assert_eq!(pc.by_name("dropped.no-route"), Some(7));
    assert_eq!(pc.received(), Some(1000));
}

#[test]
fn perf_getresp_port_counters_extended() {
    let pc = PortCountersExtended {
        port_select: 1,
        counters: vec![0x0000_0001_2345_6789, 64000, 12, 3, 2, 1],
    };
    let mut data = vec![0; 192];
    pc.emit(&mut data).unwrap();
    let want = MadRepr {
        class: MgmtClass::PERF,
        class_version: 1,
        response: true,
        method: Method::GET_RESP,
        status: Status::OK,
        tid: 10,
        attribute: PortCountersExtended::ID,
        modifier: 1,
        mkey: MKEY,
        data,
        dr: None,
    };
    let name = "perf-getresp-port-counters-extended.hex";
    let area = check_mad(name, &want);
    assert_eq!(area.len(), 192);
    check_attr(
        name,
        MgmtClass::PERF,
        PortCountersExtended::ID,
        &area,
        &Attribute::PortCountersExtended(pc.clone()),
    );
    assert_eq!(pc.by_name("rx_missed"), Some(12));
    assert_eq!(pc.rx_lost(), Some(17));
    assert_eq!(pc.tx_bytes(), Some(64000));
}

#[test]
fn subn_trap_bad_mkey() {
    let n = Notice::bad_mkey(
        ROUTER_HR,
        Address(0x0105),
        Method::SET,
        MgmtClass::SUBN,
        PortInfo::ID,
        1,
        0xdead_beef_0000_0001,
    );
    let mut data = vec![0; 64];
    n.emit(&mut data).unwrap();
    let want = MadRepr {
        class: MgmtClass::SUBN,
        class_version: 1,
        response: false,
        method: Method::TRAP,
        status: Status::OK,
        tid: 0x100,
        attribute: Notice::ID,
        modifier: 0,
        mkey: 0,
        data,
        dr: None,
    };
    let name = "subn-trap-bad-mkey.hex";
    let area = check_mad(name, &want);
    check_attr(
        name,
        MgmtClass::SUBN,
        Notice::ID,
        &area,
        &Attribute::Notice(n.clone()),
    );
    let parsed = Notice::parse(&area).unwrap();
    assert!(parsed.is_generic);
    assert_eq!(parsed.notice_type, Notice::SECURITY);
    assert_eq!(parsed.producer_type, Notice::PRODUCER_ROUTER);
    assert_eq!(parsed.trap_number, Notice::TRAP_BAD_MKEY);
    let d = parsed.bad_mkey_details().unwrap();
    assert_eq!(d.requester, Address(0x0105));
    assert_eq!(d.key, 0xdead_beef_0000_0001);
}

#[test]
fn subn_trap_auth_refused() {
    let native = NativeAddr::mac([2, 0, 0, 0, 5, 0x99]);
    let n = Notice::auth_refused(
        Address(0x0521),
        Address(0x0599),
        0,
        rrp::router::AuthRefusal::Missing,
        &native,
    );
    let mut data = vec![0; 64];
    n.emit(&mut data).unwrap();
    let want = MadRepr {
        class: MgmtClass::SUBN,
        class_version: 1,
        response: false,
        method: Method::TRAP,
        status: Status::OK,
        tid: 0x101,
        attribute: Notice::ID,
        modifier: 0,
        mkey: 0,
        data,
        dr: None,
    };
    let name = "subn-trap-auth-refused.hex";
    let area = check_mad(name, &want);
    check_attr(
        name,
        MgmtClass::SUBN,
        Notice::ID,
        &area,
        &Attribute::Notice(n),
    );
    let d = Notice::parse(&area)
        .unwrap()
        .auth_refused_details()
        .unwrap();
    assert_eq!(d.from, Address(0x0599));
    assert_eq!(d.why, Some(rrp::router::AuthRefusal::Missing));
    assert_eq!(d.native, native);
}

#[test]
fn subnadm_gettableresp_address_record() {
    let table = AddressTable {
        records: vec![
            AddressRecord {
                identity: NODE_IDENTITY,
                address: ROUTER_HR,
            },
            AddressRecord {
                identity: 0x13,
                address: Address(0x0181),
            },
        ],
    };
    let mut data = vec![0; 192];
    table.emit(&mut data).unwrap();
    let want = MadRepr {
        class: MgmtClass::SUBN_ADM,
        class_version: 1,
        response: true,
        method: Method::GET_TABLE_RESP,
        status: Status::OK,
        tid: 0x77,
        attribute: AddressRecord::ID,
        modifier: 0,
        mkey: 0,
        data,
        dr: None,
    };
    let name = "subnadm-gettableresp-address-record.hex";
    let area = check_mad(name, &want);
    check_attr(
        name,
        MgmtClass::SUBN_ADM,
        AddressRecord::ID,
        &area,
        &Attribute::AddressTable(table),
    );
}

#[test]
fn subnadm_gettableresp_partitions_text() {
    let text = "Default=0x7fff : ALL=full ;\ntenant_a=0x0010 : 0x0000000000000104=full ;\n";
    let partitions = mgmt::partition::parse(text).unwrap();
    // The text is what the master writes of its partitions, and the
    // version is theirs.
    assert_eq!(partitions.to_text(), text);
    let record = PartitionsText::chunk_of(text.as_bytes(), partitions.version(), 0);
    assert_eq!(record.version, 0xe19f_6a82_3c32_ae06);
    let mut data = vec![0; 192];
    record.emit(&mut data).unwrap();
    let want = MadRepr {
        class: MgmtClass::SUBN_ADM,
        class_version: 1,
        response: true,
        method: Method::GET_TABLE_RESP,
        status: Status::OK,
        tid: 0x78,
        attribute: PartitionsText::ID,
        modifier: 0,
        mkey: 0,
        data,
        dr: None,
    };
    let name = "subnadm-gettableresp-partitions-text.hex";
    let area = check_mad(name, &want);
    check_attr(
        name,
        MgmtClass::SUBN_ADM,
        PartitionsText::ID,
        &area,
        &Attribute::PartitionsText(record),
    );
}

#[test]
fn subnadm_set_inform_info() {
    let info = InformInfo {
        trap_number: 1024,
        lease_s: 60,
        ..InformInfo::default()
    };
    let mut data = vec![0; 192];
    info.emit(&mut data).unwrap();
    let want = MadRepr {
        class: MgmtClass::SUBN_ADM,
        class_version: 1,
        response: false,
        method: Method::SET,
        status: Status::OK,
        tid: 0x78,
        attribute: InformInfo::ID,
        modifier: 0,
        mkey: 0,
        data,
        dr: None,
    };
    let name = "subnadm-set-inform-info.hex";
    let area = check_mad(name, &want);
    check_attr(
        name,
        MgmtClass::SUBN_ADM,
        InformInfo::ID,
        &area,
        &Attribute::InformInfo(info),
    );
}

#[test]
fn subn_set_partition_table() {
    let key = |k| PartitionKey::new(k).unwrap();
    let table = PartitionTable {
        entries: vec![
            (PartitionKey::DEFAULT, Membership::Limited),
            (key(0x0010), Membership::Full),
            (key(0x0020), Membership::Limited),
        ],
    };
    let mut data = vec![0; 64];
    table.emit(&mut data).unwrap();
    let want = MadRepr {
        class: MgmtClass::SUBN,
        class_version: 1,
        response: false,
        method: Method::SET,
        status: Status::OK,
        tid: 0x99,
        attribute: PartitionTable::ID,
        modifier: 0,
        mkey: MKEY,
        data,
        dr: None,
    };
    let name = "subn-set-partition-table.hex";
    let area = check_mad(name, &want);
    check_attr(
        name,
        MgmtClass::SUBN,
        PartitionTable::ID,
        &area,
        &Attribute::PartitionTable(table),
    );
}

#[test]
fn packet_around_a_mad() {
    let b = vector("packet-subn-get-node-info.hex");
    assert_eq!(b.len(), 16 + MAD_LEN + 8);
    let p = Packet::new_checked(&b[..], 0).unwrap();
    let m = mad_in(&p).unwrap();
    assert_eq!(MadRepr::parse(&m).unwrap(), node_info_get());
    let mad = node_info_get().to_bytes().unwrap();
    assert_eq!(mad_packet(ROUTER_HR, REQUESTER, &mad).unwrap(), b);
    // The MAD inside is the stand-alone vector.
    assert_eq!(&b[16..16 + MAD_LEN], &vector("subn-get-node-info.hex")[..]);
}
