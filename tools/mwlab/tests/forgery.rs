//! The forgery that cut SAN A off from SAN E, on the Appendix B lab with no
//! keys (docs/rrp.md "What a router accepts"): while H0 sends 4000 probes
//! to H8 at 400 pps, a stranger on 127.0.0.1 (no member of any SAN) sends
//! ad's D-side HR (0x011a), every 0.5 s for 8 s, a forged HR-DOWN naming
//! de's D-side HR (0x0121), a forged RT for SAN E (cheaper, newer) and a
//! forged LINK-DOWN, each with the SA of bd1 (0x011c, a real buddy). Every
//! probe arrives; ad counts each forged datagram as a spoofed source on
//! that port, and its accounting balances.

mod common;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use mwlab::lab::{host_client, mwctl};
use mwlab::plan::{LabManagement, lab_timers};
use rrp::Address;
use rrp::wire::{Message, RouteTable, SourceRoute};
use serde_json::{Value, json};

fn ok(v: Value) -> Value {
    assert_eq!(v["ok"], true, "{v}");
    v
}

fn forged(m: &Message) -> Vec<u8> {
    m.to_packet(Address(0x011a), Address(0x011c))
        .unwrap()
        .to_bytes()
        .unwrap()
}

#[test]
fn forged_hr_down_rt_and_link_down_from_a_stranger_change_nothing() {
    let (lab, _tmp) = common::appendix_b(LabManagement::default(), lab_timers());
    let ad = lab.plan.routers.iter().find(|r| r.name == "ad").unwrap();
    let (port, (_, bind)) = ad
        .hrs
        .iter()
        .enumerate()
        .find(|(_, (a, _))| *a == 0x011a)
        .unwrap();
    let stats = || mwctl(&ad.socket, &["stats"]).unwrap();
    let before = stats();

    let hr_down = forged(&Message::HrDown {
        hr: Address(0x0121),
    });
    let rt = forged(&Message::RouteTable(RouteTable {
        san_id: Address(0x0205),
        sn: 0x7fff,
        csr: SourceRoute {
            q: 0,
            route: rrp::route::Route(vec![]).to_l2rhs(),
            mtu: None,
        },
        rcvf: vec![Address(0x011c)],
        nodes: vec![],
    }));
    let link_down = forged(&Message::LinkDown {
        a: Address(0x0121),
        b: Address(0x0122),
    });

    let mut h0 = host_client(&lab.plan, "H0").unwrap();
    ok(h0
        .request(
            &json!({"cmd": "send", "dst": 0x0108, "count": 4000, "rate_pps": 400, "wait": false}),
        )
        .unwrap());
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut sent = 0u64;
    let start = Instant::now();
    for i in 0..16u32 {
        while start.elapsed() < Duration::from_millis(500 * u64::from(i)) {
            std::thread::sleep(Duration::from_millis(10));
        }
        for p in [&hr_down, &rt, &link_down] {
            stranger.send_to(p, bind.as_str()).unwrap();
            sent += 1;
        }
    }
    let got = common::probes_received(&lab, "H8", "0x0100", 4000, 20);
    assert_eq!(got, 4000, "every probe arrived while the forgery ran");

    let after = stats();
    let port_of = |s: &Value| s["ports"][port].clone();
    let spoofed = |s: &Value| port_of(s)["drops"]["spoofed-source"].as_u64().unwrap();
    assert_eq!(spoofed(&after) - spoofed(&before), sent, "{after}");
    let rrp = |s: &Value, k: &str| s["rrp"][k].as_u64().unwrap();
    assert_eq!(
        rrp(&after, "hr_down"),
        rrp(&before, "hr_down"),
        "no HR-DOWN taken"
    );
    assert_eq!(
        rrp(&after, "rts_deleted_down"),
        rrp(&before, "rts_deleted_down")
    );
    let p = port_of(&after);
    let n = |k: &str| p[k].as_u64().unwrap();
    assert_eq!(
        n("received"),
        n("forwarded") + n("dropped") + n("punted"),
        "{p}"
    );
    lab.down().unwrap();
}
