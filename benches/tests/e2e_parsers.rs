//! The parts of benches/e2e that read other programs' output: testpmd's
//! `show port stats all` and mwgen's JSON search and run reports (produced
//! here by the real mwgen on its in-memory wire, so that a schema change
//! breaks this test and not a benchmark or soak run).

use std::process::Command;

use benches::e2e::mwgen::{parse_run, parse_search};
use benches::e2e::testpmd::parse_port_stats;

const SHOW_PORT_STATS: &str = "
  ######################## NIC statistics for port 0  ########################
  RX-packets: 99408640   RX-missed: 3          RX-bytes:  6362152960
  RX-errors: 1
  RX-nombuf:  2
  TX-packets: 0          TX-errors: 0          TX-bytes:  0

  Throughput (since last show)
  Rx-pps:     11160746          Rx-bps:   5714302192
  Tx-pps:            0          Tx-bps:            0
  ############################################################################

  ######################## NIC statistics for port 1  ########################
  RX-packets: 0          RX-missed: 0          RX-bytes:  0
  RX-errors: 0
  RX-nombuf:  0
  TX-packets: 99332416   TX-errors: 7          TX-bytes:  6357274624

  Throughput (since last show)
  Rx-pps:            0          Rx-bps:            0
  Tx-pps:     11150001          Tx-bps:   5708800512
  ############################################################################
";

#[test]
fn testpmd_port_stats() {
    let s = parse_port_stats(SHOW_PORT_STATS);
    assert_eq!(s.len(), 2);
    let (p0, a) = s[0];
    assert_eq!(p0, 0);
    assert_eq!(
        (
            a.rx_packets,
            a.rx_missed,
            a.rx_bytes,
            a.rx_errors,
            a.rx_nombuf,
            a.rx_pps
        ),
        (99_408_640, 3, 6_362_152_960, 1, 2, 11_160_746)
    );
    let (p1, b) = s[1];
    assert_eq!(p1, 1);
    assert_eq!(
        (b.tx_packets, b.tx_errors, b.tx_pps),
        (99_332_416, 7, 11_150_001)
    );
    let d = b.delta(&Default::default());
    assert_eq!(d.tx_packets, 99_332_416);
    assert!(parse_port_stats("testpmd> ").is_empty());
}

#[test]
fn mwgen_search_report() {
    let mwgen = testkit::workspace_bin("mwgen", "mwgen", &[]);
    let out = Command::new(mwgen)
        .args([
            "--tx",
            "mem",
            "--search",
            "--trials",
            "1",
            "--trial-duration",
            "100ms",
            "--precision",
            "50",
            "--json",
            "-",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = parse_search(&v).unwrap();
    assert!(s.max_pps > 0.0);
    assert_eq!(s.ndr_pps, s.max_pps, "a lossless wire passes at max");
    assert_eq!(s.pdr_pps, s.max_pps);
    let l = s.latency.expect("a latency run at 50 % of the NDR");
    assert!(l.at_pps > 0.0 && l.p50 <= l.max);
    assert!(s.trials >= 1);
    assert!(parse_search(&serde_json::json!({"run": {}})).is_err());
}

#[test]
fn mwgen_run_report() {
    let mwgen = testkit::workspace_bin("mwgen", "mwgen", &[]);
    let out = Command::new(mwgen)
        .args([
            "--tx",
            "mem",
            "--rate",
            "20000pps",
            "--duration",
            "200ms",
            "--json",
            "-",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = parse_run(&v).unwrap();
    assert!(r.sent > 0);
    // A lossless wire: every probe back once.
    assert_eq!((r.received, r.unique, r.lost), (r.sent, r.sent, 0));
    assert_eq!((r.duplicated, r.reordered), (0, 0));
    assert!(r.duration_s > 0.0 && r.tx_pps > 0.0);
    assert!(r.latency_ns.get("p50").is_some());
    assert!(parse_run(&serde_json::json!({"search": {}})).is_err());
}
