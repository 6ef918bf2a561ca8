//! Output: the live progress line, the summary table, and the JSON and CSV
//! result files.

use std::fmt::Write as _;

use serde::Serialize;

use crate::run::{Progress, RunResult};
use crate::search::{Decision, SearchResult, Trial};

/// Everything a run of mwgen produced, as written by `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `"run"` or `"search"`.
    pub mode: &'static str,
    /// The command line.
    pub command: Vec<String>,
    /// The transmit and receive ports as given.
    pub ports: Ports,
    /// The profile as given.
    pub profile: ProfileInfo,
    /// The run (mode `run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunResult>,
    /// The search (mode `search`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchResult>,
    /// Each core's part of a run on several cores (`--cores`), in core
    /// order: what it sent, and what its own queue received of every
    /// core's stream (its `lost` compares the two, which means something
    /// only for the whole run: `run`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<RunResult>,
}

/// A line per core of a run on several cores: the CPU, what it sent and
/// what its queue received.
pub fn cores_table(cpus: &[Option<usize>], each: &[RunResult]) -> String {
    let mut s = String::new();
    for (i, r) in each.iter().enumerate() {
        let cpu = cpus
            .get(i)
            .copied()
            .flatten()
            .map_or("-".to_string(), |c| c.to_string());
        s.push_str(&format!(
            "  core {i} (cpu {cpu})  sent {} ({})  received {} ({})\n",
            r.tx.sent,
            pps(r.tx_pps),
            r.rx.received,
            pps(r.rx.received as f64 / r.duration_s.max(1e-9)),
        ));
    }
    s
}

/// Ports as given on the command line.
#[derive(Debug, Clone, Serialize)]
pub struct Ports {
    /// Transmit port.
    pub tx: String,
    /// Receive port (same as tx when not given).
    pub rx: String,
    /// The next hop's native address.
    pub to: String,
}

/// The profile as given on the command line.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileInfo {
    /// `"l3"` or `"l2"`.
    pub kind: &'static str,
    /// Source address.
    pub src: String,
    /// Destinations as given.
    pub dst: String,
    /// Sizes as given.
    pub size: String,
    /// Mean frame size of the cycle.
    pub mean_frame: f64,
    /// Packets in the cycle.
    pub cycle: usize,
    /// The L2 route as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2: Option<String>,
    /// Priority.
    pub priority: u8,
    /// The partition every packet is marked with, as `--partition` takes it
    /// (`0x0010`, `0x0010:limited`); left out: unmarked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
}

/// A rate in human units: `12.35 Mpps`.
pub fn pps(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} Mpps", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} kpps", v / 1e3)
    } else {
        format!("{v:.0} pps")
    }
}

/// A bit rate in human units: `8.30 Gbit/s`.
pub fn bps(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2} Gbit/s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2} Mbit/s", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} kbit/s", v / 1e3)
    } else {
        format!("{v:.0} bit/s")
    }
}

/// A latency in human units.
pub fn ns(v: u64) -> String {
    if v >= 10_000_000 {
        format!("{:.1} ms", v as f64 / 1e6)
    } else if v >= 10_000 {
        format!("{:.1} us", v as f64 / 1e3)
    } else {
        format!("{v} ns")
    }
}

/// The progress line (no newline; the caller rewrites it with `\r`).
pub fn progress_line(p: &Progress) -> String {
    format!(
        "{:6.1}s  sent {:>12}  rx {:>12}  tx {:>12}  rx {:>12}  refused {}",
        p.elapsed_s,
        p.sent,
        p.received,
        pps(p.tx_pps),
        pps(p.rx_pps),
        p.refused
    )
}

/// One line per trial of a search.
pub fn trial_line(t: &Trial) -> String {
    let r = &t.result;
    format!(
        "search {} {:<3} try {} offered {:>14}  sent {:>14}  loss {:>9.5}%  {}",
        t.search,
        t.phase,
        t.try_index,
        t.offered_pps.map_or("max".into(), pps),
        pps(r.tx_pps),
        r.loss_ratio * 100.0,
        if t.pass { "pass" } else { "fail" }
    )
}

/// One line per rate of a search: its verdict and how many of its tries
/// failed (at max, also the verdict against PDR's threshold).
pub fn rate_line(d: &Decision) -> String {
    let run = d.tries.len();
    let mut s = format!(
        "search {} {:<3} {:>14}  {}  {} of {} {} failed",
        d.search,
        d.phase,
        d.offered_pps.map_or("max".into(), pps),
        d.verdict.as_str(),
        d.failed,
        run,
        if run == 1 { "try" } else { "tries" }
    );
    if let Some(v) = d.pdr_verdict {
        let _ = write!(s, "; within PDR's loss: {}", v.as_str());
    }
    s
}

/// The summary table of a run.
pub fn run_table(r: &RunResult) -> String {
    let mut s = String::new();
    let l = &r.latency_ns;
    let rows: Vec<(&str, String)> = vec![
        ("duration", format!("{:.3} s", r.duration_s)),
        ("offered", r.offered_pps.map_or("max".into(), pps)),
        (
            "sent",
            format!("{} ({}, {})", r.tx.sent, pps(r.tx_pps), bps(r.tx_bps)),
        ),
        (
            "refused by port",
            format!("{} (never on the wire)", r.tx.refused),
        ),
        ("no buffer", r.tx.no_buffer.to_string()),
        (
            "received",
            format!("{} ({}, {})", r.rx.received, pps(r.rx_pps), bps(r.rx_bps)),
        ),
        ("lost", format!("{} ({:.6}%)", r.lost, r.loss_ratio * 100.0)),
        ("duplicated", r.rx.duplicated.to_string()),
        (
            "reordered",
            format!("{} (of which late {})", r.rx.reordered, r.rx.late),
        ),
        (
            "latency",
            if l.count == 0 {
                "-".into()
            } else {
                format!(
                    "min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  ({} samples)",
                    ns(l.min),
                    ns(l.p50),
                    ns(l.p90),
                    ns(l.p99),
                    ns(l.p999),
                    ns(l.max),
                    l.count
                )
            },
        ),
        (
            "EI seen",
            if r.ei.is_empty() {
                "-".into()
            } else {
                let v: Vec<String> =
                    r.ei.iter()
                        .map(|e| format!("{} x{}", e.value, e.count))
                        .collect();
                v.join(", ")
            },
        ),
        (
            "other packets",
            format!(
                "{} not probes, {} of other streams, {} malformed, {} rx errors",
                r.rx.other, r.rx.foreign, r.rx.malformed, r.rx.rx_errors
            ),
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(s, "  {k:<16} {v}");
    }
    if r.interrupted {
        s.push_str("  (interrupted)\n");
    }
    s
}

/// The summary table of a search: the rates found, with each search's
/// value and their spread, then every rate decided.
pub fn search_table(r: &SearchResult) -> String {
    let mut s = String::new();
    let each = |v: &[f64]| v.iter().map(|x| pps(*x)).collect::<Vec<_>>().join(", ");
    let _ = writeln!(s, "  {:<16} {}", "max sent", pps(r.max_pps));
    let _ = writeln!(
        s,
        "  {:<16} {} ({})  searches: {}  spread {}",
        "NDR",
        pps(r.ndr.pps),
        bps(r.ndr.bps),
        each(&r.ndr.each),
        pps(r.ndr.spread)
    );
    let _ = writeln!(
        s,
        "  {:<16} {} ({})  searches: {}  spread {}",
        format!("PDR ({}%)", r.pdr_loss * 100.0),
        pps(r.pdr.pps),
        bps(r.pdr.bps),
        each(&r.pdr.each),
        pps(r.pdr.spread)
    );
    let retried = r.rates.iter().filter(|d| d.tries.len() > 1).count();
    let _ = writeln!(
        s,
        "rates ({} decided, {} of them with more than one try; up to {} tries a rate, failed when {} fail):",
        r.rates.len(),
        retried,
        r.tries,
        r.tries / 2 + 1
    );
    for d in &r.rates {
        let _ = writeln!(s, "  {}", rate_line(d));
    }
    if let Some(l) = &r.latency {
        let _ = writeln!(
            s,
            "latency at {:.0}% of NDR ({}):",
            r.latency_at * 100.0,
            pps(l.offered_pps.unwrap_or(0.0))
        );
        s.push_str(&run_table(l));
    }
    s
}

/// The CSV header of [`csv_row`].
pub const CSV_HEADER: &str = "phase,search,offered_pps,duration_s,sent,refused,received,unique,lost,loss_ratio,duplicated,reordered,tx_pps,tx_bps,rx_pps,rx_bps,lat_min_ns,lat_p50_ns,lat_p90_ns,lat_p99_ns,lat_p999_ns,lat_max_ns,pass,try";

/// One CSV row: a run, or a trial with its try index and outcome.
pub fn csv_row(
    phase: &str,
    search: Option<u32>,
    r: &RunResult,
    pass: Option<bool>,
    try_index: Option<u32>,
) -> String {
    let l = &r.latency_ns;
    format!(
        "{phase},{},{},{:.6},{},{},{},{},{},{:.9},{},{},{:.1},{:.1},{:.1},{:.1},{},{},{},{},{},{},{},{}",
        search.map_or(String::new(), |s| s.to_string()),
        r.offered_pps.map_or(String::new(), |p| format!("{p:.1}")),
        r.duration_s,
        r.tx.sent,
        r.tx.refused,
        r.rx.received,
        r.unique,
        r.lost,
        r.loss_ratio,
        r.rx.duplicated,
        r.rx.reordered,
        r.tx_pps,
        r.tx_bps,
        r.rx_pps,
        r.rx_bps,
        l.min,
        l.p50,
        l.p90,
        l.p99,
        l.p999,
        l.max,
        pass.map_or(String::new(), |p| p.to_string()),
        try_index.map_or(String::new(), |t| t.to_string()),
    )
}

/// The CSV file of a report.
pub fn csv(rep: &Report) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    if let Some(r) = &rep.run {
        s.push_str(&csv_row("run", None, r, None, None));
        s.push('\n');
    }
    if let Some(sr) = &rep.search {
        for t in &sr.trials {
            s.push_str(&csv_row(
                t.phase,
                Some(t.search),
                &t.result,
                Some(t.pass),
                Some(t.try_index),
            ));
            s.push('\n');
        }
        if let Some(l) = &sr.latency {
            s.push_str(&csv_row("latency", None, l, None, None));
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Verdict;

    #[test]
    fn units() {
        assert_eq!(pps(12_345_678.0), "12.346 Mpps");
        assert_eq!(pps(1500.0), "1.50 kpps");
        assert_eq!(bps(8.3e9), "8.30 Gbit/s");
        assert_eq!(ns(1234), "1234 ns");
        assert_eq!(ns(123_456), "123.5 us");
        assert_eq!(CSV_HEADER.split(',').count(), 24);
    }

    #[test]
    fn a_rate_line_says_its_verdict_and_failed_tries() {
        let d = Decision {
            search: 1,
            phase: "ndr",
            offered_pps: Some(1_500_000.0),
            tries: vec![7, 8],
            passed: 0,
            failed: 2,
            verdict: Verdict::Fail,
            pdr_verdict: None,
        };
        assert_eq!(
            rate_line(&d),
            "search 1 ndr     1.500 Mpps  fail  2 of 2 tries failed"
        );
        let d = Decision {
            phase: "max",
            offered_pps: None,
            tries: vec![0],
            passed: 1,
            failed: 0,
            verdict: Verdict::Pass,
            pdr_verdict: Some(Verdict::Pass),
            ..d
        };
        assert_eq!(
            rate_line(&d),
            "search 1 max            max  pass  0 of 1 try failed; within PDR's loss: pass"
        );
    }
}
