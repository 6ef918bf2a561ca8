//! The systemd unit in examples/ is accepted by `systemd-analyze verify`
//! (with its binary paths pointed at the built mwrouterd), and its
//! hardening keeps `systemd-analyze security` at the exposure that
//! docs/daemon.md "systemd" states or better.

use std::process::Command;

#[test]
fn the_unit_file_verifies() {
    let have = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        testkit::skip(
            "control::systemd",
            "systemd-analyze not installed (apt-get install systemd)",
        );
        return;
    }
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/mwrouterd.service"
    ))
    .unwrap();
    let unit = unit.replace("/usr/sbin/mwrouterd", env!("CARGO_BIN_EXE_mwrouterd"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mwrouterd.service");
    std::fs::write(&path, unit).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "systemd-analyze verify: {err}");
    // Warnings about the unit itself (not about the host) fail too.
    assert!(!err.contains("mwrouterd.service:"), "{err}");

    // Exposure 2.1 when written (docs/daemon.md); a unit that loses its
    // hardening goes above 3.0 and fails.
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=yes", "--threshold=30", "--no-pager"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "systemd-analyze security: {text}");
    assert!(text.contains("Overall exposure level"), "{text}");
}

#[test]
fn the_unit_is_notify_with_a_watchdog_and_runs_unprivileged() {
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/mwrouterd.service"
    ))
    .unwrap();
    let set: Vec<&str> = unit
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    for want in [
        "Type=notify",
        "WatchdogSec=30",
        "User=mwrouter",
        "SupplementaryGroups=mwadmin",
        "RuntimeDirectory=mwrouter",
        "ExecStart=/usr/sbin/mwrouterd --config /etc/mwrouter/router.toml",
        "CapabilityBoundingSet=CAP_NET_RAW CAP_NET_BIND_SERVICE",
    ] {
        assert!(set.contains(&want), "{want} missing");
    }
}
