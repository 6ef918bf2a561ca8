//! The `mwsim` command: run a topology file or a generated one, with faults,
//! and report convergence, messages, RTs per HR, loops and paths.

use std::time::Instant;

use clap::Parser;
use rrp::PortId;
use rrp::router::Time;
use serde::Serialize;

use crate::rng::seeded;
use crate::sim::{Sim, SimConfig};
use crate::topology::Topology;

/// Runs a MessageWay topology in the deterministic simulator.
#[derive(Debug, Parser)]
#[command(name = "mwsim", version, about)]
pub struct Args {
    /// Topology file (TOML; the format mwlab reads).
    #[arg(required_unless_present = "random", conflicts_with = "random")]
    pub topology: Option<std::path::PathBuf>,
    /// A random connected topology of SANS SANs and ROUTERS routers.
    #[arg(long, value_name = "SANS,ROUTERS", value_parser = parse_pair)]
    pub random: Option<(usize, usize)>,
    /// Hosts per SAN of a random topology.
    #[arg(long, default_value_t = 5)]
    pub hosts_per_san: usize,
    /// Seed of every random choice (topology, faults, SNs).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Probability that a message is lost.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Probability that a message is duplicated.
    #[arg(long, default_value_t = 0.0)]
    pub dup: f64,
    /// Probability that a message is held back (reordered).
    #[arg(long, default_value_t = 0.0)]
    pub reorder: f64,
    /// Number of router-port flaps (down, then up) after first convergence.
    #[arg(long, default_value_t = 0)]
    pub flap: usize,
    /// Number of router crashes (then restarts) after first convergence.
    #[arg(long, default_value_t = 0)]
    pub crash: usize,
    /// Longest virtual time to run (ms).
    #[arg(long, default_value_t = 600_000)]
    pub duration: Time,
    /// RTs kept per SAN.
    #[arg(long, default_value_t = 4)]
    pub k: usize,
    /// Measure transient loops (all pairs at every FIB change; small topologies).
    #[arg(long)]
    pub track_loops: bool,
    /// Print the routers a packet from host SRC to host DST crosses.
    #[arg(long, num_args = 2, value_names = ["SRC", "DST"])]
    pub path: Option<Vec<String>>,
    /// Threads that handle the events of one instant (default: the machine's cores). The run
    /// is the same with any number; more than one is used only without --track-loops.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Print the topology (TOML, as mwlab reads it) and stop, without simulating: a random
    /// network to run in mwlab.
    #[arg(long)]
    pub print_topology: bool,
}

fn parse_pair(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s.split_once(',').ok_or("expected SANS,ROUTERS")?;
    Ok((
        a.trim().parse().map_err(|e| format!("SANS: {e}"))?,
        b.trim().parse().map_err(|e| format!("ROUTERS: {e}"))?,
    ))
}

/// What a run reports.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Converged (and reconverged after every fault).
    pub converged: bool,
    /// Virtual time of the first convergence (ms).
    pub converge_virtual_ms: Option<Time>,
    /// Virtual time of the last reconvergence after faults (ms).
    pub reconverge_virtual_ms: Option<Time>,
    /// Messages sent by routers and hosts.
    pub messages: u64,
    /// Bytes of those messages.
    pub bytes: u64,
    /// Most RTs kept by one HR.
    pub max_rts_per_hr: usize,
    /// Mean RTs kept per HR.
    pub mean_rts_per_hr: f64,
    /// HRs in the network.
    pub hrs: usize,
    /// Routers.
    pub routers: usize,
    /// SANs.
    pub sans: usize,
    /// Hosts.
    pub hosts: usize,
    /// SAN-graph diameter (SAN hops).
    pub diameter: usize,
    /// Host pairs checked once quiet.
    pub pairs: usize,
    /// Pairs that do not reach each other once quiet.
    pub unreachable: usize,
    /// Pairs whose forwarding loops once quiet (must be 0).
    pub loops: usize,
    /// Transient loop episodes (with --track-loops).
    pub transient_loops: u64,
    /// Their total duration (ms).
    pub transient_loop_ms: u64,
    /// The longest one (ms).
    pub transient_loop_longest_ms: u64,
    /// Messages lost, duplicated, held back by the fault options.
    pub lost: u64,
    /// Duplicated.
    pub duplicated: u64,
    /// Reordered.
    pub reordered: u64,
    /// HR-DOWN events handled by routers.
    pub hr_down_events: u64,
    /// A third party's HR-DOWN about a live HR: probes sent, and how many
    /// of the HRs answered (docs/spec-notes.md 60).
    pub hr_down_probes: u64,
    /// Probed HRs that answered.
    pub hr_down_disproved: u64,
    /// Wall-clock time of the run (ms).
    pub wall_ms: u128,
    /// Of the wall-clock time, the part spent handling events on the shards: the part that
    /// `--threads` divides (ms).
    pub on_shards_ms: u128,
    /// Threads that handled the events of one instant.
    pub threads: usize,
    /// Peak resident memory of the process (MiB).
    pub max_rss_mib: u64,
    /// The seed.
    pub seed: u64,
    /// The path asked for with --path.
    pub path: Option<Vec<String>>,
}

fn max_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

/// The topology `args` name: the file, or a random one.
pub fn topology(args: &Args) -> Result<Topology, String> {
    Ok(match (&args.topology, args.random) {
        (Some(p), _) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Topology::from_toml(&text).map_err(|e| format!("{}: {e}", p.display()))?
        }
        (None, Some((s, r))) => {
            if s < 2 || r + 1 < s {
                return Err("--random needs at least 2 SANs and SANS-1 routers".into());
            }
            Topology::random(s, r, args.hosts_per_san, args.seed)
        }
        (None, None) => return Err("a topology file or --random is needed".into()),
    })
}

/// Runs `args`; errors are messages for the user.
pub fn run(args: &Args) -> Result<Report, String> {
    let start = Instant::now();
    let topo = topology(args)?;
    for p in [args.loss, args.dup, args.reorder] {
        if !(0.0..=1.0).contains(&p) {
            return Err("probabilities must be in 0..=1".into());
        }
    }
    let cfg = SimConfig {
        seed: args.seed,
        k: args.k.max(1),
        loss: args.loss,
        dup: args.dup,
        reorder: args.reorder,
        track_loops: args.track_loops,
        threads: args.threads.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            usize::from,
        ),
        ..SimConfig::default()
    };
    let diameter = topo.diameter();
    let mut sim = Sim::new(topo, cfg)?;
    let first = sim.run_until_converged(args.duration);
    let mut last = first;
    let mut converged = first.is_some();
    if converged && (args.flap > 0 || args.crash > 0) {
        let mut rng = seeded(args.seed ^ 0xFA17);
        let mut t = sim.now + 1_000;
        for _ in 0..args.flap {
            let r = rng.below(sim.routers.len() as u64) as usize;
            let p = PortId::new(rng.below(sim.routers[r].hrs.len() as u64) as usize);
            sim.link_down_at(r, p, t);
            sim.link_up_at(r, p, t + 10_000);
            t += 2_000;
        }
        for _ in 0..args.crash {
            let r = rng.below(sim.routers.len() as u64) as usize;
            sim.crash_at(r, t);
            sim.restart_at(r, t + 15_000);
            t += 2_000;
        }
        // Past the last fault, then until quiet again.
        sim.run_until(t + 20_000);
        last = sim.run_until_converged(args.duration.max(sim.now + 1));
        converged = last.is_some();
    }
    let (pairs, _ok, unreachable, loops) = sim.all_pairs();
    let rts = sim.rts_per_hr();
    let path = match &args.path {
        Some(v) => {
            let a = sim
                .host_index(&v[0])
                .ok_or_else(|| format!("no host {}", v[0]))?;
            let b = sim
                .host_index(&v[1])
                .ok_or_else(|| format!("no host {}", v[1]))?;
            Some(sim.path_names(a, b).unwrap_or_else(|e| vec![e]))
        }
        None => None,
    };
    let stats = sim.stats.clone();
    let rstats = sim.router_stats();
    let routers = sim.routers.len();
    let sans = sim.topo.sans.len();
    let hosts = sim.hosts.len();
    let loops_stats = sim.loops.clone();
    let on_shards_ms = sim.on_shards_wall.as_millis();
    let threads = sim.cfg.threads;
    // Freeing hundreds of engines takes longer than the OS takes to reclaim
    // the memory at exit.
    std::mem::forget(sim);
    Ok(Report {
        converged,
        converge_virtual_ms: first,
        reconverge_virtual_ms: if args.flap + args.crash > 0 {
            last
        } else {
            None
        },
        messages: stats.messages,
        bytes: stats.bytes,
        max_rts_per_hr: rts.iter().copied().max().unwrap_or(0),
        mean_rts_per_hr: if rts.is_empty() {
            0.0
        } else {
            rts.iter().sum::<usize>() as f64 / rts.len() as f64
        },
        hrs: rts.len(),
        routers,
        sans,
        hosts,
        diameter,
        pairs,
        unreachable,
        loops,
        transient_loops: loops_stats.episodes,
        transient_loop_ms: loops_stats.total_ms,
        transient_loop_longest_ms: loops_stats.longest_ms,
        lost: stats.lost,
        duplicated: stats.duplicated,
        reordered: stats.reordered,
        hr_down_events: stats.hr_down_events,
        hr_down_probes: rstats.get("hr_down_probes").copied().unwrap_or(0),
        hr_down_disproved: rstats.get("hr_down_disproved").copied().unwrap_or(0),
        wall_ms: start.elapsed().as_millis(),
        on_shards_ms,
        threads,
        max_rss_mib: max_rss_mib(),
        seed: args.seed,
        path,
    })
}

/// Entry point of the binary: exit code 0 when converged without loops, 1
/// otherwise, 2 for bad arguments or files.
pub fn main() -> i32 {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if args.print_topology {
        return match topology(&args) {
            Ok(t) => {
                print!("{}", t.to_toml());
                0
            }
            Err(e) => {
                eprintln!("mwsim: {e}");
                2
            }
        };
    }
    let r = match run(&args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mwsim: {e}");
            return 2;
        }
    };
    if args.json {
        println!("{}", serde_json::to_string(&r).expect("serialisable"));
    } else {
        let ms = |t: Option<Time>| t.map_or("-".to_string(), |t| format!("{t} ms"));
        println!(
            "converged            {}",
            if r.converged { "yes" } else { "NO" }
        );
        println!(
            "convergence          {} (virtual)",
            ms(r.converge_virtual_ms)
        );
        if r.reconverge_virtual_ms.is_some() || args.flap + args.crash > 0 {
            println!(
                "reconvergence        {} (virtual)",
                ms(r.reconverge_virtual_ms)
            );
        }
        println!(
            "network              {} SANs, {} routers, {} HRs, {} hosts, diameter {}",
            r.sans, r.routers, r.hrs, r.hosts, r.diameter
        );
        println!("messages             {} ({} bytes)", r.messages, r.bytes);
        println!(
            "RTs per HR           max {}, mean {:.1}",
            r.max_rts_per_hr, r.mean_rts_per_hr
        );
        println!(
            "reachability         {}/{} pairs, {} unreachable",
            r.pairs - r.unreachable - r.loops,
            r.pairs,
            r.unreachable
        );
        println!("loops once quiet     {}", r.loops);
        println!(
            "transient loops      {} ({} ms in all, longest {} ms)",
            r.transient_loops, r.transient_loop_ms, r.transient_loop_longest_ms
        );
        println!(
            "faults               lost {}, duplicated {}, reordered {}, HR-DOWN events {}",
            r.lost, r.duplicated, r.reordered, r.hr_down_events
        );
        println!(
            "wall clock           {} ms ({} ms on {} threads), peak memory {} MiB, seed {}",
            r.wall_ms, r.on_shards_ms, r.threads, r.max_rss_mib, r.seed
        );
        if let Some(p) = &r.path {
            println!("path                 [{}]", p.join(", "));
        }
    }
    if r.converged && r.loops == 0 { 0 } else { 1 }
}
