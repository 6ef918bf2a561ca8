//! What a benchmark report says about the machine and the build.

use std::time::{SystemTime, UNIX_EPOCH};

use mwdump::capture::civil_from_days;

/// The first "model name" of /proc/cpuinfo ("unknown" elsewhere).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// CPUs of the machine (the "processor" entries of /proc/cpuinfo; what
/// this process may run on elsewhere), whatever the thread is pinned to.
pub fn cpus() -> usize {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .map(|s| s.lines().filter(|l| l.starts_with("processor")).count())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// HugePages_Total of /proc/meminfo (0 when unknown).
pub fn hugepages() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("HugePages_Total:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The version of the compiler that built this binary.
pub fn rustc() -> &'static str {
    env!("BENCH_RUSTC_VERSION")
}

/// The optimisation level this binary was built with, and whether debug
/// assertions are on (the `ci` profile).
pub fn build() -> String {
    format!(
        "opt-level={}{}",
        env!("BENCH_OPT_LEVEL"),
        if cfg!(debug_assertions) {
            ", debug-assertions"
        } else {
            ""
        }
    )
}

/// Today's date (UTC) as YYYY-MM-DD.
pub fn date_utc() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}
