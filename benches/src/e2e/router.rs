//! mwrouterd as the forwarder: a configuration built as mwrouterd's
//! [`Config`] ([`super::config`]: two DPDK ports, one busy-polling worker),
//! started and stopped, its counters read from its counters area
//! `<socket>.stats` as `mwctl stats --area` reads it (docs/stats.md: the
//! daemon publishes the area every 100 ms with its publication time,
//! `published_ns`, which gives the rate's time base).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

use admin::LogLevel;
use admin::stats::StatsReader;
use control::config::Config;
use rrp::counters::CounterSet;
use rrp::{DropReason, PortStats};
use serde_json::{Map, Value, json};

use super::addr::*;
use super::config;
use super::process::{Proc, shell_words, sleep, wait_for};
use super::{Env, Result};

/// One HR's port and static entry.
#[derive(Debug, Clone)]
pub struct HrSpec {
    /// The vdev (`net_pcap0,rx_pcap=...`).
    pub device: String,
    /// Its MAC.
    pub mac: &'static str,
    /// A static LRT entry (address, MAC) on its SAN.
    pub static_entry: Option<(u16, &'static str)>,
}

/// The router's configuration: HR A (0x0101) and HR B (0x0102).
#[derive(Debug, Clone)]
pub struct RouterSpec {
    /// EAL flags (memory and general) without `-l`.
    pub eal: Vec<String>,
    /// EAL's main lcore (`-l`), where the control thread runs.
    pub main_lcore: u32,
    /// The worker's core.
    pub worker_core: u32,
    /// HR A's port.
    pub a: HrSpec,
    /// HR B's port.
    pub b: HrSpec,
    /// `management.static_partitions` (docs/partitions.md "Without a SAN
    /// manager"); empty: none, both ports open.
    pub partitions: Vec<control::config::StaticPartitions>,
}

impl RouterSpec {
    /// The configuration (docs/configuration.md): HRs A and B on their
    /// devices, one busy-polling worker, logging at `warn`.
    pub fn config(&self, socket: &Path) -> Config {
        let hr = |hr: u16, san: u16, p: &HrSpec| {
            let statics = p
                .static_entry
                .iter()
                .map(|&(addr, mac)| config::static_node(addr, mac, &[]))
                .collect();
            config::dpdk_hr(hr, san, &p.device, p.mac, statics)
        };
        let mut c = config::dpdk_router(
            "e2e",
            config::eal_on(&self.eal, self.main_lcore),
            config::busy_poll_workers(&[self.worker_core as usize]),
            socket,
            LogLevel::Warn,
            vec![hr(HR_A, SAN_A, &self.a), hr(HR_B, SAN_B, &self.b)],
        );
        c.management.static_partitions = self.partitions.clone();
        c
    }

    /// The configuration file's text.
    pub fn to_toml(&self, socket: &Path) -> String {
        self.config(socket).to_toml()
    }
}

/// One reading of the counters area (admin's, as `mwctl stats` reads it).
pub use admin::stats::Snapshot;

/// A port's counters as the harness's JSON records them: the counters
/// that show where packets went, all drops, and the drops by reason (zeros
/// left out).
pub fn port_json(p: &PortStats) -> Value {
    let drops: Map<String, Value> = DropReason::ALL
        .iter()
        .filter(|r| p.dropped(**r) > 0)
        .map(|r| (r.name().to_string(), json!(p.dropped(*r))))
        .collect();
    json!({
        "received": p.received,
        "forwarded": p.forwarded,
        "punted": p.punted,
        "transmitted": p.transmitted,
        "injected": p.injected,
        "rx_errors": p.rx_errors,
        "dropped": p.dropped_total(),
        "drops": drops,
    })
}

/// A port's drops with a count, `reason=N, ...` ("none").
pub fn drops_text(p: &PortStats) -> String {
    let v: Vec<String> = DropReason::ALL
        .iter()
        .filter(|r| p.dropped(**r) > 0)
        .map(|r| format!("{r}={}", p.dropped(*r)))
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// A running mwrouterd.
#[derive(Debug)]
pub struct Router {
    proc: Proc,
    area: PathBuf,
    mwctl: PathBuf,
    config: PathBuf,
    socket: PathBuf,
}

impl Router {
    /// Writes the configuration into the scratch directory (files named
    /// `<tag>.*`), starts mwrouterd and waits until it publishes counters.
    pub fn start(env: &Env, spec: &RouterSpec, tag: &str) -> Result<Router> {
        Router::start_with(env, tag, |socket| spec.config(socket))
    }

    /// As [`Router::start`], with the configuration that `make_config` makes
    /// for the admin socket path it is given.
    pub fn start_with(
        env: &Env,
        tag: &str,
        make_config: impl FnOnce(&Path) -> Config,
    ) -> Result<Router> {
        let mut r = Router::spawn(env, "mwrouterd", tag, make_config, Command::new)?;
        r.wait_ready()?;
        Ok(r)
    }

    /// Writes the configuration that `make_config` makes for the admin
    /// socket path it is given (files named `<tag>.*`, checked as mwrouterd
    /// checks them) and starts mwrouterd (`name` in messages) with the
    /// command that `command` makes of its path (`taskset -c CORES
    /// mwrouterd`, say); does not wait for it ([`Router::wait_ready`]).
    pub fn spawn(
        env: &Env,
        name: &str,
        tag: &str,
        make_config: impl FnOnce(&Path) -> Config,
        command: impl FnOnce(PathBuf) -> Command,
    ) -> Result<Router> {
        let socket = env.file(&format!("{tag}.sock"));
        let area = socket.with_extension("stats");
        let _ = std::fs::remove_file(&area);
        let config = env.file(&format!("{tag}.toml"));
        let c = make_config(&socket);
        config::validate(&c)
            .map_err(|e| format!("the configuration {} is not valid: {e}", config.display()))?;
        config::write(&config, &c)?;
        let mut cmd = command(env.bin("mwrouterd"));
        cmd.arg("--config").arg(&config);
        let proc = Proc::spawn(name, cmd, &env.file(&format!("{tag}.log")), false)?;
        Ok(Router {
            proc,
            area,
            mwctl: env.bin("mwctl"),
            config,
            socket,
        })
    }

    /// Waits until it answers on its admin socket and publishes counters.
    pub fn wait_ready(&mut self) -> Result<()> {
        let (socket, area) = (&self.socket, &self.area);
        let proc = &mut self.proc;
        let ready = wait_for(
            "mwrouterd's admin socket and counters",
            Duration::from_secs(30),
            || {
                proc.check_running()?;
                Ok(socket.exists()
                    && area.exists()
                    && read_area(area).is_ok_and(|s| s.published_ns > 0))
            },
        );
        ready.map_err(|e| format!("{e}; mwrouterd's output:\n{}", proc.log_tail(30)))
    }

    /// Runs `mwctl --socket <its socket> ARGS` and returns its output (an
    /// error when it fails).
    pub fn mwctl(&mut self, args: &[String]) -> Result<String> {
        self.proc.check_running()?;
        mwctl_at(&self.mwctl, &self.socket, args)
    }

    /// Its admin socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// Its log file (standard output and error).
    pub fn log(&self) -> &Path {
        self.proc.log()
    }

    /// An error, with the end of its log, when it has exited.
    pub fn check_running(&mut self) -> Result<()> {
        self.proc.check_running()
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        self.proc.try_status().is_ok_and(|s| s.is_none())
    }

    /// The command line.
    pub fn command(&self) -> &[String] {
        self.proc.command()
    }

    /// The configuration file.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// Reads the counters (an error when mwrouterd has exited).
    pub fn snapshot(&mut self) -> Result<Snapshot> {
        self.proc.check_running()?;
        read_area(&self.area)
    }

    /// Waits for a publication newer than `after_ns` and returns it.
    pub fn next_snapshot(&mut self, after_ns: u64) -> Result<Snapshot> {
        let mut got = None;
        let area = self.area.clone();
        let proc = &mut self.proc;
        wait_for(
            "a new publication of mwrouterd's counters",
            Duration::from_secs(5),
            || {
                proc.check_running()?;
                let s = read_area(&area)?;
                let fresh = s.published_ns > after_ns;
                if fresh {
                    got = Some(s);
                }
                Ok(fresh)
            },
        )?;
        got.ok_or_else(|| "no counters".into())
    }

    /// SIGTERM, then SIGKILL after `grace`. Returns whether it exited on
    /// SIGTERM. (Before commit 35fb824 its worker drained the ports after
    /// SIGTERM until a pass received nothing, which an endless source such
    /// as `net_pcap,infinite_rx=1` never allows.)
    pub fn stop(self, grace: Duration) -> Result<bool> {
        Ok(self.terminate(grace)?.is_some())
    }

    /// SIGTERM, then SIGKILL after `grace`. Returns its exit status when it
    /// exited on SIGTERM, `None` when it had to be killed.
    pub fn terminate(mut self, grace: Duration) -> Result<Option<ExitStatus>> {
        self.proc.signal(rustix::process::Signal::TERM)?;
        if let Some(st) = self.proc.wait_timeout(grace)? {
            if !st.success() {
                eprintln!(
                    "e2e: mwrouterd exited with {st} after SIGTERM; the end of its output:\n{}",
                    self.proc.log_tail(20)
                );
            }
            return Ok(Some(st));
        }
        self.proc.kill()?;
        Ok(None)
    }

    /// SIGKILL (a crash, not a shutdown) and reap.
    pub fn kill(mut self) -> Result<()> {
        self.proc.kill().map(drop)
    }

    /// The end of its output.
    pub fn log_tail(&self, lines: usize) -> String {
        self.proc.log_tail(lines)
    }
}

/// `mwctl --socket SOCKET ARGS` and its output (an error when it fails).
pub fn mwctl_at(mwctl: &Path, socket: &Path, args: &[String]) -> Result<String> {
    let mut cmd = Command::new(mwctl);
    cmd.arg("--socket").arg(socket).args(args);
    let words = super::process::command_line(&cmd);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", shell_words(&words)))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            shell_words(&words),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The last publication in the counters area at `area`, read as `mwctl
/// stats --area` reads it (admin's [`StatsReader`]).
pub fn read_area(area: &Path) -> Result<Snapshot> {
    StatsReader::open(area)
        .and_then(|mut r| r.read())
        .map_err(|e| format!("counters area {}: {e}", area.display()))
}

/// A Part 1 style measurement: warm-up, then two readings `interval` apart.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Per port: counters over the interval.
    pub delta: Vec<PortStats>,
    /// Per port: counters at the end.
    pub end: Vec<PortStats>,
    /// The interval between the two publications.
    pub interval: Duration,
}

/// Warm-up, then two publications `interval` apart.
pub fn measure(r: &mut Router, warmup: Duration, interval: Duration) -> Result<Measurement> {
    sleep(warmup)?;
    let a = r.snapshot()?;
    let a = r.next_snapshot(a.published_ns)?;
    sleep(interval)?;
    let b = r.snapshot()?;
    let b = r.next_snapshot(b.published_ns)?;
    let delta = b
        .ports
        .iter()
        .zip(
            a.ports
                .iter()
                .map(|p| p.stats)
                .chain(std::iter::repeat(PortStats::default())),
        )
        .map(|(y, x)| y.since(&x))
        .collect();
    Ok(Measurement {
        delta,
        end: b.ports.iter().map(|p| p.stats).collect(),
        interval: Duration::from_nanos(b.published_ns.saturating_sub(a.published_ns)),
    })
}
