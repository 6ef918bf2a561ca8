//! Captures started and stopped in turn during the soak (`mwctl capture`,
//! docs/mwctl.md): each kind of the rotation names a router, a port, what
//! to capture, an optional count and a time. A capture with a count ends on
//! its own (or is stopped after its time); one without is stopped after
//! its time with SIGINT, as Ctrl-C would (mwctl flushes the pcap after each
//! packet: what it wrote is a whole file). Each must leave a pcap that
//! mwdump's reader reads.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::process::Signal;
use serde_json::{Value, json};

use crate::e2e::process::{Proc, pinned};
use crate::e2e::{Result, path_str};

/// What a capture takes from its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    /// What the port receives.
    Received,
    /// What it transmits (`--transmitted`).
    Transmitted,
    /// What it receives and what the dataplane drops on it (`--drops`).
    Drops,
}

impl What {
    /// The name in the report (`rx`, or the option).
    pub fn name(self) -> &'static str {
        match self {
            What::Received => "rx",
            What::Transmitted => "--transmitted",
            What::Drops => "--drops",
        }
    }
}

/// One kind of capture of the rotation.
#[derive(Debug, Clone, PartialEq)]
pub struct Kind {
    /// The router (its name in the soak).
    pub router: String,
    /// The port.
    pub port: u16,
    /// What is captured.
    pub what: What,
    /// Stop after this many packets (`None`: until stopped).
    pub count: Option<u64>,
    /// Stopped after this many seconds if not done.
    pub secs: f64,
}

/// How one capture went.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Its kind.
    pub kind: Kind,
    /// How long it ran, seconds.
    pub seconds: f64,
    /// mwctl's exit code (`None`: ended by a signal).
    pub exit: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Whether it was stopped (SIGINT) rather than ended by its count.
    pub stopped: bool,
    /// Whether it had to be killed.
    pub killed: bool,
    /// Packets in its pcap (`None`: not a readable pcap).
    pub packets: Option<usize>,
    /// Ended by its count (exit 0) or stopped by SIGINT, not killed, with
    /// a readable pcap.
    pub ok: bool,
}

impl Record {
    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({
            "target": self.kind.router,
            "port": self.kind.port,
            "kind": self.kind.what.name(),
            "count": self.kind.count,
            "seconds": (self.seconds * 100.0).round() / 100.0,
            "exit": self.exit,
            "signal": self.signal,
            "stopped": self.stopped,
            "killed": self.killed,
            "packets": self.packets,
            "ok": self.ok,
        })
    }
}

/// Records in a capture file, as mwdump reads it (`None`: not a pcap or
/// pcapng file); a damaged last record is left out.
pub fn pcap_packets(path: &Path) -> Option<usize> {
    let bytes = std::fs::read(path).ok()?;
    mwdump::capture::read(&bytes).ok().map(|c| c.frames.len())
}

#[derive(Debug)]
struct Running {
    proc: Proc,
    pcap: PathBuf,
    kind: Kind,
    started: Instant,
    stopped_at: Option<Instant>,
    killed: bool,
}

/// The rotation and what it did.
#[derive(Debug)]
pub struct Captures {
    rotation: Vec<Kind>,
    mwctl: PathBuf,
    dir: PathBuf,
    next: usize,
    started: usize,
    running: Option<Running>,
    done: Vec<Record>,
}

impl Captures {
    /// The rotation `rotation`, run with `mwctl`, pcaps and logs in `dir`.
    pub fn new(rotation: Vec<Kind>, mwctl: &Path, dir: &Path) -> Result<Captures> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Captures {
            rotation,
            mwctl: mwctl.into(),
            dir: dir.into(),
            next: 0,
            started: 0,
            running: None,
            done: Vec::new(),
        })
    }

    /// Starts the next kind of the rotation on the router whose admin
    /// socket `socket_of` gives, unless one is still running.
    pub fn start(&mut self, socket_of: &dyn Fn(&str) -> PathBuf) -> Result<()> {
        if self.running.is_some() || self.rotation.is_empty() {
            return Ok(());
        }
        let kind = self.rotation[self.next % self.rotation.len()].clone();
        self.next += 1;
        self.started += 1;
        let n = self.started;
        let pcap = self.dir.join(format!("cap-{n}.pcap"));
        let mut cmd = pinned(&self.mwctl, None);
        cmd.arg("--socket").arg(socket_of(&kind.router)).args([
            "capture",
            &kind.port.to_string(),
            "-w",
            &path_str(&pcap),
        ]);
        match kind.what {
            What::Received => {}
            What::Transmitted => {
                cmd.arg("--transmitted");
            }
            What::Drops => {
                cmd.arg("--drops");
            }
        }
        if let Some(c) = kind.count {
            cmd.args(["-c", &c.to_string()]);
        }
        let log = self.dir.join(format!("cap-{n}.log"));
        let proc = Proc::spawn(&format!("capture {n}"), cmd, &log, false)?;
        self.running = Some(Running {
            proc,
            pcap,
            kind,
            started: Instant::now(),
            stopped_at: None,
            killed: false,
        });
        Ok(())
    }

    /// Stops the running capture when its time is up (`last`: now, and
    /// waits for it), kills one that does not end within 3 s of SIGINT,
    /// and records one that ended.
    pub fn poll(&mut self, last: bool) -> Result<()> {
        let Some(c) = self.running.as_mut() else {
            return Ok(());
        };
        let alive = c.proc.try_status()?.is_none();
        if alive
            && c.stopped_at.is_none()
            && (last || c.started.elapsed().as_secs_f64() >= c.kind.secs)
        {
            c.proc.signal(Signal::INT)?;
            c.stopped_at = Some(Instant::now());
        }
        if let Some(at) = c.stopped_at
            && c.proc.try_status()?.is_none()
        {
            if last {
                c.proc.wait_timeout(Duration::from_secs(5))?;
            }
            if c.proc.try_status()?.is_none() && at.elapsed() > Duration::from_secs(3) {
                c.proc.kill()?;
                c.killed = true;
            }
        }
        let Some(status) = c.proc.try_status()? else {
            return Ok(());
        };
        let c = self.running.take().expect("running");
        let packets = pcap_packets(&c.pcap);
        let stopped = c.stopped_at.is_some();
        let ok = packets.is_some()
            && !c.killed
            && (status.success() || (stopped && status.signal() == Some(Signal::INT.as_raw())));
        self.done.push(Record {
            kind: c.kind,
            seconds: c.started.elapsed().as_secs_f64(),
            exit: status.code(),
            signal: status.signal(),
            stopped,
            killed: c.killed,
            packets,
            ok,
        });
        let _ = std::fs::remove_file(&c.pcap);
        Ok(())
    }

    /// Every capture that ended.
    pub fn done(&self) -> &[Record] {
        &self.done
    }

    /// Captures started.
    pub fn started(&self) -> usize {
        self.started
    }

    /// Whether every capture ended well (and at least one ended).
    pub fn all_ok(&self) -> bool {
        !self.done.is_empty() && self.done.iter().all(|r| r.ok)
    }

    /// One line: finished, by count, stopped, packets (and the first
    /// failures).
    pub fn summary_text(&self, by_count: &str) -> String {
        let d = &self.done;
        let failed: Vec<Value> = d
            .iter()
            .filter(|r| !r.ok)
            .take(3)
            .map(Record::to_json)
            .collect();
        format!(
            "{} captures ({} {by_count}, {} stopped), {} packets{}",
            d.len(),
            d.iter().filter(|r| !r.stopped).count(),
            d.iter().filter(|r| r.stopped).count(),
            d.iter().filter_map(|r| r.packets).sum::<usize>(),
            if failed.is_empty() {
                String::new()
            } else {
                format!("; failed: {}", Value::Array(failed))
            }
        )
    }

    /// The JSON record.
    pub fn to_json(&self) -> Value {
        let d = &self.done;
        json!({
            "started": self.started,
            "finished": d.len(),
            "ok": d.iter().filter(|r| r.ok).count(),
            "by_count": d.iter().filter(|r| !r.stopped).count(),
            "stopped": d.iter().filter(|r| r.stopped).count(),
            "packets": d.iter().filter_map(|r| r.packets).sum::<usize>(),
            "all": d.iter().map(Record::to_json).collect::<Vec<_>>(),
        })
    }
}
