//! The rings between a worker and the control thread (docs/architecture.md "Threads
//! and data flow"): punted packets for this box in two classes (protocol
//! traffic first), notices for the control plane (no route, MTU, redirect),
//! and packets the control plane injects. Every ring is bounded and
//! lock-free; the worker rate-limits before it enqueues, and when a ring is
//! full it drops and counts. The worker never blocks.
//!
//! Punt slots are recycled: the control thread returns each one after use,
//! so that punting copies into memory allocated at start-up.

use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use rrp::router::Notice;
use rrp::wire::packet::Layout;
use rrp::{DropReason, NativeAddr, PortId};

/// Punt classes, in the order the control thread serves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PuntClass {
    /// RRP, ERR and management packets for this box.
    Control = 0,
    /// Other packets for this box.
    Local = 1,
}

/// A packet handed to the control plane.
#[derive(Debug, Clone, Default)]
pub struct Punt {
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
#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    rate: u64,
    burst: u64,
    tokens: u64,
    last_ns: u64,
}

impl RateLimit {
    /// `rate` events per second (0 = unlimited) in bursts of up to `burst`.
    pub fn new(rate: u64, burst: u64) -> RateLimit {
        RateLimit {
            rate,
            burst: burst.max(1),
            tokens: burst.max(1),
            last_ns: 0,
        }
    }

    /// Whether an event at `now_ns` may pass; takes a token if so.
    #[inline]
    pub fn allow(&mut self, now_ns: u64) -> bool {
        if self.rate == 0 {
            return true;
        }
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
        if self.tokens > 0 {
            self.tokens -= 1;
            true
        } else {
            false
        }
    }
}

/// Sizes and limits of one worker's rings.
#[derive(Debug, Clone, Copy)]
pub struct ChannelConfig {
    /// Punt slots per class.
    pub punt_slots: usize,
    /// Bytes per punt slot (the largest punted packet).
    pub punt_slot_bytes: usize,
    /// Notices in flight.
    pub notices: usize,
    /// Injections in flight.
    pub injections: usize,
    /// Punts per second per class (0 = unlimited) and burst.
    pub punt_rate: (u64, u64),
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
            punt_rate: (50_000, 1024),
            notice_rate: (10_000, 256),
        }
    }
}

#[derive(Debug)]
struct Rings {
    free: [ArrayQueue<Punt>; 2],
    full: [ArrayQueue<Punt>; 2],
    notices: ArrayQueue<Notice>,
    injections: ArrayQueue<Injection>,
    /// New punt and notice rates from the control side (a reload), taken
    /// by the worker on its next punt or notice.
    rates: ArrayQueue<((u64, u64), (u64, u64))>,
}

/// A worker's side of its rings.
#[derive(Debug)]
pub struct WorkerChannels {
    rings: Arc<Rings>,
    punt_limit: [RateLimit; 2],
    notice_limit: RateLimit,
    slot_bytes: usize,
}

/// The control thread's side of one worker's rings.
#[derive(Debug, Clone)]
pub struct ControlChannels {
    rings: Arc<Rings>,
}

/// Makes the rings of one worker.
pub fn channels(cfg: ChannelConfig) -> (WorkerChannels, ControlChannels) {
    let slots = cfg.punt_slots.max(1);
    let mk_free = || {
        let q = ArrayQueue::new(slots);
        for _ in 0..slots {
            let _ = q.push(Punt {
                data: Vec::with_capacity(cfg.punt_slot_bytes),
                ..Punt::default()
            });
        }
        q
    };
    let rings = Arc::new(Rings {
        free: [mk_free(), mk_free()],
        full: [ArrayQueue::new(slots), ArrayQueue::new(slots)],
        notices: ArrayQueue::new(cfg.notices.max(1)),
        injections: ArrayQueue::new(cfg.injections.max(1)),
        rates: ArrayQueue::new(1),
    });
    (
        WorkerChannels {
            rings: rings.clone(),
            punt_limit: [
                RateLimit::new(cfg.punt_rate.0, cfg.punt_rate.1),
                RateLimit::new(cfg.punt_rate.0, cfg.punt_rate.1),
            ],
            notice_limit: RateLimit::new(cfg.notice_rate.0, cfg.notice_rate.1),
            slot_bytes: cfg.punt_slot_bytes,
        },
        ControlChannels { rings },
    )
}

impl WorkerChannels {
    /// Adopts rates the control side set since the last punt or notice.
    #[cold]
    fn adopt_rates(&mut self, (punt, notice): ((u64, u64), (u64, u64))) {
        self.punt_limit = [
            RateLimit::new(punt.0, punt.1),
            RateLimit::new(punt.0, punt.1),
        ];
        self.notice_limit = RateLimit::new(notice.0, notice.1);
    }

    /// Queues a copy of `data` for the control plane, with the metadata of
    /// `meta` (whose `data` is ignored), or says why not.
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
        if data.len() > self.slot_bytes {
            return Err(DropReason::PuntFull);
        }
        if !self.punt_limit[c].allow(now_ns) {
            return Err(DropReason::PuntRate);
        }
        let Some(mut slot) = self.rings.free[c].pop() else {
            return Err(DropReason::PuntFull);
        };
        slot.in_port = meta.in_port;
        slot.hr_port = meta.hr_port;
        slot.native_src = meta.native_src;
        slot.rx_error = meta.rx_error;
        slot.layout = meta.layout;
        slot.data.clear();
        slot.data.extend_from_slice(data);
        // `full` has as many places as there are slots: this cannot fail.
        let _ = self.rings.full[c].push(slot);
        Ok(())
    }

    /// Queues a notice; false when the ring is full or the rate is exceeded.
    #[inline]
    pub fn notice(&mut self, now_ns: u64, n: Notice) -> bool {
        if let Some(r) = self.rings.rates.pop() {
            self.adopt_rates(r);
        }
        self.notice_limit.allow(now_ns) && self.rings.notices.push(n).is_ok()
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
    /// Sets the worker's punt and notice rates (per second, burst; rate 0 =
    /// unlimited), taken by the worker at its next punt or notice.
    pub fn set_rates(&self, punt: (u64, u64), notice: (u64, u64)) {
        let _ = self.rings.rates.force_push((punt, notice));
    }

    /// The next punted packet, protocol traffic first. Give it back with
    /// [`ControlChannels::recycle`].
    pub fn recv_punt(&self) -> Option<Punt> {
        self.rings.full[PuntClass::Control as usize]
            .pop()
            .or_else(|| self.rings.full[PuntClass::Local as usize].pop())
    }

    /// Returns a punt slot to its worker.
    pub fn recycle(&self, class: PuntClass, p: Punt) {
        let _ = self.rings.free[class as usize].push(p);
    }

    /// Returns a punt slot, finding its class from the ring that has room.
    pub fn recycle_any(&self, p: Punt) {
        if let Err(p) = self.rings.free[0].push(p) {
            let _ = self.rings.free[1].push(p);
        }
    }

    /// The next notice.
    pub fn recv_notice(&self) -> Option<Notice> {
        self.rings.notices.pop()
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
            punt_rate: (0, 1),
            ..Default::default()
        });
        let m = PuntMeta::default();
        w.punt(0, PuntClass::Local, m, &[1]).unwrap();
        assert_eq!(
            w.punt(0, PuntClass::Local, m, &[2]),
            Err(DropReason::PuntFull)
        );
        w.punt(0, PuntClass::Control, m, &[3]).unwrap();
        let p = c.recv_punt().unwrap();
        assert_eq!(p.data, vec![3]);
        c.recycle(PuntClass::Control, p);
        let p = c.recv_punt().unwrap();
        assert_eq!(p.data, vec![1]);
        c.recycle(PuntClass::Local, p);
        w.punt(0, PuntClass::Local, m, &[4]).unwrap();
    }

    #[test]
    fn rates_change_at_run_time() {
        let (mut w, c) = channels(ChannelConfig {
            punt_rate: (1, 1),
            ..Default::default()
        });
        let m = PuntMeta::default();
        w.punt(0, PuntClass::Local, m, &[1]).unwrap();
        assert_eq!(
            w.punt(0, PuntClass::Local, m, &[2]),
            Err(DropReason::PuntRate)
        );
        c.set_rates((0, 1), (0, 1));
        w.punt(0, PuntClass::Local, m, &[3]).unwrap();
        w.punt(0, PuntClass::Local, m, &[4]).unwrap();
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
