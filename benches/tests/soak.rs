//! The soak's pieces that need no long run (benches/src/e2e/soak/): the
//! accounting fails when a packet or a probe is unaccounted for, the
//! options parse as documented, the configurations it writes are valid and
//! what each reload changes applies live, capture files are counted with
//! mwdump's reader, and the e2e binary keeps the soak parts alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use admin::view::CounterRow;
use benches::e2e::mwgen::RunOutcome;
use benches::e2e::soak::accounting::{
    self, GeneratorPath, KernelUdp, ProbeLoss, check_each_port, unaccounted,
};
use benches::e2e::soak::captures::pcap_packets;
use benches::e2e::soak::configs::{self, Sockets};
use benches::e2e::soak::options::{Impairment, Mode, SoakOptions, parse_streams};
use benches::e2e::soak::{Checks, Outcome};
use control::config::Config;
use mwlab::plan::{Plan, Wiring, lab_timers};
use mwsim::topology::Topology;
use rrp::counters::PortStats;
use rrp::{DropReason, PortId};
use serde_json::Value;

fn row(port: u16, received: u64, forwarded: u64, drops: &[(&str, u64)], punted: u64) -> CounterRow {
    let mut stats = PortStats {
        received,
        forwarded,
        punted,
        ..PortStats::default()
    };
    for (k, n) in drops {
        stats.dropped[DropReason::from_name(k).expect("a drop reason")] = *n;
    }
    CounterRow {
        port: PortId(port),
        stats,
    }
}

fn tx(mut r: CounterRow, transmitted: u64, injected: u64) -> CounterRow {
    r.stats.transmitted = transmitted;
    r.stats.injected = injected;
    r
}

fn ok(checks: &Checks, name: &str) -> bool {
    checks
        .get(name)
        .unwrap_or_else(|| panic!("no check {name:?}: {checks:?}"))
        .ok
}

#[test]
fn a_port_balances_only_when_every_packet_is_accounted_for() {
    let good = row(0, 1000, 990, &[("tx-full", 7)], 3);
    assert_eq!(unaccounted(&good), 0);
    let mut lost = good.clone();
    lost.stats.received += 1;
    assert_eq!(unaccounted(&lost), 1);
    let mut over = good.clone();
    over.stats.dropped[DropReason::TxFull] += 1;
    assert_eq!(unaccounted(&over), -1);

    let mut checks = Checks::quiet();
    check_each_port(&[(0, good), (1, lost)].into_iter().collect(), &mut checks);
    assert!(ok(
        &checks,
        "port 0: received = forwarded + dropped + punted"
    ));
    assert!(!ok(
        &checks,
        "port 1: received = forwarded + dropped + punted"
    ));
    assert!(!checks.passed());
}

/// mwgen sent 1000 probes: 995 forwarded to port 1 and received, 5 dropped
/// on port 0 for a full egress ring; port 1 also injected 10 sweeps.
fn generator_path() -> GeneratorPath {
    GeneratorPath {
        run: RunOutcome {
            sent: 1000,
            received: 995,
            unique: 995,
            lost: 5,
            ..RunOutcome::default()
        },
        port0: row(0, 1000, 995, &[("tx-full", 5), ("no-route", 0)], 0),
        port1: tx(row(1, 0, 0, &[], 0), 1005, 10),
        port2: tx(row(2, 40, 0, &[], 40), 12, 12),
    }
}

const PATH_CHECKS: [&str; 5] = [
    "mwgen's probes all reach the router (memif A)",
    "what the router forwards reaches mwgen (memif B)",
    "mwgen's loss = the router's drops",
    "drops on the generator's path only for a full egress ring",
    "nothing forwarded towards the buddy",
];

#[test]
fn the_generators_loss_is_the_routers_drops() {
    let mut checks = Checks::quiet();
    generator_path().check(&mut checks);
    assert_eq!(checks.items().len(), PATH_CHECKS.len());
    assert!(checks.passed(), "{checks:?}");

    // A probe lost that no counter explains.
    let mut p = generator_path();
    p.run.lost += 1;
    let mut checks = Checks::quiet();
    p.check(&mut checks);
    assert_eq!(checks.failed(), ["mwgen's loss = the router's drops"]);

    // Lost in memif B: forwarded out of port 1, never received by mwgen.
    let mut p = generator_path();
    p.run.lost += 1;
    p.run.unique -= 1;
    p.run.received -= 1;
    let mut checks = Checks::quiet();
    p.check(&mut checks);
    assert_eq!(
        checks.failed(),
        ["what the router forwards reaches mwgen (memif B)"]
    );

    // Lost in memif A: sent, never received by port 0.
    let mut p = generator_path();
    p.run.sent += 2;
    p.run.lost += 2;
    let mut checks = Checks::quiet();
    p.check(&mut checks);
    assert_eq!(
        checks.failed(),
        ["mwgen's probes all reach the router (memif A)"]
    );
    assert_eq!(p.explained(), 7);

    // A drop for another reason than a full ring; a packet towards the buddy.
    let mut p = generator_path();
    p.port0 = row(0, 1000, 994, &[("tx-full", 5), ("no-route", 1)], 0);
    p.port2.stats.transmitted += 1;
    p.run.received = 994;
    p.run.unique = 994;
    p.run.lost = 6;
    p.port1.stats.transmitted -= 1;
    let mut checks = Checks::quiet();
    p.check(&mut checks);
    assert_eq!(
        checks.failed(),
        [
            "drops on the generator's path only for a full egress ring",
            "nothing forwarded towards the buddy"
        ]
    );
    // Duplicates are never the router's.
    let mut p = generator_path();
    p.run.duplicated = 1;
    let mut checks = Checks::quiet();
    p.check(&mut checks);
    assert_eq!(checks.failed(), ["mwgen's loss = the router's drops"]);
}

#[test]
fn the_probes_loss_is_the_impairments_the_routers_and_the_kernels() {
    let loss = ProbeLoss {
        sent: 10_000,
        unique: 9_700,
        duplicated: 95,
        reordered: 120,
        impairment_lost: 100,
        impairment_duplicated: 95,
        impairment_reordered: 99,
        router_drops: [("no-route".to_string(), 180), ("loop".to_string(), 15)]
            .into_iter()
            .collect(),
        kernel: KernelUdp {
            rcvbuf_errors: 5,
            ..KernelUdp::default()
        },
    };
    assert_eq!(loss.unexplained(), 0);
    let mut checks = Checks::quiet();
    loss.check(&mut checks);
    assert!(checks.passed(), "{checks:?}");

    // One probe more lost than the counters say.
    let mut one = loss.clone();
    one.unique -= 1;
    assert_eq!(one.unexplained(), 1);
    let mut checks = Checks::quiet();
    one.check(&mut checks);
    assert_eq!(checks.failed(), ["probe loss explained by counters"]);

    // The routers dropped other packets too: explained.
    let mut more = loss.clone();
    more.router_drops.insert("tx-full".into(), 3);
    let mut checks = Checks::quiet();
    more.check(&mut checks);
    assert!(checks.passed());

    // A duplicate the impairment did not make.
    let mut dup = loss;
    dup.duplicated += 1;
    let mut checks = Checks::quiet();
    dup.check(&mut checks);
    assert_eq!(checks.failed(), ["duplicates = the impairment's"]);
}

#[test]
fn unbalanced_ports_are_named_by_router() {
    let mut routers = BTreeMap::new();
    routers.insert(
        "ab".to_string(),
        [(0, row(0, 10, 10, &[], 0)), (1, row(1, 5, 4, &[], 0))]
            .into_iter()
            .collect(),
    );
    assert_eq!(
        accounting::unbalanced(&routers),
        ["ab port 1: 5 != 4 + 0 + 0"]
    );
}

#[test]
fn a_delta_subtracts_every_counter_and_reason() {
    let before = row(0, 10, 8, &[("tx-full", 2)], 0);
    let after = row(0, 25, 20, &[("tx-full", 4), ("no-route", 1)], 0);
    let d = accounting::delta(&before, &after);
    assert_eq!((d.received, d.forwarded, d.dropped_total()), (15, 12, 3));
    assert_eq!(d.drops()["tx-full"], 2);
    assert_eq!(d.drops()["no-route"], 1);
}

#[test]
fn an_outcome_exits_0_1_or_2() {
    let mut checks = Checks::quiet();
    checks.add("a", true, "");
    let mut o = Outcome {
        checks: checks.clone(),
        report: Value::Null,
        error: None,
    };
    assert_eq!(o.exit_code(), 0);
    o.checks.add("b", false, "");
    assert_eq!(o.exit_code(), 1);
    assert_eq!(o.verdict(), "soak: 1 check(s) failed: b");
    o.error = Some("no router".into());
    assert_eq!(o.exit_code(), 2);
}

#[test]
fn options_parse_with_their_defaults() {
    let d = SoakOptions::parse(Mode::Default, &[] as &[&str]).unwrap();
    assert_eq!(d.mode, Some(Mode::Default));
    assert_eq!(
        (
            d.minutes,
            d.flap_every,
            d.reload_every,
            d.capture_every,
            d.sample_every
        ),
        (10.0, 3.0, 5.0, 4.0, 10.0)
    );
    assert_eq!((d.max_log_per_min, d.rss_slack_kb), (300, 4096));
    assert_eq!((d.fraction, d.search_trial), (0.9, Duration::from_secs(2)));
    assert_eq!((d.worker_core, d.control_core, d.gen_core), (0, 1, 1));
    assert_eq!(d.streams.len(), 8);
    assert_eq!(d.streams[0], ("H0".to_string(), "H9".to_string()));
    assert!(!d.any_given());

    let o = SoakOptions::parse(
        Mode::Lab,
        &[
            "--minutes",
            "2",
            "--rate-pps",
            "1e6",
            "--search-trial",
            "500ms",
            "--impair",
            "loss=0.05,dup=0",
            "--streams",
            "H0>H9",
            "--seed",
            "7",
            "--flap-every",
            "0",
            "--topology",
            "t.toml",
            "--patience",
            "0",
            "--size",
            "imix",
        ],
    )
    .unwrap();
    assert_eq!(o.minutes, 2.0);
    assert_eq!(o.duration(), Duration::from_secs(120));
    assert_eq!(o.rate_pps, Some(1e6));
    assert_eq!(o.search_trial, Duration::from_millis(500));
    assert_eq!(
        o.impair,
        Impairment {
            loss: 0.05,
            duplicate: 0.0,
            reorder: 0.0
        }
    );
    assert_eq!(o.streams, [("H0".to_string(), "H9".to_string())]);
    assert_eq!((o.seed, o.flap_every), (7, 0.0));
    assert_eq!(o.topology, Some(PathBuf::from("t.toml")));
    assert_eq!((o.patience, o.size.as_str()), (Duration::ZERO, "imix"));
    assert!(o.any_given());

    for bad in [
        &["--minutes", "0"][..],
        &["--minutes"],
        &["--impair", "loss=2"],
        &["--impair", "jitter=0.1"],
        &["--streams", "H0-H9"],
        &["--streams", "H0>H0"],
        &["--fraction", "1.5"],
        &["--search-trial", "soon"],
        &["--seed", "-1"],
        &["--quick"],
    ] {
        assert!(SoakOptions::parse(Mode::Default, bad).is_err(), "{bad:?}");
    }
    assert_eq!(parse_streams("A>B, C>D").unwrap().len(), 2);
}

fn sockets(dir: &Path) -> Sockets {
    Sockets {
        a: dir.join("a.sock"),
        b: dir.join("b.sock"),
        c: dir.join("c.sock"),
    }
}

#[test]
fn the_routers_configurations_are_valid_and_each_reload_applies_live() {
    let dir = Path::new("/tmp/mwrouter-soak-test");
    let eal: Vec<String> = ["--no-huge", "-m", "512", "--no-shconf", "--no-pci"]
        .map(String::from)
        .to_vec();
    let plain = configs::router(&eal, 0, 0, &sockets(dir), &dir.join("r.sock"), false);
    let toggled = configs::router(&eal, 0, 0, &sockets(dir), &dir.join("r.sock"), true);
    for c in [&plain, &toggled] {
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(Config::from_toml(&c.to_toml()).as_ref(), Ok(c));
        assert_eq!(c.hrs.len(), 3);
        assert_eq!(c.workers.control_cores, Some(vec![0]));
    }
    assert_eq!(plain.timers.refresh_ms, 3000);
    assert_eq!(toggled.timers.refresh_ms, 3300);
    assert_eq!(toggled.hrs[2].statics.len(), 1);
    // What a reload changes applies live, both ways.
    let plan = plain.diff_for_reload(&toggled).expect("applies live");
    assert_eq!(plan.changes.len(), 2, "{:?}", plan.changes);
    assert_eq!(plan.statics.len(), 1);
    let back = toggled.diff_for_reload(&plain).expect("applies live");
    assert_eq!(back.changes.len(), 2, "{:?}", back.changes);

    let buddy = configs::buddy(0, &dir.join("c.sock"), &dir.join("b.sock"));
    assert_eq!(buddy.validate(), Ok(()));
    assert_eq!(Config::from_toml(&buddy.to_toml()), Ok(buddy.clone()));
    assert_eq!(buddy.hrs.len(), 5);
    assert!(buddy.hrs[1..].iter().all(|h| h.statics.len() == 1));

    // The lab's timers, the toggled refresh apart.
    assert_eq!(plain.timers, lab_timers());
    assert_eq!(buddy.timers, lab_timers());
}

#[test]
fn a_lab_routers_toggled_static_entry_applies_live() {
    let topo = Topology::from_toml(mwlab::cli::APPENDIX_B).unwrap();
    let plan = Plan::new(
        topo,
        &std::env::temp_dir().join("mwrouter-soak-test-lab"),
        lab_timers(),
        Wiring::Udp,
    )
    .unwrap();
    for i in 0..plan.routers.len() {
        let base = plan.daemon_config(i);
        let on = configs::with_lab_static(&base, 0x01f3);
        assert_eq!(on.validate(), Ok(()));
        assert_eq!(Config::from_toml(&on.to_toml()), Ok(on.clone()));
        let last = on.hrs.last().unwrap();
        assert_eq!(last.statics.last().unwrap().address.0, 0x01f3);
        base.diff_for_reload(&on).expect("adds live");
        on.diff_for_reload(&base).expect("removes live");
    }
}

#[test]
fn capture_files_are_counted_with_mwdumps_reader() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = mwdump::capture::PcapWriter::in_memory(1);
    for i in 0..3u8 {
        w.push(1, u32::from(i), &[i; 60]);
    }
    let mut bytes = w.finish();
    let path = dir.path().join("c.pcap");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(pcap_packets(&path), Some(3));
    // A last record cut short (a capture killed while writing).
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(pcap_packets(&path), Some(2));
    std::fs::write(&path, b"not a capture").unwrap();
    assert_eq!(pcap_packets(&path), None);
    assert_eq!(pcap_packets(&dir.path().join("none.pcap")), None);
}

fn e2e(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_e2e"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn the_e2e_binary_runs_the_soak_parts_alone() {
    let (code, text) = e2e(&["--help"]);
    assert_eq!(code, 0);
    assert!(text.contains("--part soak|soak-lab") && text.contains("--impair"));
    for (args, says) in [
        (&["--part", "soak,1"][..], "run alone"),
        (&["--part", "soak", "--minutes", "0"], "--minutes 0"),
        (&["--minutes", "2"], "need --part soak"),
        (&["--part", "soak-lab", "--impair", "x=1"], "--impair"),
        (&["--part", "nope"], "soak-lab"),
    ] {
        let (code, text) = e2e(args);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
    }
}
