//! RFC 2544-style throughput search: the highest rate with no loss (NDR) and
//! the highest with a small loss (PDR), by binary search over rates, then
//! latency at a fraction of the NDR.
//!
//! A trial passes when its loss ratio is at most the threshold **and** the
//! generator actually offered the rate (at least 99 % of it was sent):
//! packets a port refuses (a full ring: the forwarder is not keeping up, or
//! the generator cannot go faster) fail the trial instead of hiding as a
//! lower offered load.
//!
//! The search starts at the maximum rate; the highest transmit rate of its
//! trials is the upper bound. It halves the interval until it is narrower
//! than `precision` of the upper bound. Each rate, the maximum included, is
//! decided by up to `tries` trials at that rate ([`Tally`]: it passes at
//! its first passing trial, and fails once more than half of `tries` have
//! failed), so that one scheduling hiccup on a loaded machine does not fail
//! a rate the router forwards. The whole search runs `trials` times; the
//! reported NDR and PDR are the medians, with every search's value and
//! their spread kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ports::Port;
use ports::clock::Clock;
use serde::Serialize;

use crate::generator::Generator;
use crate::run::{Progress, RunResult, RunSpec, run};

/// The most trials `--tries` may give a rate.
pub const MAX_TRIES: u32 = 9;

/// How to search.
#[derive(Debug, Clone)]
pub struct SearchSpec {
    /// Duration of each trial.
    pub trial: Duration,
    /// How many times the whole search runs.
    pub trials: u32,
    /// The trials a rate may take (1..=[`MAX_TRIES`]): the rule of [`Tally`].
    pub tries: u32,
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

/// Whether a rate passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The rate is within the phase's loss threshold.
    Pass,
    /// It is not (or the search was stopped before it passed).
    Fail,
}

impl Verdict {
    /// `"pass"` or `"fail"`, as in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
        }
    }
}

/// The rule that decides a rate from the outcomes of its trials ("tries"),
/// in the order they ran.
///
/// A rate passes at its first passing try, unless a majority of `tries`
/// (`tries / 2 + 1`) has already failed; it fails as soon as that majority
/// has failed. Put otherwise: a rate fails exactly when its first
/// `tries / 2 + 1` tries all fail, and no more tries run once it is
/// decided. With 3 tries: pass; fail, pass -> pass; fail, fail -> fail.
///
/// Why one pass outweighs earlier fails: on a loaded machine noise only
/// loses packets (the generator or the forwarder is descheduled and a ring
/// overflows); it practically never makes a lossy rate look loss-free, so
/// a passing try is evidence the rate holds, while a failing one may be a
/// hiccup. Asking for a majority of passes instead would spend trials
/// confirming what one pass already showed. A rate that truly loses
/// packets fails every try and costs `tries / 2 + 1` trials; a rate that
/// holds costs one trial, two after a hiccup. An even `tries` decides as
/// `tries + 1` does (the same majority), and `tries = 1` is one trial a
/// rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Failed tries that fail the rate: a majority of the tries allowed.
    majority: u32,
    /// Tries that passed so far.
    pub passed: u32,
    /// Tries that failed so far.
    pub failed: u32,
}

impl Tally {
    /// An empty tally for a rate allowed `tries` tries (at least one).
    pub fn new(tries: u32) -> Tally {
        Tally {
            majority: tries.max(1) / 2 + 1,
            passed: 0,
            failed: 0,
        }
    }

    /// Records one try's outcome; returns the rate's verdict once it is
    /// decided (no more tries should then run).
    pub fn record(&mut self, pass: bool) -> Option<Verdict> {
        if pass {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        self.verdict()
    }

    /// The verdict of the tries so far; `None`: another try is needed.
    pub fn verdict(&self) -> Option<Verdict> {
        if self.failed >= self.majority {
            Some(Verdict::Fail)
        } else if self.passed > 0 {
            Some(Verdict::Pass)
        } else {
            None
        }
    }
}

/// Decides a rate allowed `tries` tries from `outcomes` in order (true:
/// passed): its verdict and how many of the outcomes it took, or `None`
/// when they ran out before the verdict.
pub fn decide(tries: u32, outcomes: impl IntoIterator<Item = bool>) -> Option<(Verdict, usize)> {
    let mut t = Tally::new(tries);
    outcomes
        .into_iter()
        .enumerate()
        .find_map(|(i, pass)| t.record(pass).map(|v| (v, i + 1)))
}

/// One trial of a search: one try at one rate.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// Which search (0-based).
    pub search: u32,
    /// `"max"`, `"ndr"` or `"pdr"`.
    pub phase: &'static str,
    /// The rate tried, packets/s (`None`: max).
    pub offered_pps: Option<f64>,
    /// Which try at this rate (0-based).
    #[serde(rename = "try")]
    pub try_index: u32,
    /// Whether it passed the phase's threshold (at max: no loss).
    pub pass: bool,
    /// The trial's result.
    pub result: RunResult,
}

/// One rate of a search and its verdict, decided by its tries ([`Tally`]).
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// Which search (0-based).
    pub search: u32,
    /// `"max"`, `"ndr"` or `"pdr"`.
    pub phase: &'static str,
    /// The rate, packets/s (`None`: max).
    pub offered_pps: Option<f64>,
    /// Its trials: indices into [`SearchResult::trials`], in order.
    pub tries: Vec<usize>,
    /// Tries that passed.
    pub passed: u32,
    /// Tries that failed.
    pub failed: u32,
    /// The rate's verdict against the phase's threshold (at max: no loss).
    pub verdict: Verdict,
    /// At max only: the verdict of the same tries against PDR's loss
    /// threshold (where it passes, the PDR is the maximum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdr_verdict: Option<Verdict>,
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
    /// The highest value of a search minus the lowest, packets/s: how far
    /// the searches agree (0 with one search).
    pub spread: f64,
}

impl Found {
    /// The median of `each` and its spread; `mean_frame` bytes a packet.
    fn of(each: Vec<f64>, mean_frame: f64) -> Found {
        let pps = median(&each);
        let max = each.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = each.iter().copied().fold(f64::INFINITY, f64::min);
        Found {
            pps,
            bps: pps * mean_frame * 8.0,
            spread: if each.is_empty() { 0.0 } else { max - min },
            each,
        }
    }
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
    /// The tries a rate was allowed (`--tries`).
    pub tries: u32,
    /// Every rate decided, in order.
    pub rates: Vec<Decision>,
    /// Every trial, in order.
    pub trials: Vec<Trial>,
}

/// What a search reports as it goes.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A trial ended.
    Trial(&'a Trial),
    /// A rate was decided (after its last trial's event).
    Rate(&'a Decision),
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
    spec: &'a SearchSpec,
    stop: &'a AtomicBool,
    tag: u16,
    trials: Vec<Trial>,
    rates: Vec<Decision>,
    report: &'a mut dyn FnMut(Event<'_>),
    run: &'a mut dyn FnMut(&RunSpec) -> RunResult,
}

impl Searcher<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// One trial; returns its index.
    fn trial(
        &mut self,
        search: u32,
        phase: &'static str,
        pps: Option<f64>,
        threshold: f64,
        try_index: u32,
    ) -> usize {
        self.tag = self.tag.wrapping_add(1);
        let rs = RunSpec {
            pps,
            duration: Some(self.spec.trial),
            count: None,
            tag: self.tag,
            ..self.spec.base.clone()
        };
        let r = (self.run)(&rs);
        let t = Trial {
            search,
            phase,
            offered_pps: pps,
            try_index,
            pass: passes(&r, pps, threshold),
            result: r,
        };
        (self.report)(Event::Trial(&t));
        self.trials.push(t);
        self.trials.len() - 1
    }

    /// Decides one rate by its tries ([`Tally`]); returns its index in
    /// `rates`. A stop (Ctrl-C) ends the tries: a rate not yet passed
    /// then fails.
    fn rate(
        &mut self,
        search: u32,
        phase: &'static str,
        pps: Option<f64>,
        threshold: f64,
    ) -> usize {
        let mut tally = Tally::new(self.spec.tries);
        let mut tries = Vec::new();
        let verdict = loop {
            let i = self.trial(search, phase, pps, threshold, tries.len() as u32);
            tries.push(i);
            if let Some(v) = tally.record(self.trials[i].pass) {
                break v;
            }
            if self.stopped() {
                break Verdict::Fail;
            }
        };
        let d = Decision {
            search,
            phase,
            offered_pps: pps,
            tries,
            passed: tally.passed,
            failed: tally.failed,
            verdict,
            pdr_verdict: None,
        };
        self.rates.push(d);
        self.rates.len() - 1
    }

    fn announce(&mut self, rate: usize) {
        (self.report)(Event::Rate(&self.rates[rate]));
    }

    /// The highest passing rate in `lo..top`.
    fn bisect(
        &mut self,
        search: u32,
        phase: &'static str,
        mut lo: f64,
        top: f64,
        threshold: f64,
    ) -> f64 {
        let mut hi = top;
        while hi - lo > self.spec.precision * top && !self.stopped() {
            let mid = (lo + hi) / 2.0;
            let d = self.rate(search, phase, Some(mid), threshold);
            self.announce(d);
            if self.rates[d].verdict == Verdict::Pass {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The maximum rate of one search: its upper bound (the highest
    /// transmit rate of its tries), and the NDR and PDR where the maximum
    /// passes their thresholds (the highest transmit rate of the tries
    /// that passed).
    fn max(&mut self, search: u32) -> (f64, Option<f64>, Option<f64>) {
        let d = self.rate(search, "max", None, 0.0);
        let tries = self.rates[d].tries.clone();
        let results = || tries.iter().map(|&i| &self.trials[i].result);
        let top = results().map(|r| r.tx_pps).fold(0.0, f64::max);
        let highest = |pass: &dyn Fn(&RunResult) -> bool| {
            results()
                .filter(|r| pass(r))
                .map(|r| r.tx_pps)
                .reduce(f64::max)
        };
        let pdr_loss = self.spec.pdr_loss;
        let pdr_pass = |r: &RunResult| passes(r, None, pdr_loss);
        // The tries ran until the verdict at no loss; a PDR failure is a
        // failure at no loss too, so they also decide the PDR's verdict
        // (unless a stop ended them: then it fails).
        let pdr_verdict =
            decide(self.spec.tries, results().map(pdr_pass)).map_or(Verdict::Fail, |(v, _)| v);
        let ndr = (self.rates[d].verdict == Verdict::Pass)
            .then(|| highest(&|r| passes(r, None, 0.0)))
            .flatten();
        let pdr = (pdr_verdict == Verdict::Pass)
            .then(|| highest(&pdr_pass))
            .flatten();
        self.rates[d].pdr_verdict = Some(pdr_verdict);
        self.announce(d);
        (top, ndr, pdr)
    }
}

/// Runs the search with the trials of `g` on `clock`. Each trial has its
/// own stream tag (`spec.base.tag` + 1, + 2, ...), so that late packets of
/// one trial never count in the next.
pub fn search<P: Port>(
    g: &mut Generator<P>,
    clock: &dyn Clock,
    spec: &SearchSpec,
    mean_frame: f64,
    stop: &AtomicBool,
    report: &mut dyn FnMut(Event<'_>),
    progress: &mut dyn FnMut(&Progress),
) -> SearchResult {
    search_with(spec, mean_frame, stop, report, &mut |rs| {
        run(g, clock, rs, stop, progress)
    })
}

/// The search, with `run` running each trial and the latency run: the
/// search's only contact with the wire, so that tests can script it.
fn search_with(
    spec: &SearchSpec,
    mean_frame: f64,
    stop: &AtomicBool,
    report: &mut dyn FnMut(Event<'_>),
    run: &mut dyn FnMut(&RunSpec) -> RunResult,
) -> SearchResult {
    let mut sr = Searcher {
        spec,
        stop,
        tag: spec.base.tag,
        trials: Vec::new(),
        rates: Vec::new(),
        report,
        run,
    };
    let mut max_pps: f64 = 0.0;
    let (mut ndrs, mut pdrs) = (Vec::new(), Vec::new());
    for s in 0..spec.trials.max(1) {
        if sr.stopped() {
            break;
        }
        let (top, ndr_at_max, pdr_at_max) = sr.max(s);
        max_pps = max_pps.max(top);
        let ndr = match ndr_at_max {
            Some(p) => p,
            None => sr.bisect(s, "ndr", 0.0, top, 0.0),
        };
        let pdr = match pdr_at_max {
            Some(p) => p,
            None => sr.bisect(s, "pdr", ndr, top, spec.pdr_loss),
        };
        ndrs.push(ndr);
        pdrs.push(pdr);
    }
    let ndr = Found::of(ndrs, mean_frame);
    let latency = (ndr.pps > 0.0 && !sr.stopped()).then(|| {
        let rs = RunSpec {
            pps: Some(ndr.pps * spec.latency_at),
            duration: Some(spec.latency_duration),
            count: None,
            tag: sr.tag.wrapping_add(1),
            ..spec.base.clone()
        };
        (sr.run)(&rs)
    });
    SearchResult {
        max_pps,
        ndr,
        pdr: Found::of(pdrs, mean_frame),
        pdr_loss: spec.pdr_loss,
        latency,
        latency_at: spec.latency_at,
        tries: spec.tries,
        rates: sr.rates,
        trials: sr.trials,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::AtomicU64;

    use ports::heap::HeapBuf;
    use ports::memory::{MemPort, mem_link};
    use ports::{Burst, LinkHeader, PacketBuf};
    use proptest::prelude::*;
    use rrp::{LinkKind, NativeAddr};

    use super::*;
    use crate::generator::TxCounts;
    use crate::probe::{self, Received};
    use crate::profile::Profile;
    use crate::receiver::{Latency, RxCounts};
    use crate::run::Idle;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn found_keeps_each_search_and_the_spread() {
        let f = Found::of(vec![90.0, 100.0, 70.0], 64.0);
        assert_eq!((f.pps, f.spread), (90.0, 30.0));
        assert_eq!(f.bps, 90.0 * 64.0 * 8.0);
        assert_eq!(Found::of(vec![5.0], 64.0).spread, 0.0);
        assert_eq!(Found::of(vec![], 64.0).spread, 0.0);
    }

    /// The rule, independently: a rate fails exactly when its first
    /// `tries / 2 + 1` tries fail; otherwise it passes at its first pass.
    fn expected(tries: u32, outcomes: &[bool]) -> (Verdict, usize) {
        let majority = tries as usize / 2 + 1;
        match outcomes[..majority].iter().position(|&p| p) {
            Some(i) => (Verdict::Pass, i + 1),
            None => (Verdict::Fail, majority),
        }
    }

    #[test]
    fn every_sequence_of_tries_is_decided_by_the_rule() {
        for tries in 1..=MAX_TRIES {
            for bits in 0u32..1 << tries {
                let outcomes: Vec<bool> = (0..tries).map(|i| bits >> i & 1 == 1).collect();
                let (v, used) = decide(tries, outcomes.iter().copied())
                    .unwrap_or_else(|| panic!("{tries} tries {outcomes:?}: undecided"));
                assert_eq!(
                    (v, used),
                    expected(tries, &outcomes),
                    "{tries} tries {outcomes:?}"
                );
                assert!(used <= tries as usize);
                // No prefix decides earlier: the tries stop at the verdict.
                assert_eq!(decide(tries, outcomes[..used - 1].iter().copied()), None);
            }
        }
        // Three tries, as docs/mwgen.md tells them.
        assert_eq!(decide(3, [true]), Some((Verdict::Pass, 1)));
        assert_eq!(decide(3, [false, true]), Some((Verdict::Pass, 2)));
        assert_eq!(decide(3, [false, false]), Some((Verdict::Fail, 2)));
        // One try: its outcome; an even count decides as the next odd one.
        assert_eq!(decide(1, [false]), Some((Verdict::Fail, 1)));
        for bits in 0u32..32 {
            let o: Vec<bool> = (0..5).map(|i| bits >> i & 1 == 1).collect();
            assert_eq!(decide(4, o.clone()), decide(5, o));
        }
    }

    const MAX: f64 = 1e6;

    /// A scripted device under test: it forwards up to `capacity`
    /// packets/s and loses the rest; the trials numbered in `hiccups` lose
    /// 1 % more (the machine was busy).
    struct Device {
        capacity: f64,
        hiccups: Vec<bool>,
        ran: usize,
    }

    impl Device {
        fn run(&mut self, rs: &RunSpec) -> RunResult {
            let offered = rs.pps.unwrap_or(MAX);
            let mut loss = ((offered - self.capacity) / offered).max(0.0);
            if self.hiccups.get(self.ran).copied().unwrap_or(false) {
                loss = loss.max(0.01);
            }
            self.ran += 1;
            let probes = 1_000_000u64;
            let lost = (probes as f64 * loss).ceil() as u64;
            RunResult {
                offered_pps: rs.pps,
                duration_s: 1.0,
                tx: TxCounts {
                    attempted: probes,
                    sent: probes,
                    probes,
                    ..TxCounts::default()
                },
                rx: RxCounts::default(),
                unique: probes - lost,
                lost,
                loss_ratio: lost as f64 / probes as f64,
                tx_pps: offered,
                tx_bps: 0.0,
                rx_pps: 0.0,
                rx_bps: 0.0,
                latency_ns: Latency::default(),
                ei: Vec::new(),
                ei_other: 0,
                interrupted: false,
            }
        }
    }

    fn spec(tries: u32, trials: u32) -> SearchSpec {
        SearchSpec {
            trial: Duration::from_secs(1),
            trials,
            tries,
            pdr_loss: 0.005,
            precision: 0.01,
            latency_at: 0.5,
            latency_duration: Duration::from_secs(1),
            base: RunSpec {
                pps: None,
                duration: None,
                count: None,
                warmup: Duration::ZERO,
                drain: Duration::ZERO,
                idle: Idle::Spin,
                tag: 100,
            },
        }
    }

    fn scripted(spec: &SearchSpec, capacity: f64, hiccups: &[bool]) -> SearchResult {
        let mut dev = Device {
            capacity,
            hiccups: hiccups.to_vec(),
            ran: 0,
        };
        let (mut trials, mut rates) = (0, 0);
        let r = search_with(
            spec,
            64.0,
            &AtomicBool::new(false),
            &mut |e| match e {
                Event::Trial(_) => trials += 1,
                Event::Rate(_) => rates += 1,
            },
            &mut |rs| dev.run(rs),
        );
        assert_eq!((trials, rates), (r.trials.len(), r.rates.len()));
        check_bookkeeping(&r);
        r
    }

    /// Every trial belongs to exactly one rate, in order, with its try
    /// index; each rate's counts and verdict follow from its trials.
    fn check_bookkeeping(r: &SearchResult) {
        let mut next = 0;
        for d in &r.rates {
            for (k, &i) in d.tries.iter().enumerate() {
                assert_eq!(i, next, "{d:?}");
                next += 1;
                let t = &r.trials[i];
                assert_eq!(
                    (t.search, t.phase, t.try_index),
                    (d.search, d.phase, k as u32)
                );
                assert_eq!(t.offered_pps, d.offered_pps);
            }
            let outcomes: Vec<bool> = d.tries.iter().map(|&i| r.trials[i].pass).collect();
            let passed = outcomes.iter().filter(|&&p| p).count() as u32;
            assert_eq!(
                (d.passed, d.failed),
                (passed, d.tries.len() as u32 - passed)
            );
            assert_eq!(decide(r.tries, outcomes), Some((d.verdict, d.tries.len())));
            assert_eq!(d.pdr_verdict.is_some(), d.phase == "max");
        }
        assert_eq!(next, r.trials.len());
    }

    /// The decided rates without their tries: what the bisection saw.
    fn path(r: &SearchResult) -> Vec<(&'static str, Option<f64>, Verdict)> {
        r.rates
            .iter()
            .map(|d| (d.phase, d.offered_pps, d.verdict))
            .collect()
    }

    #[test]
    fn one_try_a_rate_is_one_trial_and_a_hiccup_fools_it() {
        let s = spec(1, 1);
        let clean = scripted(&s, 0.8 * MAX, &[]);
        assert_eq!(clean.trials.len(), clean.rates.len());
        assert!(clean.rates.iter().all(|d| d.tries.len() == 1));
        let ndr = clean.ndr.pps;
        assert!((0.79 * MAX..=0.8 * MAX).contains(&ndr), "{ndr}");
        // A hiccup in the first bisection step (at half the maximum):
        // one trial decides the rate, and the NDR lands below it.
        let fooled = scripted(&s, 0.8 * MAX, &[false, true]);
        assert_eq!(fooled.rates[1].offered_pps, Some(0.5 * MAX));
        assert_eq!(fooled.rates[1].verdict, Verdict::Fail);
        assert!(fooled.ndr.pps < 0.5 * MAX, "{}", fooled.ndr.pps);
    }

    #[test]
    fn three_tries_see_through_the_hiccup() {
        let s = spec(3, 1);
        let clean = scripted(&s, 0.8 * MAX, &[]);
        // The maximum fails twice; the first bisection step is trial 2.
        assert_eq!(clean.rates[0].tries, vec![0, 1]);
        let r = scripted(&s, 0.8 * MAX, &[false, false, true]);
        let d = &r.rates[1];
        assert_eq!((d.offered_pps, d.verdict), (Some(0.5 * MAX), Verdict::Pass));
        assert_eq!((d.tries.clone(), d.passed, d.failed), (vec![2, 3], 1, 1));
        assert_eq!(r.ndr.each, clean.ndr.each);
        assert_eq!(r.pdr.each, clean.pdr.each);
        assert_eq!(path(&r), path(&clean));
    }

    #[test]
    fn the_max_can_pass_after_a_lost_try() {
        // A device faster than the generator: the maximum passes, at the
        // second try after a hiccup, and both rates are the maximum.
        let r = scripted(&spec(3, 1), 2.0 * MAX, &[true]);
        assert_eq!(r.rates.len(), 1);
        let d = &r.rates[0];
        assert_eq!(
            (d.verdict, d.pdr_verdict),
            (Verdict::Pass, Some(Verdict::Pass))
        );
        assert_eq!((d.passed, d.failed), (1, 1));
        assert_eq!((r.ndr.pps, r.pdr.pps, r.max_pps), (MAX, MAX, MAX));
        // Losing 0.3 % at max: no NDR there, but the PDR is the maximum.
        let r = scripted(&spec(3, 1), 0.997 * MAX, &[]);
        let d = &r.rates[0];
        assert_eq!(
            (d.verdict, d.pdr_verdict),
            (Verdict::Fail, Some(Verdict::Pass))
        );
        assert_eq!(r.pdr.pps, MAX);
        assert!(r.ndr.pps < MAX && r.ndr.pps >= 0.98 * MAX, "{}", r.ndr.pps);
    }

    #[test]
    fn searches_keep_their_values_and_spread() {
        // Three searches; a lasting loss (three hiccups in a row) fails the
        // first rate of the second search's NDR bisection.
        let clean = scripted(&spec(3, 1), 0.8 * MAX, &[]);
        let n = clean.trials.len();
        let mut h = vec![false; 3 * n];
        h[n + 2..n + 4].fill(true);
        let r = scripted(&spec(3, 3), 0.8 * MAX, &h);
        assert_eq!(r.ndr.each.len(), 3);
        assert_eq!(r.ndr.each[0], clean.ndr.pps);
        assert!(r.ndr.each[1] < 0.5 * MAX);
        assert_eq!(r.ndr.pps, clean.ndr.pps, "the median outvotes it");
        assert_eq!(r.ndr.spread, clean.ndr.pps - r.ndr.each[1]);
    }

    #[test]
    fn a_stop_fails_the_rate_being_tried() {
        let stop = AtomicBool::new(false);
        let mut dev = Device {
            capacity: 0.8 * MAX,
            hiccups: Vec::new(),
            ran: 0,
        };
        let r = search_with(&spec(9, 3), 64.0, &stop, &mut |_| {}, &mut |rs| {
            // Stopped during the first try at max.
            stop.store(true, Ordering::Relaxed);
            dev.run(rs)
        });
        assert_eq!(r.trials.len(), 1);
        assert_eq!(r.rates[0].verdict, Verdict::Fail);
        assert!(r.latency.is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Hiccups that never fail a majority of a rate's tries in a row
        /// leave the search exactly where it is without them.
        #[test]
        fn hiccups_shorter_than_a_majority_do_not_move_the_result(
            capacity in 0.02..1.2f64,
            tries in 2u32..=MAX_TRIES,
            mut hiccups in proptest::collection::vec(any::<bool>(), 0..120),
        ) {
            let majority = tries as usize / 2 + 1;
            let mut run = 0;
            for h in &mut hiccups {
                if *h && run + 1 >= majority {
                    *h = false;
                }
                run = if *h { run + 1 } else { 0 };
            }
            let s = spec(tries, 1);
            let clean = scripted(&s, capacity * MAX, &[]);
            let r = scripted(&s, capacity * MAX, &hiccups);
            prop_assert_eq!(path(&r), path(&clean));
            prop_assert_eq!(&r.ndr.each, &clean.ndr.each);
            prop_assert_eq!(&r.pdr.each, &clean.pdr.each);
            // And the clean search is right, within its precision.
            let (ndr, top) = (clean.ndr.pps, clean.max_pps);
            prop_assert!(ndr <= capacity * MAX);
            prop_assert!(ndr >= (capacity * MAX).min(top) - s.precision * top);
        }
    }

    /// A clock that moves 1 µs each time it is read: runs on it end by
    /// themselves, with no real time in them.
    struct Ticking(AtomicU64);

    impl Clock for Ticking {
        fn now_ns(&self) -> u64 {
            self.0.fetch_add(1_000, Ordering::Relaxed)
        }
    }

    /// The in-memory wire, losing a given number of the probes of given
    /// streams: the loss of chosen trials of a search and no others.
    struct Lossy {
        port: MemPort,
        lose: HashMap<u16, u64>,
    }

    impl Port for Lossy {
        type Buf = HeapBuf;

        fn rx_burst(&mut self, out: &mut Burst<HeapBuf>) {
            let mut i = out.len();
            self.port.rx_burst(out);
            while i < out.len() {
                let left = match probe::read(out[i].data()) {
                    Received::Probe(p) => self.lose.get_mut(&p.tag).filter(|n| **n > 0),
                    _ => None,
                };
                match left {
                    Some(n) => {
                        *n -= 1;
                        out.remove(i);
                    }
                    None => i += 1,
                }
            }
        }

        fn tx_burst(&mut self, pkts: &mut Burst<HeapBuf>) -> usize {
            self.port.tx_burst(pkts)
        }

        fn encap(&self, buf: &mut HeapBuf, dst: &NativeAddr) -> bool {
            self.port.encap(buf, dst)
        }

        fn link_header(&self, dst: &NativeAddr) -> Option<LinkHeader> {
            self.port.link_header(dst)
        }

        fn alloc(&mut self) -> Option<HeapBuf> {
            self.port.alloc()
        }

        fn native_addr(&self) -> NativeAddr {
            self.port.native_addr()
        }

        fn link_kind(&self) -> LinkKind {
            self.port.link_kind()
        }
    }

    /// A search on the in-memory wire that loses, for each `(trial, n)` of
    /// `lose`, `n` probes of that trial (of its stream tag).
    fn on_the_wire(tries: u32, lose: &[(u16, u64)]) -> SearchResult {
        let (a, b) = mem_link(
            4096,
            NativeAddr::mac([2, 0, 0, 0, 0, 1]),
            NativeAddr::mac([2, 0, 0, 0, 0, 2]),
        );
        let mut s = spec(tries, 1);
        s.trial = Duration::from_millis(1);
        s.latency_duration = Duration::from_millis(1);
        s.base.drain = Duration::from_millis(1);
        s.precision = 0.25;
        let tag = s.base.tag;
        let t = Profile::default().build(LinkKind::Memory, tag).unwrap();
        let tx = Lossy {
            port: a,
            lose: HashMap::new(),
        };
        let rx = Lossy {
            port: b,
            lose: lose.iter().map(|&(k, n)| (tag + 1 + k, n)).collect(),
        };
        let mut g = Generator::new(tx, Some(rx), NativeAddr::NONE, t, tag).unwrap();
        let clock = Ticking(AtomicU64::new(0));
        let r = search(
            &mut g,
            &clock,
            &s,
            64.0,
            &AtomicBool::new(false),
            &mut |_| {},
            &mut |_| {},
        );
        check_bookkeeping(&r);
        r
    }

    #[test]
    fn a_probe_lost_in_one_try_at_max_is_tried_again_on_the_wire() {
        // Three tries: one probe lost in the first trial at max; the second
        // passes, so the NDR is the maximum, and no bisection follows.
        let r = on_the_wire(3, &[(0, 1)]);
        assert_eq!(r.trials.len(), 2);
        assert_eq!(r.trials[0].result.lost, 1);
        assert!(r.trials[0].result.tx.probes > 1000);
        let v = serde_json::to_value(&r).unwrap();
        let d = &v["rates"][0];
        assert_eq!(v["rates"].as_array().unwrap().len(), 1);
        assert_eq!(d["phase"], "max");
        assert_eq!(d["tries"], serde_json::json!([0, 1]));
        assert_eq!((&d["passed"], &d["failed"]), (&1.into(), &1.into()));
        assert_eq!(
            (&d["verdict"], &d["pdr_verdict"]),
            (&"pass".into(), &"pass".into())
        );
        assert_eq!(d["offered_pps"], serde_json::Value::Null);
        assert_eq!(
            (&v["trials"][0]["try"], &v["trials"][1]["try"]),
            (&0.into(), &1.into())
        );
        assert_eq!(v["tries"], 3);
        assert_eq!(v["ndr"]["spread"], 0.0);
        assert_eq!(r.ndr.pps, r.trials[1].result.tx_pps);
        assert_eq!(r.pdr.pps, r.max_pps);
        assert!(r.latency.is_some());
        // The same wire with one try a rate: as before, the lost probe
        // fails the maximum and the bisection lands below it.
        let r = on_the_wire(1, &[(0, 1)]);
        let d = &r.rates[0];
        assert_eq!(
            (d.verdict, d.pdr_verdict),
            (Verdict::Fail, Some(Verdict::Pass))
        );
        assert!(r.rates.len() > 1 && r.rates.iter().all(|d| d.tries.len() == 1));
        assert!(r.ndr.pps < r.max_pps);
        assert_eq!(r.pdr.pps, r.max_pps);
    }

    #[test]
    fn a_rate_lost_in_a_majority_of_tries_fails_on_the_wire() {
        // Every probe of the first two trials at max lost (a majority of
        // three): the maximum fails after two tries, and the search bisects.
        let r = on_the_wire(3, &[(0, u64::MAX), (1, u64::MAX)]);
        let d = &r.rates[0];
        assert_eq!(d.tries, vec![0, 1]);
        assert_eq!(
            (d.verdict, d.pdr_verdict),
            (Verdict::Fail, Some(Verdict::Fail))
        );
        assert_eq!((d.passed, d.failed), (0, 2));
        assert!(r.rates.iter().skip(1).all(|d| d.phase != "max"));
        assert!(r.ndr.pps > 0.0 && r.ndr.pps < r.max_pps);
    }
}
