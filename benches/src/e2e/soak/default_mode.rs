//! The soak's default mode (`benches/e2e --part soak`): mwrouterd on three
//! DPDK memif ports ([`super::configs`]), the buddy behind HR 0x0103, mwgen
//! on HRs 0x0101 and 0x0102 as in Part 2. A short NDR search (or
//! `--rate-pps`), then mwgen at a fraction of the NDR for `--minutes`
//! while, in turn, the buddy flaps (its port down and up with mwctl, or
//! SIGKILLed and restarted: 3 s later the router must hold none, or all, of
//! its RTs), the router reloads a changed configuration and captures start
//! and stop; RSS, threads, descriptors and log lines sampled. Then the
//! accounting ([`super::accounting`]).
//!
//! The worker busy-polls `--worker-core`, mwgen `--gen-core`; the router's
//! other threads (`workers.control_cores`), the buddy, mwctl and this
//! harness run on `--control-core`.

use std::path::Path;
use std::time::{Duration, Instant};

use core_affinity::CoreId;
use serde_json::{Map, Value, json};

use super::accounting::{self, GeneratorPath, PortRows};
use super::ask;
use super::captures::{self, Captures, What};
use super::checks::Checks;
use super::configs::{self, Sockets};
use super::options::SoakOptions;
use super::reloads::Reloads;
use super::sampler::Sampler;
use super::schedule::Every;
use super::{mib, round1, round2, write_atomic};
use crate::e2e::addr::GEN_B_MAC;
use crate::e2e::hugepages::Memory;
use crate::e2e::mwgen::{self, SearchSpec, parse_run, parse_search, port_args, search_args};
use crate::e2e::process::{Proc, check_interrupt, pinned, sleep, wait_for_every};
use crate::e2e::router::Router;
use crate::e2e::traffic::{Kind, profile_args};
use crate::e2e::{Env, Result, path_str, wait_quiet};

/// The buddy's churn, step by step, in a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `mwctl port 0 down` on the buddy.
    PortDown,
    /// `mwctl port 0 up`.
    PortUp,
    /// SIGKILL.
    Kill,
    /// Started again.
    Restart,
}

impl Step {
    /// The loop: down, up, down, up, kill, restart.
    pub const CYCLE: [Step; 6] = [
        Step::PortDown,
        Step::PortUp,
        Step::PortDown,
        Step::PortUp,
        Step::Kill,
        Step::Restart,
    ];

    /// The name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Step::PortDown => "port-down",
            Step::PortUp => "port-up",
            Step::Kill => "kill",
            Step::Restart => "restart",
        }
    }

    /// Whether the buddy's RTs should be gone after it.
    pub fn takes_rts_away(self) -> bool {
        matches!(self, Step::PortDown | Step::Kill)
    }
}

/// What the buddy's flaps did.
#[derive(Debug, Clone, Default)]
struct Flaps {
    steps: usize,
    actions: Vec<(f64, &'static str, usize)>,
    errors: Vec<String>,
    down_checked: u64,
    seen_down: u64,
    up_checked: u64,
    seen_up: u64,
    buddy_starts: u32,
}

/// Starts buddy number `n` (no wait: it comes up while the soak goes on).
fn start_buddy(env: &Env, o: &SoakOptions, memif_c: &Path, n: u32) -> Result<Router> {
    let core = o.control_core.to_string();
    Router::spawn(
        env,
        "the buddy",
        &format!("buddy-{n}"),
        |socket| configs::buddy(o.control_core, memif_c, socket),
        |bin| pinned(bin, Some(&core)),
    )
}

/// Runs the default mode; the checks into `checks`, the figures into
/// `report`.
pub fn run(
    env: &Env,
    mem: &Memory,
    o: &SoakOptions,
    checks: &mut Checks,
    report: &mut Map<String, Value>,
) -> Result<()> {
    let busy = wait_quiet(o.patience)?;
    report.insert("other_busy_cpus_before".into(), json!(round2(busy)));
    report.insert("memory".into(), mem.to_json());
    if !core_affinity::set_for_current(CoreId {
        id: o.control_core as usize,
    }) {
        eprintln!(
            "soak: warning: cannot pin this harness to core {}",
            o.control_core
        );
    }
    let mwctl = env.bin("mwctl");
    let memifs = Sockets {
        a: env.file("a.sock"),
        b: env.file("b.sock"),
        c: env.file("c.sock"),
    };
    for s in [&memifs.a, &memifs.b, &memifs.c] {
        let _ = std::fs::remove_file(s);
    }
    let eal = mem.eal_flags();
    let mut cores = vec![o.worker_core, o.control_core];
    cores.sort_unstable();
    cores.dedup();
    let router_cpus = cores
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    // The daemon pins its worker and moves its other threads itself; it
    // may use the worker's core and the control core.
    let router_config = |toggled: bool, socket: &Path| {
        configs::router(
            &eal,
            o.worker_core,
            o.control_core,
            &memifs,
            socket,
            toggled,
        )
    };
    let mut router = Router::spawn(
        env,
        "mwrouterd",
        "router",
        |s| router_config(false, s),
        |bin| pinned(bin, Some(&router_cpus)),
    )?;
    router.wait_ready()?;
    report.insert("router_command".into(), json!(router.command()));
    let rsock = router.socket().to_path_buf();

    let mut flaps = Flaps {
        buddy_starts: 1,
        ..Flaps::default()
    };
    let mut buddy = Some(start_buddy(env, o, &memifs.c, 1)?);
    wait_for_every(
        "the buddy's RTs at the router",
        Duration::from_secs(30),
        Duration::from_millis(100),
        || {
            router.check_running()?;
            Ok(ask::rts_from_buddies(&mwctl, &rsock) > 0)
        },
    )?;
    let full_rts = ask::rts_from_buddies(&mwctl, &rsock);
    report.insert("buddy_rts_full".into(), json!(full_rts));
    println!(
        "soak: mwrouterd (pid {}) and its buddy up; {full_rts} RTs from the buddy",
        router.pid()
    );

    // The NDR, unless given.
    let spec = SearchSpec {
        eal: eal.clone(),
        lcore: o.gen_core,
        socket_a: memifs.a.clone(),
        socket_b: memifs.b.clone(),
        rx_mac: GEN_B_MAC,
        trials: 1,
        trial: o.search_trial,
        precision_pct: Some(5.0),
    };
    let profile = profile_args(Kind::L3, &o.size);
    let gen_core = o.gen_core.to_string();
    let (rate, ndr) = match o.rate_pps {
        Some(rate) => {
            println!("soak: rate {rate:.0} pps (--rate-pps, no search)");
            (rate, None)
        }
        None => {
            let sj = env.file("search.json");
            let mut cmd = pinned(env.bin("mwgen"), Some(&gen_core));
            cmd.args(port_args(&spec, &profile))
                .args(search_args(&spec, &sj));
            println!(
                "soak: NDR search ({:?} trials, 5 % precision) ...",
                o.search_trial
            );
            let (words, rep) = mwgen::run_to_end(cmd, &sj, &env.file("search.log"))?;
            router
                .check_running()
                .map_err(|e| format!("mwrouterd exited during the search: {e}"))?;
            let s = parse_search(&rep)?;
            let trials: Vec<Value> = rep["search"]["trials"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .map(|t| json!({"offered_pps": t["offered_pps"], "passed": t["pass"]}))
                        .collect()
                })
                .unwrap_or_default();
            report.insert(
                "search".into(),
                json!({"ndr_pps": s.ndr_pps, "pdr_pps": s.pdr_pps, "max_pps": s.max_pps,
                       "trials": trials, "command": words}),
            );
            let rate = o.fraction * s.ndr_pps;
            println!(
                "soak: NDR {:.3} Mpps, PDR {:.3} Mpps; soaking at {:.0} % of the NDR: {:.3} Mpps",
                s.ndr_pps / 1e6,
                s.pdr_pps / 1e6,
                o.fraction * 100.0,
                rate / 1e6
            );
            if s.ndr_pps <= 0.0 {
                return Err("the NDR search found no rate without loss".into());
            }
            (rate, Some(s.ndr_pps))
        }
    };
    report.insert("rate_pps".into(), json!(rate));
    report.insert("ndr_pps".into(), json!(ndr));
    sleep(Duration::from_secs(1))?;

    // The soak.
    let before = ask::counters(&mwctl, &rsock)?;
    let t0 = Instant::now();
    let mut sampler = Sampler::new(t0);
    sampler.watch_log("mwrouterd", router.log());
    let pids = |router: &Router, buddy: &mut Option<Router>| -> [(&'static str, Option<u32>); 2] {
        [
            ("mwrouterd", Some(router.pid())),
            (
                "buddy",
                buddy.as_mut().and_then(|b| b.running().then(|| b.pid())),
            ),
        ]
    };
    sampler.sample(&pids(&router, &mut buddy));
    let rj = env.file("run.json");
    let _ = std::fs::remove_file(&rj);
    let mut gen_cmd = pinned(env.bin("mwgen"), Some(&gen_core));
    gen_cmd.args(port_args(&spec, &profile)).args([
        "--rate".to_string(),
        format!("{rate:.0}pps"),
        "--duration".into(),
        format!("{}ms", o.duration().as_millis()),
        "--json".into(),
        path_str(&rj),
        "--quiet".into(),
    ]);
    let mut generator = Proc::spawn("mwgen", gen_cmd, &env.file("mwgen.log"), false)?;
    report.insert("generator_command".into(), json!(generator.command()));
    println!(
        "soak: {} min at {:.3} Mpps; buddy flap every {} s, reload every {} s, capture every {} s",
        o.minutes,
        rate / 1e6,
        o.flap_every,
        o.reload_every,
        o.capture_every
    );

    let mut reloads = Reloads::default();
    let kind = |port, what, count, secs| captures::Kind {
        router: "mwrouterd".into(),
        port,
        what,
        count,
        secs,
    };
    let mut caps = Captures::new(
        vec![
            kind(0, What::Received, Some(1000), 5.0),
            kind(1, What::Transmitted, None, 2.0),
            kind(2, What::Received, None, 2.0),
            kind(0, What::Drops, Some(100), 2.0),
            kind(2, What::Transmitted, Some(50), 3.0),
        ],
        &mwctl,
        &env.file("captures"),
    )?;
    let mut t_flap = Every::new(o.flap_every, o.flap_every);
    let mut t_reload = Every::new(o.reload_every, 1.0);
    let mut t_cap = Every::new(o.capture_every, 2.0);
    let mut t_sample = Every::new(o.sample_every, o.sample_every);
    let mut t_report = Every::new(60.0, 60.0);
    let mut last_step: Option<Step> = None;
    let mut toggled = false;
    let mut reapers = Vec::new();
    while generator.try_status()?.is_none() {
        check_interrupt()?;
        let t = Instant::now();
        let at = (t - t0).as_secs_f64();
        router
            .check_running()
            .map_err(|e| format!("mwrouterd exited during the soak: {e}"))?;
        if t_flap.due(t) {
            // What the previous step should have left: the buddy's RTs
            // gone after a down, back after an up.
            let n = ask::rts_from_buddies(&mwctl, &rsock);
            match last_step {
                Some(s) if s.takes_rts_away() => {
                    flaps.down_checked += 1;
                    flaps.seen_down += u64::from(n == 0);
                }
                Some(_) => {
                    flaps.up_checked += 1;
                    flaps.seen_up += u64::from(n == full_rts);
                }
                None => {}
            }
            let step = Step::CYCLE[flaps.steps % Step::CYCLE.len()];
            flaps.steps += 1;
            let done = match step {
                Step::PortDown | Step::PortUp => match buddy.as_mut() {
                    Some(b) => b
                        .check_running()
                        .and_then(|()| ask::set_port(&mwctl, b.socket(), 0, step == Step::PortUp)),
                    None => Err("the buddy is not running".into()),
                },
                Step::Kill => match buddy.take() {
                    // Reaped on a thread of its own: the kernel may take
                    // seconds to release a dead DPDK process (its /proc
                    // entries), which must not hold the churn up.
                    Some(b) => {
                        let killed = Instant::now();
                        reapers.push(std::thread::spawn(move || {
                            b.kill().map(|()| killed.elapsed().as_secs_f64())
                        }));
                        Ok(())
                    }
                    None => Err("the buddy is not running".into()),
                },
                Step::Restart => {
                    flaps.buddy_starts += 1;
                    start_buddy(env, o, &memifs.c, flaps.buddy_starts).map(|b| {
                        buddy = Some(b);
                    })
                }
            };
            if let Err(e) = done {
                flaps.errors.push(format!("{at:.1} s {}: {e}", step.name()));
            }
            flaps.actions.push((round1(at), step.name(), n));
            last_step = Some(step);
        }
        if t_reload.due(t) {
            toggled = !toggled;
            write_atomic(router.config(), &router_config(toggled, &rsock).to_toml())?;
            reloads.record(ask::reload(&mwctl, &rsock), "");
        }
        if t_cap.due(t) {
            caps.start(&|_| rsock.clone())?;
        }
        caps.poll(false)?;
        if t_sample.due(t) {
            sampler.sample(&pids(&router, &mut buddy));
        }
        if t_report.due(t) {
            println!(
                "  [{:4.1} min] flaps {}, reloads {}/{}, captures {}, RSS {:.1} MiB, log {} lines",
                at / 60.0,
                flaps.steps,
                reloads.ok,
                reloads.n,
                caps.done().len(),
                sampler.last_rss_kb("mwrouterd") as f64 / 1024.0,
                sampler.log_lines()
            );
        }
        sleep(Duration::from_millis(50))?;
    }
    let gen_status = generator.try_status()?.expect("mwgen ended");
    let t_end = Instant::now();
    caps.poll(true)?;
    // How long each killed buddy took to be reaped (seconds; `None`: not
    // yet, it is left to the end of this process).
    let reaped: Vec<Option<f64>> = reapers
        .into_iter()
        .map(|h| {
            h.is_finished()
                .then(|| h.join().ok().and_then(|r| r.ok()))
                .flatten()
        })
        .collect();
    // Leave the buddy up, let RRP settle, then read.
    if let Some(b) = buddy.as_mut()
        && b.running()
    {
        let _ = ask::set_port(&mwctl, b.socket(), 0, true);
    } else {
        flaps.buddy_starts += 1;
        buddy = Some(start_buddy(env, o, &memifs.c, flaps.buddy_starts)?);
    }
    sampler.sample(&pids(&router, &mut buddy));
    sleep(Duration::from_secs(2))?;
    sampler.sample(&pids(&router, &mut buddy));
    let after = ask::counters(&mwctl, &rsock)?;
    sleep(Duration::from_millis(500))?;
    let again = ask::counters(&mwctl, &rsock)?;
    let ports_end: Value = ask::mwctl(&mwctl, &rsock, &["show", "ports"])?;
    let router_end: Value = ask::mwctl(&mwctl, &rsock, &["show", "router"])?;
    let stats_end: Value = ask::mwctl(&mwctl, &rsock, &["stats"])?;
    if !gen_status.success() {
        return Err(format!(
            "mwgen's soak run failed ({gen_status}):\n{}",
            generator.log_tail(20)
        ));
    }
    let run = parse_run(&mwgen::read_report(&rj)?)?;
    let router_exit = router.terminate(Duration::from_secs(15))?;
    if let Some(b) = buddy.take() {
        let _ = b.terminate(Duration::from_secs(10));
    }
    let rss = sampler
        .rss_summary("mwrouterd")
        .ok_or("mwrouterd's memory was never sampled")?;
    let logs = sampler
        .log_summary("mwrouterd")
        .ok_or("mwrouterd's log was never read")?;

    // The accounting.
    println!("\nsoak: checks");
    accounting::check_each_port(&again, checks);
    let received = |rows: &PortRows, p: u16| rows.get(&p).map(|r| r.received);
    let quiet = [0u16, 1]
        .iter()
        .all(|&p| received(&again, p).is_some() && received(&again, p) == received(&after, p));
    checks.add(
        "generator ports quiet at the end",
        quiet,
        if quiet {
            "no packet received on ports 0 and 1 in the last 0.5 s".to_string()
        } else {
            format!(
                "ports 0/1 still receiving: {:?}",
                [0u16, 1].map(|p| {
                    received(&again, p)
                        .zip(received(&after, p))
                        .map_or(0, |(a, b)| a.saturating_sub(b))
                })
            )
        },
    );
    let soak_of = |p: u16| -> Result<admin::view::CounterRow> {
        let (b, a) = before
            .get(&p)
            .zip(after.get(&p))
            .ok_or_else(|| format!("the router has no port {p}"))?;
        Ok(accounting::delta(b, a))
    };
    let path = GeneratorPath {
        run: run.clone(),
        port0: soak_of(0)?,
        port1: soak_of(1)?,
        port2: soak_of(2)?,
    };
    path.check(checks);
    let steps = |s: Step| flaps.actions.iter().filter(|a| a.1 == s.name()).count();
    checks.add(
        "the buddy flapped and its RTs came and went",
        flaps.errors.is_empty() && flaps.seen_down > 0 && flaps.seen_up > 0,
        format!(
            "{} port down/up, {} kills and restarts; the router held none of the buddy's RTs {} s \
             after {} of {} downs and kills, all {full_rts} after {} of {} ups and restarts{}",
            steps(Step::PortDown),
            steps(Step::Kill),
            o.flap_every,
            flaps.seen_down,
            flaps.down_checked,
            flaps.seen_up,
            flaps.up_checked,
            if flaps.errors.is_empty() {
                String::new()
            } else {
                format!("; errors: {:?}", &flaps.errors[..flaps.errors.len().min(3)])
            }
        ),
    );
    reloads.check(checks);
    checks.add(
        "every capture started, stopped and wrote a pcap",
        caps.all_ok(),
        caps.summary_text("ended by their count"),
    );
    checks.add(
        "RSS flat",
        !rss.grew(o.rss_slack_kb),
        format!(
            "mwrouterd VmRSS {} -> {} MiB (max {}), anonymous {} -> {} MiB, threads {} -> {}, fds \
             {} -> {} (bound: growth <= max({} MiB, 5 %))",
            mib(rss.start_kb),
            mib(rss.end_kb),
            mib(rss.max_kb),
            mib(rss.start_anon_kb),
            mib(rss.end_anon_kb),
            rss.threads.0,
            rss.threads.1,
            rss.fds.0,
            rss.fds.1,
            o.rss_slack_kb / 1024
        ),
    );
    checks.add(
        "threads and descriptors flat",
        rss.fds.1 <= rss.fds.0 + 4 && rss.threads.1 <= rss.threads.0 + 2,
        format!("threads {:?}, fds {:?}", rss.threads, rss.fds),
    );
    let minutes = (t_end - t0).as_secs_f64() / 60.0;
    checks.add(
        "no log flood",
        logs.max_per_minute <= o.max_log_per_min,
        format!(
            "{} lines in {minutes:.1} min, at most {} in a minute (bound {}), {} WARN, {} ERROR",
            logs.lines, logs.max_per_minute, o.max_log_per_min, logs.warn, logs.error
        ),
    );
    checks.add(
        "mwrouterd stopped cleanly",
        router_exit.is_some_and(|s| s.success()),
        match router_exit {
            Some(s) => format!("{s} after SIGTERM"),
            None => "killed: still running 15 s after SIGTERM".into(),
        },
    );

    let ports: Map<String, Value> = again
        .iter()
        .map(|(p, r)| {
            let soak = before
                .get(p)
                .zip(after.get(p))
                .map(|(b, a)| accounting::row_json(&accounting::delta(b, a)));
            (
                p.to_string(),
                json!({"total": accounting::row_json(r), "soak": soak}),
            )
        })
        .collect();
    let s0 = &path.port0;
    let extra = json!({
        "minutes": round2(minutes),
        "generator": {
            "sent": run.sent, "refused": run.refused, "no_buffer": run.no_buffer,
            "received": run.received, "unique": run.unique, "lost": run.lost,
            "duplicated": run.duplicated, "reordered": run.reordered, "other": run.other,
            "loss_ratio": run.loss_ratio, "tx_pps": run.tx_pps, "rx_pps": run.rx_pps,
            "latency_ns": run.latency_ns, "duration_s": run.duration_s,
        },
        "explained": {
            "port0_dropped": s0.dropped_total(), "port0_drops": accounting::nonzero(&s0.drops()),
            "port0_punted": s0.punted, "memif_a_gap": path.gap_a(), "memif_b_gap": path.gap_b(),
        },
        "ports": ports,
        "ports_end": ports_end,
        "router_end": router_end,
        "stats_end": stats_end,
        "flaps": {
            "steps": flaps.steps, "actions": flaps.actions, "errors": flaps.errors,
            "down_checked": flaps.down_checked, "seen_down": flaps.seen_down,
            "up_checked": flaps.up_checked, "seen_up": flaps.seen_up,
            "buddy_starts": flaps.buddy_starts,
            "kills_reaped_s": reaped,
        },
        "schedule_max_lag_s": {
            "flap": round2(t_flap.max_lag_s()), "reload": round2(t_reload.max_lag_s()),
            "capture": round2(t_cap.max_lag_s()), "sample": round2(t_sample.max_lag_s()),
        },
        "reloads": reloads.to_json(),
        "captures": caps.to_json(),
        "rss": {
            "mwrouterd": rss.to_json(),
            "buddy": sampler.rss_summary("buddy").map(|r| r.to_json()),
        },
        "log": logs.to_json(),
        "router_exit": router_exit.map(|s| s.to_string()),
    });
    if let Value::Object(m) = extra {
        report.extend(m);
    }
    println!(
        "\nsoak: {minutes:.1} min at {:.3} Mpps: mwgen sent {}, received {}, lost {} ({}), \
         refused by port {}; RSS {} -> {} MiB; log {} lines (max {}/min)",
        rate / 1e6,
        run.sent,
        run.received,
        run.lost,
        if accounting::nonzero(&s0.drops()).is_empty() {
            "no drops".to_string()
        } else {
            accounting::drops_text(&s0.drops())
        },
        run.refused,
        mib(rss.start_kb),
        mib(rss.end_kb),
        logs.lines,
        logs.max_per_minute
    );
    Ok(())
}
