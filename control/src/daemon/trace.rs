//! The daemon's packet traces (`mwctl trace-packets`, docs/dataplane.md
//! "Tracing packets"): the admin protocol's `trace_packets` served from the
//! workers' trace rings (`dataplane::trace`), each record turned into the
//! protocol's [`TracedPacket`] (docs/admin-protocol.md "Tracing packets").

use std::sync::MutexGuard;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use admin::dispatch::{TraceNext, TraceSource};
use admin::proto::{
    TraceKind as Only, TracedEntry, TracedHop, TracedLookup, TracedPacket, TracedVerdict,
};
use dataplane::{
    LookupEntry, TraceControl, TraceFilter, TraceKind, TraceLookup, TraceRecord, TraceVerdict,
};
use rrp::{Address, LinkKind, PortId};

/// How long the rings must stay empty, once the dataplane has traced every
/// packet asked for, before the trace ends without the records it lost: a
/// worker pushes its records when its burst is transmitted, microseconds
/// after it took their packets.
const SETTLE: Duration = Duration::from_millis(50);

/// The dataplane's filter for a request's port, destination and kind.
pub(crate) fn filter(
    port: Option<PortId>,
    dst: Option<Address>,
    only: Option<Only>,
) -> TraceFilter {
    TraceFilter {
        port,
        dst,
        kind: only.map(|k| match k {
            Only::L2 => TraceKind::L2,
            Only::L3 => TraceKind::L3,
        }),
    }
}

/// A trace in the workers' rings; disarmed and drained when dropped.
pub(crate) struct RingTrace<'a> {
    control: &'a TraceControl,
    /// The HR of each port, and the kind of its SAN (how native addresses
    /// are written).
    hrs: Vec<Address>,
    kinds: &'a [LinkKind],
    lost0: u64,
    /// Since when the rings have been empty with nothing left to trace.
    settling: Option<Instant>,
    _one: MutexGuard<'a, ()>,
}

impl<'a> RingTrace<'a> {
    /// Arms a trace of `count` packets that match `f` in every worker;
    /// `one` is the daemon's guard that one trace runs at a time.
    pub(crate) fn start(
        control: &'a TraceControl,
        f: TraceFilter,
        count: u32,
        hrs: Vec<Address>,
        kinds: &'a [LinkKind],
        one: MutexGuard<'a, ()>,
    ) -> RingTrace<'a> {
        let lost0 = control.lost();
        control.arm(f, count);
        RingTrace {
            control,
            hrs,
            kinds,
            lost0,
            settling: None,
            _one: one,
        }
    }

    fn hr(&self, p: PortId) -> Address {
        self.hrs.get(p.index()).copied().unwrap_or(Address(0))
    }

    /// The protocol's form of worker `w`'s record `r`, taken at `ts_ns`.
    fn packet(&self, w: usize, r: &TraceRecord, ts_ns: u64) -> TracedPacket {
        let lookup = match r.lookup {
            TraceLookup::Unframed => TracedLookup::Unframed,
            TraceLookup::L3 { fib_version, entry } => TracedLookup::L3 {
                fib_version,
                entry: match entry {
                    LookupEntry::NoRoute => TracedEntry::NoRoute,
                    LookupEntry::Local => TracedEntry::Local,
                    LookupEntry::NextHop(i) => TracedEntry::NextHop(i),
                },
            },
            TraceLookup::Group { fib_version } => TracedLookup::Group { fib_version },
            TraceLookup::L2 { egress_hr } => TracedLookup::L2 { egress_hr },
        };
        let next_hop = r.next_hop.map(|(port, native)| TracedHop {
            port,
            hr: self.hr(port),
            native: match self.kinds.get(port.index()) {
                Some(&k) => native.on(k).to_string(),
                None => native.to_string(),
            },
        });
        let verdict = match r.verdict {
            TraceVerdict::Forwarded { redirect } => TracedVerdict::Forwarded { redirect },
            TraceVerdict::Replicated { ports } => TracedVerdict::Replicated {
                ports: (0..32u16)
                    .filter(|b| ports & (1 << b) != 0)
                    .map(PortId)
                    .collect(),
            },
            TraceVerdict::Punted { class } => TracedVerdict::Punted {
                class: class.name().into(),
            },
            TraceVerdict::Dropped { reason } => TracedVerdict::Dropped {
                reason: reason.name().into(),
            },
        };
        TracedPacket {
            ts_ns,
            worker: w,
            port: r.in_port,
            hr: self.hr(r.in_port),
            len: r.len,
            src: r.src,
            dst: r.dst,
            lookup,
            next_hop,
            ei_before: r.ei_before,
            ei_after: r.ei_after,
            egress: r.egress,
            verdict,
        }
    }
}

impl TraceSource for RingTrace<'_> {
    fn next(&mut self) -> TraceNext {
        if let Some((w, r)) = self.control.next() {
            self.settling = None;
            let ts_ns = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            return TraceNext::Packet(Box::new(self.packet(w, &r, ts_ns)));
        }
        if self.control.remaining() > 0 {
            return TraceNext::Idle;
        }
        // Every packet was taken: what is not in the rings once they
        // settle was lost.
        let since = *self.settling.get_or_insert_with(Instant::now);
        if since.elapsed() < SETTLE {
            TraceNext::Idle
        } else {
            TraceNext::End
        }
    }

    fn lost(&self) -> u64 {
        self.control.lost() - self.lost0
    }
}

impl Drop for RingTrace<'_> {
    fn drop(&mut self) {
        self.control.disarm();
        self.control.drain();
    }
}
