//! Hugepages for the run, and the EAL memory flags that follow from them.
//!
//! As root, [`reserve`] reads `/proc/sys/vm/nr_hugepages`, writes the
//! number the run wants (2 MB pages), mounts hugetlbfs on /dev/hugepages
//! when no hugetlbfs is mounted, and returns a [`Reservation`] guard that
//! puts the previous number back (and unmounts what it mounted) when it is
//! dropped: at the end, on an error, and after Ctrl-C (the interrupt flag
//! turns into an error that unwinds to it). Not root, or the kernel gives
//! too few pages: the run uses `--no-huge -m 512` and says so.
//! (docs/backends.md "What needs hugepages": they double the null PMD's rate; with them EAL
//! runs `--in-memory`, which 22.11 refuses together with `--no-huge`.)

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";
const MOUNT_POINT: &str = "/dev/hugepages";
/// Fewer pages than this and the run goes without hugepages.
const MIN_PAGES: u64 = 256;
/// Memory for each DPDK process without hugepages (`-m`, MB).
pub const NO_HUGE_MB: u32 = 512;

/// How the run's DPDK processes get their memory.
#[derive(Debug, Clone)]
pub enum Memory {
    /// 2 MB hugepages (`--in-memory`).
    Hugepages {
        /// Pages reserved for the run (nr_hugepages during it).
        pages: u64,
        /// nr_hugepages before the run.
        previous: u64,
        /// The hugetlbfs mount point EAL uses.
        mount: PathBuf,
        /// Whether the benchmark mounted it.
        mounted_here: bool,
    },
    /// Anonymous memory (`--no-huge -m 512 --no-shconf`).
    NoHuge {
        /// Why not hugepages.
        reason: String,
    },
}

impl Memory {
    /// The EAL flags of one DPDK process (each process has its own EAL
    /// configuration: `--in-memory` or `--no-shconf`), without `-l`.
    pub fn eal_flags(&self) -> Vec<String> {
        let mut v: Vec<String> = match self {
            Memory::Hugepages { .. } => vec!["--in-memory".into()],
            Memory::NoHuge { .. } => vec![
                "--no-huge".into(),
                "-m".into(),
                NO_HUGE_MB.to_string(),
                "--no-shconf".into(),
            ],
        };
        v.extend(["--no-pci", "--no-telemetry", "--log-level=warning"].map(String::from));
        v
    }

    /// Whether hugepages are used.
    pub fn huge(&self) -> bool {
        matches!(self, Memory::Hugepages { .. })
    }

    /// One line for the output.
    pub fn describe(&self) -> String {
        match self {
            Memory::Hugepages {
                pages,
                previous,
                mount,
                mounted_here,
            } => format!(
                "hugepages: {pages} x 2 MB reserved for the run (nr_hugepages was {previous}, \
                 put back at the end); hugetlbfs on {}{}; EAL --in-memory",
                mount.display(),
                if *mounted_here {
                    " (mounted for the run)"
                } else {
                    ""
                }
            ),
            Memory::NoHuge { reason } => format!(
                "no hugepages ({reason}): EAL --no-huge -m {NO_HUGE_MB} --no-shconf \
                 (DPDK's rates are lower without hugepages)"
            ),
        }
    }

    /// The JSON record of the mode.
    pub fn to_json(&self) -> Value {
        match self {
            Memory::Hugepages {
                pages,
                previous,
                mount,
                mounted_here,
            } => json!({
                "hugepages": true,
                "page_size_kb": 2048,
                "pages": pages,
                "previous_nr_hugepages": previous,
                "mount": mount.display().to_string(),
                "mounted_for_run": mounted_here,
                "eal_flags": self.eal_flags(),
            }),
            Memory::NoHuge { reason } => json!({
                "hugepages": false,
                "reason": reason,
                "eal_flags": self.eal_flags(),
            }),
        }
    }
}

/// Puts the hugepage reservation back as it was when dropped.
#[derive(Debug)]
pub struct Reservation {
    previous: u64,
    unmount: Option<PathBuf>,
    remove_dir: Option<PathBuf>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(m) = self.unmount.take() {
            match Command::new("umount").arg(&m).status() {
                Ok(st) if st.success() => {}
                Ok(st) => eprintln!("e2e: umount {} failed ({st})", m.display()),
                Err(e) => eprintln!("e2e: cannot run umount {}: {e}", m.display()),
            }
        }
        if let Some(d) = self.remove_dir.take() {
            let _ = std::fs::remove_dir(&d);
        }
        match std::fs::write(NR_HUGEPAGES, format!("{}\n", self.previous)) {
            Ok(()) => println!(
                "hugepages: nr_hugepages put back to {} (now {})",
                self.previous,
                read_u64(NR_HUGEPAGES).map_or_else(|| "?".into(), |v| v.to_string())
            ),
            Err(e) => eprintln!(
                "e2e: could not put nr_hugepages back to {}: {e}; do it by hand: \
                 echo {} > {NR_HUGEPAGES}",
                self.previous, self.previous
            ),
        }
    }
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A mounted hugetlbfs of the default page size (2 MB), from /proc/mounts.
fn hugetlbfs_mount() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 4 && f[2] == "hugetlbfs" && !f[3].contains("pagesize=1G"))
            .then(|| PathBuf::from(f[1]))
    })
}

/// HugePages_Free of /proc/meminfo.
fn free_pages() -> u64 {
    crate::sysinfo::proc_number("/proc/meminfo", "HugePages_Free").unwrap_or(0)
}

/// Reserves `pages` 2 MB hugepages for the run when possible (root), and
/// says what it did. `disabled`: the operator asked for no hugepages.
pub fn reserve(pages: u64, disabled: bool) -> (Memory, Option<Reservation>) {
    let no_huge = |reason: String| {
        let m = Memory::NoHuge { reason };
        println!("{}", m.describe());
        (m, None)
    };
    if disabled {
        return no_huge("--no-huge given".into());
    }
    if !rustix::process::geteuid().is_root() {
        return no_huge("not root: reserving hugepages needs root".into());
    }
    let Some(previous) = read_u64(NR_HUGEPAGES) else {
        return no_huge(format!("cannot read {NR_HUGEPAGES}"));
    };

    // Mount hugetlbfs when none is mounted (EAL finds it in /proc/mounts).
    let mut guard = Reservation {
        previous,
        unmount: None,
        remove_dir: None,
    };
    let mount = match hugetlbfs_mount() {
        Some(m) => m,
        None => {
            let dir = Path::new(MOUNT_POINT);
            if !dir.exists() {
                if let Err(e) = std::fs::create_dir_all(dir) {
                    return no_huge(format!("cannot create {MOUNT_POINT}: {e}"));
                }
                guard.remove_dir = Some(dir.into());
            }
            match Command::new("mount")
                .args(["-t", "hugetlbfs", "nodev", MOUNT_POINT])
                .status()
            {
                Ok(st) if st.success() => {
                    println!("hugepages: mounted hugetlbfs on {MOUNT_POINT} for the run");
                    guard.unmount = Some(dir.into());
                }
                Ok(st) => {
                    return no_huge(format!("mount -t hugetlbfs on {MOUNT_POINT} failed ({st})"));
                }
                Err(e) => return no_huge(format!("cannot run mount: {e}")),
            }
            dir.into()
        }
    };
    let mounted_here = guard.unmount.is_some();

    // Reserve. The guard writes `previous` back whatever happens next.
    let want = pages.max(previous);
    if let Err(e) = std::fs::write(NR_HUGEPAGES, format!("{want}\n")) {
        drop(guard);
        return no_huge(format!("cannot write {want} to {NR_HUGEPAGES}: {e}"));
    }
    let got = read_u64(NR_HUGEPAGES).unwrap_or(0);
    let free = free_pages();
    if free < MIN_PAGES.min(pages) {
        drop(guard);
        return no_huge(format!(
            "asked the kernel for {want} hugepages, it gave {got} ({free} free)"
        ));
    }
    let m = Memory::Hugepages {
        pages: got,
        previous,
        mount,
        mounted_here,
    };
    println!("{}", m.describe());
    (m, Some(guard))
}
