//! Part mcast: multicast replication on one core, mwrouterd against DPDK's
//! `ipv4_multicast` example ([`super::ipv4mc`]), side by side.
//!
//! Both replay a pcap of group packets for ever (`net_pcap`,
//! `rx_pcap=FILE,infinite_rx=1`) and send a copy of each out of four
//! `net_null` ports (`no-rx=1`): mwrouterd gets MessageWay packets to group
//! 0x8101 from node 0x0130 (a static LRT entry on the ingress HR 0x0101),
//! each egress HR 0x0102-0x0105 a static member of the group; the example
//! gets IPv4 packets to 224.0.0.115 of the same frame sizes (its group for
//! ports 0-3). Per frame size, the two run in turn on lcore 1 (EAL's main
//! lcore 0 for mwrouterd's control thread; the example's only lcore is 1),
//! and that [`Options::rounds`] times, the order alternated every round.
//! The rate is the replicated packets per second out: the sum of the four
//! egress ports' transmissions over the interval (mwrouterd: its counters,
//! less injected packets; the example: ethdev `opackets` through DPDK
//! telemetry, `/ethdev/stats,N`). The ratio mwrouterd / ipv4_multicast is
//! taken within each round; the report gives the median of the rounds'.
//!
//! A third forwarder runs in every round: the example with per-lcore
//! mempool caches of 256 (`benches/ipv4_multicast-cache.patch`), because as
//! shipped (caches of 32, a header pool of 262,144 mbufs) most of its time
//! goes to cache misses on freshly allocated header mbufs; mwrouterd's
//! pools have caches of 256. Its ratio is reported beside the main one.

use std::path::Path;
use std::time::{Duration, Instant};

use admin::LogLevel;
use control::config::Config;
use rrp::wire::{HeaderRepr, PacketRepr};
use rrp::{Address, encap};
use serde_json::{Value, json};

use super::config;
use super::hugepages::Memory;
use super::ipv4mc::{self, Ipv4Multicast};
use super::process::{check_interrupt, sleep};
use super::router::{self, Router};
use super::telemetry::EthStats;
use super::traffic::{mac_bytes, write_pcap};
use super::{Env, Options, PART1_WORKER_LCORE, Result, median, path_str, ratio};

/// The frame sizes measured (Ethernet, without FCS).
pub const SIZES: [usize; 2] = [64, 1500];
/// Egress ports (copies per packet).
pub const FANOUT: usize = 4;
/// The group mwrouterd replicates.
pub const GROUP: u16 = 0x8101;
/// The source node (on the ingress HR's SAN).
pub const SOURCE: u16 = 0x0130;
/// Its MAC.
pub const SOURCE_MAC: &str = "02:00:00:00:01:30";
/// Frames per pcap.
const FRAMES: usize = 1024;

/// The forwarders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarder {
    /// DPDK's ipv4_multicast example (with `benches/ipv4_multicast.patch`).
    Ipv4Multicast,
    /// The same with mempool caches of 256 (`ipv4_multicast-cache.patch`).
    Ipv4MulticastCache,
    /// mwrouterd.
    Mwrouterd,
}

impl Forwarder {
    /// In the order of even rounds (odd rounds reverse it).
    pub const ALL: [Forwarder; 3] = [
        Forwarder::Ipv4Multicast,
        Forwarder::Mwrouterd,
        Forwarder::Ipv4MulticastCache,
    ];

    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Forwarder::Ipv4Multicast => "ipv4_multicast",
            Forwarder::Ipv4MulticastCache => "ipv4_multicast-cache256",
            Forwarder::Mwrouterd => "mwrouterd",
        }
    }
}

/// One forwarder at one size in one round.
#[derive(Debug, Clone)]
pub struct Run {
    /// Frame size.
    pub size: usize,
    /// Which.
    pub forwarder: Forwarder,
    /// The round (from 0).
    pub round: u32,
    /// Replicated packets out per second (the four egress ports), millions.
    pub out_mpps: f64,
    /// Packets received per second on the ingress port, millions.
    pub in_mpps: f64,
    /// The JSON record.
    pub record: Value,
}

/// The part's results.
#[derive(Debug, Clone, Default)]
pub struct McastPart {
    /// Every run.
    pub runs: Vec<Run>,
    /// How ipv4_multicast was built (both variants).
    pub build: Vec<String>,
    /// The pcaps (JSON records).
    pub pcaps: Vec<Value>,
}

impl McastPart {
    /// `f`'s rates out at `size`, round by round.
    pub fn rounds(&self, size: usize, f: Forwarder) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.size == size && r.forwarder == f)
            .map(|r| r.out_mpps)
            .collect()
    }

    /// mwrouterd / ipv4_multicast at `size` in each round that has both.
    pub fn round_ratios(&self, size: usize) -> Vec<f64> {
        self.round_ratios_to(size, Forwarder::Ipv4Multicast)
    }

    /// mwrouterd / `to` at `size` in each round that has both.
    pub fn round_ratios_to(&self, size: usize, to: Forwarder) -> Vec<f64> {
        let of = |f: Forwarder, k: u32| {
            self.runs
                .iter()
                .find(|r| r.size == size && r.forwarder == f && r.round == k)
                .map(|r| r.out_mpps)
        };
        let mut rounds: Vec<u32> = self.runs.iter().map(|r| r.round).collect();
        rounds.sort_unstable();
        rounds.dedup();
        rounds
            .into_iter()
            .filter_map(|k| of(Forwarder::Mwrouterd, k).zip(of(to, k)))
            .filter_map(|(a, b)| ratio(a, b))
            .collect()
    }

    /// The median of the rounds' ratios at `size` (to ipv4_multicast).
    pub fn ratio(&self, size: usize) -> Option<f64> {
        median(self.round_ratios(size))
    }

    /// The median of the rounds' ratios at `size` to `to`.
    pub fn ratio_to(&self, size: usize, to: Forwarder) -> Option<f64> {
        median(self.round_ratios_to(size, to))
    }

    /// The median rate of `f` at `size`.
    pub fn mpps(&self, size: usize, f: Forwarder) -> Option<f64> {
        median(self.rounds(size, f))
    }
}

/// A MessageWay group packet from [`SOURCE`] in an Ethernet frame of
/// `size` bytes to every member of the SAN (broadcast), padded.
pub fn mw_frame(size: usize, seq: usize) -> Vec<u8> {
    let eep = (size - encap::ETH_HEADER_LEN) & !7;
    let data_len = eep - rrp::wire::HEADER_LEN - rrp::wire::TRAILER_LEN;
    let p = PacketRepr {
        l2rhs: Vec::new(),
        header: HeaderRepr {
            dst: Address(GROUP),
            src: Address(SOURCE),
            packet_type: rrp::kind::PacketType(0x0100),
            ..HeaderRepr::default()
        },
        data: (0..data_len).map(|i| (i + seq) as u8).collect(),
        ei: 0,
    };
    let mut f = vec![0xFF; 6];
    f.extend_from_slice(&mac_bytes(SOURCE_MAC));
    f.extend_from_slice(&encap::ETHERTYPE.to_be_bytes());
    f.extend_from_slice(&p.to_bytes().expect("a valid packet"));
    f.resize(size, 0);
    f
}

/// An IPv4 UDP packet to 224.0.0.115 in an Ethernet frame of `size` bytes
/// (to the group's MAC 01:00:5e:00:00:73).
pub fn ipv4_frame(size: usize, seq: usize) -> Vec<u8> {
    let g = ipv4mc::GROUP;
    let mut f = vec![0x01, 0x00, 0x5E, g[1] & 0x7F, g[2], g[3]];
    f.extend_from_slice(&mac_bytes(SOURCE_MAC));
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let total = (size - 14) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&(seq as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 0, 64, 17, 0, 0, 192, 0, 2, 1]);
    ip.extend_from_slice(&g);
    let mut sum: u32 = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f.extend_from_slice(&ip);
    let udp_len = total - 20;
    f.extend_from_slice(&5000u16.to_be_bytes());
    f.extend_from_slice(&5001u16.to_be_bytes());
    f.extend_from_slice(&udp_len.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.resize(size, 0);
    f
}

/// The four egress ports of mwrouterd: HR 0x0102 + i on SAN 0x0202 + i,
/// MAC 02:00:00:00:01:02 + i, a static member 0x0230 + 0x0100 i.
fn egress(i: usize) -> (u16, u16, String, u16, String) {
    (
        0x0102 + i as u16,
        0x0202 + i as u16,
        format!("02:00:00:00:01:{:02x}", 2 + i),
        0x0230 + 0x0100 * i as u16,
        format!("02:00:00:00:{:02x}:30", 2 + i),
    )
}

/// mwrouterd's configuration: HR 0x0101 on the pcap port with the source
/// as a static entry, four HRs on null ports each with a static member of
/// the group.
pub fn router_config(eal: &[String], pcap_vdev: &str, nulls: &[String], socket: &Path) -> Config {
    let mut hrs = vec![config::dpdk_hr(
        0x0101,
        0x0201,
        pcap_vdev,
        "02:00:00:00:01:01",
        vec![config::static_node(SOURCE, SOURCE_MAC, &[])],
    )];
    for (i, null) in nulls.iter().enumerate() {
        let (hr, san, mac, member, member_mac) = egress(i);
        hrs.push(config::dpdk_hr(
            hr,
            san,
            null,
            &mac,
            vec![config::static_node(member, &member_mac, &[GROUP])],
        ));
    }
    config::dpdk_router(
        "e2e-mcast",
        config::eal_on(eal, 0),
        config::busy_poll_workers(&[PART1_WORKER_LCORE as usize]),
        socket,
        LogLevel::Warn,
        hrs,
    )
}

fn nulls() -> Vec<String> {
    (0..FANOUT)
        .map(|i| format!("net_null{i},no-rx=1"))
        .collect()
}

fn pcap_vdev(path: &std::path::Path) -> String {
    format!("net_pcap0,rx_pcap={},infinite_rx=1", path_str(path))
}

/// Runs the part into `out`.
pub fn run(env: &Env, opts: &Options, mem: &Memory, out: &mut McastPart) -> Result<()> {
    println!(
        "\nPart mcast: multicast replication on one core (lcore {PART1_WORKER_LCORE}), pcap in, \
         {FANOUT} x null out; mwrouterd against DPDK's ipv4_multicast; warm-up {:?}, interval \
         {:?}, {} round(s)",
        opts.warmup(),
        opts.interval(),
        opts.rounds()
    );
    let built = ipv4mc::build(env, false)?;
    let built_cache = ipv4mc::build(env, true)?;
    println!(
        "  ipv4_multicast built: {} (and with caches of 256: {})",
        built.bin.display(),
        built_cache.bin.display()
    );
    out.build = built.steps.clone();
    out.build.extend(built_cache.steps.iter().cloned());
    for &size in &SIZES {
        check_interrupt()?;
        let mw = env.file(&format!("mcast-mw-{size}.pcap"));
        let v4 = env.file(&format!("mcast-ipv4-{size}.pcap"));
        write_pcap(
            &mw,
            &(0..FRAMES).map(|i| mw_frame(size, i)).collect::<Vec<_>>(),
        )?;
        write_pcap(
            &v4,
            &(0..FRAMES).map(|i| ipv4_frame(size, i)).collect::<Vec<_>>(),
        )?;
        for (what, p) in [("messageway", &mw), ("ipv4", &v4)] {
            out.pcaps.push(json!({
                "size": size,
                "traffic": what,
                "path": path_str(p),
                "frames": FRAMES,
                "frame_bytes": size,
            }));
        }
        println!("  {size} B: {} and {}", mw.display(), v4.display());
        for round in 0..opts.rounds() {
            let mut order = Forwarder::ALL;
            if round % 2 == 1 {
                order.reverse();
            }
            for f in order {
                check_interrupt()?;
                let busy = super::wait_quiet(opts.patience())?;
                let mut r = match f {
                    Forwarder::Ipv4Multicast => run_example(env, opts, mem, &built, f, size, &v4)?,
                    Forwarder::Ipv4MulticastCache => {
                        run_example(env, opts, mem, &built_cache, f, size, &v4)?
                    }
                    Forwarder::Mwrouterd => run_router(env, opts, mem, size, &mw)?,
                };
                r.round = round;
                r.record["round"] = json!(round);
                r.record["other_busy_cpus_before"] = json!(busy);
                println!(
                    "    {:<24} {:>8.2} Mpps out ({:.2} Mpps in)",
                    f.name(),
                    r.out_mpps,
                    r.in_mpps
                );
                out.runs.push(r);
            }
        }
    }
    Ok(())
}

fn run_example(
    env: &Env,
    opts: &Options,
    mem: &Memory,
    built: &ipv4mc::Built,
    f: Forwarder,
    size: usize,
    pcap: &std::path::Path,
) -> Result<Run> {
    // Ports 0-3 the null ports (the group's), port 4 the pcap port.
    let mut vdevs = nulls();
    vdevs.push(pcap_vdev(pcap));
    let prefix = format!("mwe2e-mc{}", std::process::id());
    let log = env.file(&format!("mcast-{size}-{}.log", f.name()));
    let mut app = Ipv4Multicast::start(
        &built.bin,
        &mem.eal_flags(),
        PART1_WORKER_LCORE,
        &vdevs,
        &prefix,
        &log,
    )?;
    let command = app.command().to_vec();
    sleep(opts.warmup())?;
    let a = app.stats(5)?;
    let t0 = Instant::now();
    sleep(opts.interval())?;
    let b = app.stats(5)?;
    let secs = t0.elapsed().as_secs_f64();
    let tail = app.log_tail(20);
    app.stop()?;
    let d: Vec<EthStats> = b.iter().zip(&a).map(|(y, x)| y.delta(x)).collect();
    let out: u64 = d[..FANOUT].iter().map(|s| s.opackets).sum();
    let inp = d[FANOUT].ipackets;
    if out == 0 {
        return Err(format!(
            "{} sent nothing at {size} B (port 4 received {inp}); the end of its output:\n{tail}",
            f.name()
        ));
    }
    Ok(Run {
        size,
        forwarder: f,
        round: 0,
        out_mpps: out as f64 / secs / 1e6,
        in_mpps: inp as f64 / secs / 1e6,
        record: json!({
            "size": size,
            "forwarder": f.name(),
            "command": command,
            "lcore": PART1_WORKER_LCORE,
            "warmup_s": opts.warmup().as_secs_f64(),
            "duration_s": secs,
            "out_mpps": out as f64 / secs / 1e6,
            "in_mpps": inp as f64 / secs / 1e6,
            "ports": d.iter().enumerate().map(|(i, s)| (i.to_string(), json!({
                "vdev": vdevs[i],
                "delta": s.to_json(),
            }))).collect::<serde_json::Map<_, _>>(),
            "counters": "ethdev stats through DPDK telemetry (/ethdev/stats,N)",
            "log": path_str(&log),
        }),
    })
}

fn run_router(
    env: &Env,
    opts: &Options,
    mem: &Memory,
    size: usize,
    pcap: &std::path::Path,
) -> Result<Run> {
    let tag = format!("mcast-{size}-mwrouterd");
    let (eal, pv, ns) = (mem.eal_flags(), pcap_vdev(pcap), nulls());
    let mut r = Router::start_with(env, &tag, |socket| router_config(&eal, &pv, &ns, socket))?;
    // The configuration's static members: also added at run time, because
    // rrp::Router::new left the `groups` of configured static entries out
    // of the LRT before commit 32211e1 (only `mwctl route add --group` put
    // them in); replacing the entries with the same values is harmless, and
    // older builds measure correctly too.
    let mut added = Vec::new();
    for i in 0..FANOUT {
        let (_, _, _, member, member_mac) = egress(i);
        let args: Vec<String> = vec![
            "route".into(),
            "add".into(),
            format!("{member:#06x}"),
            "-p".into(),
            (i + 1).to_string(),
            "-n".into(),
            member_mac,
            "--group".into(),
            format!("{GROUP:#06x}"),
        ];
        r.mwctl(&args)?;
        added.push(args.join(" "));
    }
    let command = r.command().to_vec();
    let config = std::fs::read_to_string(r.config()).unwrap_or_default();
    let m = router::measure(&mut r, opts.warmup(), opts.interval())?;
    let tail = r.log_tail(20);
    let exited_on_sigterm = r.stop(Duration::from_secs(3))?;
    let secs = m.interval.as_secs_f64().max(1e-9);
    let ingress = m.delta.first().cloned().unwrap_or_default();
    let out: u64 = m
        .delta
        .iter()
        .skip(1)
        .map(|p| p.transmitted.saturating_sub(p.injected))
        .sum();
    if out == 0 {
        return Err(format!(
            "mwrouterd sent nothing at {size} B (port 0: received {}, drops {}); its \
             configuration: {}; the end of its output:\n{tail}",
            ingress.received,
            router::drops_text(&ingress),
            env.file(&format!("{tag}.toml")).display()
        ));
    }
    let dropped = ingress.dropped_total();
    if dropped * 1000 > ingress.received {
        eprintln!(
            "e2e: warning: mwrouterd dropped {dropped} of {} group packets at {size} B: {}",
            ingress.received,
            router::drops_text(&ingress)
        );
    }
    Ok(Run {
        size,
        forwarder: Forwarder::Mwrouterd,
        round: 0,
        out_mpps: out as f64 / secs / 1e6,
        in_mpps: ingress.received as f64 / secs / 1e6,
        record: json!({
            "size": size,
            "forwarder": Forwarder::Mwrouterd.name(),
            "command": command,
            "config": config,
            "lcore": PART1_WORKER_LCORE,
            "warmup_s": opts.warmup().as_secs_f64(),
            "duration_s": secs,
            "out_mpps": out as f64 / secs / 1e6,
            "in_mpps": ingress.received as f64 / secs / 1e6,
            "ports": m.delta.iter().enumerate().map(|(i, p)| (i.to_string(), router::port_json(p))).collect::<serde_json::Map<_, _>>(),
            "exited_on_sigterm": exited_on_sigterm,
            "drops": router::drops_text(&ingress),
            "mwctl": added,
        }),
    })
}

/// The part's table.
pub fn table(p: &McastPart) -> String {
    let rounds = p.runs.iter().map(|r| r.round + 1).max().unwrap_or(0);
    let opt = |v: Option<f64>| v.map_or_else(|| "-".into(), |x| format!("{x:.2}"));
    let mut s = format!(
        "Part mcast: Mpps replicated out (sum of {FANOUT} null ports) on one core (lcore \
         {PART1_WORKER_LCORE}), net_pcap (infinite rx) in; medians of {rounds} round(s), ratios \
         within a round\n{:<8} {:>15} {:>16} {:>10} {:>16} {:>18} {:>22}\n",
        "frame",
        "ipv4_multicast",
        "(cache 256)",
        "mwrouterd",
        "mwr/ipv4_mcast",
        "mwr/(cache 256)",
        "rounds' mwr/ipv4_mcast"
    );
    for &size in &SIZES {
        let rr: Vec<String> = p
            .round_ratios(size)
            .iter()
            .map(|r| format!("{r:.2}"))
            .collect();
        s += &format!(
            "{:<8} {:>15} {:>16} {:>10} {:>16} {:>18} {:>22}\n",
            format!("{size} B"),
            opt(p.mpps(size, Forwarder::Ipv4Multicast)),
            opt(p.mpps(size, Forwarder::Ipv4MulticastCache)),
            opt(p.mpps(size, Forwarder::Mwrouterd)),
            opt(p.ratio(size)),
            opt(p.ratio_to(size, Forwarder::Ipv4MulticastCache)),
            rr.join(", ")
        );
    }
    s
}

/// The part's JSON.
pub fn to_json(p: &McastPart, opts: &Options) -> Value {
    let per_size: serde_json::Map<String, Value> = SIZES
        .iter()
        .map(|&size| {
            (
                size.to_string(),
                json!({
                    "mwrouterd_vs_ipv4_multicast": p.ratio(size),
                    "rounds_ratio": p.round_ratios(size),
                    "mwrouterd_vs_ipv4_multicast_cache256": p.ratio_to(size, Forwarder::Ipv4MulticastCache),
                    "rounds_ratio_cache256": p.round_ratios_to(size, Forwarder::Ipv4MulticastCache),
                    "out_mpps": Forwarder::ALL
                        .iter()
                        .map(|&f| (f.name().to_string(), json!({
                            "median": p.mpps(size, f),
                            "rounds": p.rounds(size, f),
                        })))
                        .collect::<serde_json::Map<_, _>>(),
                }),
            )
        })
        .collect();
    json!({
        "warmup_s": opts.warmup().as_secs_f64(),
        "interval_s": opts.interval().as_secs_f64(),
        "rounds": opts.rounds(),
        "lcore": PART1_WORKER_LCORE,
        "fanout": FANOUT,
        "ipv4_multicast_build": p.build,
        "ipv4_multicast_patch": "benches/ipv4_multicast.patch",
        "ipv4_multicast_cache256_patches": ["benches/ipv4_multicast.patch", "benches/ipv4_multicast-cache.patch"],
        "pcaps": p.pcaps,
        "runs": p.runs.iter().map(|r| r.record.clone()).collect::<Vec<_>>(),
        "sizes": per_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::limits::MAX_L2RHS;
    use rrp::wire::{Header, locate};

    #[test]
    fn frames_have_their_sizes_and_parse() {
        for size in SIZES {
            let f = mw_frame(size, 3);
            assert_eq!(f.len(), size);
            let l = locate(&f[14..], MAX_L2RHS).unwrap();
            let h = Header::new_unchecked(&f[14 + l.header_offset..]);
            assert_eq!((h.dst().0, h.src().0), (GROUP, SOURCE));
            let v = ipv4_frame(size, 3);
            assert_eq!(v.len(), size);
            assert_eq!(&v[..6], &[0x01, 0x00, 0x5E, 0, 0, 115]);
            assert_eq!(&v[30..34], &[224, 0, 0, 115]);
            // The header checksum verifies.
            let mut sum: u32 = v[14..34]
                .chunks(2)
                .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
                .sum();
            while sum > 0xFFFF {
                sum = (sum & 0xFFFF) + (sum >> 16);
            }
            assert_eq!(sum, 0xFFFF);
        }
    }

    #[test]
    fn the_router_configuration_has_the_source_and_four_members() {
        let t = router_config(
            &["--in-memory".into()],
            "net_pcap0,rx_pcap=/x.pcap,infinite_rx=1",
            &nulls(),
            Path::new("/tmp/s.sock"),
        )
        .to_toml();
        assert_eq!(t.matches("[[hr]]").count(), 5);
        assert_eq!(t.matches("groups = [0x8101]").count(), 4);
        assert!(t.contains("address = 0x0130"));
        assert!(t.contains("net_null3,no-rx=1"));
    }

    fn run(size: usize, f: Forwarder, round: u32, out: f64) -> Run {
        Run {
            size,
            forwarder: f,
            round,
            out_mpps: out,
            in_mpps: out / 4.0,
            record: Value::Null,
        }
    }

    #[test]
    fn ratios_are_taken_within_a_round() {
        let mut p = McastPart::default();
        for (k, a, b) in [(0, 10.0, 20.0), (1, 30.0, 20.0), (2, 20.0, 20.0)] {
            p.runs.push(run(64, Forwarder::Mwrouterd, k, a));
            p.runs.push(run(64, Forwarder::Ipv4Multicast, k, b));
        }
        assert_eq!(p.round_ratios(64), vec![0.5, 1.5, 1.0]);
        assert_eq!(p.ratio(64), Some(1.0));
        assert_eq!(p.ratio(1500), None);
    }
}
