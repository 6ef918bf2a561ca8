//! The command line: `mwdump [--json] [--link raw|eth|udp] (--hex HEX | FILE | -)`.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use clap::{ArgGroup, Parser, ValueEnum};

use crate::capture;
use crate::decode::{FrameInput, decode_frame};
use crate::link::Link;
use crate::model::{ErrorInfo, ErrorReport, Report};
use crate::{hex, text};

/// Exit code: every packet decoded.
pub const EXIT_OK: i32 = 0;
/// Exit code: a packet could not be decoded, or the input could not be read.
pub const EXIT_BAD: i32 = 1;
/// Exit code: bad command line (clap's).
pub const EXIT_USAGE: i32 = 2;

/// The link layer of `--hex` and raw-file input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LinkArg {
    /// A bare MessageWay packet.
    Raw,
    /// An Ethernet II frame: EtherType 0x88B5 (one 802.1Q tag allowed), or IPv4/IPv6 UDP to port 34997.
    Eth,
    /// An IPv4 or IPv6 header and a UDP header (port 34997 as source or destination), then the packet.
    Udp,
}

impl From<LinkArg> for Link {
    fn from(l: LinkArg) -> Link {
        match l {
            LinkArg::Raw => Link::Raw,
            LinkArg::Eth => Link::Eth,
            LinkArg::Udp => Link::Udp,
        }
    }
}

/// Decodes MessageWay packets (EEP, L2RHs, RRP and ERR messages) from hex,
/// a raw packet file, or a pcap/pcapng capture.
#[derive(Debug, Clone, Parser)]
#[command(name = "mwdump", version, about, long_about = None)]
#[command(group(ArgGroup::new("input").required(true).args(["hex", "file"])))]
pub struct Args {
    /// Print one JSON object per packet, one per line (JSON Lines).
    #[arg(long)]
    pub json: bool,

    /// Link layer of --hex and raw-file input (a capture names its own).
    #[arg(long, value_enum, default_value_t = LinkArg::Raw)]
    pub link: LinkArg,

    /// The frame's bytes in hex: whitespace, 0x prefixes and # comments allowed.
    #[arg(long, value_name = "HEX", allow_hyphen_values = true)]
    pub hex: Option<String>,

    /// A pcap or pcapng capture, or a file holding one raw frame; - reads standard input.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

enum Sink {
    Json,
    Text { first: bool },
}

impl Sink {
    fn emit(&mut self, w: &mut dyn Write, r: &Report) -> io::Result<()> {
        match self {
            Sink::Json => {
                let line = serde_json::to_string(r).map_err(io::Error::other)?;
                writeln!(w, "{line}")
            }
            Sink::Text { first } => {
                if !*first {
                    writeln!(w)?;
                }
                *first = false;
                w.write_all(text::render(r).as_bytes())
            }
        }
    }
}

/// The reports on a capture's frames, then on its damage, if any.
fn capture_reports(cap: &capture::Capture) -> impl Iterator<Item = Report> + '_ {
    let frames = cap.frames.iter().enumerate().map(|(i, f)| {
        let index = i as u64 + 1;
        match Link::from_linktype(f.linktype) {
            Some(link) => decode_frame(&FrameInput {
                index,
                timestamp: f.timestamp,
                linktype: Some(f.linktype),
                link,
                orig_len: Some(f.orig_len),
                data: &f.data,
                allow_skip: true,
            }),
            None => Report::Error(Box::new(ErrorReport {
                index,
                timestamp: f.timestamp.map(Into::into),
                frame_len: f.data.len(),
                error: ErrorInfo {
                    field: "linktype".into(),
                    offset: 0,
                    packet_offset: None,
                    kind: "unsupported_link".into(),
                    message: format!(
                        "link type {} is not one mwdump reads (1, 101, 147, 228, 229)",
                        f.linktype
                    ),
                },
            })),
        }
    });
    let damage = cap.error.as_ref().map(|e| {
        Report::Error(Box::new(ErrorReport {
            index: cap.frames.len() as u64 + 1,
            timestamp: None,
            frame_len: 0,
            error: ErrorInfo {
                field: e.field.into(),
                offset: e.offset,
                packet_offset: None,
                kind: "capture".into(),
                message: e.message.clone(),
            },
        }))
    });
    frames.chain(damage)
}

/// Runs mwdump with parsed arguments; returns the exit code.
pub fn run(args: &Args, stdin: &mut dyn Read, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let (name, bytes, from_hex) = match (&args.hex, &args.file) {
        (Some(h), _) => match hex::parse(h) {
            Ok(b) => ("--hex".to_string(), b, true),
            Err(e) => {
                let _ = writeln!(err, "mwdump: --hex: {e}");
                return EXIT_BAD;
            }
        },
        (None, Some(p)) if p.as_os_str() == "-" => {
            let mut b = Vec::new();
            if let Err(e) = stdin.read_to_end(&mut b) {
                let _ = writeln!(err, "mwdump: cannot read standard input: {e}");
                return EXIT_BAD;
            }
            ("standard input".to_string(), b, false)
        }
        (None, Some(p)) => match std::fs::read(p) {
            Ok(b) => (p.display().to_string(), b, false),
            Err(e) => {
                let _ = writeln!(err, "mwdump: cannot read {}: {e}", p.display());
                return EXIT_BAD;
            }
        },
        (None, None) => {
            let _ = writeln!(err, "mwdump: no input: give --hex HEX, FILE or -");
            return EXIT_USAGE;
        }
    };
    if bytes.is_empty() {
        let _ = writeln!(err, "mwdump: {name}: empty input");
        return EXIT_BAD;
    }
    let mut sink = if args.json {
        Sink::Json
    } else {
        Sink::Text { first: true }
    };
    let mut bad = false;
    let mut report = |r: Report| -> io::Result<()> {
        if let Report::Error(e) = &r {
            bad = true;
            let _ = writeln!(err, "mwdump: {}", text::error_line(e));
        }
        sink.emit(out, &r)
    };
    let result = if !from_hex && capture::detect(&bytes).is_some() {
        match capture::read(&bytes) {
            Ok(cap) => capture_reports(&cap).try_for_each(&mut report),
            Err(e) => {
                let _ = writeln!(err, "mwdump: {name}: {e}");
                return EXIT_BAD;
            }
        }
    } else {
        report(decode_frame(&FrameInput {
            index: 1,
            timestamp: None,
            linktype: None,
            link: args.link.into(),
            orig_len: None,
            data: &bytes,
            allow_skip: false,
        }))
    };
    let flushed = result.and_then(|()| out.flush());
    if let Err(e) = flushed {
        if e.kind() != io::ErrorKind::BrokenPipe {
            let _ = writeln!(err, "mwdump: cannot write the output: {e}");
        }
        return EXIT_BAD;
    }
    if bad { EXIT_BAD } else { EXIT_OK }
}
