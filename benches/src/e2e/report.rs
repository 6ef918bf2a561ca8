//! The tables printed at the end, and the JSON report.

use serde_json::{Value, json};

use super::hugepages::Memory;
use super::mcast::{self, McastPart};
use super::part1::{self, Forwarder, Part1};
use super::part2::{self, GENERATOR_BOUND_LABEL, Part2};
use super::prereq::Found;
use super::traffic::{PART1, PART2};
use super::{Options, PART1_WORKER_LCORE};
use crate::sysinfo;

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.prec$}"))
}

/// Part 1's table: traffic x forwarder (Mpps) and the two ratios.
pub fn part1_table(p: &Part1) -> String {
    let rounds = p.runs.iter().map(|r| r.round + 1).max().unwrap_or(0);
    let mut s = format!(
        "Part 1: Mpps forwarded on one core (lcore {PART1_WORKER_LCORE}), net_pcap (infinite rx) -> net_null; \
         medians of {rounds} round(s), ratios within a round\n\
         {:<10} {:>11} {:>16} {:>10} {:>14} {:>19}\n",
        "traffic",
        "testpmd-io",
        "testpmd-macswap",
        "mwrouterd",
        "mwrouterd/io",
        "mwrouterd/macswap"
    );
    for t in &PART1 {
        let (io, mac) = p.ratios(t.name);
        s += &format!(
            "{:<10} {:>11} {:>16} {:>10} {:>14} {:>19}\n",
            t.label,
            opt(p.mpps(t.name, Forwarder::Io), 2),
            opt(p.mpps(t.name, Forwarder::Macswap), 2),
            opt(p.mpps(t.name, Forwarder::Mwrouterd), 2),
            opt(io, 2),
            opt(mac, 2),
        );
    }
    let routers: Vec<_> = p
        .runs
        .iter()
        .filter(|r| r.forwarder == Forwarder::Mwrouterd)
        .collect();
    let killed = routers
        .iter()
        .filter(|r| r.record["exited_on_sigterm"] == Value::Bool(false))
        .count();
    if killed > 0 {
        s += &format!(
            "(mwrouterd did not exit within 3 s of SIGTERM in {killed} of {} runs and was killed: \
             see docs/performance.md \"Known issues\")\n",
            routers.len()
        );
    }
    s
}

/// Part 2's table: NDR / PDR (Mpps) per traffic and forwarder, latency.
pub fn part2_table(p: &Part2) -> String {
    let mut s = format!(
        "Part 2: mwgen <-memif-> forwarder, NDR / PDR (0.5 % loss) in Mpps, latency at 50 % of NDR\n\
         {:<10} {:>9} {:>9} {:>26} {:>26} {:>22} {:>22}\n",
        "traffic",
        "io NDR",
        "io PDR",
        "mwrouterd NDR",
        "mwrouterd PDR",
        "io lat p50/p99 us",
        "mwr lat p50/p99 us"
    );
    let lat = |o: &super::mwgen::SearchOutcome| {
        o.latency.map_or_else(
            || "-".to_string(),
            |l| format!("{:.1}/{:.1}", l.p50 / 1e3, l.p99 / 1e3),
        )
    };
    for r in &p.rows {
        let label = |b: bool| {
            if b {
                format!(" ({GENERATOR_BOUND_LABEL})")
            } else {
                String::new()
            }
        };
        s += &format!(
            "{:<10} {:>9.3} {:>9.3} {:>26} {:>26} {:>22} {:>22}\n",
            r.traffic.label,
            r.ceiling.outcome.ndr_pps / 1e6,
            r.ceiling.outcome.pdr_pps / 1e6,
            format!(
                "{:.3}{}",
                r.router.outcome.ndr_pps / 1e6,
                label(r.ndr_generator_bound())
            ),
            format!(
                "{:.3}{}",
                r.router.outcome.pdr_pps / 1e6,
                label(r.pdr_generator_bound())
            ),
            lat(&r.ceiling.outcome),
            lat(&r.router.outcome),
        );
    }
    if p.rows.len() < PART2.len() {
        s += &format!("({} of {} traffics measured)\n", p.rows.len(), PART2.len());
    }
    s
}

/// The whole JSON report.
pub fn to_json(
    opts: &Options,
    found: &Found,
    mem: &Memory,
    p1: Option<&Part1>,
    p2: Option<&Part2>,
    pm: Option<&McastPart>,
    errors: &[String],
) -> Value {
    let mut v = json!({
        "benchmark": "e2e",
        "date": sysinfo::date_utc(),
        "quick": opts.quick,
        "machine": {
            "cpu": sysinfo::cpu_model(),
            "cpus": sysinfo::cpus(),
            "dpdk": found.dpdk_version,
            "testpmd": found.testpmd.display().to_string(),
            "pmds_dir": found.pmds_dir.display().to_string(),
            "rustc": sysinfo::rustc(),
            "build": sysinfo::build(),
        },
        "mode": mem.to_json(),
        "errors": errors,
    });
    if let Some(p) = p1 {
        v["part1"] = part1::to_json(p, opts);
        let (io, mac) = p.ratios("l3-64");
        v["l3_64_vs_io"] = json!(io);
        v["l3_64_vs_macswap"] = json!(mac);
    }
    if let Some(p) = p2 {
        v["part2"] = part2::to_json(p);
    }
    if let Some(p) = pm {
        v["mcast"] = mcast::to_json(p, opts);
        v["mcast_64_vs_ipv4_multicast"] = json!(p.ratio(64));
        v["mcast_1500_vs_ipv4_multicast"] = json!(p.ratio(1500));
        let cache = mcast::Forwarder::Ipv4MulticastCache;
        v["mcast_64_vs_ipv4_multicast_cache256"] = json!(p.ratio_to(64, cache));
        v["mcast_1500_vs_ipv4_multicast_cache256"] = json!(p.ratio_to(1500, cache));
    }
    v
}
