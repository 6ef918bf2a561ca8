//! End to end: `mwrouterd` on loopback UDP between two hosts, driven with
//! mwctl: forwarding, counters, routes, capture (decoded by mwdump),
//! reload by SIGHUP (a live change applied, a port change refused),
//! read-only clients refused changes, and a clean shutdown by SIGTERM.

use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use admin::LogLevel;
use clap::Parser;
use rrp::router::Timers;

mod common;

use common::{data, free_ports, host, mwctl, mwrouterd, wait_for};

fn config(dir: &Path, r0: u16, r1: u16, h1: u16, h2: u16, advertise_ms: u64) -> String {
    let mut c = common::two_hr_box("e2e", dir, [r0, r1], [&[h1], &[h2]]);
    c.timers = Timers {
        sweep_ms: 300,
        keepalive_ms: 300,
        keepalive_misses: 5,
        refresh_ms: 5000,
        hold_ms: 15000,
        advertise_ms,
        fib_ms: 10,
        tombstone_ms: 2000,
        ..Timers::default()
    };
    c.admin.mode = 0o666;
    c.admin.readonly_everyone = true;
    c.log.level = LogLevel::Info;
    c.to_toml()
}

fn signal(child: &Child, sig: i32) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::from_named_raw(sig).unwrap())
        .unwrap();
}

#[test]
fn mwrouterd_forwards_answers_mwctl_reloads_and_stops() {
    // 0755: a read-only client of another user connects to the socket in it.
    let dir = {
        use std::os::unix::fs::PermissionsExt;
        tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(0o755))
            .tempdir()
            .unwrap()
    };
    let [r0, r1, p1, p2] = free_ports();
    let h1 = host(0x0501, p1);
    let h2 = host(0x0502, p2);
    let cfg_path = dir.path().join("router.toml");
    std::fs::write(&cfg_path, config(dir.path(), r0, r1, p1, p2, 20)).unwrap();
    let sock = dir.path().join("mw.sock");

    // --check validates without starting.
    let st = Command::new(mwrouterd())
        .args(["--check", "--config"])
        .arg(&cfg_path)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[router]\nname = 5\n").unwrap();
    let st = Command::new(mwrouterd())
        .args(["--check", "--config"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&st.stderr).contains("router.name"),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );

    let daemon = common::start(&cfg_path, &sock, Stdio::null());
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666, "admin.mode is the socket's mode");
    }
    let (code, out, err) = mwctl(&sock, &["--json", "show", "hrs"]);
    assert_eq!(code, 0, "{out}{err}");
    let hrs: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(hrs.as_array().unwrap().len(), 2);

    // show config prints the running configuration as TOML that loads again.
    let (code, out, _) = mwctl(&sock, &["show", "config"]);
    assert_eq!(code, 0);
    let again = control::config::Config::from_toml(&out).expect("show config loads again");
    assert_eq!(again.hrs.len(), 2);

    // Forwarding h1 -> h2 once RRP has discovered both hosts.
    let to_r0: SocketAddr = format!("127.0.0.1:{r0}").parse().unwrap();
    wait_for("forwarding h1 -> h2", 15, || {
        let _ = h1.sock.send_to(&data(0x0502, 0x0501, 7), to_r0);
        std::thread::sleep(Duration::from_millis(30));
        !h2.received.lock().unwrap().is_empty()
    });
    let got = h2.received.lock().unwrap()[0].clone();
    assert_eq!(got.data, vec![7; 24]);

    // Routes, LRT and counters.
    let (code, out, _) = mwctl(&sock, &["--json", "show", "route", "0x0502"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = mwctl(&sock, &["--json", "show", "counters"]);
    assert_eq!(code, 0);
    let c: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(c[0]["forwarded"].as_u64().unwrap() >= 1, "{c}");
    let (code, out, _) = mwctl(&sock, &["stats", "--prometheus"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("mwrouter_port_received_packets_total"),
        "{out}"
    );

    // A static route added, shown, removed.
    let (code, out, err) = mwctl(
        &sock,
        &[
            "route",
            "add",
            "--port",
            "0",
            "--native",
            "127.0.0.1:9",
            "0x0599",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = mwctl(&sock, &["--json", "show", "lrt", "--port", "0"]);
    assert_eq!(code, 0);
    assert!(out.contains("0x0599"), "{out}");
    assert_eq!(
        mwctl(&sock, &["route", "del", "--port", "0", "0x0599"]).0,
        0
    );
    assert_eq!(
        mwctl(&sock, &["route", "del", "--port", "0", "0x0599"]).0,
        1,
        "already gone"
    );

    // Capture of port 0 while h1 sends, decoded by mwdump.
    let pcap = dir.path().join("cap.pcap");
    let (s2, p2c) = (sock.clone(), pcap.clone());
    let cap = std::thread::spawn(move || {
        mwctl(
            &s2,
            &["capture", "0", "-w", p2c.to_str().unwrap(), "-c", "3"],
        )
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cap.is_finished() && Instant::now() < deadline {
        let _ = h1.sock.send_to(&data(0x0502, 0x0501, 9), to_r0);
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, out, err) = cap.join().unwrap();
    assert_eq!(code, 0, "{out}{err}");
    let bytes = std::fs::read(&pcap).unwrap();
    let args = mwdump::cli::Args::try_parse_from(["mwdump", "--json", pcap.to_str().unwrap()]);
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let code = mwdump::cli::run(&args.unwrap(), &mut std::io::empty(), &mut o, &mut e);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&e));
    let decoded = String::from_utf8_lossy(&o);
    assert!(decoded.lines().count() >= 3, "{decoded}");
    assert!(bytes.len() > 24);

    // A read-only client (nobody) may read but not change. mwctl runs from a
    // copy that nobody can reach: the checkout may lie in a private directory.
    let mwctl_copy = testkit::is_root().then(|| {
        testkit::runnable_by_anyone(&testkit::workspace_bin("mwctl", "mwctl", &[]))
            .expect("a copy of mwctl for another user")
    });
    let nobody = |args: &[&str]| {
        Command::new(&mwctl_copy.as_ref().expect("root").path)
            .arg("--socket")
            .arg(&sock)
            .args(args)
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap()
    };
    if testkit::is_root() {
        testkit::reachable_by_others(&sock).expect("the socket's directory");
        let o = nobody(&["show", "hrs"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = nobody(&[
            "route",
            "add",
            "--port",
            "0",
            "--native",
            "127.0.0.1:9",
            "0x0598",
        ]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "a read-only client changed a route"
        );
    } else {
        testkit::skip(
            "read-only client",
            "needs root to run mwctl as another user",
        );
    }

    // Reload: a live change applies, a port change is refused.
    std::fs::write(&cfg_path, config(dir.path(), r0, r1, p1, p2, 40)).unwrap();
    let (code, out, err) = mwctl(&sock, &["--json", "reload"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("advertise"), "{out}");
    std::fs::write(
        &cfg_path,
        config(dir.path(), r0, free_ports::<1>()[0], p1, p2, 40),
    )
    .unwrap();
    let (code, out, err) = mwctl(&sock, &["reload"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("bind") || out.contains("bind"), "{out}{err}");
    // SIGHUP with the refused file changes nothing; forwarding goes on.
    signal(&daemon, 1);
    let before = h2.received.lock().unwrap().len();
    wait_for("forwarding after reloads", 5, || {
        let _ = h1.sock.send_to(&data(0x0502, 0x0501, 8), to_r0);
        std::thread::sleep(Duration::from_millis(20));
        h2.received.lock().unwrap().len() > before
    });

    // Clean shutdown: SIGTERM, exit 0, socket removed.
    let mut d = daemon;
    signal(&d, 15);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = d.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "mwrouterd did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    assert!(!sock.exists(), "the socket is removed");
    assert_eq!(
        mwctl(&sock, &["show", "hrs"]).0,
        3,
        "unreachable once stopped"
    );
    h1.stop.store(true, Ordering::Relaxed);
    h2.stop.store(true, Ordering::Relaxed);
}
