//! RFC 2544-style throughput search: the highest rate with no loss (NDR) and
//! the highest with a small loss (PDR), by binary search over trials, then
//! latency at a fraction of the NDR.
//!
//! A trial passes when its loss ratio is at most the threshold **and** the
//! generator actually offered the rate (at least 99 % of it was sent):
//! packets a port refuses (a full ring: the forwarder is not keeping up, or
//! the generator cannot go faster) fail the trial instead of hiding as a
//! lower offered load.
//!
//! The search starts with a trial at the maximum rate; its transmit rate is
//! the upper bound. It halves the interval until it is narrower than
//! `precision` of the upper bound. The whole search runs `trials` times; the
//! reported NDR and PDR are the medians, with every search's value kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ports::Port;
use ports::clock::Clock;
use serde::Serialize;

use crate::generator::Generator;
use crate::run::{Progress, RunResult, RunSpec, run};

/// How to search.
#[derive(Debug, Clone)]
pub struct SearchSpec {
    /// Duration of each trial.
    pub trial: Duration,
    /// How many times the whole search runs.
    pub trials: u32,
    /// PDR's loss threshold as a fraction (0.005 = 0.5 %).
    pub pdr_loss: f64,
    /// Stop when the interval is narrower than this fraction of its top.
    pub precision: f64,
    /// Latency is measured at this fraction of the NDR (0.5).
    pub latency_at: f64,
    /// Duration of the latency run.
    pub latency_duration: Duration,
    /// Warm-up, drain and idle behaviour of every trial (rate and duration
    /// are the search's).
    pub base: RunSpec,
}

/// One trial of a search.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// Which search (0-based).
    pub search: u32,
    /// `"max"`, `"ndr"` or `"pdr"`.
    pub phase: &'static str,
    /// The rate tried, packets/s (`None`: max).
    pub offered_pps: Option<f64>,
    /// Whether it passed the phase's threshold.
    pub pass: bool,
    /// The trial's result.
    pub result: RunResult,
}

/// A rate found, with the values of each search.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// Median over the searches, packets/s.
    pub pps: f64,
    /// The median's bit rate (mean frame size of the cycle).
    pub bps: f64,
    /// Each search's value.
    pub each: Vec<f64>,
}

/// The outcome of a search.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResult {
    /// The highest transmit rate seen at max (the search's upper bound).
    pub max_pps: f64,
    /// No-drop rate.
    pub ndr: Found,
    /// Partial-drop rate.
    pub pdr: Found,
    /// PDR's loss threshold (fraction).
    pub pdr_loss: f64,
    /// The run at `latency_at x NDR`.
    pub latency: Option<RunResult>,
    /// The fraction of NDR the latency run used.
    pub latency_at: f64,
    /// Every trial.
    pub trials: Vec<Trial>,
}

fn passes(r: &RunResult, pps: Option<f64>, threshold: f64) -> bool {
    let offered = pps.is_none_or(|p| r.tx_pps >= 0.99 * p);
    r.tx.probes > 0 && r.loss_ratio <= threshold && offered && !r.interrupted
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

struct Searcher<'a> {
    clock: &'a dyn Clock,
    spec: &'a SearchSpec,
    stop: &'a AtomicBool,
    tag: u16,
    trials: Vec<Trial>,
    report: &'a mut dyn FnMut(&Trial),
    progress: &'a mut dyn FnMut(&Progress),
}

impl Searcher<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// One trial; returns it.
    fn trial<P: Port>(
        &mut self,
        g: &mut Generator<P>,
        search: u32,
        phase: &'static str,
        pps: Option<f64>,
        threshold: f64,
    ) -> &Trial {
        self.tag = self.tag.wrapping_add(1);
        let rs = RunSpec {
            pps,
            duration: Some(self.spec.trial),
            count: None,
            tag: self.tag,
            ..self.spec.base.clone()
        };
        let r = run(g, self.clock, &rs, self.stop, self.progress);
        let t = Trial {
            search,
            phase,
            offered_pps: pps,
            pass: passes(&r, pps, threshold),
            result: r,
        };
        (self.report)(&t);
        self.trials.push(t);
        self.trials.last().expect("just pushed")
    }

    /// The highest passing rate in `lo..top`.
    fn bisect<P: Port>(
        &mut self,
        g: &mut Generator<P>,
        search: u32,
        phase: &'static str,
        mut lo: f64,
        top: f64,
        threshold: f64,
    ) -> f64 {
        let mut hi = top;
        while hi - lo > self.spec.precision * top && !self.stopped() {
            let mid = (lo + hi) / 2.0;
            if self.trial(g, search, phase, Some(mid), threshold).pass {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Runs the search. Each trial has its own stream tag (`spec.base.tag` + 1,
/// + 2, ...), so that late packets of one trial never count in the next.
pub fn search<P: Port>(
    g: &mut Generator<P>,
    clock: &dyn Clock,
    spec: &SearchSpec,
    mean_frame: f64,
    stop: &AtomicBool,
    report: &mut dyn FnMut(&Trial),
    progress: &mut dyn FnMut(&Progress),
) -> SearchResult {
    let mut sr = Searcher {
        clock,
        spec,
        stop,
        tag: spec.base.tag,
        trials: Vec::new(),
        report,
        progress,
    };
    let mut max_pps: f64 = 0.0;
    let (mut ndrs, mut pdrs) = (Vec::new(), Vec::new());
    for s in 0..spec.trials.max(1) {
        if sr.stopped() {
            break;
        }
        let t = sr.trial(g, s, "max", None, 0.0);
        let top = t.result.tx_pps;
        let ndr_at_max = t.pass;
        let pdr_at_max = t.result.tx.probes > 0 && t.result.loss_ratio <= spec.pdr_loss;
        max_pps = max_pps.max(top);
        let ndr = if ndr_at_max {
            top
        } else {
            sr.bisect(g, s, "ndr", 0.0, top, 0.0)
        };
        let pdr = if pdr_at_max {
            top
        } else {
            sr.bisect(g, s, "pdr", ndr, top, spec.pdr_loss)
        };
        ndrs.push(ndr);
        pdrs.push(pdr);
    }
    let found = |v: Vec<f64>| {
        let pps = median(&v);
        Found {
            pps,
            bps: pps * mean_frame * 8.0,
            each: v,
        }
    };
    let ndr = found(ndrs);
    let latency = (ndr.pps > 0.0 && !sr.stopped()).then(|| {
        let rs = RunSpec {
            pps: Some(ndr.pps * spec.latency_at),
            duration: Some(spec.latency_duration),
            count: None,
            tag: sr.tag.wrapping_add(1),
            ..spec.base.clone()
        };
        run(g, clock, &rs, stop, sr.progress)
    });
    SearchResult {
        max_pps,
        ndr,
        pdr: found(pdrs),
        pdr_loss: spec.pdr_loss,
        latency,
        latency_at: spec.latency_at,
        trials: sr.trials,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
