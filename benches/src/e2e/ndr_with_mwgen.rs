//! Part 2: end to end with the generator.
//!
//! ```text
//!  mwgen (lcore 1)                          forwarder (lcore 0)
//!   tx net_memif0 role=client --- A.sock --- port 0 net_memif role=server
//!   rx net_memif1 role=client --- B.sock --- port 1 net_memif role=server
//! ```
//!
//! For each traffic, first the ceiling: dpdk-testpmd `io` as the forwarder
//! (what arrives on port 0 leaves on port 1; `-l 0,1 --main-lcore 1`, so
//! that it forwards on lcore 0 while its prompt thread sleeps on lcore 1);
//! then mwrouterd (EAL main lcore and worker on core 0). mwgen searches the
//! NDR and the PDR (0.5 % loss) and measures latency at 50 % of the NDR.
//! An mwrouterd NDR or PDR within 10 % of the ceiling's is labelled
//! "generator-bound": the figure says more about the generator and memif
//! than about the router.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rrp::counters::CounterSet;
use serde_json::{Value, json};

use super::addr::*;
use super::hugepages::Memory;
use super::mwgen::{self, SearchOutcome, SearchSpec};
use super::process::{check_interrupt, wait_for};
use super::router::{self, HrSpec, Router, RouterSpec};
use super::testpmd::{self, Testpmd};
use super::traffic::{PART2, Traffic};
use super::{Env, Options, PART2_FORWARDER_LCORE, PART2_GENERATOR_LCORE, Result, path_str};

/// Within this fraction of the ceiling, a rate is labelled generator-bound.
pub const GENERATOR_BOUND: f64 = 0.10;
/// The label.
pub const GENERATOR_BOUND_LABEL: &str = "generator-bound";

/// One forwarder's search on one traffic.
#[derive(Debug, Clone)]
pub struct Search {
    /// The forwarder's command line.
    pub forwarder_command: Vec<String>,
    /// The generator's command line.
    pub generator_command: Vec<String>,
    /// What the search found.
    pub outcome: SearchOutcome,
    /// The forwarder's counters over the whole search (JSON).
    pub counters: Value,
    /// CPUs other processes kept busy just before the search.
    pub busy_before: f64,
}

/// One traffic: the ceiling (testpmd io) and mwrouterd.
#[derive(Debug, Clone)]
pub struct Row {
    /// The traffic.
    pub traffic: Traffic,
    /// dpdk-testpmd io.
    pub ceiling: Search,
    /// mwrouterd.
    pub router: Search,
}

impl Row {
    /// Whether mwrouterd's NDR is within 10 % of the ceiling's.
    pub fn ndr_generator_bound(&self) -> bool {
        bound(self.router.outcome.ndr_pps, self.ceiling.outcome.ndr_pps)
    }

    /// Whether mwrouterd's PDR is within 10 % of the ceiling's.
    pub fn pdr_generator_bound(&self) -> bool {
        bound(self.router.outcome.pdr_pps, self.ceiling.outcome.pdr_pps)
    }
}

fn bound(router: f64, ceiling: f64) -> bool {
    ceiling > 0.0 && router >= (1.0 - GENERATOR_BOUND) * ceiling
}

/// How each search runs.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Searches per measurement (mwgen reports their median).
    pub trials: u32,
    /// Trial duration.
    pub trial: Duration,
    /// mwgen's `--precision` when not its default (1 % of the maximum).
    pub precision_pct: Option<f64>,
}

impl Plan {
    /// One search of 5 s trials; `--quick`: 1 s trials and a 5 % precision.
    pub fn new(opts: &Options) -> Plan {
        if opts.quick {
            Plan {
                trials: 1,
                trial: Duration::from_secs(1),
                precision_pct: Some(5.0),
            }
        } else {
            Plan {
                trials: 1,
                trial: Duration::from_secs(5),
                precision_pct: None,
            }
        }
    }
}

/// Part 2's results.
#[derive(Debug, Clone, Default)]
pub struct Part2 {
    /// One row per traffic.
    pub rows: Vec<Row>,
    /// How the searches ran.
    pub plan: Plan,
}

/// A memif server vdev on `socket` (`net_memif<n>`).
fn memif_server(n: u32, socket: &Path) -> String {
    format!(
        "net_memif{n},role=server,id=0,socket={},socket-abstract=no",
        path_str(socket)
    )
}

fn sockets(env: &Env, tag: &str) -> (PathBuf, PathBuf) {
    let (a, b) = (
        env.file(&format!("{tag}-a.sock")),
        env.file(&format!("{tag}-b.sock")),
    );
    let _ = std::fs::remove_file(&a);
    let _ = std::fs::remove_file(&b);
    (a, b)
}

fn wait_sockets(a: &Path, b: &Path) -> Result<()> {
    wait_for(
        "the forwarder's memif sockets",
        Duration::from_secs(20),
        || Ok(a.exists() && b.exists()),
    )
}

/// Runs Part 2 into `out` (which keeps what was measured when a search
/// fails).
pub fn run(env: &Env, opts: &Options, mem: &Memory, out: &mut Part2) -> Result<()> {
    let plan = Plan::new(opts);
    println!(
        "\nPart 2: mwgen (lcore {PART2_GENERATOR_LCORE}) <-memif-> forwarder (lcore \
         {PART2_FORWARDER_LCORE}); NDR / PDR (0.5 %) search, {} search(es) of \
         {:?} trials, latency at 50 % of NDR",
        plan.trials, plan.trial
    );
    out.plan = plan.clone();
    for t in &PART2 {
        check_interrupt()?;
        println!("  {}:", t.label);
        let busy = super::wait_quiet(opts.patience())?;
        let mut ceiling = run_testpmd(env, mem, t, &plan)?;
        ceiling.busy_before = busy;
        print_search("testpmd-io", &ceiling.outcome);
        let busy = super::wait_quiet(opts.patience())?;
        let mut router = run_router(env, mem, t, &plan)?;
        router.busy_before = busy;
        print_search("mwrouterd", &router.outcome);
        out.rows.push(Row {
            traffic: *t,
            ceiling,
            router,
        });
    }
    Ok(())
}

fn print_search(who: &str, o: &SearchOutcome) {
    println!(
        "    {who:<12} NDR {:>7.3} Mpps  PDR {:>7.3} Mpps  (max {:.3} Mpps){}",
        o.ndr_pps / 1e6,
        o.pdr_pps / 1e6,
        o.max_pps / 1e6,
        o.latency
            .map(|l| format!(
                "  latency p50 {:.1} us p99 {:.1} us",
                l.p50 / 1e3,
                l.p99 / 1e3
            ))
            .unwrap_or_default()
    );
}

fn search_spec(mem: &Memory, a: &Path, b: &Path, rx_mac: &'static str, plan: &Plan) -> SearchSpec {
    SearchSpec {
        eal: mem.eal_flags(),
        lcore: PART2_GENERATOR_LCORE,
        socket_a: a.into(),
        socket_b: b.into(),
        rx_mac,
        trials: plan.trials,
        trial: plan.trial,
        precision_pct: plan.precision_pct,
    }
}

fn run_testpmd(env: &Env, mem: &Memory, t: &Traffic, plan: &Plan) -> Result<Search> {
    let tag = format!("p2-{}-testpmd", t.name);
    let (a, b) = sockets(env, &tag);
    let spec = testpmd::Spec {
        lcores: format!("{PART2_FORWARDER_LCORE},{PART2_GENERATOR_LCORE}"),
        main_lcore: Some(PART2_GENERATOR_LCORE),
        eal: mem.eal_flags(),
        vdevs: vec![memif_server(0, &a), memif_server(1, &b)],
        forward_mode: "io".into(),
    };
    let mut tp = Testpmd::start(env, &spec, &env.file(&format!("{tag}.log")))?;
    let forwarder_command = tp.command().to_vec();
    tp.start_forwarding()?;
    wait_sockets(&a, &b)?;
    let (generator_command, outcome, _) = mwgen::search(
        env,
        &search_spec(mem, &a, &b, ROUTER_A_MAC, plan),
        t,
        &format!("{tag}-mwgen"),
    )?;
    // The search is complete once mwgen has reported. testpmd can still
    // crash when mwgen disconnects: DPDK 22.11's memif unmaps the rings on
    // its interrupt thread while the forwarding lcore may be in a burst
    // (docs/reliability.md, the crash mwrouterd's grace periods fixed in
    // its own process). That is recorded with the figures; it does not void
    // them.
    let exit = match tp.quit() {
        Ok(_) => None,
        Err(e) => {
            eprintln!("e2e: {tag}: after the search: {e}");
            Some(e.to_string())
        }
    };
    // memif clears a port's counters when its client disconnects, which
    // mwgen does when the search ends: testpmd's counters cannot be read
    // over the search.
    let counters = json!({
        "note": "not available: memif clears its counters when the client disconnects",
        "exit_after_search": exit,
    });
    Ok(Search {
        forwarder_command,
        generator_command,
        outcome,
        counters,
        busy_before: 0.0,
    })
}

fn run_router(env: &Env, mem: &Memory, t: &Traffic, plan: &Plan) -> Result<Search> {
    let tag = format!("p2-{}-mwrouterd", t.name);
    let (a, b) = sockets(env, &tag);
    let spec = RouterSpec {
        eal: mem.eal_flags(),
        main_lcore: PART2_FORWARDER_LCORE,
        worker_core: PART2_FORWARDER_LCORE,
        a: HrSpec {
            device: memif_server(0, &a),
            mac: ROUTER_A_MAC,
            static_entry: Some((NODE_A, GEN_A_MAC)),
        },
        b: HrSpec {
            device: memif_server(1, &b),
            mac: ROUTER_B_MAC,
            static_entry: Some((NODE_B, GEN_B_MAC)),
        },
        partitions: Vec::new(),
    };
    let mut r = Router::start(env, &spec, &tag)?;
    let forwarder_command = r.command().to_vec();
    wait_sockets(&a, &b)?;
    let before = r.snapshot()?;
    let (generator_command, outcome, _) = mwgen::search(
        env,
        &search_spec(mem, &a, &b, GEN_B_MAC, plan),
        t,
        &format!("{tag}-mwgen"),
    )?;
    let after = r.snapshot()?;
    let after = r.next_snapshot(after.published_ns)?;
    if !r.stop(Duration::from_secs(10))? {
        eprintln!("e2e: mwrouterd did not exit within 10 s of SIGTERM (killed)");
    }
    let counters: serde_json::Map<String, Value> = after
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let d = before
                .ports
                .get(i)
                .map_or(p.stats, |b| p.stats.since(&b.stats));
            (i.to_string(), router::port_json(&d))
        })
        .collect();
    Ok(Search {
        forwarder_command,
        generator_command,
        outcome,
        counters: Value::Object(counters),
        busy_before: 0.0,
    })
}

fn search_json(s: &Search) -> Value {
    let o = &s.outcome;
    json!({
        "forwarder_command": s.forwarder_command,
        "generator_command": s.generator_command,
        "ndr_mpps": o.ndr_pps / 1e6,
        "pdr_mpps": o.pdr_pps / 1e6,
        "max_mpps": o.max_pps / 1e6,
        "trials_run": o.trials,
        "latency_at_50pct_ndr_ns": o.latency.map(|l| json!({
            "at_mpps": l.at_pps / 1e6,
            "p50": l.p50, "p90": l.p90, "p99": l.p99, "p999": l.p999, "max": l.max,
        })),
        "forwarder_counters": s.counters,
        "other_busy_cpus_before": s.busy_before,
    })
}

/// Part 2's JSON.
pub fn to_json(p: &Part2) -> Value {
    let rows: serde_json::Map<String, Value> = p
        .rows
        .iter()
        .map(|r| {
            let mut labels = Vec::new();
            if r.ndr_generator_bound() {
                labels.push("ndr");
            }
            if r.pdr_generator_bound() {
                labels.push("pdr");
            }
            let mut router = search_json(&r.router);
            router["ndr_label"] = json!(r.ndr_generator_bound().then_some(GENERATOR_BOUND_LABEL));
            router["pdr_label"] = json!(r.pdr_generator_bound().then_some(GENERATOR_BOUND_LABEL));
            (
                r.traffic.name.to_string(),
                json!({
                    "testpmd_io": search_json(&r.ceiling),
                    "mwrouterd": router,
                    "generator_bound": labels,
                    "ndr_vs_ceiling": super::ratio(r.router.outcome.ndr_pps, r.ceiling.outcome.ndr_pps),
                    "pdr_vs_ceiling": super::ratio(r.router.outcome.pdr_pps, r.ceiling.outcome.pdr_pps),
                }),
            )
        })
        .collect();
    json!({
        "forwarder_lcore": PART2_FORWARDER_LCORE,
        "generator_lcore": PART2_GENERATOR_LCORE,
        "searches": p.plan.trials,
        "trial_s": p.plan.trial.as_secs_f64(),
        "precision_pct": p.plan.precision_pct.unwrap_or(1.0),
        "pdr_loss_pct": 0.5,
        "latency_at_pct_of_ndr": 50,
        "generator_bound_within_pct": GENERATOR_BOUND * 100.0,
        "traffics": rows,
    })
}
