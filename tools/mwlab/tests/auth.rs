//! A keyed MessageWay (docs/configuration.md "Authentication"): the
//! Appendix B lab with a key on every SAN converges as it does without,
//! hosts and routers signing what they send; the forgery of the issue that
//! cut SAN A off from SAN E (a stranger's HR-DOWN to ad's D-side HR naming
//! de's HR, with a real buddy's SA), and a forged RT, are refused, counted
//! and change nothing: every probe from H0 to H8 arrives.

mod common;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use mwlab::lab::{Lab, host_client, mwctl};
use mwlab::plan::{LabManagement, lab_timers};
use rrp::Address;
use rrp::wire::{Message, RouteTable, SourceRoute};
use serde_json::{Value, json};

fn ok(v: Value) -> Value {
    assert_eq!(v["ok"], true, "{v}");
    v
}

fn rrp(lab: &Lab, name: &str) -> Value {
    let r = lab.plan.routers.iter().find(|r| r.name == name).unwrap();
    mwctl(&r.socket, &["stats"]).unwrap()["rrp"].clone()
}

#[test]
fn a_keyed_lab_converges_and_refuses_the_forged_hr_down_and_rt() {
    // One key per SAN.
    let (lab, _tmp) = common::appendix_b_with(LabManagement::default(), lab_timers(), |t| {
        for (i, s) in t.sans.iter_mut().enumerate() {
            s.key = Some(format!("{:02x}", i + 1).repeat(20));
        }
    });
    assert!(rrp(&lab, "ad")["auth_verified"].as_u64().unwrap() > 0);

    // ad's HR on SAN D (0x011a) and where it listens.
    let ad = lab.plan.routers.iter().find(|r| r.name == "ad").unwrap();
    let (_, bind) = ad.hrs.iter().find(|(a, _)| *a == 0x011a).unwrap();
    let forger = UdpSocket::bind("127.0.0.1:0").unwrap();
    let hr_down = Message::HrDown {
        hr: Address(0x0121),
    }
    .to_packet(Address(0x011a), Address(0x011c))
    .unwrap()
    .to_bytes()
    .unwrap();
    // An RT "from bd1" offering SAN E cheaper and newer.
    let rt = Message::RouteTable(RouteTable {
        san_id: Address(0x0205),
        sn: 0x7fff,
        csr: SourceRoute {
            q: 0,
            route: rrp::route::Route(vec![]).to_l2rhs(),
            mtu: None,
        },
        rcvf: vec![Address(0x011c)],
        nodes: vec![],
    })
    .to_packet(Address(0x011a), Address(0x011c))
    .unwrap()
    .to_bytes()
    .unwrap();
    let before = rrp(&lab, "ad");

    // H0 -> H8, 1000 probes at 400 pps, while the forgery runs.
    let mut h0 = host_client(&lab.plan, "H0").unwrap();
    ok(h0
        .request(
            &json!({"cmd": "send", "dst": 0x0108, "count": 1000, "rate_pps": 400, "wait": false}),
        )
        .unwrap());
    let mut forged = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(2400) {
        forger.send_to(&hr_down, bind.as_str()).unwrap();
        forger.send_to(&rt, bind.as_str()).unwrap();
        forged += 2;
        std::thread::sleep(Duration::from_millis(200));
    }
    let got = common::probes_received(&lab, "H8", "0x0100", 1000, 15);
    assert_eq!(got, 1000, "every probe arrived while the forgery ran");
    let after = rrp(&lab, "ad");
    let d = |k: &str| after[k].as_u64().unwrap() - before[k].as_u64().unwrap();
    assert_eq!(d("auth_refused_missing"), forged, "{after}");
    assert_eq!(d("hr_down"), 0, "no HR-DOWN taken: {after}");
    assert_eq!(d("rts_deleted_down"), 0, "{after}");
    lab.down().unwrap();
}
