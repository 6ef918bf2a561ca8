//! `mwctl ping`: InfiniBand's ibping for MessageWay (docs/management.md
//! "mwctl ping", docs/spec-notes.md 67). Each echo is one management Get
//! of ClassPortInfo in class Perf, sent through the admin socket's `mad`
//! command as `mwctl query` sends its Gets: every agent answers it, on
//! any HR, without a port to look up and without the M_Key check. The
//! echoes go one at a time, `--interval` apart, each with one try of
//! `--timeout`; the round trip is timed by mwctl, around the request.

use std::fmt::Write as _;
use std::io::Write;
use std::time::{Duration, Instant};

use admin::mad::{MadAnswer, MadQuery};
use admin::proto::AdminErrorCode;
use admin::{Client, ClientError};
use clap::Args;
use mgmt::attr::ClassPortInfo;
use rrp::Address;
use serde_json::{Value, json};

use crate::Cli;

/// The wait for each reply when `--timeout` is not given, in seconds.
pub const DEFAULT_WAIT_S: f64 = 1.0;

/// `mwctl ping`.
#[derive(Debug, Clone, Args)]
#[command(after_help = "\
Each echo is a Get of ClassPortInfo (class Perf), one try; --timeout (mwctl's
global option) is the wait for each reply here, default 1 s (at most 10).

Examples:
  mwctl ping 0x0230
  mwctl ping 0x0230 -c 10 -i 0.2 --timeout 0.5
  mwctl --json ping 0x0230 -c 3")]
pub struct PingArgs {
    /// The node's address.
    #[arg(value_name = "ADDR", value_parser = parse_target)]
    pub addr: Address,
    /// Echoes to send.
    #[arg(short = 'c', long, value_name = "N", default_value_t = 5, value_parser = parse_count)]
    pub count: u64,
    /// Seconds from one echo to the next.
    #[arg(
        short = 'i',
        long,
        value_name = "SECS",
        default_value_t = 1.0,
        allow_negative_numbers = true,
        value_parser = parse_interval
    )]
    pub interval: f64,
}

/// A node address ping and discover accept: one a packet can carry as its
/// destination, not Hey-You.
pub fn parse_target(s: &str) -> Result<Address, String> {
    let a = s.parse::<Address>().map_err(|e| e.to_string())?;
    if !a.is_valid_destination() || a == Address::HEY_YOU {
        return Err(format!("{a}: not a node address"));
    }
    Ok(a)
}

fn parse_count(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err("a number of echoes, at least 1".into()),
    }
}

fn parse_interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err("a positive number of seconds (0.2: five a second)".into()),
    }
}

/// The wait for each reply: `--timeout` seconds (default 1), as the
/// milliseconds a try of the `mad` command waits (1 to 10,000).
pub fn wait_ms(timeout: Option<f64>) -> Result<u64, String> {
    let s = timeout.unwrap_or(DEFAULT_WAIT_S);
    let ms = s * 1000.0;
    if !ms.is_finite() || ms < 1.0 || ms > admin::mad::MAX_TIMEOUT_MS as f64 {
        return Err(format!(
            "--timeout must be from 0.001 to {} seconds for ping, not {s}",
            admin::mad::MAX_TIMEOUT_MS / 1000
        ));
    }
    Ok(ms.round() as u64)
}

/// Why `ping` stopped before its summary.
#[derive(Debug)]
pub enum PingError {
    /// A bad option (exit 2).
    Usage(String),
    /// The daemon refused an echo for another reason than no answer, or
    /// cannot be reached.
    Ctl(ClientError),
}

/// One echo: its number, and its reply if one came.
#[derive(Debug, Clone, PartialEq)]
pub struct Echo {
    /// From 1.
    pub seq: u64,
    /// The reply, if one came.
    pub reply: Option<Reply>,
}

/// A reply to an echo.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Who answered (the answer's SA).
    pub from: Address,
    /// From the request to the answer, through the admin socket.
    pub rtt: Duration,
    /// The answer's status (0: ok; any answer counts as a reply).
    pub status: u16,
}

/// The statistics of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Echoes sent.
    pub sent: u64,
    /// Replies received.
    pub received: u64,
    /// Shortest, mean and longest round trip; None without replies.
    pub rtt: Option<(Duration, Duration, Duration)>,
}

impl Summary {
    /// The statistics of `echoes`.
    pub fn of(echoes: &[Echo]) -> Summary {
        let rtts: Vec<Duration> = echoes
            .iter()
            .filter_map(|e| e.reply.as_ref().map(|r| r.rtt))
            .collect();
        let rtt = match (rtts.iter().min(), rtts.iter().max()) {
            (Some(&min), Some(&max)) => {
                let total: Duration = rtts.iter().sum();
                let n = u32::try_from(rtts.len()).unwrap_or(u32::MAX);
                Some((min, total / n, max))
            }
            _ => None,
        };
        Summary {
            sent: echoes.len() as u64,
            received: rtts.len() as u64,
            rtt,
        }
    }

    /// The share of echoes without a reply, in percent (0 when none sent).
    pub fn loss_percent(&self) -> f64 {
        if self.sent == 0 {
            return 0.0;
        }
        (self.sent - self.received) as f64 * 100.0 / self.sent as f64
    }

    /// The exit status: 0 if a reply came, 1 if none did.
    pub fn exit_code(&self) -> i32 {
        if self.received > 0 {
            crate::EXIT_OK
        } else {
            crate::EXIT_FAILED
        }
    }
}

/// A duration in milliseconds with three decimals (`0.412`).
fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

/// A percentage: whole when it is, else with one decimal (`33.3`).
fn percent(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

/// The line of one echo: `reply from 0x0230: seq=1 time=0.412 ms`, or
/// `timeout from 0x0230: seq=2` for one without a reply.
pub fn echo_line(target: Address, e: &Echo) -> String {
    match &e.reply {
        Some(r) => {
            let mut line = format!("reply from {}: seq={} time={} ms", r.from, e.seq, ms(r.rtt));
            if r.status != 0 {
                let _ = write!(line, " status={:#06x}", r.status);
            }
            line
        }
        None => format!("timeout from {target}: seq={}", e.seq),
    }
}

/// The summary line: `5 sent, 4 received, 20% loss, rtt min/avg/max =
/// 0.301/0.388/0.412 ms` (no rtt part without replies).
pub fn summary_line(s: &Summary) -> String {
    let mut line = format!(
        "{} sent, {} received, {}% loss",
        s.sent,
        s.received,
        percent(s.loss_percent())
    );
    if let Some((min, avg, max)) = s.rtt {
        let _ = write!(
            line,
            ", rtt min/avg/max = {}/{}/{} ms",
            ms(min),
            ms(avg),
            ms(max)
        );
    }
    line
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The `--json` object: every echo (`seq`, `rtt_us` or null, `from`,
/// `status`) and the summary.
pub fn to_json(target: Address, echoes: &[Echo]) -> Value {
    let s = Summary::of(echoes);
    let replies: Vec<Value> = echoes
        .iter()
        .map(|e| match &e.reply {
            Some(r) => json!({
                "seq": e.seq,
                "rtt_us": us(r.rtt),
                "from": r.from,
                "status": r.status,
            }),
            None => json!({"seq": e.seq, "rtt_us": null}),
        })
        .collect();
    let (min, avg, max) = match s.rtt {
        Some((a, b, c)) => (json!(us(a)), json!(us(b)), json!(us(c))),
        None => (Value::Null, Value::Null, Value::Null),
    };
    json!({
        "target": target,
        "replies": replies,
        "sent": s.sent,
        "received": s.received,
        "loss_percent": s.loss_percent(),
        "rtt_min_us": min,
        "rtt_avg_us": avg,
        "rtt_max_us": max,
    })
}

/// The echo request: ClassPortInfo in class Perf, one try of `wait_ms`.
pub fn request(target: Address, wait_ms: u64) -> MadQuery {
    MadQuery {
        dst: Some(target),
        class: Some("perf".into()),
        attribute: format!("{:#06x}", ClassPortInfo::ID),
        timeout_ms: Some(wait_ms),
        retries: Some(0),
        ..MadQuery::default()
    }
}

/// Sends one echo over a new connection (the daemon closes idle ones, and
/// an interval may be longer): its reply, None when the node did not
/// answer.
fn echo(cli: &Cli, q: &MadQuery) -> Result<Option<Reply>, ClientError> {
    let daemon_wait = crate::mad::answer_timeout(q, Some(Duration::ZERO));
    let mut c = Client::connect(&cli.socket, daemon_wait)?;
    let start = Instant::now();
    match crate::mad::ask(&mut c, q) {
        Ok((a, _)) => {
            let rtt = start.elapsed();
            Ok(Some(reply(&a, rtt)))
        }
        Err(ClientError::Daemon(e)) if e.code == AdminErrorCode::NoAnswer => Ok(None),
        Err(e) => Err(e),
    }
}

fn reply(a: &MadAnswer, rtt: Duration) -> Reply {
    Reply {
        from: a.from,
        rtt,
        status: a.status,
    }
}

/// Runs `mwctl ping`: the echoes, a line each as they come (not with
/// `--json`), then the summary. Returns the exit status.
pub fn run(
    cli: &Cli,
    args: &PingArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, PingError> {
    let wait = wait_ms(cli.timeout).map_err(PingError::Usage)?;
    let interval = Duration::try_from_secs_f64(args.interval)
        .map_err(|_| PingError::Usage(format!("--interval: {}", args.interval)))?;
    let q = request(args.addr, wait);
    let write = |out: &mut dyn Write, text: &str| -> Result<(), PingError> {
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| PingError::Ctl(ClientError::Other(format!("writing the output: {e}"))))
    };
    if !cli.json {
        write(
            out,
            &format!(
                "PING {}: Get ClassPortInfo (Perf), {} ms wait\n",
                args.addr, wait
            ),
        )?;
    }
    let mut echoes = Vec::new();
    let first = Instant::now();
    for seq in 1..=args.count {
        if seq > 1 {
            // Echo n leaves (n-1) intervals after the first, or at once
            // when the one before took longer.
            let at = interval.saturating_mul(u32::try_from(seq - 1).unwrap_or(u32::MAX));
            if let Some(left) = at.checked_sub(first.elapsed()) {
                std::thread::sleep(left);
            }
        }
        let e = Echo {
            seq,
            reply: echo(cli, &q).map_err(PingError::Ctl)?,
        };
        if !cli.json {
            write(out, &format!("{}\n", echo_line(args.addr, &e)))?;
        }
        echoes.push(e);
    }
    let s = Summary::of(&echoes);
    if cli.json {
        let v = to_json(args.addr, &echoes);
        write(
            out,
            &format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()),
        )?;
    } else {
        write(
            out,
            &format!(
                "\n--- {} ping statistics ---\n{}\n",
                args.addr,
                summary_line(&s)
            ),
        )?;
    }
    if s.received == 0 {
        let _ = writeln!(err, "mwctl: no reply from {}", args.addr);
    }
    Ok(s.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(seq: u64, us: u64) -> Echo {
        Echo {
            seq,
            reply: Some(Reply {
                from: Address(0x0230),
                rtt: Duration::from_micros(us),
                status: 0,
            }),
        }
    }

    fn lost(seq: u64) -> Echo {
        Echo { seq, reply: None }
    }

    #[test]
    fn statistics() {
        let echoes = [reply(1, 412), lost(2), reply(3, 300), reply(4, 500)];
        let s = Summary::of(&echoes);
        assert_eq!((s.sent, s.received), (4, 3));
        assert_eq!(s.loss_percent(), 25.0);
        assert_eq!(
            s.rtt,
            Some((
                Duration::from_micros(300),
                Duration::from_micros(404),
                Duration::from_micros(500)
            ))
        );
        assert_eq!(s.exit_code(), 0);
        let none = Summary::of(&[lost(1), lost(2)]);
        assert_eq!((none.sent, none.received, none.rtt), (2, 0, None));
        assert_eq!(none.loss_percent(), 100.0);
        assert_eq!(none.exit_code(), 1);
        assert_eq!(Summary::of(&[]).loss_percent(), 0.0);
    }

    #[test]
    fn lines() {
        let t = Address(0x0230);
        assert_eq!(
            echo_line(t, &reply(1, 412)),
            "reply from 0x0230: seq=1 time=0.412 ms"
        );
        assert_eq!(echo_line(t, &lost(2)), "timeout from 0x0230: seq=2");
        let mut refused = reply(3, 1_250);
        refused.reply.as_mut().unwrap().status = 0x000c;
        assert_eq!(
            echo_line(t, &refused),
            "reply from 0x0230: seq=3 time=1.250 ms status=0x000c"
        );
        let s = Summary::of(&[reply(1, 412), lost(2), reply(3, 300)]);
        assert_eq!(
            summary_line(&s),
            "3 sent, 2 received, 33.3% loss, rtt min/avg/max = 0.300/0.356/0.412 ms"
        );
        assert_eq!(
            summary_line(&Summary::of(&[lost(1)])),
            "1 sent, 0 received, 100% loss"
        );
    }

    #[test]
    fn json_has_every_echo_and_the_summary() {
        let v = to_json(Address(0x0230), &[reply(1, 412), lost(2)]);
        assert_eq!(v["target"], json!("0x0230"));
        assert_eq!(v["replies"][0]["seq"], json!(1));
        assert_eq!(v["replies"][0]["rtt_us"], json!(412));
        assert_eq!(v["replies"][1], json!({"seq": 2, "rtt_us": null}));
        assert_eq!(
            (v["sent"].as_u64(), v["received"].as_u64()),
            (Some(2), Some(1))
        );
        assert_eq!(v["loss_percent"], json!(50.0));
        assert_eq!(v["rtt_min_us"], json!(412));
        let none = to_json(Address(0x0230), &[lost(1)]);
        assert!(none["rtt_avg_us"].is_null());
    }

    #[test]
    fn options() {
        assert_eq!(wait_ms(None), Ok(1000));
        assert_eq!(wait_ms(Some(0.25)), Ok(250));
        for bad in [0.0, -1.0, 11.0, f64::NAN] {
            assert!(
                wait_ms(Some(bad)).unwrap_err().contains("--timeout"),
                "{bad}"
            );
        }
        assert_eq!(parse_count("3"), Ok(3));
        assert!(parse_count("0").is_err());
        assert!(parse_count("-2").is_err());
        assert_eq!(parse_interval("0.2"), Ok(0.2));
        assert!(parse_interval("-1").is_err());
        assert!(parse_interval("0").is_err());
        assert!(parse_target("0x0230").is_ok());
        assert!(parse_target("0xFFFE").is_err());
        assert!(parse_target("nowhere").is_err());
        let q = request(Address(0x0230), 250);
        assert_eq!(q.class.as_deref(), Some("perf"));
        assert_eq!(q.attribute_id().unwrap(), ClassPortInfo::ID);
        assert_eq!((q.timeout_ms, q.retries), (Some(250), Some(0)));
        q.check().unwrap();
    }
}
