//! The control thread feeds systemd's watchdog only while every worker
//! polls and it runs itself (docs/daemon.md "systemd"): a box with one
//! worker on a memory port and its control thread, the turn hook of the
//! daemon installed with a notification socket the test binds. Stopping
//! the worker, or holding the control thread in a job, stops WATCHDOG=1;
//! the status then says which worker stalled.

use std::os::unix::net::UnixDatagram;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use control::ControlPlane;
use control::daemon::notify::Notifier;
use control::daemon::service;
use dataplane::{ChannelConfig, EngineConfig, FibSet, IdlePolicy, Worker, channels, fib_channel};
use ports::memory::mem_link;
use rrp::router::{HrConfig, Router, RouterConfig};
use rrp::{Address, NativeAddr};

const HR: Address = Address(0x0511);
/// systemd's interval: fed every 100 ms.
const INTERVAL: Duration = Duration::from_millis(200);

/// Notifications received within `d` (a short read timeout each).
fn during(s: &UnixDatagram, d: Duration) -> Vec<String> {
    let end = Instant::now() + d;
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while Instant::now() < end {
        if let Ok(n) = s.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    }
    got
}

/// Notifications until one satisfies `f` (at most 10 s).
fn until(s: &UnixDatagram, f: impl Fn(&str) -> bool) -> Vec<String> {
    let end = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        assert!(Instant::now() < end, "not seen in 10 s: {got:?}");
        if let Ok(n) = s.recv(&mut buf) {
            let m = String::from_utf8_lossy(&buf[..n]).into_owned();
            let done = f(&m);
            got.push(m);
            if done {
                return got;
            }
        }
    }
}

fn feeds(ms: &[String]) -> usize {
    ms.iter().filter(|m| *m == "WATCHDOG=1").count()
}

#[test]
fn the_watchdog_is_fed_only_while_the_worker_polls_and_the_control_thread_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notify");
    let manager = UnixDatagram::bind(&path).unwrap();
    manager
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();

    let (_host, port) = mem_link(
        64,
        NativeAddr::mac([2, 0, 0, 0, 0, 1]),
        NativeAddr::mac([2, 0, 0, 0, 0, 0x11]),
    );
    let cfg = RouterConfig::new(
        "W",
        vec![HrConfig {
            address: HR,
            san_id: Address(0x0601),
            mtu: 1500,
            cost: 1,
            native: NativeAddr::mac([2, 0, 0, 0, 0, 0x11]),
            static_nodes: vec![],
            auth: None,
        }],
    );
    let engine = Router::new(cfg, 0).unwrap();
    let ecfg = EngineConfig {
        hrs: vec![HR],
        mtus: vec![1500],
    };
    let (publisher, mut readers) = fib_channel(FibSet::new(1, &[HR]), 1);
    let (wch, cch) = channels(ChannelConfig::default());
    let stop = Arc::new(AtomicBool::new(false));
    let w = Worker::new(0, &ecfg, vec![port], readers.remove(0), wch);
    let blocks = vec![w.stats()];
    let worker = w.spawn(None, IdlePolicy::LAB, stop.clone(), || {}).unwrap();
    let plane = ControlPlane::new(engine, vec![cch], publisher)
        .spawn(Duration::from_millis(50))
        .unwrap();
    let notifier = Arc::new(Notifier::to(path.to_str().unwrap()).unwrap());
    let hook = service::hook(notifier, Some(INTERVAL), blocks, "memory");
    plane
        .call(Duration::from_secs(5), move |cp| cp.on_turn(hook))
        .unwrap();

    // Fed again and again while the worker polls; the status says what
    // the box does.
    let seen = until(&manager, {
        let n = std::cell::Cell::new(0);
        move |m| {
            n.set(n.get() + usize::from(m == "WATCHDOG=1"));
            n.get() >= 3
        }
    });
    assert!(
        seen.iter()
            .any(|m| m.starts_with("STATUS=forwarding on 1 HR (memory); FIB v")),
        "{seen:?}"
    );

    // The control thread held in a job for 3 intervals: no feed meanwhile
    // (the job marks its start and end on the same socket).
    let marker = UnixDatagram::unbound().unwrap();
    let p = path.clone();
    plane
        .call(Duration::from_secs(5), move |_| {
            marker.send_to(b"BEGIN", &p).unwrap();
            std::thread::sleep(INTERVAL * 3);
            marker.send_to(b"END", &p).unwrap();
        })
        .unwrap();
    let seen = until(&manager, |m| m == "END");
    let begin = seen.iter().position(|m| m == "BEGIN").expect("BEGIN");
    assert_eq!(feeds(&seen[begin..]), 0, "{seen:?}");
    // It runs again: fed again.
    until(&manager, |m| m == "WATCHDOG=1");

    // The worker stops polling: the status says so, and no feed follows.
    stop.store(true, Ordering::Relaxed);
    worker.join().unwrap();
    until(&manager, |m| {
        m.starts_with("STATUS=worker 0 stalled (watchdog not fed); forwarding on 1 HR")
    });
    let after = during(&manager, INTERVAL * 3);
    assert_eq!(feeds(&after), 0, "{after:?}");
    plane.stop();
}
