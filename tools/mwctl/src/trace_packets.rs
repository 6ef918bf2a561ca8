//! `mwctl trace-packets`: what the dataplane decides for the next N
//! received packets, as VPP's `trace add` shows it (docs/dataplane.md
//! "Tracing packets"; the request is docs/admin-protocol.md "Tracing
//! packets"). Each record is printed as it arrives, a block of lines per
//! packet (`--json`: each streamed item, then the summary, one JSON
//! object a line).

use std::fmt::Write as _;
use std::io::Write;
use std::time::Duration;

use admin::proto::{
    Command, PortSpec, TraceEvent, TraceKind, TraceSummary, TracedEntry, TracedLookup,
    TracedPacket, TracedVerdict,
};
use admin::{Client, ClientError};
use clap::Args;
use rrp::Address;

/// Time the daemon has to send its summary once the trace's timeout has
/// passed (it looks every millisecond).
const SUMMARY_GRACE: Duration = Duration::from_secs(5);

/// `mwctl trace-packets`.
#[derive(Debug, Clone, Args)]
pub struct TracePacketsArgs {
    /// Only packets received on this port: index or HR address (default:
    /// any port).
    pub port: Option<PortSpec>,
    /// How many packets to trace.
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: u64,
    /// Only packets to this destination (the EEP header's, also behind
    /// L2RHs).
    #[arg(long, value_name = "ADDR")]
    pub dst: Option<Address>,
    /// Only source-routed packets (a leading L2RH).
    #[arg(long, conflicts_with = "l3")]
    pub l2: bool,
    /// Only packets routed by destination (FIB lookup).
    #[arg(long)]
    pub l3: bool,
}

impl TracePacketsArgs {
    /// The request; `timeout`, how long the trace runs (`None`: until N
    /// packets are traced).
    pub fn command(&self, timeout: Option<Duration>) -> Command {
        Command::TracePackets {
            port: self.port,
            count: self.count,
            dst: self.dst,
            only: if self.l2 {
                Some(TraceKind::L2)
            } else if self.l3 {
                Some(TraceKind::L3)
            } else {
                None
            },
            timeout_ms: timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX).max(1)),
        }
    }
}

/// Runs the trace on `c`: prints each item as it comes, then the summary.
/// `timeout` bounds the trace (the daemon ends it and says so).
pub fn run(
    c: &mut Client,
    args: &TracePacketsArgs,
    timeout: Option<Duration>,
    json: bool,
    out: &mut dyn Write,
) -> Result<TraceSummary, ClientError> {
    // The daemon ends the trace at the timeout; wait a little longer for
    // its summary (or for ever with no timeout: packets may be rare).
    c.set_timeout(timeout.map(|t| t.saturating_add(SUMMARY_GRACE)))?;
    let write = |out: &mut dyn Write, text: &str| {
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| ClientError::Other(format!("writing the output: {e}")))
    };
    let mut n = 0u64;
    let result = c.stream(args.command(timeout), |item| {
        if json {
            let line = format!("{}\n", serde_json::to_string(&item).unwrap_or_default());
            return write(out, &line);
        }
        let ev: TraceEvent = serde_json::from_value(item)
            .map_err(|e| ClientError::Other(format!("malformed trace item: {e}")))?;
        let text = match ev {
            TraceEvent::Start {
                count,
                port,
                hr,
                dst,
                only,
                timeout_ms,
            } => {
                let mut s = format!("tracing {count} packet{}", plural(u64::from(count)));
                match (port, hr) {
                    (Some(p), Some(h)) => {
                        let _ = write!(s, " received on port {p} (HR {h})");
                    }
                    (Some(p), None) => {
                        let _ = write!(s, " received on port {p}");
                    }
                    _ => s.push_str(" received on any port"),
                }
                if let Some(d) = dst {
                    let _ = write!(s, " to {d}");
                }
                if let Some(k) = only {
                    let _ = write!(s, ", {} only", k.name().to_uppercase());
                }
                if let Some(ms) = timeout_ms {
                    let _ = write!(s, ", for at most {}", seconds(ms));
                }
                s.push('\n');
                s
            }
            TraceEvent::Packet(p) => {
                n += 1;
                packet(n, &p)
            }
        };
        write(out, &text)
    })?;
    let s: TraceSummary = serde_json::from_value(result.clone())
        .map_err(|e| ClientError::Other(format!("malformed trace summary: {e}")))?;
    let text = if json {
        format!("{result}\n")
    } else {
        summary(&s, timeout)
    };
    write(out, &text)?;
    Ok(s)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.3} s", ms as f64 / 1000.0)
    }
}

/// A UNIX time in nanoseconds as the time of day (UTC).
fn time_of_day(ts_ns: u64) -> String {
    let s = ts_ns / 1_000_000_000;
    let (h, m, sec) = ((s / 3600) % 24, (s / 60) % 60, s % 60);
    format!("{h:02}:{m:02}:{sec:02}.{:09} UTC", ts_ns % 1_000_000_000)
}

/// The text of the `n`th traced packet: a block of lines.
pub fn packet(n: u64, p: &TracedPacket) -> String {
    let addr = |a: Option<Address>| a.map_or("-".to_string(), |a| a.to_string());
    let mut s = format!(
        "packet {n}: worker {} at {}\n",
        p.worker,
        time_of_day(p.ts_ns)
    );
    let _ = writeln!(
        s,
        "  received on port {} (HR {}): {} bytes, {} -> {}",
        p.port,
        p.hr,
        p.len,
        addr(p.src),
        addr(p.dst)
    );
    let lookup = match p.lookup {
        TracedLookup::Unframed => "none: its framing was refused".to_string(),
        TracedLookup::L3 { fib_version, entry } => format!(
            "L3 in FIB version {fib_version}: {}",
            match entry {
                TracedEntry::NoRoute => "entry 0 (no route)".to_string(),
                TracedEntry::Local => "entry 1 (this box)".to_string(),
                TracedEntry::NextHop(i) => format!("entry {i} (a next hop)"),
            }
        ),
        TracedLookup::Group { fib_version } => {
            format!("group: the multicast table of FIB version {fib_version}")
        }
        TracedLookup::L2 {
            egress_hr: Some(hr),
        } => format!("L2: the L2RH names HR {hr}"),
        TracedLookup::L2 { egress_hr: None } => "L2: the L2RH names no HR".to_string(),
    };
    let _ = writeln!(s, "  lookup: {lookup}");
    if let Some(h) = &p.next_hop {
        let _ = writeln!(s, "  next hop: port {} (HR {}) {}", h.port, h.hr, h.native);
    }
    match (p.ei_before, p.ei_after) {
        (Some(b), Some(a)) => {
            let _ = writeln!(s, "  EI: {b:#x} -> {a:#x}");
        }
        (Some(b), None) => {
            let _ = writeln!(s, "  EI: {b:#x}");
        }
        _ => {}
    }
    let egress = p
        .egress
        .map_or(String::new(), |e| format!(" out of port {e}"));
    let verdict = match &p.verdict {
        TracedVerdict::Forwarded { redirect } => format!(
            "forwarded{egress}{}",
            if *redirect {
                " (back onto its SAN: the control plane may redirect the source)"
            } else {
                ""
            }
        ),
        TracedVerdict::Replicated { ports } => format!(
            "replicated out of port{} {}",
            plural(ports.len() as u64),
            ports
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TracedVerdict::Punted { class } => format!(
            "punted to the box ({class}){}",
            p.egress
                .map_or(String::new(), |e| format!(", HR of port {e}"))
        ),
        TracedVerdict::Dropped { reason } => format!("dropped: {reason}{egress}"),
    };
    let _ = writeln!(s, "  verdict: {verdict}");
    s
}

/// The closing line: how many packets were traced, and why the trace
/// ended.
pub fn summary(s: &TraceSummary, timeout: Option<Duration>) -> String {
    let why = match s.ended.as_str() {
        "count" => String::new(),
        "timeout" => format!(
            ": the timeout passed{}",
            timeout.map_or(String::new(), |t| format!(
                " ({})",
                seconds(t.as_millis() as u64)
            ))
        ),
        "client" => ": the client left".into(),
        "stopped" => ": the daemon stopped the trace".into(),
        other => format!(": {other}"),
    };
    let mut out = format!(
        "{} of {} packet{} traced{why}\n",
        s.recorded,
        s.requested,
        plural(u64::from(s.requested))
    );
    if s.lost > 0 {
        let _ = writeln!(
            out,
            "{} record{} lost: the daemon could not keep up",
            s.lost,
            plural(s.lost)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::proto::TracedHop;
    use rrp::PortId;

    #[test]
    fn a_packet_reads_as_a_block() {
        let p = TracedPacket {
            ts_ns: 1_700_000_000_123_456_789,
            worker: 1,
            port: PortId(0),
            hr: Address(0x0115),
            len: 52,
            src: Some(Address(0x0101)),
            dst: Some(Address(0x0102)),
            lookup: TracedLookup::L3 {
                fib_version: 7,
                entry: TracedEntry::NextHop(2),
            },
            next_hop: Some(TracedHop {
                port: PortId(1),
                hr: Address(0x0116),
                native: "02:00:00:00:01:02".into(),
            }),
            ei_before: Some(5),
            ei_after: Some(0xb),
            egress: Some(PortId(1)),
            verdict: TracedVerdict::Forwarded { redirect: false },
        };
        assert_eq!(
            packet(3, &p),
            "packet 3: worker 1 at 22:13:20.123456789 UTC\n\
             \x20 received on port 0 (HR 0x0115): 52 bytes, 0x0101 -> 0x0102\n\
             \x20 lookup: L3 in FIB version 7: entry 2 (a next hop)\n\
             \x20 next hop: port 1 (HR 0x0116) 02:00:00:00:01:02\n\
             \x20 EI: 0x5 -> 0xb\n\
             \x20 verdict: forwarded out of port 1\n"
        );
        let d = TracedPacket {
            lookup: TracedLookup::Unframed,
            src: None,
            dst: None,
            next_hop: None,
            ei_before: None,
            ei_after: None,
            egress: None,
            verdict: TracedVerdict::Dropped {
                reason: "truncated".into(),
            },
            ..p
        };
        let t = packet(1, &d);
        assert!(t.contains("0x0115): 52 bytes, - -> -"), "{t}");
        assert!(t.contains("lookup: none"), "{t}");
        assert!(t.ends_with("  verdict: dropped: truncated\n"), "{t}");
        assert!(!t.contains("EI") && !t.contains("next hop"), "{t}");
    }

    #[test]
    fn the_summary_says_why_the_trace_ended() {
        let s = TraceSummary {
            recorded: 2,
            requested: 5,
            lost: 1,
            ended: "timeout".into(),
        };
        assert_eq!(
            summary(&s, Some(Duration::from_secs(10))),
            "2 of 5 packets traced: the timeout passed (10 s)\n\
             1 record lost: the daemon could not keep up\n"
        );
        let s = TraceSummary {
            recorded: 1,
            requested: 1,
            lost: 0,
            ended: "count".into(),
        };
        assert_eq!(summary(&s, None), "1 of 1 packet traced\n");
    }
}
