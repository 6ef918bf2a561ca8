//! The end-to-end benchmark (`benches/e2e`, binary `e2e`): mwrouterd on DPDK
//! against `dpdk-testpmd`, and with the generator `mwgen`
//! (docs/performance.md "End to end, against dpdk-testpmd").
//!
//! - [`prereq`]: what must be installed and built, with how to get it;
//! - [`hugepages`]: reserving 2 MB hugepages for the run and putting the
//!   previous reservation back, and the EAL memory flags that follow;
//! - [`process`]: child processes that are stopped when dropped, and the
//!   interrupt flag (Ctrl-C) that every wait checks;
//! - [`traffic`]: the traffic profiles and their pcaps;
//! - [`testpmd`]: `dpdk-testpmd` driven over its interactive prompt;
//! - [`config`]: the harness's mwrouterd configurations, built as
//!   mwrouterd's own `Config`;
//! - [`router`]: mwrouterd with such a configuration, its counters read
//!   from its counters area as `mwctl stats --area` reads them;
//! - [`mwgen`]: the generator's NDR/PDR search;
//! - [`single_core_throughput`] (Part 1, `--part 1`: each forwarder's
//!   throughput on one core, pcap in, null out; its peers include DPDK's L3
//!   forwarders, [`l3fwd`]) and [`ndr_with_mwgen`] (Part 2, `--part 2`: NDR,
//!   PDR and latency end to end with the generator);
//! - [`mcast`]: the multicast part against DPDK's `ipv4_multicast` example,
//!   run by [`ipv4mc`];
//! - [`examples`]: DPDK's example applications built from `dpdk-doc` with
//!   the patches in benches/ (and a build cache), run with their counters
//!   read through DPDK telemetry ([`telemetry`]);
//! - [`scale`]: mwrouterd with two workers against one on four ports;
//! - [`flood`]: mwrouterd forwarding mwgen's probes while a port is flooded
//!   with packets for the box, against the same run without the flood;
//! - [`soak`]: the soak, mwrouterd under traffic and churn for a long time
//!   and every packet accounted for (`--part soak`), and the same in
//!   mwlab's lab with impaired hosts (`--part soak-lab`);
//! - [`report`]: tables and the JSON report.

pub mod config;
pub mod examples;
pub mod flood;
pub mod hugepages;
pub mod ipv4mc;
pub mod l3fwd;
pub mod mcast;
pub mod mwgen;
pub mod ndr_with_mwgen;
pub mod prereq;
pub mod process;
pub mod report;
pub mod router;
pub mod scale;
pub mod single_core_throughput;
pub mod soak;
pub mod telemetry;
pub mod testpmd;
pub mod traffic;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Errors are messages for the operator: what failed and why.
pub type Result<T> = std::result::Result<T, String>;

/// The EAL lcore of the forwarding thread in Part 1 (EAL's main lcore is 0).
pub const PART1_WORKER_LCORE: u32 = 1;
/// The lcore of the forwarder in Part 2.
pub const PART2_FORWARDER_LCORE: u32 = 0;
/// The lcore of the generator in Part 2.
pub const PART2_GENERATOR_LCORE: u32 = 1;

/// The MAC addresses and MessageWay addresses of the benchmark's wiring
/// (examples/router-dpdk.toml): the generator's side A (node 0x0130) and
/// side B (node 0x0230), the router's HRs 0x0101 and 0x0102.
pub mod addr {
    /// The router's port A (HR 0x0101).
    pub const ROUTER_A_MAC: &str = "02:00:00:00:01:01";
    /// The router's port B (HR 0x0102).
    pub const ROUTER_B_MAC: &str = "02:00:00:00:01:02";
    /// The generator's transmit port (node 0x0130 on SAN 0x0201).
    pub const GEN_A_MAC: &str = "02:00:00:00:01:30";
    /// The generator's receive port (node 0x0230 on SAN 0x0202).
    pub const GEN_B_MAC: &str = "02:00:00:00:02:30";
    /// HR A.
    pub const HR_A: u16 = 0x0101;
    /// HR B.
    pub const HR_B: u16 = 0x0102;
    /// SAN of HR A.
    pub const SAN_A: u16 = 0x0201;
    /// SAN of HR B.
    pub const SAN_B: u16 = 0x0202;
    /// The generator's source node.
    pub const NODE_A: u16 = 0x0130;
    /// The destination node.
    pub const NODE_B: u16 = 0x0230;
}

/// What the command line asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Short intervals (a smoke run of a couple of minutes).
    pub quick: bool,
    /// Where to write the JSON report.
    pub json: Option<PathBuf>,
    /// Run Part 1.
    pub part1: bool,
    /// Run Part 2.
    pub part2: bool,
    /// Run the multicast part (`--part mcast`).
    pub mcast: bool,
    /// Run the scaling part (`--part scale`).
    pub scale: bool,
    /// Part 1: run DPDK's L3 forwarders too (not with `--no-l3fwd`).
    pub l3fwd: bool,
    /// The scaling part: the cores of its two workers (`--scale-cores`;
    /// `None`: 1 and 2, or 1 and 0 on a 2-CPU machine).
    pub scale_cores: Option<(u32, u32)>,
    /// The scaling part: the `[workers]` lines that give each of two
    /// workers whole ports (`--scale-workers-toml`; `None`:
    /// [`scale::OWNED_PORTS_TOML`]).
    pub scale_workers_toml: Option<String>,
    /// Use the pcaps of this directory (`l3-64.pcap`, ...) instead of
    /// writing them with mwgen.
    pub pcap_dir: Option<PathBuf>,
    /// Hugepages to reserve (2 MB each).
    pub hugepages: u64,
    /// Do not try to reserve hugepages.
    pub no_huge: bool,
    /// Part 1's rounds (`None`: the default for the mode, see
    /// [`Options::rounds`]).
    pub rounds: Option<u32>,
    /// The soak (`--part soak` or `soak-lab`, which run alone) and its
    /// options.
    pub soak: soak::SoakOptions,
    /// Run the flood part (`--part flood`), with these options.
    pub flood: Option<flood::FloodOptions>,
}

impl Options {
    /// Part 1's warm-up before the first reading.
    pub fn warmup(&self) -> Duration {
        Duration::from_secs(if self.quick { 1 } else { 2 })
    }

    /// How long to wait for a quiet machine before each measurement.
    pub fn patience(&self) -> Duration {
        Duration::from_secs(if self.quick { 10 } else { 60 })
    }

    /// Part 1's measured interval.
    pub fn interval(&self) -> Duration {
        Duration::from_secs(if self.quick { 2 } else { 5 })
    }

    /// Part 1's (and the multicast part's) rounds: each traffic is measured
    /// this many times with the forwarders one after the other, and the
    /// figures are the medians (3 by default, 1 with `--quick`). testpmd's own rate moves by 10-20 %
    /// between runs on a shared machine; a ratio is taken within a round
    /// (side by side), and the reported ratio is the median of the rounds'.
    pub fn rounds(&self) -> u32 {
        self.rounds.unwrap_or(if self.quick { 1 } else { 3 })
    }
}

/// The median of `v` (the mean of the middle two for an even count); `None`
/// when empty.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Where the binaries are and where a run keeps its files.
#[derive(Debug, Clone)]
pub struct Env {
    /// target/release (where this binary is).
    pub bin_dir: PathBuf,
    /// dpdk-testpmd.
    pub testpmd: PathBuf,
    /// `stdbuf`, to make testpmd's output line-buffered.
    pub stdbuf: PathBuf,
    /// The run's scratch directory (configurations, sockets, logs, pcaps).
    pub work: PathBuf,
    /// The build cache of DPDK's examples (`target/release/e2e-examples`),
    /// if any ([`examples::build`]).
    pub cache: Option<PathBuf>,
}

impl Env {
    /// A binary of this workspace (target/release/NAME).
    pub fn bin(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// A path in the scratch directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }
}

/// `path` as a string for a command line or a configuration file.
pub fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `a / b`, or `None` when `b` is 0.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// CPUs kept busy by other processes, sampled from /proc/stat over
/// `sample` (run it while none of the benchmark's processes run). A busy
/// machine (another build, say) lowers every figure of a 2-core box.
pub fn busy_cpus(sample: Duration) -> Result<f64> {
    fn read() -> Option<(u64, u64)> {
        let s = std::fs::read_to_string("/proc/stat").ok()?;
        let line = s.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        let total: u64 = v.iter().take(8).sum();
        let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
        Some((total, idle))
    }
    let (t0, i0) = read().ok_or("cannot read /proc/stat")?;
    process::sleep(sample)?;
    let (t1, i1) = read().ok_or("cannot read /proc/stat")?;
    let total = t1.saturating_sub(t0).max(1) as f64;
    let busy = total - i1.saturating_sub(i0) as f64;
    Ok(busy / total * crate::sysinfo::cpus() as f64)
}

/// Waits up to `patience` for other processes to leave the CPUs alone
/// (less than a quarter of a CPU busy, in 300 ms samples), then warns if
/// they did not. Returns the last figure for the report.
pub fn wait_quiet(patience: Duration) -> Result<f64> {
    let end = std::time::Instant::now() + patience;
    let mut said = false;
    loop {
        let busy = busy_cpus(Duration::from_millis(300))?;
        if busy <= 0.25 {
            return Ok(busy);
        }
        if std::time::Instant::now() >= end {
            eprintln!(
                "e2e: warning: other processes keep {busy:.2} CPUs busy: the figures of this \
                 run will be low (see `top`)"
            );
            return Ok(busy);
        }
        if !said {
            eprintln!(
                "e2e: other processes keep {busy:.2} CPUs busy: waiting up to {patience:?} for quiet"
            );
            said = true;
        }
    }
}
