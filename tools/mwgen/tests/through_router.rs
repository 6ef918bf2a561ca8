//! mwgen through a real mwrouterd on each backend: loopback UDP (always),
//! AF_PACKET on veth pairs (root), DPDK memif (mwrouterd and mwgen built
//! with `--features dpdk`). mwgen sends L3 and L2 probes into one HR and
//! receives them from the other; nothing may be lost, duplicated or
//! reordered at these modest rates, every probe arrives with EI 0 (no
//! router saw an error; the router shifted a 0 in), and the router's own
//! counters agree with mwgen's.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use admin::LogLevel;
use control::config::{
    AfPacketPortConfig, Config, DpdkPortConfig, DpdkSection, HrSection, IdleMode, PortConfig,
    UdpPortConfig,
};
use rrp::router::StaticNode;
use rrp::{Address, NativeAddr};
use serde_json::Value;

/// A running mwrouterd, stopped (SIGKILL if need be) on drop.
struct Router {
    child: Child,
    sock: PathBuf,
}

impl Router {
    /// Starts mwrouterd with `config` (its admin socket and log level set
    /// here), written as mwrouterd's own configuration type emits it.
    fn start(dir: &Path, mut config: Config) -> Result<Router, String> {
        let sock = dir.join("mw.sock");
        config.admin.socket = sock.clone();
        config.log.level = LogLevel::Warn;
        let path = dir.join("router.toml");
        std::fs::write(&path, config.to_toml()).unwrap();
        let bin = testkit::workspace_bin("control", "mwrouterd", &[]);
        let child = testkit::spawn_until_ready(
            Command::new(bin).arg("--config").arg(&path),
            &sock,
            Duration::from_secs(20),
        )
        .map_err(|e| format!("mwrouterd {e}"))?;
        Ok(Router { child, sock })
    }

    /// Forwarded packets of HR `hr`, from `mwctl stats --json`.
    fn stats(&self) -> Value {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = mwctl::main_with(
            [
                "mwctl",
                "--socket",
                self.sock.to_str().unwrap(),
                "--json",
                "stats",
            ],
            &mut out,
            &mut err,
        );
        assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
        serde_json::from_slice(&out).unwrap()
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mwgen(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mwgen"))
        .args(args)
        .args(["--json", "-", "-q"])
        .output()
        .expect("running mwgen");
    assert!(
        out.status.success(),
        "mwgen {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Checks a clean run of `n` probes and returns it.
fn clean(v: &Value, n: u64) -> &Value {
    let r = &v["run"];
    assert_eq!(r["tx"]["sent"], n, "{r}");
    assert_eq!(r["tx"]["refused"], 0, "{r}");
    assert_eq!(r["unique"], n, "{r}");
    assert_eq!(r["lost"], 0, "{r}");
    assert_eq!(r["rx"]["duplicated"], 0, "{r}");
    assert_eq!(r["rx"]["reordered"], 0, "{r}");
    assert_eq!(r["ei"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["ei"][0]["value"], "0x0");
    assert!(r["latency_ns"]["min"].as_u64().unwrap() > 0);
    r
}

/// The router forwarded every probe mwgen sent, by whichever path.
fn router_agrees(router: &Router, n: u64) {
    let s = router.stats();
    let text = s.to_string();
    // Port 0 received the probes and forwarded them (L3 and L2 alike).
    let p0 = &s["ports"][0];
    let fwd = p0["forwarded"]
        .as_u64()
        .unwrap_or_else(|| panic!("no forwarded count: {text}"));
    assert!(fwd >= n, "router forwarded {fwd} < {n}: {text}");
}

/// The router under test, "gen-test": HR 0x0101 (SAN 0x0201) with the
/// generator's sending end 0x0130 as a static entry, HR 0x0102 (SAN 0x0202)
/// with its receiving end 0x0230. `ports` are the two HRs' ports, `gens`
/// the generator ends' native addresses.
fn two_hrs(ports: [PortConfig; 2], gens: [NativeAddr; 2]) -> Config {
    let hrs = ports
        .into_iter()
        .zip(gens)
        .zip(1u16..)
        .map(|((port, native), i)| {
            let mut hr = HrSection::new(0x0100 + i, 0x0200 + i, 1500, port);
            hr.statics.push(StaticNode {
                address: Address(0x0030 + 0x0100 * i),
                native,
                name: None,
                capabilities: Vec::new(),
                groups: Vec::new(),
            });
            hr
        })
        .collect();
    Config::new("gen-test", hrs)
}

fn udp_port(port: u16) -> PortConfig {
    PortConfig::Udp(UdpPortConfig::new(loopback(port)))
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

fn free_udp<const N: usize>() -> [u16; N] {
    let v = ports::udp::free_loopback_ports(N).expect("free ports");
    v.try_into().expect("N ports")
}

#[test]
fn udp_l3_and_l2_through_mwrouterd() {
    let dir = tempfile::tempdir().unwrap();
    let [r0, r1, g0, g1] = free_udp();
    let config = two_hrs(
        [udp_port(r0), udp_port(r1)],
        [NativeAddr::udp(loopback(g0)), NativeAddr::udp(loopback(g1))],
    );
    let router = Router::start(dir.path(), config).unwrap();
    let (tx, rx, to) = (
        format!("udp:127.0.0.1:{g0}"),
        format!("udp:127.0.0.1:{g1}"),
        format!("127.0.0.1:{r0}"),
    );
    let l3 = mwgen(&[
        "--tx", &tx, "--rx", &rx, "--to", &to, "--dst", "0x0230", "--size", "64-1400", "--rate",
        "20kpps", "--count", "10000", "--warmup", "300ms",
    ]);
    clean(&l3, 10_000);
    let hop = format!("0x0102@127.0.0.1:{g1}");
    let l2 = mwgen(&[
        "--tx", &tx, "--rx", &rx, "--to", &to, "--l2", &hop, "--dst", "0x0230", "--size", "imix",
        "--rate", "20kpps", "--count", "10000",
    ]);
    let r = clean(&l2, 10_000);
    assert_eq!(l2["profile"]["kind"], "l2");
    // The router stripped the L2RH: fewer bytes arrive than were sent.
    assert!(r["rx"]["bytes"].as_u64().unwrap() < r["tx"]["bytes"].as_u64().unwrap());
    router_agrees(&router, 20_000);
}

fn mac_of(ifname: &str) -> String {
    std::fs::read_to_string(format!("/sys/class/net/{ifname}/address"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn af_packet_through_mwrouterd_on_veth_pairs() {
    if !testkit::is_root() {
        testkit::skip(
            "mwgen::af_packet_through_mwrouterd_on_veth_pairs",
            "needs root (veth pairs, AF_PACKET)",
        );
        return;
    }
    let a = testkit::VethPair::new("mga").unwrap();
    let b = testkit::VethPair::new("mgb").unwrap();
    // mwgen on a.a and b.a; the router on a.b and b.b.
    let dir = tempfile::tempdir().unwrap();
    let af_packet = |ifname: &str| PortConfig::AfPacket(AfPacketPortConfig::new(ifname));
    let mac = |ifname: &str| NativeAddr::parse(&mac_of(ifname)).unwrap();
    let config = two_hrs([af_packet(&a.b), af_packet(&b.b)], [mac(&a.a), mac(&b.a)]);
    let router = Router::start(dir.path(), config).unwrap();
    let (tx, rx) = (format!("af_packet:{}", a.a), format!("af_packet:{}", b.a));
    let to = mac_of(&a.b);
    let l3 = mwgen(&[
        "--tx", &tx, "--rx", &rx, "--to", &to, "--dst", "0x0230", "--size", "64-1500", "--rate",
        "10kpps", "--count", "5000", "--warmup", "300ms",
    ]);
    clean(&l3, 5000);
    let hop = format!("0x0102@{}", mac_of(&b.a));
    let l2 = mwgen(&[
        "--tx", &tx, "--rx", &rx, "--to", &to, "--l2", &hop, "--size", "64", "--rate", "10kpps",
        "--count", "5000",
    ]);
    clean(&l2, 5000);
    router_agrees(&router, 10_000);
}

#[test]
fn dpdk_memif_through_mwrouterd() {
    let dir = tempfile::tempdir().unwrap();
    let (sa, sb) = (dir.path().join("a.sock"), dir.path().join("b.sock"));
    let memif = |n: u8, sock: &Path| {
        let mut port = DpdkPortConfig::new(&format!(
            "net_memif{n},role=server,id=0,socket={}",
            sock.display()
        ));
        port.mac = Some([2, 0, 0, 0, 1, n + 1]);
        PortConfig::Dpdk(port)
    };
    let mut config = two_hrs(
        [memif(0, &sa), memif(1, &sb)],
        [
            NativeAddr::mac([2, 0, 0, 0, 1, 0x30]),
            NativeAddr::mac([2, 0, 0, 0, 2, 0x30]),
        ],
    );
    config.dpdk = Some(DpdkSection {
        eal_args: testkit::dpdk_eal_args(),
    });
    config.workers.count = 1;
    config.workers.idle = IdleMode::Adaptive;
    let router = match Router::start(dir.path(), config) {
        Ok(r) => r,
        Err(e) if e.contains("--features dpdk") => {
            testkit::skip(
                "mwgen::dpdk_memif_through_mwrouterd",
                "mwrouterd built without DPDK",
            );
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let (tx, rx) = (
        format!("dpdk:net_memif0,role=client,id=0,socket={}", sa.display()),
        format!("dpdk:net_memif1,role=client,id=0,socket={}", sb.display()),
    );
    let probe = Command::new(env!("CARGO_BIN_EXE_mwgen"))
        .args(["--tx", &tx, "--count", "1"])
        .output()
        .unwrap();
    if String::from_utf8_lossy(&probe.stderr).contains("built without DPDK") {
        testkit::skip(
            "mwgen::dpdk_memif_through_mwrouterd",
            "mwgen built without DPDK",
        );
        return;
    }
    let eal = "--no-huge -m 512 --no-pci --no-shconf --no-telemetry --log-level=warning -l 1";
    let common = [
        "--eal",
        eal,
        "--tx",
        &tx,
        "--rx",
        &rx,
        "--mac",
        "02:00:00:00:01:30",
        "--rx-mac",
        "02:00:00:00:02:30",
        "--to",
        "02:00:00:00:01:01",
        "--dst",
        "0x0230",
        "--rate",
        "20kpps",
        "--count",
        "20000",
        "--warmup",
        "1s",
    ];
    let mut l3 = common.to_vec();
    l3.extend(["--size", "64-1500"]);
    clean(&mwgen(&l3), 20_000);
    let mut l2 = common.to_vec();
    l2.extend(["--l2", "0x0102@02:00:00:00:02:30", "--size", "64"]);
    clean(&mwgen(&l2), 20_000);
    router_agrees(&router, 40_000);
}
