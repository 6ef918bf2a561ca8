//! Draining before the daemon stops (docs/daemon.md "Draining before
//! maintenance", docs/spec-notes.md 74): the engine advertises every route
//! of the box at the largest cost ([`rrp::router::Router::drain`]), the
//! daemon watches the packets its workers forward, and stops once they have
//! stayed near zero for `drain.quiet_ms`, or after the timeout. `mwctl
//! drain` and, with `drain.on_sigterm`, SIGTERM begin one; the drain ends
//! by raising SIGTERM, which the signal loop takes as "stop now".

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::config::{Config, DrainSection, MAX_DRAIN_MS};
use crate::plane::PlaneHandle;
use crate::stats::Counters;

/// How often the forwarded counters are read.
const POLL_MS: u64 = 100;

/// Whether traffic through the box has moved, from its forwarded counter
/// read at explicit times (sans-IO).
#[derive(Debug, Clone)]
pub struct Quiet {
    since: u64,
    quiet_ms: u64,
    quiet_pps: u64,
    deadline: u64,
    last: Option<(u64, u64)>,
    quiet_from: Option<u64>,
}

/// What a reading says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Still forwarding: wait.
    Wait,
    /// Quiet for `quiet_ms`: stop.
    Quiet,
    /// The timeout passed first: stop anyway.
    TimedOut,
}

impl Quiet {
    /// A watch beginning at `now` (ms) that gives up at `now + timeout_ms`.
    pub fn new(cfg: &DrainSection, now: u64, timeout_ms: u64) -> Quiet {
        Quiet {
            since: now,
            quiet_ms: cfg.quiet_ms,
            quiet_pps: cfg.quiet_pps,
            deadline: now + timeout_ms.clamp(1, MAX_DRAIN_MS),
            last: None,
            quiet_from: None,
        }
    }

    /// The box had forwarded `forwarded` packets in all at `now`.
    pub fn reading(&mut self, now: u64, forwarded: u64) -> Verdict {
        if let Some((t, f)) = self.last {
            let dt = now.saturating_sub(t).max(1);
            let pps = forwarded.saturating_sub(f) * 1000 / dt;
            if pps <= self.quiet_pps {
                self.quiet_from.get_or_insert(t);
            } else {
                self.quiet_from = None;
            }
        }
        self.last = Some((now, forwarded));
        if self
            .quiet_from
            .is_some_and(|q| now.saturating_sub(q) >= self.quiet_ms)
        {
            Verdict::Quiet
        } else if now >= self.deadline {
            Verdict::TimedOut
        } else {
            Verdict::Wait
        }
    }

    /// When the watch began.
    pub fn since(&self) -> u64 {
        self.since
    }
}

/// The daemon's drain: begun once, by `mwctl drain` or SIGTERM. Its
/// settings are read from the configuration in force when they are used,
/// so a reload changes them live.
pub struct Drainer {
    cfg: Arc<Mutex<Config>>,
    plane: Arc<PlaneHandle>,
    counters: Counters,
    begun: AtomicBool,
}

impl Drainer {
    /// A drainer of the box behind `plane`, watching `counters`, with the
    /// `[drain]` of the configuration in force, `cfg`.
    pub fn new(cfg: Arc<Mutex<Config>>, plane: Arc<PlaneHandle>, counters: Counters) -> Drainer {
        Drainer {
            cfg,
            plane,
            counters,
            begun: AtomicBool::new(false),
        }
    }

    /// Whether a drain has begun (the next SIGTERM stops the daemon).
    pub fn begun(&self) -> bool {
        self.begun.load(Ordering::SeqCst)
    }

    /// The `[drain]` in force.
    fn settings(&self) -> DrainSection {
        self.cfg.lock().unwrap_or_else(|e| e.into_inner()).drain
    }

    /// Whether SIGTERM drains.
    pub fn on_sigterm(&self) -> bool {
        self.settings().on_sigterm
    }

    /// Begins a drain that ends by raising SIGTERM; the timeout it uses,
    /// or an error when one has begun already.
    pub fn begin(self: &Arc<Self>, timeout_ms: Option<u64>) -> Result<u64, String> {
        if self.begun.swap(true, Ordering::SeqCst) {
            return Err("a drain is already under way".into());
        }
        let settings = self.settings();
        let timeout = timeout_ms
            .unwrap_or(settings.timeout_ms)
            .clamp(1, MAX_DRAIN_MS);
        self.plane
            .call(Duration::from_secs(2), |cp| {
                let now = cp.now();
                cp.engine_mut().drain(now);
                cp.flush();
            })
            .map_err(|e| format!("drain: {e}"))?;
        tracing::info!(
            timeout_ms = timeout,
            "draining: routes advertised at the largest cost"
        );
        let me = self.clone();
        thread::Builder::new()
            .name("mw-drain".into())
            .spawn(move || {
                me.watch(&settings, timeout);
                let _ = signal_hook::low_level::raise(signal_hook::consts::SIGTERM);
            })
            .map_err(|e| format!("drain: {e}"))?;
        Ok(timeout)
    }

    fn forwarded(&self) -> u64 {
        dataplane::counters::sum(self.counters.blocks())
            .iter()
            .map(|p| p.forwarded)
            .sum()
    }

    fn watch(&self, settings: &DrainSection, timeout_ms: u64) {
        let start = Instant::now();
        let now = || start.elapsed().as_millis() as u64;
        let mut q = Quiet::new(settings, now(), timeout_ms);
        loop {
            match q.reading(now(), self.forwarded()) {
                Verdict::Wait => thread::sleep(Duration::from_millis(POLL_MS)),
                Verdict::Quiet => {
                    tracing::info!(
                        after_ms = now() - q.since(),
                        "drained: forwarding quiet, stopping"
                    );
                    return;
                }
                Verdict::TimedOut => {
                    tracing::warn!(
                        after_ms = now() - q.since(),
                        "drain timed out with traffic still forwarded, stopping"
                    );
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> DrainSection {
        DrainSection {
            quiet_ms: 1_000,
            quiet_pps: 10,
            ..DrainSection::default()
        }
    }

    #[test]
    fn quiet_once_forwarding_stays_near_zero_for_the_quiet_period() {
        let mut q = Quiet::new(&cfg(), 0, 10_000);
        // 1000 pps for a second, then nothing.
        assert_eq!(q.reading(0, 0), Verdict::Wait);
        assert_eq!(q.reading(500, 500), Verdict::Wait);
        assert_eq!(q.reading(1_000, 1_000), Verdict::Wait);
        assert_eq!(q.reading(1_500, 1_002), Verdict::Wait);
        assert_eq!(q.reading(2_000, 1_003), Verdict::Quiet, "quiet since 1000");
    }

    #[test]
    fn traffic_again_restarts_the_quiet_period() {
        let mut q = Quiet::new(&cfg(), 0, 10_000);
        q.reading(0, 0);
        q.reading(600, 0);
        assert_eq!(q.reading(900, 300), Verdict::Wait);
        assert_eq!(q.reading(1_200, 300), Verdict::Wait);
        assert_eq!(q.reading(1_800, 300), Verdict::Wait);
        assert_eq!(q.reading(1_900, 300), Verdict::Quiet, "quiet since 900");
    }

    #[test]
    fn the_timeout_stops_a_box_that_keeps_forwarding() {
        let mut q = Quiet::new(&cfg(), 0, 2_000);
        let mut f = 0;
        for t in (0..2_000).step_by(100) {
            assert_eq!(q.reading(t, f), Verdict::Wait);
            f += 100;
        }
        assert_eq!(q.reading(2_000, f), Verdict::TimedOut);
    }
}
