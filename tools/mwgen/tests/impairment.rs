//! mwgen on the in-memory backend against the seeded impairment layer: the
//! loss, duplication, reordering and corruption mwgen reports equal what the
//! layer injected, exactly; with one test clock shared by both, the latency
//! it reports is exactly the injected delay (at least it, with jitter).

use std::time::Duration;

use mwgen::{Generator, Profile, Sizes};
use ports::clock::{Clock, TestClock};
use ports::impair::{ImpairConfig, ImpairStats};
use ports::memory::mem_link;
use proptest::prelude::*;
use rrp::{LinkKind, NativeAddr};

struct Outcome {
    imp: ImpairStats,
    tx: mwgen::TxCounts,
    rx: mwgen::RxCounts,
    min: u64,
    max: u64,
    latencies: u64,
}

/// Sends `n` probes (bursts every `step`, as fast as the wire takes them)
/// through a wire impaired by `cfg`, until nothing is held any more.
fn drive(cfg: ImpairConfig, n: u64, sizes: Sizes, step: Duration) -> Outcome {
    let clock = TestClock::new();
    let (a, b) = mem_link(
        1 << 16,
        NativeAddr::mac([2, 0, 0, 0, 0, 1]),
        NativeAddr::mac([2, 0, 0, 0, 0, 2]),
    );
    let b = b.with_impairment(cfg, clock.clone());
    let imp = b.impairment().expect("impaired");
    let t = Profile {
        sizes,
        ..Profile::default()
    }
    .build(LinkKind::Memory, 7)
    .unwrap();
    let mut g = Generator::new(a, Some(b), NativeAddr::NONE, t, 7).unwrap();
    g.start(clock.now_ns(), None, Some(n), 7);
    for _ in 0..10_000_000u64 {
        clock.advance(step);
        g.poll_tx(clock.now_ns());
        g.poll_rx(clock.now_ns());
        if g.tx_done() {
            if imp.held() == 0 {
                break;
            }
            if imp.next_due_ns().is_none() && imp.ready() == 0 {
                // A reordered packet with no successor: release it.
                imp.flush();
            }
        }
    }
    assert_eq!(imp.held(), 0, "the wire still holds packets");
    let h = g.receiver().latency();
    Outcome {
        imp: imp.stats(),
        tx: g.tx_counts().clone(),
        rx: g.receiver().counts().clone(),
        min: h.min,
        max: h.max,
        latencies: h.count,
    }
}

fn check_counts(o: &Outcome, n: u64) {
    assert_eq!(o.tx.sent, n);
    assert_eq!(o.tx.refused, 0);
    assert_eq!(o.imp.seen, n);
    assert_eq!(o.tx.probes - o.rx.unique(), o.imp.lost, "lost");
    assert_eq!(o.rx.duplicated, o.imp.duplicated, "duplicated");
    assert_eq!(o.rx.reordered, o.imp.reordered, "reordered");
    assert_eq!(o.rx.rx_errors, o.imp.corrupted, "corrupted");
    assert_eq!(o.rx.received, o.imp.passed, "passed");
    assert_eq!(o.rx.late, 0);
    assert_eq!(o.latencies, o.rx.unique());
}

#[test]
fn counts_equal_what_was_injected() {
    let cfg = ImpairConfig {
        loss: 0.02,
        duplicate: 0.01,
        reorder: 0.01,
        corrupt: 0.005,
        ..ImpairConfig::seeded(42)
    };
    let o = drive(cfg, 100_000, Sizes::Imix, Duration::from_micros(1));
    check_counts(&o, 100_000);
    assert!(o.imp.lost > 1500 && o.imp.duplicated > 500 && o.imp.reordered > 500);
}

#[test]
fn latency_is_exactly_the_delay_on_a_shared_clock() {
    let cfg = ImpairConfig {
        delay: Duration::from_micros(50),
        ..ImpairConfig::seeded(1)
    };
    let o = drive(cfg, 20_000, Sizes::Fixed(64), Duration::from_micros(1));
    check_counts(&o, 20_000);
    assert_eq!((o.min, o.max), (50_000, 50_000));
    // With loss, duplication and reordering on as well, the delay is still
    // the least latency, and every packet but the held ones has exactly it.
    let cfg = ImpairConfig {
        delay: Duration::from_micros(50),
        loss: 0.01,
        duplicate: 0.01,
        reorder: 0.01,
        ..ImpairConfig::seeded(2)
    };
    let o = drive(cfg, 20_000, Sizes::Fixed(64), Duration::from_micros(1));
    check_counts(&o, 20_000);
    assert_eq!(o.min, 50_000);
}

#[test]
fn latency_with_jitter_is_at_least_the_delay() {
    let cfg = ImpairConfig {
        delay: Duration::from_micros(100),
        jitter: Duration::from_micros(30),
        ..ImpairConfig::seeded(3)
    };
    let o = drive(cfg, 20_000, Sizes::Fixed(128), Duration::from_micros(1));
    check_counts(&o, 20_000);
    assert!(o.min >= 100_000, "{}", o.min);
    assert!(o.max > o.min);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn counts_match_for_any_seed_and_mix(
        seed in any::<u64>(),
        loss in 0.0..0.2f64,
        dup in 0.0..0.2f64,
        reorder in 0.0..0.2f64,
        corrupt in 0.0..0.1f64,
        n in 1u64..3000,
        delay_us in 0u64..20,
    ) {
        let cfg = ImpairConfig {
            loss,
            duplicate: dup,
            reorder,
            corrupt,
            delay: Duration::from_micros(delay_us),
            ..ImpairConfig::seeded(seed)
        };
        let o = drive(cfg, n, Sizes::Range(32, 200), Duration::from_micros(1));
        check_counts(&o, n);
        if o.latencies > 0 {
            prop_assert!(o.min >= delay_us * 1000);
        }
    }
}
