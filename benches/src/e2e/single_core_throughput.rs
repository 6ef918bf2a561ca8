//! Part 1: forwarding throughput on one core, one process at a time.
//!
//! Each traffic's pcap is replayed for ever by `net_pcap0` (rx only:
//! `rx_pcap=FILE,infinite_rx=1`; with no tx side the pcap PMD drops what
//! is sent to it) into the forwarder, which sends it out of `net_null0`
//! (`no-rx=1`: the null port receives nothing, so every forwarder does the
//! same single direction of work: pcap in, null out). The forwarders run
//! one after the other on identical vdevs, forwarding on lcore 1 (EAL's
//! main lcore 0): dpdk-testpmd `io`, dpdk-testpmd `macswap`, mwrouterd;
//! and that [`Options::rounds`] times per traffic, so that each ratio is
//! taken side by side within a round and the figures are medians.
//!
//! DPDK's own L3 forwarders run in the same rounds on the same lcore
//! ([`super::l3fwd`]): l3fwd with LPM and with EM lookups, and l3fwd-graph,
//! each fed the IPv4/UDP twin of the L3 traffic (the same frame sizes, in
//! the same order: [`traffic::ipv4_twin`]) to a route its default table
//! holds. They have no L2 (source-routed) counterpart and skip the L2
//! traffic. The forwarders' order is reversed every other round.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::addr::*;
use super::examples::App;
use super::hugepages::Memory;
use super::l3fwd::{self, Builds, Peer};
use super::process::{check_interrupt, sleep};
use super::router::{self, HrSpec, Router, RouterSpec};
use super::telemetry::EthStats;
use super::testpmd::{self, Testpmd};
use super::traffic::{self, Kind, PART1, Pcap, Traffic};
use super::{Env, Options, PART1_WORKER_LCORE, Result, median, path_str, ratio};

/// The forwarders, in the order they run (in even rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarder {
    /// dpdk-testpmd, io forwarding.
    Io,
    /// dpdk-testpmd, MAC swap.
    Macswap,
    /// mwrouterd.
    Mwrouterd,
    /// mwrouterd with partitions on both ports (docs/partitions.md "Without
    /// a SAN manager"), the traffic marked in a partition of both ends:
    /// every packet checked at the source and at the destination.
    MwrouterdPartitions,
    /// DPDK's l3fwd, LPM lookup.
    L3fwdLpm,
    /// DPDK's l3fwd, exact-match lookup.
    L3fwdEm,
    /// DPDK's l3fwd-graph.
    L3fwdGraph,
}

impl Forwarder {
    /// All of them, in order.
    pub const ALL: [Forwarder; 7] = [
        Forwarder::Io,
        Forwarder::Macswap,
        Forwarder::Mwrouterd,
        Forwarder::MwrouterdPartitions,
        Forwarder::L3fwdLpm,
        Forwarder::L3fwdEm,
        Forwarder::L3fwdGraph,
    ];

    /// Those mwrouterd is compared with, in table order.
    pub const PEERS: [Forwarder; 6] = [
        Forwarder::Io,
        Forwarder::Macswap,
        Forwarder::MwrouterdPartitions,
        Forwarder::L3fwdLpm,
        Forwarder::L3fwdEm,
        Forwarder::L3fwdGraph,
    ];

    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Forwarder::Io => "testpmd-io",
            Forwarder::Macswap => "testpmd-macswap",
            Forwarder::Mwrouterd => "mwrouterd",
            Forwarder::MwrouterdPartitions => "mwrouterd-partitions",
            Forwarder::L3fwdLpm => Peer::Lpm.name(),
            Forwarder::L3fwdEm => Peer::Em.name(),
            Forwarder::L3fwdGraph => Peer::Graph.name(),
        }
    }

    /// The suffix of the JSON keys of the ratios (`vs_io`, `l3_64_vs_l3fwd_lpm`).
    pub fn key(self) -> &'static str {
        match self {
            Forwarder::Io => "io",
            Forwarder::Macswap => "macswap",
            Forwarder::Mwrouterd => "mwrouterd",
            Forwarder::MwrouterdPartitions => "mwrouterd_partitions",
            Forwarder::L3fwdLpm => "l3fwd_lpm",
            Forwarder::L3fwdEm => "l3fwd_em",
            Forwarder::L3fwdGraph => "l3fwd_graph",
        }
    }

    /// The DPDK example it is, if it is one.
    pub fn peer(self) -> Option<Peer> {
        match self {
            Forwarder::L3fwdLpm => Some(Peer::Lpm),
            Forwarder::L3fwdEm => Some(Peer::Em),
            Forwarder::L3fwdGraph => Some(Peer::Graph),
            _ => None,
        }
    }

    /// The forwarder that is `peer`.
    pub fn of_peer(peer: Peer) -> Forwarder {
        match peer {
            Peer::Lpm => Forwarder::L3fwdLpm,
            Peer::Em => Forwarder::L3fwdEm,
            Peer::Graph => Forwarder::L3fwdGraph,
        }
    }

    /// Whether it forwards traffic of `kind` (the IPv4 forwarders have no
    /// counterpart of MessageWay's source routing).
    pub fn applies(self, kind: Kind) -> bool {
        self.peer().is_none() || kind == Kind::L3
    }

    /// The forwarders of round `round` for `kind`: [`Forwarder::ALL`] in
    /// even rounds, reversed in odd ones.
    pub fn order(round: u32, kind: Kind) -> Vec<Forwarder> {
        let mut v: Vec<Forwarder> = Forwarder::ALL
            .into_iter()
            .filter(|f| f.applies(kind))
            .collect();
        if round % 2 == 1 {
            v.reverse();
        }
        v
    }
}

/// One forwarder on one traffic.
#[derive(Debug, Clone)]
pub struct Run {
    /// The traffic.
    pub traffic: Traffic,
    /// The forwarder.
    pub forwarder: Forwarder,
    /// The round (from 0).
    pub round: u32,
    /// Forwarded packets per second, in millions.
    pub mpps: f64,
    /// The JSON record (command line, lcore, interval, counters, ...).
    pub record: Value,
}

/// Part 1's results.
#[derive(Debug, Clone, Default)]
pub struct Part1 {
    /// Every run, traffic by traffic.
    pub runs: Vec<Run>,
    /// The pcaps (JSON records), by traffic name.
    pub pcaps: Vec<(String, Value)>,
    /// The IPv4 twins of the L3 pcaps (JSON records), by traffic name.
    pub ipv4_pcaps: Vec<(String, Value)>,
    /// How l3fwd and l3fwd-graph were built.
    pub l3fwd_build: Vec<String>,
    /// Why the L3 peers did not run, when they did not.
    pub l3fwd_skipped: Option<String>,
}

impl Part1 {
    /// The rate of `f` on traffic `name` in each round, in round order.
    pub fn rounds(&self, name: &str, f: Forwarder) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.traffic.name == name && r.forwarder == f)
            .map(|r| r.mpps)
            .collect()
    }

    /// The median rate of `f` on traffic `name` over the rounds.
    pub fn mpps(&self, name: &str, f: Forwarder) -> Option<f64> {
        median(self.rounds(name, f))
    }

    /// mwrouterd / `f` on traffic `name` in each round that measured both.
    pub fn round_ratios(&self, name: &str, f: Forwarder) -> Vec<f64> {
        let of = |fw: Forwarder, round: u32| {
            self.runs
                .iter()
                .find(|r| r.traffic.name == name && r.forwarder == fw && r.round == round)
                .map(|r| r.mpps)
        };
        let mut rounds: Vec<u32> = self.runs.iter().map(|r| r.round).collect();
        rounds.sort_unstable();
        rounds.dedup();
        rounds
            .into_iter()
            .filter_map(|k| of(Forwarder::Mwrouterd, k).zip(of(f, k)))
            .filter_map(|(a, b)| ratio(a, b))
            .collect()
    }

    /// mwrouterd / `f` on traffic `name`: the median of the rounds' ratios.
    pub fn ratio_to(&self, name: &str, f: Forwarder) -> Option<f64> {
        median(self.round_ratios(name, f))
    }

    /// mwrouterd / io and mwrouterd / macswap on traffic `name`: the
    /// medians of the rounds' ratios.
    pub fn ratios(&self, name: &str) -> (Option<f64>, Option<f64>) {
        (
            self.ratio_to(name, Forwarder::Io),
            self.ratio_to(name, Forwarder::Macswap),
        )
    }
}

/// The vdevs: port 0 replays the pcap, port 1 swallows.
fn vdevs(pcap: &Pcap) -> (String, String) {
    (
        format!("net_pcap0,rx_pcap={},infinite_rx=1", path_str(&pcap.path)),
        "net_null0,no-rx=1".to_string(),
    )
}

/// Runs Part 1 into `out` (which keeps what was measured when a run fails).
pub fn run(env: &Env, opts: &Options, mem: &Memory, out: &mut Part1) -> Result<()> {
    println!(
        "\nPart 1: forwarding on one core (lcore {PART1_WORKER_LCORE}), pcap in, null out; \
         warm-up {:?}, interval {:?}, {} round(s)",
        opts.warmup(),
        opts.interval(),
        opts.rounds()
    );
    let builds = if opts.l3fwd {
        match Builds::build(env) {
            Ok(b) => {
                println!(
                    "  l3fwd and l3fwd-graph: {} ({}), {} ({})",
                    b.l3fwd.bin.display(),
                    if b.l3fwd.cached {
                        "build cache"
                    } else {
                        "built"
                    },
                    b.graph.bin.display(),
                    if b.graph.cached {
                        "build cache"
                    } else {
                        "built"
                    },
                );
                out.l3fwd_build = b.steps();
                Some(b)
            }
            Err(e) => {
                eprintln!("e2e: warning: the L3 peers (l3fwd, l3fwd-graph) will not run: {e}");
                out.l3fwd_skipped = Some(e);
                None
            }
        }
    } else {
        out.l3fwd_skipped = Some("--no-l3fwd".into());
        None
    };
    for t in &PART1 {
        check_interrupt()?;
        let pcap = traffic::pcap(env, t, opts.pcap_dir.as_deref())?;
        println!(
            "  {}: {} ({} frames, mean {:.1} B)",
            t.label,
            pcap.path.display(),
            pcap.frames,
            pcap.mean_frame
        );
        out.pcaps.push((t.name.to_string(), pcap.to_json()));
        let v4 = match (&builds, t.kind) {
            (Some(_), Kind::L3) => {
                let p = traffic::ipv4_twin(env, t.name, &pcap)?;
                println!("  {} for the L3 peers: {}", t.label, p.path.display());
                out.ipv4_pcaps.push((t.name.to_string(), p.to_json()));
                Some(p)
            }
            _ => None,
        };
        for round in 0..opts.rounds() {
            for f in Forwarder::order(round, t.kind) {
                let peer = match (f.peer(), &builds, &v4) {
                    (None, _, _) => None,
                    (Some(p), Some(b), Some(v)) => Some((p, b, v)),
                    (Some(_), _, _) => continue,
                };
                check_interrupt()?;
                let busy = super::wait_quiet(opts.patience())?;
                let mut run = match (f, peer) {
                    (_, Some((p, b, v))) => run_peer(env, opts, mem, t, v, b, p)?,
                    (Forwarder::Mwrouterd, None) => run_router(env, opts, mem, t, &pcap, false)?,
                    (Forwarder::MwrouterdPartitions, None) => {
                        let marked = traffic::marked_twin(env, t.name, &pcap, PART1_MARK)?;
                        run_router(env, opts, mem, t, &marked, true)?
                    }
                    _ => run_testpmd(env, opts, mem, t, &pcap, f)?,
                };
                run.round = round;
                run.record["round"] = json!(round);
                run.record["other_busy_cpus_before"] = json!(busy);
                println!("    {:<16} {:>8.2} Mpps", f.name(), run.mpps);
                out.runs.push(run);
            }
        }
    }
    Ok(())
}

/// One of DPDK's L3 forwarders on the IPv4 twin `pcap` of traffic `t`: the
/// rate is port 1's transmitted frames (telemetry) over the interval.
fn run_peer(
    env: &Env,
    opts: &Options,
    mem: &Memory,
    t: &Traffic,
    pcap: &Pcap,
    builds: &Builds,
    peer: Peer,
) -> Result<Run> {
    let f = Forwarder::of_peer(peer);
    let built = builds.of(peer);
    let prefix = format!("mwe2e-l3-{}", std::process::id());
    let mut eal = mem.eal_flags();
    if peer == Peer::Em && !mem.huge() {
        // l3fwd's EM tables (4M IPv4 and 4M IPv6 entries) do not fit in
        // the -m 512 of the other processes.
        if let Some(i) = eal.iter().position(|a| a == "-m") {
            eal[i + 1] = "2048".into();
        }
    }
    let spec = peer.spec(built, &eal, PART1_WORKER_LCORE, &pcap.path, &prefix);
    let log = env.file(&format!("p1-{}-{}.log", t.name, peer.name()));
    let mut app = App::start(&built.bin, &spec, &log)?;
    let command = app.command().to_vec();
    sleep(opts.warmup())?;
    let a = app.stats(2)?;
    let t0 = Instant::now();
    sleep(opts.interval())?;
    let b = app.stats(2)?;
    let secs = t0.elapsed().as_secs_f64();
    let tail = app.log_tail(20);
    let output = app.output();
    let exited_on_sigterm = app.stop()?;
    let d: Vec<EthStats> = b.iter().zip(&a).map(|(y, x)| y.delta(x)).collect();
    let (rx, fwd, back) = (d[0].ipackets, d[1].opackets, d[0].opackets);
    if fwd == 0 {
        return Err(format!(
            "{} forwarded nothing on {} (port 0 received {rx}, sent back {back}); the end of \
             its output ({}):\n{tail}",
            peer.name(),
            t.label,
            log.display()
        ));
    }
    if back * 100 > rx {
        eprintln!(
            "e2e: warning: {} sent {back} of {rx} packets of {} back out of port 0 (a lookup \
             miss): its routes do not match the frames",
            peer.name(),
            t.label
        );
    }
    let pps = fwd as f64 / secs;
    let mut record = json!({
        "traffic": t.name,
        "forwarder": f.name(),
        "command": command,
        "lcore": PART1_WORKER_LCORE,
        "warmup_s": opts.warmup().as_secs_f64(),
        "duration_s": secs,
        "mpps": pps / 1e6,
        "pcap": path_str(&pcap.path),
        "ports": d.iter().enumerate().map(|(i, s)| (i.to_string(), json!({
            "vdev": spec.vdevs[i],
            "delta": s.to_json(),
        }))).collect::<serde_json::Map<_, _>>(),
        "ports_total": b.iter().enumerate().map(|(i, s)| (i.to_string(), s.to_json())).collect::<serde_json::Map<_, _>>(),
        "counters": "ethdev stats through DPDK telemetry (/ethdev/stats,N)",
        "drops": {
            "rx_missed": d[0].imissed,
            "rx_nombuf": d[0].rx_nombuf,
            "rx_errors": d[0].ierrors,
            "tx_errors": d[1].oerrors,
            "sent_back": back,
            "not_forwarded": rx.saturating_sub(fwd),
        },
        "exited_on_sigterm": exited_on_sigterm,
        "build_cached": built.cached,
        "log": path_str(&log),
    });
    if peer == Peer::Graph {
        let nodes = l3fwd::parse_graph_stats(&output);
        record["graph_nodes"] = json!(nodes.iter().map(|n| n.to_json()).collect::<Vec<_>>());
        record["graph_cycles_per_packet"] = json!(
            nodes
                .iter()
                .filter_map(|n| n.cycles_per_packet())
                .sum::<f64>()
        );
    }
    Ok(Run {
        traffic: *t,
        forwarder: f,
        round: 0,
        mpps: pps / 1e6,
        record,
    })
}

fn run_testpmd(
    env: &Env,
    opts: &Options,
    mem: &Memory,
    t: &Traffic,
    pcap: &Pcap,
    f: Forwarder,
) -> Result<Run> {
    let (rx, tx) = vdevs(pcap);
    let spec = testpmd::Spec {
        lcores: format!("0,{PART1_WORKER_LCORE}"),
        main_lcore: None,
        eal: mem.eal_flags(),
        vdevs: vec![rx, tx],
        forward_mode: if f == Forwarder::Io { "io" } else { "macswap" }.into(),
    };
    let log = env.file(&format!("p1-{}-{}.log", t.name, f.name()));
    let mut tp = Testpmd::start(env, &spec, &log)?;
    let command = tp.command().to_vec();
    tp.start_forwarding()?;
    let m = testpmd::measure(&mut tp, 2, opts.warmup(), opts.interval())?;
    tp.quit()?;

    let (p0, p1) = (m.port(0), m.port(1));
    let wall = m.wall.as_secs_f64();
    let by_delta = p1.tx_packets as f64 / wall;
    // testpmd's own rate over its own interval; our delta / wall-clock as
    // the fallback and the cross-check.
    let pps = if p1.tx_pps > 0 {
        p1.tx_pps as f64
    } else {
        by_delta
    };
    if p1.tx_packets == 0 {
        return Err(format!(
            "dpdk-testpmd {} forwarded nothing on {} (port 0 received {}); its log: {}",
            spec.forward_mode,
            t.label,
            p0.rx_packets,
            log.display()
        ));
    }
    if (pps - by_delta).abs() > 0.05 * pps {
        eprintln!(
            "e2e: warning: testpmd's Tx-pps ({pps:.0}) and the packet delta over our interval \
             ({by_delta:.0}/s) differ by more than 5 %"
        );
    }
    let record = json!({
        "traffic": t.name,
        "forwarder": f.name(),
        "command": command,
        "lcore": PART1_WORKER_LCORE,
        "warmup_s": opts.warmup().as_secs_f64(),
        "duration_s": wall,
        "mpps": pps / 1e6,
        "mpps_from_delta": by_delta / 1e6,
        "ports": {
            "0": { "vdev": spec.vdevs[0], "delta": p0.to_json() },
            "1": { "vdev": spec.vdevs[1], "delta": p1.to_json() },
        },
        "ports_total": m.end.iter().map(|(p, s)| (p.to_string(), s.to_json())).collect::<serde_json::Map<_, _>>(),
        "drops": {
            "rx_missed": p0.rx_missed,
            "rx_nombuf": p0.rx_nombuf,
            "rx_errors": p0.rx_errors,
            "tx_errors": p1.tx_errors,
            "not_forwarded": p0.rx_packets.saturating_sub(p1.tx_packets),
        },
        "log": path_str(&log),
    });
    Ok(Run {
        traffic: *t,
        forwarder: f,
        round: 0,
        mpps: pps / 1e6,
        record,
    })
}

/// The partition `mwrouterd-partitions`'s traffic travels in: key 0x0010,
/// its source a full member.
const PART1_MARK: rrp::PartitionMark = rrp::PartitionMark::new(0x0010, true);

/// mwrouterd on traffic `t` from `pcap`; with `partitions`, both ends are
/// members of [`PART1_MARK`]'s partition in the router's configuration
/// (`management.static_partitions`) and port A knows the source (a static
/// entry), as the source check needs.
fn run_router(
    env: &Env,
    opts: &Options,
    mem: &Memory,
    t: &Traffic,
    pcap: &Pcap,
    partitions: bool,
) -> Result<Run> {
    let (rx, tx) = vdevs(pcap);
    let forwarder = if partitions {
        Forwarder::MwrouterdPartitions
    } else {
        Forwarder::Mwrouterd
    };
    let spec = RouterSpec {
        eal: mem.eal_flags(),
        main_lcore: 0,
        worker_core: PART1_WORKER_LCORE,
        a: HrSpec {
            device: rx,
            mac: ROUTER_A_MAC,
            static_entry: partitions.then_some((NODE_A, GEN_A_MAC)),
        },
        b: HrSpec {
            device: tx,
            mac: ROUTER_B_MAC,
            static_entry: Some((NODE_B, GEN_B_MAC)),
        },
        partitions: if partitions {
            let member = |hr: u16, node: u16| control::config::StaticPartitions {
                hr: rrp::Address(hr),
                node: rrp::Address(node),
                table: vec![(
                    mgmt::partition::PartitionKey::new(PART1_MARK.key()).expect("a key"),
                    mgmt::partition::Membership::Full,
                )],
            };
            vec![member(HR_A, NODE_A), member(HR_B, NODE_B)]
        } else {
            Vec::new()
        },
    };
    let tag = format!("p1-{}-{}", t.name, forwarder.name());
    let mut r = Router::start(env, &spec, &tag)?;
    let command = r.command().to_vec();
    let config = std::fs::read_to_string(r.config()).unwrap_or_default();
    let m = router::measure(&mut r, opts.warmup(), opts.interval())?;
    let tail = r.log_tail(20);
    let exited_on_sigterm = r.stop(Duration::from_secs(3))?;

    let (a, b) = (
        m.delta.first().cloned().unwrap_or_default(),
        m.delta.get(1).cloned().unwrap_or_default(),
    );
    let secs = m.interval.as_secs_f64().max(1e-9);
    let sent = b.transmitted.saturating_sub(b.injected);
    let pps = sent as f64 / secs;
    if a.forwarded == 0 || sent == 0 {
        return Err(format!(
            "mwrouterd forwarded nothing on {} (port 0: received {}, drops {}); \
             its configuration: {}; the end of its output:\n{tail}",
            t.label,
            a.received,
            router::drops_text(&a),
            env.file(&format!("{tag}.toml")).display()
        ));
    }
    let dropped = a.dropped_total();
    if dropped * 1000 > a.received {
        eprintln!(
            "e2e: warning: mwrouterd dropped {dropped} of {} packets of {} during the interval: {}",
            a.received,
            t.label,
            router::drops_text(&a)
        );
    }
    let record = json!({
        "traffic": t.name,
        "forwarder": forwarder.name(),
        "command": command,
        "config": config,
        "lcore": PART1_WORKER_LCORE,
        "warmup_s": opts.warmup().as_secs_f64(),
        "duration_s": secs,
        "mpps": pps / 1e6,
        "ports": {
            "0": { "vdev": spec.a.device, "delta": router::port_json(&a) },
            "1": { "vdev": spec.b.device, "delta": router::port_json(&b) },
        },
        "ports_total": m.end.iter().enumerate().map(|(i, p)| (i.to_string(), router::port_json(p))).collect::<serde_json::Map<_, _>>(),
        "exited_on_sigterm": exited_on_sigterm,
        "drops": {
            "interval": router::drops_text(&a),
            "run_total": m.end.first().map(router::drops_text).unwrap_or_default(),
        },
    });
    Ok(Run {
        traffic: *t,
        forwarder,
        round: 0,
        mpps: pps / 1e6,
        record,
    })
}

/// Part 1's JSON: runs, pcaps, ratios.
pub fn to_json(p: &Part1, opts: &Options) -> Value {
    let ratios: serde_json::Map<String, Value> = PART1
        .iter()
        .map(|t| {
            let mut r = serde_json::Map::new();
            for f in Forwarder::PEERS {
                if f.applies(t.kind) {
                    r.insert(format!("vs_{}", f.key()), json!(p.ratio_to(t.name, f)));
                    r.insert(
                        format!("rounds_vs_{}", f.key()),
                        json!(p.round_ratios(t.name, f)),
                    );
                }
            }
            r.insert(
                "mpps".into(),
                Forwarder::ALL
                    .iter()
                    .filter(|f| f.applies(t.kind))
                    .map(|&f| {
                        (
                            f.name().to_string(),
                            json!({
                                "median": p.mpps(t.name, f),
                                "rounds": p.rounds(t.name, f),
                            }),
                        )
                    })
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            );
            (t.name.to_string(), Value::Object(r))
        })
        .collect();
    json!({
        "warmup_s": opts.warmup().as_secs_f64(),
        "interval_s": opts.interval().as_secs_f64(),
        "rounds": opts.rounds(),
        "lcore": PART1_WORKER_LCORE,
        "order": "testpmd-io, testpmd-macswap, mwrouterd, l3fwd-lpm, l3fwd-em, l3fwd-graph; reversed in odd rounds",
        "pcaps": p.pcaps.iter().cloned().collect::<serde_json::Map<_, _>>(),
        "ipv4_pcaps": p.ipv4_pcaps.iter().cloned().collect::<serde_json::Map<_, _>>(),
        "l3fwd_build": p.l3fwd_build,
        "l3fwd_patch": "benches/l3fwd.patch",
        "l3fwd_skipped": p.l3fwd_skipped,
        "runs": p.runs.iter().map(|r| r.record.clone()).collect::<Vec<_>>(),
        "ratios": ratios,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(t: Traffic, f: Forwarder, round: u32, mpps: f64) -> Run {
        Run {
            traffic: t,
            forwarder: f,
            round,
            mpps,
            record: Value::Null,
        }
    }

    #[test]
    fn figures_are_medians_and_ratios_are_taken_within_a_round() {
        let t = PART1[0];
        let mut p = Part1::default();
        // Round 0: testpmd fast; round 1: everything slower; round 2: io
        // alone slow. Ratios per round: io 0.5, 0.5, 1.0; macswap 0.5, 0.5, 0.5.
        for (round, io, mac, mw) in [
            (0, 40.0, 40.0, 20.0),
            (1, 20.0, 20.0, 10.0),
            (2, 30.0, 60.0, 30.0),
        ] {
            p.runs.push(run(t, Forwarder::Io, round, io));
            p.runs.push(run(t, Forwarder::Macswap, round, mac));
            p.runs.push(run(t, Forwarder::Mwrouterd, round, mw));
        }
        assert_eq!(p.rounds(t.name, Forwarder::Io), vec![40.0, 20.0, 30.0]);
        assert_eq!(p.mpps(t.name, Forwarder::Io), Some(30.0));
        assert_eq!(p.mpps(t.name, Forwarder::Mwrouterd), Some(20.0));
        assert_eq!(p.round_ratios(t.name, Forwarder::Io), vec![0.5, 0.5, 1.0]);
        // Not 20 / 30: the median of the rounds' own ratios.
        assert_eq!(p.ratios(t.name), (Some(0.5), Some(0.5)));
        assert_eq!(p.ratios(PART1[1].name), (None, None));
    }

    #[test]
    fn a_round_without_mwrouterd_has_no_ratio() {
        let t = PART1[0];
        let mut p = Part1::default();
        p.runs.push(run(t, Forwarder::Io, 0, 40.0));
        p.runs.push(run(t, Forwarder::Macswap, 0, 40.0));
        p.runs.push(run(t, Forwarder::Mwrouterd, 0, 10.0));
        p.runs.push(run(t, Forwarder::Io, 1, 10.0));
        assert_eq!(p.round_ratios(t.name, Forwarder::Io), vec![0.25]);
    }

    #[test]
    fn peers_have_ratios_of_their_own_and_skip_l2() {
        let t = PART1[0];
        let mut p = Part1::default();
        for (round, lpm, mw) in [(0, 20.0, 30.0), (1, 40.0, 20.0), (2, 30.0, 30.0)] {
            p.runs.push(run(t, Forwarder::L3fwdLpm, round, lpm));
            p.runs.push(run(t, Forwarder::Mwrouterd, round, mw));
        }
        assert_eq!(
            p.round_ratios(t.name, Forwarder::L3fwdLpm),
            vec![1.5, 0.5, 1.0]
        );
        assert_eq!(p.ratio_to(t.name, Forwarder::L3fwdLpm), Some(1.0));
        assert_eq!(p.ratio_to(t.name, Forwarder::L3fwdGraph), None);
        assert!(!Forwarder::L3fwdGraph.applies(Kind::L2));
        assert!(Forwarder::Io.applies(Kind::L2));
        assert_eq!(Forwarder::order(0, Kind::L2).len(), 4);
        let (even, odd) = (Forwarder::order(0, Kind::L3), Forwarder::order(1, Kind::L3));
        assert_eq!(even.len(), 7);
        assert_eq!(even.iter().rev().copied().collect::<Vec<_>>(), odd);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }
}
