//! Child processes and interruption.
//!
//! SIGINT, SIGTERM and SIGHUP only set a flag ([`install_interrupt_handler`]);
//! every wait of the benchmark ([`sleep`], [`Proc::wait_timeout`]) checks it
//! and returns an error, so that the stack unwinds through the guards: each
//! [`Proc`] stops its process when dropped, and the hugepage guard
//! (`hugepages::Reservation`) puts the previous reservation back.

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

use super::Result;

static INTERRUPTED: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();

/// Turns SIGINT, SIGTERM and SIGHUP into a flag that [`check_interrupt`]
/// reads. Call once, first thing.
pub fn install_interrupt_handler() -> Result<()> {
    let flag = INTERRUPTED.get_or_init(|| Arc::new(AtomicBool::new(false)));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(flag))
            .map_err(|e| format!("cannot install the handler of signal {sig}: {e}"))?;
    }
    Ok(())
}

/// Whether a stop signal arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// An error when a stop signal arrived.
pub fn check_interrupt() -> Result<()> {
    if interrupted() {
        Err("interrupted (signal received)".into())
    } else {
        Ok(())
    }
}

/// Sleeps for `d`, in steps of at most 50 ms, returning early with an error
/// when interrupted.
pub fn sleep(d: Duration) -> Result<()> {
    let end = Instant::now() + d;
    loop {
        check_interrupt()?;
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

/// Waits up to `timeout` for `ready` to hold, polling every 20 ms.
pub fn wait_for(what: &str, timeout: Duration, ready: impl FnMut() -> Result<bool>) -> Result<()> {
    wait_for_every(what, timeout, Duration::from_millis(20), ready)
}

/// Waits up to `timeout` for `ready` to hold, polling every `every` (a
/// check that runs a program, say, more rarely).
pub fn wait_for_every(
    what: &str,
    timeout: Duration,
    every: Duration,
    mut ready: impl FnMut() -> Result<bool>,
) -> Result<()> {
    let end = Instant::now() + timeout;
    loop {
        if ready()? {
            return Ok(());
        }
        check_interrupt()?;
        if Instant::now() >= end {
            return Err(format!("timed out after {timeout:?} waiting for {what}"));
        }
        std::thread::sleep(every);
    }
}

/// The command line of `cmd`: program, then arguments.
pub fn command_line(cmd: &Command) -> Vec<String> {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|s| s.to_string_lossy().into_owned())
        .collect()
}

/// A command for `program`: under `taskset -c CPUS` when `cpus` is given,
/// and in a process group of its own, so that a Ctrl-C at the terminal
/// reaches only the harness, which stops its children itself (a capture
/// with SIGINT, the others with SIGTERM).
pub fn pinned(program: impl AsRef<OsStr>, cpus: Option<&str>) -> Command {
    let mut cmd = match cpus {
        Some(c) => {
            let mut t = Command::new("taskset");
            t.args(["-c", c]).arg(program);
            t
        }
        None => Command::new(program),
    };
    cmd.process_group(0);
    cmd
}

/// A command line as one shell-like string (for messages).
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(|c: char| c.is_whitespace() || "\"'$|;&<>()".contains(c))
            {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A running child process whose standard output and error go to a log
/// file. Dropping it stops the process (SIGTERM, then SIGKILL after 5 s).
#[derive(Debug)]
pub struct Proc {
    name: String,
    child: Child,
    log: PathBuf,
    command: Vec<String>,
    status: Option<ExitStatus>,
}

impl Proc {
    /// Starts `cmd` with its output in `log`; `stdin` piped or null.
    pub fn spawn(name: &str, mut cmd: Command, log: &Path, piped_stdin: bool) -> Result<Proc> {
        let out = File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("cannot duplicate the handle of {}: {e}", log.display()))?;
        cmd.stdout(out).stderr(err).stdin(if piped_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let command = command_line(&cmd);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {name} ({}): {e}", shell_words(&command)))?;
        Ok(Proc {
            name: name.into(),
            child,
            log: log.into(),
            command,
            status: None,
        })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The command line it was started with.
    pub fn command(&self) -> &[String] {
        &self.command
    }

    /// Its log file.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The piped standard input (once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Its exit status if it has exited.
    pub fn try_status(&mut self) -> Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self
                .child
                .try_wait()
                .map_err(|e| format!("cannot wait for {}: {e}", self.name))?;
        }
        Ok(self.status)
    }

    /// An error when the process has exited, with the end of its log.
    pub fn check_running(&mut self) -> Result<()> {
        match self.try_status()? {
            None => Ok(()),
            Some(st) => Err(format!(
                "{} exited early ({st}); the end of its output ({}):\n{}",
                self.name,
                self.log.display(),
                self.log_tail(30)
            )),
        }
    }

    /// The last `lines` lines of its log.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Sends `sig` unless it has exited.
    pub fn signal(&mut self, sig: Signal) -> Result<()> {
        if self.try_status()?.is_none() {
            kill_process(Pid::from_child(&self.child), sig)
                .map_err(|e| format!("cannot signal {}: {e}", self.name))?;
        }
        Ok(())
    }

    /// Waits up to `timeout` for it to exit; `None` when it is still
    /// running. Returns an error when interrupted.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<Option<ExitStatus>> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(st) = self.try_status()? {
                return Ok(Some(st));
            }
            check_interrupt()?;
            if Instant::now() >= end {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, up to `grace` to exit, then SIGKILL. Returns the exit
    /// status.
    pub fn stop(&mut self, grace: Duration) -> Result<ExitStatus> {
        self.signal(Signal::TERM)?;
        if let Some(st) = self.wait_timeout(grace)? {
            return Ok(st);
        }
        eprintln!(
            "e2e: {} did not stop within {grace:?} of SIGTERM: killing it",
            self.name
        );
        self.kill_and_reap()
            .ok_or_else(|| format!("cannot kill {}", self.name))
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) -> Result<ExitStatus> {
        self.kill_and_reap()
            .ok_or_else(|| format!("cannot kill {}", self.name))
    }

    /// SIGKILL and reap, ignoring interruption (used on the way out).
    fn kill_and_reap(&mut self) -> Option<ExitStatus> {
        if let Some(st) = self.status {
            return Some(st);
        }
        let _ = self.child.kill();
        self.status = self.child.wait().ok();
        self.status
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        // SIGTERM and a grace period that does not depend on the interrupt
        // flag (we may be unwinding because of it).
        let _ = kill_process(Pid::from_child(&self.child), Signal::TERM);
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("e2e: {} ignored SIGTERM: killing it", self.name);
        self.kill_and_reap();
    }
}
