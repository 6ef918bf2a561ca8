//! A seeded impairment layer for the in-memory backend: loss, duplication,
//! reordering, delay (with optional jitter) and corruption, injected with
//! exact, readable counts so that tests can compare what a receiver (or a
//! packet generator) measures with what was injected.
//!
//! # Where it sits
//!
//! On the wire, in one direction: [`crate::memory::MemPort::with_impairment`]
//! impairs the packets that arrive at that port. The sending end hands each
//! packet to the [`Impairer`] when it transmits (so that a delay counts from
//! the moment of transmission, whenever the receiver polls), and the
//! receiving end takes the packets the impairer releases. An [`Impairer`] is
//! also usable on its own ([`Impairer::push`], [`Impairer::pop`]).
//!
//! # The model, per packet pushed (in the order they are pushed)
//!
//! 1. The wire's capacity counts every buffer held (reorder slot and delay
//!    line): a push when it is reached is refused, as by a full ring, and
//!    not seen (a duplicate may take the count one over).
//! 2. **Loss** (`loss`): the packet is dropped (`lost`).
//! 3. **Duplication** (`duplicate`): a copy (same bytes and metadata) is made
//!    and follows the original immediately (`duplicated` counts the copies).
//! 4. **Corruption** (`corrupt`), decided for the original and the copy
//!    independently: the buffer is delivered with its receive-error flag set
//!    ([`HeapBuf::set_rx_error`]); `corrupted` counts the flagged buffers.
//! 5. **Reordering** (`reorder`): the packet (with its copy, if any) is held
//!    back and released right after the next packet that is not lost:
//!    `reordered` counts held packets (not copies). A packet that follows a
//!    held one is never held itself. So a receiver that numbers packets sees
//!    `reordered` first arrivals below the highest number seen so far. A held
//!    packet with no successor stays held until [`Impairer::flush`].
//! 6. **Delay** (`delay`, plus a uniform `0..=jitter`): each buffer is due at
//!    `now + delay + jitter` on the [`Clock`], but never before the buffer
//!    ahead of it (the line stays in order); the receiver gets it once the
//!    clock has reached that time. `delayed` counts the buffers that were due
//!    later than when they entered the line. With a [`TestClock`](crate::clock::TestClock) and no
//!    jitter, every packet that is not reordered arrives exactly `delay`
//!    after it was sent.
//!
//! Every packet pushed draws the same number of random values, whatever the
//! probabilities: with one seed, the packets lost are the same whether or
//! not duplication is also on, and so on. The same seed and the same packets
//! give the same result.
//!
//! At quiescence (nothing held: [`ImpairStats::held`] is 0) the counts are
//! exact: `passed = seen - lost + duplicated`.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use arrayvec::ArrayVec;
use rrp::rng::Rng;

use crate::clock::Clock;
use crate::heap::HeapBuf;
use crate::{BURST, Burst, PacketBuf};

/// What to inject, and the seed that decides which packets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImpairConfig {
    /// Seed of the random decisions.
    pub seed: u64,
    /// Probability (0..=1) that a packet is lost.
    pub loss: f64,
    /// Probability that a packet is duplicated.
    pub duplicate: f64,
    /// Probability that a packet is held back behind the next one.
    pub reorder: f64,
    /// Probability that a buffer is delivered with its receive-error flag set.
    pub corrupt: f64,
    /// Fixed delay of every packet.
    pub delay: Duration,
    /// Extra delay, uniform in `0..=jitter` per buffer (0: none).
    pub jitter: Duration,
}

impl Default for ImpairConfig {
    fn default() -> Self {
        ImpairConfig {
            seed: 0,
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            corrupt: 0.0,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
        }
    }
}

impl ImpairConfig {
    /// No impairment, with this seed (set the fields you want).
    pub fn seeded(seed: u64) -> ImpairConfig {
        ImpairConfig {
            seed,
            ..Default::default()
        }
    }

    /// Panics unless every probability is within 0..=1.
    pub fn validate(&self) {
        for (name, p) in [
            ("loss", self.loss),
            ("duplicate", self.duplicate),
            ("reorder", self.reorder),
            ("corrupt", self.corrupt),
        ] {
            assert!(
                (0.0..=1.0).contains(&p),
                "impairment probability {name} = {p} is not within 0..=1"
            );
        }
    }
}

/// Exact counts of what the impairment layer did (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImpairStats {
    /// Packets accepted from the sender.
    pub seen: u64,
    /// Buffers handed to the receiver (copies included).
    pub passed: u64,
    /// Packets dropped.
    pub lost: u64,
    /// Copies made.
    pub duplicated: u64,
    /// Packets held back behind their successor.
    pub reordered: u64,
    /// Buffers due later than when they entered the delay line.
    pub delayed: u64,
    /// Buffers flagged with a receive error.
    pub corrupted: u64,
}

impl ImpairStats {
    /// Buffers still held (reorder slot and delay line).
    pub fn held(&self) -> u64 {
        self.seen - self.lost + self.duplicated - self.passed
    }
}

/// A packet and its copy, moving together.
struct Unit {
    bufs: ArrayVec<HeapBuf, 2>,
    jitter: [u64; 2],
}

struct State {
    rng: Rng,
    line: VecDeque<(u64, HeapBuf)>,
    held: Option<Unit>,
    last_due: u64,
    stats: ImpairStats,
}

impl State {
    fn in_flight(&self) -> usize {
        self.line.len() + self.held.as_ref().map_or(0, |u| u.bufs.len())
    }

    fn enqueue(&mut self, unit: Unit, now: u64, delay: u64) {
        for (b, j) in unit.bufs.into_iter().zip(unit.jitter) {
            let due = self
                .last_due
                .max(now.saturating_add(delay).saturating_add(j));
            if due > now {
                self.stats.delayed += 1;
            }
            self.last_due = due;
            self.line.push_back((due, b));
        }
    }
}

/// One direction of an impaired wire: packets go in with
/// [`Impairer::push`] and come out, impaired, with [`Impairer::pop`].
/// Shared between the two ends (and any reader of its counts).
pub struct Impairer {
    cfg: ImpairConfig,
    delay_ns: u64,
    jitter_ns: u64,
    clock: Arc<dyn Clock>,
    capacity: usize,
    state: Mutex<State>,
}

impl fmt::Debug for Impairer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Impairer")
            .field("cfg", &self.cfg)
            .field("capacity", &self.capacity)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Copies a buffer: same size, headroom, bytes and metadata.
fn copy_buf(b: &HeapBuf) -> HeapBuf {
    let mut c = HeapBuf::new(b.capacity(), b.headroom());
    assert!(c.set_data(b.data(), b.headroom()), "same size");
    c.set_native_src(b.native_src());
    c.set_native_dst(b.native_dst());
    c.set_rx_error(b.rx_error());
    c
}

impl Impairer {
    /// An impairer holding at most `capacity` buffers, reading time from `clock`.
    pub fn new(cfg: ImpairConfig, clock: Arc<dyn Clock>, capacity: usize) -> Impairer {
        cfg.validate();
        Impairer {
            delay_ns: cfg.delay.as_nanos() as u64,
            jitter_ns: cfg.jitter.as_nanos() as u64,
            cfg,
            clock,
            capacity: capacity.max(1),
            state: Mutex::new(State {
                rng: Rng::new(cfg.seed),
                line: VecDeque::new(),
                held: None,
                last_due: 0,
                stats: ImpairStats::default(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves consistent state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The configuration.
    pub fn config(&self) -> &ImpairConfig {
        &self.cfg
    }

    /// The clock it reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Takes a packet from the sender; gives it back when `capacity`
    /// buffers are held already (the packet is then not seen).
    pub fn push(&self, buf: HeapBuf) -> Result<(), HeapBuf> {
        let now = self.clock.now_ns();
        let mut s = self.lock();
        self.push_locked(&mut s, buf, now)
    }

    fn push_locked(&self, s: &mut State, mut buf: HeapBuf, now: u64) -> Result<(), HeapBuf> {
        if s.in_flight() >= self.capacity {
            return Err(buf);
        }
        s.stats.seen += 1;
        // Always the same draws per packet, whatever the probabilities.
        let r_loss = s.rng.next_f64();
        let r_dup = s.rng.next_f64();
        let r_corrupt = [s.rng.next_f64(), s.rng.next_f64()];
        let r_reorder = s.rng.next_f64();
        let r_jitter = [s.rng.next_u64(), s.rng.next_u64()];
        if r_loss < self.cfg.loss {
            s.stats.lost += 1;
            return Ok(());
        }
        let copy = (r_dup < self.cfg.duplicate).then(|| copy_buf(&buf));
        if r_corrupt[0] < self.cfg.corrupt {
            buf.set_rx_error(true);
            s.stats.corrupted += 1;
        }
        let mut bufs = ArrayVec::new();
        bufs.push(buf);
        if let Some(mut c) = copy {
            s.stats.duplicated += 1;
            if r_corrupt[1] < self.cfg.corrupt {
                c.set_rx_error(true);
                s.stats.corrupted += 1;
            }
            bufs.push(c);
        }
        let jitter = if self.jitter_ns == 0 {
            [0, 0]
        } else {
            r_jitter.map(|r| r % (self.jitter_ns + 1))
        };
        let unit = Unit { bufs, jitter };
        if let Some(held) = s.held.take() {
            s.enqueue(unit, now, self.delay_ns);
            s.enqueue(held, now, self.delay_ns);
            s.stats.reordered += 1;
        } else if r_reorder < self.cfg.reorder {
            s.held = Some(unit);
        } else {
            s.enqueue(unit, now, self.delay_ns);
        }
        Ok(())
    }

    /// Takes packets from the front of `pkts` until one is refused; the
    /// refused ones stay in `pkts`, in order. Returns how many were taken.
    pub fn push_burst(&self, pkts: &mut Burst<HeapBuf>) -> usize {
        let now = self.clock.now_ns();
        let mut s = self.lock();
        let all = core::mem::take(pkts);
        let mut taken = 0;
        for b in all {
            if !pkts.is_empty() {
                pkts.push(b);
                continue;
            }
            match self.push_locked(&mut s, b, now) {
                Ok(()) => taken += 1,
                Err(b) => pkts.push(b),
            }
        }
        taken
    }

    /// The next buffer that is due, if any.
    pub fn pop(&self) -> Option<HeapBuf> {
        let now = self.clock.now_ns();
        let mut s = self.lock();
        Self::pop_locked(&mut s, now)
    }

    fn pop_locked(s: &mut State, now: u64) -> Option<HeapBuf> {
        match s.line.front() {
            Some((due, _)) if *due <= now => {
                s.stats.passed += 1;
                s.line.pop_front().map(|(_, b)| b)
            }
            _ => None,
        }
    }

    /// Appends due buffers to `out` until it is full; returns how many.
    pub fn pop_burst(&self, out: &mut Burst<HeapBuf>) -> usize {
        let now = self.clock.now_ns();
        let mut s = self.lock();
        let mut n = 0;
        while out.len() < BURST {
            match Self::pop_locked(&mut s, now) {
                Some(b) => {
                    out.push(b);
                    n += 1;
                }
                None => break,
            }
        }
        n
    }

    /// Buffers due now (what [`Impairer::pop`] would return in a row).
    pub fn ready(&self) -> usize {
        let now = self.clock.now_ns();
        self.lock()
            .line
            .iter()
            .take_while(|(due, _)| *due <= now)
            .count()
    }

    /// When the next buffer of the delay line is due (None: the line is
    /// empty; a reorder-held packet is not in the line).
    pub fn next_due_ns(&self) -> Option<u64> {
        self.lock().line.front().map(|(d, _)| *d)
    }

    /// Buffers held (reorder slot and delay line).
    pub fn held(&self) -> usize {
        self.lock().in_flight()
    }

    /// Releases a packet held for reordering that has no successor yet into
    /// the delay line (it is then not counted as reordered). Returns whether
    /// one was held.
    pub fn flush(&self) -> bool {
        let now = self.clock.now_ns();
        let mut s = self.lock();
        match s.held.take() {
            Some(u) => {
                s.enqueue(u, now, self.delay_ns);
                true
            }
            None => false,
        }
    }

    /// The counts so far (one consistent snapshot).
    pub fn stats(&self) -> ImpairStats {
        self.lock().stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "not within 0..=1")]
    fn bad_probability() {
        ImpairConfig {
            loss: 1.5,
            ..Default::default()
        }
        .validate();
    }
}
