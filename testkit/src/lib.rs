//! Test support shared by mwrouter's crates.
//!
//! Tests that need something the machine may lack (root, network
//! namespaces, DPDK) probe for it and call [`skip`] when it is missing: the
//! test then returns early with a visible `SKIP:` line, also appended to the
//! file named by `MWROUTER_SKIP_LOG` so that `scripts/test.sh` prints a
//! summary. With `MWROUTER_REQUIRE_ALL=1` (set by `.ci/run`) a skip is a
//! failure instead, so that CI can never pass by skipping.

pub mod chromium;

use std::io::Write;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Whether every probe-based skip must fail (`MWROUTER_REQUIRE_ALL=1`).
pub fn require_all() -> bool {
    std::env::var("MWROUTER_REQUIRE_ALL").is_ok_and(|v| v == "1")
}

/// Reports that `test` cannot run because of `why`: panics under
/// `MWROUTER_REQUIRE_ALL=1`, otherwise prints and logs a `SKIP:` line.
/// The caller returns right after.
pub fn skip(test: &str, why: &str) {
    if require_all() {
        panic!("{test}: required (MWROUTER_REQUIRE_ALL=1) but cannot run: {why}");
    }
    let line = format!("SKIP: {test}: {why}");
    eprintln!("{line}");
    if let Ok(path) = std::env::var("MWROUTER_SKIP_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// Whether the process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // /proc/self/status carries "Uid: real effective saved fs".
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// Whether `ip netns` works here (root and iproute2).
pub fn netns_available() -> bool {
    is_root()
        && Command::new("ip")
            .args(["netns", "list"])
            .output()
            .is_ok_and(|o| o.status.success())
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A binary of the workspace, from the directory of the running test's
/// profile (`target/<profile>/`), built with `cargo build -p PACKAGE --bin
/// NAME` in that profile when it is missing (as when one test binary runs on
/// its own). `features` are passed to that build.
pub fn workspace_bin(package: &str, name: &str, features: &[&str]) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test's executable");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>/deps/<test>")
        .to_path_buf();
    let bin = dir.join(name);
    if !bin.exists() {
        let profile = dir
            .file_name()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let profile = if profile == "debug" {
            "dev".into()
        } else {
            profile
        };
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.args(["build", "-p", package, "--bin", name, "--profile", &profile]);
        if !features.is_empty() {
            cmd.args(["--features", &features.join(",")]);
        }
        let st = cmd.status().expect("running cargo");
        assert!(st.success(), "cargo build -p {package} --bin {name} failed");
    }
    bin
}

/// The EAL arguments of a test that starts DPDK (in its own process or in
/// a daemon it runs): no hugepages (512 MB of anonymous memory), no PCI
/// devices (vdevs only), no shared configuration files and no telemetry
/// socket, so that it runs side by side with other DPDK test processes; on
/// cores 0-1; EAL's warnings only.
pub fn dpdk_eal_args() -> Vec<String> {
    [
        "--no-huge",
        "-m",
        "512",
        "--no-pci",
        "--no-shconf",
        "--no-telemetry",
        "-l",
        "0-1",
        "--log-level=warning",
    ]
    .map(String::from)
    .to_vec()
}

/// How a program started by [`spawn_until_ready`] ended before it was
/// ready.
#[derive(Debug)]
pub struct Exited {
    /// Its exit code, if it exited with one.
    pub code: Option<i32>,
    /// What it wrote on standard error.
    pub stderr: String,
}

impl std::fmt::Display for Exited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exited ({:?}): {}", self.code, self.stderr)
    }
}

/// Starts `cmd` (standard output discarded, standard error kept) and waits
/// until `ready` exists (a daemon's socket); panics after `timeout`. If the
/// program exits first, returns its exit code and standard error.
pub fn spawn_until_ready(
    cmd: &mut Command,
    ready: &std::path::Path,
    timeout: std::time::Duration,
) -> Result<std::process::Child, Exited> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the program");
    let deadline = std::time::Instant::now() + timeout;
    while !ready.exists() {
        if let Some(st) = child.try_wait().expect("waiting") {
            let mut stderr = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut stderr);
            }
            return Err(Exited {
                code: st.code(),
                stderr,
            });
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} did not appear within {timeout:?}",
            ready.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(child)
}

/// A child process that is killed and reaped when dropped while it still
/// runs: a test that fails half way leaves no daemon behind (polling its
/// ports on the machine's cores).
#[derive(Debug)]
pub struct ChildGuard(Option<std::process::Child>);

impl ChildGuard {
    /// Guards `child`.
    pub fn new(child: std::process::Child) -> ChildGuard {
        ChildGuard(Some(child))
    }

    /// The child, no longer guarded (to wait for it).
    pub fn into_inner(mut self) -> std::process::Child {
        self.0.take().expect("a guarded child")
    }
}

impl std::ops::Deref for ChildGuard {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        self.0.as_ref().expect("a guarded child")
    }
}

impl std::ops::DerefMut for ChildGuard {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        self.0.as_mut().expect("a guarded child")
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut()
            && let Ok(None) = c.try_wait()
        {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A name unique to this process and call, at most 15 bytes (an interface
/// name's limit), starting with `prefix` (at most 4 bytes).
pub fn unique_name(prefix: &str) -> String {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}{:x}{n:x}", std::process::id() & 0xFFFFF)
}

/// A veth pair whose ends are named `a` and `b`, both up, each optionally
/// moved into a namespace. Removed on drop.
#[derive(Debug)]
pub struct VethPair {
    /// The first end.
    pub a: String,
    /// The second end.
    pub b: String,
}

impl VethPair {
    /// Creates a veth pair in the current namespace, both ends up.
    pub fn new(prefix: &str) -> Result<VethPair, String> {
        let a = unique_name(prefix);
        let b = format!("{a}p");
        ip(&["link", "add", &a, "type", "veth", "peer", "name", &b])?;
        let pair = VethPair { a, b };
        ip(&["link", "set", &pair.a, "up"])?;
        ip(&["link", "set", &pair.b, "up"])?;
        Ok(pair)
    }

    /// Moves end `end` (one of `a`, `b`) into namespace `ns` and brings it up there.
    pub fn move_to(&self, end: &str, ns: &Netns) -> Result<(), String> {
        ip(&["link", "set", end, "netns", &ns.name])?;
        ns.exec(&["ip", "link", "set", end, "up"])
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        // Deleting one end removes both; it may already be gone with a namespace.
        let _ = ip(&["link", "del", &self.a]);
    }
}

/// A network namespace, removed (with its interfaces) on drop.
#[derive(Debug)]
pub struct Netns {
    /// Its name under /run/netns.
    pub name: String,
}

impl Netns {
    /// Creates a namespace with a unique name and its loopback up.
    pub fn new(prefix: &str) -> Result<Netns, String> {
        let name = unique_name(prefix);
        ip(&["netns", "add", &name])?;
        let ns = Netns { name };
        ns.exec(&["ip", "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// Runs a command inside the namespace and waits for it.
    pub fn exec(&self, cmd: &[&str]) -> Result<(), String> {
        let mut args = vec!["netns", "exec", self.name.as_str()];
        args.extend_from_slice(cmd);
        ip(&args)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// A copy of `bin` that any user can run: a new directory under the system's
/// temporary directory (`std::env::temp_dir()`), mode 0755, holding the
/// binary, mode 0755. For tests that run a program as another user: the
/// checkout may lie under a private directory (a `mktemp -d`, root's home),
/// which that user cannot enter. The directory is removed when the returned
/// guard drops. Fails with the reason when the temporary directory itself
/// is not reachable by others.
pub fn runnable_by_anyone(bin: &std::path::Path) -> Result<RunnableCopy, String> {
    use std::os::unix::fs::PermissionsExt;
    let base = std::env::temp_dir();
    reachable_by_others(&base)?;
    let dir = base.join(unique_name("mwb"));
    std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let guard = RunnableCopy {
        path: dir.join(bin.file_name().unwrap_or_default()),
        dir,
    };
    std::fs::set_permissions(&guard.dir, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", guard.dir.display()))?;
    std::fs::copy(bin, &guard.path).map_err(|e| format!("{}: {e}", bin.display()))?;
    std::fs::set_permissions(&guard.path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", guard.path.display()))?;
    Ok(guard)
}

/// A binary copied by [`runnable_by_anyone`]; its directory goes when this drops.
#[derive(Debug)]
pub struct RunnableCopy {
    dir: std::path::PathBuf,
    /// The copy.
    pub path: std::path::PathBuf,
}

impl Drop for RunnableCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Checks that a user other than the owner can reach `path`: every
/// directory from `/` down to it (inclusive, when it is a directory) must
/// be searchable by others (`o+x`). The error names the first that is not.
pub fn reachable_by_others(path: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for dir in path.ancestors().filter(|p| p.is_dir()) {
        let mode = std::fs::metadata(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .permissions()
            .mode();
        if mode & 0o001 == 0 {
            return Err(format!(
                "{} (mode {:o}) cannot be entered by other users",
                dir.display(),
                mode & 0o7777
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_short() {
        let a = unique_name("mwt");
        let b = unique_name("mwt");
        assert_ne!(a, b);
        assert!(a.len() <= 14, "{a}");
    }

    #[test]
    fn veth_pair_in_namespace() {
        if !netns_available() {
            skip("testkit::veth_pair_in_namespace", "needs root and ip netns");
            return;
        }
        let ns = Netns::new("mwn").unwrap();
        let v = VethPair::new("mwv").unwrap();
        v.move_to(&v.b.clone(), &ns).unwrap();
        ns.exec(&["ip", "link", "show", &v.b]).unwrap();
        drop(v);
        drop(ns);
    }

    #[test]
    fn a_runnable_copy_is_reachable_and_goes_away() {
        let me = std::env::current_exe().unwrap();
        let copy = runnable_by_anyone(&me).unwrap();
        assert!(copy.path.exists());
        reachable_by_others(&copy.path).unwrap();
        let dir = copy.path.parent().unwrap().to_path_buf();
        drop(copy);
        assert!(!dir.exists());
        let private = std::env::temp_dir().join(unique_name("mwp"));
        std::fs::create_dir(&private).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let e = reachable_by_others(&private).unwrap_err();
        assert!(e.contains("cannot be entered"), "{e}");
        std::fs::remove_dir(&private).unwrap();
    }
}

/// The checked-in corpus of a cargo-fuzz target, replayed in the stable
/// test suite (fuzz/README.md "Corpus replay").
pub mod corpus {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::path::{Path, PathBuf};

    /// The files of `dir`, sorted; panics when it cannot be read.
    pub fn files(dir: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.is_file())
            .collect();
        v.sort();
        v
    }

    /// Runs `body` (the fuzz target's body) on every file of `dir`, the
    /// corpus of `target`; panics naming each input it panicked on, or
    /// when the corpus is empty.
    pub fn replay(target: &str, dir: &Path, body: impl Fn(&[u8])) {
        let inputs = files(dir);
        assert!(!inputs.is_empty(), "empty corpus {}", dir.display());
        let failures: Vec<String> = inputs
            .iter()
            .filter(|path| {
                let data = std::fs::read(path).expect("readable corpus file");
                catch_unwind(AssertUnwindSafe(|| body(&data))).is_err()
            })
            .map(|p| p.display().to_string())
            .collect();
        assert!(
            failures.is_empty(),
            "{target} failed on {} of {} inputs:\n{}",
            failures.len(),
            inputs.len(),
            failures.join("\n")
        );
    }
}
