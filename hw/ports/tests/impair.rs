//! The impairment layer of the in-memory backend: what the receiver
//! observes matches the injected counts exactly, for each impairment alone
//! and combined; the same seed gives the same result; delays hold packets
//! until the test clock passes them; corruption sets the receive-error flag.

use std::collections::HashSet;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use ports::clock::{Clock, MonotonicClock, TestClock};
use ports::impair::{ImpairConfig, ImpairStats, Impairer};
use ports::memory::{MemPort, mem_link};
use ports::{BURST, Burst, HeapBuf, PacketBuf, Port};
use rrp::NativeAddr;

const A: NativeAddr = NativeAddr::mac([2, 0, 0, 0, 0, 0xA]);
const B: NativeAddr = NativeAddr::mac([2, 0, 0, 0, 0, 0xB]);
const N: u64 = 5000;

fn packet(seq: u64) -> [u8; 16] {
    let mut p = [0x5A; 16];
    p[..8].copy_from_slice(&seq.to_be_bytes());
    p
}

fn seq_of(b: &[u8]) -> u64 {
    assert_eq!(b.len(), 16, "bytes are delivered unchanged");
    assert_eq!(&b[8..], &[0x5A; 8], "bytes are delivered unchanged");
    u64::from_be_bytes(b[..8].try_into().unwrap())
}

/// What a receiver of numbered packets measures.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Observed {
    /// Every sequence number, in arrival order.
    order: Vec<u64>,
    /// Buffers received.
    received: u64,
    /// Arrivals of a number seen before.
    duplicates: u64,
    /// First arrivals below the highest number seen so far.
    late: u64,
    /// Buffers with the receive-error flag.
    rx_errors: u64,
    /// Numbers never received.
    missing: u64,
}

fn observe(bufs: &[HeapBuf], sent: u64) -> Observed {
    let mut o = Observed::default();
    let mut seen = HashSet::new();
    let mut max = None;
    for b in bufs {
        let s = seq_of(b.data());
        assert_eq!(b.native_src(), A);
        o.order.push(s);
        o.received += 1;
        o.rx_errors += b.rx_error() as u64;
        if !seen.insert(s) {
            o.duplicates += 1;
            continue;
        }
        if max.is_some_and(|m| s < m) {
            o.late += 1;
        }
        max = max.max(Some(s));
    }
    o.missing = sent - seen.len() as u64;
    o
}

/// Sends `n` numbered packets from A to B through `cfg` (no delay: the
/// clock stays at 0), flushes, receives everything.
fn run(cfg: ImpairConfig, n: u64) -> (ImpairStats, Observed) {
    let (mut a, b) = mem_link(2 * n as usize + 16, A, B);
    let mut b = b.with_impairment(cfg, TestClock::new());
    for s in 0..n {
        assert!(a.send_bytes(&packet(s)));
    }
    let imp = b.impairment().unwrap();
    imp.flush();
    let mut got = Vec::new();
    while let Some(x) = b.recv() {
        got.push(x);
    }
    let st = imp.stats();
    assert_eq!(st.held(), 0);
    assert_eq!(imp.held(), 0);
    (st, observe(&got, n))
}

fn check_exact(st: &ImpairStats, o: &Observed, n: u64) {
    assert_eq!(st.seen, n);
    assert_eq!(st.passed, o.received);
    assert_eq!(st.passed, st.seen - st.lost + st.duplicated);
    assert_eq!(st.lost, o.missing);
    assert_eq!(st.duplicated, o.duplicates);
    assert_eq!(st.reordered, o.late);
    assert_eq!(st.corrupted, o.rx_errors);
}

#[test]
fn loss_alone() {
    let cfg = ImpairConfig {
        loss: 0.1,
        ..ImpairConfig::seeded(1)
    };
    let (st, o) = run(cfg, N);
    check_exact(&st, &o, N);
    assert!((350..650).contains(&st.lost), "about 10%: {}", st.lost);
    assert_eq!((st.duplicated, st.reordered, st.corrupted), (0, 0, 0));
    assert!(o.order.windows(2).all(|w| w[0] < w[1]), "order kept");
}

#[test]
fn duplicate_alone() {
    let cfg = ImpairConfig {
        duplicate: 0.05,
        ..ImpairConfig::seeded(2)
    };
    let (st, o) = run(cfg, N);
    check_exact(&st, &o, N);
    assert!((150..350).contains(&st.duplicated), "{}", st.duplicated);
    assert_eq!(
        (st.lost, st.reordered, st.corrupted, o.missing),
        (0, 0, 0, 0)
    );
    // A copy follows its original immediately.
    assert!(o.order.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn reorder_alone() {
    let cfg = ImpairConfig {
        reorder: 0.05,
        ..ImpairConfig::seeded(3)
    };
    let (st, o) = run(cfg, N);
    check_exact(&st, &o, N);
    assert!((150..350).contains(&st.reordered), "{}", st.reordered);
    assert_eq!(
        (st.lost, st.duplicated, st.corrupted, o.missing),
        (0, 0, 0, 0)
    );
    // The model: a held packet comes right after its successor.
    let mut swaps = 0;
    let mut i = 0;
    while i < o.order.len() {
        let s = o.order[i];
        if i + 1 < o.order.len() && o.order[i + 1] < s {
            assert_eq!(o.order[i + 1] + 1, s, "swapped with its successor");
            swaps += 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    assert_eq!(swaps, st.reordered);
}

#[test]
fn corrupt_alone_sets_rx_error() {
    let cfg = ImpairConfig {
        corrupt: 0.2,
        ..ImpairConfig::seeded(4)
    };
    let (st, o) = run(cfg, N);
    check_exact(&st, &o, N);
    assert!((800..1200).contains(&st.corrupted), "{}", st.corrupted);
    assert_eq!((st.lost, st.duplicated, st.reordered), (0, 0, 0));
    // Everything corrupted at probability 1.
    let (st, o) = run(
        ImpairConfig {
            corrupt: 1.0,
            ..ImpairConfig::seeded(4)
        },
        100,
    );
    assert_eq!((st.corrupted, o.rx_errors), (100, 100));
}

#[test]
fn combined_counts_match_and_patterns_match_each_alone() {
    let all = ImpairConfig {
        loss: 0.1,
        duplicate: 0.1,
        reorder: 0.1,
        corrupt: 0.1,
        ..ImpairConfig::seeded(42)
    };
    let (st, o) = run(all, N);
    check_exact(&st, &o, N);
    for c in [st.lost, st.duplicated, st.reordered, st.corrupted] {
        assert!(c > 100, "{st:?}");
    }
    // The same seed draws the same values per packet whatever is enabled:
    // the packets lost together are the packets lost alone.
    let lost_alone = {
        let (_, o1) = run(
            ImpairConfig {
                loss: 0.1,
                ..ImpairConfig::seeded(42)
            },
            N,
        );
        let got: HashSet<u64> = o1.order.into_iter().collect();
        (0..N).filter(|s| !got.contains(s)).collect::<Vec<_>>()
    };
    let got: HashSet<u64> = o.order.iter().copied().collect();
    let lost_all: Vec<u64> = (0..N).filter(|s| !got.contains(s)).collect();
    assert_eq!(lost_all, lost_alone);
}

#[test]
fn same_seed_same_result_other_seed_differs() {
    let cfg = ImpairConfig {
        loss: 0.05,
        duplicate: 0.05,
        reorder: 0.05,
        corrupt: 0.05,
        ..ImpairConfig::seeded(7)
    };
    let (s1, o1) = run(cfg, 2000);
    let (s2, o2) = run(cfg, 2000);
    assert_eq!(s1, s2);
    assert_eq!(o1, o2);
    let (s3, o3) = run(ImpairConfig { seed: 8, ..cfg }, 2000);
    assert!(s3 != s1 || o3 != o1);
}

#[test]
fn probabilities_zero_and_one() {
    let (st, o) = run(ImpairConfig::seeded(9), 500);
    check_exact(&st, &o, 500);
    assert_eq!(st.passed, 500);
    assert_eq!(o.order, (0..500).collect::<Vec<_>>());
    let (st, o) = run(
        ImpairConfig {
            loss: 1.0,
            ..ImpairConfig::seeded(9)
        },
        500,
    );
    assert_eq!((st.lost, st.passed, o.received), (500, 0, 0));
    let (st, o) = run(
        ImpairConfig {
            duplicate: 1.0,
            ..ImpairConfig::seeded(9)
        },
        500,
    );
    assert_eq!((st.duplicated, o.received), (500, 1000));
    // Reorder 1: packets are swapped pairwise (the follower of a held
    // packet is never held itself).
    let (st, o) = run(
        ImpairConfig {
            reorder: 1.0,
            ..ImpairConfig::seeded(9)
        },
        6,
    );
    assert_eq!(st.reordered, 3);
    assert_eq!(o.order, vec![1, 0, 3, 2, 5, 4]);
}

#[test]
fn reorder_hold_without_successor_waits_for_flush() {
    let (mut a, b) = mem_link(16, A, B);
    let mut b = b.with_impairment(
        ImpairConfig {
            reorder: 1.0,
            ..ImpairConfig::seeded(1)
        },
        TestClock::new(),
    );
    assert!(a.send_bytes(&packet(0)));
    assert!(b.recv().is_none(), "held back");
    assert_eq!(b.pending(), 0);
    let imp = b.impairment().unwrap();
    assert_eq!(imp.held(), 1);
    assert!(imp.flush());
    assert!(!imp.flush());
    assert_eq!(seq_of(&b.recv_bytes().unwrap()), 0);
    assert_eq!(imp.stats().reordered, 0, "flushed, not reordered");
    assert_eq!(imp.stats().passed, 1);
}

#[test]
fn delay_holds_until_the_test_clock_passes_it() {
    let clock = TestClock::new();
    let delay = Duration::from_micros(50);
    let (mut a, b) = mem_link(64, A, B);
    let mut b = b.with_impairment(
        ImpairConfig {
            delay,
            ..ImpairConfig::seeded(5)
        },
        clock.clone(),
    );
    let imp = b.impairment().unwrap();
    // Packets sent at t = 0, 10, 20 us.
    let mut sent_at = Vec::new();
    for s in 0..3u64 {
        sent_at.push(clock.now_ns());
        assert!(a.send_bytes(&packet(s)));
        clock.advance(Duration::from_micros(10));
    }
    // t = 30 us: nothing is due.
    assert!(b.recv().is_none());
    assert_eq!(b.pending(), 0);
    assert_eq!(imp.next_due_ns(), Some(50_000));
    // Walk the clock one nanosecond at a time around each due time: each
    // packet arrives exactly `delay` after it was sent, in order.
    for (s, &t) in sent_at.iter().enumerate() {
        let due = t + delay.as_nanos() as u64;
        clock.set_ns(due - 1);
        assert!(b.recv().is_none(), "packet {s} early");
        clock.set_ns(due);
        assert_eq!(b.pending(), 1);
        let got = b.recv().expect("due now");
        assert_eq!(seq_of(got.data()), s as u64);
        assert_eq!(clock.now_ns() - t, delay.as_nanos() as u64);
    }
    let st = imp.stats();
    assert_eq!((st.seen, st.passed, st.delayed, st.held()), (3, 3, 3, 0));
}

#[test]
fn jitter_stays_within_bounds_and_keeps_order() {
    let clock = TestClock::new();
    let (delay, jitter) = (10_000u64, 5_000u64);
    let (mut a, b) = mem_link(4096, A, B);
    let mut b = b.with_impairment(
        ImpairConfig {
            delay: Duration::from_nanos(delay),
            jitter: Duration::from_nanos(jitter),
            ..ImpairConfig::seeded(6)
        },
        clock.clone(),
    );
    // A packet every 100 ns; the receiver polls every nanosecond.
    let mut sent_at = Vec::new();
    let mut latencies = HashSet::new();
    let mut next = 0u64;
    while next < 1000 {
        let now = clock.now_ns();
        if now.is_multiple_of(100) && sent_at.len() < 1000 {
            sent_at.push(now);
            assert!(a.send_bytes(&packet(sent_at.len() as u64 - 1)));
        }
        while let Some(x) = b.recv() {
            assert_eq!(seq_of(x.data()), next, "in order");
            let lat = now - sent_at[next as usize];
            assert!((delay..=delay + jitter).contains(&lat), "latency {lat}");
            latencies.insert(lat);
            next += 1;
        }
        clock.advance_ns(1);
    }
    assert!(latencies.len() > 100, "jitter varies the latency");
    assert_eq!(b.impairment().unwrap().stats().delayed, 1000);
}

#[test]
fn delay_and_reorder_together() {
    let clock = TestClock::new();
    let (mut a, b) = mem_link(64, A, B);
    let mut b = b.with_impairment(
        ImpairConfig {
            reorder: 1.0,
            delay: Duration::from_nanos(1000),
            ..ImpairConfig::seeded(1)
        },
        clock.clone(),
    );
    assert!(a.send_bytes(&packet(0)));
    clock.advance_ns(500);
    assert!(a.send_bytes(&packet(1)));
    // Both enter the line when 1 is sent (t = 500): due at 1500.
    clock.set_ns(1499);
    assert!(b.recv().is_none());
    clock.set_ns(1500);
    let order: Vec<u64> = std::iter::from_fn(|| b.recv_bytes())
        .map(|v| seq_of(&v))
        .collect();
    assert_eq!(order, vec![1, 0]);
    assert_eq!(b.impairment().unwrap().stats().reordered, 1);
}

#[test]
fn capacity_bounds_what_is_held_and_refused_packets_are_not_seen() {
    let clock = TestClock::new();
    let (mut a, b) = mem_link(4, A, B);
    let mut b = b.with_impairment(
        ImpairConfig {
            delay: Duration::from_micros(1),
            ..ImpairConfig::seeded(1)
        },
        clock.clone(),
    );
    for s in 0..4 {
        assert!(a.send_bytes(&packet(s)));
    }
    assert!(!a.send_bytes(&packet(4)), "the wire is full");
    assert_eq!(b.impairment().unwrap().stats().seen, 4);
    clock.advance(Duration::from_micros(1));
    assert_eq!(b.pending(), 4);
    assert!(b.recv().is_some());
    assert!(a.send_bytes(&packet(5)));
}

#[test]
fn port_bursts_go_through_the_impairer() {
    // The sending end transmits with tx_burst (as a router worker does),
    // the receiving end receives with rx_burst.
    let (mut a, b) = mem_link(256, A, B);
    let mut b = b.with_impairment(
        ImpairConfig {
            loss: 0.25,
            corrupt: 0.25,
            ..ImpairConfig::seeded(11)
        },
        TestClock::new(),
    );
    let mut sent = 0u64;
    let mut got = Vec::new();
    for _ in 0..4 {
        let mut burst: Burst<HeapBuf> = Burst::new();
        for _ in 0..BURST {
            let mut x = a.alloc().unwrap();
            x.append(16).unwrap().copy_from_slice(&packet(sent));
            assert!(a.encap(&mut x, &B));
            burst.push(x);
            sent += 1;
        }
        assert_eq!(a.tx_burst(&mut burst), BURST);
        let mut rx = Burst::new();
        loop {
            b.rx_burst(&mut rx);
            if rx.is_empty() {
                break;
            }
            got.extend(rx.drain(..));
        }
    }
    for x in &got {
        assert_eq!(x.native_dst(), B);
    }
    let st = b.impairment().unwrap().stats();
    check_exact(&st, &observe(&got, sent), sent);
}

#[test]
fn tx_burst_keeps_refused_packets_in_order() {
    let (mut a, b) = mem_link(3, A, B);
    let b = b.with_impairment(ImpairConfig::seeded(1), TestClock::new());
    let mut burst: Burst<HeapBuf> = Burst::new();
    for s in 0..5 {
        burst.push(HeapBuf::from_bytes(&packet(s)));
    }
    assert_eq!(a.tx_burst(&mut burst), 3);
    let left: Vec<u64> = burst.iter().map(|x| seq_of(x.data())).collect();
    assert_eq!(left, vec![3, 4]);
    assert_eq!(b.impairment().unwrap().stats().seen, 3);
}

#[test]
fn threads_and_a_real_clock_count_exactly() {
    let n = 8_000u64;
    let cfg = ImpairConfig {
        loss: 0.02,
        duplicate: 0.02,
        reorder: 0.02,
        corrupt: 0.02,
        delay: Duration::from_micros(20),
        jitter: Duration::from_micros(5),
        ..ImpairConfig::seeded(99)
    };
    let (mut a, b) = mem_link(1024, A, B);
    let mut b: MemPort = b.with_impairment(cfg, MonotonicClock::new());
    let imp = b.impairment().unwrap();
    let sender = thread::spawn(move || {
        for s in 0..n {
            while !a.send_bytes(&packet(s)) {
                thread::yield_now();
            }
        }
        a
    });
    let mut got = Vec::new();
    let mut flushed = false;
    loop {
        let mut rx = Burst::new();
        b.rx_burst(&mut rx);
        got.extend(rx.drain(..));
        let st = imp.stats();
        if sender.is_finished() && !flushed {
            imp.flush();
            flushed = true;
        }
        if flushed && st.seen == n && st.held() == 0 && b.pending() == 0 {
            break;
        }
        thread::yield_now();
    }
    let _a = sender.join().unwrap();
    let st = imp.stats();
    check_exact(&st, &observe(&got, n), n);
    assert_eq!(st.delayed, st.passed);
    // The decisions depend only on the seed and the packets, not on timing.
    let (st2, _) = run(
        ImpairConfig {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            ..cfg
        },
        n,
    );
    assert_eq!(
        (st.lost, st.duplicated, st.corrupted),
        (st2.lost, st2.duplicated, st2.corrupted)
    );
}

#[test]
fn impairer_on_its_own() {
    let clock = TestClock::new();
    let imp = Impairer::new(
        ImpairConfig {
            duplicate: 1.0,
            corrupt: 1.0,
            ..ImpairConfig::seeded(3)
        },
        Arc::new(clock.clone()) as Arc<dyn Clock>,
        8,
    );
    let mut x = HeapBuf::from_bytes(&packet(1));
    x.set_native_src(A);
    imp.push(x).unwrap();
    let one = imp.pop().unwrap();
    let two = imp.pop().unwrap();
    assert!(imp.pop().is_none());
    assert_eq!(one.data(), two.data());
    assert!(one.rx_error() && two.rx_error());
    assert_eq!(two.native_src(), A);
    assert_eq!(imp.stats().corrupted, 2);
    assert_eq!(imp.config().seed, 3);
    assert_eq!(imp.clock().now_ns(), 0);
}

#[test]
#[should_panic(expected = "impaired already")]
fn impairing_twice_panics() {
    let (_a, b) = mem_link(4, A, B);
    let _ = b
        .with_impairment(ImpairConfig::default(), TestClock::new())
        .with_impairment(ImpairConfig::default(), TestClock::new());
}

#[test]
fn unimpaired_direction_is_untouched() {
    // Impairing B's receive side leaves A's receive side alone.
    let (mut a, b) = mem_link(8, A, B);
    let mut b = b.with_impairment(
        ImpairConfig {
            loss: 1.0,
            ..ImpairConfig::seeded(1)
        },
        TestClock::new(),
    );
    assert!(a.impairment().is_none());
    for s in 0..4 {
        assert!(b.send_bytes(&packet(s)));
    }
    let got: Vec<u64> = std::iter::from_fn(|| a.recv_bytes())
        .map(|v| seq_of(&v))
        .collect();
    assert_eq!(got, vec![0, 1, 2, 3]);
    assert!(a.send_bytes(&packet(9)));
    assert!(b.recv().is_none(), "lost");
}
