//! mwrouterd under a stranger's flood of management datagrams: the flood is
//! cut to its source's share of the management class and counted there,
//! the flooder is named among the heaviest sources (`mwctl show punt`,
//! the stats area, Prometheus, the log within its rate limit)
//! (docs/dataplane.md "Punt classes").

use std::net::UdpSocket;
use std::path::Path;
use std::time::Instant;

use mgmt::attr::NodeInfo;
use mgmt::wire::{MadRepr, Method, MgmtClass, mad_packet};
use rrp::Address;

mod common;

/// The HR the flood is aimed at (port 0 of `common::two_hr_box`).
const HR0: Address = Address(0x0511);

fn node_info_get(src: Address) -> Vec<u8> {
    let mad = MadRepr::new(MgmtClass::SUBN, Method::GET, 7, NodeInfo::ID, 0)
        .to_bytes()
        .expect("a MAD");
    mad_packet(HR0, src, &mad).expect("a packet")
}

fn show_punt(sock: &Path) -> serde_json::Value {
    let (code, out, err) = common::mwctl(sock, &["--json", "show", "punt"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("JSON")
}

#[test]
fn a_management_flood_is_cut_to_its_share_and_its_source_named() {
    let dir = tempfile::tempdir().unwrap();
    let [r0, r1, h1, h2, flood] = common::free_ports();
    let mut c = common::two_hr_box("punt", dir.path(), [r0, r1], [&[h1], &[h2]]);
    // A small management budget, so that a test can exceed it surely.
    c.rates.punt.management = rrp::PuntBudget::new(800, 80);
    let cfg = dir.path().join("punt.toml");
    std::fs::write(&cfg, c.to_toml()).unwrap();
    let sock = dir.path().join("mw.sock");
    let log = dir.path().join("mwrouterd.log");
    let _daemon = common::start(&cfg, &sock, std::fs::File::create(&log).unwrap().into());
    common::wait_for("the admin socket", 10, || {
        common::mwctl(&sock, &["show", "router"]).0 == 0
    });

    // A stranger (no member of the SAN) sends 20,000 NodeInfo Gets as fast
    // as it can; the management class's rate is 800/s, a source's 100/s.
    let tx = UdpSocket::bind(("127.0.0.1", flood)).unwrap();
    let pkt = node_info_get(Address(0x0150));
    let start = Instant::now();
    for _ in 0..20_000 {
        let _ = tx.send_to(&pkt, ("127.0.0.1", r0));
    }
    let sent_for = start.elapsed();

    // Within the second, the flooder is the heaviest source of its class,
    // with most of what it sent dropped; counted on port 0.
    let mut seen = serde_json::Value::Null;
    common::wait_for("the flooder among the heaviest sources", 5, || {
        seen = show_punt(&sock);
        seen["sources"].as_array().is_some_and(|s| {
            s.iter()
                .any(|s| s["class"] == "management" && s["source"] == format!("127.0.0.1:{flood}"))
        })
    });
    let src = seen["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["class"] == "management")
        .unwrap()
        .clone();
    assert_eq!(src["port"], 0, "{seen}");
    assert_eq!(src["link"], "udp", "{seen}");
    let offered = src["offered_per_s"].as_u64().unwrap();
    let dropped = src["dropped_per_s"].as_u64().unwrap();
    assert!(offered > 1_000, "{sent_for:?}: {seen}");
    assert!(dropped > offered / 2, "{seen}");
    let row = seen["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["port"] == 0 && r["class"] == "management")
        .unwrap()
        .clone();
    let punted = row["punted"].as_u64().unwrap();
    let over_share = row["over_share"].as_u64().unwrap();
    // The source's share: a burst of 10, then 100 a second.
    assert!(punted <= 10 + 100 * (sent_for.as_secs() + 2), "{row}");
    assert!(over_share > 10_000, "{row}");
    assert_eq!(seen["budgets"]["management"]["per_s"], 800);

    // The stats area and Prometheus name it too.
    let area = sock.with_extension("stats").display().to_string();
    common::wait_for("the flooder in the stats area", 5, || {
        let (code, out, _) = common::mwctl(&sock, &["--json", "stats", "--area", &area]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        code == 0
            && v["punt_sources"].as_array().is_some_and(|s| {
                s.iter()
                    .any(|s| s["source"] == format!("127.0.0.1:{flood}"))
            })
    });
    let (code, text) = common::mwctl_all(&sock, &["stats", "--prometheus"]);
    assert_eq!(code, 0);
    assert!(
        text.lines().any(|l| l.starts_with(
            "mwrouter_punt_source_offered_packets_per_second{class=\"management\",port=\"0\""
        ) && l.contains(&format!("127.0.0.1:{flood}"))),
        "{text}"
    );
    let (code, table) = common::mwctl_all(&sock, &["show", "punt"]);
    assert_eq!(code, 0);
    assert!(table.contains("heaviest sources now"), "{table}");
    assert!(table.contains(&format!("127.0.0.1:{flood}")), "{table}");

    // And the log says so, once (one line a source a minute).
    let needle = format!("packets for the box dropped: 127.0.0.1:{flood} on port 0");
    common::wait_for("the flood in the log", 5, || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains(&needle))
    });
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches(&needle).count(), 1, "{text}");
}
