//! The control thread sleeps when idle and wakes when there is work
//! (docs/architecture.md "The control thread's loop"): a job from the
//! admin side and a packet a worker punts are handled at once, not at the
//! end of the thread's longest park. The park here is 5 s and the engine's
//! protocol timers a minute; its next timer is then at most a second away
//! (expiries are checked every second), and the tests send 300 ms after
//! the start, so that without a wake-up the answer takes about 700 ms.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use control::{ControlPlane, PlaneHandle};
use dataplane::{ChannelConfig, EngineConfig, FibSet, IdlePolicy, Worker, channels, fib_channel};
use ports::memory::{MemPort, mem_link};
use rrp::kind::PacketType;
use rrp::router::{HrConfig, Router, RouterConfig, Timers};
use rrp::wire::{HeaderRepr, PacketRepr};
use rrp::{Address, NativeAddr};

/// The longest park: far beyond what the tests allow.
const TICK: Duration = Duration::from_secs(5);
/// What the tests allow for an answer: far more than a wake-up takes,
/// far less than the wait for the next timer.
const PROMPT: Duration = Duration::from_millis(250);

const HR: Address = Address(0x0511);

struct OneBox {
    worker: std::thread::JoinHandle<Worker<MemPort>>,
    stop: Arc<AtomicBool>,
    plane: PlaneHandle,
    /// The host's end of the box's one wire.
    host: MemPort,
}

/// A box with one HR, one worker and its control thread, whose engine's
/// timers are a minute away once it has started.
fn one_box() -> OneBox {
    let (host, port) = mem_link(
        64,
        NativeAddr::mac([2, 0, 0, 0, 0, 1]),
        NativeAddr::mac([2, 0, 0, 0, 0, 0x11]),
    );
    let mut cfg = RouterConfig::new(
        "A",
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
    cfg.timers = Timers {
        probe_ms: 60_000,
        sweep_ms: 60_000,
        keepalive_ms: 60_000,
        keepalive_misses: 5,
        refresh_ms: 120_000,
        hold_ms: 600_000,
        advertise_ms: 60_000,
        fib_ms: 60_000,
        tombstone_ms: 60_000,
    };
    let engine = Router::new(cfg, 0).unwrap();
    let ecfg = EngineConfig {
        hrs: vec![HR],
        mtus: vec![1500],
    };
    let (publisher, mut readers) = fib_channel(FibSet::new(1, &[HR]), 1);
    let (wch, cch) = channels(ChannelConfig::default());
    let stop = Arc::new(AtomicBool::new(false));
    let worker = Worker::new(0, &ecfg, vec![port], readers.remove(0), wch)
        .spawn(None, IdlePolicy::LAB, stop.clone(), || {})
        .unwrap();
    let plane = ControlPlane::new(engine, vec![cch], publisher)
        .spawn(TICK)
        .unwrap();
    // Its first timers run at once; then it has nothing to do and parks.
    std::thread::sleep(Duration::from_millis(300));
    OneBox {
        worker,
        stop,
        plane,
        host,
    }
}

impl OneBox {
    fn stop(self) {
        self.plane.stop();
        self.stop.store(true, Ordering::Relaxed);
        self.worker.join().unwrap();
    }
}

#[test]
fn a_job_for_a_sleeping_control_thread_runs_at_once() {
    let b = one_box();
    for _ in 0..3 {
        let start = Instant::now();
        let name = b
            .plane
            .call(TICK * 2, |cp| cp.engine().config().name.clone())
            .unwrap();
        assert_eq!(name, "A");
        assert!(start.elapsed() < PROMPT, "job waited {:?}", start.elapsed());
        // Asleep again before the next.
        std::thread::sleep(Duration::from_millis(100));
    }
    b.stop();
}

#[test]
fn a_packet_punted_to_a_sleeping_control_thread_is_handled_at_once() {
    let mut b = one_box();
    let before = b.plane.stats.load(0).punts;
    let packet = PacketRepr {
        l2rhs: vec![],
        header: HeaderRepr {
            dst: HR,
            src: Address(0x0501),
            packet_type: PacketType(0x0100),
            ..Default::default()
        },
        data: b"for the box".to_vec(),
        ei: 0,
    }
    .to_bytes()
    .unwrap();
    let start = Instant::now();
    assert!(b.host.send_bytes(&packet));
    while b.plane.stats.load(0).punts == before {
        assert!(
            start.elapsed() < PROMPT,
            "punt not handled after {:?}",
            start.elapsed()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    b.stop();
}
