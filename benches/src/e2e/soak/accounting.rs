//! The soak's accounting (docs/reliability.md "Soak"): every packet a
//! router received was forwarded, dropped for a reason or punted, and every
//! probe a sender lost is explained by a counter.
//!
//! - per port: `received = forwarded + dropped + punted` (`dropped` is the
//!   sum of the drops by reason: rrp's `PortStats`);
//! - default mode ([`GeneratorPath`]): mwgen's probes against the router's
//!   counters over the soak: what mwgen sent reached port 0 (memif A),
//!   what port 1 forwarded reached mwgen (memif B), so mwgen's loss is port
//!   0's drops and punts, for no reason but a full egress ring;
//! - lab mode ([`ProbeLoss`]): the probes lost = lost by the impairment +
//!   the routers' drops + the kernel's UDP drops; duplicates received = the
//!   impairment's.
//!
//! Pure functions of the counters, so that they are tested on constructed
//! ones (benches/tests/soak.rs).

use std::collections::BTreeMap;

use admin::view::CounterRow;
use rrp::DropReason;
use rrp::counters::CounterSet;
use serde_json::{Value, json};

use super::checks::Checks;
use crate::e2e::mwgen::RunOutcome;

/// A router's counters by port index (`mwctl show counters`).
pub type PortRows = BTreeMap<u16, CounterRow>;

/// `rows` by port index.
pub fn by_port(rows: Vec<CounterRow>) -> PortRows {
    rows.into_iter().map(|r| (r.port.0, r)).collect()
}

/// `after - before`, counter by counter (drops by reason too).
pub fn delta(before: &CounterRow, after: &CounterRow) -> CounterRow {
    CounterRow {
        port: after.port,
        stats: after.stats.since(&before.stats),
    }
}

/// `received - (forwarded + dropped + punted)` of a port: 0 when every
/// packet it received is accounted for (`PortStats::balanced`).
pub fn unaccounted(row: &CounterRow) -> i128 {
    i128::from(row.received)
        - i128::from(row.forwarded)
        - i128::from(row.dropped_total())
        - i128::from(row.punted)
}

/// The drop reasons with a count.
pub fn nonzero(drops: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    drops
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (k.clone(), *n))
        .collect()
}

/// `reason=N, ...`, or `none`.
pub fn drops_text(drops: &BTreeMap<String, u64>) -> String {
    let v: Vec<String> = nonzero(drops)
        .iter()
        .map(|(k, n)| format!("{k}={n}"))
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The JSON of a row (the counters and the drop reasons with a count).
pub fn row_json(row: &CounterRow) -> Value {
    let mut v = serde_json::to_value(row).unwrap_or(Value::Null);
    v["drops"] = json!(nonzero(&row.drops()));
    v
}

/// The per-port check of a router's final counters: one check per port
/// (default mode).
pub fn check_each_port(rows: &PortRows, checks: &mut Checks) {
    for (p, row) in rows {
        checks.add(
            format!("port {p}: received = forwarded + dropped + punted"),
            row.balanced(),
            format!(
                "{} = {} + {} + {} (difference {}; drops by reason {})",
                row.received,
                row.forwarded,
                row.dropped_total(),
                row.punted,
                unaccounted(row),
                drops_text(&row.drops())
            ),
        );
    }
}

/// The ports of every router that do not balance (lab mode), as text.
pub fn unbalanced(routers: &BTreeMap<String, PortRows>) -> Vec<String> {
    routers
        .iter()
        .flat_map(|(name, rows)| {
            rows.iter()
                .filter(|(_, r)| !r.balanced())
                .map(move |(p, r)| {
                    format!(
                        "{name} port {p}: {} != {} + {} + {}",
                        r.received,
                        r.forwarded,
                        r.dropped_total(),
                        r.punted
                    )
                })
        })
        .collect()
}

/// Default mode: mwgen's probes through the router, over the soak.
///
/// Port 0 faces mwgen's transmit port (memif A), port 1 its receive port
/// (memif B), port 2 the buddy.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorPath {
    /// What mwgen counted.
    pub run: RunOutcome,
    /// Port 0's counters over the soak.
    pub port0: CounterRow,
    /// Port 1's.
    pub port1: CounterRow,
    /// Port 2's.
    pub port2: CounterRow,
}

impl GeneratorPath {
    /// Lost between mwgen and the router: sent - port 0 received.
    pub fn gap_a(&self) -> i128 {
        i128::from(self.run.sent) - i128::from(self.port0.received)
    }

    /// Forwarded out of port 1: transmitted - injected.
    pub fn forwarded_b(&self) -> i128 {
        i128::from(self.port1.transmitted) - i128::from(self.port1.injected)
    }

    /// Lost between the router and mwgen: forwarded out of port 1 - what
    /// mwgen received.
    pub fn gap_b(&self) -> i128 {
        self.forwarded_b() - i128::from(self.run.received)
    }

    /// Forwarded out of port 2, towards the buddy.
    pub fn forwarded_to_buddy(&self) -> i128 {
        i128::from(self.port2.transmitted) - i128::from(self.port2.injected)
    }

    /// What explains mwgen's loss: port 0's drops and punts, and the two
    /// memif gaps.
    pub fn explained(&self) -> i128 {
        i128::from(self.port0.dropped_total())
            + i128::from(self.port0.punted)
            + self.gap_a()
            + self.gap_b()
    }

    /// Drop reasons on port 0 other than a full egress ring.
    pub fn unexpected_drops(&self) -> BTreeMap<String, u64> {
        let mut d = nonzero(&self.port0.drops());
        d.remove(DropReason::TxFull.name());
        d
    }

    /// The checks of the generator's path.
    pub fn check(&self, checks: &mut Checks) {
        let (run, s0) = (&self.run, &self.port0);
        checks.add(
            "mwgen's probes all reach the router (memif A)",
            self.gap_a() == 0,
            format!(
                "mwgen sent {}, port 0 received {} during the run (difference {})",
                run.sent,
                s0.received,
                self.gap_a()
            ),
        );
        checks.add(
            "what the router forwards reaches mwgen (memif B)",
            self.gap_b() == 0,
            format!(
                "port 1 forwarded out {} (transmitted - injected), mwgen received {} probes \
                 (difference {})",
                self.forwarded_b(),
                run.received,
                self.gap_b()
            ),
        );
        checks.add(
            "mwgen's loss = the router's drops",
            i128::from(run.lost) == self.explained() && run.duplicated == 0,
            format!(
                "lost {} (sent {} - unique {}); port 0 dropped {} ({}), punted {}; duplicated {}",
                run.lost,
                run.sent,
                run.unique,
                s0.dropped_total(),
                drops_text(&s0.drops()),
                s0.punted,
                run.duplicated
            ),
        );
        let odd = self.unexpected_drops();
        checks.add(
            "drops on the generator's path only for a full egress ring",
            odd.is_empty(),
            format!("port 0 drops by reason: {}", drops_text(&s0.drops()))
                + &if odd.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; unexpected: {} (a route to 0x0230 missing or wrong during the churn)",
                        drops_text(&odd)
                    )
                },
        );
        checks.add(
            "nothing forwarded towards the buddy",
            self.forwarded_to_buddy() == 0 && i128::from(s0.forwarded) == self.forwarded_b(),
            format!(
                "port 2 forwarded out {}; port 0 forwarded {}",
                self.forwarded_to_buddy(),
                s0.forwarded
            ),
        );
    }
}

/// The kernel's UDP counters that matter to a lab on loopback
/// (`/proc/net/snmp`), over the soak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelUdp {
    /// `InErrors`.
    pub in_errors: u64,
    /// `RcvbufErrors`: a socket's receive buffer full.
    pub rcvbuf_errors: u64,
    /// `NoPorts`: no socket on the port.
    pub no_ports: u64,
    /// `SndbufErrors`.
    pub sndbuf_errors: u64,
}

impl KernelUdp {
    /// Datagrams the kernel dropped (receive buffers, no socket, send
    /// buffers).
    pub fn drops(&self) -> u64 {
        self.rcvbuf_errors + self.no_ports + self.sndbuf_errors
    }

    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({
            "InErrors": self.in_errors,
            "RcvbufErrors": self.rcvbuf_errors,
            "NoPorts": self.no_ports,
            "SndbufErrors": self.sndbuf_errors,
        })
    }
}

/// Lab mode: the probes of every stream against what dropped them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeLoss {
    /// Probes sent.
    pub sent: u64,
    /// Probes received once.
    pub unique: u64,
    /// Probes received again.
    pub duplicated: u64,
    /// Probes received out of order.
    pub reordered: u64,
    /// Probes the impairment lost.
    pub impairment_lost: u64,
    /// Probes the impairment duplicated.
    pub impairment_duplicated: u64,
    /// Probes the impairment held back behind a probe of their stream.
    pub impairment_reordered: u64,
    /// The routers' drops over the soak, by reason.
    pub router_drops: BTreeMap<String, u64>,
    /// The kernel's UDP drops over the soak.
    pub kernel: KernelUdp,
}

impl ProbeLoss {
    /// Probes lost: sent - received once.
    pub fn lost(&self) -> i128 {
        i128::from(self.sent) - i128::from(self.unique)
    }

    /// All the routers' drops.
    pub fn router_drops_total(&self) -> u64 {
        self.router_drops.values().sum()
    }

    /// Lost probes no counter explains (negative: the routers dropped
    /// other packets than these probes too).
    pub fn unexplained(&self) -> i128 {
        self.lost()
            - i128::from(self.impairment_lost)
            - i128::from(self.router_drops_total())
            - i128::from(self.kernel.drops())
    }

    /// The checks of the probes' loss and duplication.
    pub fn check(&self, checks: &mut Checks) {
        let u = self.unexplained();
        let why = if u < 0 {
            "(router drops of other packets than these probes)"
        } else if u > 0 {
            "(unexplained)"
        } else {
            ""
        };
        checks.add(
            "probe loss explained by counters",
            u <= 0,
            format!(
                "lost {} of {} = impairment {} + router drops {} ({}) + kernel UDP {} ({}) {} {} {why}",
                self.lost(),
                self.sent,
                self.impairment_lost,
                self.router_drops_total(),
                drops_text(&self.router_drops),
                self.kernel.drops(),
                kernel_text(&self.kernel),
                if u < 0 { '-' } else { '+' },
                u.abs()
            )
            .trim_end()
            .to_string(),
        );
        checks.add(
            "duplicates = the impairment's",
            self.duplicated == self.impairment_duplicated,
            format!(
                "received {} duplicated probes, the impairment duplicated {}",
                self.duplicated, self.impairment_duplicated
            ),
        );
    }
}

fn kernel_text(k: &KernelUdp) -> String {
    let v: Vec<String> = [
        ("InErrors", k.in_errors),
        ("RcvbufErrors", k.rcvbuf_errors),
        ("NoPorts", k.no_ports),
        ("SndbufErrors", k.sndbuf_errors),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| format!("{k}={n}"))
    .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
