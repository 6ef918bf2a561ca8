//! `mwctl`, the admin CLI of mwrouterd (docs/admin-protocol.md).
//!
//! It sends one request over the daemon's UNIX socket and prints the answer
//! as a table (or as JSON with `--json`). Exit status: 0 ok, 1 the daemon
//! refused or failed the request, 2 usage, 3 the daemon cannot be reached.

pub mod cli;
pub mod clidoc;
pub mod discover;
pub mod discover_cache;
pub mod discover_diff;
pub mod discover_dot;
pub mod discover_html;
pub mod discover_partitions;
pub mod discover_sans;
pub mod errors;
pub mod events;
pub mod links;
pub mod mad;
pub mod mcast;
pub mod mwtrace;
pub mod ping;
pub mod port_partitions;
pub mod query;
pub mod render;
pub mod san;
pub mod shell;
pub mod sweep;
pub mod table;
pub mod thresholds;
pub mod trace;
pub mod trace_packets;
pub mod walk_args;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use admin::proto::{CaptureEvent, CaptureSummary, Command};
use admin::view::Stats;
use clap::{CommandFactory, Parser};
use serde_json::Value;

pub use admin::client::{Client, ClientError};
pub use cli::{Cli, Cmd};

use mwdump::capture::{PcapWriter, Resolution};

/// Exit status: success.
pub const EXIT_OK: i32 = 0;
/// Exit status: the daemon refused or failed the request.
pub const EXIT_FAILED: i32 = 1;
/// Exit status: usage error.
pub const EXIT_USAGE: i32 = 2;
/// Exit status: the daemon cannot be reached.
pub const EXIT_UNREACHABLE: i32 = 3;
/// `mwctl discover --diff`: the live network differs from the saved one.
pub const EXIT_DIFFERS: i32 = 4;

/// Parses `args` (program name first) and runs; returns the exit status.
pub fn main_with<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => run(&cli, out, err),
        Err(e) => {
            let text = e.render().to_string();
            let _ = if e.use_stderr() {
                err.write_all(text.as_bytes())
            } else {
                out.write_all(text.as_bytes())
            };
            e.exit_code()
        }
    }
}

/// Runs a parsed command line; returns the exit status.
pub fn run(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let code = match run_inner(cli, out, err) {
        Ok(()) => EXIT_OK,
        Err(Fail::Usage(m)) => {
            let _ = writeln!(err, "mwctl: {m}");
            EXIT_USAGE
        }
        Err(Fail::Status) => EXIT_FAILED,
        Err(Fail::Exit(code)) => code,
        Err(Fail::Ctl(e)) => {
            if cli.json
                && let ClientError::Daemon(d) = &e
            {
                let _ = writeln!(out, "{}", serde_json::to_string(d).unwrap_or_default());
            }
            let _ = writeln!(err, "mwctl: {e}");
            exit_code(&e)
        }
    };
    let _ = out.flush();
    code
}

/// The exit status for a failed request: 3 when the daemon cannot be
/// reached, 1 when it answered with an error or anything else failed.
pub fn exit_code(e: &ClientError) -> i32 {
    match e {
        ClientError::Unreachable { .. } => 3,
        ClientError::Daemon(_) | ClientError::Other(_) => 1,
    }
}

enum Fail {
    Usage(String),
    Ctl(ClientError),
    /// The answer is printed and says the request failed (a MAD's status).
    Status,
    /// The answer is printed; exit with this status (a trace's).
    Exit(i32),
}

impl From<ClientError> for Fail {
    fn from(e: ClientError) -> Fail {
        Fail::Ctl(e)
    }
}

fn local(what: &str, e: std::io::Error) -> Fail {
    Fail::Ctl(ClientError::Other(format!("{what}: {e}")))
}

fn seconds(what: &str, s: f64) -> Result<Option<Duration>, Fail> {
    if s == 0.0 {
        return Ok(None);
    }
    Duration::try_from_secs_f64(s).map(Some).map_err(|_| {
        Fail::Usage(format!(
            "{what} must be a positive number of seconds, not {s}"
        ))
    })
}

fn run_inner(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Fail> {
    if let Cmd::Ping(p) = &cli.cmd {
        return match ping::run(cli, p, out, err) {
            Ok(code) if code == EXIT_OK => Ok(()),
            Ok(code) => Err(Fail::Exit(code)),
            Err(ping::PingError::Usage(m)) => Err(Fail::Usage(m)),
            Err(ping::PingError::Ctl(e)) => Err(Fail::Ctl(e)),
        };
    }
    if let Cmd::Discover(d) = &cli.cmd {
        return match discover::run(cli, d, out, err)? {
            EXIT_OK => Ok(()),
            code => Err(Fail::Exit(code)),
        };
    }
    if let Cmd::Links(l) = &cli.cmd {
        return match links::run(cli, l, out, err)? {
            EXIT_OK => Ok(()),
            code => Err(Fail::Exit(code)),
        };
    }
    if let Cmd::Errors(e) = &cli.cmd {
        return match errors::run(cli, e, out, err)? {
            EXIT_OK => Ok(()),
            code => Err(Fail::Exit(code)),
        };
    }
    let timeout = seconds("--timeout", cli.daemon_timeout())?;
    if let Cmd::Events(e) = &cli.cmd {
        return match events::run(&cli.socket, cli.json, e, timeout, out)? {
            EXIT_OK => Ok(()),
            code => Err(Fail::Exit(code)),
        };
    }
    match &cli.cmd {
        Cmd::Completions { shell } => {
            clidoc::completions(*shell, Cli::command(), out);
            Ok(())
        }
        Cmd::Man => {
            clidoc::man(Cli::command(), "1", out).map_err(|e| local("writing the man page", e))
        }
        Cmd::Capture { file, .. } => capture(cli, file, timeout, out, err),
        Cmd::TracePackets(t) => {
            let mut c = Client::connect(&cli.socket, timeout)?;
            trace_packets::run(&mut c, t, timeout, cli.json, out)?;
            Ok(())
        }
        Cmd::Stats {
            area: Some(path),
            prometheus,
            ..
        } => {
            let snap = admin::stats::StatsReader::open(path)
                .and_then(|mut r| r.read())
                .map_err(|e| Fail::Ctl(ClientError::Other(format!("{}: {e}", path.display()))))?;
            let text = if *prometheus {
                admin::stats::prometheus(&snap)
            } else {
                let mut s = serde_json::to_string_pretty(&snap).unwrap_or_default();
                s.push('\n');
                s
            };
            out.write_all(text.as_bytes())
                .map_err(|e| local("writing the output", e))
        }
        Cmd::Stats {
            watch: true,
            interval,
            count,
            ..
        } => {
            let interval = seconds("--interval", *interval)?
                .ok_or_else(|| Fail::Usage("--interval must be positive".into()))?;
            watch(cli, interval, *count, timeout, out)
        }
        Cmd::Mad(m) => {
            let q = m.query().map_err(Fail::Usage)?;
            let mut c = Client::connect(&cli.socket, mad::answer_timeout(&q, timeout))?;
            let (a, v) = mad::ask(&mut c, &q)?;
            let text = if cli.json {
                format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
            } else {
                mad::render_answer(&a)
            };
            out.write_all(text.as_bytes())
                .map_err(|e| local("writing the output", e))?;
            if a.ok() { Ok(()) } else { Err(Fail::Status) }
        }
        Cmd::Show(cli::ShowCmd::Partitions) => {
            let mut c = Client::connect(&cli.socket, timeout)?;
            let v = c.request(Command::Show(admin::proto::Show::Management {}))?;
            let info: admin::view::ManagementInfo = serde_json::from_value(v)
                .map_err(|e| ClientError::Other(format!("malformed show management: {e}")))?;
            let (json, text) = port_partitions::render(&info);
            let text = if cli.json {
                format!(
                    "{}\n",
                    serde_json::to_string_pretty(&json).unwrap_or_default()
                )
            } else {
                text
            };
            out.write_all(text.as_bytes())
                .map_err(|e| local("writing the output", e))
        }
        Cmd::San(sc) => {
            let mut c = Client::connect(&cli.socket, timeout)?;
            let v = c.request(Command::Show(admin::proto::Show::Management {}))?;
            let info: admin::view::ManagementInfo = serde_json::from_value(v)
                .map_err(|e| ClientError::Other(format!("malformed show management: {e}")))?;
            let (json, text) = san::render(sc, &info);
            let text = if cli.json {
                format!(
                    "{}\n",
                    serde_json::to_string_pretty(&json).unwrap_or_default()
                )
            } else {
                text
            };
            out.write_all(text.as_bytes())
                .map_err(|e| local("writing the output", e))
        }
        Cmd::Trace(t) => {
            let probe = admin::mad::MadQuery {
                timeout_ms: Some(t.timeout_ms),
                retries: Some(t.retries),
                ..Default::default()
            };
            let mut c = Client::connect(&cli.socket, mad::answer_timeout(&probe, timeout))?;
            match trace::run(&mut c, t, cli.json, out) {
                Ok(0) => Ok(()),
                Ok(code) => Err(Fail::Exit(code)),
                Err(trace::Miss::Fatal(e)) => Err(Fail::Ctl(e)),
                Err(trace::Miss::NoAnswer(why)) => Err(Fail::Ctl(ClientError::Other(why))),
            }
        }
        Cmd::Mcast(m) => {
            let probe = admin::mad::MadQuery::default();
            let mut c = Client::connect(&cli.socket, mad::answer_timeout(&probe, timeout))?;
            let (v, text) = mcast::run(&mut c, m)?;
            let text = if cli.json {
                format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
            } else {
                text
            };
            out.write_all(text.as_bytes())
                .map_err(|e| local("writing the output", e))
        }
        Cmd::Query(q) => {
            let probe = admin::mad::MadQuery {
                timeout_ms: q.opts.mad_timeout,
                retries: q.opts.retries,
                ..Default::default()
            };
            let mut c = Client::connect(&cli.socket, mad::answer_timeout(&probe, timeout))?;
            let (v, text) = query::query(&mut c, q)?;
            let text = if cli.json {
                format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
            } else {
                text
            };
            out.write_all(text.as_bytes())
                .map_err(|e| local("writing the output", e))
        }
        other => {
            let cmd = other.command().expect("a daemon command");
            let mut c = Client::connect(&cli.socket, timeout)?;
            let v = c.request(cmd.clone())?;
            print(cli.json, &cmd, &v, out)
        }
    }
}

fn print(json: bool, cmd: &Command, v: &Value, out: &mut dyn Write) -> Result<(), Fail> {
    let text = if json {
        let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
        s.push('\n');
        s
    } else {
        render::render(cmd, v)
    };
    out.write_all(text.as_bytes())
        .map_err(|e| local("writing the output", e))
}

fn watch(
    cli: &Cli,
    interval: Duration,
    count: Option<u64>,
    timeout: Option<Duration>,
    out: &mut dyn Write,
) -> Result<(), Fail> {
    let cmd = cli.cmd.command().expect("stats");
    let mut prev: Option<(Stats, Instant)> = None;
    let mut n = 0u64;
    loop {
        // One connection per sample: the daemon closes idle clients.
        let mut c = Client::connect(&cli.socket, timeout)?;
        let v = c.request(cmd.clone())?;
        drop(c);
        let now = Instant::now();
        let text = if cli.json {
            format!("{}\n", serde_json::to_string(&v).unwrap_or_default())
        } else {
            match serde_json::from_value::<Stats>(v.clone()) {
                Ok(st) => {
                    let t = render::stats(
                        &st,
                        prev.as_ref()
                            .map(|(p, at)| (p, now.duration_since(*at).as_secs_f64())),
                    );
                    prev = Some((st, now));
                    t
                }
                Err(_) => render::render(&cmd, &v),
            }
        };
        if n > 0 && !cli.json {
            out.write_all(b"\n")
                .map_err(|e| local("writing the output", e))?;
        }
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| local("writing the output", e))?;
        n += 1;
        if count.is_some_and(|c| n >= c) {
            return Ok(());
        }
        std::thread::sleep(interval);
    }
}

fn capture(
    cli: &Cli,
    file: &Path,
    timeout: Option<Duration>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Fail> {
    let cmd = cli.cmd.command().expect("capture");
    let to_stdout = file.as_os_str() == "-";
    let mut c = Client::connect(&cli.socket, timeout)?;
    // Packets may be rare: wait for them as long as it takes.
    c.set_timeout(None)?;
    let mut writer: Option<PcapWriter<Box<dyn Write + '_>>> = None;
    let mut packets = 0u64;
    let mut drops: BTreeMap<String, u64> = BTreeMap::new();
    let mut started = false;
    let result = {
        let mut out_slot: Option<&mut dyn Write> = Some(&mut *out);
        c.stream(cmd, |item| {
            let ev: CaptureEvent = serde_json::from_value(item)
                .map_err(|e| ClientError::Other(format!("malformed capture item: {e}")))?;
            match ev {
                CaptureEvent::Start {
                    linktype, snaplen, ..
                } => {
                    let sink: Box<dyn Write + '_> = if to_stdout {
                        match out_slot.take() {
                            Some(o) => Box::new(o),
                            None => {
                                return Err(ClientError::Other("capture started twice".into()));
                            }
                        }
                    } else {
                        let f = File::create(file).map_err(|e| {
                            ClientError::Other(format!("cannot write {}: {e}", file.display()))
                        })?;
                        Box::new(BufWriter::new(f))
                    };
                    writer = Some(
                        PcapWriter::new(sink, linktype, snaplen.max(1), Resolution::Nano).map_err(
                            |e| ClientError::Other(format!("cannot write {}: {e}", file.display())),
                        )?,
                    );
                    started = true;
                }
                CaptureEvent::Packet(p) => {
                    let Some(w) = writer.as_mut() else {
                        return Err(ClientError::Other(
                            "a packet before the capture's start".into(),
                        ));
                    };
                    let data = p.bytes().ok_or_else(|| {
                        ClientError::Other("a captured packet that is not base64".into())
                    })?;
                    w.write(p.ts_ns, p.len, &data).map_err(|e| {
                        ClientError::Other(format!("cannot write {}: {e}", file.display()))
                    })?;
                    packets += 1;
                    if let Some(r) = p.drop {
                        *drops.entry(r).or_default() += 1;
                    }
                }
            }
            Ok(())
        })
    };
    drop(writer);
    // Whatever happened, say what was written.
    let summary =
        result.map(|v| serde_json::from_value::<CaptureSummary>(v.clone()).map_err(|_| v));
    if started {
        let _ = writeln!(
            err,
            "mwctl: {packets} packet{} written to {}",
            if packets == 1 { "" } else { "s" },
            if to_stdout {
                "standard output".into()
            } else {
                file.display().to_string()
            }
        );
        for (r, n) in &drops {
            let _ = writeln!(err, "mwctl:   dropped ({r}): {n}");
        }
    }
    match summary {
        Ok(Ok(s)) => {
            if s.lost > 0 {
                let _ = writeln!(
                    err,
                    "mwctl: the daemon could not keep up: {} packets lost",
                    s.lost
                );
            }
            if cli.json && !to_stdout {
                let _ = writeln!(out, "{}", serde_json::to_string(&s).unwrap_or_default());
            }
            Ok(())
        }
        Ok(Err(v)) => {
            if cli.json && !to_stdout {
                let _ = writeln!(out, "{v}");
            }
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}
