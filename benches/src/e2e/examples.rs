//! DPDK's example applications as peers: built from Debian's `dpdk-doc`
//! sources (/usr/share/dpdk/examples) with the adjustments of patch files
//! committed in benches/, run on vdevs, their ethdev counters read through
//! the telemetry socket (the examples print none, or not in a form worth
//! parsing).
//!
//! [`build`] copies an example and `common/` beside it into the scratch
//! directory (`<work>/<dir>/<example>`), applies the patches with `patch
//! -p1` and runs `make shared`, as the notes on this machine describe
//! (docs/performance.md "End to end"). The result is kept in a build cache
//! (`target/e2e-examples/<binary>-<hash>`, the hash over the patched
//! sources, the DPDK version and pkg-config's flags): a later run with the
//! same sources copies the binary instead of compiling again, and says so
//! in its build steps.
//!
//! [`App`] runs one: `--file-prefix` per run (so that its telemetry socket
//! is found and stale runtime directories are removed), `--no-telemetry`
//! dropped from the common EAL flags.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::process::{Proc, command_line, shell_words, wait_for};
use super::telemetry::{self, EthStats, Telemetry};
use super::{Env, Result};

/// Where Debian's `dpdk-doc` installs the examples.
pub const EXAMPLES: &str = "/usr/share/dpdk/examples";

/// One example to build.
#[derive(Debug, Clone)]
pub struct Example {
    /// Its directory under [`EXAMPLES`] (`l3fwd`).
    pub name: &'static str,
    /// The binary `make shared` makes (`build/<binary>-shared`).
    pub binary: &'static str,
    /// The patches, in order: (file name in benches/, text).
    pub patches: Vec<(&'static str, &'static str)>,
    /// The scratch subdirectory to build in (several variants of one
    /// example build side by side).
    pub dir: &'static str,
}

/// A built example.
#[derive(Debug, Clone)]
pub struct Built {
    /// The binary.
    pub bin: PathBuf,
    /// The example's copied sources (its rule files, say).
    pub src: PathBuf,
    /// How it was built (for the report).
    pub steps: Vec<String>,
    /// Whether the binary came from the build cache.
    pub cached: bool,
}

/// Whether the example's sources and the tools to build it are here; the
/// reason when not.
pub fn available(name: &str) -> Result<()> {
    let src = Path::new(EXAMPLES);
    if !src.join(name).join("main.c").exists() || !src.join("common").is_dir() {
        return Err(format!(
            "DPDK's {name} example is not in {EXAMPLES}: install Debian's `dpdk-doc` \
             (apt-get install dpdk-doc)"
        ));
    }
    for tool in ["make", "patch", "cc", "pkg-config"] {
        if super::prereq::which(tool).is_none() {
            return Err(format!(
                "`{tool}` is not on the PATH: install build-essential, patch and pkg-config"
            ));
        }
    }
    Ok(())
}

/// Copies `from` into `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let rd = std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for e in rd {
        let e = e.map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .map_err(|e| format!("cannot copy {} to {}: {e}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}

/// Runs `cmd` to completion (with `stdin` written to it), recording its
/// command line in `steps`; an error with its output when it fails.
pub fn run_step(mut cmd: Command, stdin: Option<&str>, steps: &mut Vec<String>) -> Result<()> {
    let words = command_line(&cmd);
    steps.push(shell_words(&words));
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", shell_words(&words)))?;
    if let (Some(text), Some(mut w)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        w.write_all(text.as_bytes())
            .map_err(|e| format!("writing to {}: {e}", shell_words(&words)))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for {}: {e}", shell_words(&words)))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}):\n{}{}",
            shell_words(&words),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// FNV-1a, 64 bits: the build cache's key (stable across Rust versions,
/// unlike `DefaultHasher`).
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Adds `bytes`, then their length (so that concatenations differ).
    pub fn add(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        for b in (bytes.len() as u64).to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn value(&self) -> u64 {
        self.0
    }
}

/// Adds every file under `dir` (relative paths in sorted order, and
/// contents) to `h`; `build/` directories are left out.
fn hash_tree(h: &mut Fnv, root: &Path, dir: &Path) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "build") {
                continue;
            }
            hash_tree(h, root, &p)?;
        } else {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            h.add(rel.to_string_lossy().as_bytes());
            h.add(&std::fs::read(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?);
        }
    }
    Ok(())
}

fn pkg_config(args: &[&str]) -> String {
    Command::new("pkg-config")
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Copies `ex` and `common/` into `<work>/<ex.dir>`, applies its patches
/// and runs `make shared`, or takes the binary from the build cache
/// ([`Env::cache`]) when the patched sources, DPDK's version and flags are
/// those of a previous build.
pub fn build(env: &Env, ex: &Example) -> Result<Built> {
    available(ex.name)?;
    let src = Path::new(EXAMPLES);
    let dir = env.file(ex.dir);
    let _ = std::fs::remove_dir_all(&dir);
    let app = dir.join(ex.name);
    copy_dir(&src.join(ex.name), &app)?;
    copy_dir(&src.join("common"), &dir.join("common"))?;
    let mut steps = vec![format!(
        "cp -r {EXAMPLES}/{} {EXAMPLES}/common {}",
        ex.name,
        dir.display()
    )];
    for (file, text) in &ex.patches {
        let mut patch = Command::new("patch");
        patch.args(["-p1", "--forward", "-d"]).arg(&app);
        run_step(patch, Some(text), &mut steps)?;
        if let Some(s) = steps.last_mut() {
            *s = format!("{s} < benches/{file}");
        }
    }

    let mut h = Fnv::default();
    hash_tree(&mut h, &dir, &dir)?;
    h.add(pkg_config(&["--modversion", "libdpdk"]).as_bytes());
    h.add(pkg_config(&["--cflags", "--libs", "libdpdk"]).as_bytes());
    let key = format!("{}-{:016x}", ex.binary, h.value());
    let bin = app.join(format!("build/{}-shared", ex.binary));
    let cached = env.cache.as_ref().map(|c| c.join(&key));

    if let Some(c) = cached.as_ref().filter(|c| c.is_file()) {
        std::fs::create_dir_all(app.join("build"))
            .map_err(|e| format!("cannot create {}: {e}", app.join("build").display()))?;
        std::fs::copy(c, &bin)
            .map_err(|e| format!("cannot copy {} to {}: {e}", c.display(), bin.display()))?;
        steps.push(format!(
            "(make -C {} shared: taken from the build cache, {})",
            app.display(),
            c.display()
        ));
        return Ok(Built {
            bin,
            src: app,
            steps,
            cached: true,
        });
    }

    let mut make = Command::new("make");
    make.arg("-C").arg(&app).arg("shared");
    run_step(make, None, &mut steps)?;
    if !bin.exists() {
        return Err(format!("make shared did not produce {}", bin.display()));
    }
    if let Some(c) = &cached {
        // A cache that cannot be written only costs the next run a build.
        if let Some(parent) = c.parent()
            && std::fs::create_dir_all(parent).is_ok()
        {
            let tmp = c.with_extension("tmp");
            if std::fs::copy(&bin, &tmp).is_ok() {
                let _ = std::fs::rename(&tmp, c);
            }
        }
    }
    Ok(Built {
        bin,
        src: app,
        steps,
        cached: false,
    })
}

/// How to start an example.
#[derive(Debug, Clone)]
pub struct AppSpec {
    /// A name for messages (`l3fwd-lpm`).
    pub name: String,
    /// `-l` (the lcores).
    pub lcores: String,
    /// EAL memory and general flags (`hugepages::Memory::eal_flags`);
    /// `--no-telemetry` is dropped.
    pub eal: Vec<String>,
    /// `--vdev` values, port 0 first.
    pub vdevs: Vec<String>,
    /// The application's own arguments (after `--`).
    pub args: Vec<String>,
    /// `--file-prefix`.
    pub prefix: String,
    /// The port on which reception shows that forwarding began.
    pub ingress: u16,
}

/// A running example.
#[derive(Debug)]
pub struct App {
    proc: Proc,
    telemetry: Telemetry,
    prefix: String,
}

impl App {
    /// Starts `bin` as `spec` says, with its output in `log`, waits for its
    /// telemetry socket and for port `spec.ingress` to receive.
    pub fn start(bin: &Path, spec: &AppSpec, log: &Path) -> Result<App> {
        for d in telemetry::runtime_dirs(&spec.prefix) {
            let _ = std::fs::remove_dir_all(d);
        }
        let mut cmd = Command::new(bin);
        cmd.args(["-l", &spec.lcores]);
        cmd.args(spec.eal.iter().filter(|a| *a != "--no-telemetry"));
        cmd.arg(format!("--file-prefix={}", spec.prefix));
        for v in &spec.vdevs {
            cmd.arg(format!("--vdev={v}"));
        }
        cmd.arg("--").args(&spec.args);
        let mut proc = Proc::spawn(&spec.name, cmd, log, false)?;
        let mut path = None;
        wait_for(
            &format!("{}'s telemetry socket", spec.name),
            Duration::from_secs(60),
            || {
                proc.check_running()?;
                path = telemetry::socket_path(&spec.prefix);
                Ok(path.is_some())
            },
        )?;
        let path = path.ok_or("no telemetry socket")?;
        let telemetry = Telemetry::connect(&path)?;
        let mut app = App {
            proc,
            telemetry,
            prefix: spec.prefix.clone(),
        };
        wait_for(
            &format!("{} to receive on port {}", spec.name, spec.ingress),
            Duration::from_secs(30),
            || {
                app.proc.check_running()?;
                Ok(app
                    .telemetry
                    .stats(spec.ingress)
                    .is_ok_and(|s| s.ipackets > 0))
            },
        )?;
        Ok(app)
    }

    /// The command line.
    pub fn command(&self) -> &[String] {
        self.proc.command()
    }

    /// The counters of ports 0..n.
    pub fn stats(&mut self, n: u16) -> Result<Vec<EthStats>> {
        self.proc.check_running()?;
        (0..n).map(|p| self.telemetry.stats(p)).collect()
    }

    /// The end of its output.
    pub fn log_tail(&self, lines: usize) -> String {
        self.proc.log_tail(lines)
    }

    /// Its whole output so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(self.proc.log()).unwrap_or_default()
    }

    /// Stops it (SIGTERM, SIGKILL after 3 s) and removes its runtime
    /// directory. Returns whether it exited on SIGTERM.
    pub fn stop(mut self) -> Result<bool> {
        self.proc.signal(rustix::process::Signal::TERM)?;
        let exited = self.proc.wait_timeout(Duration::from_secs(3))?.is_some();
        if !exited {
            self.proc.kill()?;
        }
        for d in telemetry::runtime_dirs(&self.prefix) {
            let _ = std::fs::remove_dir_all(d);
        }
        Ok(exited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_fnv1a_and_lengths_separate_concatenations() {
        // FNV-1a 64 of the empty input is the offset basis.
        assert_eq!(Fnv::default().value(), 0xcbf2_9ce4_8422_2325);
        let (mut a, mut b) = (Fnv::default(), Fnv::default());
        a.add(b"ab");
        a.add(b"c");
        b.add(b"a");
        b.add(b"bc");
        assert_ne!(a.value(), b.value());
    }
}
