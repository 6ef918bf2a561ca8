//! mwrouterd on DPDK vdevs (net_null, no traffic): starts its EAL, ports,
//! pinned worker and control thread, answers mwctl, stops cleanly. Skipped
//! (a failure under MWROUTER_REQUIRE_ALL=1) when mwrouterd was built
//! without the `dpdk` feature.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn mwctl(sock: &std::path::Path, args: &[&str]) -> (i32, String) {
    let mut all = vec![
        "mwctl".to_string(),
        "--socket".into(),
        sock.display().to_string(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mwctl::main_with(all, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned() + &String::from_utf8_lossy(&err),
    )
}

#[test]
fn mwrouterd_on_dpdk_vdevs() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("mw.sock");
    let cfg = format!(
        r#"[router]
name = "e2e-dpdk"

[dpdk]
eal_args = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--no-telemetry", "-l", "0-1", "--log-level=warning"]

[workers]
count = 1
idle = "adaptive"

[admin]
socket = "{}"

[[hr]]
address = 0x0711
san_id = 0x0701
mtu = 1500
[hr.port]
backend = "dpdk"
device = "net_null0,no-rx=1"

[[hr]]
address = 0x0712
san_id = 0x0702
mtu = 1500
[hr.port]
backend = "dpdk"
device = "net_null1,no-rx=1"
"#,
        sock.display()
    );
    let path = dir.path().join("router.toml");
    std::fs::write(&path, cfg).unwrap();
    let mwrouterd = PathBuf::from(env!("CARGO_BIN_EXE_mwrouterd"));
    if !mwrouterd.exists() {
        testkit::skip("mwctl::daemon_dpdk", "mwrouterd is not built");
        return;
    }
    let mut child = match testkit::spawn_until_ready(
        Command::new(&mwrouterd).arg("--config").arg(&path),
        &sock,
        Duration::from_secs(20),
    ) {
        Ok(c) => c,
        Err(e) if e.code == Some(2) && e.stderr.contains("--features dpdk") => {
            testkit::skip(
                "mwctl::daemon_dpdk",
                "mwrouterd built without the dpdk feature",
            );
            return;
        }
        Err(e) => panic!("mwrouterd {e}"),
    };
    let (code, out) = mwctl(&sock, &["--json", "show", "ports"]);
    assert_eq!(code, 0, "{out}");
    let ports: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(ports.as_array().unwrap().len(), 2);
    assert_eq!(ports[0]["backend"], "dpdk");
    let (code, out) = mwctl(&sock, &["--json", "show", "router"]);
    assert_eq!(code, 0, "{out}");
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let st = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "mwrouterd did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(st.success(), "{st}");
    assert!(!sock.exists());
}
