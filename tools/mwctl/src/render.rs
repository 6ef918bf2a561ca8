//! The human rendering of each command's answer: the columns of the
//! tables an operator reads often (kept within 80 columns; `--json` has
//! every field, under the same names) and the layouts of counters, routes,
//! stats, multicast and management.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use admin::mad::MadAnswer;
use admin::proto::{
    Clear, Command, HistoryEntry, ReloadAnswer, RouteOp, Show, StatsFormat, WriteAnswer,
};
use admin::view::{CounterRow, ManagementInfo, McastInfo, PuntInfo, RouteLookup, Stats, WorkerRow};
use serde_json::Value;

use crate::table::{Table, cell, generic, objects_table_only};

const HRS: &[&str] = &[
    "port", "hr", "san", "mtu", "cost", "native", "up", "lrt", "buddies", "rts",
];
const PORTS: &[&str] = &[
    "port",
    "name",
    "backend",
    "receive",
    "hr",
    "up",
    "native",
    "mtu",
    "received",
    "transmitted",
    "dropped",
    "strangers",
    "rx_bytes",
    "tx_bytes",
    "rx_lost",
    "tx_lost",
];
const LRT: &[&str] = &[
    "port", "hr", "address", "name", "native", "static", "router", "missed", "logical",
];
const RTS: &[&str] = &[
    "port", "hr", "san", "sn", "q", "mtu", "origin", "rcvf", "csr", "nodes",
];
/// `show routes`: the HR is the port's (`show hrs`), the path is in `show
/// route ADDR` and `--json`.
const ROUTES: &[&str] = &["port", "dst", "q", "mtu", "next", "rcvf"];
const FIB: &[&str] = &["port", "hr", "dst", "next", "egress", "native", "q", "mtu"];
const NEIGHBORS: &[&str] = &["port", "hr", "address", "name", "native", "missed", "rts"];
const ROUTER: &[&str] = &[
    "name",
    "version",
    "uptime_s",
    "hrs",
    "router_cost",
    "k",
    "fib_version",
    "known_sans",
    "lrt_nodes",
    "rts_kept",
    "standing",
    "standing_changes",
];

/// The human rendering of the answer to `cmd`.
pub fn render(cmd: &Command, v: &Value) -> String {
    match cmd {
        Command::Show(s) => match s {
            Show::Router {} => generic(v, ROUTER),
            Show::Config {} => v["toml"]
                .as_str()
                .map_or_else(|| generic(v, &[]), str::to_string),
            Show::Hrs {} => generic(v, HRS),
            Show::Ports {} => generic(v, PORTS),
            Show::Lrt { .. } => generic(v, LRT),
            Show::Rts { .. } => generic(v, RTS),
            Show::Routes { .. } => only(v, ROUTES),
            Show::Fib { .. } => generic(v, FIB),
            Show::Neighbors { .. } => only(v, NEIGHBORS),
            Show::Counters { .. } => match serde_json::from_value::<Vec<CounterRow>>(v.clone()) {
                Ok(rows) => counters(&rows),
                Err(_) => generic(v, &[]),
            },
            Show::Route { .. } => match serde_json::from_value::<RouteLookup>(v.clone()) {
                Ok(l) => route_lookup(&l),
                Err(_) => generic(v, &[]),
            },
            Show::Management {} => match serde_json::from_value::<ManagementInfo>(v.clone()) {
                Ok(m) => management(&m),
                Err(_) => generic(v, &[]),
            },
            Show::Mcast {} => match serde_json::from_value::<McastInfo>(v.clone()) {
                Ok(m) => mcast(&m),
                Err(_) => generic(v, &[]),
            },
            Show::Workers {} => match serde_json::from_value::<Vec<WorkerRow>>(v.clone()) {
                Ok(w) => workers(&w),
                Err(_) => generic(v, &[]),
            },
            Show::Punt {} => match serde_json::from_value::<PuntInfo>(v.clone()) {
                Ok(p) => punt(&p),
                Err(_) => generic(v, &[]),
            },
        },
        Command::Mad(_) => match serde_json::from_value::<MadAnswer>(v.clone()) {
            Ok(a) => crate::mad::render_answer(&a),
            Err(_) => generic(v, &[]),
        },
        Command::Stats {
            format: StatsFormat::Prometheus,
        } => v["text"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| generic(v, &[])),
        Command::Stats { .. } => match serde_json::from_value::<Stats>(v.clone()) {
            Ok(s) => stats(&s, None),
            Err(_) => generic(v, &[]),
        },
        Command::Version {} => match (v["daemon"].as_str(), v["protocol"].as_u64()) {
            (Some(d), Some(p)) => format!(
                "mwrouterd {d} (admin protocol {p})\nmwctl {} (admin protocol {})\n",
                env!("CARGO_PKG_VERSION"),
                admin::proto::PROTOCOL_VERSION
            ),
            _ => generic(v, &[]),
        },
        Command::Port { port, state } => match (v["port"].as_u64(), v["hr"].as_str()) {
            (Some(p), Some(hr)) => format!(
                "port {p} (HR {hr}) is {}\n",
                v["state"].as_str().unwrap_or(match state {
                    admin::proto::PortState::Up => "up",
                    admin::proto::PortState::Down => "down",
                })
            ),
            _ => format!("port {port}: done\n"),
        },
        Command::Route(op) => {
            let (what, dst, port) = match op {
                RouteOp::Add { dst, port, .. } => {
                    if v["replaced"].as_bool() == Some(true) {
                        ("replaced", dst, port)
                    } else {
                        ("added", dst, port)
                    }
                }
                RouteOp::Del { dst, port } => ("removed", dst, port),
            };
            format!("static entry {dst} on port {port} {what}\n")
        }
        Command::Clear(Clear::Counters { .. }) => match v["cleared"].as_array() {
            Some(p) => format!(
                "counters cleared (port {})\n",
                p.iter().map(cell).collect::<Vec<_>>().join(", ")
            ),
            None => "counters cleared\n".into(),
        },
        Command::LogLevel { level } => match v["previous"].as_str() {
            Some(prev) => format!("log level {} (was {prev})\n", level.name()),
            None => format!("log level {}\n", level.name()),
        },
        Command::Drain { .. } => format!(
            "draining: routes advertised at the largest cost; stopping once forwarding is quiet \
             (at most {} ms)\n",
            cell(&v["timeout_ms"])
        ),
        Command::Reload(_) | Command::Rollback { .. } | Command::Commit {} => {
            match serde_json::from_value::<ReloadAnswer>(v.clone()) {
                Ok(a) => reload_answer(cmd, &a),
                Err(_) => generic(v, &[]),
            }
        }
        Command::History {} => match serde_json::from_value::<Vec<HistoryEntry>>(v.clone()) {
            Ok(h) => history(&h),
            Err(_) => generic(v, &[]),
        },
        Command::Write { .. } => match serde_json::from_value::<WriteAnswer>(v.clone()) {
            Ok(w) => {
                let mut s = format!("running configuration written to {}", w.file);
                if let Some(b) = &w.backup {
                    let _ = write!(s, " (the previous one kept as {b})");
                }
                s.push('\n');
                for r in &w.runtime {
                    let _ = writeln!(s, "  run-time change saved: {r}");
                }
                s
            }
            Err(_) => generic(v, &[]),
        },
        Command::Capture { .. } => generic(v, &["captured", "lost", "ended", "drops"]),
        Command::TracePackets { .. } => generic(v, &["recorded", "requested", "lost", "ended"]),
    }
}

fn num(n: u64) -> String {
    n.to_string()
}

/// `show workers`: two tables within 80 columns, in the manner of VPP's
/// `show runtime`: the packets of each worker, then where its cycles went
/// (busy share, cycles per packet, average burst, idle passes).
pub fn workers(rows: &[WorkerRow]) -> String {
    if rows.is_empty() {
        return "(none)\n".into();
    }
    let mut t = Table::new(&[
        "worker",
        "core",
        "receives",
        "received",
        "transmitted",
        "dropped",
    ]);
    t.right = vec![true, true, false, true, true, true];
    for w in rows {
        t.row(vec![
            num(w.worker as u64),
            w.core.map_or_else(|| "-".to_string(), |c| c.to_string()),
            w.receives
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            num(w.stats.received),
            num(w.stats.transmitted),
            num(w.stats.dropped),
        ]);
    }
    let mut c = Table::new(&[
        "worker",
        "busy_%",
        "cycles/pkt",
        "burst",
        "polls",
        "idle_polls",
        "mhz",
    ]);
    c.right = vec![true; 7];
    for w in rows {
        c.row(vec![
            num(w.worker as u64),
            format!("{:.1}", w.busy_percent),
            format!("{:.1}", w.cycles_per_packet),
            format!("{:.1}", w.average_burst),
            num(w.stats.polls),
            num(w.stats.idle_polls),
            num(w.stats.tsc_hz / 1_000_000),
        ]);
    }
    let mut out = t.render();
    out.push('\n');
    out.push_str(&c.render());
    out
}

/// `show punt`: each class's budget and its packets on each port (the
/// ports where it had none left out), then the heaviest sources now.
pub fn punt(p: &PuntInfo) -> String {
    let mut t = Table::new(&[
        "class",
        "per_s",
        "burst",
        "port",
        "punted",
        "over_rate",
        "ring_full",
        "over_share",
    ]);
    t.right = vec![false, true, true, true, true, true, true, true];
    for c in rrp::PuntClass::ALL {
        let b = p.budgets.map(|b| b.of(c));
        let rows: Vec<&admin::view::PuntRow> = p
            .classes
            .iter()
            .filter(|r| r.class == c.name())
            .filter(|r| r.punted + r.over_rate + r.ring_full + r.over_share > 0)
            .collect();
        let budget = |f: fn(rrp::PuntBudget) -> u64| {
            b.map_or_else(String::new, |b| match f(b) {
                0 => "unlimited".to_string(),
                n => num(n),
            })
        };
        if rows.is_empty() {
            t.row(vec![
                c.name().to_string(),
                budget(|b| b.per_s),
                budget(|b| b.burst.max(1)),
                "-".into(),
                num(0),
                num(0),
                num(0),
                num(0),
            ]);
        }
        for (i, r) in rows.iter().enumerate() {
            let first = i == 0;
            t.row(vec![
                if first {
                    c.name().to_string()
                } else {
                    String::new()
                },
                if first {
                    budget(|b| b.per_s)
                } else {
                    String::new()
                },
                if first {
                    budget(|b| b.burst.max(1))
                } else {
                    String::new()
                },
                num(u64::from(r.port.0)),
                num(r.punted),
                num(r.over_rate),
                num(r.ring_full),
                num(r.over_share),
            ]);
        }
    }
    let mut out = t.render();
    if p.sources.is_empty() {
        out.push_str("\nno source sends packets for the box now\n");
        return out;
    }
    let mut s = Table::new(&["class", "port", "source", "offered_per_s", "dropped_per_s"]);
    s.right = vec![false, true, false, true, true];
    for x in &p.sources {
        s.row(vec![
            x.class.name().to_string(),
            num(u64::from(x.port.0)),
            x.source(),
            num(x.offered_per_s),
            num(x.dropped_per_s),
        ]);
    }
    out.push_str("\nheaviest sources now\n");
    out.push_str(&s.render());
    out
}

/// `show counters`: one row per port, then drops by reason (the reasons
/// that occurred).
pub fn counters(rows: &[CounterRow]) -> String {
    // Four tables, each within 80 columns: traffic, what the control
    // plane sent and was told, the link's own losses and its bytes
    // (docs/stats.md "The link's counters").
    let mut t = Table::new(&[
        "port",
        "received",
        "forwarded",
        "punted",
        "dropped",
        "transmitted",
        "rx_errors",
    ]);
    t.right = vec![true; t.headers.len()];
    let mut c = Table::new(&[
        "port",
        "injected",
        "inject_failed",
        "notices",
        "notices_dropped",
        "strangers",
    ]);
    c.right = vec![true; c.headers.len()];
    let mut l = Table::new(&[
        "port",
        "rx_missed",
        "rx_no_buffer",
        "rx_link_errors",
        "tx_link_errors",
    ]);
    l.right = vec![true; l.headers.len()];
    let mut b = Table::new(&["port", "rx_bytes", "tx_bytes"]);
    b.right = vec![true; b.headers.len()];
    for r in rows {
        t.row(vec![
            num(u64::from(r.port.0)),
            num(r.received),
            num(r.forwarded),
            num(r.punted),
            num(r.dropped_total()),
            num(r.transmitted),
            num(r.rx_errors),
        ]);
        c.row(vec![
            num(u64::from(r.port.0)),
            num(r.injected),
            num(r.inject_failed),
            num(r.notices),
            num(r.notices_dropped),
            num(r.strangers),
        ]);
        l.row(vec![
            num(u64::from(r.port.0)),
            num(r.rx_missed),
            num(r.rx_no_buffer),
            num(r.rx_link_errors),
            num(r.tx_link_errors),
        ]);
        b.row(vec![
            num(u64::from(r.port.0)),
            num(r.rx_bytes),
            num(r.tx_bytes),
        ]);
    }
    let mut out = t.render();
    out.push('\n');
    out.push_str(&c.render());
    out.push('\n');
    out.push_str(&l.render());
    out.push('\n');
    out.push_str(&b.render());
    // Reasons in the order the daemon gives them (first row), then others.
    let drops: Vec<BTreeMap<String, u64>> = rows.iter().map(CounterRow::drops).collect();
    let mut reasons: Vec<&String> = Vec::new();
    for d in &drops {
        for (k, n) in d {
            if *n > 0 && !reasons.contains(&k) {
                reasons.push(k);
            }
        }
    }
    if reasons.is_empty() {
        out.push_str("\nno drops\n");
        return out;
    }
    let mut heads: Vec<String> = vec!["drops by reason".into()];
    heads.extend(rows.iter().map(|r| format!("port {}", r.port)));
    let mut d = Table {
        right: (0..heads.len()).map(|i| i > 0).collect(),
        headers: heads,
        rows: Vec::new(),
    };
    for k in reasons {
        let mut row = vec![k.clone()];
        row.extend(drops.iter().map(|d| num(d.get(k).copied().unwrap_or(0))));
        d.row(row);
    }
    out.push('\n');
    out.push_str(&d.render());
    out
}

fn mtu(m: Option<u32>) -> String {
    match m {
        None => "-".into(),
        Some(0) => "unlimited".into(),
        Some(m) => m.to_string(),
    }
}

fn join<T: ToString>(v: &[T], empty: &str) -> String {
    if v.is_empty() {
        empty.into()
    } else {
        v.iter().map(T::to_string).collect::<Vec<_>>().join(" ")
    }
}

/// `show route ADDR`: per ingress HR, the decision, path, Q, MTU, RCVF, and
/// the other routes.
pub fn route_lookup(l: &RouteLookup) -> String {
    let mut s = format!("route to {}\n", l.dst);
    for x in &l.lookups {
        let _ = write!(s, "  from port {} (HR {}): ", x.port, x.hr);
        match x.result.as_str() {
            "forward" => {
                let _ = write!(
                    s,
                    "forward out of port {}",
                    x.egress.map_or("?".into(), |p| num_u16(p.0))
                );
                if let Some(h) = x.egress_hr {
                    let _ = write!(s, " (HR {h})");
                }
                if !x.next_hop.is_empty() {
                    let _ = write!(s, " to {}", x.next_hop);
                }
                s.push('\n');
            }
            "local" => s.push_str("local (this box)\n"),
            "no_route" => {
                s.push_str("no route (dropped, ERR UNK to the source)\n");
                continue;
            }
            other => {
                let _ = writeln!(s, "{other}");
            }
        }
        let _ = writeln!(
            s,
            "    Q {}  MTU {}  RCVF {}",
            x.q.map_or("-".into(), |q| q.to_string()),
            mtu(x.mtu),
            join(&x.rcvf, "-")
        );
        let _ = writeln!(s, "    path {}", join(&x.path, "(direct)"));
        if !x.alternatives.is_empty() {
            s.push_str("    other routes:\n");
            let mut t = Table::new(&["Q", "MTU", "next", "path", "RCVF"]);
            t.right = vec![true, true, false, false, false];
            for a in &x.alternatives {
                t.row(vec![
                    a.q.to_string(),
                    mtu(Some(a.mtu)),
                    a.next.clone(),
                    join(&a.path, "(direct)"),
                    join(&a.rcvf, "-"),
                ]);
            }
            for line in t.render().lines() {
                let _ = writeln!(s, "      {line}");
            }
        }
    }
    s
}

fn num_u16(n: u16) -> String {
    n.to_string()
}

/// `stats`: per-port totals (with rates against `prev`, taken `secs`
/// earlier), then the control plane's counters.
pub fn stats(st: &Stats, prev: Option<(&Stats, f64)>) -> String {
    let mut s = format!("uptime {} s\n", st.uptime_s);
    let mut heads = vec![
        "port",
        "received",
        "forwarded",
        "punted",
        "dropped",
        "transmitted",
    ];
    if prev.is_some() {
        heads.extend(["rx/s", "fwd/s", "drop/s", "tx/s"]);
    }
    let mut t = Table::new(&heads);
    t.right = vec![true; heads.len()];
    for r in &st.ports {
        let mut row = vec![
            num(u64::from(r.port.0)),
            num(r.received),
            num(r.forwarded),
            num(r.punted),
            num(r.dropped_total()),
            num(r.transmitted),
        ];
        if let Some((p, secs)) = prev {
            let old = p.ports.iter().find(|o| o.port == r.port);
            let rate = |f: fn(&CounterRow) -> u64| -> String {
                match old {
                    Some(o) if secs > 0.0 => {
                        format!("{:.0}", f(r).saturating_sub(f(o)) as f64 / secs)
                    }
                    _ => "-".into(),
                }
            };
            row.push(rate(|c| c.received));
            row.push(rate(|c| c.forwarded));
            row.push(rate(|c| c.dropped_total()));
            row.push(rate(|c| c.transmitted));
        }
        t.row(row);
    }
    s.push_str(&t.render());
    s.push_str(&partition_drops(st, prev));
    if !st.plane.is_empty() {
        s.push_str("\ncontrol plane\n");
        let w = st.plane.keys().map(String::len).max().unwrap_or(0);
        for (k, v) in &st.plane {
            let _ = writeln!(s, "  {k:w$}  {v}");
        }
    }
    s
}

/// `stats`' packets refused per partition key and ingress port (with a
/// rate against `prev`, taken `secs` before), after the port table;
/// nothing when no partition refused a packet.
fn partition_drops(st: &Stats, prev: Option<(&Stats, f64)>) -> String {
    if st.partitions.is_empty() {
        return String::new();
    }
    let mut heads = vec!["key", "port", "dropped"];
    if prev.is_some() {
        heads.push("drop/s");
    }
    let mut t = Table::new(&heads);
    t.right = vec![false, true, true, true];
    for r in &st.partitions {
        let mut row = vec![
            r.key.clone(),
            r.port.map_or("-".into(), |p| num(u64::from(p.0))),
            num(r.dropped),
        ];
        if let Some((p, secs)) = prev {
            let old = p
                .partitions
                .iter()
                .find(|o| o.key == r.key && o.port == r.port)
                .map_or(0, |o| o.dropped);
            row.push(if secs > 0.0 {
                format!("{:.0}", r.dropped.saturating_sub(old) as f64 / secs)
            } else {
                "-".into()
            });
        }
        t.row(row);
    }
    format!("\npartition drops\n{}", t.render())
}

/// `show mcast`: one line per group, in 80 columns.
pub fn mcast(m: &McastInfo) -> String {
    let mut out = String::new();
    if m.groups.is_empty() {
        let _ = writeln!(out, "no group has members");
        return out;
    }
    let mut t = Table::new(&[
        "group",
        "member SANs",
        "branches",
        "packets",
        "copies",
        "mtu",
        "failed",
    ]);
    let list = |v: &[u16]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter().map(u16::to_string).collect::<Vec<_>>().join(",")
        }
    };
    for g in &m.groups {
        let sans: Vec<String> = g.member_sans.iter().map(|a| a.to_string()).collect();
        t.row(vec![
            g.group.to_string(),
            sans.join(","),
            list(&g.branches),
            g.counters.packets.to_string(),
            g.counters.copies.to_string(),
            g.counters.branch_mtu.to_string(),
            g.counters.copy_failed.to_string(),
        ]);
    }
    let _ = write!(out, "{}", t.render());
    let _ = writeln!(
        out,
        "{} groups; reverse path known for {} SANs, {} sources",
        m.groups.len(),
        m.source_sans,
        m.sources
    );
    out
}

/// `show management`: the agent's state, its counters (those not 0), the
/// notices received.
pub fn management(m: &ManagementInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "identity     {}", m.identity);
    let _ = writeln!(out, "description  {}", m.description);
    let _ = writeln!(
        out,
        "manager      {}",
        m.manager
            .map_or_else(|| "- (no traps)".to_string(), |a| a.to_string())
    );
    let lease = match (m.lease_s, m.lease_left_ms) {
        (0, _) => "never runs out".to_string(),
        (s, None) => format!("{s} s"),
        (s, Some(left)) => format!("{s} s, running: {} s left", left.div_ceil(1000)),
    };
    let _ = writeln!(
        out,
        "M_Key        {}, protect {}, lease {lease}, violations {}",
        if m.mkey_set { "set" } else { "none" },
        m.protect,
        m.violations
    );
    for (title, c) in [("agent", &m.agent), ("client", &m.client)] {
        let busy: Vec<String> = c
            .iter()
            .filter(|(_, v)| **v > 0)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(
            out,
            "{title:12} {}",
            if busy.is_empty() {
                "-".to_string()
            } else {
                busy.join(" ")
            }
        );
    }
    if !m.managers.is_empty() {
        out.push_str("\nSAN managers:\n");
        out.push_str(&crate::san::managers_table(&m.managers));
    }
    if !m.subscribers.is_empty() {
        out.push_str("\nsubscribed to this node's traps:\n");
        for x in &m.subscribers {
            let _ = writeln!(
                out,
                "{} to {} ({} s left)",
                x.subscriber,
                x.trap.map_or("every trap".into(), |t| format!("trap {t}")),
                x.lease_left_s
            );
        }
    }
    if m.notices.is_empty() {
        out.push_str("\nno notices received\n");
    } else {
        let mut t = Table::new(&["age_s", "issuer", "trap", "summary"]);
        t.right[0] = true;
        for n in &m.notices {
            t.row(vec![
                (n.age_ms / 1000).to_string(),
                n.issuer.to_string(),
                n.trap.to_string(),
                n.summary.clone(),
            ]);
        }
        let _ = write!(out, "\nnotices received:\n{}", t.render());
    }
    out
}

/// [`generic`] for an array of objects shown by [`objects_table_only`].
fn only(v: &Value, cols: &[&str]) -> String {
    match v {
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_object) => {
            objects_table_only(a, cols).render()
        }
        _ => generic(v, cols),
    }
}

/// `reload`, `rollback`, `commit`: the plan in three parts, then what was
/// done.
fn reload_answer(cmd: &Command, a: &ReloadAnswer) -> String {
    let mut s = String::new();
    let dry = matches!(cmd, Command::Reload(r) if r.dry_run);
    match cmd {
        Command::Commit {} => {
            let _ = writeln!(s, "generation {} committed", a.generation);
            return s;
        }
        _ if dry => s.push_str("plan (nothing applied):\n"),
        Command::Rollback { .. } => {
            let _ = writeln!(s, "rolled back: now generation {}", a.generation);
        }
        _ => {
            let _ = writeln!(s, "configuration reloaded: generation {}", a.generation);
        }
    }
    let part = |s: &mut String, title: &str, v: &[String]| {
        if !v.is_empty() {
            let _ = writeln!(s, "{title}:");
            for x in v {
                let _ = writeln!(s, "  {x}");
            }
        }
    };
    if a.changes.is_empty() && (dry || a.applied) {
        s.push_str("changes live: none\n");
    }
    part(&mut s, "changes live", &a.changes);
    part(&mut s, "needs a restart (refused)", &a.restart);
    let dropped = if a.applied {
        "run-time changes dropped"
    } else {
        "run-time changes dropped (needs --force)"
    };
    part(&mut s, dropped, &a.dropped);
    part(&mut s, "not taken", &a.warnings);
    if let Some(c) = a.confirm_within_s {
        let _ = writeln!(
            s,
            "confirm with `mwctl commit` within {c} s, or the previous configuration returns"
        );
    }
    s
}

/// `history`: one block per kept configuration, newest first.
fn history(h: &[HistoryEntry]) -> String {
    let mut s = String::new();
    for e in h {
        let _ = writeln!(
            s,
            "{:<11} generation {} applied {} by {}: {}{}",
            if e.back == 0 {
                "running".to_string()
            } else {
                format!("rollback {}", e.back)
            },
            e.generation,
            crate::discover_html::utc_text(e.applied_unix_s),
            e.by,
            e.how,
            if e.pending { " [waits for commit]" } else { "" }
        );
        for c in &e.changes {
            let _ = writeln!(s, "    {c}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every line of `text` fits an 80-column terminal.
    fn fits_80(what: &str, text: &str) {
        for l in text.lines() {
            assert!(
                l.chars().count() <= 80,
                "{what}: {} columns:\n{text}",
                l.chars().count()
            );
        }
    }

    #[test]
    fn routes_and_neighbors_fit_80_columns_with_json_names() {
        // As the Appendix B lab answers: UDP natives, a three-HR RCVF.
        let routes = json!([
            {"dst": "0x0108", "hr": "0x0119", "mtu": 1468, "next": "port 1 -> 127.0.0.1:32685",
             "path": ["0x011a@127.0.0.1:32685", "0x0122@127.0.0.1:32695"], "port": 0, "q": 4,
             "rcvf": ["0x011a", "0x0121", "0x0122"]},
            {"dst": "0x0101", "hr": "0x0119", "mtu": 1500, "next": "port 0 -> 127.0.0.1:32688",
             "path": ["@127.0.0.1:32688"], "port": 15, "q": 65535, "rcvf": []},
            {"dst": "0x0230", "hr": "0x0120", "mtu": 9000, "next": "port 12 -> 02:00:00:00:02:30",
             "path": ["@02:00:00:00:02:30"], "port": 12, "q": 12,
             "rcvf": ["0x011a", "0x0121", "0x0122"]}
        ]);
        let cmd = Command::Show(Show::Routes { port: None });
        let out = render(&cmd, &routes);
        fits_80("show routes", &out);
        let head: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(head, ROUTES);
        for h in head {
            assert!(routes[0].get(h).is_some(), "{h} is a field of --json");
        }
        assert!(out.contains("0x011a 0x0121 0x0122"), "{out}");
        let neighbors = json!([
            {"address": "0x011c", "hr": "0x011a", "missed": 1, "name": "bd1/1",
             "native": "[fe80::1234:5678:9abc:def0]:34997", "port": 1, "rts": 16384}
        ]);
        let out = render(&Command::Show(Show::Neighbors { port: None }), &neighbors);
        fits_80("show neighbors", &out);
        assert_eq!(
            out.lines()
                .next()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>(),
            NEIGHBORS
        );
    }

    #[test]
    fn counters_fit_80_columns_with_json_names() {
        let big = 9_876_543_210u64;
        let rows: Vec<CounterRow> = (0..4u16)
            .map(|p| {
                let mut stats = rrp::PortStats {
                    received: big,
                    rx_errors: big,
                    forwarded: big,
                    punted: big,
                    transmitted: big,
                    injected: big,
                    inject_failed: big,
                    notices: big,
                    notices_dropped: big,
                    strangers: big,
                    rx_bytes: big * 1000,
                    tx_bytes: big * 1000,
                    rx_missed: big,
                    rx_no_buffer: big,
                    rx_link_errors: big,
                    tx_link_errors: big,
                    ..rrp::PortStats::default()
                };
                stats.dropped[rrp::DropReason::NoRoute] = big;
                stats.dropped[rrp::DropReason::Mtu] = 3;
                CounterRow {
                    port: rrp::PortId(p),
                    stats,
                }
            })
            .collect();
        let out = counters(&rows);
        fits_80("show counters", &out);
        let json = serde_json::to_value(&rows[0]).unwrap();
        // The four tables of counters (the fifth is drops by reason).
        for block in out.split("\n\n").take(4) {
            let head = block.lines().next().unwrap();
            for h in head.split_whitespace() {
                assert!(json.get(h).is_some(), "{h} is a field of --json: {json}");
            }
        }
        assert!(out.contains("no-route"), "{out}");
    }

    #[test]
    fn punt_shows_the_budgets_the_busy_classes_and_the_heaviest_sources() {
        use rrp::{LinkKind, NativeAddr, PortId, PuntClass, PuntSource};
        let mut ports: Vec<admin::stats::PortSnapshot> = (0..16u16)
            .map(|p| admin::stats::PortSnapshot::new(PortId(p), rrp::PortStats::default()))
            .collect();
        let big = 9_876_543_210u64;
        ports[3].stats.punted_by_class[PuntClass::Management] = big;
        ports[3].stats.punt_source_by_class[PuntClass::Management] = big;
        ports[15].stats.punted_by_class[PuntClass::Routing] = 12;
        let flooder = PuntSource {
            class: PuntClass::Management,
            port: PortId(3),
            link: LinkKind::Udp,
            native: NativeAddr::udp("[2001:db8::1234:5678]:65535".parse().unwrap()),
            offered_per_s: big,
            dropped_per_s: big,
        };
        let info = PuntInfo::new(&ports, vec![flooder], Some(rrp::PuntBudgets::default()));
        let out = punt(&info);
        fits_80("show punt", &out);
        let lines: Vec<&str> = out.lines().collect();
        // One row per class with packets on a port, one per idle class.
        assert_eq!(lines.len(), 1 + 4 + 3 + 1);
        assert!(
            lines[1].starts_with("routing") && lines[1].ends_with(" 0"),
            "{out}"
        );
        assert!(lines[3].starts_with("management"), "{out}");
        assert!(out.contains("[2001:db8::1234:5678]:65535"), "{out}");
        let json = serde_json::to_value(&info).unwrap();
        for h in lines[0].split_whitespace().skip(3) {
            assert!(
                json["classes"][0].get(h).is_some(),
                "{h} is a field of --json: {json}"
            );
        }
        for h in lines[7].split_whitespace() {
            assert!(json["sources"][0].get(h).is_some(), "{h}: {json}");
        }
        let none = punt(&PuntInfo::new(&ports[..1], Vec::new(), None));
        assert!(
            none.contains("no source sends packets for the box now"),
            "{none}"
        );
    }

    #[test]
    fn stats_shows_the_partition_drops_after_the_ports_with_their_rate() {
        let v = json!({"uptime_s": 12, "ports": [{"port": 0}, {"port": 1}],
        "partitions": [
            {"key": "0x0010", "port": 1, "dropped": 30},
            {"key": "0x0020", "port": 0, "dropped": 4},
            {"key": "other", "port": null, "dropped": 2}
        ]});
        let now: Stats = serde_json::from_value(v).unwrap();
        let out = stats(&now, None);
        fits_80("stats", &out);
        let table = out.split("\npartition drops\n").nth(1).expect("the table");
        let lines: Vec<Vec<&str>> = table
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(lines[0], ["key", "port", "dropped"]);
        assert_eq!(lines[1], ["0x0010", "1", "30"]);
        assert_eq!(lines[2], ["0x0020", "0", "4"]);
        assert_eq!(lines[3], ["other", "-", "2"]);
        let before = Stats {
            partitions: vec![admin::view::PartitionDropRow {
                key: "0x0010".into(),
                port: Some(rrp::PortId(1)),
                dropped: 10,
            }],
            ..now.clone()
        };
        let out = stats(&now, Some((&before, 2.0)));
        let table = out.split("\npartition drops\n").nth(1).expect("the table");
        let lines: Vec<Vec<&str>> = table
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(lines[0], ["key", "port", "dropped", "drop/s"]);
        assert_eq!(lines[1], ["0x0010", "1", "30", "10"]);
        assert_eq!(lines[2], ["0x0020", "0", "4", "2"]);
        let none = stats(&Stats::default(), None);
        assert!(!none.contains("partition drops"), "{none}");
    }
}
