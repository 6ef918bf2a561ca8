//! `mwctl events`: subscribe the box to its SAN's events and print them
//! (docs/management.md "Events"). The box is the subscriber: mwctl sends a
//! SubnAdm Set of InformInfo to the SAN's master through the admin socket's
//! `mad` command (the request leaves by one of the box's HRs, whose address
//! the master takes as the subscriber), the master forwards every trap it
//! receives to that HR as Report(Notice), the box's agent answers
//! ReportResp and keeps it among its notices with a sequence number, and
//! mwctl reads them from `show management`: those that came in Reports.
//! With `--watch` it polls for new ones and renews the subscription at
//! half its lease until it is stopped (or `--count` events were printed);
//! a subscription left behind runs out with its lease. With `--at` the
//! box subscribes at another node's agent instead, for that node's own
//! traps (a node that is not its SAN's master keeps a table of its own).

use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use admin::mad::MadMethod;
use admin::proto::{Command, Show};
use admin::view::{ManagementInfo, NoticeRow};
use admin::{Client, ClientError};
use clap::Args;
use mgmt::attr::InformInfo;
use mgmt::attr::inform_info::ALL;
use rrp::Address;
use serde_json::{Value, json};

use crate::mcast::{ask, hex_area, known_master};

/// `mwctl events`.
#[derive(Debug, Clone, Args)]
#[command(after_help = "\
The box subscribes (SubnAdm Set of InformInfo) at the SAN's master: the one
given with --manager, else the master this box runs or follows, else its
agent's manager address. The master forwards each trap it receives as a
Report to this box; the box answers ReportResp and keeps the last 64.
With --at, the box subscribes at that node instead: a node that does not
run its SAN's master reports its own traps only.

Examples:
  mwctl events                   subscribe, print the events kept, exit
  mwctl events --watch           and print new ones as they come
  mwctl events --watch --trap 1024 --lease 30
  mwctl events --watch --at 0x0541   the traps of node 0x0541 alone
  mwctl --json events --watch    one JSON object per event")]
pub struct EventsArgs {
    /// Keep printing events as they come, renewing the subscription.
    #[arg(long)]
    pub watch: bool,
    /// The master manager's address (default: the one this box knows).
    #[arg(long, value_name = "ADDR")]
    pub manager: Option<Address>,
    /// Subscribe at this node's agent instead of the SAN's master: that
    /// node's own traps only.
    #[arg(long, value_name = "ADDR", conflicts_with = "manager")]
    pub at: Option<Address>,
    /// The lease asked, in seconds (the master may cut it; 0: its default).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub lease: u32,
    /// Only this trap (1024: a neighbour HR down; default: every trap).
    #[arg(long, value_name = "N")]
    pub trap: Option<u16>,
    /// With --watch: stop after this many events.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// With --watch: seconds between two reads of the box's notices.
    #[arg(long, value_name = "SECS", default_value_t = 0.5)]
    pub interval: f64,
}

/// The subscription as the master (or the node of `--at`) granted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    /// The master, or the node of `--at`.
    pub manager: Address,
    /// The subscriber: the box's HR the master saw the request come from.
    pub subscriber: Address,
    /// The lease given, in seconds.
    pub lease_s: u32,
}

/// The record asked for.
pub fn record(args: &EventsArgs) -> InformInfo {
    InformInfo {
        trap_number: args.trap.unwrap_or(ALL),
        lease_s: args.lease,
        ..InformInfo::default()
    }
}

/// Subscribes (or renews) at `manager`.
pub fn subscribe(
    c: &mut Client,
    manager: Address,
    info: &InformInfo,
) -> Result<Granted, ClientError> {
    let a = ask(
        c,
        manager,
        MadMethod::Set,
        InformInfo::ID,
        0,
        hex_area(|x| info.emit(x))?,
    )?;
    if !a.ok() {
        return Err(ClientError::Other(format!(
            "subscription at {manager} refused: status {:#06x}: {}",
            a.status, a.status_text
        )));
    }
    let got: InformInfo = a
        .fields
        .and_then(|f| serde_json::from_value(f).ok())
        .ok_or_else(|| ClientError::Other(format!("{manager}: malformed InformInfo answer")))?;
    Ok(Granted {
        manager,
        subscriber: got.subscriber,
        lease_s: got.lease_s,
    })
}

/// The notices the box keeps that came in Reports.
fn reports(c: &mut Client) -> Result<Vec<NoticeRow>, ClientError> {
    Ok(management(c)?
        .notices
        .into_iter()
        .filter(|n| n.report)
        .collect())
}

fn management(c: &mut Client) -> Result<ManagementInfo, ClientError> {
    let v = c.request(Command::Show(Show::Management {}))?;
    serde_json::from_value(v)
        .map_err(|e| ClientError::Other(format!("malformed show management: {e}")))
}

/// When the event arrived, in milliseconds since the UNIX epoch.
fn arrived_ms(n: &NoticeRow) -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    now.saturating_sub(n.age_ms)
}

/// `HH:MM:SS.mmm` (UTC) of a time in milliseconds since the epoch.
fn clock(ms: u64) -> String {
    let day = ms % 86_400_000;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        day / 3_600_000,
        day / 60_000 % 60,
        day / 1000 % 60,
        day % 1000
    )
}

/// The line of one event: `21:40:02.118 trap 1024 from 0x0511 (report
/// from 0x0512): neighbour HR 0x0531 on port 0 down`.
pub fn line(n: &NoticeRow, at_ms: u64) -> String {
    format!(
        "{} trap {} from {} (report from {}): {}",
        clock(at_ms),
        n.trap,
        n.issuer,
        n.from,
        n.summary
    )
}

/// One event as JSON.
pub fn to_json(n: &NoticeRow, at_ms: u64) -> Value {
    json!({
        "seq": n.seq,
        "time_unix_ms": at_ms,
        "trap": n.trap,
        "issuer": n.issuer,
        "from": n.from,
        "summary": n.summary,
    })
}

/// The line saying what was subscribed.
pub fn subscribed_line(g: &Granted, trap: Option<u16>) -> String {
    format!(
        "subscribed at {} as {} for {} s: {}",
        g.manager,
        g.subscriber,
        g.lease_s,
        match trap {
            Some(t) => format!("trap {t}"),
            None => "every trap".into(),
        }
    )
}

/// Runs `mwctl events`; returns the exit status.
pub fn run(
    socket: &std::path::Path,
    json_out: bool,
    args: &EventsArgs,
    timeout: Option<Duration>,
    out: &mut dyn Write,
) -> Result<i32, ClientError> {
    let interval = Duration::try_from_secs_f64(args.interval)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| ClientError::Other(format!("--interval: {}", args.interval)))?;
    // The `mad` command's budget: three tries of a second, and the margin.
    let wait = timeout.map(|t| t.max(Duration::from_secs(8)));
    let connect = || Client::connect(socket, wait);
    let write = |out: &mut dyn Write, text: String| -> Result<(), ClientError> {
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| ClientError::Other(format!("writing the output: {e}")))
    };
    let manager = match args.at.or(args.manager) {
        Some(m) => m,
        None => known_master(&mut connect()?)?,
    };
    let info = record(args);
    let granted = subscribe(&mut connect()?, manager, &info)?;
    let kept = reports(&mut connect()?)?;
    if !args.watch {
        if json_out {
            let v = json!({
                "manager": granted.manager,
                "subscriber": granted.subscriber,
                "lease_s": granted.lease_s,
                "events": kept.iter().map(|n| to_json(n, arrived_ms(n))).collect::<Vec<_>>(),
            });
            write(
                out,
                format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()),
            )?;
        } else {
            let mut text = format!("{}\n", subscribed_line(&granted, args.trap));
            if kept.is_empty() {
                text.push_str("no events received yet\n");
            }
            for n in &kept {
                text.push_str(&line(n, arrived_ms(n)));
                text.push('\n');
            }
            write(out, text)?;
        }
        return Ok(crate::EXIT_OK);
    }
    if !json_out {
        write(out, format!("{}\n", subscribed_line(&granted, args.trap)))?;
    }
    // From the events that come after the subscription on.
    let mut last = kept.iter().map(|n| n.seq).max();
    let mut printed = 0u64;
    let mut renewed = Instant::now();
    let mut lease = granted.lease_s;
    loop {
        if args.count.is_some_and(|c| printed >= c) {
            return Ok(crate::EXIT_OK);
        }
        std::thread::sleep(interval);
        if renewed.elapsed() >= Duration::from_secs(u64::from(lease.max(2) / 2)) {
            lease = subscribe(&mut connect()?, manager, &info)?.lease_s;
            renewed = Instant::now();
        }
        for n in reports(&mut connect()?)? {
            if last.is_some_and(|l| n.seq <= l) {
                continue;
            }
            last = Some(n.seq);
            if args.count.is_some_and(|c| printed >= c) {
                break;
            }
            printed += 1;
            let at = arrived_ms(&n);
            let text = if json_out {
                format!("{}\n", to_json(&n, at))
            } else {
                format!("{}\n", line(&n, at))
            };
            write(out, text)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let n = NoticeRow {
            seq: 3,
            age_ms: 0,
            issuer: Address(0x0511),
            from: Address(0x0512),
            report: true,
            trap: 1024,
            summary: "neighbour HR 0x0531 on port 0 down".into(),
        };
        let at = 21 * 3_600_000 + 40 * 60_000 + 2_118;
        assert_eq!(
            line(&n, at),
            "21:40:02.118 trap 1024 from 0x0511 (report from 0x0512): neighbour HR 0x0531 on port 0 down"
        );
        let v = to_json(&n, at);
        assert_eq!(v["seq"], 3);
        assert_eq!(v["issuer"], "0x0511");
        let g = Granted {
            manager: Address(0x0512),
            subscriber: Address(0x0521),
            lease_s: 60,
        };
        assert_eq!(
            subscribed_line(&g, Some(1024)),
            "subscribed at 0x0512 as 0x0521 for 60 s: trap 1024"
        );
    }
}
