//! The generator: `mwgen --search` (NDR, PDR at 0.5 % loss, latency at 50 %
//! of the NDR) over two DPDK memif ports (role=client), one to send on and
//! one to receive on, on its own lcore.
//!
//! Everything the benchmark reads from mwgen's JSON report goes through
//! [`parse_search`] (docs/mwgen.md has the schema).

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

/// The generator's command line for `t`.
pub fn command(env: &Env, spec: &SearchSpec, t: &Traffic, json_out: &Path) -> Command {
    let mut eal = spec.eal.clone();
    eal.extend(["-l".to_string(), spec.lcore.to_string()]);
    let mut cmd = Command::new(env.bin("mwgen"));
    cmd.arg("--eal")
        .arg(eal.join(" "))
        .args(["--core", &spec.lcore.to_string()])
        .arg("--tx")
        .arg(memif_client(0, &spec.socket_a))
        .arg("--rx")
        .arg(memif_client(1, &spec.socket_b))
        .args(["--rx-mac", spec.rx_mac])
        .args(t.mwgen_profile_args())
        .args(["--search", "--pdr-loss", "0.5", "--latency-at", "50"])
        .args(["--trials", &spec.trials.to_string()])
        .arg("--trial-duration")
        .arg(format!("{}ms", spec.trial.as_millis()))
        .arg("--json")
        .arg(json_out)
        .arg("--quiet");
    if let Some(p) = spec.precision_pct {
        cmd.args(["--precision", &p.to_string()]);
    }
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
    let _ = std::fs::remove_file(&json_out);
    let cmd = command(env, spec, t, &json_out);
    let mut p = Proc::spawn("mwgen", cmd, &env.file(&format!("{tag}.log")), false)?;
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
    let text = std::fs::read_to_string(&json_out)
        .map_err(|e| format!("mwgen wrote no report {}: {e}", json_out.display()))?;
    let report: Value = serde_json::from_str(&text)
        .map_err(|e| format!("mwgen's report {} is not JSON: {e}", json_out.display()))?;
    let outcome = parse_search(&report)?;
    Ok((words, outcome, report))
}
