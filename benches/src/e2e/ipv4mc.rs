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

use super::examples::{self, App, AppSpec, Example};
use super::telemetry::EthStats;
use super::{Env, Result};

/// Where Debian's `dpdk-doc` installs the examples.
pub const EXAMPLES: &str = examples::EXAMPLES;

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

/// Copies the example and `common/` beside it into the scratch directory,
/// applies [`PATCH`] (and [`CACHE_PATCH`] when `cache` is set) and runs
/// `make shared` (or takes the binary from the build cache:
/// [`examples::build`]).
pub fn build(env: &Env, cache: bool) -> Result<Built> {
    let mut patches = vec![("ipv4_multicast.patch", PATCH)];
    if cache {
        patches.push(("ipv4_multicast-cache.patch", CACHE_PATCH));
    }
    let b = examples::build(
        env,
        &Example {
            name: "ipv4_multicast",
            binary: "ipv4_multicast",
            patches,
            dir: if cache {
                "ipv4_multicast-cache-src"
            } else {
                "ipv4_multicast-src"
            },
        },
    )?;
    Ok(Built {
        bin: b.bin,
        steps: b.steps,
    })
}

/// A running ipv4_multicast.
#[derive(Debug)]
pub struct Ipv4Multicast {
    app: App,
}

impl Ipv4Multicast {
    /// Starts the example on `lcore` (its only lcore: it forwards there)
    /// with `eal` (memory flags; `--no-telemetry` is dropped: the counters
    /// are read through telemetry) and the vdevs in port order, and waits
    /// for its telemetry socket and for the last port (the pcap's) to
    /// receive.
    pub fn start(
        bin: &Path,
        eal: &[String],
        lcore: u32,
        vdevs: &[String],
        prefix: &str,
        log: &Path,
    ) -> Result<Ipv4Multicast> {
        let spec = AppSpec {
            name: "ipv4_multicast".into(),
            lcores: lcore.to_string(),
            eal: eal.to_vec(),
            vdevs: vdevs.to_vec(),
            args: ["-p", PORT_MASK, "-q", "5"].map(String::from).to_vec(),
            prefix: prefix.into(),
            ingress: (vdevs.len() - 1) as u16,
        };
        Ok(Ipv4Multicast {
            app: App::start(bin, &spec, log)?,
        })
    }

    /// The command line.
    pub fn command(&self) -> &[String] {
        self.app.command()
    }

    /// The counters of ports 0..n.
    pub fn stats(&mut self, n: u16) -> Result<Vec<EthStats>> {
        self.app.stats(n)
    }

    /// The end of its output.
    pub fn log_tail(&self, lines: usize) -> String {
        self.app.log_tail(lines)
    }

    /// Stops it (it has no handler for SIGTERM: the signal ends it) and
    /// removes its runtime directory.
    pub fn stop(self) -> Result<()> {
        self.app.stop().map(|_| ())
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
