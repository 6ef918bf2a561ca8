//! The checks a lab is put through, usable one by one by tests and run in
//! order by the tour (`mwlab demo`, [`crate::tour`]): convergence,
//! agreement with the simulator, the path a packet takes (walked hop by hop
//! through the routers' own FIBs), traffic between hosts, and what happens
//! when a router process dies.

use rrp::PortId;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use mwsim::sim::{Sim, SimConfig};
use serde::Serialize;
use serde_json::{Value, json};

use crate::lab::{FibMap, Lab, fibs, host_client, mwctl};
use crate::plan::Plan;

/// Every router's FIB has an entry for every host on every port (the
/// routers that are not in `dead`).
pub fn complete(plan: &Plan, f: &FibMap, dead: &[String]) -> (usize, usize) {
    let mut want = 0;
    let mut have = 0;
    for r in plan.routers.iter().filter(|r| !dead.contains(&r.name)) {
        for p in 0..r.hrs.len() as u16 {
            // Hosts without an address are not in the FIBs until their
            // SAN's manager gives them one.
            for h in plan.hosts.iter().filter(|h| h.spec.address != 0) {
                want += 1;
                if f.contains_key(&(r.name.clone(), p, h.spec.address)) {
                    have += 1;
                }
            }
        }
    }
    (have, want)
}

/// The live routers (not in `dead`) that do not serve yet: still starting
/// (`drain.start_max_ms`, docs/daemon.md "Draining before maintenance"),
/// draining, or not answering.
pub fn not_serving(plan: &Plan, dead: &[String]) -> Vec<String> {
    plan.routers
        .iter()
        .filter(|r| !dead.contains(&r.name))
        .filter(|r| {
            mwctl(&r.socket, &["show", "router"]).map_or(true, |v| v["standing"] != "serving")
        })
        .map(|r| r.name.clone())
        .collect()
}

/// Waits until the FIBs are complete and unchanged over `quiet` and every
/// live router serves (a starting box advertises at the worst Q until its
/// FIBs are quiet, and its buddies' FIBs change once more when it serves),
/// calling `progress(have, want)` on the way. Returns the FIBs and the time
/// taken.
pub fn converge(
    plan: &Plan,
    dead: &[String],
    quiet: Duration,
    timeout: Duration,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(FibMap, Duration), String> {
    let t0 = Instant::now();
    let mut last: Option<(FibMap, Instant)> = None;
    loop {
        let f = fibs(plan, dead);
        let (have, want) = complete(plan, &f, dead);
        progress(have, want);
        if have == want {
            match &last {
                Some((prev, since)) if *prev == f => {
                    if since.elapsed() >= quiet && not_serving(plan, dead).is_empty() {
                        return Ok((f, t0.elapsed()));
                    }
                }
                _ => last = Some((f, Instant::now())),
            }
        } else {
            last = None;
        }
        if t0.elapsed() > timeout {
            return Err(format!(
                "no convergence within {timeout:?}: {have} of {want} FIB entries"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Differences between the routers' FIBs and the simulator's for the same
/// topology, as (router, port, dst, lab q, sim q) for every host
/// destination. Empty when they agree.
pub fn compare_with_sim(plan: &Plan, f: &FibMap) -> Result<Vec<String>, String> {
    let mut sim = Sim::new(plan.topology.clone(), SimConfig::default())?;
    sim.run_until_converged(120_000)
        .ok_or("the simulator did not converge")?;
    let mut diffs = Vec::new();
    for (ri, r) in plan.routers.iter().enumerate() {
        for p in 0..r.hrs.len() {
            for h in &plan.hosts {
                let d = h.spec.address;
                let lab = f.get(&(r.name.clone(), p as u16, d)).map(|e| e.0);
                let s = sim
                    .fib_entry(ri, PortId::new(p), rrp::Address(d))
                    .map(|e| e.q);
                if lab != s {
                    diffs.push(format!(
                        "{} port {p} -> {}: lab Q {lab:?}, simulator Q {s:?}",
                        r.name, h.spec.name
                    ));
                }
            }
        }
    }
    Ok(diffs)
}

/// A path walked through the routers' FIBs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Path {
    /// The routers crossed, in order.
    pub routers: Vec<String>,
    /// Whether it reached the destination.
    pub complete: bool,
    /// Why not, when not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The path from host `src` to host `dst`: from the source's default HR,
/// FIB lookup in the router it belongs to (for the HR's port), to the next
/// hop's native address, and so on.
pub fn walk(plan: &Plan, f: &FibMap, src: &str, dst: &str) -> Path {
    let fail = |routers: Vec<String>, why: String| Path {
        routers,
        complete: false,
        problem: Some(why),
    };
    let (Some(s), Some(d)) = (
        plan.hosts.iter().find(|h| h.spec.name == src),
        plan.hosts.iter().find(|h| h.spec.name == dst),
    ) else {
        return fail(vec![], format!("no host {src} or {dst}"));
    };
    let first = s
        .spec
        .default_hr
        .or_else(|| s.spec.hrs.first().map(|h| h.0));
    let Some(mut hr) = first else {
        return fail(vec![], format!("{src} has no HR on its SAN"));
    };
    let mut routers = Vec::new();
    let mut seen = BTreeSet::new();
    loop {
        let Some((ri, port)) = plan
            .routers
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.hrs.iter().position(|h| h.0 == hr).map(|p| (i, p)))
        else {
            return fail(routers, format!("no router owns HR {hr:#06x}"));
        };
        let r = &plan.routers[ri];
        if !seen.insert(r.name.clone()) {
            routers.push(r.name.clone());
            return fail(routers, "a forwarding loop".into());
        }
        routers.push(r.name.clone());
        let Some((_, egress, native)) = f.get(&(r.name.clone(), port as u16, d.spec.address))
        else {
            return fail(routers, format!("{} has no route to {dst}", r.name));
        };
        let Some(_) = egress else {
            return fail(routers, format!("{} delivers {dst} to itself", r.name));
        };
        let next = native.as_str();
        match plan.owner_of(next) {
            Some((_, a)) if a == d.spec.address => {
                return Path {
                    routers,
                    complete: true,
                    problem: None,
                };
            }
            Some((owner, a)) if plan.routers.iter().any(|r| r.name == owner) => hr = a,
            Some((owner, _)) => {
                return fail(routers, format!("next hop is host {owner}, not {dst}"));
            }
            None => return fail(routers, format!("next hop {next} belongs to nobody")),
        }
    }
}

/// What traffic between two hosts gave.
#[derive(Debug, Clone, Serialize)]
pub struct Flow {
    /// Sender.
    pub src: String,
    /// Receiver.
    pub dst: String,
    /// Probes sent.
    pub sent: u64,
    /// Probes received once.
    pub received: u64,
    /// Lost.
    pub lost: u64,
    /// Latency p50 and max in ns.
    pub latency_ns: (u64, u64),
}

fn num(v: &Value, path: &[&str]) -> u64 {
    path.iter()
        .try_fold(v, |v, k| v.get(*k))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// Sends `count` probes from each `(src, dst)` pair at `rate` packets/s and
/// reports what arrived (after the hosts' counters are reset).
pub fn traffic(
    plan: &Plan,
    pairs: &[(String, String)],
    count: u64,
    rate: u64,
) -> Result<Vec<Flow>, String> {
    for h in &plan.hosts {
        host_client(plan, &h.spec.name)?.request(&json!({"cmd": "reset"}))?;
    }
    for (s, d) in pairs {
        let dst = plan
            .hosts
            .iter()
            .find(|h| &h.spec.name == d)
            .ok_or_else(|| format!("no host {d}"))?
            .spec
            .address;
        let a = host_client(plan, s)?
            .request(&json!({"cmd": "send", "dst": dst, "count": count, "rate_pps": rate}))?;
        if a["ok"] != true {
            return Err(format!("{s}: send: {a}"));
        }
    }
    std::thread::sleep(Duration::from_millis(count * 1000 / rate.max(1) + 500));
    let mut flows = Vec::new();
    for (s, d) in pairs {
        let src_addr = plan
            .hosts
            .iter()
            .find(|h| &h.spec.name == s)
            .expect("checked")
            .spec
            .address;
        let st = host_client(plan, d)?.request(&json!({"cmd": "stats"}))?;
        let key = format!("{src_addr:#06x}");
        let r = &st["received"][&key];
        let received = num(r, &["unique"]);
        flows.push(Flow {
            src: s.clone(),
            dst: d.clone(),
            sent: count,
            received,
            lost: count.saturating_sub(received),
            latency_ns: (
                num(r, &["latency_ns", "p50"]),
                num(r, &["latency_ns", "max"]),
            ),
        });
    }
    Ok(flows)
}

/// Whether any router still has a neighbour entry or a next hop for one of
/// `dead`'s HRs (HR-DOWN handled when none has).
pub fn remnants_of(plan: &Plan, f: &FibMap, dead: &str) -> Vec<String> {
    let Some(r) = plan.routers.iter().find(|r| r.name == dead) else {
        return vec![];
    };
    let eps: Vec<String> = r.hrs.iter().map(|h| h.1.to_string()).collect();
    f.iter()
        .filter(|(_, (_, _, n))| eps.contains(n))
        .map(|((rn, p, d), _)| format!("{rn} port {p} -> {d:#06x} via {dead}"))
        .collect()
}

/// The live routers that still list one of `dead`'s HRs as a neighbour
/// (`mwctl show neighbors`), as "router: HR".
pub fn neighbours_of(plan: &Plan, dead: &str) -> Vec<String> {
    let Some(d) = plan.routers.iter().find(|r| r.name == dead) else {
        return vec![];
    };
    let mut out = Vec::new();
    for r in plan.routers.iter().filter(|r| r.name != dead) {
        let Ok(v) = mwctl(&r.socket, &["show", "neighbors"]) else {
            continue;
        };
        for row in v.as_array().cloned().unwrap_or_default() {
            let a = row.get("address").and_then(|a| match a {
                Value::String(s) => u16::from_str_radix(s.trim_start_matches("0x"), 16).ok(),
                Value::Number(n) => n.as_u64().map(|n| n as u16),
                _ => None,
            });
            if let Some(a) = a
                && d.hrs.iter().any(|h| h.0 == a)
            {
                out.push(format!("{}: {a:#06x}", r.name));
            }
        }
    }
    out
}

/// For every live router sharing a SAN with `dead`, whether its log reports
/// `dead`'s HR on that SAN down (the HR-DOWN procedure, Part-2 "HR-DOWN"):
/// (router, HR, logged).
pub fn hr_down_logged(lab: &Lab, dead: &str) -> Vec<(String, u16, bool)> {
    let plan = &lab.plan;
    let Some(d) = plan.routers.iter().find(|r| r.name == dead) else {
        return vec![];
    };
    let mut out = Vec::new();
    for r in plan.routers.iter().filter(|r| r.name != dead) {
        let log = lab
            .procs
            .iter()
            .find(|p| p.role == "router" && p.name == r.name)
            .map(|p| std::fs::read_to_string(&p.log).unwrap_or_default())
            .unwrap_or_default();
        for ((hr, _), san) in d.hrs.iter().zip(&d.sans) {
            if r.sans.contains(san) {
                let logged = log.contains(&format!("HR {hr:#06x} down"));
                out.push((r.name.clone(), *hr, logged));
            }
        }
    }
    out
}

/// Runs `f` on the lab and stops it however `f` ends.
pub fn with_lab<T>(lab: Lab, f: impl FnOnce(&mut Lab) -> T) -> T {
    let mut lab = lab;
    let out = f(&mut lab);
    let _ = lab.down();
    out
}
