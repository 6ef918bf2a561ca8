//! The fabric scrape (docs/stats.md "The fabric scrape", docs/management.md
//! "Fabric performance manager"): the performance manager's snapshot as
//! one Prometheus text exposition (format 0.0.4) for the whole fabric,
//! served at `/fabric/metrics`. Each port's counters are the totals the
//! manager keeps across resets, under the names and help texts of the box's
//! own port families (`mwrouter_port_received_packets_total` is
//! `mwrouter_fabric_port_received_packets_total{node,address,port}`); every
//! node polled has `mwrouter_fabric_scrape_ok`, 0 while it does not answer
//! (its series stay, with the totals it last gave).

use std::fmt::Write as _;

use admin::stats::{escape_help, escape_label_value};
use mgmt::attr::{PortCounters, PortCountersExtended};
use mgmt::perfmgr::{FabricSnapshot, NodeSnapshot, PerfStats, PortSnapshot};
use rrp::PortStats;
use rrp::counters::{CounterSet, Kind};

/// `# HELP` and `# TYPE` of one family.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// One sample.
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{k}=\"{}\"", escape_label_value(v));
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// Where a port slot's value is in a port's snapshot.
fn value_of(slot: &str, p: &PortSnapshot) -> Option<u64> {
    if let Some(i) = PortCounters::NAMES.iter().position(|n| *n == slot) {
        return p.counters.get(i).copied();
    }
    let i = PortCountersExtended::NAMES
        .iter()
        .position(|n| *n == slot)?;
    p.extended.get(i).copied()
}

/// Milliseconds as decimal seconds, exactly.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The node's labels.
fn node_labels(n: &NodeSnapshot) -> (String, String) {
    (n.name.clone(), n.address.to_string())
}

/// The fabric scrape of `s`.
pub fn fabric_exposition(s: &FabricSnapshot) -> String {
    let mut out = String::new();
    let name = "mwrouter_fabric_sweep_duration_seconds";
    family(
        &mut out,
        name,
        "gauge",
        "How long the last finished sweep of the fabric took, from its start to its last answer or time-out.",
    );
    let last = s.last_sweep.as_ref();
    sample(
        &mut out,
        name,
        &[],
        seconds(last.map_or(0, |l| l.duration_ms)),
    );
    let name = "mwrouter_fabric_sweep_nodes";
    family(
        &mut out,
        name,
        "gauge",
        "Nodes the last finished sweep polled.",
    );
    sample(&mut out, name, &[], last.map_or(0, |l| l.nodes));
    let name = "mwrouter_fabric_scrape_ok";
    family(
        &mut out,
        name,
        "gauge",
        "1 when the node answered every poll of the last sweep that polled it, else 0 (its port series keep the totals it last gave).",
    );
    for n in &s.nodes {
        let (node, address) = node_labels(n);
        sample(
            &mut out,
            name,
            &[("node", &node), ("address", &address)],
            u8::from(n.ok),
        );
    }
    for f in PortStats::FIELDS {
        let metric = format!(
            "mwrouter_fabric_{}",
            f.metric(PortStats::PREFIX).trim_start_matches("mwrouter_")
        );
        let kind = match f.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        // (slot, the label's key and value when the field has one)
        let slots: Vec<(String, Option<(&str, &str)>)> = match f.labels {
            None => vec![(f.name.to_string(), None)],
            Some(l) => l
                .values
                .iter()
                .map(|v| (format!("{}.{v}", f.name), Some((l.key, *v))))
                .collect(),
        };
        let mut body = String::new();
        for n in &s.nodes {
            let (node, address) = node_labels(n);
            for p in &n.ports {
                let port = p.port.to_string();
                for (slot, extra) in &slots {
                    let Some(v) = value_of(slot, p) else {
                        continue;
                    };
                    let mut labels = vec![
                        ("node", node.as_str()),
                        ("address", address.as_str()),
                        ("port", port.as_str()),
                    ];
                    labels.extend(extra.iter().copied());
                    sample(&mut body, &metric, &labels, v);
                }
            }
        }
        if !body.is_empty() {
            family(&mut out, &metric, kind, f.help);
            out.push_str(&body);
        }
    }
    let name = "mwrouter_fabric_port_resets_total";
    let mut body = String::new();
    for n in &s.nodes {
        let (node, address) = node_labels(n);
        for p in &n.ports {
            let port = p.port.to_string();
            sample(
                &mut body,
                name,
                &[("node", &node), ("address", &address), ("port", &port)],
                p.resets,
            );
        }
    }
    if !body.is_empty() {
        family(
            &mut out,
            name,
            "counter",
            "Resets of the port's counters the performance manager saw (a counter read lower than before: a restarted node, a clear); the port's totals went on from where they were.",
        );
        out.push_str(&body);
    }
    let mut values = s.stats.slots().iter();
    for f in PerfStats::FIELDS {
        let name = f.metric(PerfStats::PREFIX);
        family(&mut out, &name, "counter", f.help);
        sample(&mut out, &name, &[], values.next().copied().unwrap_or(0));
    }
    out
}
