//! The forwarding decision, a burst at a time (docs/architecture.md "Source routes",
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
use rrp::kind::{PacketClass, PacketType};
use rrp::limits::MAX_L2RHS;
use rrp::native::MAX_NATIVE_LEN;
use rrp::router::{Notice, NoticeKind};
use rrp::wire::header::Header;
use rrp::wire::hop;
use rrp::wire::l2rh::L2rh;
use rrp::wire::packet::{Layout, locate_fast, shift_ei};
use rrp::{Address, DropReason, NativeAddr, PartitionMark, PortId};

use crate::buddies::Buddies;
use crate::capture::{CaptureTap, CaptureWhat};
use crate::fib::{FibSet, NH_LOCAL, NH_NONE, NextHop, PortFib};
use crate::mcast::{MCAST_SLOTS, McastVerdict};
use crate::partition_drops::PartitionDrops;
use crate::partitions::{Crossing, Ingress};
use crate::punt::{PuntClass, PuntMeta, WorkerChannels};
use crate::trace::{Armed, TraceRecord, TraceTap};
use rrp::counters::GroupStats;
use rrp::limits::MAX_PORTS;
use rrp::router::PortMask;
use rrp::router::mcast::bit;
use rrp::{LinkStats, PortStats};

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
        port: PortId,
        /// Native next hop.
        native: NextNative<'f>,
        /// An L2 (source-routed) packet.
        l2: bool,
        /// Forwarded back onto its ingress SAN: the notice for the control
        /// plane (which may send a redirect).
        redirect: Option<Notice>,
    },
    /// A group packet: transmit a copy on each port of `ports`, to every
    /// member of that port's SAN (docs/multicast.md).
    Replicate {
        /// The egress ports (never empty).
        ports: PortMask,
        /// Ports it was too large for (dropped there only), and the notice
        /// for the control plane when there are any.
        too_big: PortMask,
        /// The notice of the first branch it was too large for.
        notice: Option<Notice>,
    },
    /// Hand to the control plane as a packet for HR `hr_port`.
    Punt {
        /// Protocol or other traffic.
        class: PuntClass,
        /// The HR it is delivered to.
        hr_port: PortId,
        /// Where the parts of the packet lie, as the control plane gets it.
        layout: Layout,
    },
    /// Drop, and notify the control plane if `notice` is set.
    Drop {
        /// Why.
        reason: DropReason,
        /// What to tell the control plane.
        notice: Option<Notice>,
    },
}

/// A packet whose leading L2RH (`strip` bytes) is still in front and
/// names the native next hop (`len` bytes, a router hop's native part).
#[derive(Debug, Clone, Copy)]
struct SourceNative {
    len: u8,
    strip: u16,
}

/// Copies the native address out of the leading L2RH and strips the L2RH.
#[inline(always)]
fn take_source_native<B: PacketBuf>(buf: &mut B, at: SourceNative) -> NativeAddr {
    let from = hop::field::NATIVE;
    let native =
        NativeAddr::from_bytes(&buf.data()[from..from + at.len as usize]).unwrap_or_default();
    buf.adj(at.strip as usize);
    native
}

/// [`take_source_native`] for the common 6-byte native (a MAC): six bytes
/// into a register, no [`NativeAddr`] built (docs/performance.md).
#[inline(always)]
fn take_source_mac<B: PacketBuf>(buf: &mut B, at: SourceNative) -> [u8; 6] {
    const FROM: usize = hop::field::NATIVE;
    let mut mac = [0u8; 6];
    // The verdict checked that the L2RH (`strip` >= FROM + 6 bytes) is
    // in the buffer.
    if let Some(m) = buf.data().get(FROM..FROM + 6) {
        mac.copy_from_slice(m);
    }
    buf.adj(at.strip as usize);
    mac
}

/// Where a group packet goes, as the burst loop hands it on.
#[derive(Debug, Clone, Copy)]
struct McastOut {
    mask: PortMask,
    too_big: PortMask,
    slot: u16,
    tx_cap: Option<PortId>,
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
    Source { port: PortId, native: SourceNative },
    /// As [`Decision::Replicate`] (EI shifted, padding trimmed).
    Mcast {
        ports: PortMask,
        too_big: PortMask,
        notice: Option<DropNotice<'f>>,
        slot: u16,
    },
    /// As [`Decision::Punt`].
    Punt {
        class: PuntClass,
        hr_port: PortId,
        layout: Layout,
    },
    /// Dropped for `reason`; with `notice`, the control plane is told.
    Drop {
        reason: DropReason,
        notice: Option<DropNotice<'f>>,
    },
}

/// What the notice of a dropped packet says besides the packet.
#[derive(Debug, Clone, Copy)]
struct DropNotice<'f> {
    kind: NoticeKind,
    /// The egress port (the ingress port for no-route).
    egress: PortId,
    /// The MTU exceeded (Mtu).
    mtu: u32,
    /// The next hop's native address (Mtu on L3).
    next_hop: Option<&'f NativeAddr>,
    /// Where the EEP header starts in the packet.
    header_offset: u16,
}

impl Verdict<'_> {
    #[inline(always)]
    const fn drop(reason: DropReason) -> Self {
        Verdict::Drop {
            reason,
            notice: None,
        }
    }
}

/// The class of a packet punted under `class` (by its type,
/// [`PuntClass::by_type`]) once its sender is looked at: RRP and ERR from
/// anyone but a buddy of the ingress HR `in_port` (`buddies`, published
/// with the FIB set), at its native address, are `request`
/// (docs/dataplane.md "Punt classes"). `buf` holds the packet as punted,
/// `layout` where its header is.
#[inline]
fn punt_class<B: PacketBuf>(
    buddies: &Buddies,
    in_port: PortId,
    class: PuntClass,
    layout: Layout,
    buf: &B,
) -> PuntClass {
    class.refined(|| {
        let h = Header::new_unchecked(&buf.data()[layout.header_offset..]);
        buddies.knows(in_port, h.src(), &buf.native_src())
    })
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
    hrs: ArrayVec<Address, MAX_PORTS>,
    mtus: ArrayVec<u32, MAX_PORTS>,
    counters: Vec<PortStats>,
    inject_bad_port: u64,
    chan: WorkerChannels,
    tap: Option<CaptureTap>,
    /// This worker's side of packet tracing (a detached tap until one is
    /// attached: never armed).
    trace: TraceTap,
    /// Per-group counters, by the multicast table's counter slot.
    mcast: Box<[GroupStats]>,
    /// Group packets counted in no slot (more groups than slots).
    mcast_unslotted: GroupStats,
    /// Whether a group counter moved since [`Engine::take_mcast_changed`]
    /// (the worker then publishes the per-group counters, else not: a
    /// box without group traffic never copies them).
    mcast_changed: bool,
    /// Packets the partitions refused, per key and ingress port.
    partition_drops: PartitionDrops,
}

impl Engine {
    /// An engine for the box described by `cfg`, talking to the control
    /// plane through `chan`.
    pub fn new(cfg: &EngineConfig, chan: WorkerChannels) -> Engine {
        assert!(cfg.hrs.len() <= MAX_PORTS, "at most {MAX_PORTS} ports");
        assert_eq!(cfg.hrs.len(), cfg.mtus.len(), "one MTU per port");
        Engine {
            hrs: cfg.hrs.iter().copied().collect(),
            mtus: cfg.mtus.iter().copied().collect(),
            counters: vec![PortStats::default(); cfg.hrs.len()],
            inject_bad_port: 0,
            chan,
            tap: None,
            trace: TraceTap::detached(),
            mcast: vec![GroupStats::default(); MCAST_SLOTS].into_boxed_slice(),
            mcast_unslotted: GroupStats::default(),
            mcast_changed: false,
            partition_drops: PartitionDrops::default(),
        }
    }

    /// The packets the partitions refused, per key and ingress port
    /// (the worker publishes them when [`PartitionDrops::take_changed`]).
    pub fn partition_drops(&self) -> &PartitionDrops {
        &self.partition_drops
    }

    /// As [`Engine::partition_drops`], to take its changed flag.
    pub fn partition_drops_mut(&mut self) -> &mut PartitionDrops {
        &mut self.partition_drops
    }

    /// Counts a packet the partitions refused under its key (the Free field
    /// of its header at `at`) and ingress port.
    #[cold]
    #[inline(never)]
    fn count_partition(&mut self, in_port: PortId, data: &[u8], at: usize) {
        if let Some(h) = data.get(at..at + rrp::wire::header::HEADER_LEN) {
            let key = PartitionMark::from_free(Header::new_unchecked(h).free()).key();
            self.partition_drops.count(key, in_port);
        }
    }

    /// Whether a group counter moved since the last call (and clears the
    /// flag).
    pub fn take_mcast_changed(&mut self) -> bool {
        std::mem::take(&mut self.mcast_changed)
    }

    /// Per-group counters, by counter slot (the multicast table says which
    /// group has which slot).
    pub fn mcast_counters(&self) -> &[GroupStats] {
        &self.mcast
    }

    /// Counters of the group packets whose group has no counter slot.
    pub fn mcast_unslotted(&self) -> &GroupStats {
        &self.mcast_unslotted
    }

    /// The counters of slot `slot` (the unslotted ones for [`crate::mcast::NO_SLOT`]).
    #[inline(always)]
    fn mcast_count(&mut self, slot: u16) -> &mut GroupStats {
        self.mcast_changed = true;
        match self.mcast.get_mut(usize::from(slot)) {
            Some(c) => c,
            None => &mut self.mcast_unslotted,
        }
    }

    /// Attaches this worker's side of the capture rings.
    pub fn set_capture(&mut self, tap: CaptureTap) {
        self.tap = Some(tap);
    }

    /// Attaches this worker's side of the trace rings.
    pub fn set_trace(&mut self, tap: TraceTap) {
        self.trace = tap;
    }

    /// What to capture on `in_port` during this burst, if anything.
    #[inline(always)]
    fn capturing(&self, in_port: PortId) -> Option<CaptureWhat> {
        match self.tap.as_ref()?.armed() {
            Some((p, what)) if p == in_port => Some(what),
            _ => None,
        }
    }

    /// The port whose transmitted packets are captured, if any (read once
    /// per burst).
    #[inline]
    fn transmit_capture(&self) -> Option<PortId> {
        match self.tap.as_ref()?.armed() {
            Some((p, CaptureWhat::Transmitted)) => Some(p),
            _ => None,
        }
    }

    /// Copies a packet to the capture ring.
    #[cold]
    #[inline(never)]
    fn capture(&self, now_ns: u64, port: PortId, reason: Option<DropReason>, data: &[u8]) {
        if let Some(t) = &self.tap {
            t.copy(now_ns, port, reason, data);
        }
    }

    /// The port of HR `hr`, if it is one of this box's.
    #[inline(always)]
    fn port_of(&self, hr: Address) -> Option<PortId> {
        // At most MAX_PORTS: the index fits.
        self.hrs
            .iter()
            .position(|&a| a == hr)
            .map(|i| PortId(i as u16))
    }

    /// Counters per port.
    pub fn counters(&self) -> &[PortStats] {
        &self.counters
    }

    /// Takes a port's link counters as its backend reports them now
    /// (`ports::Port::link_stats`; running totals, not added): the worker,
    /// when it publishes.
    pub fn set_link(&mut self, port: PortId, link: &LinkStats) {
        if let Some(c) = self.counters.get_mut(port.index()) {
            c.set_link(link);
        }
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
    /// notice carries the packet, not the frame). The per-packet form of
    /// [`Engine::process_burst`], for simulators and tests.
    #[inline]
    pub fn decide<'f, B: PacketBuf>(
        &self,
        fib: &'f FibSet,
        in_port: PortId,
        buf: &mut B,
    ) -> Decision<'f> {
        let err = buf.rx_error();
        let v = if fib.partitions().on() != 0 {
            let pfib = fib.port(in_port);
            self.verdict::<B, true>(pfib, &PartsIn::of(pfib, in_port), in_port, err, buf)
        } else {
            let pfib = fib.port(in_port);
            self.verdict::<B, false>(pfib, &PartsIn::of(pfib, in_port), in_port, err, buf)
        };
        match v {
            Verdict::Route { nh, redirect } => Decision::Forward {
                port: nh.port,
                native: NextNative::Route(&nh.native),
                l2: false,
                redirect: redirect.then(|| redirect_notice(in_port, nh.port, &nh.native, buf)),
            },
            Verdict::Source { port, native } => Decision::Forward {
                port,
                native: NextNative::Source(take_source_native(buf, native)),
                l2: true,
                redirect: None,
            },
            Verdict::Mcast {
                ports,
                too_big,
                notice,
                ..
            } => Decision::Replicate {
                ports,
                too_big,
                notice: notice.map(|n| drop_notice(in_port, n, buf)),
            },
            Verdict::Punt {
                class,
                hr_port,
                layout,
            } => Decision::Punt {
                class: punt_class(fib.buddies(), in_port, class, layout, buf),
                hr_port,
                layout,
            },
            Verdict::Drop { reason, notice } => Decision::Drop {
                reason,
                notice: notice.map(|n| drop_notice(in_port, n, buf)),
            },
        }
    }

    /// The decision in the compact form the burst loop acts on (see
    /// [`Verdict`]); `err` is the packet's receive-error flag. The packet's
    /// framing is read by [`locate_fast`], the one walk over L2RHs and EEP
    /// header that every layer shares.
    #[inline(always)]
    fn verdict<'f, B: PacketBuf, const PARTS: bool>(
        &self,
        fib: PortFib<'f>,
        parts: &PartsIn<'f>,
        in_port: PortId,
        err: bool,
        buf: &mut B,
    ) -> Verdict<'f> {
        let d = buf.data();
        let lay = match locate_fast(d, MAX_L2RHS) {
            Ok(l) => l,
            Err(m) => return Verdict::drop(m.fault.into()),
        };
        let end = lay.total_len();
        if lay.l2rh_count == 0 {
            // L3: look the destination up in the ingress HR's FIB.
            let h = Header::new_unchecked(d);
            let dst = h.dst().0;
            if (Address::FIRST_LOGICAL.0..=Address::LAST_LOGICAL.0).contains(&dst) {
                let src = h.src().0;
                return self.mcast_verdict(fib, in_port, err, buf, end, dst, src);
            }
            let idx = fib.lookup(dst);
            if idx == NH_NONE {
                buf.trim(end);
                return Verdict::Drop {
                    reason: DropReason::NoRoute,
                    notice: Some(DropNotice {
                        kind: NoticeKind::NoRoute,
                        egress: in_port,
                        mtu: 0,
                        next_hop: None,
                        header_offset: 0,
                    }),
                };
            }
            if idx == NH_LOCAL {
                // Who sent it refines the class where it is punted (cold).
                let class = PuntClass::by_type(h.packet_type());
                buf.trim(end);
                return Verdict::Punt {
                    class,
                    hr_port: in_port,
                    layout: lay,
                };
            }
            let nh = fib.nexthop(idx);
            let mut redirect = nh.redirect;
            if nh.port == in_port {
                if nh.native == buf.native_src() {
                    return Verdict::drop(DropReason::Loop);
                }
                redirect = true;
            }
            // The partitions (docs/partitions.md "At the routers"): none on
            // a box whose SANs have none (the Free field is then the
            // applications', docs/spec-notes.md 77): that box runs the
            // instance without `PARTS`, chosen once per burst; the check
            // itself is out of line.
            if PARTS && l3_refused(&fib, parts, nh, d, &*buf) {
                return partition_refused(buf, end, nh.port, 0);
            }
            if nh.mtu != 0 && end > nh.mtu as usize {
                buf.trim(end);
                return Verdict::Drop {
                    reason: DropReason::Mtu,
                    notice: Some(DropNotice {
                        kind: NoticeKind::Mtu,
                        egress: nh.port,
                        mtu: nh.mtu,
                        next_hop: Some(&nh.native),
                        header_offset: 0,
                    }),
                };
            }
            update_ei(buf.data_mut(), end, err);
            buf.trim(end);
            return Verdict::Route { nh, redirect };
        }
        // L2: the first L2RH is a router hop naming one of this box's HRs.
        let first = L2rh::new_unchecked(d);
        let Some(eport) = first.hop_egress().and_then(|a| self.port_of(a)) else {
            return Verdict::drop(DropReason::BadL2rh);
        };
        let (strip, native_len) = (first.total_len(), first.hop_native_len());
        if native_len == 0 {
            // Egress only: the packet is for that HR itself.
            let class = if lay.l2rh_count > 1 {
                PuntClass::Local
            } else {
                PuntClass::by_type(Header::new_unchecked(&d[lay.header_offset..]).packet_type())
            };
            buf.trim(end);
            buf.adj(strip);
            return Verdict::Punt {
                class,
                hr_port: eport,
                layout: lay.without_first_l2rh(strip),
            };
        }
        if native_len > MAX_NATIVE_LEN {
            return Verdict::drop(DropReason::BadL2rh);
        }
        // The partitions, as on L3; the destination is further on when
        // more L2RHs follow.
        if PARTS
            && l2_refused(
                &fib,
                parts,
                eport,
                lay.header_offset,
                lay.l2rh_count > 1,
                d,
                &*buf,
            )
        {
            return partition_refused(buf, end, eport, lay.header_offset as u16);
        }
        // The MTU the control plane publishes (changed at run time by
        // management), else the configured one.
        let mtu = fib
            .port_mtu(eport)
            .unwrap_or_else(|| self.mtus[eport.index()]);
        if mtu != 0 && end - strip > mtu as usize {
            buf.trim(end);
            return Verdict::Drop {
                reason: DropReason::Mtu,
                notice: Some(DropNotice {
                    kind: NoticeKind::Mtu,
                    egress: eport,
                    mtu,
                    next_hop: None,
                    header_offset: lay.header_offset as u16,
                }),
            };
        }
        update_ei(buf.data_mut(), end, err);
        buf.trim(end);
        Verdict::Source {
            port: eport,
            native: SourceNative {
                len: native_len as u8,
                strip: strip as u16,
            },
        }
    }

    /// The decision for a group packet (docs/multicast.md): the reverse-path
    /// check and the branches from the multicast table, then the MTU of
    /// each branch as transmitted; EI is shifted once for every copy.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn mcast_verdict<'f, B: PacketBuf>(
        &self,
        fib: PortFib<'f>,
        in_port: PortId,
        err: bool,
        buf: &mut B,
        end: usize,
        dst: u16,
        src: u16,
    ) -> Verdict<'f> {
        let m = fib.mcast();
        let mut ports = match m.decide(dst, src, in_port, &buf.native_src()) {
            McastVerdict::Forward(p) => p,
            McastVerdict::Rpf => return Verdict::drop(DropReason::McastRpf),
            McastVerdict::Conflict => {
                return Verdict::Drop {
                    reason: DropReason::McastRpf,
                    notice: Some(DropNotice {
                        kind: NoticeKind::McastConflict,
                        egress: in_port,
                        mtu: 0,
                        next_hop: None,
                        header_offset: 0,
                    }),
                };
            }
            McastVerdict::Pruned => return Verdict::drop(DropReason::McastPruned),
        };
        // The partitions: the source where the packet enters, and only the
        // branches whose SAN has a member that may receive it.
        if fib.partitions().on() != 0 && !is_control(buf, 0) {
            match mcast_partitions(fib, in_port, src, &*buf, ports) {
                Some(p) => ports = p,
                None => return partition_refused(buf, end, in_port, 0),
            }
        }
        let mut too_big: PortMask = 0;
        let mut notice = None;
        let mut rest = ports;
        while rest != 0 {
            let p = PortId(rest.trailing_zeros() as u16);
            rest &= rest - 1;
            let mtu = fib
                .port_mtu(p)
                .or_else(|| self.mtus.get(p.index()).copied())
                .unwrap_or(0);
            if mtu != 0 && end > mtu as usize {
                too_big |= bit(p);
                notice.get_or_insert(DropNotice {
                    kind: NoticeKind::Mtu,
                    egress: p,
                    mtu,
                    next_hop: None,
                    header_offset: 0,
                });
            }
        }
        ports &= !too_big;
        buf.trim(end);
        if ports == 0 {
            return Verdict::Drop {
                reason: DropReason::Mtu,
                notice,
            };
        }
        update_ei(buf.data_mut(), end, err);
        Verdict::Mcast {
            ports,
            too_big,
            notice,
            slot: m.slot(dst),
        }
    }

    /// Processes a burst received on `in_port`: decides each packet, queues
    /// punts and notices, stages forwarded packets per egress port and
    /// transmits them. `stage` has one empty burst per port; `rx` is emptied.
    ///
    /// The burst is run by one of two instances of the one loop
    /// (`Engine::burst`), chosen here once per burst from the trace's armed
    /// word (one relaxed load): the untraced one, without a trace hook in
    /// it, unless a trace is armed (docs/dataplane.md "Tracing packets").
    #[inline]
    pub fn process_burst<P: Port>(
        &mut self,
        fib: &FibSet,
        now_ns: u64,
        in_port: PortId,
        rx: &mut Burst<P::Buf>,
        ports: &mut [P],
        stage: &mut [Burst<P::Buf>],
    ) {
        let armed = self.trace.armed();
        if armed.on() {
            self.traced_burst(armed, fib, now_ns, in_port, rx, ports, stage);
        } else if fib.partitions().on() != 0 {
            self.partitioned_burst(fib, now_ns, in_port, rx, ports, stage);
        } else {
            self.burst::<P, false, false>(Armed::OFF, fib, now_ns, in_port, rx, ports, stage);
        }
    }

    /// A burst on a box with partitions (docs/partitions.md "At the
    /// routers"): the loop's instance with the checks; a box without them
    /// runs the one without, whose code has none.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn partitioned_burst<P: Port>(
        &mut self,
        fib: &FibSet,
        now_ns: u64,
        in_port: PortId,
        rx: &mut Burst<P::Buf>,
        ports: &mut [P],
        stage: &mut [Burst<P::Buf>],
    ) {
        self.burst::<P, false, true>(Armed::OFF, fib, now_ns, in_port, rx, ports, stage);
    }

    /// A burst while a trace is armed: traced if the trace takes packets of
    /// `in_port`.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn traced_burst<P: Port>(
        &mut self,
        armed: Armed,
        fib: &FibSet,
        now_ns: u64,
        in_port: PortId,
        rx: &mut Burst<P::Buf>,
        ports: &mut [P],
        stage: &mut [Burst<P::Buf>],
    ) {
        let parts = fib.partitions().on() != 0;
        match (armed.admits_port(in_port), parts) {
            (true, true) => {
                self.burst::<P, true, true>(armed, fib, now_ns, in_port, rx, ports, stage)
            }
            (true, false) => {
                self.burst::<P, true, false>(armed, fib, now_ns, in_port, rx, ports, stage)
            }
            (false, true) => {
                self.burst::<P, false, true>(Armed::OFF, fib, now_ns, in_port, rx, ports, stage)
            }
            (false, false) => {
                self.burst::<P, false, false>(Armed::OFF, fib, now_ns, in_port, rx, ports, stage)
            }
        }
    }

    /// The burst loop of [`Engine::process_burst`]; with `TRACE`, each
    /// packet that the trace `armed` takes gets a record
    /// ([`crate::trace`]), built on the cold path. Without `TRACE` the hooks
    /// are compiled out; without `PARTS` (a box none of whose SANs has
    /// partitions) so are the partitions' checks.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn burst<P: Port, const TRACE: bool, const PARTS: bool>(
        &mut self,
        armed: Armed,
        fib: &FibSet,
        now_ns: u64,
        in_port: PortId,
        rx: &mut Burst<P::Buf>,
        ports: &mut [P],
        stage: &mut [Burst<P::Buf>],
    ) {
        let n = rx.len() as u64;
        // Touch every packet of the burst first, so that the cache misses on
        // buffer metadata and packet data overlap instead of being taken one
        // packet at a time (docs/performance.md).
        for buf in rx.iter() {
            buf.prefetch();
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
        // The partitions' view of the ingress port (used by the instance
        // with `PARTS` only).
        let parts = PartsIn::of(pfib, in_port);
        let ip = in_port.index();
        // The port's counters, out of `self` for the burst (a move of the
        // vector, not a copy of the counters): the loop counts into them
        // while it calls `self`'s methods.
        let mut counters = std::mem::take(&mut self.counters);
        let c = &mut counters[ip];
        c.received += n;
        // Which staged packets are multicast replicas (bit i: stage[p][i]):
        // their transmission counts as copies, not as forwarded packets.
        let mut replicas = [0u32; MAX_PORTS];
        for mut buf in rx.drain(..) {
            let err = buf.rx_error();
            c.rx_errors += err as u64;
            // Traced: the packet's record as received, if the trace takes it.
            let rec: Option<TraceRecord> = if TRACE {
                self.trace
                    .begin(armed, fib, &self.hrs, in_port, now_ns, buf.data())
            } else {
                None
            };
            let (port, native, l2, redirect) =
                match self.verdict::<P::Buf, PARTS>(pfib, &parts, in_port, err, &mut buf) {
                    Verdict::Route { nh, redirect } => {
                        if redirect {
                            let n = redirect_notice(in_port, nh.port, &nh.native, &buf);
                            self.notify(c, now_ns, n);
                        }
                        (nh.port, Hop::Route(&nh.native), false, redirect)
                    }
                    Verdict::Source { port, native } => (port, Hop::Source(native), true, false),
                    Verdict::Mcast {
                        ports: mask,
                        too_big,
                        notice,
                        slot,
                    } => {
                        if let Some(dn) = notice {
                            let n = drop_notice(in_port, dn, &buf);
                            self.notify(c, now_ns, n);
                        }
                        if TRACE && let Some(r) = rec {
                            self.trace.record(r.replicated(mask, buf.data()));
                        }
                        let out = McastOut {
                            mask,
                            too_big,
                            slot,
                            tx_cap,
                        };
                        self.replicate(c, now_ns, ip, buf, out, ports, stage, &mut replicas);
                        continue;
                    }
                    Verdict::Punt {
                        class,
                        hr_port,
                        layout,
                    } => {
                        let outcome = self.punt(
                            c,
                            fib.buddies(),
                            now_ns,
                            in_port,
                            class,
                            hr_port,
                            layout,
                            &buf,
                        );
                        if TRACE && let Some(r) = rec {
                            self.trace.record(r.punted(hr_port, outcome));
                        }
                        ports[ip].recycle(buf);
                        continue;
                    }
                    Verdict::Drop { reason, notice } => {
                        c.dropped[reason] += 1;
                        if reason == DropReason::Partition
                            && let Some(dn) = notice
                        {
                            self.count_partition(in_port, buf.data(), dn.header_offset as usize);
                        }
                        if drops {
                            self.capture(now_ns, in_port, Some(reason), buf.data());
                        }
                        if TRACE && let Some(r) = rec {
                            let egress = notice
                                .filter(|_| reason == DropReason::Mtu)
                                .map(|dn| dn.egress);
                            self.trace.record(r.dropped(reason, egress));
                        }
                        if let Some(dn) = notice {
                            let n = drop_notice(in_port, dn, &buf);
                            self.notify(c, now_ns, n);
                        }
                        ports[ip].recycle(buf);
                        continue;
                    }
                };
            // Traced: forwarded, as it leaves (EI shifted), before the
            // native header goes on.
            let rec = if TRACE {
                rec.map(|r| r.forwarded(port, redirect, buf.data()))
            } else {
                None
            };
            let p = port.index();
            let encapsulated = match native {
                Hop::Route(n) => {
                    if tx_cap == Some(port) {
                        self.capture(now_ns, port, None, buf.data());
                    }
                    ports[p].encap(&mut buf, n)
                }
                Hop::Source(s) if s.len == 6 => {
                    let mac = take_source_mac(&mut buf, s);
                    if tx_cap == Some(port) {
                        self.capture(now_ns, port, None, buf.data());
                    }
                    ports[p].encap_mac(&mut buf, &mac)
                }
                Hop::Source(s) => {
                    let n = take_source_native(&mut buf, s);
                    if tx_cap == Some(port) {
                        self.capture(now_ns, port, None, buf.data());
                    }
                    ports[p].encap(&mut buf, &n)
                }
            };
            if encapsulated {
                if TRACE && let Some(r) = rec {
                    self.trace.stage(r, p, stage[p].len());
                }
                stage[p].push(buf);
            } else {
                if TRACE && let Some(r) = rec {
                    self.trace
                        .record(r.dropped(Self::encap_reason(l2), Some(port)));
                }
                Self::encap_failed(c, l2);
                ports[ip].recycle(buf);
            }
        }
        self.counters = counters;
        for (p, out) in stage.iter_mut().enumerate() {
            if out.is_empty() {
                continue;
            }
            let reps = replicas.get(p).copied().unwrap_or(0);
            let sent = ports[p].tx_burst(out);
            let sent_mask = if sent >= 32 {
                u32::MAX
            } else {
                (1u32 << sent) - 1
            };
            let sent_reps = u64::from((reps & sent_mask).count_ones());
            self.counters[ip].forwarded += sent as u64 - sent_reps;
            self.counters[p].transmitted += sent as u64;
            if TRACE && !out.is_empty() {
                self.trace.sent(p, sent);
            }
            if !out.is_empty() {
                self.drop_unsent(now_ns, in_port, p, out, ports, reps, sent, drops);
            }
        }
        if TRACE {
            self.trace.flush();
        }
    }

    /// Drops and counts the packets port `p` did not transmit (the rest of
    /// `out`, after `sent`): a replica (bit `sent + i` of `reps`) counts as a
    /// failed copy, anything else as [`DropReason::TxFull`].
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn drop_unsent<P: Port>(
        &mut self,
        now_ns: u64,
        in_port: PortId,
        p: usize,
        out: &mut Burst<P::Buf>,
        ports: &mut [P],
        reps: u32,
        sent: usize,
        drops: bool,
    ) {
        let ip = in_port.index();
        for (i, b) in out.drain(..).enumerate() {
            if reps & (1u32 << ((sent + i) & 31)) != 0 {
                self.mcast_changed = true;
                self.mcast_unslotted.copy_failed += 1;
            } else {
                self.counters[ip].dropped[DropReason::TxFull] += 1;
                if drops {
                    self.capture(now_ns, in_port, Some(DropReason::TxFull), b.data());
                }
            }
            ports[p].recycle(b);
        }
    }

    /// Stages a group packet on every port of `out.mask` (docs/multicast.md):
    /// a replica from the egress port for each but the last, which takes the
    /// received buffer itself; each to every member of that port's SAN.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn replicate<P: Port>(
        &mut self,
        c: &mut PortStats,
        now_ns: u64,
        ip: usize,
        mut buf: P::Buf,
        out: McastOut,
        ports: &mut [P],
        stage: &mut [Burst<P::Buf>],
        replicas: &mut [u32; MAX_PORTS],
    ) {
        // Only ports this worker has (the table is the control plane's).
        let mask = out.mask & ((1u64 << ports.len().min(32)) - 1) as u32;
        if mask == 0 {
            c.dropped[DropReason::Encap] += 1;
            ports[ip].recycle(buf);
            return;
        }
        let last = 31 - mask.leading_zeros() as usize;
        let mut rest = mask & !(1u32 << last);
        let mut copies = 0u64;
        let mut failed = 0u64;
        while rest != 0 {
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let Some(port) = ports.get_mut(p) else {
                failed += 1;
                continue;
            };
            let Some(mut r) = port.replicate(&buf) else {
                failed += 1;
                continue;
            };
            if out.tx_cap == Some(PortId(p as u16)) {
                // The original's bytes: a replica may hold them in a chain
                // whose first segment is empty (DPDK).
                self.capture(now_ns, PortId(p as u16), None, buf.data());
            }
            if port.encap(&mut r, &NativeAddr::NONE) {
                replicas[p] |= 1u32 << (stage[p].len() & 31);
                stage[p].push(r);
                copies += 1;
            } else {
                failed += 1;
                port.recycle(r);
            }
        }
        if out.tx_cap == Some(PortId(last as u16)) {
            self.capture(now_ns, PortId(last as u16), None, buf.data());
        }
        if ports[last].encap(&mut buf, &NativeAddr::NONE) {
            stage[last].push(buf);
            copies += 1;
        } else {
            c.dropped[DropReason::Encap] += 1;
            ports[ip].recycle(buf);
        }
        let m = self.mcast_count(out.slot);
        m.packets += 1;
        m.copies += copies;
        m.copy_failed += failed;
        m.branch_mtu += u64::from(out.too_big.count_ones());
    }

    /// Queues a notice for the control plane (off the per-packet fast path).
    #[cold]
    #[inline(never)]
    fn notify(&mut self, c: &mut PortStats, now_ns: u64, n: Notice) {
        if self.chan.notice(now_ns, n) {
            c.notices += 1;
        } else {
            c.notices_dropped += 1;
        }
    }

    /// Counts a packet the egress port could not encapsulate.
    #[cold]
    #[inline(never)]
    fn encap_failed(c: &mut PortStats, l2: bool) {
        c.dropped[Self::encap_reason(l2)] += 1;
    }

    /// Why a packet the egress port could not encapsulate is dropped: on
    /// L2, the L2RH's native address did not suit the port.
    #[inline(always)]
    fn encap_reason(l2: bool) -> DropReason {
        if l2 {
            DropReason::BadL2rh
        } else {
            DropReason::Encap
        }
    }

    /// Wakes the control thread if this pass punted or sent a notice and
    /// the control thread sleeps ([`crate::punt::WorkerChannels::wake_control`]).
    /// Kept out of line: inlined at the end of the worker's pass, it
    /// changed the compiler's code for the whole burst loop and cost 8
    /// instructions a forwarded L3 packet (docs/performance.md "The
    /// control thread's wake-ups, on the forwarding path").
    #[inline(never)]
    pub fn wake_control(&mut self) {
        self.chan.wake_control();
    }

    /// The heaviest senders of each punt class as of `now_ns`
    /// ([`crate::punt::WorkerChannels::heaviest`]).
    pub fn heaviest_sources(
        &self,
        now_ns: u64,
    ) -> arrayvec::ArrayVec<rrp::PuntSource, { crate::punt::HEAVIEST }> {
        self.chan.heaviest(now_ns)
    }

    /// Hands a packet for this box to the control plane, with its layout:
    /// the class it was punted in, or why it was dropped.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn punt<B: PacketBuf>(
        &mut self,
        c: &mut PortStats,
        buddies: &Buddies,
        now_ns: u64,
        in_port: PortId,
        class: PuntClass,
        hr_port: PortId,
        layout: Layout,
        buf: &B,
    ) -> Result<PuntClass, DropReason> {
        let class = punt_class(buddies, in_port, class, layout, buf);
        let meta = PuntMeta {
            in_port,
            hr_port,
            native_src: buf.native_src(),
            rx_error: buf.rx_error(),
            layout,
        };
        match self.chan.punt(now_ns, class, meta, buf.data()) {
            Ok(()) => {
                c.punted += 1;
                c.punted_by_class[class] += 1;
                Ok(class)
            }
            Err(r) => {
                c.dropped[r] += 1;
                match r {
                    DropReason::PuntRate => c.punt_rate_by_class[class] += 1,
                    DropReason::PuntSource => c.punt_source_by_class[class] += 1,
                    _ => c.punt_full_by_class[class] += 1,
                }
                Err(r)
            }
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
            let p = inj.port.index();
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
            if tx_cap == Some(inj.port)
                && let Some(t) = &self.tap
            {
                t.copy(now_ns, inj.port, None, buf.data());
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

/// The partitions as the packets of one ingress port meet them, taken
/// once per burst: the guard's view of the port and the routers of its
/// SAN (the HR's buddies), which a packet brought by a router comes from.
#[derive(Clone, Copy)]
struct PartsIn<'f> {
    guard: Ingress<'f>,
    routers: &'f [(Address, NativeAddr)],
}

impl<'f> PartsIn<'f> {
    #[inline(always)]
    fn of(fib: PortFib<'f>, in_port: PortId) -> PartsIn<'f> {
        PartsIn {
            guard: fib.partitions().ingress(in_port),
            routers: fib.buddies().of(in_port),
        }
    }
}

/// Where a packet's next hop lies, as the partitions ask it.
#[derive(Clone, Copy)]
enum Next<'f> {
    /// L3: the FIB's native next hop (a router when it is a buddy's of the
    /// egress HR).
    Native(&'f NativeAddr),
    /// L2: whether more L2RHs follow the one stripped here.
    Routed(bool),
}

/// What the partitions ask about one packet ([`Crossing`]), answered
/// only when asked: from the ingress FIB, the buddies and the packet's
/// native source.
struct At<'a, 'f, B> {
    fib: &'a PortFib<'f>,
    /// The ingress HR's routers, taken once per burst.
    routers: &'a [(Address, NativeAddr)],
    in_port: PortId,
    sa: u16,
    buf: &'a B,
    out_port: PortId,
    next: Next<'f>,
}

impl<B: PacketBuf> Crossing for At<'_, '_, B> {
    /// The ingress FIB's route to SA goes back out of the ingress port to
    /// the very native address the packet came from.
    #[inline(always)]
    fn came_from_source(&self) -> bool {
        let idx = self.fib.lookup(self.sa);
        if idx < crate::fib::NH_FIRST {
            return false;
        }
        let nh = self.fib.nexthop(idx);
        nh.port == self.in_port && nh.native == self.buf.native_src()
    }

    #[inline(always)]
    fn came_from_router(&self) -> bool {
        let from = self.buf.native_src();
        self.routers.iter().any(|(_, n)| *n == from)
    }

    #[inline(always)]
    fn goes_to_router(&self) -> bool {
        match self.next {
            Next::Native(n) => self.fib.buddies().is_router(self.out_port, n),
            Next::Routed(more) => more,
        }
    }
}

/// Whether the partitions refuse an L3 packet that leaves through next
/// hop `nh`. Control traffic is never refused. Inline: only the loop's
/// instance with partitions has it, which runs it for every packet
/// (docs/performance.md "Partitions").
#[inline(always)]
fn l3_refused<B: PacketBuf>(
    fib: &PortFib<'_>,
    parts: &PartsIn<'_>,
    nh: &NextHop,
    d: &[u8],
    buf: &B,
) -> bool {
    let Some((sa, da, mark)) = ends_and_mark(d, 0) else {
        return true;
    };
    let crossing = At {
        fib,
        routers: parts.routers,
        in_port: parts.guard.port(),
        sa,
        buf,
        out_port: nh.port,
        next: Next::Native(&nh.native),
    };
    parts
        .guard
        .admits(nh.port, sa, da, mark, &crossing)
        .is_err()
        && !is_control(buf, 0)
}

/// Whether the partitions refuse a source-routed packet (its EEP header
/// at `header_offset`, the first L2RH still in front) that leaves on
/// `eport`: the destination is further on when `more_l2rhs` follow. Control traffic is
/// never refused. Inline, as [`l3_refused`].
#[inline(always)]
fn l2_refused<B: PacketBuf>(
    fib: &PortFib<'_>,
    parts: &PartsIn<'_>,
    eport: PortId,
    header_offset: usize,
    more_l2rhs: bool,
    d: &[u8],
    buf: &B,
) -> bool {
    let Some((sa, da, mark)) = ends_and_mark(d, header_offset) else {
        return true;
    };
    let crossing = At {
        fib,
        routers: parts.routers,
        in_port: parts.guard.port(),
        sa,
        buf,
        out_port: eport,
        next: Next::Routed(more_l2rhs),
    };
    parts.guard.admits(eport, sa, da, mark, &crossing).is_err() && !is_control(buf, header_offset)
}

/// The SA, DA and partition mark of the EEP header at `at` in `d`, read
/// with one bounds check (the framing was walked by [`locate_fast`], so it
/// is always there).
#[inline(always)]
fn ends_and_mark(d: &[u8], at: usize) -> Option<(u16, u16, PartitionMark)> {
    use rrp::wire::header::{HEADER_LEN, field};
    let h: &[u8; HEADER_LEN] = d.get(at..)?.first_chunk()?;
    let be16 = |r: core::ops::Range<usize>| u16::from_be_bytes([h[r.start], h[r.start + 1]]);
    Some((
        be16(field::SRC),
        be16(field::DST),
        PartitionMark::from_free(be16(field::FREE)),
    ))
}

/// Whether the packet whose EEP header starts at `at` is control traffic
/// (RRP, ERR, management), which partitions never refuse (docs/spec-notes.md
/// 75): asked only once the partitions refused it.
#[cold]
#[inline(never)]
fn is_control<B: PacketBuf>(buf: &B, at: usize) -> bool {
    let Some(h) = buf.data().get(at..) else {
        return false;
    };
    let pt: PacketType = Header::new_unchecked(h).packet_type();
    matches!(
        pt.class(),
        PacketClass::Rrp | PacketClass::Error | PacketClass::Management
    )
}

/// The verdict of a packet the partitions refused: dropped with a notice
/// for the source's ERR (docs/spec-notes.md 77), trimmed to the packet
/// as every drop with a notice.
#[cold]
#[inline(never)]
fn partition_refused<'f, B: PacketBuf>(
    buf: &mut B,
    end: usize,
    egress: PortId,
    header_offset: u16,
) -> Verdict<'f> {
    buf.trim(end);
    Verdict::Drop {
        reason: DropReason::Partition,
        notice: Some(DropNotice {
            kind: NoticeKind::Partition,
            egress,
            mtu: 0,
            next_hop: None,
            header_offset,
        }),
    }
}

/// The branches `ports` of a group packet from `sa` marked `mark`, received
/// on `in_port`, that the partitions keep (docs/partitions.md "At the
/// routers"); `None` when they refuse its source or keep no branch.
#[cold]
#[inline(never)]
fn mcast_partitions<B: PacketBuf>(
    fib: PortFib<'_>,
    in_port: PortId,
    sa: u16,
    buf: &B,
    ports: PortMask,
) -> Option<PortMask> {
    let guard = fib.partitions();
    let mark = PartitionMark::from_free(Header::new_unchecked(buf.data()).free());
    let crossing = At {
        fib: &fib,
        routers: fib.buddies().of(in_port),
        in_port,
        sa,
        buf,
        out_port: in_port,
        next: Next::Routed(false),
    };
    if !guard.source_admits(in_port, sa, mark, &crossing) {
        return None;
    }
    let kept = guard.branches(ports, mark);
    (kept != 0).then_some(kept)
}

/// The notice of a packet forwarded back onto the SAN it came from (L3).
#[cold]
#[inline(never)]
fn redirect_notice<B: PacketBuf>(
    in_port: PortId,
    port: PortId,
    next_hop: &NativeAddr,
    buf: &B,
) -> Notice {
    let mut n = Notice::new(
        NoticeKind::Redirect,
        in_port,
        port,
        buf.native_src(),
        buf.data(),
        0,
    );
    n.next_hop = *next_hop;
    n
}

/// The notice of a dropped packet.
#[cold]
#[inline(never)]
fn drop_notice<B: PacketBuf>(in_port: PortId, dn: DropNotice<'_>, buf: &B) -> Notice {
    let mut n = Notice::new(
        dn.kind,
        in_port,
        dn.egress,
        buf.native_src(),
        buf.data(),
        dn.header_offset as usize,
    );
    n.mtu = dn.mtu;
    n.next_hop = dn.next_hop.copied().unwrap_or(NativeAddr::NONE);
    n
}
