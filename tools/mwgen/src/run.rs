//! One measured run in real time: warm-up, transmission at a rate for a
//! duration or a count, drain, and the result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ports::Port;
use ports::clock::Clock;
use serde::Serialize;

use crate::generator::{Generator, TxCounts};
use crate::receiver::{Latency, Receiver, RxCounts};

/// What the generator does when a poll found nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Poll again at once (a core of its own: DPDK).
    Spin,
    /// After a few empty polls, sleep until the next packet is due (at most
    /// 200 µs), so that a router on the same cores gets them (sockets).
    Sleep,
}

/// One run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Packets per second; `None`: as fast as the port takes them.
    pub pps: Option<f64>,
    /// How long to send (`None`: until `count`, or until stopped).
    pub duration: Option<Duration>,
    /// How many packets to send (`None`: until `duration`).
    pub count: Option<u64>,
    /// Receive-only polling before sending (lets links come up, drains old
    /// packets; a DPDK memif client fills its rings only when it polls, docs/mwgen.md).
    pub warmup: Duration,
    /// How long to wait for packets in flight after the last one was sent.
    pub drain: Duration,
    /// Behaviour when idle.
    pub idle: Idle,
    /// Stream tag of the run.
    pub tag: u16,
}

/// A progress report, about once a second.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Progress {
    /// Seconds since the start of transmission.
    pub elapsed_s: f64,
    /// Packets sent so far.
    pub sent: u64,
    /// Probes received once so far.
    pub received: u64,
    /// Transmit rate over the last interval, packets/s.
    pub tx_pps: f64,
    /// Receive rate over the last interval, packets/s.
    pub rx_pps: f64,
    /// Packets the port refused so far.
    pub refused: u64,
}

/// One EI value seen on received probes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EiSeen {
    /// The value, hexadecimal (`0x0`).
    pub value: String,
    /// Probes that carried it.
    pub count: u64,
}

/// The outcome of a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// The rate asked for, packets/s (`None`: max).
    pub offered_pps: Option<f64>,
    /// Seconds of transmission.
    pub duration_s: f64,
    /// The sending side.
    pub tx: TxCounts,
    /// The receiving side.
    pub rx: RxCounts,
    /// Probes received once.
    pub unique: u64,
    /// Probes sent and never received (after the drain).
    pub lost: u64,
    /// `lost / probes sent` (0 when nothing was sent).
    pub loss_ratio: f64,
    /// Packets sent per second.
    pub tx_pps: f64,
    /// Frame bits sent per second.
    pub tx_bps: f64,
    /// Probes received once per second of transmission.
    pub rx_pps: f64,
    /// Frame bits received per second of transmission.
    pub rx_bps: f64,
    /// One-way latency of unique probes, ns.
    pub latency_ns: Latency,
    /// EI values seen.
    pub ei: Vec<EiSeen>,
    /// Probes with an EI beyond the distinct values kept.
    pub ei_other: u64,
    /// Whether the run was stopped early (Ctrl-C).
    pub interrupted: bool,
}

fn sleep_idle(gen_wait_ns: u64) {
    let ns = gen_wait_ns.clamp(20_000, 200_000);
    std::thread::sleep(Duration::from_nanos(ns));
}

/// Runs `g` once on `clock` as `spec` says; `progress` is called about
/// once a second; `stop` ends transmission early (then the drain).
pub fn run<P: Port>(
    g: &mut Generator<P>,
    clock: &dyn Clock,
    spec: &RunSpec,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> RunResult {
    // Warm-up: receive only.
    let t0 = clock.now_ns();
    let mut empty = 0u32;
    while clock.now_ns() - t0 < spec.warmup.as_nanos() as u64 {
        if g.poll_rx(clock.now_ns()) == 0 {
            empty += 1;
            if spec.idle == Idle::Sleep && empty > 64 {
                sleep_idle(100_000);
            }
        }
    }
    let start = clock.now_ns();
    g.start(start, spec.pps, spec.count, spec.tag);
    let end = spec
        .duration
        .map(|d| start.saturating_add(d.as_nanos() as u64));
    let mut tick = start + 1_000_000_000;
    let (mut last_sent, mut last_rx, mut last_t) = (0u64, 0u64, start);
    let mut interrupted = false;
    let mut empty = 0u32;
    let tx_end;
    loop {
        let now = clock.now_ns();
        if g.tx_done() || end.is_some_and(|e| now >= e) {
            tx_end = now;
            break;
        }
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            tx_end = now;
            break;
        }
        let s = g.poll_tx(now);
        // A fresh time for receiving: the burst just built took time too.
        let r = g.poll_rx(clock.now_ns());
        if s + r == 0 {
            empty += 1;
            if spec.idle == Idle::Sleep && empty > 64 {
                sleep_idle(g.wait_ns(clock.now_ns()));
            }
        } else {
            empty = 0;
        }
        if now >= tick {
            let dt = (now - last_t) as f64 / 1e9;
            let (sent, rx) = (g.tx_counts().sent, g.receiver().counts().unique());
            progress(&Progress {
                elapsed_s: (now - start) as f64 / 1e9,
                sent,
                received: rx,
                tx_pps: (sent - last_sent) as f64 / dt,
                rx_pps: (rx - last_rx) as f64 / dt,
                refused: g.tx_counts().refused,
            });
            (last_sent, last_rx, last_t) = (sent, rx, now);
            tick += 1_000_000_000;
        }
    }
    g.stop();
    // Drain: until every probe is in or the drain time is over.
    let d0 = clock.now_ns();
    let mut empty = 0u32;
    while g.outstanding() > 0 && clock.now_ns() - d0 < spec.drain.as_nanos() as u64 {
        if g.poll_rx(clock.now_ns()) == 0 {
            empty += 1;
            if spec.idle == Idle::Sleep && empty > 64 {
                sleep_idle(50_000);
            }
        }
    }
    result(g, spec.pps, tx_end - start, interrupted)
}

/// The result of what `g` did over `tx_ns` nanoseconds of transmission.
pub fn result<P: Port>(
    g: &Generator<P>,
    offered_pps: Option<f64>,
    tx_ns: u64,
    interrupted: bool,
) -> RunResult {
    result_of(
        g.tx_counts().clone(),
        g.receiver(),
        offered_pps,
        tx_ns,
        interrupted,
    )
}

/// The result of sending `tx` and receiving what `r` accounted over `tx_ns`
/// nanoseconds of transmission (one generator's, or several cores' summed
/// and merged).
pub fn result_of(
    tx: TxCounts,
    r: &Receiver,
    offered_pps: Option<f64>,
    tx_ns: u64,
    interrupted: bool,
) -> RunResult {
    let rx = r.counts().clone();
    let unique = rx.unique();
    let lost = tx.probes.saturating_sub(unique);
    let secs = (tx_ns as f64 / 1e9).max(1e-9);
    let (ei, ei_other) = r.ei();
    RunResult {
        offered_pps,
        duration_s: tx_ns as f64 / 1e9,
        loss_ratio: if tx.probes == 0 {
            0.0
        } else {
            lost as f64 / tx.probes as f64
        },
        tx_pps: tx.sent as f64 / secs,
        tx_bps: tx.bytes as f64 * 8.0 / secs,
        rx_pps: unique as f64 / secs,
        rx_bps: rx.bytes as f64 * 8.0 / secs,
        latency_ns: r.latency(),
        ei: ei
            .iter()
            .map(|&(v, n)| EiSeen {
                value: format!("{v:#x}"),
                count: n,
            })
            .collect(),
        ei_other,
        unique,
        lost,
        tx,
        rx,
        interrupted,
    }
}
