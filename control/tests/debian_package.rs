//! The Debian package (`scripts/package`, docs/daemon.md "Debian package")
//! installs on this machine, ships what it should, checks its own
//! configuration, upgrades over itself keeping a changed conffile, and
//! purges without leaving anything behind.
//!
//! It packages the binaries this test run already built (the profile
//! directory of the test's own executable, `target/ci` under
//! `scripts/test.sh`) instead of building the workspace again, runs lintian
//! on the result, and drives `dpkg` as root. It does not run when a package
//! named mwrouter is already on the machine: that one belongs to someone else.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const TEST: &str = "control::debian_package";
const PACKAGE: &str = "mwrouter";
const CONFFILE: &str = "/etc/mwrouter/router.toml";
const UNIT: &str = "/lib/systemd/system/mwrouterd.service";
/// The Wireshark dissector, where tshark loads global Lua plugins from.
const DISSECTOR: &str = "/usr/lib/x86_64-linux-gnu/wireshark/plugins/mwrouter.lua";
/// Keeps the dissector out of the installation: installed, tshark would load it
/// beside the copy that tools/mwdump/tests/wireshark.rs passes with
/// `-X lua_script:` in the same test run, and refuse the second protocol
/// "mw". Its place in the package is checked in the package's contents.
const NO_DISSECTOR: &str = "--path-exclude=/usr/lib/x86_64-linux-gnu/wireshark/*";

/// Every file the package must install (the man pages compressed by dh):
/// every tool, its man page and its bash and zsh completions.
const FILES: &[&str] = &[
    "/usr/sbin/mwrouterd",
    "/usr/bin/mwctl",
    "/usr/bin/mwtrace",
    "/usr/bin/mwdump",
    "/usr/bin/mwgen",
    "/usr/bin/mwlab",
    "/usr/share/man/man8/mwrouterd.8.gz",
    "/usr/share/man/man1/mwctl.1.gz",
    "/usr/share/man/man1/mwtrace.1.gz",
    "/usr/share/man/man1/mwdump.1.gz",
    "/usr/share/man/man1/mwgen.1.gz",
    "/usr/share/man/man1/mwlab.1.gz",
    "/usr/share/bash-completion/completions/mwrouterd",
    "/usr/share/bash-completion/completions/mwctl",
    "/usr/share/bash-completion/completions/mwtrace",
    "/usr/share/bash-completion/completions/mwdump",
    "/usr/share/bash-completion/completions/mwgen",
    "/usr/share/bash-completion/completions/mwlab",
    "/usr/share/zsh/vendor-completions/_mwrouterd",
    "/usr/share/zsh/vendor-completions/_mwctl",
    "/usr/share/zsh/vendor-completions/_mwtrace",
    "/usr/share/zsh/vendor-completions/_mwdump",
    "/usr/share/zsh/vendor-completions/_mwgen",
    "/usr/share/zsh/vendor-completions/_mwlab",
    CONFFILE,
    UNIT,
    "/usr/lib/sysusers.d/mwrouter.conf",
    "/usr/share/doc/mwrouter/README.md",
    "/usr/share/doc/mwrouter/docs/daemon.md.gz",
    "/usr/share/doc/mwrouter/copyright",
];

fn run(cmd: &mut Command) -> Output {
    let shown = format!("{cmd:?}");
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{shown}: {e}"))
}

fn run_ok(cmd: &mut Command) -> String {
    let shown = format!("{cmd:?}");
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{shown} failed: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// dpkg's state of `PACKAGE` ("not-installed" when dpkg never heard of it).
fn package_state() -> String {
    let out = run(Command::new("dpkg-query").args(["-W", "-f=${db:Status-Status}", PACKAGE]));
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !s.is_empty() {
        s
    } else {
        "not-installed".into()
    }
}

fn exists_in(db: &str, name: &str) -> bool {
    run(Command::new("getent").args([db, name]))
        .status
        .success()
}

/// Purges the package and removes the user and group this test made, also
/// when an assertion fails half-way.
struct Cleanup {
    made_user: bool,
    made_group: bool,
}

impl Cleanup {
    fn purge(&self) {
        let _ = run(Command::new("dpkg").args(["--purge", PACKAGE]));
        if self.made_user && exists_in("passwd", "mwrouter") {
            let _ = run(Command::new("userdel").arg("mwrouter"));
        }
        // sysusers.d gives the user a group of its own name.
        if self.made_user && exists_in("group", "mwrouter") {
            let _ = run(Command::new("groupdel").arg("mwrouter"));
        }
        if self.made_group && exists_in("group", "mwadmin") {
            let _ = run(Command::new("groupdel").arg("mwadmin"));
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        self.purge();
    }
}

/// The target directory and cargo profile of this test's own build.
fn own_build() -> (PathBuf, String) {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let name = profile_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let profile = if name == "debug" { "dev".into() } else { name };
    (profile_dir.parent().unwrap().to_path_buf(), profile)
}

#[test]
fn the_package_installs_upgrades_and_purges() {
    if !testkit::is_root() {
        testkit::skip(TEST, "not root (dpkg -i)");
        return;
    }
    let missing: Vec<&str> = [
        "dpkg-buildpackage",
        "dh",
        "lintian",
        "systemd-analyze",
        "systemd-sysusers",
    ]
    .into_iter()
    .filter(|t| !have(t))
    .collect();
    if !missing.is_empty() {
        testkit::skip(
            TEST,
            &format!(
                "missing {} (apt-get install dpkg-dev debhelper lintian systemd)",
                missing.join(" ")
            ),
        );
        return;
    }
    let state = package_state();
    if state != "not-installed" {
        testkit::skip(
            TEST,
            &format!("a package {PACKAGE} is already on this machine ({state}): not touching it"),
        );
        return;
    }

    // The binaries of this build, built now only where missing (a test run on
    // its own); then packaged as they are.
    let features: &[&str] = if cfg!(feature = "dpdk") {
        &["dpdk"]
    } else {
        &[]
    };
    for (package, bin, features) in [
        ("control", "mwrouterd", features),
        ("mwctl", "mwctl", &[][..]),
        ("mwctl", "mwtrace", &[][..]),
        ("mwdump", "mwdump", &[][..]),
        ("mwgen", "mwgen", features),
        ("mwlab", "mwlab", features),
        // Writes the man pages and completions; built, not installed.
        ("clidoc", "mwrouter-clidoc", &[][..]),
    ] {
        testkit::workspace_bin(package, bin, features);
    }
    let (target, profile) = own_build();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = run_ok(
        Command::new(repo.join("scripts/package"))
            .args(["--profile", &profile, "--no-build"])
            .env("CARGO_TARGET_DIR", &target),
    );
    let deb = PathBuf::from(out.lines().last().expect("scripts/package prints the .deb"));
    let deb_name = deb.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        deb_name.starts_with("mwrouter_") && deb_name.ends_with("_amd64.deb"),
        "{deb_name}"
    );

    // The daemon's DPDK libraries come from Debian's runtime packages.
    let depends = run_ok(
        Command::new("dpkg-deb")
            .args(["-f"])
            .arg(&deb)
            .arg("Depends"),
    );
    assert!(!depends.contains("-dev"), "Depends: {depends}");
    if cfg!(feature = "dpdk") {
        assert!(depends.contains("librte-"), "Depends: {depends}");
    }

    let contents = run_ok(Command::new("dpkg-deb").arg("-c").arg(&deb));
    assert!(
        contents.contains(&format!(".{DISSECTOR}")),
        "{DISSECTOR} not in the package: {contents}"
    );
    assert!(
        !contents.contains("mwrouter-clidoc"),
        "the generator of the man pages is in the package: {contents}"
    );

    let cleanup = Cleanup {
        made_user: !exists_in("passwd", "mwrouter"),
        made_group: !exists_in("group", "mwadmin"),
    };
    run_ok(Command::new("dpkg").args([NO_DISSECTOR, "-i"]).arg(&deb));
    assert_eq!(package_state(), "installed");

    for f in FILES {
        assert!(Path::new(f).is_file(), "{f} not installed");
    }
    let conffiles = run_ok(Command::new("dpkg-query").args(["-W", "-f=${Conffiles}", PACKAGE]));
    assert!(conffiles.contains(CONFFILE), "conffiles: {conffiles}");
    assert!(exists_in("passwd", "mwrouter"), "no user mwrouter");
    assert!(exists_in("group", "mwadmin"), "no group mwadmin");

    // The shipped configuration is valid as it is.
    run_ok(Command::new("/usr/sbin/mwrouterd").args(["--check", "--config", CONFFILE]));

    // The installed unit, as systemd reads it.
    let out = run(Command::new("systemd-analyze").args(["verify", UNIT]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "systemd-analyze verify: {err}");
    assert!(!err.contains("mwrouterd.service:"), "{err}");

    // An operator's change survives an upgrade (here over the same version).
    let changed = format!(
        "{}\n# changed on this box\n",
        std::fs::read_to_string(CONFFILE).unwrap()
    );
    std::fs::write(CONFFILE, &changed).unwrap();
    run_ok(Command::new("dpkg").args([NO_DISSECTOR, "-i"]).arg(&deb));
    assert_eq!(package_state(), "installed");
    assert_eq!(std::fs::read_to_string(CONFFILE).unwrap(), changed);

    // Purged: nothing of it left, the conffile and the unit's links included.
    cleanup.purge();
    assert_eq!(package_state(), "not-installed");
    for f in FILES.iter().chain(&[
        "/etc/mwrouter",
        DISSECTOR,
        "/etc/systemd/system/multi-user.target.wants/mwrouterd.service",
    ]) {
        assert!(!Path::new(f).exists(), "{f} left after purge");
    }
    if cleanup.made_user {
        assert!(!exists_in("passwd", "mwrouter"), "user mwrouter left");
        assert!(!exists_in("group", "mwrouter"), "group mwrouter left");
    }
    if cleanup.made_group {
        assert!(!exists_in("group", "mwadmin"), "group mwadmin left");
    }
}
