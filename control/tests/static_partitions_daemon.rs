//! End to end: partitions enforced by mwrouterd from its configuration on
//! SANs without a SAN manager (`management.static_partitions`,
//! docs/partitions.md "Without a SAN manager"), on loopback UDP between
//! three hosts. Packets within a partition are forwarded; those whose
//! destination is not a member, whose ends are both limited members, or
//! whose source claims a membership it does not have are dropped and
//! counted under `partition`; `mwctl show partitions` says where the
//! tables come from; a reload without them opens the SANs again.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::time::Duration;

use control::config::{Config, StaticPartitions};
use mgmt::partition::{Membership, PartitionKey};
use rrp::Address;
use rrp::router::Timers;
use serde_json::Value;

mod common;

use common::{data_in, free_ports, host, mwctl, wait_for};

const X: u16 = 0x0501;
const Y: u16 = 0x0502;
const Z: u16 = 0x0503;
const FULL: u16 = 0x8000;
const TENANT: u16 = 0x0010;
const DEFAULT: u16 = 0x7FFF;

fn table(hr: u16, node: u16, t: &[(u16, Membership)]) -> StaticPartitions {
    StaticPartitions {
        hr: Address(hr),
        node: Address(node),
        table: t
            .iter()
            .map(|(k, m)| (PartitionKey::new(*k).unwrap(), *m))
            .collect(),
    }
}

/// X on SAN 0x0601 (a full member of the tenant, a limited one of the
/// default partition), Y (a limited member of the tenant) and Z (a full
/// member of the default partition only) on SAN 0x0602.
fn config(dir: &Path, r: [u16; 2], h: [u16; 3], with_tables: bool) -> Config {
    let mut c = common::two_hr_box("statics", dir, r, [&[h[0]], &[h[1], h[2]]]);
    c.timers = Timers {
        keepalive_ms: 300,
        advertise_ms: 50,
        fib_ms: 10,
        ..Timers::default()
    };
    if with_tables {
        c.management.static_partitions = vec![
            table(
                0x0511,
                X,
                &[(TENANT, Membership::Full), (DEFAULT, Membership::Limited)],
            ),
            table(0x0512, Y, &[(TENANT, Membership::Limited)]),
            table(0x0512, Z, &[(DEFAULT, Membership::Full)]),
        ];
    }
    c
}

fn partition_drops(sock: &Path) -> u64 {
    let (code, out, err) = mwctl(sock, &["--json", "stats"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["drops"]["partition"].as_u64().unwrap_or(0))
        .sum()
}

/// `stats`' packets refused per partition key and ingress port, as
/// `(key, port, dropped)`.
fn drops_by_key(sock: &Path) -> Vec<(String, u64, u64)> {
    let (code, out, err) = mwctl(sock, &["--json", "stats"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_string(),
                r["port"].as_u64().unwrap(),
                r["dropped"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn configured_tables_are_enforced_where_no_manager_gives_any() {
    let dir = tempfile::tempdir().unwrap();
    let [r0, r1, p1, p2, p3] = free_ports();
    let (x, y, z) = (host(X, p1), host(Y, p2), host(Z, p3));
    let cfg = dir.path().join("statics.toml");
    std::fs::write(
        &cfg,
        config(dir.path(), [r0, r1], [p1, p2, p3], true).to_toml(),
    )
    .unwrap();
    let sock = dir.path().join("mw.sock");
    let _daemon = common::start(&cfg, &sock, Stdio::null());
    let to_r0: SocketAddr = format!("127.0.0.1:{r0}").parse().unwrap();
    let arrived = |h: &common::Host, tag: u8| {
        h.received
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.data.first() == Some(&tag))
            .count()
    };

    // Within the tenant, X (full) to Y (limited): forwarded once both
    // hosts are known.
    wait_for("X -> Y in the tenant", 15, || {
        let _ = x.sock.send_to(&data_in(Y, X, 1, FULL | TENANT), to_r0);
        std::thread::sleep(Duration::from_millis(30));
        arrived(&y, 1) > 0
    });
    wait_for("X -> Z, the default partition", 15, || {
        let _ = x.sock.send_to(&data_in(Z, X, 2, DEFAULT), to_r0);
        std::thread::sleep(Duration::from_millis(30));
        arrived(&z, 2) > 0
    });
    let (code, out, _) = mwctl(&sock, &["--json", "show", "partitions"]);
    assert_eq!(code, 0, "{out}");
    let rows: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rows[0]["source"], "configured", "{rows}");
    assert_eq!(rows[1]["nodes"], 2, "{rows}");
    assert_eq!(rows[0]["open"], false, "{rows}");

    // Refused: Y not a member claimed limited by X (both limited), Z not
    // a member of the tenant, X claiming full in the default partition
    // (unmarked) where it is limited.
    let before = partition_drops(&sock);
    for _ in 0..10 {
        let _ = x.sock.send_to(&data_in(Y, X, 3, TENANT), to_r0);
        let _ = x.sock.send_to(&data_in(Z, X, 4, FULL | TENANT), to_r0);
        let _ = x.sock.send_to(&data_in(Z, X, 5, 0), to_r0);
    }
    wait_for("30 partition drops", 5, || {
        partition_drops(&sock) >= before + 30
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(arrived(&y, 3) + arrived(&z, 4) + arrived(&z, 5), 0);
    assert_eq!(partition_drops(&sock), before + 30);

    // The same drops by partition key and ingress port, in `stats` and
    // its text; `clear counters` clears them.
    assert_eq!(before, 0);
    assert_eq!(
        drops_by_key(&sock),
        [("0x0010".to_string(), 0, 20), ("0x7fff".to_string(), 0, 10)]
    );
    let (code, out, err) = mwctl(&sock, &["stats"]);
    assert_eq!(code, 0, "{out}{err}");
    println!("$ mwctl stats\n{out}");
    let table = out.split("\npartition drops\n").nth(1).expect(&out);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .take(3)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["key", "port", "dropped"],
            vec!["0x0010", "0", "20"],
            vec!["0x7fff", "0", "10"]
        ]
    );
    let (code, out, err) = mwctl(&sock, &["clear", "counters"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(drops_by_key(&sock), []);
    let _ = x.sock.send_to(&data_in(Y, X, 3, TENANT), to_r0);
    wait_for("one partition drop after the clear", 5, || {
        drops_by_key(&sock) == [("0x0010".to_string(), 0, 1)]
    });

    // Reloaded without the tables: open again, the unmarked packet passes.
    std::fs::write(
        &cfg,
        config(dir.path(), [r0, r1], [p1, p2, p3], false).to_toml(),
    )
    .unwrap();
    let (code, out, err) = mwctl(&sock, &["reload"]);
    assert_eq!(code, 0, "{out}{err}");
    wait_for("X -> Z unmarked, open", 10, || {
        let _ = x.sock.send_to(&data_in(Z, X, 6, 0), to_r0);
        std::thread::sleep(Duration::from_millis(30));
        arrived(&z, 6) > 0
    });
    for h in [&x, &y, &z] {
        h.stop.store(true, Ordering::Relaxed);
    }
}
