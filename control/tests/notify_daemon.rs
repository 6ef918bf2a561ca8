//! mwrouterd under a `Type=notify` unit, with the manager played by a
//! datagram socket the test binds as `$NOTIFY_SOCKET`: READY=1 once its
//! ports are up, STATUS= lines, WATCHDOG=1 at half of `$WATCHDOG_USEC`
//! while its worker polls, RELOADING=1/READY=1 around SIGHUP and STOPPING=1
//! on SIGTERM (docs/daemon.md "systemd").

mod common;

use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_ports, mwrouterd, two_hr_box};
use testkit::ChildGuard;

fn signal(pid: u32, sig: i32) {
    let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::from_named_raw(sig).unwrap())
        .unwrap();
}

/// The next notification, waiting at most 10 s.
fn next(s: &UnixDatagram) -> String {
    let mut buf = [0u8; 4096];
    let n = s.recv(&mut buf).expect("a notification within 10 s");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Notifications until one contains `what` (the others returned too).
fn until(s: &UnixDatagram, what: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let m = next(s);
        let done = m.lines().any(|l| l == what);
        seen.push(m);
        if done {
            return seen;
        }
    }
}

#[test]
fn mwrouterd_notifies_ready_feeds_the_watchdog_and_says_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let notify = dir.path().join("notify");
    let manager = UnixDatagram::bind(&notify).unwrap();
    manager
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let binds = free_ports::<2>();
    let cfg = two_hr_box("N", dir.path(), binds, [&[], &[]]);
    let cfg_path = dir.path().join("n.toml");
    std::fs::write(&cfg_path, cfg.to_toml()).unwrap();
    let child = Command::new(mwrouterd())
        .arg("--config")
        .arg(&cfg_path)
        .env("NOTIFY_SOCKET", &notify)
        // Fed every 200 ms.
        .env("WATCHDOG_USEC", "400000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let daemon = ChildGuard::new(child);
    let pid = daemon.id();

    // READY=1 comes first, once the ports and the admin socket are up.
    let ready = next(&manager);
    assert!(ready.lines().any(|l| l == "READY=1"), "{ready}");
    assert!(
        ready.lines().any(|l| l == format!("MAINPID={pid}")),
        "{ready}"
    );
    assert!(
        ready
            .lines()
            .any(|l| l.starts_with("STATUS=forwarding on 2 HRs (udp); FIB v")),
        "{ready}"
    );
    assert!(cfg.admin.socket.exists(), "admin socket before READY=1");
    for b in binds {
        assert!(
            std::net::UdpSocket::bind(common::loopback(b)).is_err(),
            "port {b} bound before READY=1"
        );
    }

    // The watchdog is fed, again and again, within a few intervals.
    let start = Instant::now();
    let mut feeds = 0;
    while feeds < 4 {
        if next(&manager) == "WATCHDOG=1" {
            feeds += 1;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{feeds} feeds in 10 s"
        );
    }

    // A reload is bracketed by RELOADING=1 and READY=1.
    signal(pid, 1);
    let seen = until(&manager, "READY=1");
    assert!(
        seen.iter()
            .any(|m| m.lines().next() == Some("RELOADING=1") && m.contains("\nMONOTONIC_USEC=")),
        "{seen:?}"
    );

    // SIGTERM: STOPPING=1, then a clean exit.
    signal(pid, 15);
    until(&manager, "STOPPING=1");
    let mut d = daemon.into_inner();
    let status = d.wait().unwrap();
    assert!(status.success(), "{status}");
}
