//! The rings between a worker and the control thread (docs/architecture.md "Threads
//! and data flow"): punted packets for this box, each [`PuntClass`] with its
//! own rate limit and its own slots (routing traffic served first, so that
//! a flood of one class costs that class only; docs/dataplane.md "Punt
//! classes"), notices for the control plane (no route, MTU, redirect, partition),
//! and packets the control plane injects. Every ring is bounded and
//! lock-free; the worker rate-limits before it enqueues, and when a ring is
//! full it drops and counts. The worker never blocks.
//!
//! Punt slots are recycled: the control thread returns each one after use,
//! so that punting copies into memory allocated at start-up.

use std::sync::Arc;

use arrayvec::ArrayVec;
use crossbeam_queue::ArrayQueue;
pub use rrp::PuntClass;
use rrp::punt_source::HEAVIEST_PER_CLASS;
use rrp::router::Notice;
use rrp::wire::packet::Layout;
use rrp::{DropReason, NativeAddr, PortId};
use rrp::{PuntBudget, PuntBudgets, PuntSource};

use crate::wake::Wake;

/// A packet handed to the control plane.
#[derive(Debug, Clone)]
pub struct Punt {
    /// The class it was punted under (its slot goes back to that class).
    pub class: PuntClass,
    /// The port it arrived on.
    pub in_port: PortId,
    /// The HR it is delivered to (differs from `in_port` for an egress-only
    /// L2RH naming another HR of this box).
    pub hr_port: PortId,
    /// Its native source on the ingress SAN.
    pub native_src: NativeAddr,
    /// Whether the port flagged a receive error.
    pub rx_error: bool,
    /// Where the parts of the packet lie in `data`, as the worker located
    /// them (the control plane does not walk the packet again).
    pub layout: Layout,
    /// The packet, from its first remaining L2RH or EEP header to its trailer.
    pub data: Vec<u8>,
}

impl Default for Punt {
    fn default() -> Self {
        Punt {
            class: PuntClass::Local,
            in_port: PortId::default(),
            hr_port: PortId::default(),
            native_src: NativeAddr::default(),
            rx_error: false,
            layout: Layout::default(),
            data: Vec::new(),
        }
    }
}

/// Where a punted packet came from and whom it is for.
#[derive(Debug, Clone, Copy, Default)]
pub struct PuntMeta {
    /// The port it arrived on.
    pub in_port: PortId,
    /// The HR it is delivered to.
    pub hr_port: PortId,
    /// Its native source.
    pub native_src: NativeAddr,
    /// Whether the port flagged a receive error.
    pub rx_error: bool,
    /// Where the parts of the packet lie.
    pub layout: Layout,
}

/// A packet the control plane asks a worker to transmit.
#[derive(Debug, Clone)]
pub struct Injection {
    /// Egress port.
    pub port: PortId,
    /// NativeAddr destination on the egress SAN.
    pub native_dst: NativeAddr,
    /// The MessageWay packet.
    pub data: Vec<u8>,
}

/// A token bucket on a clock in nanoseconds: `rate` per second, bursts of `burst`.
///
/// A refused event costs a subtraction and a comparison: an empty bucket
/// refuses without arithmetic until a token's time has passed, so that a
/// flood is dropped cheaply; the refill (a 128-bit division) runs at most
/// `rate` times a second.
#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    rate: u64,
    burst: u64,
    tokens: u64,
    last_ns: u64,
    /// Nanoseconds one token takes (at least 1).
    ns_per_token: u64,
}

impl RateLimit {
    /// `rate` events per second (0 = unlimited) in bursts of up to `burst`.
    pub fn new(rate: u64, burst: u64) -> RateLimit {
        RateLimit {
            rate,
            burst: burst.max(1),
            tokens: burst.max(1),
            last_ns: 0,
            ns_per_token: (1_000_000_000 / rate.max(1)).max(1),
        }
    }

    /// Whether an event at `now_ns` may pass; takes a token if so.
    #[inline]
    pub fn allow(&mut self, now_ns: u64) -> bool {
        if self.rate == 0 {
            return true;
        }
        if self.tokens == 0 && now_ns.saturating_sub(self.last_ns) < self.ns_per_token {
            return false;
        }
        self.refill(now_ns);
        if self.tokens > 0 {
            self.tokens -= 1;
            true
        } else {
            false
        }
    }

    /// Adds the tokens the time since the last refill made.
    #[inline]
    fn refill(&mut self, now_ns: u64) {
        let dt = now_ns.saturating_sub(self.last_ns);
        let add = (dt as u128 * self.rate as u128 / 1_000_000_000) as u64;
        if add > 0 {
            self.tokens = (self.tokens + add).min(self.burst);
            // Keep the remainder: advance by the time the added tokens took.
            self.last_ns += (add as u128 * 1_000_000_000 / self.rate as u128) as u64;
            if self.tokens == self.burst {
                self.last_ns = now_ns;
            }
        }
    }
}

/// Sizes and limits of one worker's rings.
#[derive(Debug, Clone, Copy)]
pub struct ChannelConfig {
    /// Punt slots per class (each class has its own).
    pub punt_slots: usize,
    /// Bytes per punt slot (the largest punted packet).
    pub punt_slot_bytes: usize,
    /// Notices in flight.
    pub notices: usize,
    /// Injections in flight.
    pub injections: usize,
    /// Each punt class's token bucket (docs/dataplane.md "Punt classes").
    pub punt_budgets: PuntBudgets,
    /// Notices per second (0 = unlimited) and burst.
    pub notice_rate: (u64, u64),
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig {
            punt_slots: 256,
            punt_slot_bytes: 9216,
            notices: 256,
            injections: 1024,
            punt_budgets: PuntBudgets::default(),
            notice_rate: (10_000, 256),
        }
    }
}

/// Sources of one punt class that get a bucket of their own (a power of
/// two, at least 2); sources whose native addresses hash alike share one, as in
/// stochastic fair queueing.
pub const SOURCE_BUCKETS: usize = 256;

/// A source's share of its class's budget: the class's rate and burst
/// divided by this (docs/dataplane.md "Punt classes").
pub const SOURCE_SHARE: u64 = 8;

/// The packets of one source bucket in two seconds of the worker's clock:
/// what the heaviest-sources report reads.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// The second (`now_ns / 1e9`) the `[0]` counts are of.
    second: u64,
    /// When that second ends (ns): a packet before it needs no division.
    second_end_ns: u64,
    /// Packets offered in that second and in the one before.
    offered: [u64; 2],
    /// Of those, dropped.
    dropped: [u64; 2],
    /// The source last seen in the bucket, and its port.
    native: NativeAddr,
    port: PortId,
}

impl Seen {
    /// Moves the counts on to the second of `now_ns`.
    #[inline]
    fn at(&mut self, now_ns: u64) {
        if now_ns < self.second_end_ns {
            return;
        }
        let second = now_ns / 1_000_000_000;
        let carry = second == self.second + 1;
        self.offered = [0, if carry { self.offered[0] } else { 0 }];
        self.dropped = [0, if carry { self.dropped[0] } else { 0 }];
        self.second = second;
        self.second_end_ns = (second + 1) * 1_000_000_000;
    }

    /// (offered, dropped) a second as of `second`: the last full second's,
    /// or this one's when more.
    fn rate(&self, second: u64) -> (u64, u64) {
        if second == self.second {
            if self.offered[0] >= self.offered[1] {
                (self.offered[0], self.dropped[0])
            } else {
                (self.offered[1], self.dropped[1])
            }
        } else if second == self.second + 1 {
            (self.offered[0], self.dropped[0])
        } else {
            (0, 0)
        }
    }
}

/// One source bucket of a class: its share of the class's budget and what
/// it sent.
#[derive(Debug, Clone, Copy)]
struct SourceBucket {
    share: RateLimit,
    seen: Seen,
}

/// The per-source buckets of one punt class.
#[derive(Debug)]
struct SourceShares {
    buckets: Box<[SourceBucket; SOURCE_BUCKETS]>,
}

impl SourceShares {
    fn new(budget: PuntBudget) -> SourceShares {
        SourceShares {
            buckets: Box::new(
                [SourceBucket {
                    share: Self::share(budget),
                    seen: Seen::default(),
                }; SOURCE_BUCKETS],
            ),
        }
    }

    /// One source's bucket: the class's rate and burst divided by
    /// [`SOURCE_SHARE`], rounded up.
    fn share(b: PuntBudget) -> RateLimit {
        RateLimit::new(
            b.per_s.div_ceil(SOURCE_SHARE),
            b.burst.div_ceil(SOURCE_SHARE),
        )
    }

    /// Gives every source the share of a new class budget, in place (the
    /// worker does not allocate after start); what they sent is kept.
    fn reset(&mut self, budget: PuntBudget) {
        for b in self.buckets.iter_mut() {
            b.share = Self::share(budget);
        }
    }

    /// The bucket of `src`.
    #[inline]
    fn bucket(&mut self, src: &NativeAddr) -> &mut SourceBucket {
        use std::hash::Hasher;
        let mut h = rrp::fxhash::FxHasher::default();
        h.write(src.as_bytes());
        // The top bits: a multiplicative hash carries every input bit up.
        let i = (h.finish() >> (64 - SOURCE_BUCKETS.trailing_zeros())) as usize;
        &mut self.buckets[i]
    }

    /// The heaviest buckets as of `second`, heaviest first, into `out`.
    fn heaviest(
        &self,
        class: PuntClass,
        second: u64,
        out: &mut ArrayVec<PuntSource, HEAVIEST_PER_CLASS>,
    ) {
        for b in self.buckets.iter() {
            let (offered, dropped) = b.seen.rate(second);
            if offered == 0 {
                continue;
            }
            let pos = out
                .iter()
                .position(|s| s.offered_per_s < offered)
                .unwrap_or(out.len());
            if pos == HEAVIEST_PER_CLASS {
                continue;
            }
            if out.is_full() {
                out.pop();
            }
            out.insert(
                pos,
                PuntSource {
                    class,
                    port: b.seen.port,
                    // The worker knows its ports' kinds and sets it.
                    link: rrp::LinkKind::Memory,
                    native: b.seen.native,
                    offered_per_s: offered,
                    dropped_per_s: dropped,
                },
            );
        }
    }
}

pub use rrp::punt_source::HEAVIEST;

#[derive(Debug)]
struct Rings {
    free: [ArrayQueue<Punt>; PuntClass::COUNT],
    full: [ArrayQueue<Punt>; PuntClass::COUNT],
    notices: ArrayQueue<Notice>,
    injections: ArrayQueue<Injection>,
    /// New punt budgets and notice rate from the control side (a reload),
    /// taken by the worker on its next punt or notice.
    rates: ArrayQueue<(PuntBudgets, (u64, u64))>,
    /// Wakes the control thread when it sleeps and something was queued.
    wake: Wake,
}

/// A worker's side of its rings.
#[derive(Debug)]
pub struct WorkerChannels {
    rings: Arc<Rings>,
    punt_limit: [RateLimit; PuntClass::COUNT],
    sources: [SourceShares; PuntClass::COUNT],
    notice_limit: RateLimit,
    slot_bytes: usize,
    /// Whether a punt or notice was queued since the last
    /// [`WorkerChannels::wake_control`].
    queued: bool,
}

/// The control thread's side of one worker's rings.
#[derive(Debug, Clone)]
pub struct ControlChannels {
    rings: Arc<Rings>,
}

fn class_limits(b: &PuntBudgets) -> [RateLimit; PuntClass::COUNT] {
    b.all().map(|b| RateLimit::new(b.per_s, b.burst))
}

/// Makes the rings of one worker.
pub fn channels(cfg: ChannelConfig) -> (WorkerChannels, ControlChannels) {
    let slots = cfg.punt_slots.max(1);
    let mk_free = |class: PuntClass| {
        let q = ArrayQueue::new(slots);
        for _ in 0..slots {
            let _ = q.push(Punt {
                class,
                data: Vec::with_capacity(cfg.punt_slot_bytes),
                ..Punt::default()
            });
        }
        q
    };
    let rings = Arc::new(Rings {
        free: PuntClass::ALL.map(mk_free),
        full: PuntClass::ALL.map(|_| ArrayQueue::new(slots)),
        notices: ArrayQueue::new(cfg.notices.max(1)),
        injections: ArrayQueue::new(cfg.injections.max(1)),
        rates: ArrayQueue::new(1),
        wake: Wake::default(),
    });
    (
        WorkerChannels {
            rings: rings.clone(),
            punt_limit: class_limits(&cfg.punt_budgets),
            sources: PuntClass::ALL.map(|c| SourceShares::new(cfg.punt_budgets.of(c))),
            notice_limit: RateLimit::new(cfg.notice_rate.0, cfg.notice_rate.1),
            slot_bytes: cfg.punt_slot_bytes,
            queued: false,
        },
        ControlChannels { rings },
    )
}

impl WorkerChannels {
    /// Adopts rates the control side set since the last punt or notice.
    #[cold]
    fn adopt_rates(&mut self, (punt, notice): (PuntBudgets, (u64, u64))) {
        self.punt_limit = class_limits(&punt);
        for (shares, class) in self.sources.iter_mut().zip(PuntClass::ALL) {
            shares.reset(punt.of(class));
        }
        self.notice_limit = RateLimit::new(notice.0, notice.1);
    }

    /// Queues a copy of `data` for the control plane, with the metadata of
    /// `meta` (whose `data` is ignored), or says why not. Every packet
    /// offered is counted in its source's bucket, passed or dropped (the
    /// heaviest-sources report).
    #[inline]
    pub fn punt(
        &mut self,
        now_ns: u64,
        class: PuntClass,
        meta: PuntMeta,
        data: &[u8],
    ) -> Result<(), DropReason> {
        if let Some(r) = self.rings.rates.pop() {
            self.adopt_rates(r);
        }
        let c = class as usize;
        let bucket = self.sources[c].bucket(&meta.native_src);
        bucket.seen.at(now_ns);
        bucket.seen.offered[0] += 1;
        bucket.seen.native = meta.native_src;
        bucket.seen.port = meta.in_port;
        let verdict = if data.len() > self.slot_bytes {
            Err(DropReason::PuntFull)
        } else if class.shared_by_source() && !bucket.share.allow(now_ns) {
            // A source over its share is refused before it takes a token
            // of the class (another source's room).
            Err(DropReason::PuntSource)
        } else if !self.punt_limit[c].allow(now_ns) {
            Err(DropReason::PuntRate)
        } else {
            match self.rings.free[c].pop() {
                Some(mut slot) => {
                    slot.class = class;
                    slot.in_port = meta.in_port;
                    slot.hr_port = meta.hr_port;
                    slot.native_src = meta.native_src;
                    slot.rx_error = meta.rx_error;
                    slot.layout = meta.layout;
                    slot.data.clear();
                    slot.data.extend_from_slice(data);
                    // `full` has as many places as there are slots: this
                    // cannot fail.
                    let _ = self.rings.full[c].push(slot);
                    self.queued = true;
                    Ok(())
                }
                None => Err(DropReason::PuntFull),
            }
        };
        if verdict.is_err() {
            self.sources[c].bucket(&meta.native_src).seen.dropped[0] += 1;
        }
        verdict
    }

    /// The heaviest sources of each class as of `now_ns` (at most
    /// [`HEAVIEST_PER_CLASS`] each, heaviest first, in class order): a scan
    /// of the buckets, for the worker's periodic report, never per packet.
    pub fn heaviest(&self, now_ns: u64) -> ArrayVec<PuntSource, HEAVIEST> {
        let second = now_ns / 1_000_000_000;
        let mut out = ArrayVec::new();
        for (shares, class) in self.sources.iter().zip(PuntClass::ALL) {
            let mut top = ArrayVec::new();
            shares.heaviest(class, second, &mut top);
            out.extend(top);
        }
        out
    }

    /// Queues a notice; false when the ring is full or the rate is exceeded.
    #[inline]
    pub fn notice(&mut self, now_ns: u64, n: Notice) -> bool {
        if let Some(r) = self.rings.rates.pop() {
            self.adopt_rates(r);
        }
        let ok = self.notice_limit.allow(now_ns) && self.rings.notices.push(n).is_ok();
        self.queued |= ok;
        ok
    }

    /// Wakes the control thread if this worker queued a punt or notice
    /// since the last call and the control thread sleeps (crate::wake):
    /// once per pass, at its end. A pass that queued nothing costs a test
    /// of a flag of the worker's own; one that did, a fence and a load
    /// (and, only when the control thread sleeps, an unpark).
    #[inline]
    pub fn wake_control(&mut self) {
        if self.queued {
            self.queued = false;
            self.rings.wake.wake();
        }
    }

    /// Whether the control plane has queued packets to inject (a cheap
    /// check for every pass of the worker).
    #[inline]
    pub fn injections_pending(&self) -> bool {
        !self.rings.injections.is_empty()
    }

    /// The next packet to inject, if any.
    #[inline]
    pub fn next_injection(&self) -> Option<Injection> {
        self.rings.injections.pop()
    }
}

impl ControlChannels {
    /// Sets the worker's punt budgets and notice rate (per second, burst;
    /// rate 0 = unlimited), taken by the worker at its next punt or notice.
    pub fn set_rates(&self, punt: PuntBudgets, notice: (u64, u64)) {
        let _ = self.rings.rates.force_push((punt, notice));
    }

    /// The next punted packet, the classes in their order (routing
    /// traffic first). Give it back with [`ControlChannels::recycle`].
    pub fn recv_punt(&self) -> Option<Punt> {
        self.rings.full.iter().find_map(ArrayQueue::pop)
    }

    /// Returns a punt slot to its worker, to the class it was taken from.
    pub fn recycle(&self, p: Punt) {
        let _ = self.rings.free[p.class as usize].push(p);
    }

    /// The next notice.
    pub fn recv_notice(&self) -> Option<Notice> {
        self.rings.notices.pop()
    }

    /// Names the control thread, which the worker wakes ([`Wake`]).
    pub fn register(&self, thread: std::thread::Thread) {
        self.rings.wake.register(thread);
    }

    /// Says that the control thread is about to park ([`Wake::sleep`]);
    /// then [`Wake::fence`] and [`ControlChannels::pending`] before it parks.
    pub fn sleep(&self) {
        self.rings.wake.sleep();
    }

    /// Says that the control thread is awake ([`Wake::awake`]).
    pub fn awake(&self) {
        self.rings.wake.awake();
    }

    /// Whether a punt or a notice waits.
    pub fn pending(&self) -> bool {
        self.rings.full.iter().any(|q| !q.is_empty()) || !self.rings.notices.is_empty()
    }

    /// Asks the worker to transmit a packet; gives it back when the ring is full.
    pub fn inject(&self, i: Injection) -> Result<(), Injection> {
        self.rings.injections.push(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::router::{NOTICE_BYTES, NoticeKind};

    #[test]
    fn token_bucket() {
        let mut r = RateLimit::new(10, 2);
        assert!(r.allow(0));
        assert!(r.allow(0));
        assert!(!r.allow(0));
        assert!(!r.allow(50_000_000));
        assert!(r.allow(100_000_000));
        assert!(!r.allow(100_000_000));
        assert!(r.allow(10_000_000_000));
        assert!(r.allow(10_000_000_000));
        assert!(!r.allow(10_000_000_000));
        let mut u = RateLimit::new(0, 1);
        assert!((0..1000).all(|_| u.allow(0)));
    }

    #[test]
    fn punt_slots_recycle_and_classes_order() {
        let (mut w, c) = channels(ChannelConfig {
            punt_slots: 1,
            punt_budgets: PuntBudgets::uniform(PuntBudget::new(0, 1)),
            ..Default::default()
        });
        let m = PuntMeta::default();
        w.punt(0, PuntClass::Local, m, &[1]).unwrap();
        assert_eq!(
            w.punt(0, PuntClass::Local, m, &[2]),
            Err(DropReason::PuntFull)
        );
        w.punt(0, PuntClass::Management, m, &[3]).unwrap();
        w.punt(0, PuntClass::Request, m, &[6]).unwrap();
        w.punt(0, PuntClass::Routing, m, &[4]).unwrap();
        // Served in class order, each slot back to its own class.
        for (want, class) in [
            (4, PuntClass::Routing),
            (6, PuntClass::Request),
            (3, PuntClass::Management),
            (1, PuntClass::Local),
        ] {
            let p = c.recv_punt().unwrap();
            assert_eq!((p.data[0], p.class), (want, class));
            c.recycle(p);
        }
        assert!(c.recv_punt().is_none());
        for class in PuntClass::ALL {
            w.punt(0, class, m, &[5]).unwrap();
        }
    }

    #[test]
    fn a_flood_of_one_class_leaves_the_others_their_budget() {
        let (mut w, c) = channels(ChannelConfig {
            punt_slots: 64,
            punt_budgets: PuntBudgets::uniform(PuntBudget::new(800, 32)),
            ..Default::default()
        });
        let flooder = PuntMeta {
            native_src: NativeAddr::mac([2, 0, 0, 0, 0, 0x66]),
            ..PuntMeta::default()
        };
        // One source's flood of management datagrams: it gets its share
        // (a burst of 32 / 8 = 4), the rest is refused before it takes the
        // class's tokens.
        let flood: Vec<_> = (0..1000)
            .map(|i| w.punt(i, PuntClass::Management, flooder, &[0]))
            .collect();
        assert_eq!(flood.iter().filter(|r| r.is_ok()).count(), 4);
        assert!(flood[4..].iter().all(|r| *r == Err(DropReason::PuntSource)));
        // Another source of the same class still has its share.
        let manager = PuntMeta {
            native_src: NativeAddr::mac([2, 0, 0, 0, 0, 0x01]),
            ..PuntMeta::default()
        };
        for i in 0..4 {
            w.punt(1000 + i, PuntClass::Management, manager, &[1])
                .unwrap();
        }
        // Routing: a bucket of its own and no per-source share (a buddy's
        // burst of RTs), served first.
        for i in 0..20 {
            w.punt(1000 + i, PuntClass::Routing, flooder, &[2]).unwrap();
        }
        let first: Vec<_> = (0..20).map(|_| c.recv_punt().unwrap().class).collect();
        assert_eq!(first, [PuntClass::Routing; 20]);
    }

    #[test]
    fn the_heaviest_sources_by_class_with_what_they_lost() {
        const S: u64 = 1_000_000_000;
        let (mut w, c) = channels(ChannelConfig {
            punt_slots: 4096,
            punt_budgets: PuntBudgets::uniform(PuntBudget::new(800, 80)),
            ..Default::default()
        });
        let from = |n: u8, port: u16| PuntMeta {
            in_port: PortId(port),
            native_src: NativeAddr::mac([2, 0, 0, 0, 0, n]),
            ..PuntMeta::default()
        };
        // Second 5: a flooder sends 1000 management datagrams, a manager
        // 3; a buddy sends 50 RTs.
        for i in 0..1000 {
            let _ = w.punt(5 * S + i, PuntClass::Management, from(0x66, 2), &[0]);
        }
        for i in 0..3 {
            w.punt(5 * S + i, PuntClass::Management, from(0x01, 2), &[0])
                .unwrap();
        }
        for i in 0..50 {
            w.punt(5 * S + i, PuntClass::Routing, from(0x07, 1), &[0])
                .unwrap();
        }
        while let Some(p) = c.recv_punt() {
            c.recycle(p);
        }
        let h = w.heaviest(5 * S + 500_000_000);
        let got: Vec<_> = h
            .iter()
            .map(|s| {
                (
                    s.class,
                    s.port,
                    s.native.as_bytes()[5],
                    s.offered_per_s,
                    s.dropped_per_s,
                )
            })
            .collect();
        // The flooder got its share, a burst of 80 / 8.
        assert_eq!(
            got,
            [
                (PuntClass::Routing, PortId(1), 0x07, 50, 0),
                (PuntClass::Management, PortId(2), 0x66, 1000, 990),
                (PuntClass::Management, PortId(2), 0x01, 3, 0),
            ]
        );
        // A second later the last full second is reported; two seconds
        // later nothing.
        assert_eq!(w.heaviest(6 * S + 1)[1].offered_per_s, 1000);
        assert!(w.heaviest(7 * S).is_empty());
    }

    #[test]
    fn rates_change_at_run_time() {
        let (mut w, c) = channels(ChannelConfig {
            punt_budgets: PuntBudgets::uniform(PuntBudget::new(1, 1)),
            ..Default::default()
        });
        let m = PuntMeta::default();
        w.punt(0, PuntClass::Routing, m, &[1]).unwrap();
        assert_eq!(
            w.punt(0, PuntClass::Routing, m, &[2]),
            Err(DropReason::PuntRate)
        );
        assert_eq!(
            w.punt(0, PuntClass::Local, m, &[2])
                .and(w.punt(0, PuntClass::Local, m, &[2])),
            Err(DropReason::PuntSource)
        );
        c.set_rates(PuntBudgets::uniform(PuntBudget::new(0, 1)), (0, 1));
        for class in PuntClass::ALL {
            w.punt(0, class, m, &[3]).unwrap();
            w.punt(0, class, m, &[4]).unwrap();
        }
    }

    #[test]
    fn notices_and_injections() {
        let (mut w, c) = channels(ChannelConfig {
            notices: 1,
            ..Default::default()
        });
        let n = Notice::new(
            NoticeKind::NoRoute,
            PortId(0),
            PortId(0),
            NativeAddr::NONE,
            &[9; 200],
            0,
        );
        assert_eq!(n.bytes().len(), NOTICE_BYTES);
        assert_eq!(n.packet_len, 200);
        assert!(w.notice(0, n));
        assert!(!w.notice(0, n));
        assert_eq!(c.recv_notice().unwrap().kind, NoticeKind::NoRoute);
        c.inject(Injection {
            port: PortId(1),
            native_dst: NativeAddr::NONE,
            data: vec![1],
        })
        .unwrap();
        assert_eq!(w.next_injection().unwrap().port, PortId(1));
    }
}
