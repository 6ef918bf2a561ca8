//! benches/l3fwd.patch, the adjustment `benches/e2e --part 1` makes to
//! DPDK's l3fwd example before building it, applies to the example sources
//! installed on this machine (Debian's dpdk-doc): a newer dpdk-doc that
//! moved the lines would otherwise be found only by a benchmark run.

use std::process::Command;

#[test]
fn l3fwd_patch_applies_to_the_installed_example() {
    let example = std::path::Path::new("/usr/share/dpdk/examples/l3fwd");
    if !example.join("main.c").exists() {
        testkit::skip(
            "l3fwd_patch_applies_to_the_installed_example",
            "DPDK's example sources are not installed (apt-get install dpdk-doc)",
        );
        return;
    }
    let patch = concat!(env!("CARGO_MANIFEST_DIR"), "/l3fwd.patch");
    let out = Command::new("patch")
        .args(["--dry-run", "--batch", "--forward", "-p1", "-d"])
        .arg(example)
        .args(["-i", patch])
        .output()
        .expect("patch runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "benches/l3fwd.patch does not apply to {}: {text}{}",
        example.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !text.contains("offset") && !text.contains("fuzz"),
        "applies only loosely: {text}"
    );
}
