//! A stranger's flood must not take routing down (docs/dataplane.md "Punt
//! classes", docs/reliability.md "Floods of packets for the box"): on the
//! Appendix B lab, a socket that is no member of any SAN sends router ad's
//! D-side HR (0x011a) packets for the box as fast as this test can send
//! them, in four rounds: management datagrams (Subn Get NodeInfo), RRP#7
//! requests, RRP#1 requests, and malformed packets (RRP#9 whose body is not
//! records, and packets that are not MessageWay at all). During each round
//! H0 sends 2,000 probes to H8 through ad at 400 pps. Every probe arrives;
//! no router handles an HR-DOWN (nobody declared ad's HR down); the flood
//! is counted in its class on ad's D port (or as missed by the port, when
//! the kernel dropped it before the port read it) and its source named the
//! heaviest of the class; ad's admin socket keeps answering (its median
//! answer within 100 ms); every port's accounting balances.

mod common;

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mgmt::attr::NodeInfo;
use mgmt::wire::{MadRepr, Method, MgmtClass, mad_packet};
use mwlab::lab::{Lab, host_client, mwctl};
use mwlab::plan::{LabManagement, lab_timers};
use rrp::Address;
use rrp::kind::PacketType;
use rrp::wire::{HeaderRepr, Message, PacketRepr};
use serde_json::{Value, json};

/// ad's HR on SAN D, the flood's target.
const TARGET: Address = Address(0x011a);
/// The SA the stranger writes (no node of any SAN).
const STRANGER: Address = Address(0x0150);
/// Probes per round.
const PROBES: u64 = 2_000;

fn ok(v: Value) -> Value {
    assert_eq!(v["ok"], true, "{v}");
    v
}

/// What one round sends, and the punt class it is counted in (`None`: the
/// worker drops it before it is punted).
struct Round {
    name: &'static str,
    packets: Vec<(Vec<u8>, Option<&'static str>)>,
}

fn rounds() -> Vec<Round> {
    let mad = MadRepr::new(MgmtClass::SUBN, Method::GET, 7, NodeInfo::ID, 0)
        .to_bytes()
        .unwrap();
    let rrp = |m: &Message| m.to_packet(TARGET, STRANGER).unwrap().to_bytes().unwrap();
    let bad_rt = PacketRepr {
        l2rhs: Vec::new(),
        header: HeaderRepr {
            dst: TARGET,
            src: STRANGER,
            packet_type: PacketType::RRP,
            type_ext: 9,
            ..Default::default()
        },
        data: vec![0xFF; 24],
        ei: 0,
    }
    .to_bytes()
    .unwrap();
    vec![
        Round {
            name: "management",
            packets: vec![(
                mad_packet(TARGET, STRANGER, &mad).unwrap(),
                Some("management"),
            )],
        },
        Round {
            name: "rrp#7",
            packets: vec![(rrp(&Message::WhoAreYou), Some("request"))],
        },
        Round {
            name: "rrp#1",
            packets: vec![(
                rrp(&Message::RouteRequest {
                    dst: Address(0x0108),
                }),
                Some("request"),
            )],
        },
        Round {
            name: "malformed",
            packets: vec![(bad_rt, Some("request")), (vec![0x55; 40], None)],
        },
    ]
}

/// Every router's count of HR-DOWNs handled.
fn hr_downs(lab: &Lab) -> Vec<(String, u64)> {
    lab.plan
        .routers
        .iter()
        .map(|r| {
            let s = mwctl(&r.socket, &["stats"]).unwrap();
            (r.name.clone(), s["rrp"]["hr_down"].as_u64().unwrap())
        })
        .collect()
}

/// What the kernel dropped before ad's port `port` read it.
fn rx_missed(lab: &Lab, port: usize) -> u64 {
    let ad = lab.plan.routers.iter().find(|r| r.name == "ad").unwrap();
    let s = mwctl(&ad.socket, &["stats"]).unwrap();
    s["ports"][port]["rx_missed"]
        .as_u64()
        .unwrap_or_else(|| panic!("no rx_missed: {s}"))
}

/// ad's D port's packets of `class`, in all (punted or dropped).
fn class_total(punt: &Value, port: usize, class: &str) -> u64 {
    let r = punt["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["port"] == port && r["class"] == class)
        .unwrap_or_else(|| panic!("no {class} row for port {port}: {punt}"));
    ["punted", "over_rate", "ring_full", "over_share"]
        .iter()
        .map(|k| r[*k].as_u64().unwrap())
        .sum()
}

#[test]
fn a_strangers_flood_of_each_kind_costs_its_class_only() {
    let (lab, _tmp) = common::appendix_b(LabManagement::default(), lab_timers());
    let ad = lab.plan.routers.iter().find(|r| r.name == "ad").unwrap();
    let (port, (_, bind)) = ad
        .hrs
        .iter()
        .enumerate()
        .find(|(_, (a, _))| *a == TARGET.0)
        .unwrap();
    let bind = bind.clone();
    let downs_before = hr_downs(&lab);
    let mut h0 = host_client(&lab.plan, "H0").unwrap();
    let mut probes = 0;
    let mut report = Vec::new();

    for round in rounds() {
        let punt_before = mwctl(&ad.socket, &["show", "punt"]).unwrap();
        let missed_before = rx_missed(&lab, port);
        ok(h0
            .request(&json!({"cmd": "send", "dst": 0x0108, "count": PROBES, "rate_pps": 400, "wait": false}))
            .unwrap());
        probes += PROBES;
        // The stranger floods for as long as the probes take (5 s).
        let stop = Arc::new(AtomicBool::new(false));
        let flooder = {
            let stop = stop.clone();
            let bind = bind.clone();
            let packets: Vec<Vec<u8>> = round.packets.iter().map(|(p, _)| p.clone()).collect();
            std::thread::spawn(move || {
                let s = UdpSocket::bind("127.0.0.1:0").unwrap();
                let mut sent = vec![0u64; packets.len()];
                while !stop.load(Ordering::Relaxed) {
                    for (i, p) in packets.iter().enumerate() {
                        if s.send_to(p, bind.as_str()).is_ok() {
                            sent[i] += 1;
                        }
                    }
                }
                (s.local_addr().unwrap(), sent)
            })
        };
        // ad's admin socket, asked while the flood runs.
        let mut answers = Vec::new();
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(4_500) {
            let t = Instant::now();
            mwctl(&ad.socket, &["show", "router"]).unwrap();
            answers.push(t.elapsed());
            std::thread::sleep(Duration::from_millis(250));
        }
        let punt_during = mwctl(&ad.socket, &["show", "punt"]).unwrap();
        while start.elapsed() < Duration::from_millis(PROBES * 1000 / 400) {
            std::thread::sleep(Duration::from_millis(50));
        }
        stop.store(true, Ordering::Relaxed);
        let (from, sent) = flooder.join().unwrap();

        let got = common::probes_received(&lab, "H8", "0x0100", probes, 20);
        if got != probes {
            common::print_drops(&lab);
        }
        assert_eq!(got, probes, "{}: every probe arrived", round.name);

        answers.sort();
        let median = answers[answers.len() / 2];
        assert!(
            median < Duration::from_millis(100),
            "{}: ad's admin socket answered in {answers:?}",
            round.name
        );

        // The flood is counted in its class on that port (what the
        // kernel dropped before the port read it counted there too), and
        // its source named the heaviest of the class.
        let punt_after = mwctl(&ad.socket, &["show", "punt"]).unwrap();
        let missed = rx_missed(&lab, port) - missed_before;
        for ((_, class), n) in round.packets.iter().zip(&sent) {
            let Some(class) = class else { continue };
            let counted =
                class_total(&punt_after, port, class) - class_total(&punt_before, port, class);
            assert!(
                // The class also has the SAN's own requests, a few a second.
                counted <= n + 1_000 && counted + missed >= *n,
                "{}: {counted} of {n} counted in {class}, {missed} missed by the port: {punt_after}",
                round.name
            );
            let heaviest = punt_during["sources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["class"] == *class)
                .unwrap_or_else(|| panic!("{}: no {class} source: {punt_during}", round.name));
            assert_eq!(heaviest["source"], from.to_string(), "{punt_during}");
        }
        report.push(format!(
            "{}: sent {sent:?}, admin median {median:?}, max {:?}",
            round.name,
            answers.last().unwrap()
        ));
    }

    assert_eq!(hr_downs(&lab), downs_before, "no HR-DOWN anywhere");
    common::accounting_balances(&lab);
    eprintln!("{}", report.join("\n"));
    lab.down().unwrap();
}
