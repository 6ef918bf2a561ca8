//! The soak's lab mode (`benches/e2e --part soak-lab`): mwlab's lab of a
//! topology (Appendix B by default) on loopback UDP through mwlab's `Lab`,
//! converged; every host's receive side impaired (loss, duplication,
//! reordering: the host's `impair` command, docs/mwlab.md "Hosts", asked
//! through mwlab's host client); streams of probes for `--minutes` while a
//! transit router's ports flap, the routers reload in turn (a static entry
//! added or removed) and captures run on them in turn. Then the per-port
//! accounting on every router, and the probes' loss against the
//! impairment's, the routers' and the kernel's counters
//! ([`super::accounting::ProbeLoss`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use control::config::Config;
use mwlab::host::Client;
use mwlab::lab::{Binaries, Lab, alive};
use mwlab::plan::{HostPlan, Plan, RouterPlan, Wiring, lab_timers};
use mwsim::topology::Topology;
use rrp::Address;
use serde_json::{Map, Value, json};

use super::accounting::{self, KernelUdp, PortRows, ProbeLoss};
use super::ask;
use super::captures::{self, Captures, What};
use super::checks::Checks;
use super::configs;
use super::options::SoakOptions;
use super::reloads::Reloads;
use super::sampler::Sampler;
use super::schedule::Every;
use super::{mib, round1, round2, write_atomic};
use crate::e2e::process::{check_interrupt, sleep};
use crate::e2e::{Env, Result, wait_quiet};

/// The kernel's UDP counters of this network namespace
/// (`/proc/net/snmp`).
pub fn udp_counters() -> Result<KernelUdp> {
    let text = std::fs::read_to_string("/proc/net/snmp")
        .map_err(|e| format!("cannot read /proc/net/snmp: {e}"))?;
    let mut lines = text.lines().filter(|l| l.starts_with("Udp:"));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return Err("/proc/net/snmp has no Udp lines".into());
    };
    let m: BTreeMap<&str, u64> = names
        .split_whitespace()
        .skip(1)
        .zip(values.split_whitespace().skip(1))
        .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
        .collect();
    let get = |k: &str| m.get(k).copied().unwrap_or(0);
    Ok(KernelUdp {
        in_errors: get("InErrors"),
        rcvbuf_errors: get("RcvbufErrors"),
        no_ports: get("NoPorts"),
        sndbuf_errors: get("SndbufErrors"),
    })
}

/// `later - earlier`, counter by counter.
fn udp_since(earlier: &KernelUdp, later: &KernelUdp) -> KernelUdp {
    KernelUdp {
        in_errors: later.in_errors.saturating_sub(earlier.in_errors),
        rcvbuf_errors: later.rcvbuf_errors.saturating_sub(earlier.rcvbuf_errors),
        no_ports: later.no_ports.saturating_sub(earlier.no_ports),
        sndbuf_errors: later.sndbuf_errors.saturating_sub(earlier.sndbuf_errors),
    }
}

/// One request to a host, its answer (an error when the host refuses it).
fn host_ask(c: &mut Client, req: Value) -> Result<Value> {
    let a = c.request(&req)?;
    if a.get("ok").and_then(Value::as_bool) != Some(true) {
        return Err(format!(
            "host refused {req}: {}",
            a.get("error").unwrap_or(&Value::Null)
        ));
    }
    Ok(a)
}

/// A counter of a host's `stats` answer at `path` (0 when absent).
fn stat(v: &Value, path: &[&str]) -> u64 {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// The lab, its logs copied into the scratch directory before it goes
/// (also when the soak stops on an error).
struct LabGuard {
    lab: Option<Lab>,
    logs_to: PathBuf,
}

impl LabGuard {
    fn lab(&self) -> &Lab {
        self.lab.as_ref().expect("up")
    }

    fn copy_logs(&self) {
        if let Some(lab) = &self.lab {
            let _ = std::fs::create_dir_all(&self.logs_to);
            for p in &lab.procs {
                if let Some(name) = p.log.file_name() {
                    let _ = std::fs::copy(&p.log, self.logs_to.join(name));
                }
            }
        }
    }

    /// Copies the logs and stops the lab.
    fn down(mut self) -> Result<()> {
        self.copy_logs();
        self.lab.take().map_or(Ok(()), Lab::down)
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        self.copy_logs();
    }
}

/// The flaps of the transit router's ports.
#[derive(Debug, Default)]
struct Flaps {
    steps: usize,
    actions: Vec<(f64, u16, &'static str)>,
    errors: Vec<String>,
}

/// Runs the lab mode; the checks into `checks`, the figures into `report`.
pub fn run(
    env: &Env,
    o: &SoakOptions,
    checks: &mut Checks,
    report: &mut Map<String, Value>,
) -> Result<()> {
    let (topo_name, text) = match &o.topology {
        Some(p) => (
            p.display().to_string(),
            std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
        ),
        None => (
            "examples/appendix-b.toml".to_string(),
            mwlab::cli::APPENDIX_B.to_string(),
        ),
    };
    let topo = Topology::from_toml(&text).map_err(|e| format!("{topo_name}: {e}"))?;
    let dir = env.file("lab");
    let plan = Plan::new(topo, &dir, lab_timers(), Wiring::Udp)?;
    let routers: BTreeMap<String, RouterPlan> = plan
        .routers
        .iter()
        .map(|r| (r.name.clone(), r.clone()))
        .collect();
    let hosts: BTreeMap<String, HostPlan> = plan
        .hosts
        .iter()
        .map(|h| (h.spec.name.clone(), h.clone()))
        .collect();
    let flap_router = routers.get(&o.flap_router).ok_or_else(|| {
        format!(
            "--flap-router {}: no such router ({})",
            o.flap_router,
            routers.keys().cloned().collect::<Vec<_>>().join(", ")
        )
    })?;
    for (a, b) in &o.streams {
        if !hosts.contains_key(a) || !hosts.contains_key(b) {
            return Err(format!("--streams: {a}>{b}: unknown host"));
        }
    }
    let busy = wait_quiet(o.patience)?;
    report.insert("other_busy_cpus_before".into(), json!(round2(busy)));

    println!(
        "soak --lab: mwlab's lab of {topo_name} in {}",
        dir.display()
    );
    let lab = Lab::up(
        plan,
        &Binaries {
            mwlab: env.bin("mwlab"),
        },
    )?;
    let guard = LabGuard {
        lab: Some(lab),
        logs_to: env.file("lab-logs"),
    };
    let (_, took) = mwlab::checks::converge(
        &guard.lab().plan,
        &[],
        Duration::from_millis(500),
        Duration::from_secs(30),
        &mut |_, _| {},
    )?;
    println!("soak --lab: converged in {:.1} s", took.as_secs_f64());
    let router_procs: BTreeMap<String, (u32, PathBuf)> = guard
        .lab()
        .procs
        .iter()
        .filter(|p| p.role == "router")
        .map(|p| (p.name.clone(), (p.pid, p.log.clone())))
        .collect();
    report.insert(
        "lab".into(),
        json!({"topology": topo_name, "routers": routers.keys().collect::<Vec<_>>(),
               "hosts": hosts.keys().collect::<Vec<_>>()}),
    );
    let mwctl = env.bin("mwctl");
    let sock = |name: &str| routers[name].socket.clone();

    let mut clients: BTreeMap<String, Client> = BTreeMap::new();
    for (name, h) in &hosts {
        clients.insert(
            name.clone(),
            Client::connect(&h.spec.control, Duration::from_secs(10))?,
        );
    }
    let imp = o.impair;
    for (i, c) in clients.values_mut().enumerate() {
        host_ask(
            c,
            json!({"cmd": "impair", "seed": o.seed + i as u64, "rx_loss": imp.loss,
                   "duplicate": imp.duplicate, "reorder": imp.reorder}),
        )?;
    }
    report.insert(
        "impair".into(),
        json!({"rx_loss": imp.loss, "duplicate": imp.duplicate, "reorder": imp.reorder}),
    );

    let secs = o.duration();
    let count = (o.lab_rate * secs.as_secs_f64()) as u64;
    let mut before: BTreeMap<String, PortRows> = BTreeMap::new();
    for n in routers.keys() {
        before.insert(n.clone(), ask::counters(&mwctl, &sock(n))?);
    }
    let snmp0 = udp_counters()?;
    let t0 = Instant::now();
    let mut sampler = Sampler::new(t0);
    for (n, (_, log)) in &router_procs {
        sampler.watch_log(n, log);
    }
    let pids: Vec<(&str, Option<u32>)> = router_procs
        .iter()
        .map(|(n, (pid, _))| (n.as_str(), Some(*pid)))
        .collect();
    sampler.sample(&pids);
    for (a, b) in &o.streams {
        host_ask(
            clients.get_mut(a).expect("checked"),
            json!({"cmd": "send", "dst": hosts[b].address, "count": count,
                   "rate_pps": o.lab_rate, "size": 64, "wait": false}),
        )?;
    }
    println!(
        "soak --lab: {} streams of {} probes/s for {} min ({count} each); impairment on every \
         host: loss {}, duplicate {}, reorder {}; {}'s ports flap every {} s, reload every {} s, \
         capture every {} s",
        o.streams.len(),
        o.lab_rate,
        o.minutes,
        imp.loss,
        imp.duplicate,
        imp.reorder,
        o.flap_router,
        o.flap_every,
        o.reload_every,
        o.capture_every
    );

    let flap_steps: Vec<(u16, bool)> = (0..flap_router.hrs.len() as u16)
        .flat_map(|p| [(p, false), (p, true)])
        .collect();
    let mut flaps = Flaps::default();
    let mut reloads = Reloads::default();
    let mut toggled: BTreeMap<String, bool> = routers.keys().map(|n| (n.clone(), false)).collect();
    let mut originals: BTreeMap<String, (String, Config)> = BTreeMap::new();
    for (n, r) in &routers {
        let text = std::fs::read_to_string(&r.config)
            .map_err(|e| format!("{}: {e}", r.config.display()))?;
        let cfg = Config::from_toml(&text).map_err(|e| format!("{}: {e}", r.config.display()))?;
        originals.insert(n.clone(), (text, cfg));
    }
    let order: Vec<String> = routers.keys().cloned().collect();
    let mut rotation = Vec::new();
    for (n, r) in &routers {
        let kind = |port, what, count, secs| captures::Kind {
            router: n.clone(),
            port,
            what,
            count,
            secs,
        };
        rotation.push(kind(0, What::Received, Some(200), 3.0));
        rotation.push(kind((1 % r.hrs.len()) as u16, What::Transmitted, None, 2.0));
        rotation.push(kind(0, What::Drops, None, 2.0));
    }
    let mut caps = Captures::new(rotation, &mwctl, &env.file("captures"))?;
    let mut t_flap = Every::new(o.flap_every, o.flap_every);
    let mut t_reload = Every::new(o.reload_every, 1.0);
    let mut t_cap = Every::new(o.capture_every, 2.0);
    let mut t_sample = Every::new(o.sample_every, o.sample_every);
    let mut t_report = Every::new(60.0, 60.0);
    let mut next_reload = 0usize;
    let mut down_ports: BTreeSet<u16> = BTreeSet::new();
    while t0.elapsed() < secs {
        check_interrupt()?;
        let t = Instant::now();
        let at = (t - t0).as_secs_f64();
        for (n, (pid, _)) in &router_procs {
            if !alive(*pid) {
                return Err(format!("router {n} exited during the soak"));
            }
        }
        if t_flap.due(t) {
            let (port, up) = flap_steps[flaps.steps % flap_steps.len()];
            flaps.steps += 1;
            let what = if up { "up" } else { "down" };
            match ask::set_port(&mwctl, &flap_router.socket, port, up) {
                Ok(()) => {
                    if up {
                        down_ports.remove(&port);
                    } else {
                        down_ports.insert(port);
                    }
                }
                Err(e) => flaps
                    .errors
                    .push(format!("{at:.1} s port {port} {what}: {e}")),
            }
            flaps.actions.push((round1(at), port, what));
        }
        if t_reload.due(t) {
            let n = &order[next_reload % order.len()];
            next_reload += 1;
            let on = toggled.get_mut(n).expect("every router");
            *on = !*on;
            let (text, cfg) = &originals[n];
            let new = if *on {
                configs::with_lab_static(cfg, 0x01f0 + (next_reload % 8) as u16).to_toml()
            } else {
                text.clone()
            };
            write_atomic(&routers[n].config, &new)?;
            reloads.record(ask::reload(&mwctl, &sock(n)), &format!("{n}: "));
        }
        if t_cap.due(t) {
            caps.start(&|n: &str| sock(n))?;
        }
        caps.poll(false)?;
        if t_sample.due(t) {
            sampler.sample(&pids);
        }
        if t_report.due(t) {
            println!(
                "  [{:4.1} min] flaps {}, reloads {}/{}, captures {}, router logs {} lines",
                at / 60.0,
                flaps.steps,
                reloads.ok,
                reloads.n,
                caps.done().len(),
                sampler.log_lines()
            );
        }
        sleep(Duration::from_millis(50))?;
    }
    caps.poll(true)?;
    for p in &down_ports {
        let _ = ask::set_port(&mwctl, &flap_router.socket, *p, true);
    }
    // The sends end on their count: wait for them, then the drain.
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        let mut busy = false;
        for (a, _) in &o.streams {
            let st = host_ask(
                clients.get_mut(a).expect("checked"),
                json!({"cmd": "stats"}),
            )?;
            busy |= st.get("busy").and_then(Value::as_bool).unwrap_or(false);
        }
        if !busy {
            break;
        }
        sleep(Duration::from_millis(500))?;
    }
    let t_end = Instant::now();
    sleep(Duration::from_secs(2))?;
    for c in clients.values_mut() {
        // Off: a held datagram is delivered.
        host_ask(c, json!({"cmd": "impair"}))?;
    }
    sleep(Duration::from_millis(500))?;
    sampler.sample(&pids);
    let mut hstats: BTreeMap<String, Value> = BTreeMap::new();
    for (n, c) in clients.iter_mut() {
        hstats.insert(n.clone(), host_ask(c, json!({"cmd": "stats"}))?);
    }
    let mut after: BTreeMap<String, PortRows> = BTreeMap::new();
    for n in routers.keys() {
        after.insert(n.clone(), ask::counters(&mwctl, &sock(n))?);
    }
    let kernel = udp_since(&snmp0, &udp_counters()?);
    for (n, (text, _)) in &originals {
        write_atomic(&routers[n].config, text)?;
    }
    drop(clients);

    println!("\nsoak --lab: checks");
    let mut per_router = Map::new();
    let mut router_drops: BTreeMap<String, u64> = BTreeMap::new();
    for (n, rows) in &after {
        let mut ports = Map::new();
        for (p, row) in rows {
            let soak = before[n].get(p).map(|b| accounting::delta(b, row));
            for (k, v) in soak.iter().flat_map(|d| d.drops()) {
                *router_drops.entry(k).or_default() += v;
            }
            ports.insert(
                p.to_string(),
                json!({"total": accounting::row_json(row),
                       "soak": soak.as_ref().map(accounting::row_json)}),
            );
        }
        per_router.insert(n.clone(), Value::Object(ports));
    }
    let bad = accounting::unbalanced(&after);
    let nports: usize = after.values().map(BTreeMap::len).sum();
    checks.add(
        "every router port: received = forwarded + dropped + punted",
        bad.is_empty(),
        format!("{nports} ports of {} routers", after.len())
            + &if bad.is_empty() {
                String::new()
            } else {
                format!("; failed: {bad:?}")
            },
    );
    let mut per_stream = Vec::new();
    let mut loss = ProbeLoss {
        router_drops: router_drops.clone(),
        kernel,
        ..ProbeLoss::default()
    };
    let mut all_sent = true;
    for (a, b) in &o.streams {
        let (src, dst) = (Address(hosts[a].address), Address(hosts[b].address));
        let sent = stat(&hstats[a], &["sent", &dst.to_string()]);
        let got = |k: &str| stat(&hstats[b], &["received", &src.to_string(), k]);
        let unique = got("unique");
        per_stream.push(json!({
            "stream": format!("{a}>{b}"), "sent": sent, "received": got("received"),
            "unique": unique, "duplicated": got("duplicated"), "reordered": got("reordered"),
            "lost": sent as i128 - unique as i128,
        }));
        all_sent &= sent == count;
        loss.sent += sent;
        loss.unique += unique;
        loss.duplicated += got("duplicated");
        loss.reordered += got("reordered");
    }
    let impairment = |path: &[&str]| -> u64 { hstats.values().map(|h| stat(h, path)).sum() };
    loss.impairment_lost = impairment(&["impair", "probes", "lost"]);
    loss.impairment_duplicated = impairment(&["impair", "probes", "duplicated"]);
    loss.impairment_reordered = impairment(&["impair", "probes", "reordered"]);
    let sums = |prefix: &[&str]| -> Value {
        let mut m = Map::new();
        for k in ["seen", "lost", "duplicated", "reordered"] {
            let mut path = prefix.to_vec();
            path.push(k);
            m.insert(k.into(), json!(impairment(&path)));
        }
        Value::Object(m)
    };
    checks.add(
        "every probe sent (sends finished)",
        all_sent,
        format!("{} x {count} probes", o.streams.len()),
    );
    loss.check(checks);
    // Not an identity: a change of path reorders too, and a hold can put
    // a pair that a change of path reordered back in order.
    println!(
        "  [info] reordering: the receivers counted {} reordered probes, the impairment held {} \
         back behind a probe of their stream (the difference: changes of path)",
        loss.reordered, loss.impairment_reordered
    );
    checks.add(
        "the transit router flapped",
        flaps.steps > 0 && flaps.errors.is_empty(),
        format!("{} port changes on {}", flaps.steps, o.flap_router)
            + &if flaps.errors.is_empty() {
                String::new()
            } else {
                format!("; errors {:?}", &flaps.errors[..flaps.errors.len().min(3)])
            },
    );
    reloads.check(checks);
    checks.add(
        "every capture started, stopped and wrote a pcap",
        caps.all_ok(),
        caps.summary_text("by count"),
    );
    let rss: BTreeMap<&String, _> = router_procs
        .keys()
        .filter_map(|n| Some((n, sampler.rss_summary(n)?)))
        .collect();
    let grown: Vec<String> = rss
        .iter()
        .filter(|(_, x)| x.grew(o.rss_slack_kb))
        .map(|(n, x)| format!("{n} {}->{}", mib(x.start_kb), mib(x.end_kb)))
        .collect();
    checks.add(
        "RSS flat on every router",
        grown.is_empty() && rss.len() == router_procs.len(),
        rss.iter()
            .map(|(n, x)| format!("{n} {}->{}", mib(x.start_kb), mib(x.end_kb)))
            .collect::<Vec<_>>()
            .join(", ")
            + " MiB"
            + &if grown.is_empty() {
                String::new()
            } else {
                format!("; grown: {}", grown.join(", "))
            },
    );
    let mut logs = BTreeMap::new();
    for n in router_procs.keys() {
        if let Some(l) = sampler.log_summary(n) {
            logs.insert(n.clone(), l);
        }
    }
    let flooded: Vec<String> = logs
        .iter()
        .filter(|(_, l)| l.max_per_minute > o.max_log_per_min)
        .map(|(n, l)| format!("{n} {}/min", l.max_per_minute))
        .collect();
    checks.add(
        "no log flood",
        flooded.is_empty(),
        logs.iter()
            .map(|(n, l)| format!("{n} {} (max {}/min)", l.lines, l.max_per_minute))
            .collect::<Vec<_>>()
            .join(", ")
            + &format!("; bound {}/min per router", o.max_log_per_min)
            + &if flooded.is_empty() {
                String::new()
            } else {
                format!("; flooded: {}", flooded.join(", "))
            },
    );

    let down = guard.down();
    let minutes = (t_end - t0).as_secs_f64() / 60.0;
    let extra = json!({
        "minutes": round2(minutes),
        "streams": per_stream,
        "probes": {"sent": loss.sent, "unique": loss.unique, "lost": loss.lost(),
                   "duplicated": loss.duplicated, "reordered": loss.reordered},
        "impairment_probes": sums(&["impair", "probes"]),
        "impairment_all": sums(&["impair"]),
        "router_drops": accounting::nonzero(&router_drops),
        "kernel_udp": kernel.to_json(),
        "unexplained": loss.unexplained(),
        "routers": per_router,
        "flaps": {"steps": flaps.steps, "actions": flaps.actions, "errors": flaps.errors},
        "reloads": reloads.to_json(),
        "captures": caps.to_json(),
        "rss": rss.iter().map(|(n, x)| ((*n).clone(), x.to_json())).collect::<Map<_, _>>(),
        "log": logs.iter().map(|(n, x)| (n.clone(), x.to_json())).collect::<Map<_, _>>(),
        "schedule_max_lag_s": {
            "flap": round2(t_flap.max_lag_s()), "reload": round2(t_reload.max_lag_s()),
            "capture": round2(t_cap.max_lag_s()), "sample": round2(t_sample.max_lag_s()),
        },
        "hosts": hstats.iter().map(|(n, h)| {
            let keep = ["impair", "rx_lost", "datagrams", "probes", "sent", "errors_received",
                        "send_errors"];
            (n.clone(), Value::Object(keep.iter().map(|k| ((*k).to_string(), h[*k].clone())).collect()))
        }).collect::<Map<_, _>>(),
        "mwlab_down": down.as_ref().err(),
    });
    if let Value::Object(m) = extra {
        report.extend(m);
    }
    println!(
        "\nsoak --lab: {minutes:.1} min: {} probes sent, {} received once, lost {} (impairment \
         {}, router drops {}, kernel {}), duplicated {}, reordered {}",
        loss.sent,
        loss.unique,
        loss.lost(),
        loss.impairment_lost,
        loss.router_drops_total(),
        kernel.drops(),
        loss.duplicated,
        loss.reordered
    );
    Ok(())
}
