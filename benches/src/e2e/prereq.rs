//! What the benchmark needs before it starts: dpdk-testpmd, the DPDK PMDs
//! it uses (net_pcap, net_null, net_memif), `stdbuf`, and this workspace's
//! binaries. Each missing piece is reported with how to get it; all of them
//! are listed at once.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Result;

/// The PMDs of the vdevs the benchmark uses, as their shared objects.
pub const PMDS: [(&str, &str); 3] = [
    ("net_pcap", "librte_net_pcap.so"),
    ("net_null", "librte_net_null.so"),
    ("net_memif", "librte_net_memif.so"),
];

/// What was found.
#[derive(Debug, Clone)]
pub struct Found {
    /// dpdk-testpmd.
    pub testpmd: PathBuf,
    /// stdbuf (coreutils).
    pub stdbuf: PathBuf,
    /// The directory the PMDs were found in.
    pub pmds_dir: PathBuf,
    /// DPDK's version (`pkg-config --modversion libdpdk`, or "unknown").
    pub dpdk_version: String,
}

/// `name` on the PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn pkg_config(args: &[&str]) -> Option<String> {
    let out = Command::new("pkg-config").args(args).output().ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// The directories where EAL may load PMDs from: `pkg-config --variable=pmdsdir
/// libdpdk` when set, then Debian's /usr/lib/<triplet>/dpdk/pmds-*.
fn pmd_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = pkg_config(&["--variable=pmdsdir", "libdpdk"]) {
        dirs.push(PathBuf::from(d));
    }
    for lib in [
        "/usr/lib/x86_64-linux-gnu/dpdk",
        "/usr/lib/aarch64-linux-gnu/dpdk",
        "/usr/lib64/dpdk",
    ] {
        if let Ok(rd) = std::fs::read_dir(lib) {
            let mut found: Vec<PathBuf> = rd
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("pmds-"))
                })
                .collect();
            found.sort();
            dirs.extend(found);
        }
    }
    dirs
}

/// Whether `dir` holds `so` or a versioned `so.N`.
fn has_pmd(dir: &Path, so: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with(so))
    })
}

/// Checks everything; `bins` are this workspace's binaries needed in
/// `bin_dir` (target/release).
pub fn check(bin_dir: &Path, bins: &[&str]) -> Result<Found> {
    let mut missing: Vec<String> = Vec::new();

    let testpmd = which("dpdk-testpmd");
    if testpmd.is_none() {
        missing.push(
            "dpdk-testpmd is not on the PATH: install Debian's `dpdk-dev` package \
             (apt-get install dpdk-dev)"
                .into(),
        );
    }
    let stdbuf = which("stdbuf");
    if stdbuf.is_none() {
        missing.push("stdbuf is not on the PATH: install `coreutils`".into());
    }

    let (pmds_dir, pmds_missing) = find_pmds(&PMDS);
    missing.extend(pmds_missing);
    missing.extend(missing_bins(bin_dir, bins));

    match (testpmd, stdbuf, pmds_dir) {
        (Some(testpmd), Some(stdbuf), Some(pmds_dir)) if missing.is_empty() => Ok(Found {
            testpmd,
            stdbuf,
            pmds_dir,
            dpdk_version: pkg_config(&["--modversion", "libdpdk"])
                .unwrap_or_else(|| "unknown".into()),
        }),
        _ => Err(format!(
            "missing prerequisites:\n  - {}",
            missing.join("\n  - ")
        )),
    }
}

/// The first PMD directory with every PMD of `pmds`, or what is missing.
fn find_pmds(pmds: &[(&str, &str)]) -> (Option<PathBuf>, Vec<String>) {
    let mut missing = Vec::new();
    let dirs = pmd_dirs();
    let pmds_dir = dirs
        .iter()
        .find(|d| pmds.iter().all(|(_, so)| has_pmd(d, so)))
        .cloned();
    if pmds_dir.is_none() {
        for &(pmd, so) in pmds {
            if !dirs.iter().any(|d| has_pmd(d, so)) {
                let pkg = match pmd {
                    "net_pcap" => "librte-net-pcap23",
                    "net_null" => "librte-net-null23",
                    _ => "librte-net-memif23",
                };
                missing.push(format!(
                    "the DPDK PMD {pmd} ({so}) is in none of [{}]: install Debian's `{pkg}` \
                     (pulled in by `dpdk`)",
                    dirs.iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        if dirs.is_empty() {
            missing.push(
                "no DPDK PMD directory (pkg-config --variable=pmdsdir libdpdk, \
                 /usr/lib/x86_64-linux-gnu/dpdk/pmds-*): install `dpdk` and `libdpdk-dev`"
                    .into(),
            );
        }
    }

    (pmds_dir, missing)
}

/// This workspace's `bins` that are not built in `bin_dir`, with how to
/// build each.
fn missing_bins(bin_dir: &Path, bins: &[&str]) -> Vec<String> {
    let mut missing = Vec::new();
    for bin in bins {
        if !is_executable(&bin_dir.join(bin)) {
            let how = match *bin {
                "mwrouterd" => "cargo build --release --features dpdk -p control --bins",
                "mwctl" => "cargo build --release -p mwctl --bins",
                "mwgen" => "cargo build --release --features dpdk -p mwgen --bins",
                "mwlab" => "cargo build --release -p mwlab --bins",
                _ => "cargo build --release",
            };
            missing.push(format!(
                "{} is not built: run benches/e2e (which builds it) or `{how}`",
                bin_dir.join(bin).display()
            ));
        }
    }

    missing
}

/// Checks what the soak needs: `bins` in `bin_dir`, and for the default
/// mode (`dpdk`) `taskset` and the PMDs of memif and null ports.
pub fn check_soak(bin_dir: &Path, bins: &[&str], dpdk: bool) -> Result<()> {
    let mut missing = missing_bins(bin_dir, bins);
    if dpdk {
        if which("taskset").is_none() {
            missing.push("taskset is not on the PATH: install `util-linux`".into());
        }
        missing.extend(find_pmds(&PMDS[1..]).1);
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "missing prerequisites:\n  - {}",
            missing.join("\n  - ")
        ))
    }
}

/// Copies this workspace's `bins` from `bin_dir` into `to` (so that a
/// rebuild in the shared target directory during the run, perhaps without
/// the `dpdk` feature, does not change them under the benchmark), and
/// checks that those that drive DPDK ports were built with it (they link
/// librte_eal). Returns the directory of the copies.
pub fn snapshot_bins(bin_dir: &Path, bins: &[&str], to: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    for bin in bins {
        let (from, dest) = (bin_dir.join(bin), to.join(bin));
        std::fs::copy(&from, &dest)
            .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), dest.display()))?;
        if matches!(*bin, "mwrouterd" | "mwgen") {
            let image =
                std::fs::read(&dest).map_err(|e| format!("cannot read {}: {e}", dest.display()))?;
            let needle = b"librte_eal.so";
            if !image.windows(needle.len()).any(|w| w == needle) {
                let pkg = if *bin == "mwrouterd" {
                    "control"
                } else {
                    "mwgen"
                };
                return Err(format!(
                    "{} was built without the `dpdk` feature (it does not link librte_eal): \
                     run benches/e2e, which builds it, or `cargo build --release --features dpdk \
                     -p {pkg} --bin {bin}` (another build in the same target directory may have \
                     replaced it)",
                    from.display()
                ));
            }
        }
    }
    Ok(to.to_path_buf())
}
