//! DPDK's own L3 forwarders as Part 1's peers: `l3fwd` with its LPM and its
//! exact-match (EM, a hash of the 5-tuple) lookups, and `l3fwd-graph`
//! (DPDK's graph library: rx, classify, ip4 lookup, rewrite and tx nodes,
//! VPP-style, 256 packets per node call), built from Debian's `dpdk-doc`
//! sources ([`super::examples`]) and run on Part 1's vdevs on the worker
//! lcore, their counters read through telemetry.
//!
//! Adjustments (the notes on this machine, docs/performance.md "End to
//! end, against DPDK's L3 forwarders"):
//!
//! - l3fwd: `benches/l3fwd.patch` removes the port configuration's
//!   `RTE_ETH_RX_OFFLOAD_CHECKSUM` (the vdevs lack it), and it runs with
//!   `--parse-ptype` (the vdevs report no packet types). Its only lcore
//!   forwards: `-l 1`, both ports' queue 0 on lcore 1.
//! - l3fwd-graph: no source change. Its main lcore may not have a queue
//!   (it prints the graph's statistics), so `-l 0,1` with both queues on
//!   lcore 1; it sets up one transmit queue per lcore on every port, so the
//!   pcap port gets two transmit queues (`tx_pcap=/dev/null` twice; nothing
//!   is routed there).
//!
//! Each forwards the [`super::traffic::v4`] flow from port 0 (the pcap) to
//! port 1 (the null port) with its default routes.

use std::path::Path;

use serde_json::{Value, json};

use super::examples::{self, AppSpec, Built, Example};
use super::{Env, Result, path_str};

/// The adjustment to l3fwd (the reasons, then a unified diff against its
/// main.c), applied with `patch -p1`.
pub const PATCH: &str = include_str!("../../l3fwd.patch");

/// The peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// l3fwd, `--lookup=lpm`.
    Lpm,
    /// l3fwd, `--lookup=em`.
    Em,
    /// l3fwd-graph.
    Graph,
}

/// The two examples, once built.
#[derive(Debug, Clone)]
pub struct Builds {
    /// l3fwd (LPM and EM).
    pub l3fwd: Built,
    /// l3fwd-graph.
    pub graph: Built,
}

impl Builds {
    /// Builds both (or takes them from the build cache).
    pub fn build(env: &Env) -> Result<Builds> {
        let l3fwd = examples::build(
            env,
            &Example {
                name: "l3fwd",
                binary: "l3fwd",
                patches: vec![("l3fwd.patch", PATCH)],
                dir: "l3fwd-src",
            },
        )?;
        let graph = examples::build(
            env,
            &Example {
                name: "l3fwd-graph",
                binary: "l3fwd-graph",
                patches: Vec::new(),
                dir: "l3fwd-graph-src",
            },
        )?;
        Ok(Builds { l3fwd, graph })
    }

    /// The binary of `p`.
    pub fn of(&self, p: Peer) -> &Built {
        match p {
            Peer::Lpm | Peer::Em => &self.l3fwd,
            Peer::Graph => &self.graph,
        }
    }

    /// Every build step, both examples.
    pub fn steps(&self) -> Vec<String> {
        self.l3fwd
            .steps
            .iter()
            .chain(&self.graph.steps)
            .cloned()
            .collect()
    }
}

impl Peer {
    /// All of them.
    pub const ALL: [Peer; 3] = [Peer::Lpm, Peer::Em, Peer::Graph];

    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Lpm => "l3fwd-lpm",
            Peer::Em => "l3fwd-em",
            Peer::Graph => "l3fwd-graph",
        }
    }

    /// The vdevs: Part 1's, the pcap port with two transmit queues for
    /// l3fwd-graph.
    pub fn vdevs(self, pcap: &Path) -> Vec<String> {
        let rx = format!("net_pcap0,rx_pcap={},infinite_rx=1", path_str(pcap));
        let rx = match self {
            Peer::Graph => format!("{rx},tx_pcap=/dev/null,tx_pcap=/dev/null"),
            Peer::Lpm | Peer::Em => rx,
        };
        vec![rx, "net_null0,no-rx=1".to_string()]
    }

    /// How to start it: forwarding on `lcore` (l3fwd-graph's main lcore 0
    /// besides), `eal` the run's memory flags.
    pub fn spec(
        self,
        built: &Built,
        eal: &[String],
        lcore: u32,
        pcap: &Path,
        prefix: &str,
    ) -> AppSpec {
        let queues = format!("--config=(0,0,{lcore}),(1,0,{lcore})");
        let rules = |kind: &str, v: u8| {
            format!(
                "--rule_ipv{v}={}",
                path_str(&built.src.join(format!("{kind}_default_v{v}.cfg")))
            )
        };
        let (lcores, args) = match self {
            Peer::Lpm | Peer::Em => {
                let kind = if self == Peer::Lpm { "lpm" } else { "em" };
                (
                    lcore.to_string(),
                    vec![
                        "-p".into(),
                        "0x3".into(),
                        queues,
                        "-P".into(),
                        format!("--lookup={kind}"),
                        rules(kind, 4),
                        rules(kind, 6),
                        "--parse-ptype".into(),
                    ],
                )
            }
            Peer::Graph => (
                format!("0,{lcore}"),
                vec!["-p".into(), "0x3".into(), queues, "-P".into()],
            ),
        };
        AppSpec {
            name: self.name().into(),
            lcores,
            eal: eal.to_vec(),
            vdevs: self.vdevs(pcap),
            args,
            prefix: prefix.into(),
            ingress: 0,
        }
    }
}

/// One row of l3fwd-graph's statistics table (per node, on its worker).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeStats {
    /// The node (`ip4_lookup`, `ethdev_rx-0-0`, ...).
    pub node: String,
    /// Calls so far.
    pub calls: u64,
    /// Packets (objects) so far.
    pub objs: u64,
    /// Packets per call.
    pub objs_per_call: f64,
    /// TSC cycles per call.
    pub cycles_per_call: f64,
}

impl NodeStats {
    /// TSC cycles per packet.
    pub fn cycles_per_packet(&self) -> Option<f64> {
        (self.objs_per_call > 0.0).then(|| self.cycles_per_call / self.objs_per_call)
    }

    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({
            "node": self.node,
            "calls": self.calls,
            "objs": self.objs,
            "objs_per_call": self.objs_per_call,
            "cycles_per_call": self.cycles_per_call,
            "cycles_per_packet": self.cycles_per_packet(),
        })
    }
}

/// The last complete statistics table l3fwd-graph printed (it redraws one
/// every second: `|Node |calls |objs |realloc_count |objs/call
/// |objs/sec(10E6) |cycles/call|`).
pub fn parse_graph_stats(output: &str) -> Vec<NodeStats> {
    let mut tables: Vec<Vec<NodeStats>> = Vec::new();
    for line in output.lines() {
        if line.contains("|Node") {
            tables.push(Vec::new());
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // "", node, calls, objs, realloc, objs/call, objs/sec, cycles/call, ""
        if cells.len() < 8 || cells[1].is_empty() || cells[1].starts_with('-') {
            continue;
        }
        let (Some(t), Ok(calls), Ok(objs), Ok(opc), Ok(cpc)) = (
            tables.last_mut(),
            cells[2].parse::<u64>(),
            cells[3].parse::<u64>(),
            cells[5].parse::<f64>(),
            cells[7].parse::<f64>(),
        ) else {
            continue;
        };
        t.push(NodeStats {
            node: cells[1].to_string(),
            calls,
            objs,
            objs_per_call: opc,
            cycles_per_call: cpc,
        });
    }
    // The last table may be cut off by the end of the run.
    let n = tables.iter().map(Vec::len).max().unwrap_or(0);
    tables
        .into_iter()
        .rev()
        .find(|t| t.len() == n)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_removes_only_the_checksum_offload_request() {
        let changed = |sign: char, other: &str| -> Vec<&str> {
            PATCH
                .lines()
                .filter(|l| l.starts_with(sign) && !l.starts_with(other))
                .collect()
        };
        assert_eq!(
            changed('-', "---"),
            ["-\t\t.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,"]
        );
        assert!(changed('+', "+++").is_empty());
        assert!(PATCH.contains("--- a/main.c\n+++ b/main.c\n"));
    }

    #[test]
    fn command_lines_follow_the_notes() {
        let built = Built {
            bin: "/x/l3fwd".into(),
            src: "/w/l3fwd-src/l3fwd".into(),
            steps: Vec::new(),
            cached: false,
        };
        let pcap = Path::new("/w/l3-64-ipv4.pcap");
        let s = Peer::Em.spec(&built, &["--in-memory".into()], 1, pcap, "p");
        assert_eq!(s.lcores, "1");
        assert!(s.args.contains(&"--config=(0,0,1),(1,0,1)".to_string()));
        assert!(s.args.contains(&"--lookup=em".to_string()));
        assert!(
            s.args
                .contains(&"--rule_ipv4=/w/l3fwd-src/l3fwd/em_default_v4.cfg".to_string())
        );
        assert!(s.args.contains(&"--parse-ptype".to_string()));
        assert_eq!(s.vdevs[1], "net_null0,no-rx=1");
        let g = Peer::Graph.spec(&built, &[], 1, pcap, "p");
        assert_eq!(g.lcores, "0,1");
        assert!(g.vdevs[0].ends_with(",tx_pcap=/dev/null,tx_pcap=/dev/null"));
        assert!(!g.args.iter().any(|a| a.starts_with("--lookup")));
    }

    #[test]
    fn graph_stats_take_the_last_complete_table() {
        let out = "\
|Node                           |calls          |objs           |realloc_count  |objs/call      |objs/sec(10E6) |cycles/call|
+-------------------------------+---------------+---------------+---------------+---------------+---------------+-----------+
|ip4_lookup                     |162            |41472          |2              |256.000        |0.000004       |4856.0000  |
|ethdev_rx-0-0                  |162            |41472          |2              |256.000        |0.000004       |32709.0000 |
+-------------------------------+---------------+---------------+---------------+---------------+---------------+-----------+
\x1b[2J\x1b[1;1H+-------------------------------+
|Node                           |calls          |objs           |realloc_count  |objs/call      |objs/sec(10E6) |cycles/call|
+-------------------------------+---------------+---------------+---------------+---------------+---------------+-----------+
|ip4_lookup                     |38496          |9854976        |2              |256.000        |9.813504       |5120.0000  |
|ethdev_rx-0-0                  |38496          |9854976        |2              |256.000        |9.813504       |33882.0000 |
+-------------------------------+---------------+---------------+---------------+---------------+---------------+-----------+
|Node                           |calls          |objs           |realloc_count  |objs/call      |objs/sec(10E6) |cycles/call|
|ip4_lookup                     |40000          |10240000       |2              |256.000        |9.8            |5000.0000  |
";
        let t = parse_graph_stats(out);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].node, "ip4_lookup");
        assert_eq!(t[0].calls, 38496);
        assert_eq!(t[0].cycles_per_packet(), Some(20.0));
        assert_eq!(t[1].node, "ethdev_rx-0-0");
        assert!(parse_graph_stats("nothing").is_empty());
    }
}
