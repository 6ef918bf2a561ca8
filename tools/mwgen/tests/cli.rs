//! The mwgen binary: runs and searches on the in-memory wire with its
//! impairment, pcap writing (decoded by mwdump) and replay, a run on two
//! cores over DPDK ring vdevs, and the errors and exit codes of bad
//! arguments and ports that cannot be opened.

use std::process::Command;

use serde_json::Value;

fn mwgen(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mwgen"))
        .args(args)
        .output()
        .expect("running mwgen");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--json", "-", "-q"]);
    let (code, out, err) = mwgen(&all);
    assert_eq!(code, 0, "mwgen {args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn a_run_reports_what_the_wire_lost() {
    let v = json(&[
        "--tx",
        "mem",
        "--impair",
        "loss=0.05,dup=0.01,seed=3",
        "--count",
        "20000",
        "--size",
        "imix",
    ]);
    let r = &v["run"];
    assert_eq!(v["mode"], "run");
    assert_eq!(r["tx"]["sent"], 20000);
    let (lost, unique) = (r["lost"].as_u64().unwrap(), r["unique"].as_u64().unwrap());
    assert_eq!(lost + unique, 20000);
    assert!(lost > 700 && lost < 1300, "{lost}");
    assert!(r["rx"]["duplicated"].as_u64().unwrap() > 100);
    assert_eq!(r["ei"][0]["value"], "0x0");
    assert_eq!(v["profile"]["cycle"], 12);
    for k in ["min", "p50", "p90", "p99", "p999", "max"] {
        assert!(r["latency_ns"][k].is_u64(), "{k}");
    }
}

#[test]
fn a_search_finds_no_ndr_under_random_loss_and_pdr_at_max() {
    // Random loss at every rate: no rate is loss-free, and 0.2 % is below
    // the PDR threshold of 0.5 %, so the PDR is the maximum.
    let v = json(&[
        "--tx",
        "mem",
        "--impair",
        "loss=0.002,seed=9",
        "--search",
        "--trials",
        "1",
        "--trial-duration",
        "300ms",
        "--precision",
        "20",
    ]);
    let s = &v["search"];
    let max = s["max_pps"].as_f64().unwrap();
    assert!(max > 10_000.0, "{max}");
    assert!(s["ndr"]["pps"].as_f64().unwrap() < 0.2 * max, "{s}");
    assert_eq!(s["pdr"]["pps"].as_f64().unwrap(), max);
    let trials = s["trials"].as_array().unwrap();
    assert_eq!(trials[0]["phase"], "max");
    assert!(trials.iter().any(|t| t["phase"] == "ndr"));
    // Every trial belongs to one rate, whose verdict the rule gives: with
    // the default three tries, a rate passes at a passing try and fails
    // after two failed ones.
    assert_eq!(s["tries"], 3);
    let rates = s["rates"].as_array().unwrap();
    assert_eq!(rates[0]["phase"], "max");
    let mut next = 0;
    for r in rates {
        let tries = r["tries"].as_array().unwrap();
        for (k, i) in tries.iter().enumerate() {
            assert_eq!(i.as_u64(), Some(next), "{r}");
            assert_eq!(trials[next as usize]["try"].as_u64(), Some(k as u64));
            next += 1;
        }
        let last = &trials[tries.last().unwrap().as_u64().unwrap() as usize];
        let (passed, failed) = (r["passed"].as_u64().unwrap(), r["failed"].as_u64().unwrap());
        assert_eq!(passed + failed, tries.len() as u64);
        match r["verdict"].as_str().unwrap() {
            "pass" => assert!(passed == 1 && failed < 2 && last["pass"] == true, "{r}"),
            "fail" => assert!(passed == 0 && failed == 2, "{r}"),
            v => panic!("{v}"),
        }
    }
    assert_eq!(next as usize, trials.len());
    assert!(s["ndr"]["spread"].is_f64() && s["pdr"]["spread"].is_f64());
    // CSV: a header and one row per trial (and the latency run, if any).
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let (code, _, err) = mwgen(&[
        "--tx",
        "mem",
        "--search",
        "--trials",
        "1",
        "--trial-duration",
        "100ms",
        "--precision",
        "50",
        "--csv",
        csv.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("phase,search,offered_pps"));
    assert!(text.lines().count() >= 2);
}

#[test]
fn written_pcaps_decode_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("l2.pcap");
    let (code, _, err) = mwgen(&[
        "--write-pcap",
        f.to_str().unwrap(),
        "--to",
        "02:00:00:00:01:01",
        "--dst",
        "0x0230-0x0233",
        "--l2",
        "0x0102@02:00:00:00:02:30",
        "--size",
        "64",
        "--count",
        "100",
    ]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&f).unwrap();
    let cap = mwdump::capture::read(&bytes).unwrap();
    assert_eq!(cap.frames.len(), 100);
    for (i, fr) in cap.frames.iter().enumerate() {
        assert_eq!(fr.data.len(), 64);
        assert_eq!(&fr.data[..6], &[2, 0, 0, 0, 1, 1]);
        let p = rrp::wire::PacketRepr::parse(&fr.data[14..]).unwrap();
        assert_eq!(p.l2rhs.len(), 1);
        assert_eq!(p.header.dst.0, 0x0230 + (i % 4) as u16);
        assert_eq!(p.header.packet_type.0, mwgen::probe::PROBE_PT);
    }
    // Replayed through the in-memory wire: every probe comes back.
    let v = json(&[
        "--pcap",
        f.to_str().unwrap(),
        "--tx",
        "mem",
        "--count",
        "1000",
    ]);
    assert_eq!(v["run"]["unique"], 1000);
    assert_eq!(v["run"]["lost"], 0);
    assert_eq!(v["profile"]["cycle"], 100);
}

/// `--partition` marks every packet's Free, which the probe leaves alone:
/// the written frames carry it, and a run with it counts every probe.
#[test]
fn partition_marks_every_packet() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.pcap");
    let (code, _, err) = mwgen(&[
        "--write-pcap",
        f.to_str().unwrap(),
        "--size",
        "64,1500",
        "--count",
        "10",
        "--partition",
        "0x0010:limited",
    ]);
    assert_eq!(code, 0, "{err}");
    let cap = mwdump::capture::read(&std::fs::read(&f).unwrap()).unwrap();
    assert_eq!(cap.frames.len(), 10);
    for fr in &cap.frames {
        let p = rrp::wire::PacketRepr::parse(&fr.data[14..]).unwrap();
        assert_eq!(p.header.free, 0x0010);
    }
    let v = json(&[
        "--tx",
        "mem",
        "--count",
        "500",
        "--latency-every",
        "1",
        "--partition",
        "0x0010",
    ]);
    assert_eq!(v["profile"]["partition"], "0x0010");
    assert_eq!(v["run"]["unique"], 500);
    assert_eq!(v["run"]["rx"]["duplicated"], 0);
    assert_eq!(v["run"]["rx"]["reordered"], 0);
    let v = json(&["--tx", "mem", "--count", "5", "--partition", "none"]);
    assert!(v["profile"].get("partition").is_none(), "{v}");
}

#[test]
fn bad_arguments_exit_2_with_a_message_that_names_them() {
    for (args, says) in [
        (vec!["--tx", "mem", "--rate", "fast"], "--rate"),
        (vec!["--tx", "mem", "--size", "10"], "--size"),
        (vec!["--tx", "mem", "--dst", "0x0001"], "--dst"),
        (vec!["--tx", "bogus"], "bogus"),
        (vec!["--rate", "1000"], "--tx"),
        (vec!["--tx", "mem", "--l2", "0x0102@nowhere"], "--l2"),
        (vec!["--tx", "mem", "--impair", "loss=2"], "--impair"),
        (vec!["--tx", "mem", "--to", "zz"], "--to"),
        (
            vec!["--tx", "udp:127.0.0.1:0", "--rx", "mem"],
            "one backend",
        ),
        (
            vec!["--tx", "udp:127.0.0.1:0", "--impair", "loss=0.1"],
            "--impair",
        ),
        (
            vec![
                "--tx",
                "mem",
                "--l2",
                "0x0102@02:00:00:00:02:30",
                "--size",
                "40",
            ],
            "smallest is",
        ),
        (vec!["--tx", "mem", "--search", "--count", "5"], "--count"),
        (vec!["--tx", "mem", "--search", "--tries", "0"], "--tries"),
        (vec!["--tx", "mem", "--search", "--tries", "10"], "--tries"),
        (vec!["--tx", "mem", "--search", "--tries", "x"], "--tries"),
        (vec!["--tx", "mem", "--cores", "2"], "--cores needs DPDK"),
        (vec!["--tx", "mem", "--cores", "0"], "--cores"),
        (vec!["--tx", "mem", "--cores", "65"], "--cores"),
        (
            vec!["--tx", "dpdk:net_null0", "--cores", "2", "--search"],
            "one core",
        ),
        (
            vec!["--tx", "mem", "--latency-every", "3"],
            "--latency-every",
        ),
        (vec!["--tx", "mem", "--partition", "0x8000"], "--partition"),
        (
            vec!["--tx", "mem", "--partition", "0x10:half"],
            "--partition",
        ),
    ] {
        let (code, _, err) = mwgen(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn a_port_that_cannot_open_is_named() {
    // 192.0.2.1 (TEST-NET-1) is not an address of this machine: the bind
    // fails at once and nothing is sent.
    let (code, _, err) = mwgen(&["--tx", "udp:192.0.2.1:9", "--count", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--tx udp:192.0.2.1:9: cannot open"), "{err}");
    let (code, _, err) = mwgen(&["--tx", "af_packet:mwgen-none0", "--count", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--tx af_packet:mwgen-none0: cannot open"),
        "{err}"
    );
}

/// `--cores 2` over a DPDK ring looped back to itself (each core's queue
/// receives what it sends): one merged report of every probe, each core's
/// part beside it, latency from one probe in 16.
#[test]
fn two_cores_over_a_dpdk_ring_merge_into_one_report() {
    let eal = "--no-huge -m 1024 --no-pci --no-shconf --no-telemetry --log-level=warning";
    let args = vec![
        "--eal",
        eal,
        "--tx",
        "dpdk:net_ring0",
        "--cores",
        "2",
        "--rate",
        "2Mpps",
        "--count",
        "200001",
        "--warmup",
        "100ms",
        "--drain",
        "300ms",
    ];
    let (code, _, err) = mwgen(&args);
    if code == 2 && err.contains("built without DPDK") {
        testkit::skip(
            "mwgen::cli::two_cores_over_a_dpdk_ring_merge_into_one_report",
            "mwgen built without DPDK",
        );
        return;
    }
    assert_eq!(code, 0, "{err}");
    let v = json(&args);
    let r = &v["run"];
    assert_eq!(r["tx"]["sent"], 200_001);
    assert_eq!(r["unique"], 200_001);
    assert_eq!(r["lost"], 0);
    assert_eq!(r["rx"]["duplicated"], 0);
    // Numbers 0, 16, 32, ... of each stream: 6,251 and 6,250.
    assert_eq!(r["latency_ns"]["count"], 12_501);
    let cores = v["cores"].as_array().expect("each core's part");
    assert_eq!(cores.len(), 2);
    let sent: Vec<u64> = cores
        .iter()
        .map(|c| c["tx"]["sent"].as_u64().unwrap())
        .collect();
    assert_eq!(sent, [100_001, 100_000]);
    let received: u64 = cores
        .iter()
        .map(|c| c["rx"]["received"].as_u64().unwrap())
        .sum();
    assert_eq!(received, 200_001);
}
