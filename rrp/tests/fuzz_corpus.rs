//! Replays the checked-in fuzz corpus (`fuzz/corpus/<target>/*`) through
//! every fuzz body of `rrp::fuzzing`, so that the stable test suite runs the
//! same checks as the cargo-fuzz targets, crash reproducers included.
//!
//! The seed files are written by the ignored test `write_seed_corpus`:
//! `cargo test -p rrp --test fuzz_corpus -- --ignored write_seed_corpus`.
//! It (re)writes its own named files and leaves any other file (e.g. a
//! minimised crash added by hand) alone.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rrp::NativeAddr;
use rrp::fuzzing;
use rrp::wire::{
    Capability, HeaderRepr, InfoQuery, L2rhRepr, Message, Mtu, NodeInfo, PacketRepr, RecordRepr,
    RouteTable, RouterHop, RtNode, SourceRoute,
};
use rrp::{Address, Endian, PacketType};

/// A fuzz body.
type Body = fn(&[u8]);

/// The fuzz bodies, by target name.
const BODIES: [(&str, Body); 3] = [
    ("packet", fuzzing::packet),
    ("message", fuzzing::message),
    ("record", fuzzing::record),
];

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus")
}

fn files_of(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

#[test]
fn replay_corpus() {
    let root = corpus_root();
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("fuzz corpus {}: {e}", root.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for (name, _) in BODIES {
        assert!(
            dirs.iter().any(|d| d.ends_with(name)),
            "no corpus for target {name} in {}",
            root.display()
        );
    }
    let mut files = 0;
    let mut failures = Vec::new();
    for dir in &dirs {
        let inputs = files_of(dir);
        assert!(!inputs.is_empty(), "empty corpus {}", dir.display());
        for path in inputs {
            let data = fs::read(&path).expect("readable corpus file");
            files += 1;
            for (name, body) in BODIES {
                if catch_unwind(AssertUnwindSafe(|| body(&data))).is_err() {
                    failures.push(format!("{name} on {}", path.display()));
                }
            }
        }
    }
    assert!(files > 0, "the fuzz corpus {} is empty", root.display());
    assert!(
        failures.is_empty(),
        "fuzz bodies failed on {} of {files} inputs:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// Seed generator
// ---------------------------------------------------------------------------

fn l2rh(content: &[u8]) -> L2rhRepr {
    L2rhRepr::new(content).expect("1..=63 bytes")
}

fn eth_hop(egress: u16, last: u8) -> L2rhRepr {
    RouterHop::new(Address(egress), NativeAddr::mac([2, 0, 0, 0, 0, last])).to_l2rh()
}

fn udp_hop(egress: u16) -> L2rhRepr {
    let sa = "127.0.0.1:35061".parse().expect("socket address");
    RouterHop::new(Address(egress), NativeAddr::udp(sa)).to_l2rh()
}

fn udp6_hop(egress: u16) -> L2rhRepr {
    let sa = "[fe80::1]:35061".parse().expect("socket address");
    RouterHop::new(Address(egress), NativeAddr::udp(sa)).to_l2rh()
}

fn header(dst: u16, pt: PacketType, te: u16) -> HeaderRepr {
    HeaderRepr {
        dst: Address(dst),
        src: Address(0x0101),
        packet_type: pt,
        type_ext: te,
        ..HeaderRepr::default()
    }
}

fn packet_bytes(p: &PacketRepr) -> Vec<u8> {
    p.to_bytes().expect("fits")
}

fn record_bytes(rs: &[RecordRepr]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in rs {
        r.emit(&mut out).expect("fits");
    }
    out
}

fn sr(q: u16, route: Vec<L2rhRepr>, mtu: Option<u32>) -> SourceRoute {
    SourceRoute {
        q,
        route,
        mtu: mtu.map(Mtu),
    }
}

fn node(addr: u16) -> NodeInfo {
    NodeInfo {
        address: Address(addr),
        name: Some(b"node-a".to_vec()),
        capabilities: vec![Capability {
            code: 7,
            params: vec![4, 8],
        }],
        logical: Some(vec![Address(0x8001), Address(0x8002)]),
    }
}

fn messages() -> Vec<(&'static str, Message)> {
    let route = sr(3, vec![eth_hop(0x0115, 7), udp_hop(0x0201)], Some(1024));
    vec![
        (
            "rrp1-route-request",
            Message::RouteRequest {
                dst: Address(0x0140),
            },
        ),
        (
            "rrp2-routes",
            Message::Routes {
                dst: Address(0x0140),
                routes: vec![route.clone(), sr(5, vec![], None)],
            },
        ),
        (
            "rrp3-redirect",
            Message::Redirect {
                dst: Address(0x0140),
                via: Address(0x0141),
            },
        ),
        (
            "rrp4-info-request-address",
            Message::InfoRequest(InfoQuery::Address(Address(0x0140))),
        ),
        (
            "rrp4-info-request-name",
            Message::InfoRequest(InfoQuery::Name(b"Super".to_vec())),
        ),
        (
            "rrp4-info-request-capabilities",
            Message::InfoRequest(InfoQuery::Capabilities(vec![
                Capability {
                    code: 7,
                    params: vec![8],
                },
                Capability {
                    code: 2,
                    params: vec![],
                },
            ])),
        ),
        (
            "rrp5-info",
            Message::Info(vec![
                node(0x0102),
                NodeInfo {
                    address: Address(0x0103),
                    ..NodeInfo::default()
                },
            ]),
        ),
        (
            "rrp6-which-hr",
            Message::WhichHr {
                dst: Address(0x0140),
            },
        ),
        ("rrp7-who-are-you", Message::WhoAreYou),
        ("rrp8-rt-request", Message::RtRequest),
        (
            "rrp9-route-table",
            Message::RouteTable(RouteTable {
                san_id: Address(0x0201),
                sn: 7,
                csr: route.clone(),
                rcvf: vec![Address(0x0111), Address(0x0112)],
                nodes: vec![
                    RtNode {
                        info: node(0x0202),
                        route: sr(1, vec![eth_hop(0, 9)], None),
                    },
                    RtNode {
                        info: NodeInfo {
                            address: Address(0x0203),
                            ..NodeInfo::default()
                        },
                        route: sr(2, vec![udp6_hop(0x0300)], Some(0)),
                    },
                ],
            }),
        ),
        (
            "err-unk",
            Message::Unknown {
                addr: Address(0x0140),
            },
        ),
        (
            "err-hrdown",
            Message::HrDown {
                hr: Address(0x0115),
            },
        ),
        (
            "err-linkdown",
            Message::LinkDown {
                a: Address(0x0115),
                b: Address(0x0116),
            },
        ),
    ]
}

/// The seed files, by target: (target, file name, bytes).
fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out = Vec::new();
    let user = PacketType(0x0100);

    // Packets.
    let plain = PacketRepr {
        l2rhs: vec![],
        header: header(0x0102, user, 0),
        data: vec![],
        ei: 0,
    };
    let mut add_packet = |name: &str, p: &PacketRepr| {
        out.push(("packet", name.to_string(), packet_bytes(p)));
    };
    add_packet("empty-data", &plain);
    add_packet(
        "data-13-pl-3",
        &PacketRepr {
            data: (1..=13).collect(),
            ..plain.clone()
        },
    );
    add_packet(
        "one-eth-hop",
        &PacketRepr {
            l2rhs: vec![eth_hop(0x0115, 7)],
            data: b"hello".to_vec(),
            ..plain.clone()
        },
    );
    add_packet(
        "eight-hops-ei",
        &PacketRepr {
            l2rhs: (0..8).map(|i| eth_hop(0x0110 + i, i as u8)).collect(),
            data: vec![0xAB; 24],
            ei: 0x8000_0000_0000_0005,
            ..plain.clone()
        },
    );
    add_packet(
        "nine-hops",
        &PacketRepr {
            l2rhs: (0..9).map(|i| udp_hop(0x0120 + i)).collect(),
            data: vec![1],
            ..plain.clone()
        },
    );
    add_packet(
        "l2rh-63-and-1",
        &PacketRepr {
            l2rhs: vec![l2rh(&[0x55; 63]), l2rh(&[1])],
            ..plain.clone()
        },
    );
    add_packet(
        "all-header-fields",
        &PacketRepr {
            header: HeaderRepr {
                dst: Address::BROADCAST,
                priority: 0xFF,
                packet_type: PacketType(0x88B5),
                type_ext: 0xBEEF,
                endian: Endian::from_nibble(0xB),
                src: Address(0x7FFF),
                free: 0x0102,
            },
            data: vec![9; 7],
            ei: u64::MAX,
            ..plain.clone()
        },
    );
    let embedded = packet_bytes(&PacketRepr {
        data: b"inner".to_vec(),
        ..plain.clone()
    });
    add_packet(
        "embedded",
        &PacketRepr {
            header: header(0x0102, PacketType::EMBEDDED, 0),
            data: embedded,
            ..plain.clone()
        },
    );
    // A short packet in a minimum Ethernet payload: padding after the trailer.
    let mut padded = packet_bytes(&plain);
    padded.resize(46, 0xEE);
    out.push(("packet", "frame-padding".to_string(), padded));

    // Messages, as whole packets.
    for (name, m) in messages() {
        let p = m.to_packet(Address(0x0100), Address(0x0101)).expect("fits");
        out.push(("message", name.to_string(), packet_bytes(&p)));
    }
    let general = Message::General {
        enclosed: packet_bytes(&PacketRepr {
            data: (0..20).collect(),
            ..plain.clone()
        })[..24]
            .to_vec(),
    };
    let p = general
        .to_packet(Address(0x0101), Address(0x0115))
        .expect("fits");
    out.push(("message", "err-general".to_string(), packet_bytes(&p)));
    let mut behind_hop = Message::RouteRequest {
        dst: Address(0x0140),
    }
    .to_packet(Address(0x0100), Address(0x0101))
    .expect("fits");
    behind_hop.l2rhs = vec![eth_hop(0x0115, 3)];
    out.push((
        "message",
        "rrp1-behind-l2rh".to_string(),
        packet_bytes(&behind_hop),
    ));

    // Records, record sequences, L2RHs and router hops.
    let records: Vec<(&str, Vec<RecordRepr>)> = vec![
        ("r1-address", vec![RecordRepr::Address(Address(0x0102))]),
        ("r2-name", vec![RecordRepr::Name(b"A1A2A3A4A".to_vec())]),
        (
            "r3-capability",
            vec![RecordRepr::Capability(Capability {
                code: 7,
                params: (1..=9).collect(),
            })],
        ),
        (
            "r4-logical",
            vec![RecordRepr::LogicalAddresses(vec![
                Address(0x8001),
                Address(0x8002),
                Address(0x8003),
            ])],
        ),
        (
            "r5-route-mtu",
            vec![RecordRepr::SourceRoute(sr(
                9,
                vec![
                    l2rh(&(1..=14).collect::<Vec<u8>>()),
                    l2rh(&[1, 2, 3, 4, 5, 6]),
                ],
                Some(100),
            ))],
        ),
        (
            "r5-empty",
            vec![RecordRepr::SourceRoute(sr(0, vec![], None))],
        ),
        ("r6-mtu", vec![RecordRepr::Mtu(Mtu(1024))]),
        (
            "r7-rcvf",
            vec![RecordRepr::Rcvf((0x141..=0x145).map(Address).collect())],
        ),
        (
            "r8-rt-header",
            vec![RecordRepr::RtHeader {
                san_id: Address(0x0201),
                sn: 0x1234,
            }],
        ),
        (
            "sequence",
            vec![
                RecordRepr::RtHeader {
                    san_id: Address(0x0201),
                    sn: 1,
                },
                RecordRepr::SourceRoute(sr(1, vec![eth_hop(0x0115, 1)], Some(0))),
                RecordRepr::Rcvf(vec![Address(0x0111)]),
                RecordRepr::Address(Address(0x0202)),
            ],
        ),
    ];
    for (name, rs) in records {
        out.push(("record", name.to_string(), record_bytes(&rs)));
    }
    for (name, l) in [
        ("l2rh-eth-hop", eth_hop(0x0115, 7)),
        ("l2rh-udp-hop", udp_hop(0x0201)),
        ("l2rh-udp6-hop", udp6_hop(0x0201)),
        ("l2rh-native-only", eth_hop(0, 1)),
        (
            "l2rh-egress-only",
            RouterHop::new(Address(0x0115), NativeAddr::none()).to_l2rh(),
        ),
        ("l2rh-63", l2rh(&[0x40; 63])),
    ] {
        let mut b = Vec::new();
        l.emit(&mut b);
        out.push(("record", name.to_string(), b));
    }

    // Regressions. 64 bytes of router-hop content (egress 0x0040, then 62
    // bytes): RouterHop::from_content panicked on content longer than an L2RH.
    let mut long_hop = vec![0x11u8; 64];
    long_hop[..2].copy_from_slice(&[0x00, 0x40]);
    out.push(("record", "regress-hop-content-64".to_string(), long_hop));
    out
}

/// Every seed passes every body (the replay test checks the files on disk).
#[test]
fn seeds_pass_every_body() {
    for (target, name, bytes) in seeds() {
        for (_, body) in BODIES {
            body(&bytes);
        }
        match target {
            "packet" => {
                PacketRepr::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            "message" => {
                Message::parse_packet(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            _ => {}
        }
    }
}

#[test]
#[ignore = "writes fuzz/corpus/; run by hand when the seeds change"]
fn write_seed_corpus() {
    let root = corpus_root();
    for (target, name, bytes) in seeds() {
        let dir = root.join(target);
        fs::create_dir_all(&dir).expect("create corpus directory");
        fs::write(dir.join(name), bytes).expect("write seed");
    }
}
