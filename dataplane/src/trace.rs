//! Packet tracing (`mwctl trace-packets`, docs/dataplane.md "Tracing
//! packets"): what the forwarding path decided for the next N received
//! packets that match a filter, one [`TraceRecord`] each.
//!
//! Built as capture is ([`crate::capture`]): the control side arms a trace
//! (a filter and a count) in one word that every worker reads once per burst
//! (one relaxed load). Only while a trace is armed, and its port filter
//! admits the burst's port, is the burst run by the traced instance of the
//! burst loop (`Engine::process_burst`); the untraced instance has no trace
//! code in it, so tracing off costs one branch per burst and nothing per
//! packet. In a traced burst a matching packet takes one from the trace's
//! remaining count (shared by the workers, and written only while a trace is
//! armed), its record is built on the cold path, and it goes into the
//! worker's bounded ring of preallocated slots once the burst is
//! transmitted: a full ring loses the record, never the packet, and counts
//! it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use arrayvec::ArrayVec;
use crossbeam_queue::ArrayQueue;
use ports::BURST;
use rrp::limits::MAX_L2RHS;
use rrp::router::PortMask;
use rrp::wire::TRAILER_LEN;
use rrp::wire::bytes::be64;
use rrp::wire::header::Header;
use rrp::wire::l2rh::{L2rh, starts_l2rh};
use rrp::wire::packet::{Layout, Packet, locate_fast};
use rrp::{Address, DropReason, NativeAddr, PortId, PuntClass};

use crate::fib::{FibSet, NH_FIRST, NH_LOCAL, NH_NONE};

/// Records a worker's ring holds until the control side takes them: the
/// control side takes them as they come (the admin stream sends each on),
/// so the ring only has to cover a burst of matching packets while it
/// looks; what does not fit is counted ([`TraceControl::lost`]).
pub const TRACE_RING: usize = 256;

/// Which packets a trace takes, by how the forwarding path reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// Source-routed: a leading L2RH (a first 16-bit value below 0x0040).
    L2,
    /// Routed by destination: an EEP header first.
    L3,
}

/// Which received packets a trace records: every condition given must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceFilter {
    /// Received on this port (any port: `None`).
    pub port: Option<PortId>,
    /// With this destination in the EEP header (of an L2 packet too, after
    /// its L2RHs). A packet whose header cannot be found has none.
    pub dst: Option<Address>,
    /// Only L2 or only L3 packets.
    pub kind: Option<TraceKind>,
}

/// What an L3 lookup in the ingress HR's FIB returned (docs/dataplane.md
/// "FIB publication": index 0 is no route, 1 this box).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupEntry {
    /// No route (index 0).
    NoRoute,
    /// This box (index 1): the packet is punted.
    Local,
    /// The index of a next hop in the FIB set's next-hop table.
    NextHop(u16),
}

/// How the forwarding path decided the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceLookup {
    /// No lookup: the packet's framing (L2RHs, EEP header, DL) was refused
    /// first; the verdict says why.
    Unframed,
    /// L3: a lookup of the destination in the ingress HR's FIB.
    L3 {
        /// The version of the FIB set in use.
        fib_version: u64,
        /// What the lookup returned.
        entry: LookupEntry,
    },
    /// L3 to a logical address: the multicast table of the FIB set
    /// (docs/multicast.md).
    Group {
        /// The version of the FIB set in use.
        fib_version: u64,
    },
    /// L2: the leading L2RH, a hop of a source route.
    L2 {
        /// The egress HR it names (`None`: too short to name one).
        egress_hr: Option<Address>,
    },
}

/// What became of a traced packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceVerdict {
    /// Transmitted on the egress port.
    Forwarded {
        /// Back onto the SAN it came from: the control plane was told
        /// (it may send the source a redirect).
        redirect: bool,
    },
    /// A group packet, copied onto these ports.
    Replicated {
        /// The egress ports.
        ports: PortMask,
    },
    /// Handed to the control plane, in this class.
    Punted {
        /// The punt class (docs/dataplane.md "Punt classes").
        class: PuntClass,
    },
    /// Dropped.
    Dropped {
        /// Why.
        reason: DropReason,
    },
}

/// What the forwarding path did with one received packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// Which trace took it (records of an earlier one are discarded).
    generation: u16,
    /// The worker's clock when its burst was processed, in nanoseconds.
    pub time_ns: u64,
    /// The port it was received on.
    pub in_port: PortId,
    /// Its length as received.
    pub len: u32,
    /// The EEP header's source address (`None`: no header found).
    pub src: Option<Address>,
    /// The EEP header's destination address (`None`: no header found).
    pub dst: Option<Address>,
    /// The decision's kind, and what it looked at.
    pub lookup: TraceLookup,
    /// The next hop the lookup named: its egress port and native address
    /// (an L3 route's, or the leading L2RH's).
    pub next_hop: Option<(PortId, NativeAddr)>,
    /// The trailer's EI as received (`None`: no trailer found).
    pub ei_before: Option<u64>,
    /// The trailer's EI as transmitted (forwarded and replicated packets
    /// only: shifted left, the receive error ORed in).
    pub ei_after: Option<u64>,
    /// The port it left by (forwarded), was delivered to (punted: the HR
    /// that takes it), or would have left by (dropped for `mtu`,
    /// `tx-full`, `encap`).
    pub egress: Option<PortId>,
    /// What became of it.
    pub verdict: TraceVerdict,
}

impl TraceRecord {
    /// Forwarded on `egress`; `d` is the packet as it will leave, its
    /// trailer last.
    #[cold]
    pub(crate) fn forwarded(mut self, egress: PortId, redirect: bool, d: &[u8]) -> TraceRecord {
        self.ei_after = ei_at_end(d);
        self.egress = Some(egress);
        self.verdict = TraceVerdict::Forwarded { redirect };
        self
    }

    /// Replicated onto `ports`; `d` as for [`TraceRecord::forwarded`].
    #[cold]
    pub(crate) fn replicated(mut self, ports: PortMask, d: &[u8]) -> TraceRecord {
        self.ei_after = ei_at_end(d);
        self.verdict = TraceVerdict::Replicated { ports };
        self
    }

    /// Punted to HR `hr_port`: in its class, or refused for a reason.
    #[cold]
    pub(crate) fn punted(
        mut self,
        hr_port: PortId,
        outcome: Result<PuntClass, DropReason>,
    ) -> TraceRecord {
        match outcome {
            Ok(class) => {
                self.egress = Some(hr_port);
                self.verdict = TraceVerdict::Punted { class };
            }
            Err(reason) => self.verdict = TraceVerdict::Dropped { reason },
        }
        self
    }

    /// Dropped for `reason`; `egress`, where it would have left.
    #[cold]
    pub(crate) fn dropped(mut self, reason: DropReason, egress: Option<PortId>) -> TraceRecord {
        self.ei_after = None;
        self.egress = egress;
        self.verdict = TraceVerdict::Dropped { reason };
        self
    }
}

/// The EI of a packet that ends with its trailer.
fn ei_at_end(d: &[u8]) -> Option<u64> {
    d.len().checked_sub(TRAILER_LEN).map(|at| be64(d, at))
}

/// An armed trace as the workers read it: one word, 0 when off. Bit 63
/// on; bits 0-15 the port filter + 1 (0: any); bits 16-31 the destination
/// filter, bit 32 set when there is one; bits 33-34 the kind filter (0 any,
/// 1 L2, 2 L3); bits 40-55 the trace's generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Armed(u64);

impl Armed {
    /// No trace.
    pub const OFF: Armed = Armed(0);
    const ON: u64 = 1 << 63;

    fn new(f: TraceFilter, generation: u16) -> Armed {
        let port = f.port.map_or(0, |p| u64::from(p.0) + 1);
        let dst = f.dst.map_or(0, |a| u64::from(a.0) << 16 | 1 << 32);
        let kind = match f.kind {
            None => 0,
            Some(TraceKind::L2) => 1,
            Some(TraceKind::L3) => 2,
        };
        Armed(Self::ON | port | dst | kind << 33 | u64::from(generation) << 40)
    }

    /// Whether a trace is armed.
    #[inline(always)]
    pub fn on(self) -> bool {
        self.0 != 0
    }

    /// Whether the trace takes packets received on `port`.
    #[inline]
    pub fn admits_port(self, port: PortId) -> bool {
        let p = self.0 & 0xFFFF;
        p == 0 || p == u64::from(port.0) + 1
    }

    /// The filter.
    pub fn filter(self) -> TraceFilter {
        let p = self.0 & 0xFFFF;
        TraceFilter {
            port: (p != 0).then(|| PortId((p - 1) as u16)),
            dst: (self.0 & 1 << 32 != 0).then_some(Address((self.0 >> 16) as u16)),
            kind: match (self.0 >> 33) & 3 {
                1 => Some(TraceKind::L2),
                2 => Some(TraceKind::L3),
                _ => None,
            },
        }
    }

    fn generation(self) -> u16 {
        (self.0 >> 40) as u16
    }
}

/// A value alone on its cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Line<T>(T);

/// What the control side and every worker share. `armed` and
/// `generation` are written by the control side only (and `armed` cleared
/// by the worker that records a trace's last packet); `remaining` (the
/// generation in the high 32 bits, the packets still to record in the low
/// 32) is written by the workers while a trace is armed, on a line of its
/// own.
#[derive(Debug, Default)]
struct Shared {
    armed: Line<AtomicU64>,
    generation: AtomicU32,
    remaining: Line<AtomicU64>,
}

/// A worker's ring of records.
#[derive(Debug)]
struct Ring {
    records: ArrayQueue<TraceRecord>,
    lost: AtomicU64,
}

impl Ring {
    fn new(slots: usize) -> Arc<Ring> {
        Arc::new(Ring {
            records: ArrayQueue::new(slots.max(1)),
            lost: AtomicU64::new(0),
        })
    }

    /// Puts a record in, or counts it lost.
    fn push(&self, r: TraceRecord) {
        if self.records.push(r).is_err() {
            self.lost.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A record held until its burst is transmitted: of a forwarded packet
/// staged on `port` at position `at`, or of another ([`NOT_STAGED`]).
#[derive(Debug, Clone, Copy)]
struct Pending {
    record: TraceRecord,
    port: u8,
    at: u8,
}

/// [`Pending::port`] of a packet that was not staged for transmission.
const NOT_STAGED: u8 = u8::MAX;

/// The control side of the traces of every worker.
#[derive(Debug, Clone)]
pub struct TraceControl {
    shared: Arc<Shared>,
    rings: Vec<Arc<Ring>>,
}

/// A worker's side of tracing: the armed word, the shared count and its
/// own ring.
#[derive(Debug)]
pub struct TraceTap {
    shared: Arc<Shared>,
    ring: Arc<Ring>,
    /// Forwarded packets of the burst in progress (at most a burst).
    pending: Box<ArrayVec<Pending, BURST>>,
}

/// Trace rings for `workers` workers with `slots` records each (see
/// [`TRACE_RING`]).
pub fn trace_rings(workers: usize, slots: usize) -> (TraceControl, Vec<TraceTap>) {
    let shared = Arc::new(Shared::default());
    let rings: Vec<Arc<Ring>> = (0..workers).map(|_| Ring::new(slots)).collect();
    let taps = rings
        .iter()
        .map(|r| TraceTap::with(shared.clone(), r.clone()))
        .collect();
    (TraceControl { shared, rings }, taps)
}

impl TraceControl {
    /// Starts a trace of the next `count` received packets that match
    /// `filter`, in every worker (replacing any trace in progress; its
    /// records not yet taken are discarded).
    pub fn arm(&self, filter: TraceFilter, count: u32) {
        let mut g = self.shared.generation.fetch_add(1, Ordering::Relaxed) as u16;
        g = g.wrapping_add(1);
        if g == 0 {
            // 0 is never a trace's: a worker's stale word cannot match.
            self.shared.generation.fetch_add(1, Ordering::Relaxed);
            g = 1;
        }
        self.shared
            .remaining
            .0
            .store(u64::from(g) << 32 | u64::from(count), Ordering::Relaxed);
        self.shared
            .armed
            .0
            .store(Armed::new(filter, g).0, Ordering::Release);
    }

    /// Stops tracing.
    pub fn disarm(&self) {
        self.shared.armed.0.store(0, Ordering::Relaxed);
        self.shared.remaining.0.store(0, Ordering::Relaxed);
    }

    /// The armed word (for tests and the daemon: whether a trace runs).
    pub fn armed(&self) -> Armed {
        Armed(self.shared.armed.0.load(Ordering::Relaxed))
    }

    /// Packets the trace in progress still takes.
    pub fn remaining(&self) -> u32 {
        let v = self.shared.remaining.0.load(Ordering::Relaxed);
        if (v >> 32) as u16 == self.generation() {
            v as u32
        } else {
            0
        }
    }

    fn generation(&self) -> u16 {
        let g = self.shared.generation.load(Ordering::Relaxed) as u16;
        if g == 0 { 1 } else { g }
    }

    /// The next record of the trace in progress from any worker, with the
    /// worker's index.
    pub fn next(&self) -> Option<(usize, TraceRecord)> {
        let g = self.generation();
        for (w, r) in self.rings.iter().enumerate() {
            while let Some(rec) = r.records.pop() {
                if rec.generation == g {
                    return Some((w, rec));
                }
            }
        }
        None
    }

    /// Records lost because a ring was full, all workers, all traces.
    pub fn lost(&self) -> u64 {
        self.rings
            .iter()
            .map(|r| r.lost.load(Ordering::Relaxed))
            .sum()
    }

    /// Takes and discards every record in the rings.
    pub fn drain(&self) {
        for r in &self.rings {
            while r.records.pop().is_some() {}
        }
    }
}

impl TraceTap {
    fn with(shared: Arc<Shared>, ring: Arc<Ring>) -> TraceTap {
        TraceTap {
            shared,
            ring,
            pending: Box::default(),
        }
    }

    /// A tap that nobody arms (an engine without tracing).
    pub fn detached() -> TraceTap {
        TraceTap::with(Arc::default(), Ring::new(1))
    }

    /// The trace armed for the next burst, if any: one relaxed load.
    #[inline(always)]
    pub fn armed(&self) -> Armed {
        Armed(self.shared.armed.0.load(Ordering::Relaxed))
    }

    /// Takes one of the trace's remaining packets: false when the trace
    /// `armed` has all it wants (or was replaced). The worker that takes
    /// the last disarms it.
    fn claim(&self, armed: Armed) -> bool {
        let g = u64::from(armed.generation());
        let taken =
            self.shared
                .remaining
                .0
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                    (v >> 32 == g && v as u32 > 0).then(|| v - 1)
                });
        match taken {
            Ok(v) => {
                if v as u32 == 1 {
                    let _ = self.shared.armed.0.compare_exchange(
                        armed.0,
                        0,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
                true
            }
            Err(_) => false,
        }
    }

    /// The record of packet `d` received on `in_port`, before the engine
    /// decides it, if it matches the trace `armed` and the trace still
    /// takes packets: its addresses, length, EI, the lookup (in `fib`, the
    /// set the burst is decided by; `hrs`, the box's HRs) and next hop.
    /// The verdict is set once known.
    #[cold]
    #[inline(never)]
    pub(crate) fn begin(
        &self,
        armed: Armed,
        fib: &FibSet,
        hrs: &[Address],
        in_port: PortId,
        now_ns: u64,
        d: &[u8],
    ) -> Option<TraceRecord> {
        let f = armed.filter();
        let lay: Option<Layout> = locate_fast(d, MAX_L2RHS).ok();
        let l2 = match lay {
            Some(l) => l.l2rh_count > 0,
            None => d
                .first_chunk::<2>()
                .is_some_and(|b| starts_l2rh(u16::from_be_bytes(*b))),
        };
        let kind = if l2 { TraceKind::L2 } else { TraceKind::L3 };
        if f.kind.is_some_and(|k| k != kind) {
            return None;
        }
        let header = lay.map(|l| Header::new_unchecked(&d[l.header_offset..]));
        let (src, dst) = (header.map(|h| h.src()), header.map(|h| h.dst()));
        if f.dst.is_some() && dst != f.dst {
            return None;
        }
        if !self.claim(armed) {
            return None;
        }
        let (lookup, next_hop) = match (lay, dst) {
            (Some(l), Some(dst)) if l.l2rh_count == 0 => {
                if dst.is_logical() {
                    (
                        TraceLookup::Group {
                            fib_version: fib.version,
                        },
                        None,
                    )
                } else {
                    let pfib = fib.port(in_port);
                    let i = pfib.lookup(dst.0);
                    let entry = match i {
                        NH_NONE => LookupEntry::NoRoute,
                        NH_LOCAL => LookupEntry::Local,
                        i => LookupEntry::NextHop(i),
                    };
                    let nh = (i >= NH_FIRST).then(|| {
                        let n = pfib.nexthop(i);
                        (n.port, n.native)
                    });
                    (
                        TraceLookup::L3 {
                            fib_version: fib.version,
                            entry,
                        },
                        nh,
                    )
                }
            }
            (Some(_), _) => {
                let first = L2rh::new_unchecked(d);
                let egress_hr = first.hop_egress();
                let port = egress_hr
                    .and_then(|a| hrs.iter().position(|&h| h == a))
                    .map(PortId::new);
                let native = NativeAddr::from_bytes(first.hop_native()).filter(|n| !n.is_empty());
                (TraceLookup::L2 { egress_hr }, port.zip(native))
            }
            (None, _) => (TraceLookup::Unframed, None),
        };
        Some(TraceRecord {
            generation: armed.generation(),
            time_ns: now_ns,
            in_port,
            len: u32::try_from(d.len()).unwrap_or(u32::MAX),
            src,
            dst,
            lookup,
            next_hop,
            ei_before: lay.map(|l| Packet::with_layout_unchecked(d, l).ei()),
            ei_after: None,
            egress: None,
            verdict: TraceVerdict::Dropped {
                reason: DropReason::Truncated,
            },
        })
    }

    /// Holds the finished record of a packet of the burst in progress
    /// until the burst is transmitted (records go into the ring in the
    /// order their packets arrived).
    #[cold]
    #[inline(never)]
    pub(crate) fn record(&mut self, record: TraceRecord) {
        self.hold(record, NOT_STAGED, 0);
    }

    /// Holds the record of a forwarded packet staged on `port` at `at`
    /// until the burst is transmitted.
    #[cold]
    #[inline(never)]
    pub(crate) fn stage(&mut self, record: TraceRecord, port: usize, at: usize) {
        self.hold(record, port as u8, at as u8);
    }

    fn hold(&mut self, record: TraceRecord, port: u8, at: u8) {
        if let Err(e) = self.pending.try_push(Pending { record, port, at }) {
            // More than a burst: never, but the record is not lost for it.
            self.push(e.element().record);
        }
    }

    /// Port `port` transmitted the first `sent` packets staged on it: the
    /// others were dropped (`tx-full`).
    #[cold]
    #[inline(never)]
    pub(crate) fn sent(&mut self, port: usize, sent: usize) {
        for p in self.pending.iter_mut() {
            if usize::from(p.port) == port && usize::from(p.at) >= sent {
                p.record = p
                    .record
                    .dropped(DropReason::TxFull, Some(PortId::new(port)));
            }
        }
    }

    /// The burst is transmitted: its records go into the ring.
    #[cold]
    #[inline(never)]
    pub(crate) fn flush(&mut self) {
        for p in self.pending.drain(..) {
            self.ring.push(p.record);
        }
    }

    /// Puts a record into the ring, or counts it lost.
    fn push(&self, r: TraceRecord) {
        self.ring.push(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_armed_word_holds_the_filter() {
        for f in [
            TraceFilter::default(),
            TraceFilter {
                port: Some(PortId(15)),
                dst: Some(Address(0xFFFF)),
                kind: Some(TraceKind::L2),
            },
            TraceFilter {
                port: Some(PortId(0)),
                dst: Some(Address(0x0040)),
                kind: Some(TraceKind::L3),
            },
        ] {
            let a = Armed::new(f, 0xBEEF);
            assert!(a.on());
            assert_eq!(a.filter(), f);
            assert_eq!(a.generation(), 0xBEEF);
        }
        let a = Armed::new(
            TraceFilter {
                port: Some(PortId(2)),
                ..TraceFilter::default()
            },
            1,
        );
        assert!(a.admits_port(PortId(2)) && !a.admits_port(PortId(1)));
        assert!(Armed::new(TraceFilter::default(), 1).admits_port(PortId(7)));
        assert!(!Armed::OFF.on());
    }

    #[test]
    fn the_count_is_shared_and_the_last_claim_disarms() {
        let (ctl, taps) = trace_rings(2, 4);
        assert!(!taps[0].armed().on());
        ctl.arm(TraceFilter::default(), 3);
        let a = taps[0].armed();
        assert!(a.on() && taps[1].armed() == a);
        assert!(taps[0].claim(a));
        assert!(taps[1].claim(a));
        assert_eq!(ctl.remaining(), 1);
        assert!(taps[0].claim(a));
        assert!(!taps[1].armed().on(), "the last claim disarms");
        assert!(!taps[1].claim(a));
        // A worker's stale word takes nothing from the next trace.
        ctl.arm(TraceFilter::default(), 5);
        assert!(!taps[0].claim(a));
        assert_eq!(ctl.remaining(), 5);
        ctl.disarm();
        assert!(!taps[0].armed().on());
        assert_eq!(ctl.remaining(), 0);
    }

    #[test]
    fn a_full_ring_counts_the_lost_record_and_old_records_are_discarded() {
        let (ctl, taps) = trace_rings(1, 2);
        ctl.arm(TraceFilter::default(), 10);
        let a = taps[0].armed();
        let d = [0u8; 4];
        let fib = FibSet::new(1, &[Address(0x0110)]);
        let rec = |t: &TraceTap| {
            t.begin(a, &fib, &[Address(0x0110)], PortId(0), 7, &d)
                .unwrap()
                .dropped(DropReason::Truncated, None)
        };
        for _ in 0..3 {
            taps[0].push(rec(&taps[0]));
        }
        assert_eq!(ctl.lost(), 1);
        let (w, r) = ctl.next().unwrap();
        assert_eq!(
            (w, r.lookup, r.src, r.len),
            (0, TraceLookup::Unframed, None, 4)
        );
        // A record of the trace before is not the new trace's.
        ctl.arm(TraceFilter::default(), 10);
        assert!(ctl.next().is_none());
    }
}
