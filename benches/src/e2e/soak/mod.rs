//! The soak (docs/reliability.md "Soak"): a router run for a long time under
//! traffic and churn, then checked that every packet is accounted for.
//! Parts of the end-to-end harness that run alone: `benches/e2e --part
//! soak` ([`default_mode`]: mwrouterd on DPDK memif ports, its buddy, mwgen
//! at a fraction of the NDR) and `benches/e2e --part soak-lab`
//! ([`lab_mode`]: mwlab's Appendix B lab with impaired hosts). Exit status:
//! 0 every check passed, 1 a check failed, 2 the run could not be made.
//!
//! - [`options`]: the command line;
//! - [`configs`]: the routers' configurations, as mwrouterd's `Config`;
//! - [`ask`]: what the soak asks a router over its admin socket;
//! - [`schedule`]: the churn's timetable;
//! - [`captures`]: captures started and stopped in turn;
//! - [`reloads`]: the reloads and their check;
//! - [`sampler`]: memory, threads, descriptors and log lines over time;
//! - [`accounting`]: the checks on the counters;
//! - [`checks`]: the verdicts, printed and reported.
//!
//! Every process the soak starts is a child of the harness in a process
//! group of its own (the lab's: mwlab's `Lab`), stopped on the way out,
//! also on an error or Ctrl-C; the configurations, sockets, logs and
//! captures are in the run's scratch directory.

pub mod accounting;
pub mod ask;
pub mod captures;
pub mod checks;
pub mod configs;
pub mod default_mode;
pub mod lab_mode;
pub mod options;
pub mod reloads;
pub mod sampler;
pub mod schedule;

use std::path::Path;

use serde_json::{Map, Value, json};

pub use checks::Checks;
pub use options::{Mode, SoakOptions};

use super::hugepages::Memory;
use super::{Env, Result};
use crate::sysinfo;

/// How a soak ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The checks made.
    pub checks: Checks,
    /// The JSON report.
    pub report: Value,
    /// Why the run could not be made, if it could not.
    pub error: Option<String>,
}

impl Outcome {
    /// 0 every check passed, 1 a check failed, 2 the run could not be made.
    pub fn exit_code(&self) -> i32 {
        match (&self.error, self.checks.passed()) {
            (Some(_), _) => 2,
            (None, true) => 0,
            (None, false) => 1,
        }
    }

    /// The last line of the run.
    pub fn verdict(&self) -> String {
        match (&self.error, self.checks.failed()) {
            (Some(e), _) => format!("soak: the run could not be made: {e}"),
            (None, failed) if failed.is_empty() => "soak: every check passed".into(),
            (None, failed) => format!(
                "soak: {} check(s) failed: {}",
                failed.len(),
                failed.join(", ")
            ),
        }
    }
}

/// Runs the soak `o.mode` (default mode with the run's memory `mem`)
/// with the binaries and scratch directory of `env`; `argv` is the command
/// line, for the report.
pub fn run(env: &Env, mem: Option<&Memory>, o: &SoakOptions, argv: &[String]) -> Outcome {
    let mode = o.mode.unwrap_or(Mode::Default);
    let mut checks = Checks::new();
    let mut report = Map::new();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    report.insert("benchmark".into(), json!("soak"));
    report.insert("mode".into(), json!(mode.name()));
    report.insert("date".into(), json!(sysinfo::date_utc()));
    report.insert("argv".into(), json!(argv));
    report.insert(
        "machine".into(),
        json!({
            "cpu": sysinfo::cpu_model(),
            "cpus": sysinfo::cpus(),
            "kernel": kernel.trim(),
            "rustc": sysinfo::rustc(),
            "build": sysinfo::build(),
        }),
    );
    let r = match (mode, mem) {
        (Mode::Default, Some(mem)) => default_mode::run(env, mem, o, &mut checks, &mut report),
        (Mode::Default, None) => Err("the default mode needs DPDK's memory settings".into()),
        (Mode::Lab, _) => lab_mode::run(env, o, &mut checks, &mut report),
    };
    let error = r.err();
    if let Some(e) = &error {
        report.insert("error".into(), json!(e));
    }
    report.insert("checks".into(), checks.to_json());
    report.insert("ok".into(), json!(error.is_none() && checks.passed()));
    Outcome {
        checks,
        report: Value::Object(report),
        error,
    }
}

/// Writes `text` to `path` through a temporary file and a rename, so that
/// a reader never sees half of it.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot replace {}: {e}", path.display()))
}

/// kB as MiB, one decimal.
pub fn mib(kb: u64) -> f64 {
    (kb as f64 / 1024.0 * 10.0).round() / 10.0
}

/// `v` to one decimal.
pub fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// `v` to two decimals.
pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}
