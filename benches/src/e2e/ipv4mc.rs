//! DPDK's `ipv4_multicast` example as the multicast reference: built from
//! Debian's `dpdk-doc` sources with the adjustment of
//! `benches/ipv4_multicast.patch`, run on vdevs, its ethdev counters read
//! through the telemetry socket (the example prints none).
//!
//! The example receives on every port of its port mask (`-q 5`: all five on
//! its one lcore), looks the IPv4 destination up in its group table
//! (224.0.0.115 -> ports 0-3) and sends a copy out of each port: with four
//! ports, a header mbuf chained to the received mbuf, whose reference count
//! it raises by four (its `mcast_out_pkt` without a clone).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::process::{Proc, command_line, shell_words, wait_for};
use super::telemetry::{self, EthStats, Telemetry};
use super::{Env, Result};

/// Where Debian's `dpdk-doc` installs the examples.
pub const EXAMPLES: &str = "/usr/share/dpdk/examples";

/// The adjustment to the example (a unified diff against its main.c, with
/// the reasons before it), applied with `patch -p1`.
pub const PATCH: &str = include_str!("../../ipv4_multicast.patch");

/// The optional second adjustment (after [`PATCH`]): per-lcore mempool
/// caches of 256 instead of 32, for the variant "ipv4_multicast (cache
/// 256)".
pub const CACHE_PATCH: &str = include_str!("../../ipv4_multicast-cache.patch");

/// The group the example forwards to ports 0-3.
pub const GROUP: [u8; 4] = [224, 0, 0, 115];
/// The example's port mask: four egress ports and the ingress port.
pub const PORT_MASK: &str = "0x1F";

/// The built example.
#[derive(Debug, Clone)]
pub struct Built {
    /// The binary.
    pub bin: PathBuf,
    /// How it was built (for the report).
    pub steps: Vec<String>,
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
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

fn run_step(mut cmd: Command, stdin: Option<&str>, steps: &mut Vec<String>) -> Result<()> {
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

/// Copies the example and `common/` beside it into the scratch directory,
/// applies [`PATCH`] (and [`CACHE_PATCH`] when `cache` is set) and runs
/// `make shared`.
pub fn build(env: &Env, cache: bool) -> Result<Built> {
    let src = Path::new(EXAMPLES);
    if !src.join("ipv4_multicast/main.c").exists() || !src.join("common").is_dir() {
        return Err(format!(
            "DPDK's ipv4_multicast example is not in {EXAMPLES}: install Debian's `dpdk-doc` \
             (apt-get install dpdk-doc)"
        ));
    }
    for tool in ["make", "patch", "cc"] {
        if super::prereq::which(tool).is_none() {
            return Err(format!(
                "`{tool}` is not on the PATH: install build-essential and patch"
            ));
        }
    }
    let dir = env.file(if cache {
        "ipv4_multicast-cache-src"
    } else {
        "ipv4_multicast-src"
    });
    let _ = std::fs::remove_dir_all(&dir);
    let app = dir.join("ipv4_multicast");
    copy_dir(&src.join("ipv4_multicast"), &app)?;
    copy_dir(&src.join("common"), &dir.join("common"))?;
    let mut steps = vec![format!(
        "cp -r {EXAMPLES}/ipv4_multicast {EXAMPLES}/common {}",
        dir.display()
    )];
    let mut patch = Command::new("patch");
    patch.args(["-p1", "--forward", "-d"]).arg(&app);
    run_step(patch, Some(PATCH), &mut steps)?;
    if cache {
        let mut patch = Command::new("patch");
        patch.args(["-p1", "--forward", "-d"]).arg(&app);
        run_step(patch, Some(CACHE_PATCH), &mut steps)?;
    }
    let mut make = Command::new("make");
    make.arg("-C").arg(&app).arg("shared");
    run_step(make, None, &mut steps)?;
    let bin = app.join("build/ipv4_multicast-shared");
    if !bin.exists() {
        return Err(format!("make shared did not produce {}", bin.display()));
    }
    Ok(Built { bin, steps })
}

/// A running ipv4_multicast.
#[derive(Debug)]
pub struct Ipv4Multicast {
    proc: Proc,
    telemetry: Telemetry,
    prefix: String,
}

impl Ipv4Multicast {
    /// Starts the example on `lcore` (its only lcore: it forwards there)
    /// with `eal` (memory flags; `--no-telemetry` is dropped: the counters
    /// are read through telemetry) and the vdevs in port order, and waits
    /// for its telemetry socket.
    pub fn start(
        bin: &Path,
        eal: &[String],
        lcore: u32,
        vdevs: &[String],
        prefix: &str,
        log: &Path,
    ) -> Result<Ipv4Multicast> {
        for d in telemetry::runtime_dirs(prefix) {
            let _ = std::fs::remove_dir_all(d);
        }
        let mut cmd = Command::new(bin);
        cmd.args(["-l", &lcore.to_string()]);
        cmd.args(eal.iter().filter(|a| *a != "--no-telemetry"));
        cmd.arg(format!("--file-prefix={prefix}"));
        for v in vdevs {
            cmd.arg(format!("--vdev={v}"));
        }
        cmd.args(["--", "-p", PORT_MASK, "-q", "5"]);
        let mut proc = Proc::spawn("ipv4_multicast", cmd, log, false)?;
        let mut path = None;
        wait_for(
            "ipv4_multicast's telemetry socket",
            Duration::from_secs(30),
            || {
                proc.check_running()?;
                path = telemetry::socket_path(prefix);
                Ok(path.is_some())
            },
        )?;
        let path = path.ok_or("no telemetry socket")?;
        let telemetry = Telemetry::connect(&path)?;
        let mut app = Ipv4Multicast {
            proc,
            telemetry,
            prefix: prefix.to_string(),
        };
        // Forwarding has started once the last port (the pcap's) receives.
        let last = (vdevs.len() - 1) as u16;
        wait_for(
            "ipv4_multicast to receive on its last port",
            Duration::from_secs(30),
            || {
                app.proc.check_running()?;
                Ok(app.telemetry.stats(last).is_ok_and(|s| s.ipackets > 0))
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

    /// Stops it (it has no handler for SIGTERM: the signal ends it) and
    /// removes its runtime directory.
    pub fn stop(mut self) -> Result<()> {
        let r = self.proc.stop(Duration::from_secs(3)).map(|_| ());
        for d in telemetry::runtime_dirs(&self.prefix) {
            let _ = std::fs::remove_dir_all(d);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_removes_only_the_multi_segs_request() {
        let minus: Vec<&str> = PATCH
            .lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"))
            .collect();
        let plus: Vec<&str> = PATCH
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .collect();
        assert_eq!(minus, ["-\t\t.offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS,"]);
        assert!(plus.is_empty());
        assert!(PATCH.contains("--- a/main.c\n+++ b/main.c\n"));
    }

    #[test]
    fn the_cache_patch_changes_only_the_three_cache_sizes() {
        let changed = |sign: char| -> Vec<String> {
            CACHE_PATCH
                .lines()
                .filter(|l| l.starts_with(sign) && !l.starts_with("---") && !l.starts_with("+++"))
                .map(|l| l[1..].replace(", 256,", ", 32,"))
                .collect()
        };
        assert_eq!(changed('-').len(), 3);
        assert_eq!(changed('-'), changed('+'));
    }
}
