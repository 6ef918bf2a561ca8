//! The generator: `mwgen --search` (NDR, PDR at 0.5 % loss, latency at 50 %
//! of the NDR) over two DPDK memif ports (role=client), one to send on and
//! one to receive on, on its own lcore.
//!
//! Everything the benchmark reads from mwgen's JSON report goes through
//! [`parse_search`], and [`parse_run`] for the soak's timed run
//! (docs/mwgen.md has the schema).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::process::{Proc, check_interrupt};
use super::traffic::Traffic;
use super::{Env, Result, path_str};

/// How to run one search.
#[derive(Debug, Clone)]
pub struct SearchSpec {
    /// EAL flags (memory and general) without `-l`.
    pub eal: Vec<String>,
    /// The generator's lcore (`-l` and the thread's core).
    pub lcore: u32,
    /// The transmit memif's socket (the forwarder's port 0 serves it).
    pub socket_a: PathBuf,
    /// The receive memif's socket (the forwarder's port 1).
    pub socket_b: PathBuf,
    /// The receive port's MAC: the destination MAC of the frames the
    /// forwarder sends (mwgen's DPDK port drops unicast frames to other
    /// MACs). Through mwrouterd that is the static entry of 0x0230
    /// (02:00:00:00:02:30); through testpmd `io`, which leaves the Ethernet
    /// header as it is, the router's port A MAC the frames were sent to.
    pub rx_mac: &'static str,
    /// Searches (the result is their median).
    pub trials: u32,
    /// Duration of each trial.
    pub trial: Duration,
    /// mwgen's `--precision` (percent of the maximum), when not its default.
    pub precision_pct: Option<f64>,
}

/// A memif client port of mwgen on `socket` (`net_memif<n>`; a socket
/// file, not an abstract socket, so that the forwarder's readiness shows).
fn memif_client(n: u32, socket: &Path) -> String {
    format!(
        "dpdk:net_memif{n},role=client,id=0,socket={},socket-abstract=no",
        path_str(socket)
    )
}

/// mwgen's options for `spec`'s EAL, core, ports and receive MAC, then the
/// profile `profile` ([`super::traffic::profile_args`]).
pub fn port_args(spec: &SearchSpec, profile: &[String]) -> Vec<String> {
    let mut eal = spec.eal.clone();
    eal.extend(["-l".to_string(), spec.lcore.to_string()]);
    let mut v = vec![
        "--eal".to_string(),
        eal.join(" "),
        "--core".into(),
        spec.lcore.to_string(),
        "--tx".into(),
        memif_client(0, &spec.socket_a),
        "--rx".into(),
        memif_client(1, &spec.socket_b),
        "--rx-mac".into(),
        spec.rx_mac.into(),
    ];
    v.extend(profile.iter().cloned());
    v
}

/// The search's options: NDR and PDR (0.5 %), latency at 50 % of the NDR,
/// `spec`'s trials, their duration and precision, the report in `json_out`.
pub fn search_args(spec: &SearchSpec, json_out: &Path) -> Vec<String> {
    let mut v: Vec<String> = ["--search", "--pdr-loss", "0.5", "--latency-at", "50"]
        .map(String::from)
        .to_vec();
    v.extend(["--trials".into(), spec.trials.to_string()]);
    v.extend([
        "--trial-duration".into(),
        format!("{}ms", spec.trial.as_millis()),
    ]);
    v.extend(["--json".into(), path_str(json_out), "--quiet".into()]);
    if let Some(p) = spec.precision_pct {
        v.extend(["--precision".into(), p.to_string()]);
    }
    v
}

/// The generator's command line for `t`.
pub fn command(env: &Env, spec: &SearchSpec, t: &Traffic, json_out: &Path) -> Command {
    let mut cmd = Command::new(env.bin("mwgen"));
    cmd.args(port_args(spec, &t.mwgen_profile_args()))
        .args(search_args(spec, json_out));
    cmd
}

/// Latency percentiles (ns) of the run at a fraction of the NDR.
#[derive(Debug, Clone, Copy, Default)]
pub struct Latency {
    /// The rate of that run, packets/s.
    pub at_pps: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Maximum.
    pub max: f64,
}

/// What the benchmark uses of a search.
#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    /// No-drop rate, packets/s.
    pub ndr_pps: f64,
    /// Partial-drop rate (0.5 % loss), packets/s.
    pub pdr_pps: f64,
    /// The rate of the trial at max (the upper bound), packets/s.
    pub max_pps: f64,
    /// Latency at 50 % of the NDR, if measured.
    pub latency: Option<Latency>,
    /// Trials run.
    pub trials: usize,
}

/// Reads the search's outcome from mwgen's JSON report (the only place
/// that knows its schema: `search.ndr.pps`, `search.pdr.pps`,
/// `search.max_pps`, `search.latency.{tx_pps, latency_ns.{p50, ...}}`).
pub fn parse_search(report: &Value) -> Result<SearchOutcome> {
    let s = report
        .get("search")
        .ok_or("mwgen's JSON report has no `search` object")?;
    let num = |v: &Value, path: &[&str]| -> Option<f64> {
        path.iter().try_fold(v, |v, k| v.get(k))?.as_f64()
    };
    let ndr = num(s, &["ndr", "pps"]).ok_or("mwgen's report: no search.ndr.pps")?;
    let pdr = num(s, &["pdr", "pps"]).ok_or("mwgen's report: no search.pdr.pps")?;
    let latency = s.get("latency").filter(|l| !l.is_null()).map(|l| Latency {
        at_pps: num(l, &["tx_pps"]).unwrap_or(0.0),
        p50: num(l, &["latency_ns", "p50"]).unwrap_or(0.0),
        p90: num(l, &["latency_ns", "p90"]).unwrap_or(0.0),
        p99: num(l, &["latency_ns", "p99"]).unwrap_or(0.0),
        p999: num(l, &["latency_ns", "p999"]).unwrap_or(0.0),
        max: num(l, &["latency_ns", "max"]).unwrap_or(0.0),
    });
    Ok(SearchOutcome {
        ndr_pps: ndr,
        pdr_pps: pdr,
        max_pps: num(s, &["max_pps"]).unwrap_or(0.0),
        latency,
        trials: s
            .get("trials")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
    })
}

/// Runs one search to the end (it may take minutes); returns the command
/// line, the outcome and the whole report.
pub fn search(
    env: &Env,
    spec: &SearchSpec,
    t: &Traffic,
    tag: &str,
) -> Result<(Vec<String>, SearchOutcome, Value)> {
    let json_out = env.file(&format!("{tag}.json"));
    let cmd = command(env, spec, t, &json_out);
    let (words, report) = run_to_end(cmd, &json_out, &env.file(&format!("{tag}.log")))?;
    let outcome = parse_search(&report)?;
    Ok((words, outcome, report))
}

/// Runs mwgen's command `cmd`, which writes its JSON report to `json_out`
/// and its output to `log`, to the end; returns the command line and the
/// report.
pub fn run_to_end(cmd: Command, json_out: &Path, log: &Path) -> Result<(Vec<String>, Value)> {
    let _ = std::fs::remove_file(json_out);
    let mut p = Proc::spawn("mwgen", cmd, log, false)?;
    let words = p.command().to_vec();
    let status = loop {
        check_interrupt()?;
        if let Some(st) = p.wait_timeout(Duration::from_millis(500))? {
            break st;
        }
    };
    if !status.success() {
        return Err(format!(
            "mwgen failed ({status}); the end of its output ({}):\n{}",
            p.log().display(),
            p.log_tail(30)
        ));
    }
    Ok((words, read_report(json_out)?))
}

/// mwgen's JSON report in `path`.
pub fn read_report(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("mwgen wrote no report {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("mwgen's report {} is not JSON: {e}", path.display()))
}

/// What a timed run (`--rate R --duration D`) counted, from its report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutcome {
    /// Packets the transmit port accepted.
    pub sent: u64,
    /// Packets the transmit port refused (a full ring): never on the wire.
    pub refused: u64,
    /// Packets not built for want of a buffer.
    pub no_buffer: u64,
    /// Probes received, copies included.
    pub received: u64,
    /// Probes received once.
    pub unique: u64,
    /// Probes sent and never received.
    pub lost: u64,
    /// Arrivals of a probe already received.
    pub duplicated: u64,
    /// First arrivals below the highest number seen.
    pub reordered: u64,
    /// Packets received that are not probes (RRP sweeps).
    pub other: u64,
    /// `lost / probes sent`.
    pub loss_ratio: f64,
    /// Packets sent per second.
    pub tx_pps: f64,
    /// Probes received once per second.
    pub rx_pps: f64,
    /// Seconds of transmission.
    pub duration_s: f64,
    /// Latency of the unique probes (ns), as mwgen reports it.
    pub latency_ns: Value,
}

/// Reads a timed run's counts from mwgen's JSON report (the only place
/// that knows that schema: `run.tx.{sent, refused, no_buffer}`,
/// `run.rx.{received, duplicated, reordered, other}`, `run.unique`,
/// `run.lost`, `run.loss_ratio`, `run.tx_pps`, `run.rx_pps`,
/// `run.duration_s`, `run.latency_ns`).
pub fn parse_run(report: &Value) -> Result<RunOutcome> {
    let r = report
        .get("run")
        .ok_or("mwgen's JSON report has no `run` object")?;
    let count = |path: &[&str]| -> Result<u64> {
        path.iter()
            .try_fold(r, |v, k| v.get(k))
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("mwgen's report: no run.{}", path.join(".")))
    };
    let num = |k: &str| r.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    Ok(RunOutcome {
        sent: count(&["tx", "sent"])?,
        refused: count(&["tx", "refused"])?,
        no_buffer: count(&["tx", "no_buffer"])?,
        received: count(&["rx", "received"])?,
        unique: count(&["unique"])?,
        lost: count(&["lost"])?,
        duplicated: count(&["rx", "duplicated"])?,
        reordered: count(&["rx", "reordered"])?,
        other: count(&["rx", "other"])?,
        loss_ratio: num("loss_ratio"),
        tx_pps: num("tx_pps"),
        rx_pps: num("rx_pps"),
        duration_s: num("duration_s"),
        latency_ns: r.get("latency_ns").cloned().unwrap_or(Value::Null),
    })
}
