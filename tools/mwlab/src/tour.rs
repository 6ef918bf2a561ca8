//! `mwlab demo`: the whole tour on one topology (Appendix B by default).
//!
//! 1. Start one router process per router and one host process per host on
//!    loopback UDP (lab timers), in a fresh directory.
//! 2. Wait until RRP has converged: every router has a route to every host
//!    from every HR, unchanged for half a second.
//! 3. Check that the routes (Q from every HR to every host) are the ones the
//!    simulator computes for the same topology.
//! 4. Walk the path of a few pairs of hosts on different SANs through the
//!    routers' FIBs, send traffic between them: nothing may be lost.
//! 5. Kill a router process on the first pair's path (SIGKILL, a crash).
//! 6. Wait until its neighbours have handled HR-DOWN (no route through it
//!    is left anywhere, and their HR-DOWN counters moved) and the pairs'
//!    paths go around it; send traffic again: nothing may be lost.
//! 7. Stop everything and remove the directory (also when a step fails).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use mwsim::topology::Topology;
use serde_json::{Value, json};

use crate::checks::{self, Flow};
use crate::lab::{Binaries, Lab, fibs};
use crate::plan::{NetnsBackend, Plan, Wiring, lab_timers};

/// What the tour gives back.
#[derive(Debug, Clone)]
pub struct Report {
    /// Whether every step passed.
    pub ok: bool,
    /// The steps that failed.
    pub failed: Vec<String>,
    /// Everything, as `mwlab demo --json` prints it.
    pub json: Value,
}

struct Tour {
    human: bool,
    t0: Instant,
    failed: Vec<String>,
    steps: Vec<Value>,
}

impl Tour {
    fn say(&self, s: &str) {
        if self.human {
            println!("[{:5.1}s] {s}", self.t0.elapsed().as_secs_f64());
        }
    }

    fn step(&mut self, name: &str, ok: bool, detail: Value) {
        if self.human {
            println!(
                "[{:5.1}s] {} {name}",
                self.t0.elapsed().as_secs_f64(),
                if ok { "ok  " } else { "FAIL" }
            );
        }
        if !ok {
            self.failed.push(name.to_string());
        }
        self.steps
            .push(json!({"step": name, "ok": ok, "at_s": self.t0.elapsed().as_secs_f64(), "detail": detail}));
    }
}

/// Pairs of hosts on different SANs: the first host to the last, the first
/// host of the second SAN to the last, and the last back to the first.
fn pairs(plan: &Plan) -> Vec<(String, String)> {
    let h = &plan.hosts;
    let mut v = Vec::new();
    if h.len() < 2 {
        return v;
    }
    let last = h.len() - 1;
    let mut add = |a: usize, b: usize| {
        if h[a].san != h[b].san && !v.contains(&(h[a].spec.name.clone(), h[b].spec.name.clone())) {
            v.push((h[a].spec.name.clone(), h[b].spec.name.clone()));
        }
    };
    add(0, last);
    if let Some(i) = h.iter().position(|x| x.san != h[0].san) {
        add(i, last);
    }
    add(last, 0);
    v
}

fn flows_json(f: &[Flow]) -> Value {
    serde_json::to_value(f).expect("plain data")
}

fn print_flows(human: bool, flows: &[Flow]) {
    if !human {
        return;
    }
    for f in flows {
        println!(
            "         {:>4} -> {:<4} sent {:>5}  received {:>5}  lost {:>3}  latency p50 {:>6.1} us  max {:>7.1} us",
            f.src,
            f.dst,
            f.sent,
            f.received,
            f.lost,
            f.latency_ns.0 as f64 / 1e3,
            f.latency_ns.1 as f64 / 1e3
        );
    }
}

/// Runs the tour on `topo`; prints progress when `human`.
pub fn run(
    topo: Topology,
    kill: Option<String>,
    human: bool,
    wiring: Wiring,
    backend: NetnsBackend,
) -> Report {
    let mut t = Tour {
        human,
        t0: Instant::now(),
        failed: Vec::new(),
        steps: Vec::new(),
    };
    let dir = std::env::temp_dir().join(format!("mwlab-demo-{}", std::process::id()));
    let mut out = json!({"dir": dir});
    let netns = matches!(wiring, Wiring::Netns { .. });
    let plan = match Plan::new(topo, &dir, lab_timers(), wiring) {
        Ok(mut p) => {
            p.backend = backend;
            p
        }
        Err(e) => {
            t.step("plan", false, json!(e));
            return finish(t, out);
        }
    };
    if netns {
        out["netns"] = serde_json::to_value(crate::netns::planned(&plan)).expect("plain data");
    }
    t.say(&format!(
        "starting {} routers and {} hosts {} in {}",
        plan.routers.len(),
        plan.hosts.len(),
        if plan.dpdk_routers() {
            "in network namespaces (a bridge per SAN, DPDK af_packet vdevs in the routers)"
        } else if netns {
            "in network namespaces (a bridge per SAN, AF_PACKET)"
        } else {
            "on loopback UDP"
        },
        dir.display()
    ));
    let lab = match Binaries::current().and_then(|b| Lab::up(plan, &b)) {
        Ok(l) => l,
        Err(e) => {
            t.step("start the processes", false, json!(e));
            return finish(t, out);
        }
    };
    t.step("start the processes", true, json!(lab.procs));
    checks::with_lab(lab, |lab| tour(&mut t, lab, kill, &mut out));
    t.say("stopped every process and removed the lab's directory");
    finish(t, out)
}

fn finish(t: Tour, mut out: Value) -> Report {
    out["steps"] = Value::Array(t.steps.clone());
    out["ok"] = json!(t.failed.is_empty());
    out["failed"] = json!(t.failed);
    if t.human {
        if t.failed.is_empty() {
            println!("demo: every step passed");
        } else {
            println!("demo: FAILED: {}", t.failed.join(", "));
        }
    }
    Report {
        ok: t.failed.is_empty(),
        failed: t.failed,
        json: out,
    }
}

/// How many times the demo reads the FIBs to compare them with the
/// simulator's before it says they differ.
const SIM_ATTEMPTS: u32 = 3;

fn tour(t: &mut Tour, lab: &mut Lab, kill: Option<String>, out: &mut Value) {
    let plan = lab.plan.clone();
    // 2. Convergence.
    let live = t.human && std::io::stdout().is_terminal();
    let conv = checks::converge(
        &plan,
        &[],
        Duration::from_millis(500),
        Duration::from_secs(30),
        &mut |have, want| {
            if live {
                print!("\r         converging: {have}/{want} routes from every HR to every host  ");
                let _ = std::io::stdout().flush();
            }
        },
    );
    if live {
        println!();
    }
    let f = match conv {
        Ok((f, took)) => {
            t.step(
                &format!("RRP converged in {:.1} s", took.as_secs_f64()),
                true,
                json!({"seconds": took.as_secs_f64(), "fib_entries": f.len()}),
            );
            f
        }
        Err(e) => {
            t.step("RRP converged", false, json!(e));
            return;
        }
    };
    // Routes learned per router.
    let mut per_router = serde_json::Map::new();
    for r in &plan.routers {
        let n = f.keys().filter(|k| k.0 == r.name).count();
        per_router.insert(r.name.clone(), json!(n));
        if t.human {
            println!("         router {:<5} {n:>3} routes (HRs x hosts)", r.name);
        }
    }
    out["routes_per_router"] = Value::Object(per_router);
    // 3. The simulator agrees. On a loaded machine an advertisement can
    // come after a quiet half second: routes that differ are read again,
    // once the FIBs are quiet again, up to SIM_ATTEMPTS times; the step
    // says how many reads it took.
    let mut f = f;
    let mut attempt = 1;
    loop {
        match checks::compare_with_sim(&plan, &f) {
            Ok(d) if d.is_empty() => {
                t.step(
                    "routes match the simulator (mwsim)",
                    true,
                    json!({"differences": [], "reads": attempt}),
                );
                break;
            }
            Ok(d) if attempt < SIM_ATTEMPTS => {
                attempt += 1;
                match checks::converge(
                    &plan,
                    &[],
                    Duration::from_millis(500),
                    Duration::from_secs(10),
                    &mut |_, _| {},
                ) {
                    Ok((g, _)) => f = g,
                    Err(_) => {
                        t.step("routes match the simulator (mwsim)", false, json!(d));
                        break;
                    }
                }
            }
            Ok(d) => {
                t.step("routes match the simulator (mwsim)", false, json!(d));
                break;
            }
            Err(e) => {
                t.step("routes match the simulator (mwsim)", false, json!(e));
                break;
            }
        }
    }
    // 4. Paths and traffic.
    let pairs = pairs(&plan);
    let mut paths = Vec::new();
    for (a, b) in &pairs {
        let p = checks::walk(&plan, &f, a, b);
        if t.human {
            println!("         path {a} -> {b}: {}", p.routers.join(" -> "));
        }
        paths.push(json!({"src": a, "dst": b, "path": p}));
    }
    out["paths"] = json!(paths);
    let flows = checks::traffic(&plan, &pairs, 500, 2000);
    match flows {
        Ok(fl) => {
            print_flows(t.human, &fl);
            let lost: u64 = fl.iter().map(|f| f.lost).sum();
            out["traffic"] = flows_json(&fl);
            t.step(
                "traffic between SANs, nothing lost",
                lost == 0,
                flows_json(&fl),
            );
        }
        Err(e) => t.step("traffic between SANs, nothing lost", false, json!(e)),
    }
    // 5. Kill a router on the first pair's path (a transit router if there
    // is one, so that the source keeps its own HR).
    let first_path = pairs
        .first()
        .map(|(a, b)| checks::walk(&plan, &f, a, b).routers)
        .unwrap_or_default();
    let victim = kill.or_else(|| first_path.get(1).or(first_path.first()).cloned());
    let Some(victim) = victim else {
        t.step("choose a router to kill", false, json!("no path"));
        return;
    };
    if let Err(e) = lab.kill_router(&victim) {
        t.step(&format!("kill router {victim}"), false, json!(e));
        return;
    }
    t.step(
        &format!("killed router {victim} (SIGKILL)"),
        true,
        json!({"router": victim}),
    );
    out["killed"] = json!(victim);
    // 6. HR-DOWN handled and traffic rerouted.
    let dead = vec![victim.clone()];
    let deadline = Instant::now() + Duration::from_secs(20);
    let (mut rerouted, mut remnants, mut new_paths, mut neighbours, mut logged);
    loop {
        let f = fibs(&plan, &dead);
        remnants = checks::remnants_of(&plan, &f, &victim);
        neighbours = checks::neighbours_of(&plan, &victim);
        logged = checks::hr_down_logged(lab, &victim);
        new_paths = pairs
            .iter()
            .map(|(a, b)| (a.clone(), b.clone(), checks::walk(&plan, &f, a, b)))
            .collect::<Vec<_>>();
        rerouted = new_paths
            .iter()
            .all(|(_, _, p)| p.complete && !p.routers.contains(&victim));
        let handled = remnants.is_empty() && neighbours.is_empty() && logged.iter().all(|l| l.2);
        if (handled && rerouted) || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if t.human {
        for (r, hr, ok) in &logged {
            println!(
                "         router {r:<5} {} HR {hr:#06x} down",
                if *ok { "handled" } else { "did NOT handle" }
            );
        }
    }
    t.step(
        &format!("HR-DOWN handled: {victim}'s HRs are gone from every neighbour table and route"),
        remnants.is_empty() && neighbours.is_empty() && !logged.is_empty() && logged.iter().all(|l| l.2),
        json!({"remaining_routes": remnants, "remaining_neighbours": neighbours,
               "hr_down_logged": logged.iter().map(|(r, h, ok)| json!({"router": r, "hr": format!("{h:#06x}"), "handled": ok})).collect::<Vec<_>>()}),
    );
    for (a, b, p) in &new_paths {
        if t.human {
            println!("         path {a} -> {b}: {}", p.routers.join(" -> "));
        }
    }
    out["paths_after"] = json!(
        new_paths
            .iter()
            .map(|(a, b, p)| json!({"src": a, "dst": b, "path": p}))
            .collect::<Vec<_>>()
    );
    t.step(
        &format!("traffic rerouted around {victim}"),
        rerouted,
        json!(out["paths_after"]),
    );
    match checks::traffic(&plan, &pairs, 500, 2000) {
        Ok(fl) => {
            print_flows(t.human, &fl);
            let lost: u64 = fl.iter().map(|f| f.lost).sum();
            out["traffic_after"] = flows_json(&fl);
            t.step(
                "traffic after the reroute, nothing lost",
                lost == 0,
                flows_json(&fl),
            );
        }
        Err(e) => t.step("traffic after the reroute, nothing lost", false, json!(e)),
    }
}
