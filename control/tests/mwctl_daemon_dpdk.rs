//! mwrouterd on DPDK vdevs (net_null, no traffic): starts its EAL, ports,
//! pinned worker (every other thread off its core) and control thread,
//! answers mwctl, stops cleanly; two workers owning pcap ports; and
//! `mwctl trace-packets` on a pcap port. Skipped (a failure under
//! MWROUTER_REQUIRE_ALL=1) when mwrouterd was built without the `dpdk`
//! feature.

use std::process::Command;
use std::time::{Duration, Instant};

use common::mwctl_all;
use control::config::{Config, DpdkPortConfig, DpdkSection, HrSection, IdleMode, PortConfig};
use rrp::NativeAddr;
use rrp::router::StaticNode;

mod common;

/// Each live thread of process `pid`: its name and `Cpus_allowed_list`.
fn thread_cores(pid: u32) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or("")
            .trim()
            .to_string();
        // A thread that ended while being read (an admin client's).
        if !comm.is_empty() && !cpus.is_empty() {
            v.push((comm.trim().to_string(), cpus));
        }
    }
    v
}

#[test]
fn mwrouterd_on_dpdk_vdevs() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("mw.sock");
    let null_hr = |address, san_id, device: &str| {
        HrSection::new(
            address,
            san_id,
            1500,
            PortConfig::Dpdk(DpdkPortConfig::new(device)),
        )
    };
    let mut cfg = Config::new(
        "e2e-dpdk",
        vec![
            null_hr(0x0711, 0x0701, "net_null0,no-rx=1"),
            null_hr(0x0712, 0x0702, "net_null1,no-rx=1"),
        ],
    );
    cfg.dpdk = Some(DpdkSection {
        eal_args: testkit::dpdk_eal_args(),
    });
    cfg.workers.count = 1;
    cfg.workers.cores = Some(vec![1]);
    cfg.workers.idle = IdleMode::Adaptive;
    cfg.admin.socket = sock.clone();
    let cfg = cfg.to_toml();
    let path = dir.path().join("router.toml");
    std::fs::write(&path, cfg).unwrap();
    let mwrouterd = common::mwrouterd();
    if !mwrouterd.exists() {
        testkit::skip("mwctl::daemon_dpdk", "mwrouterd is not built");
        return;
    }
    let Some(mut child) = start(
        Command::new(&mwrouterd).arg("--config").arg(&path),
        &sock,
        "mwctl::daemon_dpdk",
    ) else {
        return;
    };
    let (code, out) = mwctl_all(&sock, &["--json", "show", "ports"]);
    assert_eq!(code, 0, "{out}");
    let ports: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(ports.as_array().unwrap().len(), 2);
    assert_eq!(ports[0]["backend"], "dpdk");
    let (code, out) = mwctl_all(&sock, &["--json", "show", "router"]);
    assert_eq!(code, 0, "{out}");

    // The worker on its core, every other thread (EAL's too) off it.
    let threads = thread_cores(child.id());
    let (workers, others): (Vec<_>, Vec<_>) = threads
        .iter()
        .partition(|(name, _)| name.starts_with("mw-worker"));
    assert_eq!(workers.len(), 1, "{threads:?}");
    assert_eq!(workers[0].1, "1", "{threads:?}");
    assert!(
        others.iter().any(|(n, _)| n.starts_with("eal-intr")),
        "{threads:?}"
    );
    assert!(others.iter().all(|(_, c)| c == "0"), "{threads:?}");

    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let st = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "mwrouterd did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(st.success(), "{st}");
    assert!(!sock.exists());
}

// ------------------------------------------------- more than one worker

/// MACs of the three ports and of the node the traffic goes to.
const MAC: [[u8; 6]; 3] = [
    [0x02, 0, 0, 0, 0x08, 0x11],
    [0x02, 0, 0, 0, 0x08, 0x12],
    [0x02, 0, 0, 0, 0x08, 0x13],
];
const SINK_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x08, 0x33];
/// The senders on SAN A (port 0) and SAN B (port 1).
const SRC_A: u16 = 0x0A01;
const SRC_B: u16 = 0x0B01;
/// Frames in each input file (each replayed once per receive queue).
const FRAMES: usize = 50;

/// A pcap of `FRAMES` L3 data packets from `src` to the sink node 0x0833,
/// addressed to port `port`'s MAC, from senders of different MACs.
fn input_pcap(port: usize, src: u16) -> Vec<u8> {
    use rrp::Address;
    use rrp::kind::PacketType;
    use rrp::wire::{HeaderRepr, PacketRepr};
    let mut w = mwdump::capture::PcapWriter::in_memory(1);
    for i in 0..FRAMES {
        let p = PacketRepr {
            l2rhs: Vec::new(),
            header: HeaderRepr {
                dst: Address(0x0833),
                src: Address(src),
                packet_type: PacketType(0x0100),
                ..Default::default()
            },
            data: vec![i as u8; 40],
            ei: 0,
        };
        let mut f = MAC[port].to_vec();
        f.extend_from_slice(&[0x02, 0, 0, 0, port as u8, i as u8]);
        f.extend_from_slice(&0x88B5u16.to_be_bytes());
        f.extend_from_slice(&p.to_bytes().unwrap());
        w.push(1, i as u32, &f);
    }
    w.into_inner()
}

/// The data packets of a pcap written by the router: their sources.
fn sources(path: &std::path::Path) -> Vec<u16> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let Ok(cap) = mwdump::capture::read(&bytes) else {
        return Vec::new();
    };
    cap.frames
        .iter()
        .filter(|f| f.data.len() > 14 && f.data[..6] == SINK_MAC)
        .filter_map(|f| rrp::wire::PacketRepr::parse(&f.data[14..]).ok())
        .map(|p| p.header.src.0)
        .collect()
}

/// mwrouterd started by `cmd` and answering on `sock`, or `None` after
/// reporting a skip for `test` when it was built without the dpdk feature.
fn start(cmd: &mut Command, sock: &std::path::Path, test: &str) -> Option<testkit::ChildGuard> {
    match testkit::spawn_until_ready(cmd, sock, Duration::from_secs(20)) {
        Ok(c) => Some(testkit::ChildGuard::new(c)),
        Err(e) if e.code == Some(2) && e.stderr.contains("--features dpdk") => {
            testkit::skip(test, "mwrouterd built without the dpdk feature");
            None
        }
        Err(e) => panic!("mwrouterd {e}"),
    }
}

/// HR `0x0811 + port` on SAN `0x0801 + port` over the DPDK device
/// `device`, with the port's MAC.
fn pcap_hr(port: usize, device: String) -> HrSection {
    let mut d = DpdkPortConfig::new(&device);
    d.mac = Some(MAC[port]);
    HrSection::new(
        0x0811 + port as u16,
        0x0801 + port as u16,
        1500,
        PortConfig::Dpdk(d),
    )
}

/// `empty.pcap` in `d`: a capture file without packets, for a pcap vdev
/// that receives nothing.
fn write_empty_pcap(d: &std::path::Path) {
    std::fs::write(
        d.join("empty.pcap"),
        mwdump::capture::PcapWriter::in_memory(1).into_inner(),
    )
    .unwrap();
}

/// Two workers on three pcap ports: HR 0 and HR 1 replay a file each (on
/// two receive queues), HR 2 writes what it transmits, one file per
/// transmit queue, i.e. per worker. The vdevs take no flow rules, so each
/// port is received from by one worker (`owners`, default `i mod 2`), which
/// polls both its queues: every packet of HR 0 leaves through the
/// transmit queue of HR 0's owner, and the same of HR 1. `show ports` and
/// `show workers` say who receives from what; the log says why no rules.
#[test]
fn two_workers_own_ports_on_pcap_vdevs() {
    let mwrouterd = common::mwrouterd();
    for owners in [None, Some([1usize, 0, 0])] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("in0.pcap"), input_pcap(0, SRC_A)).unwrap();
        std::fs::write(d.join("in1.pcap"), input_pcap(1, SRC_B)).unwrap();
        write_empty_pcap(d);
        let p = |n: &str| d.join(n).display().to_string();
        let sock = d.join("mw.sock");
        let mut out_hr = pcap_hr(
            2,
            format!(
                "net_pcap2,rx_pcap={empty},rx_pcap={empty},tx_pcap={out0},tx_pcap={out1}",
                empty = p("empty.pcap"),
                out0 = p("out0.pcap"),
                out1 = p("out1.pcap"),
            ),
        );
        out_hr.statics.push(StaticNode {
            address: rrp::Address(0x0833),
            native: NativeAddr::mac(SINK_MAC),
            name: Some(b"sink".to_vec()),
            capabilities: Vec::new(),
            groups: Vec::new(),
        });
        let mut cfg = Config::new(
            "two-workers",
            vec![
                pcap_hr(
                    0,
                    format!("net_pcap0,rx_pcap={0},rx_pcap={0}", p("in0.pcap")),
                ),
                pcap_hr(
                    1,
                    format!("net_pcap1,rx_pcap={0},rx_pcap={0}", p("in1.pcap")),
                ),
                out_hr,
            ],
        );
        cfg.dpdk = Some(DpdkSection {
            eal_args: [
                "--no-huge",
                "-m",
                "512",
                "--no-pci",
                "--no-shconf",
                "--no-telemetry",
                "--log-level=warning",
            ]
            .map(String::from)
            .to_vec(),
        });
        cfg.workers.count = 2;
        cfg.workers.idle = IdleMode::Adaptive;
        cfg.workers.owners = owners.map(|o| o.to_vec());
        cfg.admin.socket = sock.clone();
        let cfg = cfg.to_toml();
        let path = d.join("router.toml");
        std::fs::write(&path, cfg).unwrap();
        let Some(child) = start(
            Command::new(&mwrouterd)
                .arg("--config")
                .arg(&path)
                .stderr(std::process::Stdio::piped()),
            &sock,
            "mwctl::daemon_dpdk::two_workers",
        ) else {
            return;
        };
        let owner = owners.unwrap_or([0, 1, 0]);

        // Every input frame arrives (2 queues x FRAMES per input port).
        let deadline = Instant::now() + Duration::from_secs(10);
        let workers = loop {
            let (code, out) = mwctl_all(&sock, &["--json", "show", "workers"]);
            assert_eq!(code, 0, "{out}");
            let w: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
            let received: u64 = (0..2).map(|i| w[i]["received"].as_u64().unwrap()).sum();
            if received >= 4 * FRAMES as u64 || Instant::now() > deadline {
                break w;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        for (hr, &o) in owner.iter().enumerate() {
            let rx = &workers[o]["receives"];
            assert!(
                rx.as_array().unwrap().iter().any(|p| p == hr),
                "worker {o} should receive from HR {hr}: {workers}"
            );
        }
        for w in 0..2 {
            let want = owner[..2].iter().filter(|&&o| o == w).count() as u64 * 2 * FRAMES as u64;
            assert_eq!(workers[w]["received"], want, "worker {w}: {workers}");
        }
        let (code, out) = mwctl_all(&sock, &["--json", "show", "ports"]);
        assert_eq!(code, 0, "{out}");
        let ports: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        for (hr, &o) in owner.iter().enumerate() {
            assert_eq!(ports[hr]["receive"], format!("worker {o}"), "{ports}");
        }
        let (code, table) = mwctl_all(&sock, &["show", "workers"]);
        assert_eq!(code, 0, "{table}");
        assert!(table.contains("receives"), "{table}");
        assert!(table.contains("cycles/pkt"), "{table}");
        // Where the cycles went: each worker received in bursts, on passes
        // whose cycles count as busy, and polled idle between them.
        for w in 0..2 {
            let r = &workers[w];
            let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k}: {r}"));
            assert!(n("bursts") > 0 && n("bursts") <= n("received"), "{r}");
            assert!(n("polls") >= n("bursts") / 2 && n("idle_polls") > 0, "{r}");
            assert!(n("busy_cycles") > 0 && n("idle_cycles") > 0, "{r}");
            assert!(n("tsc_hz") > 100_000_000, "{r}");
            assert!(r["cycles_per_packet"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["average_burst"].as_f64().unwrap() >= 1.0, "{r}");
        }
        // `clear counters` clears them (no traffic after the pcaps ran dry).
        let (code, out) = mwctl_all(&sock, &["clear", "counters"]);
        assert_eq!(code, 0, "{out}");
        let (code, out) = mwctl_all(&sock, &["--json", "show", "workers"]);
        assert_eq!(code, 0, "{out}");
        let after: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        for w in 0..2 {
            assert_eq!(after[w]["received"], 0, "{after}");
            assert_eq!(after[w]["busy_cycles"], 0, "{after}");
            assert_eq!(after[w]["tsc_hz"], workers[w]["tsc_hz"], "a gauge: {after}");
        }

        let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let out = child.into_inner().wait_with_output().unwrap();
        assert!(out.status.success(), "{}", out.status);
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            log.contains("receives from worker") && log.contains("rte_flow_validate"),
            "the log says who receives and why no rules:\n{log}"
        );

        // What each worker forwarded left on its own transmit queue.
        let (q0, q1) = (sources(&d.join("out0.pcap")), sources(&d.join("out1.pcap")));
        let from = |w: usize| if owner[0] == w { SRC_A } else { SRC_B };
        assert_eq!(q0.len(), 2 * FRAMES, "queue 0: {q0:?}");
        assert_eq!(q1.len(), 2 * FRAMES, "queue 1: {q1:?}");
        assert!(q0.iter().all(|&s| s == from(0)), "queue 0: {q0:x?}");
        assert!(q1.iter().all(|&s| s == from(1)), "queue 1: {q1:x?}");
    }
}

// ------------------------------------------------------- packet traces

/// A pcap of L3 data packets to port 0's MAC, to the sink node 0x0833
/// (behind HR 1) and to 0x0777 (no route) in turn.
fn trace_input_pcap() -> Vec<u8> {
    use rrp::Address;
    use rrp::kind::PacketType;
    use rrp::wire::{HeaderRepr, PacketRepr};
    let mut w = mwdump::capture::PcapWriter::in_memory(1);
    for i in 0..8u8 {
        let p = PacketRepr {
            l2rhs: Vec::new(),
            header: HeaderRepr {
                dst: Address(if i % 2 == 0 { 0x0833 } else { 0x0777 }),
                src: Address(SRC_A),
                packet_type: PacketType(0x0100),
                ..Default::default()
            },
            data: vec![i; 40],
            ei: 0,
        };
        let mut f = MAC[0].to_vec();
        f.extend_from_slice(&[0x02, 0, 0, 0, 0x0A, 1]);
        f.extend_from_slice(&0x88B5u16.to_be_bytes());
        f.extend_from_slice(&p.to_bytes().unwrap());
        w.push(1, u32::from(i), &f);
    }
    w.into_inner()
}

/// `mwctl trace-packets` on DPDK ports: HR 0 replays a pcap without end
/// (`infinite_rx`), one worker forwards its packets to the sink behind
/// HR 1 or drops them for no route, and the traces say so: the FIB's
/// next hop and the sink's MAC, EI, the verdict; then the drops.
#[test]
fn trace_packets_on_pcap_vdevs() {
    let mwrouterd = common::mwrouterd();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.pcap"), trace_input_pcap()).unwrap();
    write_empty_pcap(d);
    let p = |n: &str| d.join(n).display().to_string();
    let sock = d.join("mw.sock");
    let mut out_hr = pcap_hr(
        1,
        format!("net_pcap1,rx_pcap={},tx_pcap=/dev/null", p("empty.pcap")),
    );
    out_hr.statics.push(StaticNode {
        address: rrp::Address(0x0833),
        native: NativeAddr::mac(SINK_MAC),
        name: Some(b"sink".to_vec()),
        capabilities: Vec::new(),
        groups: Vec::new(),
    });
    let mut cfg = Config::new(
        "trace-dpdk",
        vec![
            pcap_hr(
                0,
                format!(
                    "net_pcap0,rx_pcap={},infinite_rx=1,tx_pcap=/dev/null",
                    p("in.pcap")
                ),
            ),
            out_hr,
        ],
    );
    cfg.dpdk = Some(DpdkSection {
        eal_args: testkit::dpdk_eal_args(),
    });
    cfg.workers.count = 1;
    cfg.workers.idle = IdleMode::Adaptive;
    cfg.admin.socket = sock.clone();
    let path = d.join("router.toml");
    std::fs::write(&path, cfg.to_toml()).unwrap();
    let Some(child) = start(
        Command::new(&mwrouterd).arg("--config").arg(&path),
        &sock,
        "mwctl::daemon_dpdk::trace_packets",
    ) else {
        return;
    };

    // Two routed packets, as JSON lines: start, the packets, the summary.
    let (code, out, err) = common::mwctl(
        &sock,
        &["--json", "trace-packets", "0", "-c", "2", "--dst", "0x0833"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let items: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(items.len(), 4, "{out}");
    assert_eq!(items[0]["kind"], "start");
    for p in &items[1..3] {
        assert_eq!(p["kind"], "packet", "{p}");
        assert_eq!(
            (p["port"].as_u64(), p["worker"].as_u64()),
            (Some(0), Some(0))
        );
        assert_eq!(p["src"], rrp::Address(SRC_A).to_string(), "{p}");
        assert_eq!(p["dst"], "0x0833");
        assert_eq!(p["lookup"]["kind"], "l3", "{p}");
        assert!(p["lookup"]["entry"]["next_hop"].as_u64().is_some(), "{p}");
        assert_eq!(p["next_hop"]["port"], 1);
        assert_eq!(p["next_hop"]["hr"], "0x0812");
        assert_eq!(p["next_hop"]["native"], "02:00:00:00:08:33");
        assert_eq!(
            (p["ei_before"].as_u64(), p["ei_after"].as_u64()),
            (Some(0), Some(0))
        );
        assert_eq!(p["egress"], 1);
        assert_eq!(p["verdict"]["kind"], "forwarded", "{p}");
    }
    assert_eq!(items[3]["recorded"], 2);
    assert_eq!(items[3]["ended"], "count");

    // The others, dropped for no route; forwarding goes on.
    let (code, out) = mwctl_all(&sock, &["trace-packets", "-c", "1", "--dst", "0x0777"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("  lookup: L3 in FIB version "), "{out}");
    assert!(out.contains("  verdict: dropped: no-route\n"), "{out}");
    assert!(out.ends_with("1 of 1 packet traced\n"), "{out}");

    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let out = child.into_inner().wait_with_output().unwrap();
    assert!(out.status.success(), "{}", out.status);
}
