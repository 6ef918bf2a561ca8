//! Workers side by side (engine-bench's scaling figure, docs/performance.md
//! "More than one worker"): `n` engines, each on its own thread pinned to
//! its own core, each with its own in-memory ports and packets in flight
//! (a worker owning its ports, docs/dataplane.md), all reading one FIB
//! set as mwrouterd's workers do. Nothing is shared between the threads
//! but the FIB they read; the figure is how the engine's throughput grows
//! with workers when the ports are not the limit.

use std::sync::Barrier;
use std::time::Duration;

use crate::scenario::{EngineStep, Kind, Rig, RunStats, check_clean, full_fib};
use crate::{Rng, median};
use rrp::Address;

/// One worker's state, on cache lines of its own (no false sharing with
/// the other workers').
#[derive(Debug)]
#[repr(align(128))]
struct Own {
    rig: Rig,
    step: EngineStep,
}

/// One set of workers and their rigs.
#[derive(Debug)]
pub struct Workers {
    /// Boxed: each allocated by its worker's thread (not moved into one
    /// vector's buffer).
    #[allow(clippy::vec_box)]
    own: Vec<Box<Own>>,
    cores: Vec<usize>,
    /// Packets each worker has received so far (for the counter checks).
    counted: Vec<u64>,
}

/// One timed run of every worker at once.
#[derive(Debug, Clone)]
pub struct ScaleRun {
    /// Each worker's run.
    pub workers: Vec<RunStats>,
}

impl ScaleRun {
    /// Packets of all workers per second (millions), over the longest
    /// worker's time: what the box forwarded while all ran.
    pub fn mpps(&self) -> f64 {
        let packets: u64 = self.workers.iter().map(|r| r.packets).sum();
        let t = self
            .workers
            .iter()
            .map(|r| r.elapsed)
            .max()
            .unwrap_or(Duration::ZERO);
        if t.is_zero() {
            return 0.0;
        }
        packets as f64 / t.as_secs_f64() / 1e6
    }

    /// Each worker's own rate (millions of packets per second).
    pub fn per_worker(&self) -> Vec<f64> {
        self.workers.iter().map(RunStats::wall_mpps).collect()
    }
}

impl Workers {
    /// `cores.len()` workers, worker `i` pinned to `cores[i]`, each with
    /// `per_port` packets of `kind` and `size` on each of its ports.
    pub fn new(
        cores: &[usize],
        kind: Kind,
        size: usize,
        per_port: usize,
        dests: &[Address],
        rng: &mut Rng,
    ) -> Workers {
        let (fib, _) = full_fib();
        let n = cores.len();
        let steps = EngineStep::many(fib, n);
        // Each worker's packets, ports and engine are allocated by a thread
        // of its own (glibc gives each thread its own arena): as a worker
        // thread of mwrouterd allocates nothing, nothing of one worker's
        // shares a cache line with another's.
        let own = std::thread::scope(|s| {
            let handles: Vec<_> = steps
                .into_iter()
                .map(|step| {
                    let seed = rng.next_u64();
                    s.spawn(move || {
                        let mut rng = Rng::new(seed);
                        Box::new(Own {
                            rig: Rig::new(kind, size, per_port, dests, &mut rng),
                            step,
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("building a worker's rig"))
                .collect()
        });
        Workers {
            own,
            cores: cores.to_vec(),
            counted: vec![0; n],
        }
    }

    /// Number of workers.
    pub fn len(&self) -> usize {
        self.own.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// Every worker forwards `packets` packets, starting together (after
    /// an untimed pass over its packets in flight); then each engine's
    /// counters are checked (everything received was forwarded).
    pub fn run(&mut self, packets: u64) -> Result<ScaleRun, String> {
        let barrier = Barrier::new(self.len());
        let results: Vec<Result<(RunStats, u64), String>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .own
                .iter_mut()
                .zip(&self.cores)
                .map(|(own, &core)| {
                    let barrier = &barrier;
                    s.spawn(move || {
                        let Own { rig, step } = &mut **own;
                        if !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
                            return Err(format!("could not pin a worker to core {core}"));
                        }
                        let warm = rig.run(step, rig.in_flight() as u64);
                        barrier.wait();
                        let timed = rig.run(step, packets);
                        Ok((timed, warm.packets))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("a worker panicked".into())))
                .collect()
        });
        let mut runs = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            let (timed, warm) = r?;
            if timed.packets < packets {
                return Err(format!("worker {i}: the loop ran dry"));
            }
            self.counted[i] += warm + timed.packets;
            check_clean(
                &format!("worker {i} of {}", self.len()),
                self.own[i].step.engine().counters(),
                self.counted[i],
            )?;
            runs.push(timed);
        }
        Ok(ScaleRun { workers: runs })
    }

    /// Checks the packets in flight (as [`Rig::verify`]).
    pub fn verify(&mut self) -> Result<(), String> {
        self.own.iter_mut().try_for_each(|o| o.rig.verify())
    }
}

/// The rounds of a scaling measurement: one worker and `n` workers in turn.
#[derive(Debug, Default, Clone)]
pub struct Scaling {
    /// One worker, round by round.
    pub one: Vec<ScaleRun>,
    /// All workers, round by round.
    pub many: Vec<ScaleRun>,
}

impl Scaling {
    /// Median aggregate rate of one worker.
    pub fn one_mpps(&self) -> f64 {
        median(&self.one.iter().map(ScaleRun::mpps).collect::<Vec<_>>())
    }

    /// Median aggregate rate of all workers.
    pub fn many_mpps(&self) -> f64 {
        median(&self.many.iter().map(ScaleRun::mpps).collect::<Vec<_>>())
    }

    /// The rounds' ratios (all workers / one worker).
    pub fn ratios(&self) -> Vec<f64> {
        self.many
            .iter()
            .zip(&self.one)
            .map(|(m, o)| m.mpps() / o.mpps())
            .collect()
    }

    /// Median of the rounds' ratios.
    pub fn ratio(&self) -> f64 {
        median(&self.ratios())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{SEED, destinations};

    #[test]
    fn two_workers_forward_everything_they_receive() {
        let mut rng = Rng::new(SEED);
        let dests = destinations(&mut rng);
        let mut w = Workers::new(&[0, 0], Kind::L3, 64, 64, &dests, &mut rng);
        let r = w.run(10_000).expect("a clean run");
        assert_eq!(r.workers.len(), 2);
        assert!(r.workers.iter().all(|x| x.packets >= 10_000));
        assert!(r.mpps() > 0.0);
        w.verify().expect("packets intact");
    }
}
