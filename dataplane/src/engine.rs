//! The forwarding decision, a burst at a time (DESIGN.md "Source routes",
//! "Threads and data flow"; the draft's Part-1 "L2-routing option" and
//! "Error Indication").
//!
//! For each received packet:
//! - a leading 16-bit value below 0x0040 starts an L2RH: walk the chain (at
//!   most [`MAX_L2RHS`]) to the EEP header, check it, find the trailer from
//!   DL; the first L2RH names the egress HR (one of this box's) and the
//!   native next hop; strip it. An egress-only L2RH delivers to that HR;
//! - otherwise an EEP header (version 5): look the destination up in the FIB
//!   of the ingress port; this box's addresses, Hey-You and broadcast are
//!   punted; no route drops and notifies the control plane; a next hop on
//!   the ingress SAN is a redirect (or a loop when it is the very native
//!   address the packet came from);
//! - every forwarded packet has its EI shifted left, with 1 ORed in when the
//!   port flagged a receive error; its frame padding is trimmed; it must fit
//!   the egress SAN's MTU as transmitted.
//!
//! Every packet ends forwarded, punted or dropped with a reason, counted on
//! its ingress port.

use arrayvec::ArrayVec;
use ports::{Burst, PacketBuf, Port};
use rrp::Address;
use rrp::NativeAddr;
use rrp::kind::PacketType;
use rrp::limits::MAX_L2RHS;
use rrp::native::MAX_NATIVE_LEN;
use rrp::wire::HEADER_LEN;
use rrp::wire::l2rh::l2rh_bytes;
use rrp::wire::packet::shift_ei;

use crate::capture::{CaptureTap, CaptureWhat};
use crate::counters::PortCounters;
use crate::fib::{FibSet, NH_LOCAL, NH_NONE, NextHop, PortFib};
use crate::punt::{Notice, NoticeKind, PuntClass, PuntMeta, WorkerChannels};
use crate::reason::DropReason;

/// The most ports (= HRs) one box has.
pub const MAX_PORTS: usize = 16;

/// What the engine needs to know about the box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// The HR address of each port, in port order.
    pub hrs: Vec<Address>,
    /// The MTU in bytes of each port's SAN (0 = unlimited), in port order.
    pub mtus: Vec<u32>,
}

/// The native next hop of a forwarded packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextNative<'f> {
    /// An L3 route's, borrowed from the FIB (no copy on the forwarding path).
    Route(&'f NativeAddr),
    /// An L2RH's, copied out of the header before it was stripped.
    Source(NativeAddr),
}

impl NextNative<'_> {
    /// The address.
    #[inline(always)]
    pub fn get(&self) -> &NativeAddr {
        match self {
            NextNative::Route(n) => n,
            NextNative::Source(n) => n,
        }
    }
}

/// The outcome for one packet; `'f` is the FIB set's borrow.
#[derive(Debug, Clone, Copy)]
pub enum Decision<'f> {
    /// Transmit on `port` to `native`.
    Forward {
        /// Egress port.
        port: u16,
        /// NativeAddr next hop.
        native: NextNative<'f>,
        /// An L2 (source-routed) packet.
        l2: bool,
        /// Notify the control plane: forwarded back onto its ingress SAN.
        redirect: bool,
    },
    /// Hand to the control plane as a packet for HR `hr_port`.
    Punt {
        /// Protocol or other traffic.
        class: PuntClass,
        /// The HR it is delivered to.
        hr_port: u16,
    },
    /// Drop, and notify the control plane of `notice` if any.
    Drop {
        /// Why.
        reason: DropReason,
        /// What to tell the control plane.
        notice: Option<NoticeKind>,
        /// For an MTU drop: the egress port and its MTU.
        egress: (u16, u32),
        /// For an MTU drop on L3: the next hop's native address.
        next_hop: Option<&'f NativeAddr>,
    },
}

/// Where an L2RH's native address is in a packet whose L2RH is still in
/// front: `len` bytes at offset 4 (after L and HR), the L2RH `strip` bytes.
#[derive(Debug, Clone, Copy)]
struct SourceNative {
    len: u8,
    strip: u16,
}

/// Copies the native address out of the leading L2RH and strips the L2RH.
#[inline(always)]
fn take_source_native<B: PacketBuf>(buf: &mut B, at: SourceNative) -> NativeAddr {
    let native = NativeAddr::from_bytes(&buf.data()[4..4 + at.len as usize]).unwrap_or_default();
    buf.adj(at.strip as usize);
    native
}

/// The native next hop as the burst loop holds it: borrowed from the FIB,
/// or still in the packet's L2RH.
#[derive(Clone, Copy)]
enum Hop<'f> {
    Route(&'f NativeAddr),
    Source(SourceNative),
}

/// The engine's decision in the form the burst loop acts on: small (no
/// native address by value), and an L2 forward keeps its L2RH until the
/// loop has copied the native out ([`take_source_native`]).
#[derive(Debug, Clone, Copy)]
enum Verdict<'f> {
    /// L3: to the FIB's next hop (EI shifted, padding trimmed).
    Route { nh: &'f NextHop, redirect: bool },
    /// L2: on `port` to the native in the leading L2RH (EI shifted, padding
    /// trimmed, L2RH still in front).
    Source { port: u16, native: SourceNative },
    /// As [`Decision::Punt`].
    Punt { class: PuntClass, hr_port: u16 },
    /// As [`Decision::Drop`].
    Drop {
        reason: DropReason,
        notice: Option<NoticeKind>,
        egress: (u16, u32),
        next_hop: Option<&'f NativeAddr>,
    },
}

impl Verdict<'_> {
    #[inline(always)]
    const fn drop(reason: DropReason) -> Self {
        Verdict::Drop {
            reason,
            notice: None,
            egress: (0, 0),
            next_hop: None,
        }
    }
}

#[inline(always)]
fn be16(d: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([d[i], d[i + 1]])
}

#[inline(always)]
fn class_of(pt: u16) -> PuntClass {
    match PacketType(pt) {
        PacketType::RRP | PacketType::ERR | PacketType::MANAGEMENT => PuntClass::Control,
        _ => PuntClass::Local,
    }
}

/// Checks the EEP header at `off` of `d` and returns the packet's end (the
/// end of its trailer).
#[inline(always)]
fn eep_end(d: &[u8], off: usize) -> Result<usize, DropReason> {
    let Some(h) = d.get(off..off + HEADER_LEN) else {
        return Err(DropReason::Truncated);
    };
    if h[3] != rrp::wire::VERSION {
        return Err(DropReason::BadVersion);
    }
    let pl = (h[8] & 0x0F) as usize;
    let block = u32::from_be_bytes([0, h[9], h[10], h[11]]) as usize * 8;
    if pl > 7 || pl > block {
        return Err(DropReason::BadHeader);
    }
    let end = off + HEADER_LEN + block + rrp::wire::TRAILER_LEN;
    if end > d.len() {
        return Err(DropReason::Truncated);
    }
    Ok(end)
}

/// Shifts the EI of the trailer that ends at `end` and ORs in `error`.
#[inline(always)]
fn update_ei(d: &mut [u8], end: usize, error: bool) {
    let t: &mut [u8; 8] = (&mut d[end - 8..end]).try_into().expect("8 bytes");
    *t = shift_ei(u64::from_be_bytes(*t), error).to_be_bytes();
}

/// The forwarding engine of one worker.
#[derive(Debug)]
pub struct Engine {
    hrs: ArrayVec<u16, MAX_PORTS>,
    mtus: ArrayVec<u32, MAX_PORTS>,
    counters: Vec<PortCounters>,
    inject_bad_port: u64,
    chan: WorkerChannels,
    tap: Option<CaptureTap>,
}

impl Engine {
    /// An engine for the box described by `cfg`, talking to the control
    /// plane through `chan`.
    pub fn new(cfg: &EngineConfig, chan: WorkerChannels) -> Engine {
        assert!(cfg.hrs.len() <= MAX_PORTS, "at most {MAX_PORTS} ports");
        assert_eq!(cfg.hrs.len(), cfg.mtus.len(), "one MTU per port");
        Engine {
            hrs: cfg.hrs.iter().map(|a| a.0).collect(),
            mtus: cfg.mtus.iter().copied().collect(),
            counters: vec![PortCounters::default(); cfg.hrs.len()],
            inject_bad_port: 0,
            chan,
            tap: None,
        }
    }

    /// Attaches this worker's side of the capture rings.
    pub fn set_capture(&mut self, tap: CaptureTap) {
        self.tap = Some(tap);
    }

    /// What to capture on `in_port` during this burst, if anything.
    #[inline(always)]
    fn capturing(&self, in_port: usize) -> Option<CaptureWhat> {
        match self.tap.as_ref()?.armed() {
            Some((p, what)) if p as usize == in_port => Some(what),
            _ => None,
        }
    }

    /// The port whose transmitted packets are captured, if any (read once
    /// per burst).
    #[inline]
    fn transmit_capture(&self) -> Option<usize> {
        match self.tap.as_ref()?.armed() {
            Some((p, CaptureWhat::Transmitted)) => Some(p as usize),
            _ => None,
        }
    }

    /// Copies a packet to the capture ring.
    #[cold]
    #[inline(never)]
    fn capture(&self, now_ns: u64, in_port: usize, reason: Option<DropReason>, data: &[u8]) {
        if let Some(t) = &self.tap {
            t.copy(now_ns, in_port as u16, reason, data);
        }
    }

    /// The port of HR `hr`, if it is one of this box's.
    #[inline(always)]
    fn port_of(&self, hr: u16) -> Option<usize> {
        self.hrs.iter().position(|&a| a == hr)
    }

    /// Counters per port.
    pub fn counters(&self) -> &[PortCounters] {
        &self.counters
    }

    /// Injections for a port this box does not have (no port counter can
    /// hold them).
    pub fn inject_bad_port(&self) -> u64 {
        self.inject_bad_port
    }

    /// Decides what happens to one packet received on `in_port`, and
    /// prepares it (EI, padding trimmed, L2RH stripped) when it is forwarded
    /// or punted. The buffer is left as received when it is dropped, except
    /// that frame padding is trimmed when the drop comes with a notice (the
    /// notice carries the packet, not the frame).
    #[inline]
    pub fn decide<'f, B: PacketBuf>(
        &self,
        fib: &'f FibSet,
        in_port: usize,
        buf: &mut B,
    ) -> Decision<'f> {
        let err = buf.rx_error();
        match self.verdict(fib.port(in_port), in_port, err, buf) {
            Verdict::Route { nh, redirect } => Decision::Forward {
                port: nh.port,
                native: NextNative::Route(&nh.native),
                l2: false,
                redirect,
            },
            Verdict::Source { port, native } => Decision::Forward {
                port,
                native: NextNative::Source(take_source_native(buf, native)),
                l2: true,
                redirect: false,
            },
            Verdict::Punt { class, hr_port } => Decision::Punt { class, hr_port },
            Verdict::Drop {
                reason,
                notice,
                egress,
                next_hop,
            } => Decision::Drop {
                reason,
                notice,
                egress,
                next_hop,
            },
        }
    }

    /// The decision in the compact form the burst loop acts on (see
    /// [`Verdict`]); `err` is the packet's receive-error flag.
    #[inline(always)]
    fn verdict<'f, B: PacketBuf>(
        &self,
        fib: PortFib<'f>,
        in_port: usize,
        err: bool,
        buf: &mut B,
    ) -> Verdict<'f> {
        let d = buf.data();
        let len = d.len();
        if len < 2 {
            return Verdict::drop(DropReason::Truncated);
        }
        let first = be16(d, 0);
        if !rrp::wire::l2rh::starts_l2rh(first) {
            // L3: an EEP header.
            let end = match eep_end(d, 0) {
                Ok(e) => e,
                Err(r) => return Verdict::drop(r),
            };
            let idx = fib.lookup(first);
            if idx == NH_NONE {
                buf.trim(end);
                return Verdict::Drop {
                    reason: DropReason::NoRoute,
                    notice: Some(NoticeKind::NoRoute),
                    egress: (in_port as u16, 0),
                    next_hop: None,
                };
            }
            if idx == NH_LOCAL {
                let class = class_of(be16(d, 4));
                buf.trim(end);
                return Verdict::Punt {
                    class,
                    hr_port: in_port as u16,
                };
            }
            let nh = fib.nexthop(idx);
            let mut redirect = false;
            if nh.port as usize == in_port {
                if nh.native == buf.native_src() {
                    return Verdict::drop(DropReason::Loop);
                }
                redirect = true;
            }
            if nh.mtu != 0 && end > nh.mtu as usize {
                buf.trim(end);
                return Verdict::Drop {
                    reason: DropReason::Mtu,
                    notice: Some(NoticeKind::Mtu),
                    egress: (nh.port, nh.mtu),
                    next_hop: Some(&nh.native),
                };
            }
            update_ei(buf.data_mut(), end, err);
            buf.trim(end);
            return Verdict::Route { nh, redirect };
        }
        // L2: walk the chain to the EEP header.
        let mut off = 0usize;
        let mut l = first as usize;
        let mut n = 0usize;
        loop {
            if l == 0 {
                return Verdict::drop(DropReason::BadL2rh);
            }
            n += 1;
            if n > MAX_L2RHS {
                return Verdict::drop(DropReason::TooManyL2rh);
            }
            off += l2rh_bytes(l);
            if off + 2 > len {
                return Verdict::drop(DropReason::Truncated);
            }
            let v = be16(d, off);
            if !rrp::wire::l2rh::starts_l2rh(v) {
                break;
            }
            l = v as usize;
        }
        let end = match eep_end(d, off) {
            Ok(e) => e,
            Err(r) => return Verdict::drop(r),
        };
        let l0 = first as usize;
        if l0 < 2 {
            return Verdict::drop(DropReason::BadL2rh);
        }
        let Some(eport) = self.port_of(be16(d, 2)) else {
            return Verdict::drop(DropReason::BadL2rh);
        };
        let strip = l2rh_bytes(l0);
        let native_len = l0 - 2;
        if native_len == 0 {
            // Egress only: the packet is for that HR itself.
            let next = strip;
            let class = if be16(d, next) < 0x40 {
                PuntClass::Local
            } else {
                class_of(be16(d, off + 4))
            };
            buf.trim(end);
            buf.adj(strip);
            return Verdict::Punt {
                class,
                hr_port: eport as u16,
            };
        }
        if native_len > MAX_NATIVE_LEN {
            return Verdict::drop(DropReason::BadL2rh);
        }
        let mtu = self.mtus[eport];
        if mtu != 0 && end - strip > mtu as usize {
            buf.trim(end);
            return Verdict::Drop {
                reason: DropReason::Mtu,
                notice: Some(NoticeKind::Mtu),
                egress: (eport as u16, mtu),
                next_hop: None,
            };
        }
        update_ei(buf.data_mut(), end, err);
        buf.trim(end);
        Verdict::Source {
            port: eport as u16,
            native: SourceNative {
                len: native_len as u8,
                strip: strip as u16,
            },
        }
    }

    /// Processes a burst received on `in_port`: decides each packet, queues
    /// punts and notices, stages forwarded packets per egress port and
    /// transmits them. `stage` has one empty burst per port; `rx` is emptied.
    #[inline]
    pub fn process_burst<P: Port>(
        &mut self,
        fib: &FibSet,
        now_ns: u64,
        in_port: usize,
        rx: &mut Burst<P::Buf>,
        ports: &mut [P],
        stage: &mut [Burst<P::Buf>],
    ) {
        let n = rx.len() as u64;
        // Touch every packet of the burst first, so that the cache misses on
        // buffer metadata and packet data overlap instead of being taken one
        // packet at a time (docs/performance.md).
        for buf in rx.iter() {
            core::hint::black_box(buf.data().first());
        }
        let cap = self.capturing(in_port);
        if cap == Some(CaptureWhat::Received) {
            for buf in rx.iter() {
                self.capture(now_ns, in_port, None, buf.data());
            }
        }
        let drops = cap == Some(CaptureWhat::Dropped);
        let tx_cap = self.transmit_capture();
        let pfib = fib.port(in_port);
        let mut c = self.counters[in_port];
        c.received += n;
        for mut buf in rx.drain(..) {
            let err = buf.rx_error();
            c.rx_errors += err as u64;
            let (port, native, l2) = match self.verdict(pfib, in_port, err, &mut buf) {
                Verdict::Route { nh, redirect } => {
                    if redirect {
                        self.redirect_notice(&mut c, now_ns, in_port, nh.port, &nh.native, &buf);
                    }
                    (nh.port, Hop::Route(&nh.native), false)
                }
                Verdict::Source { port, native } => (port, Hop::Source(native), true),
                Verdict::Punt { class, hr_port } => {
                    self.punt(&mut c, now_ns, in_port, class, hr_port, &buf);
                    ports[in_port].recycle(buf);
                    continue;
                }
                Verdict::Drop {
                    reason,
                    notice,
                    egress,
                    next_hop,
                } => {
                    c.dropped[reason as usize] += 1;
                    if drops {
                        self.capture(now_ns, in_port, Some(reason), buf.data());
                    }
                    if let Some(kind) = notice {
                        self.drop_notice(&mut c, now_ns, in_port, kind, egress, next_hop, &buf);
                    }
                    ports[in_port].recycle(buf);
                    continue;
                }
            };
            let p = port as usize;
            let source;
            let native = match native {
                Hop::Route(n) => n,
                Hop::Source(s) => {
                    source = take_source_native(&mut buf, s);
                    &source
                }
            };
            if tx_cap == Some(p) {
                self.capture(now_ns, p, None, buf.data());
            }
            if ports[p].encap(&mut buf, native) {
                stage[p].push(buf);
            } else {
                Self::encap_failed(&mut c, l2);
                ports[in_port].recycle(buf);
            }
        }
        self.counters[in_port] = c;
        for (p, out) in stage.iter_mut().enumerate() {
            if out.is_empty() {
                continue;
            }
            let sent = ports[p].tx_burst(out) as u64;
            self.counters[in_port].forwarded += sent;
            self.counters[p].transmitted += sent;
            let unsent = out.len() as u64;
            if unsent > 0 {
                self.counters[in_port].dropped[DropReason::TxFull as usize] += unsent;
                for b in out.drain(..) {
                    if drops {
                        self.capture(now_ns, in_port, Some(DropReason::TxFull), b.data());
                    }
                    ports[p].recycle(b);
                }
            }
        }
    }

    /// Queues a redirect notice (off the per-packet fast path).
    #[cold]
    #[inline(never)]
    fn redirect_notice<B: PacketBuf>(
        &mut self,
        c: &mut PortCounters,
        now_ns: u64,
        in_port: usize,
        port: u16,
        native: &NativeAddr,
        buf: &B,
    ) {
        let mut nt = Notice::new(
            NoticeKind::Redirect,
            in_port as u16,
            port,
            buf.native_src(),
            buf.data(),
        );
        nt.next_hop = *native;
        if self.chan.notice(now_ns, nt) {
            c.notices += 1;
        } else {
            c.notices_dropped += 1;
        }
    }

    /// Counts a packet the egress port could not encapsulate.
    #[cold]
    #[inline(never)]
    fn encap_failed(c: &mut PortCounters, l2: bool) {
        let r = if l2 {
            DropReason::BadL2rh
        } else {
            DropReason::Encap
        };
        c.dropped[r as usize] += 1;
    }

    /// Hands a packet for this box to the control plane.
    #[cold]
    #[inline(never)]
    fn punt<B: PacketBuf>(
        &mut self,
        c: &mut PortCounters,
        now_ns: u64,
        in_port: usize,
        class: PuntClass,
        hr_port: u16,
        buf: &B,
    ) {
        let meta = PuntMeta {
            in_port: in_port as u16,
            hr_port,
            native_src: buf.native_src(),
            rx_error: buf.rx_error(),
        };
        match self.chan.punt(now_ns, class, meta, buf.data()) {
            Ok(()) => c.punted += 1,
            Err(r) => c.dropped[r as usize] += 1,
        }
    }

    /// Queues the notice of a dropped packet.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn drop_notice<B: PacketBuf>(
        &mut self,
        c: &mut PortCounters,
        now_ns: u64,
        in_port: usize,
        kind: NoticeKind,
        egress: (u16, u32),
        next_hop: Option<&NativeAddr>,
        buf: &B,
    ) {
        let mut nt = Notice::new(kind, in_port as u16, egress.0, buf.native_src(), buf.data());
        nt.mtu = egress.1;
        nt.next_hop = next_hop.copied().unwrap_or(NativeAddr::NONE);
        if self.chan.notice(now_ns, nt) {
            c.notices += 1;
        } else {
            c.notices_dropped += 1;
        }
    }

    /// Transmits up to `max` packets the control plane injected, at
    /// `now_ns` (the capture's clock). Returns how many were taken from the
    /// ring.
    #[inline]
    pub fn inject<P: Port>(
        &mut self,
        now_ns: u64,
        ports: &mut [P],
        stage: &mut Burst<P::Buf>,
        max: usize,
    ) -> usize {
        if !self.chan.injections_pending() {
            return 0;
        }
        self.inject_queued(now_ns, ports, stage, max)
    }

    #[cold]
    #[inline(never)]
    fn inject_queued<P: Port>(
        &mut self,
        now_ns: u64,
        ports: &mut [P],
        stage: &mut Burst<P::Buf>,
        max: usize,
    ) -> usize {
        let tx_cap = self.transmit_capture();
        let mut taken = 0;
        while taken < max {
            let Some(inj) = self.chan.next_injection() else {
                break;
            };
            taken += 1;
            let p = inj.port as usize;
            let Some(port) = ports.get_mut(p) else {
                self.inject_bad_port += 1;
                continue;
            };
            let c = &mut self.counters[p];
            let Some(mut buf) = port.alloc() else {
                c.inject_failed += 1;
                continue;
            };
            match buf.append(inj.data.len()) {
                Some(dst) => dst.copy_from_slice(&inj.data),
                None => {
                    c.inject_failed += 1;
                    port.recycle(buf);
                    continue;
                }
            }
            if tx_cap == Some(p)
                && let Some(t) = &self.tap
            {
                t.copy(now_ns, p as u16, None, buf.data());
            }
            if !port.encap(&mut buf, &inj.native_dst) {
                c.inject_failed += 1;
                port.recycle(buf);
                continue;
            }
            stage.push(buf);
            if port.tx_burst(stage) == 1 {
                c.injected += 1;
                c.transmitted += 1;
            } else {
                c.inject_failed += 1;
                for b in stage.drain(..) {
                    port.recycle(b);
                }
            }
        }
        taken
    }
}
