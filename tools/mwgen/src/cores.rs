//! A run on several cores (`mwgen --cores N`, docs/mwgen.md "Several
//! cores"): one generator per core, each with its own transmit and receive
//! queue of the ports and its own stream (tags `first`, `first + 1`, ...),
//! at an Nth of the rate and of the count. A router may deliver any stream
//! to any queue, so every core's receiver follows all the streams, each with
//! its own duplicate and reordering window. The cores warm up, start
//! together, and then run as one-core runs do. Nothing is shared while they
//! run but the stop flag. The report sums the sending sides and merges the
//! receivers into one [`RunResult`], with each core's result beside it.

use std::sync::Barrier;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use ports::Port;
use ports::clock::Clock;

use crate::generator::{Generator, TxCounts};
use crate::receiver::Receiver;
use crate::run::{RunResult, RunSpec, result_of, run};

/// The most cores a run may use.
pub const MAX_CORES: usize = 64;

/// What each of `n` cores does of `spec`: core `i` sends stream
/// `spec.tag + i` at an `n`th of the rate, and its share of the count (the
/// first cores one more where it does not divide).
pub fn share(spec: &RunSpec, n: usize, i: usize) -> RunSpec {
    let n64 = n as u64;
    RunSpec {
        pps: spec.pps.map(|p| p / n as f64),
        count: spec
            .count
            .map(|c| c / n64 + u64::from((i as u64) < c % n64)),
        tag: spec.tag.wrapping_add(i as u16),
        warmup: Duration::ZERO,
        ..spec.clone()
    }
}

/// Runs `gens` (one per core; `cores[i]` is the CPU generator `i` is
/// pinned to, if any) as one run of `spec`, on `clock`. `on_start` runs
/// first on each core's thread (to register it with DPDK). Returns the
/// merged result and each core's.
pub fn run_cores<P>(
    gens: &mut [Generator<P>],
    cores: &[Option<usize>],
    clock: &dyn Clock,
    spec: &RunSpec,
    stop: &AtomicBool,
    on_start: &(dyn Fn() + Sync),
) -> (RunResult, Vec<RunResult>)
where
    P: Port,
    P::Buf: Send,
{
    let n = gens.len();
    let barrier = Barrier::new(n);
    let each: Vec<RunResult> = std::thread::scope(|s| {
        let handles: Vec<_> = gens
            .iter_mut()
            .enumerate()
            .map(|(i, g)| {
                let core = cores.get(i).copied().flatten();
                let barrier = &barrier;
                std::thread::Builder::new()
                    .name(format!("mwgen-{i}"))
                    .spawn_scoped(s, move || {
                        if let Some(c) = core {
                            core_affinity::set_for_current(core_affinity::CoreId { id: c });
                        }
                        on_start();
                        g.follow_streams(i as u16, n as u16);
                        // Warm up (receive only, its own queues), then start
                        // together.
                        let warm = RunSpec {
                            pps: Some(1.0),
                            duration: Some(Duration::ZERO),
                            count: Some(0),
                            drain: Duration::ZERO,
                            ..spec.clone()
                        };
                        run(g, clock, &warm, stop, &mut |_| {});
                        barrier.wait();
                        run(g, clock, &share(spec, n, i), stop, &mut |_| {})
                    })
                    .expect("a generator thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a generator thread panicked"))
            .collect()
    });
    (merge(gens, &each, spec), each)
}

/// One result of the cores' `each` (over `gens`, whose counters they are):
/// the sending sides summed, the receivers merged, the longest core's
/// transmission time.
fn merge<P: Port>(gens: &[Generator<P>], each: &[RunResult], spec: &RunSpec) -> RunResult {
    let mut tx = TxCounts::default();
    let mut rx = Receiver::new(spec.tag, 0, 0);
    for g in gens {
        let t = g.tx_counts();
        tx.attempted += t.attempted;
        tx.sent += t.sent;
        tx.probes += t.probes;
        tx.bytes += t.bytes;
        tx.refused += t.refused;
        tx.no_buffer += t.no_buffer;
        rx.absorb(g.receiver());
    }
    let tx_ns = each
        .iter()
        .map(|r| (r.duration_s * 1e9) as u64)
        .max()
        .unwrap_or(0);
    let interrupted = each.iter().any(|r| r.interrupted);
    result_of(tx, &rx, spec.pps, tx_ns, interrupted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;
    use crate::run::Idle;
    use ports::clock::MonotonicClock;
    use ports::memory::{MemPort, mem_link};
    use rrp::{LinkKind, NativeAddr};

    fn spec(count: u64) -> RunSpec {
        RunSpec {
            pps: None,
            duration: None,
            count: Some(count),
            warmup: Duration::ZERO,
            drain: Duration::from_millis(300),
            idle: Idle::Sleep,
            tag: 40,
        }
    }

    #[test]
    fn shares_add_up() {
        let s = RunSpec {
            pps: Some(1000.0),
            ..spec(10)
        };
        let parts: Vec<_> = (0..3).map(|i| share(&s, 3, i)).collect();
        assert_eq!(
            parts.iter().map(|p| p.count.unwrap()).collect::<Vec<_>>(),
            [4, 3, 3]
        );
        assert_eq!(
            parts.iter().map(|p| p.tag).collect::<Vec<_>>(),
            [40, 41, 42]
        );
        assert!(
            parts
                .iter()
                .all(|p| (p.pps.unwrap() - 1000.0 / 3.0).abs() < 1e-9)
        );
    }

    /// Two cores whose wires cross (core 0's packets reach core 1's
    /// receiver and the other way round): every probe is accounted once,
    /// by the core that received it, in the merged result.
    #[test]
    fn crossed_streams_merge_exactly() {
        let mac = |b| NativeAddr::mac([2, 0, 0, 0, 0, b]);
        let (a0, b0): (MemPort, MemPort) = mem_link(4096, mac(1), mac(2));
        let (a1, b1): (MemPort, MemPort) = mem_link(4096, mac(3), mac(4));
        let t = Profile::default().build(LinkKind::Memory, 1).unwrap();
        let mut gens = vec![
            Generator::new(a0, Some(b1), NativeAddr::NONE, t.clone(), 1).unwrap(),
            Generator::new(a1, Some(b0), NativeAddr::NONE, t, 1).unwrap(),
        ];
        for g in &mut gens {
            assert!(g.set_latency_every(1));
        }
        let stop = AtomicBool::new(false);
        let clock = MonotonicClock::new();
        let (all, each) = run_cores(&mut gens, &[None, None], &clock, &spec(3001), &stop, &|| {});
        assert_eq!(each.len(), 2);
        assert_eq!(
            each.iter().map(|r| r.tx.sent).collect::<Vec<_>>(),
            [1501, 1500]
        );
        assert_eq!(all.tx.sent, 3001);
        assert_eq!(all.tx.probes, 3001);
        assert_eq!(all.unique, 3001);
        assert_eq!((all.lost, all.rx.duplicated, all.rx.foreign), (0, 0, 0));
        assert_eq!(all.latency_ns.count, 3001);
        // Each core received the other's stream.
        assert_eq!(each[0].rx.received, 1500);
        assert_eq!(each[1].rx.received, 1501);
    }
}
