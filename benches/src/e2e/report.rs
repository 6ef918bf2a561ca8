//! The tables printed at the end, and the JSON report.

use serde_json::{Value, json};

use super::hugepages::Memory;
use super::mcast::{self, McastPart};
use super::ndr_with_mwgen::{self, GENERATOR_BOUND_LABEL, Part2};
use super::prereq::Found;
use super::scale::{self, ScalePart};
use super::single_core_throughput::{self, Forwarder, Part1};
use super::traffic::{PART1, PART2};
use super::{Options, PART1_WORKER_LCORE};
use crate::sysinfo;

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.prec$}"))
}

/// Part 1's tables: traffic x forwarder (Mpps), then mwrouterd's ratio to
/// each (the median of the rounds' ratios), then every round's ratios.
pub fn part1_table(p: &Part1) -> String {
    let rounds = p.runs.iter().map(|r| r.round + 1).max().unwrap_or(0);
    let mut s = format!(
        "Part 1: Mpps forwarded on one core (lcore {PART1_WORKER_LCORE}), net_pcap (infinite rx) -> net_null; \
         medians of {rounds} round(s); mwrouterd forwards MessageWay, the l3fwd peers IPv4 of the same sizes\n\
         {:<10}",
        "traffic"
    );
    for f in Forwarder::ALL {
        s += &format!(" {:>16}", f.name());
    }
    s.push('\n');
    for t in &PART1 {
        s += &format!("{:<10}", t.label);
        for f in Forwarder::ALL {
            let v = if f.applies(t.kind) {
                opt(p.mpps(t.name, f), 2)
            } else {
                "n/a".into()
            };
            s += &format!(" {v:>16}");
        }
        s.push('\n');
    }
    s += &format!(
        "\nmwrouterd / each (median of the rounds' side-by-side ratios)\n{:<10}",
        "traffic"
    );
    for f in Forwarder::PEERS {
        s += &format!(" {:>16}", format!("/{}", f.name()));
    }
    s.push('\n');
    for t in &PART1 {
        s += &format!("{:<10}", t.label);
        for f in Forwarder::PEERS {
            let v = if f.applies(t.kind) {
                opt(p.ratio_to(t.name, f), 2)
            } else {
                "n/a".into()
            };
            s += &format!(" {v:>16}");
        }
        s.push('\n');
    }
    s += "\nthe rounds' ratios, mwrouterd / each:\n";
    for t in &PART1 {
        let parts: Vec<String> = Forwarder::PEERS
            .iter()
            .filter(|f| f.applies(t.kind))
            .map(|&f| {
                let rr: Vec<String> = p
                    .round_ratios(t.name, f)
                    .iter()
                    .map(|r| format!("{r:.2}"))
                    .collect();
                format!("{} [{}]", f.key(), rr.join(" "))
            })
            .collect();
        s += &format!("  {:<10} {}\n", t.label, parts.join("  "));
    }
    if let Some(why) = &p.l3fwd_skipped {
        s += &format!("(the l3fwd peers did not run: {why})\n");
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

/// The parts that ran, for the report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Parts<'a> {
    /// Part 1.
    pub p1: Option<&'a Part1>,
    /// Part 2.
    pub p2: Option<&'a Part2>,
    /// The multicast part.
    pub mcast: Option<&'a McastPart>,
    /// The scaling part.
    pub scale: Option<&'a ScalePart>,
    /// The flood part: the NDR without the flood and the rounds.
    pub flood: Option<(f64, &'a [super::flood::Round])>,
}

/// The whole JSON report.
pub fn to_json(
    opts: &Options,
    found: &Found,
    mem: &Memory,
    parts: Parts<'_>,
    errors: &[String],
) -> Value {
    let Parts {
        p1,
        p2,
        mcast: pm,
        scale: ps,
        flood: pf,
    } = parts;
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
        v["part1"] = single_core_throughput::to_json(p, opts);
        for f in Forwarder::PEERS {
            v[format!("l3_64_vs_{}", f.key())] = json!(p.ratio_to("l3-64", f));
        }
        v["l2_64_vs_io"] = json!(p.ratio_to("l2-64", Forwarder::Io));
    }
    if let Some(p) = p2 {
        v["part2"] = ndr_with_mwgen::to_json(p);
    }
    if let (Some((ndr, rounds)), Some(fo)) = (pf, &opts.flood) {
        v["flood"] = super::flood::to_json(ndr, rounds, fo);
    }
    if let Some(p) = pm {
        v["mcast"] = mcast::to_json(p, opts);
        v["mcast_64_vs_ipv4_multicast"] = json!(p.ratio(64));
        v["mcast_1500_vs_ipv4_multicast"] = json!(p.ratio(1500));
        let cache = mcast::Forwarder::Ipv4MulticastCache;
        v["mcast_64_vs_ipv4_multicast_cache256"] = json!(p.ratio_to(64, cache));
        v["mcast_1500_vs_ipv4_multicast_cache256"] = json!(p.ratio_to(1500, cache));
    }
    if let Some(p) = ps {
        v["scale"] = scale::to_json(p, opts);
        v["scale_2_vs_1_workers"] = json!(p.ratio());
    }
    v
}
