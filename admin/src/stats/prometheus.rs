//! The Prometheus text exposition (format 0.0.4) of a [`Snapshot`]. Metric
//! names: docs/stats.md.

use std::fmt::Write as _;

use rrp::PortStats;
use rrp::counters::{CounterSet, GroupStats, Kind, PartitionStats, WorkerStats};

use super::{PartitionSnapshot, Snapshot};

/// Escapes a `# HELP` text: backslash and line feed.
pub fn escape_help(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

/// Escapes a label value: backslash, double quote and line feed.
pub fn escape_label_value(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

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

/// Nanoseconds as decimal seconds, exactly.
fn seconds(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// The families of a counter set: for each field its `# HELP` (the field's
/// doc) and `# TYPE`, then one sample per row (a port, or the one row of a
/// box-wide set) and, for a field of counts, per label value.
fn families<T: CounterSet>(out: &mut String, rows: &[(Vec<(&str, String)>, &T)]) {
    let mut at = 0;
    for f in T::FIELDS {
        let name = f.metric(T::PREFIX);
        let kind = match f.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        family(out, &name, kind, f.help);
        for (labels, set) in rows {
            let mut l: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            match f.labels {
                None => sample(out, &name, &l, set.slots()[at]),
                Some(lv) => {
                    for (i, v) in lv.values.iter().enumerate() {
                        l.push((lv.key, v));
                        sample(out, &name, &l, set.slots()[at + i]);
                        l.pop();
                    }
                }
            }
        }
        at += f.slots();
    }
}

/// The Prometheus text exposition (`text/plain; version=0.0.4`) of a
/// snapshot: every counter as a `counter` family ending in `_total`, the
/// snapshot's own values (never less a [`super::Baseline`]: exported
/// counters stay monotonic across `clear counters`); a few gauges. Each
/// family has one `# HELP` and one `# TYPE` before its samples; every drop
/// reason and every refusal is present (zeros included). The families are
/// the counter sets' fields, in declaration order.
pub fn prometheus(s: &Snapshot) -> String {
    let mut out = String::with_capacity(8192 + s.ports.len() * 4096);

    let name = "mwrouter_start_time_seconds";
    family(
        &mut out,
        name,
        "gauge",
        "When mwrouterd created its stats area (UNIX time).",
    );
    sample(&mut out, name, &[], seconds(s.started_ns));
    let name = "mwrouter_stats_publish_time_seconds";
    family(
        &mut out,
        name,
        "gauge",
        "When the counters were last published (UNIX time; 0: not yet).",
    );
    sample(&mut out, name, &[], seconds(s.published_ns));

    let ports: Vec<(Vec<(&str, String)>, &PortStats)> = s
        .ports
        .iter()
        .map(|p| (vec![("port", p.port.to_string())], &p.stats))
        .collect();
    families(&mut out, &ports);
    families(&mut out, &[(Vec::new(), &s.rrp)]);
    families(&mut out, &[(Vec::new(), &s.plane)]);
    punt_sources(&mut out, &s.punt_sources);
    let workers: Vec<(Vec<(&str, String)>, &WorkerStats)> = s
        .workers
        .iter()
        .map(|w| (vec![("worker", w.worker.to_string())], &w.stats))
        .collect();
    families(&mut out, &workers);
    out
}

/// The heaviest punt sources (docs/stats.md "Heaviest sources"): two gauge
/// families, their packets for the box offered and dropped a second, one
/// sample per source labelled with its class, port and native address.
/// The families are present (with no sample) when no source sends.
fn punt_sources(out: &mut String, sources: &[rrp::PuntSource]) {
    let rows: Vec<(String, String, &rrp::PuntSource)> = sources
        .iter()
        .map(|s| (s.port.to_string(), s.source(), s))
        .collect();
    for (name, help, value) in [
        (
            "mwrouter_punt_source_offered_packets_per_second",
            "Packets for the box a second from one of the heaviest sources of a punt class, in the last full second.",
            (|s: &rrp::PuntSource| s.offered_per_s) as fn(&rrp::PuntSource) -> u64,
        ),
        (
            "mwrouter_punt_source_dropped_packets_per_second",
            "Of those, the packets dropped (over the source's share, the class's rate, or the class's ring full).",
            |s: &rrp::PuntSource| s.dropped_per_s,
        ),
    ] {
        family(out, name, "gauge", help);
        for (port, source, s) in &rows {
            sample(
                out,
                name,
                &[
                    ("class", s.class.name()),
                    ("port", port),
                    ("source", source),
                ],
                value(s),
            );
        }
    }
}

/// The in-band management families (docs/stats.md "Management"): the
/// agent's M_Key violations and the SAN managers' state, members and
/// transitions, from `show management`. Appended to [`prometheus`] by a box
/// that runs management.
pub fn management_exposition(m: &crate::view::ManagementInfo) -> String {
    let mut out = String::new();
    let name = "mwrouter_mgmt_mkey_violations_total";
    family(
        &mut out,
        name,
        "counter",
        "Management requests that failed the M_Key check (M_KeyViolations).",
    );
    sample(&mut out, name, &[], m.violations);
    if m.managers.is_empty() {
        return out;
    }
    let rows: Vec<(String, &crate::view::ManagerRow)> =
        m.managers.iter().map(|r| (r.hr.to_string(), r)).collect();
    let name = "mwrouter_san_manager_state";
    family(
        &mut out,
        name,
        "gauge",
        "The SAN manager's state on an HR: 0 not active, 1 discovering, 2 standby, 3 master.",
    );
    for (hr, r) in &rows {
        let v = match r.state.as_str() {
            "discovering" => 1,
            "standby" => 2,
            "master" => 3,
            _ => 0,
        };
        sample(&mut out, name, &[("hr", hr)], v);
    }
    let name = "mwrouter_san_manager_members";
    family(
        &mut out,
        name,
        "gauge",
        "Members in the SAN manager's database (a master's; 0 otherwise).",
    );
    for (hr, r) in &rows {
        sample(&mut out, name, &[("hr", hr)], r.members.len());
    }
    let name = "mwrouter_san_manager_transitions_total";
    family(
        &mut out,
        name,
        "counter",
        "State transitions of the SAN manager.",
    );
    for (hr, r) in &rows {
        let v = r.counters.get("transitions").copied().unwrap_or(0);
        sample(&mut out, name, &[("hr", hr)], v);
    }
    out
}

/// The multicast families (docs/stats.md "Multicast"): per group, its
/// member SANs and its counters, from `show mcast`. Appended to
/// [`prometheus`] by a box that forwards group packets; nothing when there
/// is no group.
pub fn mcast_exposition(m: &crate::view::McastInfo) -> String {
    let mut out = String::new();
    if m.groups.is_empty() {
        return out;
    }
    let rows: Vec<(String, &crate::view::McastRow)> =
        m.groups.iter().map(|g| (g.group.to_string(), g)).collect();
    let name = "mwrouter_mcast_member_sans";
    family(
        &mut out,
        name,
        "gauge",
        "SANs with members of the group, as this box knows them.",
    );
    for (g, r) in &rows {
        sample(&mut out, name, &[("group", g)], r.member_sans.len());
    }
    let groups: Vec<(Vec<(&str, String)>, &GroupStats)> = rows
        .iter()
        .map(|(g, r)| (vec![("group", g.clone())], &r.counters))
        .collect();
    families(&mut out, &groups);
    out
}

/// The partitions' family (docs/stats.md "Partitions"): per partition key
/// and ingress port, the packets the partitions refused there
/// (docs/partitions.md "At the routers"), a snapshot's
/// [`Snapshot::partitions`]; the pairs the workers had no slot for as
/// `key="other"`, shown only when not zero. Appended to [`prometheus`];
/// nothing before a first refusal.
pub fn partition_exposition(rows: &[PartitionSnapshot]) -> String {
    let mut out = String::new();
    let rows: Vec<(Vec<(&str, String)>, &PartitionStats)> = rows
        .iter()
        .filter(|p| p.tag.is_some() || p.stats.dropped != 0)
        .map(|p| {
            let port = p
                .tag
                .map_or("other".to_string(), |(_, port)| port.to_string());
            (vec![("key", p.key_text()), ("port", port)], &p.stats)
        })
        .collect();
    if !rows.is_empty() {
        families(&mut out, &rows);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::PortId;

    #[test]
    fn partitions_by_key_and_port() {
        let c = |tag, n| PartitionSnapshot::new(tag, PartitionStats { dropped: n });
        assert_eq!(partition_exposition(&[c(None, 0)]), "");
        let text = partition_exposition(&[c(Some((0x10, PortId(2))), 3), c(None, 1)]);
        assert!(text.contains("# TYPE mwrouter_partition_dropped_packets_total counter"));
        assert!(
            text.contains("mwrouter_partition_dropped_packets_total{key=\"0x0010\",port=\"2\"} 3"),
            "{text}"
        );
        assert!(text.contains("{key=\"other\",port=\"other\"} 1"), "{text}");
    }

    #[test]
    fn escapes() {
        assert_eq!(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(escape_help("a\\b\"c\nd"), "a\\\\b\"c\\nd");
        assert_eq!(seconds(1_500_000_001), "1.500000001");
    }
}
