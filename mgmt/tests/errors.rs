//! Typed errors: each malformed input names the field and the byte offset
//! (from the MAD's, the attribute area's or the packet's first byte).

use mgmt::attr::{
    ClassPortInfo, FibBlock, LrtBlock, LrtBlockEntry, NodeDescription, NodeInfo, Notice,
    PortCounters, PortInfo, RouteEntry, SmInfo,
};
use mgmt::wire::{DrRoute, MAD_LEN, Mad, MadRepr, Method, MgmtClass, PathHop, Status, mad_in};
use mgmt::{Error, ErrorKind};
use rrp::wire::{HeaderRepr, Packet, PacketRepr};
use rrp::{Address, NativeAddr, PacketType};

fn err(kind: ErrorKind, field: &'static str, offset: usize) -> Error {
    Error::new(kind, field, offset)
}

fn dr_mad() -> [u8; MAD_LEN] {
    let mut m = MadRepr::new(MgmtClass::SUBN_DR, Method::GET, 1, PortInfo::ID, 0);
    m.dr = Some(DrRoute::outbound(vec![
        PathHop::new(Address(0), NativeAddr::mac([2, 0, 0, 0, 0, 1])),
        PathHop::new(Address(0x0113), NativeAddr::mac([2, 0, 0, 0, 0, 2])),
    ]));
    m.to_bytes().unwrap()
}

fn parse(b: &[u8]) -> Result<MadRepr, Error> {
    MadRepr::parse(&Mad::new_checked(b)?)
}

#[test]
fn mad_length_and_version() {
    assert_eq!(
        Mad::new_checked(&[1u8; 255][..]).unwrap_err(),
        Error::truncated("mad", 0, 256, 255)
    );
    assert_eq!(
        Mad::new_checked(&[1u8; 257][..]).unwrap_err(),
        err(ErrorKind::BadLength(257), "mad", 0)
    );
    let mut b = dr_mad();
    b[0] = 2;
    assert_eq!(
        parse(&b).unwrap_err(),
        err(ErrorKind::BadBaseVersion(2), "mad.base_version", 0)
    );
    // A view made without checks is checked again by the parser.
    assert_eq!(
        MadRepr::parse(&Mad::new_unchecked(&b[..10])).unwrap_err(),
        Error::truncated("mad", 0, 256, 10)
    );
}

#[test]
fn paths() {
    let mut b = dr_mad();
    // InitialPath[0]'s length byte (MAD byte 130) of 19.
    b[130] = 19;
    assert_eq!(
        parse(&b).unwrap_err(),
        err(ErrorKind::BadPath, "mad.initial_path", 130)
    );
    // HopCount 9.
    let mut b = dr_mad();
    b[7] = 9;
    assert_eq!(
        parse(&b).unwrap_err(),
        err(ErrorKind::TooManyHops(9), "mad.hop_count", 7)
    );
    // HopCount 8 with 18-byte entries: the fourth overruns the area.
    let mut b = dr_mad();
    b[7] = 8;
    for e in 0..3 {
        b[128 + 21 * e + 2] = 18;
    }
    assert_eq!(
        parse(&b).unwrap_err(),
        err(ErrorKind::BadPath, "mad.initial_path", 128 + 63)
    );
    // A ReturnPath entry whose length is 19.
    let mut b = dr_mad();
    b[192] = 0x01;
    b[194] = 19;
    assert_eq!(
        parse(&b).unwrap_err(),
        err(ErrorKind::BadPath, "mad.return_path", 194)
    );
    // A ReturnPath entry that runs past the area.
    let mut b = dr_mad();
    b[7] = 8; // the InitialPath's zero bytes read as 6 more empty entries
    b[192 + 63] = 1;
    b[192 + 2] = 18;
    b[192 + 23] = 18;
    b[192 + 44] = 18; // ends at 63; the fourth starts at 63
    assert_eq!(
        parse(&b).unwrap_err(),
        err(ErrorKind::BadPath, "mad.return_path", 192 + 63)
    );
    // More ReturnPath entries than HopCount: only HopCount are read.
    let mut b = dr_mad();
    b[192 + 2] = 0;
    b[192] = 1;
    b[195] = 1;
    b[198] = 1;
    let m = parse(&b).unwrap();
    assert_eq!(m.dr.unwrap().ret.len(), 2);
}

#[test]
fn emit_names_what_does_not_fit() {
    let v6 = NativeAddr::from_bytes(&[0xFE; 18]).unwrap();
    let mut m = MadRepr::new(MgmtClass::SUBN_DR, Method::GET, 1, PortInfo::ID, 0);
    m.dr = Some(DrRoute::outbound(vec![
        PathHop::new(Address(0x0111), v6);
        4
    ]));
    assert_eq!(
        m.to_bytes().unwrap_err(),
        err(ErrorKind::BadPath, "mad.initial_path", 128 + 63)
    );
    m.dr = Some(DrRoute::outbound(vec![PathHop::default(); 9]));
    assert_eq!(
        m.to_bytes().unwrap_err(),
        err(ErrorKind::TooManyHops(9), "mad.hop_count", 7)
    );
    let mut dr = DrRoute::outbound(vec![PathHop::default(); 2]);
    dr.ret = vec![PathHop::new(Address(0x0111), v6); 3];
    m.dr = Some(dr);
    assert_eq!(
        m.to_bytes().unwrap_err(),
        err(ErrorKind::BadPath, "mad.return_path", 192)
    );
    let mut m = MadRepr::new(MgmtClass::PERF, Method::GET, 1, PortCounters::ID, 0);
    m.data = vec![0; 64];
    assert_eq!(m.to_bytes().unwrap_err().field, "mad.data");
    let mut m = MadRepr::new(MgmtClass::SUBN_DR, Method::GET, 1, 0, 0);
    m.dr = None;
    assert_eq!(m.to_bytes().unwrap_err().field, "mad.class");
    let mut m = MadRepr::new(MgmtClass::SUBN_DR, Method::GET, 1, 0, 0);
    m.status = Status(0x8001);
    assert_eq!(
        m.to_bytes().unwrap_err(),
        err(
            ErrorKind::BadValue("status above 15 bits in class 0x81"),
            "mad.status",
            4
        )
    );
}

#[test]
fn packets() {
    let mk = |pt: PacketType, data: Vec<u8>| {
        PacketRepr {
            l2rhs: vec![],
            header: HeaderRepr {
                dst: Address(0x0111),
                packet_type: pt,
                ..HeaderRepr::default()
            },
            data,
            ei: 0,
        }
        .to_bytes()
        .unwrap()
    };
    let b = mk(PacketType::RRP, dr_mad().to_vec());
    let p = Packet::new_checked(&b[..], 8).unwrap();
    assert_eq!(
        mad_in(&p).unwrap_err(),
        err(ErrorKind::NotManagement(2), "eep.pt", 4)
    );
    let b = mk(PacketType::MANAGEMENT, vec![1; 264]);
    let p = Packet::new_checked(&b[..], 8).unwrap();
    assert_eq!(
        mad_in(&p).unwrap_err(),
        err(ErrorKind::BadLength(264), "eep.data", 16)
    );
    let mut mad = dr_mad();
    mad[7] = 9;
    let b = mk(PacketType::MANAGEMENT, mad.to_vec());
    let p = Packet::new_checked(&b[..], 8).unwrap();
    // The view is fine; the owned form refuses HopCount 9, at MAD byte 7.
    let m = mad_in(&p).unwrap();
    assert_eq!(
        MadRepr::parse(&m).unwrap_err(),
        err(ErrorKind::TooManyHops(9), "mad.hop_count", 7)
    );
    let mut mad = dr_mad();
    mad[0] = 0;
    let b = mk(PacketType::MANAGEMENT, mad.to_vec());
    let p = Packet::new_checked(&b[..], 8).unwrap();
    assert_eq!(
        mad_in(&p).unwrap_err(),
        err(ErrorKind::BadBaseVersion(0), "mad.base_version", 16)
    );
}

#[test]
fn attributes_truncated() {
    let short = [0u8; 63];
    let cases: [(&str, Result<(), Error>); 9] = [
        ("class_port_info", ClassPortInfo::parse(&short).map(drop)),
        ("notice", Notice::parse(&short).map(drop)),
        ("node_description", NodeDescription::parse(&short).map(drop)),
        ("node_info", NodeInfo::parse(&short).map(drop)),
        ("port_info", PortInfo::parse(&short).map(drop)),
        ("sm_info", SmInfo::parse(&short).map(drop)),
        ("route_entry", RouteEntry::parse(&short).map(drop)),
        ("fib_block", FibBlock::parse(&short).map(drop)),
        ("lrt_block", LrtBlock::parse(&short).map(drop)),
    ];
    for (field, r) in cases {
        assert_eq!(
            r.unwrap_err(),
            Error::truncated(field, 0, 64, 63),
            "{field}"
        );
    }
    assert_eq!(
        PortCounters::parse(&[0u8; 7]).unwrap_err(),
        Error::truncated("port_counters", 0, 8, 7)
    );
    let mut pc = [0u8; 64];
    pc[1] = 21; // 21 counters do not fit 64 bytes
    assert_eq!(
        PortCounters::parse(&pc).unwrap_err(),
        Error::truncated("port_counters.counters", 8, 168, 56)
    );
    // Emitting into an area too small.
    let mut small = [0u8; 32];
    assert_eq!(
        NodeInfo::default().emit(&mut small).unwrap_err(),
        Error::truncated("node_info", 0, 64, 32)
    );
    let p = PortCounters {
        port_select: 0,
        counters: vec![0; 24],
    };
    assert_eq!(
        p.emit(&mut [0u8; 192]).unwrap_err(),
        Error::truncated("port_counters", 0, 200, 192)
    );
}

#[test]
fn node_description_text() {
    let long = NodeDescription("x".repeat(65));
    assert_eq!(
        long.emit(&mut [0u8; 64]).unwrap_err(),
        err(
            ErrorKind::BadValue("text longer than 64 bytes"),
            "node_description",
            64
        )
    );
    let fits = NodeDescription("é".repeat(32));
    let mut area = [0u8; 64];
    fits.emit(&mut area).unwrap();
    assert_eq!(NodeDescription::parse(&area).unwrap(), fits);
    // Not UTF-8 at byte 3.
    let mut area = [0u8; 64];
    area[..4].copy_from_slice(b"ab\xC3\xFF");
    area[2] = b'c';
    assert_eq!(
        NodeDescription::parse(&area).unwrap_err(),
        err(ErrorKind::BadText, "node_description", 3)
    );
    assert_eq!(
        NodeDescription("a\0".into())
            .emit(&mut [0u8; 64])
            .unwrap_err()
            .offset,
        1
    );
    // Zero padding is trimmed; a zero inside stays.
    let mut area = [0u8; 64];
    area[..5].copy_from_slice(b"r1\0r2");
    assert_eq!(NodeDescription::parse(&area).unwrap().0, "r1\0r2");
}

#[test]
fn native_addresses_and_values() {
    let mut area = [0u8; 64];
    area[32] = 19;
    assert_eq!(
        PortInfo::parse(&area).unwrap_err(),
        err(ErrorKind::BadNative, "port_info.native_len", 32)
    );
    let mut area = [0u8; 64];
    area[12] = 200;
    assert_eq!(
        RouteEntry::parse(&area).unwrap_err(),
        err(ErrorKind::BadNative, "route_entry.native_len", 12)
    );
    let pi = PortInfo {
        mkey_protect_bits: 4,
        ..PortInfo::default()
    };
    assert_eq!(
        pi.emit(&mut [0u8; 64]).unwrap_err().field,
        "port_info.mkey_protect_bits"
    );
    let n = Notice {
        count: 0x8000,
        ..Notice::default()
    };
    assert_eq!(n.emit(&mut [0u8; 64]).unwrap_err().offset, 8);
    let n = Notice {
        notice_type: 0x80,
        ..Notice::default()
    };
    assert_eq!(n.emit(&mut [0u8; 64]).unwrap_err().field, "notice.type");
    let n = Notice {
        producer_type: 1 << 24,
        ..Notice::default()
    };
    assert_eq!(n.emit(&mut [0u8; 64]).unwrap_err().offset, 1);
    let ni = NodeInfo {
        vendor_id: 1 << 24,
        ..NodeInfo::default()
    };
    assert_eq!(
        ni.emit(&mut [0u8; 64]).unwrap_err(),
        err(
            ErrorKind::BadValue("VendorID above 24 bits"),
            "node_info.vendor_id",
            37
        )
    );
    let sm = SmInfo {
        priority: 16,
        ..SmInfo::default()
    };
    assert_eq!(sm.emit(&mut [0u8; 64]).unwrap_err().offset, 20);
    let lrt = LrtBlock {
        total: 16,
        entries: vec![
            LrtBlockEntry {
                address: Address(0x0140),
                ..LrtBlockEntry::default()
            };
            16
        ],
    };
    assert_eq!(
        lrt.emit(&mut [0u8; 64]).unwrap_err().field,
        "lrt_block.entries"
    );
    let lrt = LrtBlock {
        total: 2,
        entries: vec![LrtBlockEntry::default()],
    };
    assert_eq!(
        lrt.emit(&mut [0u8; 64]).unwrap_err(),
        err(
            ErrorKind::BadValue("an entry of address 0"),
            "lrt_block.address",
            4
        )
    );
}
