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

/// The number of the line `key:` of a /proc file of `Key: N [kB]` lines
/// (/proc/meminfo, /proc/self/status), as written (kB where it says so).
pub fn proc_number(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// HugePages_Total of /proc/meminfo (0 when unknown).
pub fn hugepages() -> u64 {
    proc_number("/proc/meminfo", "HugePages_Total").unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proc_number_is_read_by_its_whole_key() {
        assert!(proc_number("/proc/self/status", "VmRSS").is_some_and(|kb| kb > 0));
        // A key is matched whole, never as the start of a longer one.
        assert_eq!(proc_number("/proc/self/status", "VmRS"), None);
        assert_eq!(proc_number("/proc/self/status", "NoSuchKey"), None);
        assert_eq!(proc_number("/nonexistent/status", "VmRSS"), None);
    }
}
