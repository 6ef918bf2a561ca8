//! The systemd unit in examples/ is accepted by `systemd-analyze verify`
//! (with its binary paths pointed at the built mwrouterd).

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
    let unit = unit.replace("/usr/local/bin/mwrouterd", env!("CARGO_BIN_EXE_mwrouterd"));
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
}
