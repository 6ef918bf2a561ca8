//! engine-bench: the forwarding engine on one core, through in-memory ports
//! with buffer recycling, against a baseline that only touches each packet's
//! first cache line and its trailer (see `benches::scenario`).
//!
//! ```text
//! cargo run --release -p benches --bin engine-bench -- [--json] [--quick] [--core N]
//!     [--runs N] [--packets N] [--per-port N] [--dpdk [--huge]]
//! ```
//!
//! Variants, interleaved round by round (the order reversed every other
//! round): L3 and L2 at 64 and 1500 bytes and the baseline at each size;
//! L3 at 64 bytes with partitions on (`l3p_64`: every port's SAN with
//! tables, the packets in their partition, `scenario::partitions_fib`);
//! multicast at 64 and 1500 bytes (group packets into port 0 of a 5-port
//! box, 4 copies each, `benches::mcast`) through in-memory ports (the copy
//! path) and, with `--dpdk` (built with `--features dpdk`), through DPDK
//! vdevs with chained replicas (zero copy) and with copies.
//! Each run is preceded by an untimed pass over every packet in flight; the
//! counters are checked after each run (received = forwarded, nothing
//! dropped, punted or notified) and the bench aborts otherwise. Reported:
//! the median over the runs, and the median over the rounds of the ratio to
//! the baseline of the same size measured in the same round.

use std::process::exit;

use benches::mcast::{self, FANOUT, McastRig};
use benches::scaling::{Scaling, Workers};
use benches::scenario::{
    BaselineStep, DEFAULT_PER_PORT, DESTINATIONS, EngineStep, Kind, PARTITION_SRC, PORTS, Rig,
    RunStats, SEED, SIZES, check_clean, destinations, full_fib, partitions_fib,
};
use benches::{Rng, median, sysinfo};
use serde_json::{Map, Value, json};

struct Args {
    json: bool,
    quick: bool,
    core: Option<usize>,
    runs: usize,
    packets: u64,
    per_port: usize,
    only: Vec<String>,
    dpdk: bool,
    huge: bool,
    mcast_sizes: Vec<usize>,
    scale_cores: Option<Vec<usize>>,
}

const USAGE: &str = "usage: engine-bench [--json] [--quick] [--core N] [--runs N] [--packets N] [--per-port N] [--dpdk [--huge]]
  --json        print one JSON object instead of a table
  --quick       a couple of seconds in all (3 runs of 200,000 packets per variant)
  --core N      pin the thread to core N
  --runs N      timed runs per variant (default 11)
  --packets N   packets per run (default 3,000,000)
  --per-port N  packets in flight per port (default 1024; 4 ports), and of the multicast variants
  --only V,...  run only these variants (e.g. l3_64,baseline_64,mcast_64), for profiling
  --dpdk        also the multicast variants on DPDK vdevs (needs --features dpdk): chains and copies
  --huge        with --dpdk: EAL --in-memory on reserved hugepages (default --no-huge -m 1024)
  --mcast-sizes L  the multicast variants' sizes (default 64,1500; 64 to 1500 each)
  --scale-cores A,B,...  the scaling figure's cores: L3 64 B with one worker (on A) and with one
                worker per core, each on its own ports, side by side (default 0,1; variant `scale`)";

fn fail(msg: &str) -> ! {
    eprintln!("engine-bench: {msg}");
    exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        json: false,
        quick: false,
        core: None,
        runs: 0,
        packets: 0,
        per_port: DEFAULT_PER_PORT,
        only: Vec::new(),
        dpdk: false,
        huge: false,
        mcast_sizes: SIZES.to_vec(),
        scale_cores: None,
    };
    let mut it = std::env::args().skip(1);
    let num = |it: &mut dyn Iterator<Item = String>, what: &str| -> u64 {
        it.next()
            .and_then(|v| v.replace('_', "").parse().ok())
            .unwrap_or_else(|| fail(&format!("{what} needs a number\n{USAGE}")))
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--json" => a.json = true,
            "--quick" => a.quick = true,
            "--core" => a.core = Some(num(&mut it, "--core") as usize),
            "--runs" => a.runs = num(&mut it, "--runs") as usize,
            "--packets" => a.packets = num(&mut it, "--packets"),
            "--per-port" => a.per_port = num(&mut it, "--per-port") as usize,
            "--dpdk" => a.dpdk = true,
            "--mcast-sizes" => {
                let v = it
                    .next()
                    .unwrap_or_else(|| fail(&format!("--mcast-sizes needs sizes\n{USAGE}")));
                a.mcast_sizes = v
                    .split(',')
                    .map(|x| {
                        x.parse()
                            .ok()
                            .filter(|&n: &usize| (64..=1500).contains(&n))
                            .unwrap_or_else(|| fail(&format!("--mcast-sizes: {x}: 64 to 1500")))
                    })
                    .collect();
            }
            "--huge" => a.huge = true,
            "--scale-cores" => {
                let v = it
                    .next()
                    .unwrap_or_else(|| fail(&format!("--scale-cores needs cores\n{USAGE}")));
                let cores: Vec<usize> = v
                    .split(',')
                    .map(|x| {
                        x.parse()
                            .unwrap_or_else(|_| fail(&format!("--scale-cores: {x}: not a core")))
                    })
                    .collect();
                if cores.len() < 2 {
                    fail("--scale-cores needs two cores or more");
                }
                a.scale_cores = Some(cores);
            }
            "--only" => {
                let v = it
                    .next()
                    .unwrap_or_else(|| fail(&format!("--only needs variants\n{USAGE}")));
                a.only.extend(v.split(',').map(str::to_string));
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                exit(0)
            }
            _ => fail(&format!("unknown argument {arg}\n{USAGE}")),
        }
    }
    if a.runs == 0 {
        a.runs = if a.quick { 3 } else { 11 };
    }
    if a.packets == 0 {
        a.packets = if a.quick { 200_000 } else { 3_000_000 };
    }
    if a.per_port == 0 {
        fail("--per-port must be positive");
    }
    if a.dpdk && !cfg!(feature = "dpdk") {
        fail("--dpdk needs engine-bench built with --features dpdk");
    }
    a
}

#[derive(Clone, Copy)]
enum StepRef {
    Engine(usize),
    Baseline(usize),
    /// The in-memory multicast rig and engine `i`.
    Mcast(usize),
    /// The DPDK multicast rig `i` (its own engine).
    McastDpdk(usize),
}

impl StepRef {
    fn is_mcast(self) -> bool {
        matches!(self, StepRef::Mcast(_) | StepRef::McastDpdk(_))
    }
}

/// The DPDK multicast rigs (feature `dpdk`), or nothing.
#[cfg(feature = "dpdk")]
type DpdkRig = mcast::dpdk::DpdkMcastRig;
#[cfg(not(feature = "dpdk"))]
struct DpdkRig;

#[cfg(not(feature = "dpdk"))]
impl DpdkRig {
    fn run(&mut self, _: u64) -> RunStats {
        unreachable!("built without dpdk")
    }
}

/// Creates the DPDK multicast rigs: per size, chains then copies.
#[cfg(feature = "dpdk")]
fn dpdk_rigs(args: &Args, rng: &mut Rng) -> Vec<(DpdkRig, String)> {
    use ports::dpdk::Eal;
    let core = args.core.unwrap_or(0);
    let eal = Eal::init(mcast::dpdk::eal_args(core, args.huge))
        .unwrap_or_else(|e| fail(&format!("EAL: {e}")));
    let mut v = Vec::new();
    for &size in &args.mcast_sizes {
        for chains in [true, false] {
            let key = if chains {
                format!("mcast_dpdk_{size}")
            } else {
                format!("mcast_dpdk_copy_{size}")
            };
            let tag = format!("{}{size}", if chains { 'c' } else { 'k' });
            let rig = mcast::dpdk::DpdkMcastRig::new(eal, &tag, size, args.per_port, chains, rng)
                .unwrap_or_else(|e| fail(&format!("{key}: {e}")));
            v.push((rig, key));
        }
    }
    v
}

#[cfg(not(feature = "dpdk"))]
fn dpdk_rigs(_: &Args, _: &mut Rng) -> Vec<(DpdkRig, String)> {
    Vec::new()
}

/// Checks a DPDK multicast rig after a run: clean counters, and the
/// replicas of the kind its ports make.
#[cfg(feature = "dpdk")]
fn check_dpdk(key: &str, rig: &DpdkRig, counted: u64) -> Result<(), String> {
    mcast::check_clean(key, rig.counters(), &rig.group_counters(), counted)?;
    let (chained, copied) = rig.replicas();
    let want = (FANOUT as u64 - 1) * counted;
    let got = if rig.chains { chained } else { copied };
    if got != want {
        return Err(format!(
            "{key}: {chained} replicas chained and {copied} copied, expected {want} {}",
            if rig.chains { "chained" } else { "copied" }
        ));
    }
    Ok(())
}

#[cfg(not(feature = "dpdk"))]
fn check_dpdk(_: &str, _: &DpdkRig, _: u64) -> Result<(), String> {
    Ok(())
}

struct Row {
    label: String,
    mpps: f64,
    ns: f64,
    ratio: Option<f64>,
    min: f64,
    max: f64,
    wall: f64,
    on_cpu: f64,
}

struct Variant {
    key: String,
    label: String,
    rig: usize,
    step: StepRef,
    size: usize,
    runs: Vec<RunStats>,
    counted: u64,
}

fn main() {
    let args = parse_args();
    if let Some(c) = args.core
        && !core_affinity::set_for_current(core_affinity::CoreId { id: c })
    {
        fail(&format!("could not pin the thread to core {c}"));
    }

    let (fib, routes) = full_fib();
    let mut rng = Rng::new(SEED);
    let dests = destinations(&mut rng);
    let mut rigs = Vec::new();
    let mut variants = Vec::new();
    let mut engines = 0;
    for (si, &size) in SIZES.iter().enumerate() {
        for kind in [Kind::L3, Kind::L2] {
            rigs.push(Rig::new(kind, size, args.per_port, &dests, &mut rng));
            variants.push(Variant {
                key: format!("{}_{size}", kind.name()),
                label: format!("{} {size} B", kind.name().to_uppercase()),
                rig: rigs.len() - 1,
                step: StepRef::Engine(engines),
                size,
                runs: Vec::new(),
                counted: 0,
            });
            engines += 1;
        }
        // The baseline runs on the L3 packets of the same size.
        variants.push(Variant {
            key: format!("baseline_{size}"),
            label: format!("baseline {size} B"),
            rig: rigs.len() - 2,
            step: StepRef::Baseline(si),
            size,
            runs: Vec::new(),
            counted: 0,
        });
    }
    let mut engine_steps = EngineStep::many(fib, engines);
    let mut baselines: Vec<BaselineStep> = SIZES.iter().map(|_| BaselineStep::default()).collect();
    let in_flight = rigs[0].in_flight() as u64;

    // Multicast: in memory (copies), and on DPDK vdevs (chains, copies).
    let mut mrigs = Vec::new();
    for &size in &args.mcast_sizes {
        mrigs.push(McastRig::new(size, args.per_port, &mut rng));
        variants.push(Variant {
            key: format!("mcast_{size}"),
            label: format!("mcast {size} B, memory (copies)"),
            rig: mrigs.len() - 1,
            step: StepRef::Mcast(mrigs.len() - 1),
            size,
            runs: Vec::new(),
            counted: 0,
        });
    }
    let mut msteps = mcast::engines(mrigs.len());
    let m_in_flight = args.per_port as u64;
    let mut drigs: Vec<DpdkRig> = Vec::new();
    if args.dpdk {
        for (rig, key) in dpdk_rigs(&args, &mut rng) {
            #[cfg(feature = "dpdk")]
            let (size, label) = (
                rig.size,
                format!(
                    "mcast {} B, DPDK {}",
                    rig.size,
                    if rig.chains { "chains" } else { "copies" }
                ),
            );
            #[cfg(not(feature = "dpdk"))]
            let (size, label) = (0, String::new());
            drigs.push(rig);
            variants.push(Variant {
                key,
                label,
                rig: drigs.len() - 1,
                step: StepRef::McastDpdk(drigs.len() - 1),
                size,
                runs: Vec::new(),
                counted: 0,
            });
        }
    }

    // Partitions on (every port's SAN with tables, packets in their
    // partition), after the others so that their packets stay the same.
    if args.only.is_empty() || args.only.iter().any(|k| k == "l3p_64") {
        rigs.push(Rig::from(
            Kind::L3,
            64,
            args.per_port,
            &dests,
            &mut rng,
            Some(PARTITION_SRC),
        ));
        engine_steps.extend(EngineStep::many(partitions_fib(&dests).0, 1));
        variants.push(Variant {
            key: "l3p_64".into(),
            label: "L3 64 B, partitions on".into(),
            rig: rigs.len() - 1,
            step: StepRef::Engine(engine_steps.len() - 1),
            size: 64,
            runs: Vec::new(),
            counted: 0,
        });
    }
    for round in 0..args.runs {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..variants.len()).collect()
        } else {
            (0..variants.len()).rev().collect()
        };
        for vi in order {
            let v = &mut variants[vi];
            if !args.only.is_empty() && !args.only.contains(&v.key) {
                continue;
            }
            let (warm, timed) = match v.step {
                StepRef::Engine(i) => {
                    let rig = &mut rigs[v.rig];
                    let s = &mut engine_steps[i];
                    let w = rig.run(s, in_flight);
                    let t = rig.run(s, args.packets);
                    v.counted += w.packets + t.packets;
                    if let Err(e) = check_clean(&v.key, s.engine().counters(), v.counted) {
                        fail(&e);
                    }
                    (w, t)
                }
                StepRef::Baseline(i) => {
                    let rig = &mut rigs[v.rig];
                    let s = &mut baselines[i];
                    let w = rig.run(s, in_flight);
                    let t = rig.run(s, args.packets);
                    v.counted += w.packets + t.packets;
                    let c = benches::scenario::Step::counters(s);
                    if let Err(e) = check_clean(&v.key, c, v.counted) {
                        fail(&e);
                    }
                    (w, t)
                }
                StepRef::Mcast(i) => {
                    let rig = &mut mrigs[i];
                    let s = &mut msteps[i];
                    let w = rig.run(s, m_in_flight);
                    let t = rig.run(s, args.packets);
                    v.counted += w.packets + t.packets;
                    let e = s.engine();
                    if let Err(e) =
                        mcast::check_clean(&v.key, e.counters(), &e.mcast_counters()[0], v.counted)
                    {
                        fail(&e);
                    }
                    (w, t)
                }
                StepRef::McastDpdk(i) => {
                    let rig = &mut drigs[i];
                    let w = rig.run(m_in_flight);
                    let t = rig.run(args.packets);
                    v.counted += w.packets + t.packets;
                    if let Err(e) = check_dpdk(&v.key, rig, v.counted) {
                        fail(&e);
                    }
                    (w, t)
                }
            };
            let _ = warm;
            if timed.packets < args.packets {
                fail(&format!("{}: the loop ran dry", v.key));
            }
            v.runs.push(timed);
        }
    }
    for rig in &mut rigs {
        if let Err(e) = rig.verify() {
            fail(&e);
        }
    }
    for rig in &mut mrigs {
        if let Err(e) = rig.verify() {
            fail(&e);
        }
    }
    // Scaling: one worker, then one per core, each on its own ports.
    let scale_cores = args
        .scale_cores
        .clone()
        .unwrap_or_else(|| (0..sysinfo::cpus().clamp(1, 2)).collect());
    let scaling = (scale_cores.len() >= 2
        && (args.only.is_empty() || args.only.iter().any(|k| k == "scale")))
    .then(|| run_scaling(&args, &scale_cores));

    // Every variant's traffic left on all the ports (several next hops and ports).
    for v in variants.iter().filter(|v| !v.runs.is_empty()) {
        if let StepRef::Engine(i) = v.step {
            let c = engine_steps[i].engine().counters();
            let busy = c.iter().filter(|p| p.transmitted > 0).count();
            if busy < PORTS {
                fail(&format!("{}: only {busy} ports transmitted", v.key));
            }
        }
    }

    // Figures.
    let mpps = |v: &Variant| median(&v.runs.iter().map(RunStats::mpps).collect::<Vec<_>>());
    let base_of = |size: usize| {
        variants
            .iter()
            .position(|b| matches!(b.step, StepRef::Baseline(_)) && b.size == size)
            .expect("a baseline per size")
    };
    let mut out = Map::new();
    let mut detail = Map::new();
    let mut rows = Vec::new();
    let mut mrows = Vec::new();
    // The same-round ratio of variant `a` to variant `b`.
    let same_round = |a: &Variant, b: &Variant| {
        let r: Vec<f64> = a
            .runs
            .iter()
            .zip(&b.runs)
            .map(|(x, y)| x.mpps() / y.mpps())
            .collect();
        (!r.is_empty()).then(|| median(&r))
    };
    for v in variants
        .iter()
        .filter(|v| !v.runs.is_empty() && v.step.is_mcast())
    {
        let m = mpps(v);
        let all: Vec<f64> = v.runs.iter().map(|r| round3(r.mpps())).collect();
        let wall: Vec<f64> = v.runs.iter().map(|r| round3(r.wall_mpps())).collect();
        let on_cpu = median(&v.runs.iter().map(RunStats::on_cpu).collect::<Vec<_>>());
        out.insert(format!("{}_mpps", v.key), json!(round3(m)));
        out.insert(
            format!("{}_copies_mpps", v.key),
            json!(round3(m * FANOUT as f64)),
        );
        out.insert(format!("{}_ns", v.key), json!(round3(1e3 / m)));
        out.insert(format!("{}_wall_mpps", v.key), json!(round3(median(&wall))));
        // Chains against copies on the same DPDK ports, and against the
        // in-memory copy path, in the same round.
        let find = |k: String| variants.iter().find(|x| x.key == k && !x.runs.is_empty());
        let mut vs = Vec::new();
        if let StepRef::McastDpdk(_) = v.step
            && !v.key.contains("_copy_")
        {
            if let Some(r) =
                find(format!("mcast_dpdk_copy_{}", v.size)).and_then(|c| same_round(v, c))
            {
                out.insert(format!("{}_vs_dpdk_copy", v.key), json!(round3(r)));
                vs.push(format!("{r:.2} x DPDK copies"));
            }
            if let Some(r) = find(format!("mcast_{}", v.size)).and_then(|c| same_round(v, c)) {
                out.insert(format!("{}_vs_memory", v.key), json!(round3(r)));
                vs.push(format!("{r:.2} x memory"));
            }
        }
        detail.insert(
            v.key.clone(),
            json!({
                "runs_mpps": all,
                "runs_wall_mpps": wall,
                "on_cpu": round3(on_cpu),
                "fanout": FANOUT,
            }),
        );
        mrows.push((v.label.clone(), m, all, on_cpu, vs.join(", ")));
    }
    for v in variants
        .iter()
        .filter(|v| !v.runs.is_empty() && !v.step.is_mcast())
    {
        let m = mpps(v);
        let ns = 1e3 / m;
        out.insert(format!("{}_mpps", v.key), json!(round3(m)));
        out.insert(format!("{}_ns", v.key), json!(round3(ns)));
        let b = &variants[base_of(v.size)];
        let ratio = if matches!(v.step, StepRef::Engine(_)) && !b.runs.is_empty() {
            let r: Vec<f64> = v
                .runs
                .iter()
                .zip(&b.runs)
                .map(|(a, b)| a.mpps() / b.mpps())
                .collect();
            let r = median(&r);
            out.insert(format!("{}_vs_baseline", v.key), json!(round3(r)));
            Some(r)
        } else {
            None
        };
        let all: Vec<f64> = v.runs.iter().map(|r| round3(r.mpps())).collect();
        let wall: Vec<f64> = v.runs.iter().map(|r| round3(r.wall_mpps())).collect();
        let min = all.iter().copied().fold(f64::INFINITY, f64::min);
        let max = all.iter().copied().fold(0.0, f64::max);
        let wall_m = median(&wall);
        let on_cpu = median(&v.runs.iter().map(RunStats::on_cpu).collect::<Vec<_>>());
        let burst = v.runs.iter().map(RunStats::avg_burst).sum::<f64>() / v.runs.len() as f64;
        out.insert(format!("{}_wall_mpps", v.key), json!(round3(wall_m)));
        detail.insert(
            v.key.clone(),
            json!({
                "runs_mpps": all,
                "runs_wall_mpps": wall,
                "min_mpps": min,
                "max_mpps": max,
                "on_cpu": round3(on_cpu),
                "avg_burst": round3(burst),
            }),
        );
        rows.push(Row {
            label: v.label.clone(),
            mpps: m,
            ns,
            ratio,
            min,
            max,
            wall: wall_m,
            on_cpu,
        });
    }
    if let Some(sc) = &scaling {
        let n = scale_cores.len();
        out.insert("scale_1_mpps".into(), json!(round3(sc.one_mpps())));
        out.insert(format!("scale_{n}_mpps"), json!(round3(sc.many_mpps())));
        out.insert(format!("scale_{n}_vs_1"), json!(round3(sc.ratio())));
        detail.insert(
            "scale".into(),
            json!({
                "traffic": "L3 64 B",
                "cores": scale_cores,
                "timing": "wall clock, from a common start to the last worker's end",
                "runs_1_mpps": sc.one.iter().map(|r| round3(r.mpps())).collect::<Vec<_>>(),
                "runs_n_mpps": sc.many.iter().map(|r| round3(r.mpps())).collect::<Vec<_>>(),
                "runs_n_per_worker_mpps": sc.many.iter()
                    .map(|r| r.per_worker().into_iter().map(round3).collect::<Vec<_>>())
                    .collect::<Vec<_>>(),
                "rounds_ratio": sc.ratios().into_iter().map(round3).collect::<Vec<_>>(),
            }),
        );
    }
    out.insert("date".into(), json!(sysinfo::date_utc()));
    out.insert("cpu".into(), json!(sysinfo::cpu_model()));
    out.insert("cpus".into(), json!(sysinfo::cpus()));
    out.insert("hugepages".into(), json!(sysinfo::hugepages()));
    out.insert("rustc".into(), json!(sysinfo::rustc()));
    out.insert("build".into(), json!(sysinfo::build()));
    out.insert("core".into(), json!(args.core));
    out.insert("quick".into(), json!(args.quick));
    out.insert(
        "timing".into(),
        json!("thread CPU time (wall-clock figures in *_wall_mpps)"),
    );
    out.insert("packets_per_run".into(), json!(args.packets));
    out.insert("runs".into(), json!(args.runs));
    out.insert("ports".into(), json!(PORTS));
    out.insert("packets_in_flight".into(), json!(in_flight));
    out.insert("fib_routes_per_port".into(), json!(routes));
    out.insert("destinations".into(), json!(DESTINATIONS));
    out.insert(
        "mcast".into(),
        json!({
            "ports": mcast::PORTS,
            "fanout": FANOUT,
            "packets_in_flight": m_in_flight,
            "dpdk": args.dpdk,
            "dpdk_eal": if args.dpdk { dpdk_eal_words(&args) } else { Vec::new() },
            "dpdk_ports": dpdk_modes(&drigs),
        }),
    );
    out.insert("detail".into(), Value::Object(detail));

    if args.json {
        println!("{}", Value::Object(out));
        return;
    }
    println!(
        "engine-bench {} | {} | {} | {} | core {}",
        sysinfo::date_utc(),
        sysinfo::cpu_model(),
        sysinfo::rustc(),
        sysinfo::build(),
        args.core.map_or("not pinned".into(), |c| c.to_string())
    );
    println!(
        "{PORTS} ports, full FIB ({routes} routes per ingress port), {DESTINATIONS} destinations, \
         {in_flight} packets in flight; {} runs x {} packets per variant, interleaved; medians",
        args.runs, args.packets
    );
    println!();
    println!(
        "{:<16} {:>8} {:>8} {:>12} {:>16} {:>10} {:>7}",
        "variant", "Mpps", "ns/pkt", "vs baseline", "min..max Mpps", "wall Mpps", "on-CPU"
    );
    for r in rows {
        println!(
            "{:<16} {:>8.2} {:>8.2} {:>12} {:>16} {:>10.2} {:>6.0}%",
            r.label,
            r.mpps,
            r.ns,
            r.ratio.map_or("-".into(), |x| format!("{x:.2}")),
            format!("{:.2}..{:.2}", r.min, r.max),
            r.wall,
            r.on_cpu * 100.0
        );
    }
    println!();
    println!(
        "Mpps and ns/pkt from the thread's CPU time (median of the runs); vs baseline = median over \
         the rounds of the ratio to the baseline of the same size in the same round."
    );
    if let Some(sc) = &scaling {
        let n = scale_cores.len();
        println!();
        println!(
            "Scaling (L3 64 B, each worker on its own ports, wall clock): 1 worker (core {}) {:.2} \
             Mpps, {n} workers (cores {:?}) {:.2} Mpps: {:.2} x (rounds {:?})",
            scale_cores[0],
            sc.one_mpps(),
            scale_cores,
            sc.many_mpps(),
            sc.ratio(),
            sc.ratios().into_iter().map(round3).collect::<Vec<_>>()
        );
    }
    if !mrows.is_empty() {
        println!();
        println!(
            "Multicast: group packets into port 0 of a {}-port box, {FANOUT} copies each \
             ({} in flight); copies/s = {FANOUT} x packets/s",
            mcast::PORTS,
            m_in_flight
        );
        println!(
            "{:<34} {:>9} {:>12} {:>8} {:>16} {:>7}  same-round ratios",
            "variant", "Mpps in", "copies Mpps", "ns/pkt", "min..max Mpps", "on-CPU"
        );
        for (label, m, all, on_cpu, vs) in mrows {
            let min = all.iter().copied().fold(f64::INFINITY, f64::min);
            let max = all.iter().copied().fold(0.0, f64::max);
            println!(
                "{:<34} {:>9.2} {:>12.2} {:>8.2} {:>16} {:>6.0}%  {vs}",
                label,
                m,
                m * FANOUT as f64,
                1e3 / m,
                format!("{min:.2}..{max:.2}"),
                on_cpu * 100.0
            );
        }
    }
}

/// The scaling rounds: one worker and all of `cores` in turn (the order
/// reversed every other round), `args.packets` packets per worker per run.
fn run_scaling(args: &Args, cores: &[usize]) -> Scaling {
    let mut rng = Rng::new(SEED ^ 0x5ca1e);
    let dests = destinations(&mut rng);
    let mut one = Workers::new(&cores[..1], Kind::L3, 64, args.per_port, &dests, &mut rng);
    let mut many = Workers::new(cores, Kind::L3, 64, args.per_port, &dests, &mut rng);
    let mut s = Scaling::default();
    for round in 0..args.runs {
        let mut first_one = || one.run(args.packets).unwrap_or_else(|e| fail(&e));
        if round % 2 == 0 {
            s.one.push(first_one());
            s.many
                .push(many.run(args.packets).unwrap_or_else(|e| fail(&e)));
        } else {
            s.many
                .push(many.run(args.packets).unwrap_or_else(|e| fail(&e)));
            s.one.push(first_one());
        }
    }
    if let Err(e) = one.verify().and_then(|()| many.verify()) {
        fail(&e);
    }
    s
}

#[cfg(feature = "dpdk")]
fn dpdk_eal_words(args: &Args) -> Vec<String> {
    mcast::dpdk::eal_args(args.core.unwrap_or(0), args.huge)
}

#[cfg(not(feature = "dpdk"))]
fn dpdk_eal_words(_: &Args) -> Vec<String> {
    Vec::new()
}

#[cfg(feature = "dpdk")]
fn dpdk_modes(rigs: &[DpdkRig]) -> Value {
    json!(rigs.iter().map(|r| r.modes()).collect::<Vec<_>>())
}

#[cfg(not(feature = "dpdk"))]
fn dpdk_modes(_: &[DpdkRig]) -> Value {
    json!([])
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
