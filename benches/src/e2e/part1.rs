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

use std::time::Duration;

use serde_json::{Value, json};

use super::addr::*;
use super::hugepages::Memory;
use super::process::check_interrupt;
use super::router::{self, HrSpec, Router, RouterSpec};
use super::testpmd::{self, Testpmd};
use super::traffic::{self, PART1, Pcap, Traffic};
use super::{Env, Options, PART1_WORKER_LCORE, Result, median, path_str, ratio};

/// The forwarders, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forwarder {
    /// dpdk-testpmd, io forwarding.
    Io,
    /// dpdk-testpmd, MAC swap.
    Macswap,
    /// mwrouterd.
    Mwrouterd,
}

impl Forwarder {
    /// All of them, in order.
    pub const ALL: [Forwarder; 3] = [Forwarder::Io, Forwarder::Macswap, Forwarder::Mwrouterd];

    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Forwarder::Io => "testpmd-io",
            Forwarder::Macswap => "testpmd-macswap",
            Forwarder::Mwrouterd => "mwrouterd",
        }
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

    /// mwrouterd / io and mwrouterd / macswap on traffic `name`: the
    /// medians of the rounds' ratios.
    pub fn ratios(&self, name: &str) -> (Option<f64>, Option<f64>) {
        (
            median(self.round_ratios(name, Forwarder::Io)),
            median(self.round_ratios(name, Forwarder::Macswap)),
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
        for round in 0..opts.rounds() {
            for f in Forwarder::ALL {
                check_interrupt()?;
                let busy = super::wait_quiet(opts.patience())?;
                let mut run = match f {
                    Forwarder::Io | Forwarder::Macswap => run_testpmd(env, opts, mem, t, &pcap, f)?,
                    Forwarder::Mwrouterd => run_router(env, opts, mem, t, &pcap)?,
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

fn run_router(env: &Env, opts: &Options, mem: &Memory, t: &Traffic, pcap: &Pcap) -> Result<Run> {
    let (rx, tx) = vdevs(pcap);
    let spec = RouterSpec {
        eal: mem.eal_flags(),
        main_lcore: 0,
        worker_core: PART1_WORKER_LCORE,
        a: HrSpec {
            device: rx,
            mac: ROUTER_A_MAC,
            static_entry: None,
        },
        b: HrSpec {
            device: tx,
            mac: ROUTER_B_MAC,
            static_entry: Some((NODE_B, GEN_B_MAC)),
        },
    };
    let tag = format!("p1-{}-mwrouterd", t.name);
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
            a.drops_text(),
            env.file(&format!("{tag}.toml")).display()
        ));
    }
    let dropped = a.dropped_total();
    if dropped * 1000 > a.received {
        eprintln!(
            "e2e: warning: mwrouterd dropped {dropped} of {} packets of {} during the interval: {}",
            a.received,
            t.label,
            a.drops_text()
        );
    }
    let record = json!({
        "traffic": t.name,
        "forwarder": Forwarder::Mwrouterd.name(),
        "command": command,
        "config": config,
        "lcore": PART1_WORKER_LCORE,
        "warmup_s": opts.warmup().as_secs_f64(),
        "duration_s": secs,
        "mpps": pps / 1e6,
        "ports": {
            "0": { "vdev": spec.a.device, "delta": a.to_json() },
            "1": { "vdev": spec.b.device, "delta": b.to_json() },
        },
        "ports_total": m.end.iter().enumerate().map(|(i, p)| (i.to_string(), p.to_json())).collect::<serde_json::Map<_, _>>(),
        "exited_on_sigterm": exited_on_sigterm,
        "drops": {
            "interval": a.drops_text(),
            "run_total": m.end.first().map(|p| p.drops_text()).unwrap_or_default(),
        },
    });
    Ok(Run {
        traffic: *t,
        forwarder: Forwarder::Mwrouterd,
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
            let (io, mac) = p.ratios(t.name);
            (
                t.name.to_string(),
                json!({
                    "vs_io": io,
                    "vs_macswap": mac,
                    "rounds_vs_io": p.round_ratios(t.name, Forwarder::Io),
                    "rounds_vs_macswap": p.round_ratios(t.name, Forwarder::Macswap),
                    "mpps": Forwarder::ALL
                        .iter()
                        .map(|&f| (f.name().to_string(), json!({
                            "median": p.mpps(t.name, f),
                            "rounds": p.rounds(t.name, f),
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
        "pcaps": p.pcaps.iter().cloned().collect::<serde_json::Map<_, _>>(),
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
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }
}
