//! `dpdk-testpmd` driven over its interactive prompt (`-i`, commands on a
//! pipe).
//!
//! testpmd runs under `stdbuf -oL` so that its output reaches the log line
//! by line: "start" is followed by the forwarding configuration
//! ("io packet forwarding - ports=2 ..."), which marks the moment
//! forwarding began. A measurement is two `show port stats all` a measured
//! interval apart; the rate is testpmd's own "Throughput (since last
//! show)" of the egress port, which testpmd computes over its own TSC
//! interval between the two commands (so the pipe's latency does not
//! matter), cross-checked against the packet delta over our wall-clock
//! interval.

use std::io::Write;
use std::path::Path;
use std::process::{ChildStdin, Command};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::process::{Proc, sleep, wait_for};
use super::{Env, Result};

/// One port's counters in `show port stats all`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PortStats {
    /// RX-packets.
    pub rx_packets: u64,
    /// RX-missed.
    pub rx_missed: u64,
    /// RX-bytes.
    pub rx_bytes: u64,
    /// RX-errors.
    pub rx_errors: u64,
    /// RX-nombuf.
    pub rx_nombuf: u64,
    /// TX-packets.
    pub tx_packets: u64,
    /// TX-errors.
    pub tx_errors: u64,
    /// TX-bytes.
    pub tx_bytes: u64,
    /// Rx-pps since the previous show (testpmd's own interval).
    pub rx_pps: u64,
    /// Tx-pps since the previous show.
    pub tx_pps: u64,
}

impl PortStats {
    /// Counter differences `self - earlier` (the rates are `self`'s).
    pub fn delta(&self, earlier: &PortStats) -> PortStats {
        PortStats {
            rx_packets: self.rx_packets.saturating_sub(earlier.rx_packets),
            rx_missed: self.rx_missed.saturating_sub(earlier.rx_missed),
            rx_bytes: self.rx_bytes.saturating_sub(earlier.rx_bytes),
            rx_errors: self.rx_errors.saturating_sub(earlier.rx_errors),
            rx_nombuf: self.rx_nombuf.saturating_sub(earlier.rx_nombuf),
            tx_packets: self.tx_packets.saturating_sub(earlier.tx_packets),
            tx_errors: self.tx_errors.saturating_sub(earlier.tx_errors),
            tx_bytes: self.tx_bytes.saturating_sub(earlier.tx_bytes),
            rx_pps: self.rx_pps,
            tx_pps: self.tx_pps,
        }
    }

    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({
            "rx_packets": self.rx_packets,
            "rx_missed": self.rx_missed,
            "rx_bytes": self.rx_bytes,
            "rx_errors": self.rx_errors,
            "rx_nombuf": self.rx_nombuf,
            "tx_packets": self.tx_packets,
            "tx_errors": self.tx_errors,
            "tx_bytes": self.tx_bytes,
        })
    }
}

/// The value after `key` on a stats line (`RX-packets: 123   RX-missed: 0`).
fn field(line: &str, key: &str) -> Option<u64> {
    let at = line.find(key)? + key.len();
    line[at..].split_whitespace().next()?.parse().ok()
}

/// Every "NIC statistics for port N" block of testpmd's output, in order:
/// (port, counters).
pub fn parse_port_stats(text: &str) -> Vec<(u16, PortStats)> {
    let mut out: Vec<(u16, PortStats)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.split("NIC statistics for port").nth(1) {
            let port = rest
                .split_whitespace()
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(u16::MAX);
            out.push((port, PortStats::default()));
            continue;
        }
        let Some((_, s)) = out.last_mut() else {
            continue;
        };
        if line.contains("######") {
            continue;
        }
        if let Some(v) = field(line, "RX-packets:") {
            s.rx_packets = v;
        }
        if let Some(v) = field(line, "RX-missed:") {
            s.rx_missed = v;
        }
        if let Some(v) = field(line, "RX-bytes:") {
            s.rx_bytes = v;
        }
        if let Some(v) = field(line, "RX-errors:") {
            s.rx_errors = v;
        }
        if let Some(v) = field(line, "RX-nombuf:") {
            s.rx_nombuf = v;
        }
        if let Some(v) = field(line, "TX-packets:") {
            s.tx_packets = v;
        }
        if let Some(v) = field(line, "TX-errors:") {
            s.tx_errors = v;
        }
        if let Some(v) = field(line, "TX-bytes:") {
            s.tx_bytes = v;
        }
        if let Some(v) = field(line, "Rx-pps:") {
            s.rx_pps = v;
        }
        if let Some(v) = field(line, "Tx-pps:") {
            s.tx_pps = v;
        }
    }
    out
}

/// How to start testpmd.
#[derive(Debug, Clone)]
pub struct Spec {
    /// `-l` (e.g. "0,1").
    pub lcores: String,
    /// `--main-lcore`, when not the first of `lcores`.
    pub main_lcore: Option<u32>,
    /// EAL memory and general flags (hugepages::Memory::eal_flags).
    pub eal: Vec<String>,
    /// `--vdev` values, port 0 first.
    pub vdevs: Vec<String>,
    /// `--forward-mode`.
    pub forward_mode: String,
}

/// A running testpmd.
#[derive(Debug)]
pub struct Testpmd {
    proc: Proc,
    stdin: ChildStdin,
}

/// mbufs of testpmd's pool: its default (sized for 32 ports) does not fit
/// in `-m 512`; this holds the rings (1024 + 1024 per port) many times over.
const TOTAL_MBUFS: u32 = 16384;

impl Testpmd {
    /// Starts testpmd (interactive, commands on a pipe) with its output in
    /// `log`.
    pub fn start(env: &Env, spec: &Spec, log: &Path) -> Result<Testpmd> {
        let mut cmd = Command::new(&env.stdbuf);
        cmd.arg("-oL").arg(&env.testpmd).args(["-l", &spec.lcores]);
        if let Some(m) = spec.main_lcore {
            cmd.args(["--main-lcore", &m.to_string()]);
        }
        cmd.args(&spec.eal);
        for v in &spec.vdevs {
            cmd.arg(format!("--vdev={v}"));
        }
        cmd.args([
            "--",
            "-i",
            &format!("--forward-mode={}", spec.forward_mode),
            "--nb-cores=1",
            "--rxq=1",
            "--txq=1",
            "--rxd=1024",
            "--txd=1024",
            "--burst=32",
            &format!("--total-num-mbufs={TOTAL_MBUFS}"),
        ]);
        let mut proc = Proc::spawn("dpdk-testpmd", cmd, log, true)?;
        let stdin = proc
            .take_stdin()
            .ok_or("dpdk-testpmd: no pipe to its standard input")?;
        Ok(Testpmd { proc, stdin })
    }

    /// The command line (without the `stdbuf -oL` wrapper's words first).
    pub fn command(&self) -> &[String] {
        self.proc.command()
    }

    /// Sends one command line.
    pub fn send(&mut self, line: &str) -> Result<()> {
        self.proc.check_running()?;
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("dpdk-testpmd: cannot send `{line}`: {e}"))
    }

    /// The output so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(self.proc.log()).unwrap_or_default()
    }

    /// Sends `start` and waits until forwarding began.
    pub fn start_forwarding(&mut self) -> Result<()> {
        self.send("start")?;
        let log = self.proc.log().to_path_buf();
        let proc = &mut self.proc;
        wait_for(
            "dpdk-testpmd to start forwarding",
            Duration::from_secs(30),
            || {
                proc.check_running()?;
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                Ok(text.contains("packet forwarding - ports="))
            },
        )
        .map_err(|e| format!("{e}; its output:\n{}", self.proc.log_tail(30)))
    }

    /// `show port stats all`, waiting until its output is in the log.
    /// Returns the blocks it printed (port, counters).
    pub fn port_stats(&mut self, ports: usize) -> Result<Vec<(u16, PortStats)>> {
        let before = parse_port_stats(&self.output()).len();
        self.send("show port stats all")?;
        let log = self.proc.log().to_path_buf();
        let proc = &mut self.proc;
        let mut blocks = Vec::new();
        wait_for(
            "dpdk-testpmd's port statistics",
            Duration::from_secs(10),
            || {
                proc.check_running()?;
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                // Complete when the next block started or the last one has its
                // "Tx-pps" line.
                let all = parse_port_stats(&text);
                let done = all.len() >= before + ports
                    && text
                        .rsplit("NIC statistics for port")
                        .next()
                        .is_some_and(|last| last.contains("Tx-pps:"));
                if done {
                    blocks = all[before..before + ports].to_vec();
                }
                Ok(done)
            },
        )?;
        Ok(blocks)
    }

    /// `stop`, `quit`, and waits for it to exit. Returns its whole output.
    pub fn quit(mut self) -> Result<String> {
        // A testpmd that already died is reported by `send`.
        self.send("stop")?;
        self.send("quit")?;
        match self.proc.wait_timeout(Duration::from_secs(30))? {
            Some(st) if st.success() => Ok(self.output()),
            Some(st) => Err(format!(
                "dpdk-testpmd exited with {st}; the end of its output:\n{}",
                self.proc.log_tail(30)
            )),
            None => {
                self.proc.stop(Duration::from_secs(5))?;
                Err("dpdk-testpmd did not quit within 30 s of `quit`".into())
            }
        }
    }
}

/// A measurement over an interval: counters of each port at both ends.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Per port: the difference over the interval.
    pub delta: Vec<(u16, PortStats)>,
    /// Per port: the counters at the end.
    pub end: Vec<(u16, PortStats)>,
    /// Our wall-clock interval between the two commands.
    pub wall: Duration,
}

impl Measurement {
    /// Port `p`'s delta.
    pub fn port(&self, p: u16) -> PortStats {
        self.delta
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, s)| *s)
            .unwrap_or_default()
    }
}

/// Warm-up, then two `show port stats all` `interval` apart.
pub fn measure(
    t: &mut Testpmd,
    ports: usize,
    warmup: Duration,
    interval: Duration,
) -> Result<Measurement> {
    sleep(warmup)?;
    let first = t.port_stats(ports)?;
    let t0 = Instant::now();
    sleep(interval)?;
    let t1 = Instant::now();
    let second = t.port_stats(ports)?;
    let delta = second
        .iter()
        .map(|(p, s)| {
            let prev = first
                .iter()
                .find(|(q, _)| q == p)
                .map(|(_, s)| *s)
                .unwrap_or_default();
            (*p, s.delta(&prev))
        })
        .collect();
    Ok(Measurement {
        delta,
        end: second,
        wall: t1 - t0,
    })
}
