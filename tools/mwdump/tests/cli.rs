//! End-to-end tests of the mwdump binary: every message kind from --hex,
//! the JSON fields, the link layers, malformed input and the exit codes.

mod common;

use common::*;
use mwdump::capture::PcapWriter;
use rrp::NativeAddr;
use rrp::wire::{
    Capability, HeaderRepr, InfoQuery, L2rhRepr, Message, Mtu, NodeInfo, PacketRepr, RouteTable,
    RouterHop, RtNode, RtPart, SourceRoute,
};
use rrp::{Address, PacketType};
use serde_json::Value;

fn a(x: u16) -> Address {
    Address(x)
}

fn sr(q: u16, hops: &[RouterHop], mtu: Option<u32>) -> SourceRoute {
    SourceRoute {
        q,
        route: hops.iter().map(RouterHop::to_l2rh).collect(),
        mtu: mtu.map(Mtu),
    }
}

fn mac_hop(egress: u16, last: u8) -> RouterHop {
    RouterHop::new(a(egress), NativeAddr::mac([2, 0, 0, 0, 0, last]))
}

fn node(addr: u16) -> NodeInfo {
    NodeInfo {
        address: a(addr),
        name: Some(b"Super".to_vec()),
        capabilities: vec![Capability {
            code: 7,
            params: vec![4, 8],
        }],
        logical: Some(vec![a(0x8001)]),
    }
}

/// One message of every kind, with what its JSON must say.
fn all_messages() -> Vec<(Message, &'static str)> {
    vec![
        (Message::RouteRequest { dst: a(0x102) }, "RRP#1"),
        (
            Message::Routes {
                dst: a(0x102),
                routes: vec![
                    sr(2, &[mac_hop(0x122, 2)], Some(1024)),
                    sr(9, &[mac_hop(0, 0x11), mac_hop(0x113, 3)], None),
                ],
            },
            "RRP#2",
        ),
        (
            Message::Redirect {
                dst: a(0x102),
                via: a(0x121),
            },
            "RRP#3",
        ),
        (
            Message::InfoRequest(InfoQuery::Name(b"Super".to_vec())),
            "RRP#4",
        ),
        (Message::Info(vec![node(0x102), node(0x103)]), "RRP#5"),
        (Message::WhichHr { dst: a(0x102) }, "RRP#6"),
        (Message::WhoAreYou, "RRP#7"),
        (Message::RtRequest, "RRP#8"),
        (
            Message::RouteTable(RouteTable {
                san_id: a(0x202),
                sn: 77,
                csr: sr(3, &[mac_hop(0x113, 1), mac_hop(0x122, 0)], Some(512)),
                rcvf: vec![a(0x122), a(0x113)],
                nodes: vec![
                    RtNode {
                        info: node(0x102),
                        route: sr(1, &[mac_hop(0, 2)], None),
                    },
                    RtNode {
                        info: NodeInfo {
                            address: a(0x104),
                            ..Default::default()
                        },
                        route: SourceRoute::default(),
                    },
                ],
            }),
            "RRP#9",
        ),
        (Message::Unknown { addr: a(0x105) }, "ERR UNK"),
        (Message::HrDown { hr: a(0x122) }, "ERR HRDOWN"),
        (
            Message::LinkDown {
                a: a(0x113),
                b: a(0x122),
            },
            "ERR LINKDOWN",
        ),
        (
            Message::General {
                enclosed: Message::RouteRequest { dst: a(0x102) }
                    .to_packet(a(0x111), a(0x101))
                    .unwrap()
                    .to_bytes()
                    .unwrap()[..20]
                    .to_vec(),
            },
            "ERR GENERAL",
        ),
    ]
}

fn packet_hex(m: &Message) -> String {
    hex(&m.to_packet(a(0x111), a(0x101)).unwrap().to_bytes().unwrap())
}

#[test]
fn every_message_kind_decodes_from_hex() {
    for (m, kind) in all_messages() {
        let h = packet_hex(&m);
        let run = json_hex(&[], &h);
        assert_eq!(run.code, 0, "{kind}: {}", run.stderr);
        assert_eq!(run.stderr, "");
        let v = run.json();
        assert_eq!(v.len(), 1, "one object per packet");
        let v = &v[0];
        assert_packet_shape(v);
        assert_eq!(v["kind"], kind);
        assert_eq!(v["message"]["kind"], kind);
        assert_eq!(v["index"], 1);
        assert_eq!(v["link"], "raw");
        assert_eq!(v["timestamp"], Value::Null);
        assert_eq!(v["header"]["dst"], 0x111);
        assert_eq!(v["header"]["src"], 0x101);
        assert_eq!(v["header"]["version"], 5);
        assert_eq!(v["packet_len"].as_u64().unwrap() as usize, h.len() / 2);
        assert_eq!(v["padding_len"], 0);
        assert_eq!(v["data_hex"], Value::Null);

        let text = mwdump(&["--hex", &h], b"");
        assert_eq!(text.code, 0);
        assert!(
            text.stdout.contains(&format!("{kind}: ")),
            "{}",
            text.stdout
        );
        assert!(text.stdout.starts_with("packet 1"));
    }
}

#[test]
fn message_fields_in_json() {
    let msgs = all_messages();
    let get = |kind: &str| {
        let (m, _) = msgs.iter().find(|(_, k)| *k == kind).unwrap();
        json_hex(&[], &packet_hex(m)).json().remove(0)
    };

    let v = get("RRP#2");
    let recs = v["message"]["records"].as_array().unwrap();
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0]["type"], "R1");
    assert_eq!(recs[0]["role"], "dst");
    assert_eq!(recs[0]["address"], 0x102);
    assert_eq!(recs[0]["offset"], 16);
    assert_eq!(recs[1]["type"], "R5");
    assert_eq!(recs[1]["q"], 2);
    assert_eq!(recs[1]["mtu"]["words"], 1024);
    assert_eq!(recs[1]["mtu"]["bytes"], 8192);
    let hop = &recs[1]["l2rhs"][0]["hop"];
    assert_eq!(hop["egress"], 0x122);
    assert_eq!(hop["mac"], "02:00:00:00:00:02");
    assert_eq!(hop["udp"], "2.0.0.0:2");
    assert_eq!(recs[2]["mtu"], Value::Null);
    assert_eq!(recs[2]["l2rhs"][0]["hop"]["native_only"], true);

    let v = get("RRP#4");
    assert_eq!(v["message"]["records"][0]["name"], "Super");
    assert_eq!(v["message"]["records"][0]["name_hex"], "5375706572");

    let v = get("RRP#5");
    let recs = v["message"]["records"].as_array().unwrap();
    assert_eq!(recs.len(), 8);
    assert_eq!(recs[2]["code"], 7);
    assert_eq!(recs[2]["code_name"], "float-dsp");
    assert_eq!(recs[2]["params"], serde_json::json!([4, 8]));
    assert_eq!(recs[3]["addresses"], serde_json::json!([0x8001]));
    assert_eq!(recs[4]["node"], 1);

    let v = get("RRP#9");
    let m = &v["message"];
    assert_eq!(m["rt_part"]["valid"], true);
    assert_eq!(m["rt_part"]["count"], 1);
    let recs = m["records"].as_array().unwrap();
    assert_eq!(recs[0]["san_id"], 0x202);
    assert_eq!(recs[0]["sn"], 77);
    assert_eq!(recs[1]["role"], "csr");
    assert_eq!(recs[1]["l2rhs"].as_array().unwrap().len(), 2);
    assert_eq!(recs[1]["mtu"]["words"], 512);
    assert_eq!(recs[2]["role"], "rcvf");
    assert_eq!(recs[2]["addresses"], serde_json::json!([0x122, 0x113]));
    let last = recs.last().unwrap();
    assert_eq!(
        (last["role"].as_str(), last["node"].as_u64()),
        (Some("route"), Some(1))
    );

    let v = get("ERR LINKDOWN");
    let recs = v["message"]["records"].as_array().unwrap();
    assert_eq!(
        (recs[0]["address"].as_u64(), recs[1]["address"].as_u64()),
        (Some(0x113), Some(0x122))
    );

    let v = get("ERR GENERAL");
    let e = &v["message"]["enclosed"];
    assert_eq!(e["len"], 20);
    assert_eq!(e["complete"], false);
    assert_eq!(e["kind"], "RRP#1");
    assert_eq!(e["header"]["dst"], 0x111);
    assert!(e["note"].as_str().unwrap().contains("eep.data"));
}

#[test]
fn multi_part_rrp9_and_big_endian_e() {
    let (m, _) = all_messages().into_iter().nth(8).unwrap();
    let mut p = m.to_packet(a(0x111), a(0x121)).unwrap();
    p.header.free = RtPart { index: 2, count: 3 }.to_free();
    let v = json_hex(&[], &hex(&p.to_bytes().unwrap())).json().remove(0);
    assert_eq!(
        v["message"]["rt_part"],
        serde_json::json!({"index": 2, "count": 3, "valid": true})
    );
    p.header.free = 0x0402;
    let run = json_hex(&[], &hex(&p.to_bytes().unwrap()));
    assert_eq!(run.code, 0);
    assert_eq!(run.json()[0]["message"]["rt_part"]["valid"], false);
    let text = mwdump(&["--hex", &hex(&p.to_bytes().unwrap())], b"");
    assert!(text.stdout.contains("not a valid RT part marker"));
}

fn user_packet(data: &[u8], l2rhs: Vec<L2rhRepr>) -> PacketRepr {
    PacketRepr {
        l2rhs,
        header: HeaderRepr {
            dst: a(0x102),
            src: a(0x101),
            packet_type: PacketType(0x0100),
            type_ext: 1,
            ..Default::default()
        },
        data: data.to_vec(),
        ei: 5,
    }
}

#[test]
fn user_data_shows_the_first_64_bytes() {
    let long: Vec<u8> = (0..100).collect();
    let p = user_packet(
        &long,
        vec![mac_hop(0x115, 7).to_l2rh(), mac_hop(0x131, 8).to_l2rh()],
    );
    let b = p.to_bytes().unwrap();
    let v = json_hex(&[], &hex(&b)).json().remove(0);
    assert_packet_shape(&v);
    assert_eq!(v["kind"], "USER");
    assert_eq!(v["message"], Value::Null);
    assert_eq!(v["data_len"], 100);
    assert_eq!(v["data_hex"].as_str().unwrap().len(), 128);
    assert_eq!(v["data_truncated"], true);
    assert_eq!(v["ei"], 5);
    assert_eq!(v["l2rhs"].as_array().unwrap().len(), 2);
    assert_eq!(v["l2rhs"][1]["offset"], 16);
    assert_eq!(v["header"]["offset"], 32);
    let t = mwdump(&["--hex", &hex(&b)], b"");
    assert!(
        t.stdout
            .contains("hop: egress 0x0115 native 02:00:00:00:00:07 / 2.0.0.0:7"),
        "{}",
        t.stdout
    );
    assert!(t.stdout.contains(" ..."));
    assert!(t.stdout.contains("(2 L2RHs)"));
}

fn eth_frame(vlan: bool, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if vlan {
        f.extend_from_slice(&[0x81, 0x00, 0x20, 0x07]);
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    if f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

fn ipv4_udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let total = (28 + payload.len()) as u16;
    let mut f = vec![0x45, 0];
    f.extend_from_slice(&total.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2]);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

fn ipv6_udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x60, 0, 0, 0];
    f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[17, 64]);
    f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    f.extend_from_slice(&[0; 11]);
    f.push(1);
    f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    f.extend_from_slice(&[0; 11]);
    f.push(2);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

#[test]
fn link_layers() {
    let pkt = Message::WhoAreYou
        .to_packet(Address::HEY_YOU, a(0x111))
        .unwrap()
        .to_bytes()
        .unwrap();
    assert_eq!(pkt.len(), 24);

    // Ethernet, padded to 60: the padding is reported, not decoded.
    let v = json_hex(&["--link", "eth"], &hex(&eth_frame(false, 0x88B5, &pkt)))
        .json()
        .remove(0);
    assert_eq!(v["link"], "eth");
    assert_eq!(v["kind"], "RRP#7");
    assert_eq!(v["packet_offset"], 14);
    assert_eq!(v["packet_len"], 24);
    assert_eq!(v["padding_len"], 60 - 14 - 24);
    assert_eq!(v["encap"]["eth"]["ethertype"], 0x88B5);
    assert_eq!(v["encap"]["eth"]["src"], "02:00:00:00:00:01");
    assert_eq!(v["header"]["dst_class"], "hey-you");

    // One 802.1Q tag.
    let v = json_hex(&["--link", "eth"], &hex(&eth_frame(true, 0x88B5, &pkt)))
        .json()
        .remove(0);
    assert_eq!(v["packet_offset"], 18);
    assert_eq!(v["encap"]["eth"]["vlan"]["vid"], 7);
    assert_eq!(v["encap"]["eth"]["vlan"]["pcp"], 1);

    // IPv4 and IPv6 UDP inside Ethernet, port 34997 as source or destination.
    let v = json_hex(
        &["--link", "eth"],
        &hex(&eth_frame(false, 0x0800, &ipv4_udp(34997, 999, &pkt))),
    )
    .json()
    .remove(0);
    assert_eq!(v["encap"]["ip"]["version"], 4);
    assert_eq!(v["encap"]["ip"]["src"], "192.0.2.1");
    assert_eq!(v["encap"]["udp"]["src_port"], 34997);
    assert_eq!(v["packet_offset"], 42);
    let v = json_hex(
        &["--link", "eth"],
        &hex(&eth_frame(false, 0x86DD, &ipv6_udp(999, 34997, &pkt))),
    )
    .json()
    .remove(0);
    assert_eq!(v["encap"]["ip"]["version"], 6);
    assert_eq!(v["encap"]["ip"]["dst"], "2001:db8::2");
    assert_eq!(v["packet_offset"], 62);

    // --link udp: bare IP.
    for dgram in [ipv4_udp(1, 34997, &pkt), ipv6_udp(34997, 34997, &pkt)] {
        let run = json_hex(&["--link", "udp"], &hex(&dgram));
        assert_eq!(run.code, 0, "{}", run.stderr);
        let v = run.json().remove(0);
        assert_eq!(v["kind"], "RRP#7");
        assert_eq!(v["encap"]["eth"], Value::Null);
        assert_eq!(v["padding_len"], 0);
    }
    let t = mwdump(
        &["--link", "udp", "--hex", &hex(&ipv4_udp(1, 34997, &pkt))],
        b"",
    );
    assert!(t.stdout.contains("ipv4 192.0.2.1 > 192.0.2.2"));
    assert!(t.stdout.contains("udp 1 > 34997"));

    // A single frame that is not MessageWay is an error.
    let run = json_hex(&["--link", "eth"], &hex(&eth_frame(false, 0x0806, &pkt)));
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("eth.type at frame byte 12"),
        "{}",
        run.stderr
    );
    assert_eq!(run.json()[0]["error"]["field"], "eth.type");
    let run = json_hex(&["--link", "udp"], &hex(&ipv4_udp(53, 54, &pkt)));
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("udp.port"));
}

fn error_of(run: &Run) -> Value {
    assert_eq!(run.code, 1, "stdout {} stderr {}", run.stdout, run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
    let v = run.json().remove(0);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert!(keys.contains(&"index") && keys.contains(&"error"), "{v}");
    for k in ["field", "offset", "packet_offset", "kind", "message"] {
        assert!(v["error"].get(k).is_some(), "error.{k}");
    }
    v["error"].clone()
}

#[test]
fn malformed_packets_name_field_and_offset() {
    let good = Message::RouteRequest { dst: a(0x102) }
        .to_packet(a(0x111), a(0x101))
        .unwrap()
        .to_bytes()
        .unwrap();

    // Truncated: inside the header, the data and the trailer.
    for (cut, field) in [(10, "eep.header"), (20, "eep.data"), (30, "eep.trailer")] {
        let e = error_of(&json_hex(&[], &hex(&good[..cut])));
        assert_eq!(e["field"], field);
        assert_eq!(e["kind"], "truncated");
    }

    // Bad version, with the offset in the frame and in the packet.
    let mut b = good.clone();
    b[3] = 4;
    let e = error_of(&json_hex(&[], &hex(&b)));
    assert_eq!(
        (e["field"].as_str(), e["offset"].as_u64()),
        (Some("eep.version"), Some(3))
    );
    assert_eq!(e["kind"], "bad_version");
    let mut f = eth_frame(false, 0x88B5, &b);
    f[14 + 3] = 4;
    let run = json_hex(&["--link", "eth"], &hex(&f));
    let e = error_of(&run);
    assert_eq!(
        (e["offset"].as_u64(), e["packet_offset"].as_u64()),
        (Some(17), Some(14))
    );
    assert!(
        run.stderr
            .contains("packet 1: eep.version at frame byte 17 (byte 3 of the MessageWay packet): version 4, expected 5"),
        "{}",
        run.stderr
    );

    // Bad L2RH length (0).
    let mut b = vec![0, 0, 0, 0, 0, 0, 0, 0];
    b.extend_from_slice(&good);
    let e = error_of(&json_hex(&[], &hex(&b)));
    assert_eq!(
        (e["field"].as_str(), e["kind"].as_str()),
        (Some("l2rh.len"), Some("bad_l2rh_length"))
    );

    // Bad record type.
    let mut b = good.clone();
    b[16] = 9;
    let e = error_of(&json_hex(&[], &hex(&b)));
    assert_eq!(
        (e["field"].as_str(), e["offset"].as_u64()),
        (Some("record.rtyp"), Some(16))
    );
    // A record of the wrong type for the message.
    let mut b = good.clone();
    b[6..8].copy_from_slice(&3u16.to_be_bytes());
    let e = error_of(&json_hex(&[], &hex(&b)));
    assert_eq!(e["kind"], "missing_record");
    // Unknown RRP message number.
    let mut b = good.clone();
    b[7] = 10;
    let e = error_of(&json_hex(&[], &hex(&b)));
    assert_eq!(
        (e["field"].as_str(), e["offset"].as_u64()),
        (Some("eep.te"), Some(6))
    );

    // Text mode: the error is in the listing and on stderr.
    let run = mwdump(&["--hex", &hex(&good[..20])], b"");
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("error: eep.data at frame byte 16"));
    assert!(
        run.stderr
            .starts_with("mwdump: packet 1: eep.data at frame byte 16")
    );
}

#[test]
fn bad_hex_and_empty_input() {
    for (h, want) in [
        ("01 0g", "invalid hex character 'g'"),
        ("012", "odd number"),
    ] {
        let run = mwdump(&["--hex", h], b"");
        assert_eq!(run.code, 1);
        assert!(run.stderr.contains(want), "{}", run.stderr);
        assert_eq!(run.stdout, "");
    }
    let run = mwdump(&["--hex", "# nothing\n"], b"");
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("empty input"));
    let run = mwdump(&["-"], b"");
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("standard input: empty input"));
    let empty = scratch("empty.bin");
    std::fs::write(empty.path(), b"").unwrap();
    let run = mwdump(&[empty.path()], b"");
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("empty input"));
    // Hex with comments and 0x prefixes.
    let run = mwdump(
        &[
            "--hex",
            "# RRP#8\n0x0111 00 05 # MH\n0x0002 0008\n00 000000 0101 0000\n0000000000000000",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("RRP#8"));
}

#[test]
fn files_stdin_and_usage() {
    let pkt = Message::RtRequest
        .to_packet(a(0x121), a(0x111))
        .unwrap()
        .to_bytes()
        .unwrap();
    // A raw file and the same on stdin.
    let raw = scratch("rrp8.bin");
    std::fs::write(raw.path(), &pkt).unwrap();
    let run = mwdump(&["--json", raw.path()], b"");
    assert_eq!(run.code, 0);
    assert_eq!(run.json()[0]["kind"], "RRP#8");
    let run = mwdump(&["--json", "-"], &pkt);
    assert_eq!(run.json()[0]["kind"], "RRP#8");
    // A raw Ethernet frame on stdin.
    let run = mwdump(
        &["--json", "--link", "eth", "-"],
        &eth_frame(false, 0x88B5, &pkt),
    );
    assert_eq!(run.json()[0]["padding_len"], 60 - 14 - 24);

    // An unreadable file is named.
    let missing = scratch("does-not-exist.pcap");
    let run = mwdump(&[missing.path()], b"");
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("cannot read") && run.stderr.contains("does-not-exist.pcap"));

    // Usage errors: exit 2.
    for args in [
        &[][..],
        &["--hex", "00", raw.path()][..],
        &["--link", "tcp", "--hex", "00"][..],
        &["--bogus"][..],
    ] {
        assert_eq!(mwdump(args, b"").code, 2, "{args:?}");
    }
    assert_eq!(mwdump(&["--help"], b"").code, 0);
}

#[test]
fn a_capture_with_one_bad_packet_among_good_ones() {
    let frames: Vec<Vec<u8>> = mwdump::sample::sample_frames()
        .into_iter()
        .take(4)
        .map(|f| f.frame)
        .collect();
    let mut w = PcapWriter::in_memory(1);
    for (i, f) in frames.iter().enumerate() {
        let mut f = f.clone();
        if i == 1 {
            f[14 + 3] = 9; // version
        }
        w.push(100 + i as u32, 0, &f);
    }
    // And one frame that is not MessageWay: skipped, not an error.
    let mut arp = vec![0xFF; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.resize(60, 0);
    w.push(200, 0, &arp);
    let path = scratch("one-bad.pcap");
    std::fs::write(path.path(), w.finish()).unwrap();

    let run = mwdump(&["--json", path.path()], b"");
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr.lines().count(), 1);
    assert!(
        run.stderr
            .starts_with("mwdump: packet 2: eep.version at frame byte 17"),
        "{}",
        run.stderr
    );
    let v = run.json();
    assert_eq!(v.len(), 5);
    assert_eq!(v[0]["kind"], "RRP#4");
    assert_eq!(v[1]["index"], 2);
    assert_eq!(v[1]["error"]["field"], "eep.version");
    assert_eq!(v[1]["error"]["offset"], 17);
    assert_eq!(v[1]["error"]["message"], "version 9, expected 5");
    assert_eq!(v[2]["kind"], "RRP#6");
    assert_eq!(v[3]["kind"], "RRP#3");
    assert_eq!(v[3]["timestamp"]["sec"], 103);
    assert_eq!(v[4]["skipped"]["field"], "eth.type");
    assert_packet_shape(&v[0]);

    let text = mwdump(&[path.path()], b"");
    assert_eq!(text.code, 1);
    assert!(text.stdout.contains("packet 3"));
    assert!(text.stdout.contains("skipped: EtherType 0x0806"));

    // Only skipped frames: exit 0.
    let mut w = PcapWriter::in_memory(1);
    w.push(1, 0, &arp);
    std::fs::write(path.path(), w.finish()).unwrap();
    assert_eq!(mwdump(&[path.path()], b"").code, 0);

    // A capture cut inside its last record: the frames before it are
    // decoded and the damage is reported with its file offset.
    let mut w = PcapWriter::in_memory(1);
    w.push(1, 0, &frames[0]);
    w.push(2, 0, &frames[2]);
    let mut bytes = w.finish();
    bytes.truncate(bytes.len() - 10);
    let run = mwdump(&["--json", "-"], &bytes);
    assert_eq!(run.code, 1);
    let v = run.json();
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["kind"], "RRP#4");
    assert_eq!(v[1]["index"], 2);
    assert_eq!(v[1]["error"]["field"], "pcap.record.incl_len");
    assert_eq!(v[1]["error"]["offset"], 24 + 16 + 60 + 8);
    assert!(run.stderr.contains("at file byte 108"));
}

/// A pcapng file: a USER0 interface and an Ethernet interface with
/// nanosecond timestamps, big endian.
fn pcapng(packets: &[(u32, u64, &[u8])]) -> Vec<u8> {
    fn block(t: u32, body: &[u8]) -> Vec<u8> {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(4) {
            body.push(0);
        }
        let len = (body.len() + 12) as u32;
        let mut b = t.to_be_bytes().to_vec();
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(&body);
        b.extend_from_slice(&len.to_be_bytes());
        b
    }
    let mut f = block(
        0x0A0D_0D0A,
        &[
            0x1A, 0x2B, 0x3C, 0x4D, 0, 1, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        ],
    );
    f.extend(block(1, &[0, 147, 0, 0, 0, 0, 0, 0]));
    f.extend(block(
        1,
        &[0, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 9, 0, 0, 0, 0, 0, 0, 0],
    ));
    for (iface, ts, data) in packets {
        let mut b = iface.to_be_bytes().to_vec();
        b.extend_from_slice(&((ts >> 32) as u32).to_be_bytes());
        b.extend_from_slice(&(*ts as u32).to_be_bytes());
        b.extend_from_slice(&(data.len() as u32).to_be_bytes());
        b.extend_from_slice(&(data.len() as u32).to_be_bytes());
        b.extend_from_slice(data);
        f.extend(block(6, &b));
    }
    f
}

#[test]
fn pcapng_with_per_interface_link_types() {
    let pkt = Message::HrDown { hr: a(0x122) }
        .to_packet(a(0x101), a(0x111))
        .unwrap()
        .to_bytes()
        .unwrap();
    let frame = eth_frame(false, 0x88B5, &pkt);
    let file = pcapng(&[(0, 5_000_000, &pkt), (1, 7_000_000_123, &frame)]);
    let run = mwdump(&["--json", "-"], &file);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v.len(), 2);
    assert_eq!(
        (v[0]["linktype"].as_u64(), v[0]["link"].as_str()),
        (Some(147), Some("raw"))
    );
    assert_eq!(v[0]["timestamp"]["sec"], 5);
    assert_eq!(
        (v[1]["linktype"].as_u64(), v[1]["link"].as_str()),
        (Some(1), Some("eth"))
    );
    assert_eq!(v[1]["timestamp"]["sec"], 7);
    assert_eq!(v[1]["timestamp"]["nsec"], 123);
    assert_eq!(v[1]["timestamp"]["utc"], "1970-01-01T00:00:07.000000123Z");
    for x in &v {
        assert_eq!(x["kind"], "ERR HRDOWN");
    }
}

#[test]
fn unsupported_capture_link_type() {
    let mut w = PcapWriter::in_memory(105); // IEEE 802.11
    w.push(1, 0, &[0; 30]);
    let run = mwdump(&["--json", "-"], &w.finish());
    let e = error_of(&run);
    assert_eq!(e["kind"], "unsupported_link");
    assert_eq!(e["field"], "linktype");
    // A capture whose file header is cut: one line, no output.
    let run = mwdump(&["-"], &[0xD4, 0xC3, 0xB2, 0xA1, 2, 0]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("pcap.header"), "{}", run.stderr);
}
