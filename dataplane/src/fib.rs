//! Forwarding tables (docs/architecture.md "Threads and data flow").
//!
//! A [`FibSet`] holds one FIB per ingress HR (= per port): 65,536 16-bit
//! indices, one per destination address, into a next-hop table shared by
//! the set. Index 0 means "no route", index 1 "this box" (punt). The set is
//! built by the control plane and published whole ([`FibPublisher`]);
//! a worker adopts a new set once per pass, before the pass's first burst,
//! without locks ([`FibReader`]; docs/dataplane.md "FIB publication").
//! Old sets are freed by the control thread once every worker has moved on
//! (a grace period), never on a worker.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arc_swap::ArcSwap;
use rrp::{Address, NativeAddr, PerPort, PortId};

use crate::buddies::Buddies;
use crate::mcast::McastFib;
use crate::partitions::PartitionGuard;

/// FIB index: no route.
pub const NH_NONE: u16 = 0;
/// FIB index: the destination is this box (punt).
pub const NH_LOCAL: u16 = 1;
/// First index of a real next hop.
pub const NH_FIRST: u16 = 2;

/// Where a packet goes next. 32-byte aligned: the table of next hops is
/// indexed with a shift, and no next hop straddles a cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(align(32))]
pub struct NextHop {
    /// Egress port (= egress HR).
    pub port: PortId,
    /// NativeAddr address on the egress SAN: the next HR or the destination node.
    pub native: NativeAddr,
    /// MTU of the egress SAN in bytes (0 = unlimited): the largest packet as
    /// transmitted (L2RHs + header + data + trailer).
    pub mtu: u32,
    /// Forward, and tell the control plane (a redirect notice): a node on
    /// the ingress SAN has a better first HR for this destination than this
    /// HR (docs/spec-notes.md 52). Set per ingress FIB by the control plane.
    pub redirect: bool,
}

/// One FIB: a next-hop index per destination address.
pub type Table = Box<[u16; 65536]>;

fn empty_table() -> Table {
    vec![NH_NONE; 65536]
        .into_boxed_slice()
        .try_into()
        .expect("65536 entries")
}

/// A set of FIBs, one per ingress port, and their next-hop table.
#[derive(Debug, Clone)]
pub struct FibSet {
    tables: PerPort<Table>,
    nexthops: Vec<NextHop>,
    /// The MTU of each port's SAN (0: unlimited), for packets sent by
    /// source route; empty until the control plane sets them
    /// ([`FibSet::set_port_mtus`]), and the engine's configured MTUs apply.
    port_mtus: PerPort<u32>,
    /// The multicast table (docs/multicast.md), shared by the sets that
    /// patch one another.
    mcast: Arc<McastFib>,
    /// The buddies of each HR, for the punt classes (docs/dataplane.md
    /// "Punt classes"), shared like the multicast table.
    buddies: Arc<Buddies>,
    /// Each port's SAN's partitions (docs/partitions.md "At the routers"),
    /// shared like the multicast table.
    partitions: Arc<PartitionGuard>,
    /// Publication number (set by the publisher).
    pub version: u64,
}

impl FibSet {
    /// A set of `ports` FIBs with no routes, where `local` addresses (this
    /// box's HRs; Hey-You and broadcast are always added) are punted.
    pub fn new(ports: usize, local: &[Address]) -> FibSet {
        let mut tables: PerPort<Table> = (0..ports).map(|_| empty_table()).collect();
        for t in &mut tables {
            for a in local
                .iter()
                .copied()
                .chain([Address::HEY_YOU, Address::BROADCAST])
            {
                t[a.0 as usize] = NH_LOCAL;
            }
        }
        let filler = NextHop {
            port: PortId(u16::MAX),
            native: NativeAddr::NONE,
            mtu: 0,
            redirect: false,
        };
        FibSet {
            tables,
            nexthops: vec![filler, filler],
            port_mtus: PerPort::default(),
            mcast: Arc::default(),
            buddies: Arc::default(),
            partitions: Arc::default(),
            version: 0,
        }
    }

    /// Sets the MTU of each port's SAN (0: unlimited), in port order: what
    /// a packet sent by source route out of that port may measure. The
    /// control plane sets them from its configuration on every publication,
    /// so that an MTU changed at run time (by management) applies to L2
    /// forwarding too; L3 next hops carry their own.
    pub fn set_port_mtus(&mut self, mtus: impl IntoIterator<Item = u32>) {
        self.port_mtus = PerPort::new(mtus.into_iter().collect());
    }

    /// Sets the multicast table (the control plane's, flattened).
    pub fn set_mcast(&mut self, m: Arc<McastFib>) {
        self.mcast = m;
    }

    /// The multicast table.
    #[inline(always)]
    pub fn mcast(&self) -> &McastFib {
        &self.mcast
    }

    /// The multicast table, shared (to carry it into a set built anew).
    pub fn mcast_arc(&self) -> Arc<McastFib> {
        self.mcast.clone()
    }

    /// Sets the buddies of each HR (the control plane's, from its LRTs).
    pub fn set_buddies(&mut self, b: Arc<Buddies>) {
        self.buddies = b;
    }

    /// The buddies of each HR.
    #[inline]
    pub fn buddies(&self) -> &Buddies {
        &self.buddies
    }

    /// The buddies, shared (to carry them into a set built anew).
    pub fn buddies_arc(&self) -> Arc<Buddies> {
        self.buddies.clone()
    }

    /// Sets each port's SAN's partitions (the control plane's, from the
    /// tables the SANs' masters gave).
    pub fn set_partitions(&mut self, g: Arc<PartitionGuard>) {
        self.partitions = g;
    }

    /// Each port's SAN's partitions.
    #[inline(always)]
    pub fn partitions(&self) -> &PartitionGuard {
        &self.partitions
    }

    /// The partitions, shared (to carry them into a set built anew).
    pub fn partitions_arc(&self) -> Arc<PartitionGuard> {
        self.partitions.clone()
    }

    /// The MTU of `port`'s SAN, when the control plane has set them.
    #[inline]
    pub fn port_mtu(&self, port: PortId) -> Option<u32> {
        self.port_mtus.get(port).copied()
    }

    /// The MTUs set by [`FibSet::set_port_mtus`] (empty before).
    pub fn port_mtus(&self) -> &[u32] {
        &self.port_mtus
    }

    /// Number of ingress FIBs.
    pub fn ports(&self) -> usize {
        self.tables.len()
    }

    /// Adds a next hop (or finds an equal one) and returns its index.
    pub fn add_nexthop(&mut self, nh: NextHop) -> u16 {
        if let Some(i) = self.nexthops[NH_FIRST as usize..]
            .iter()
            .position(|x| *x == nh)
        {
            return i as u16 + NH_FIRST;
        }
        assert!(
            self.nexthops.len() < u16::MAX as usize,
            "next-hop table full"
        );
        self.nexthops.push(nh);
        (self.nexthops.len() - 1) as u16
    }

    /// Routes `dst` arriving on `in_port` to next hop `nh` (an index from
    /// [`FibSet::add_nexthop`], or [`NH_NONE`] / [`NH_LOCAL`]).
    pub fn set(&mut self, in_port: PortId, dst: Address, nh: u16) {
        assert!((nh as usize) < self.nexthops.len(), "unknown next hop");
        self.tables[in_port][dst.0 as usize] = nh;
    }

    /// Sets the row of `dst` on `in_port` from a route-table entry (None: no
    /// route). An entry whose next hop is on a port this set does not have
    /// would index past the worker's ports: it is never published.
    pub fn apply(&mut self, in_port: PortId, dst: Address, e: Option<&rrp::router::FibEntry>) {
        use rrp::router::Next;
        let idx = match e.map(|e| (e, &e.next)) {
            // The box's own addresses are punted whatever the tables say
            // (as in a set built whole).
            None if self.lookup(in_port, dst.0) == NH_LOCAL => return,
            None => NH_NONE,
            Some((_, Next::Local)) => NH_LOCAL,
            Some((_, Next::Forward { port, .. })) if port.index() >= self.ports() => NH_NONE,
            Some((e, Next::Forward { port, native })) => self.add_nexthop(NextHop {
                port: *port,
                native: *native,
                mtu: e.mtu,
                redirect: e.redirect.is_some(),
            }),
        };
        self.set(in_port, dst, idx);
    }

    /// Sets the rows (ingress port, destination) in `changes` again from
    /// `tables`, in place, and takes the tables' version.
    pub fn patch(&mut self, tables: &rrp::router::RouteTables, changes: &[(PortId, Address)]) {
        for (p, dst) in changes {
            if p.index() < self.ports() {
                self.apply(*p, *dst, tables.lookup(*p, *dst).as_ref());
            }
        }
        self.version = tables.version;
    }

    /// Number of next hops in the table (used or not).
    pub fn nexthops_len(&self) -> usize {
        self.nexthops.len() - NH_FIRST as usize
    }

    /// Routes `dst` to `nh` from every ingress port.
    pub fn set_all(&mut self, dst: Address, nh: NextHop) {
        let i = self.add_nexthop(nh);
        for p in self.tables.ids() {
            self.set(p, dst, i);
        }
    }

    /// The index for `dst` arriving on `in_port` (NH_NONE for an unknown port).
    #[inline(always)]
    pub fn lookup(&self, in_port: PortId, dst: u16) -> u16 {
        match self.tables.get(in_port) {
            Some(t) => t[dst as usize],
            None => NH_NONE,
        }
    }

    /// The FIB of ingress port `in_port` (one with no routes for a port the
    /// set does not have): what a burst from that port is looked up in.
    #[inline(always)]
    pub fn port(&self, in_port: PortId) -> PortFib<'_> {
        PortFib {
            table: self.tables.get(in_port).map_or(&NO_ROUTES, |t| t),
            nexthops: &self.nexthops,
            port_mtus: &self.port_mtus,
            set: self,
        }
    }

    /// The next hop of index `i` (>= NH_FIRST).
    #[inline(always)]
    pub fn nexthop(&self, i: u16) -> &NextHop {
        &self.nexthops[i as usize]
    }

    /// The resolved next hop for `dst` on `in_port`, if it is a real one.
    pub fn route(&self, in_port: PortId, dst: Address) -> Option<&NextHop> {
        let i = self.lookup(in_port, dst.0);
        (i >= NH_FIRST).then(|| self.nexthop(i))
    }

    /// Number of next hops, the two reserved ones included.
    pub fn nexthop_count(&self) -> usize {
        self.nexthops.len()
    }
}

/// The table of a port the set does not have: every destination unrouted.
static NO_ROUTES: [u16; 65536] = [NH_NONE; 65536];

/// One ingress port's view of a [`FibSet`], taken once per burst: the
/// lookup is one load, with no bounds check (a u16 indexes 65536 entries).
#[derive(Debug, Clone, Copy)]
pub struct PortFib<'f> {
    table: &'f [u16; 65536],
    nexthops: &'f [NextHop],
    port_mtus: &'f [u32],
    /// The set, for what a packet seldom needs (the multicast table, the
    /// buddies, the partitions): one pointer, so that the view stays four
    /// words in the forwarding loop's registers.
    set: &'f FibSet,
}

impl<'f> PortFib<'f> {
    /// The next-hop index for `dst` ([`NH_NONE`], [`NH_LOCAL`] or a real one).
    #[inline(always)]
    pub fn lookup(&self, dst: u16) -> u16 {
        self.table[dst as usize]
    }

    /// The next hop of index `i` (>= NH_FIRST).
    #[inline(always)]
    pub fn nexthop(&self, i: u16) -> &'f NextHop {
        &self.nexthops[i as usize]
    }

    /// The MTU of egress `port`'s SAN, when the control plane has set them
    /// ([`FibSet::set_port_mtus`]).
    #[inline(always)]
    pub fn port_mtu(&self, port: PortId) -> Option<u32> {
        self.port_mtus.get(port.index()).copied()
    }

    /// The multicast table.
    #[inline(always)]
    pub fn mcast(&self) -> &'f McastFib {
        &self.set.mcast
    }

    /// The buddies of each HR.
    #[inline(always)]
    pub fn buddies(&self) -> &'f Buddies {
        &self.set.buddies
    }

    /// Each port's SAN's partitions.
    #[inline(always)]
    pub fn partitions(&self) -> &'f PartitionGuard {
        &self.set.partitions
    }
}

#[derive(Debug)]
struct Shared {
    current: ArcSwap<FibSet>,
    version: AtomicU64,
    adopted: Vec<AtomicU64>,
}

/// The control thread's side: publishes new FIB sets to the workers.
#[derive(Debug)]
pub struct FibPublisher {
    shared: Arc<Shared>,
    retired: Vec<Arc<FibSet>>,
}

/// A worker's side: the FIB set in use, replaced at the start of a pass.
#[derive(Debug)]
pub struct FibReader {
    shared: Arc<Shared>,
    worker: usize,
    current: Arc<FibSet>,
    version: u64,
}

/// A publisher for `workers` readers, starting with `initial`.
pub fn fib_channel(initial: FibSet, workers: usize) -> (FibPublisher, Vec<FibReader>) {
    let initial = Arc::new(initial);
    let shared = Arc::new(Shared {
        current: ArcSwap::new(initial.clone()),
        version: AtomicU64::new(initial.version),
        adopted: (0..workers)
            .map(|_| AtomicU64::new(initial.version))
            .collect(),
    });
    let readers = (0..workers)
        .map(|w| FibReader {
            shared: shared.clone(),
            worker: w,
            current: initial.clone(),
            version: initial.version,
        })
        .collect();
    (
        FibPublisher {
            shared,
            retired: Vec::new(),
        },
        readers,
    )
}

impl FibPublisher {
    /// Publishes `fib` as the next version; returns that version. Frees the
    /// sets that every worker has moved past.
    pub fn publish(&mut self, mut fib: FibSet) -> u64 {
        let v = self.shared.version.load(Ordering::Relaxed) + 1;
        fib.version = v;
        let old = self.shared.current.swap(Arc::new(fib));
        self.shared.version.store(v, Ordering::Release);
        self.retired.push(old);
        self.reclaim();
        v
    }

    /// Frees retired sets that no worker can still be using.
    pub fn reclaim(&mut self) {
        let min = self
            .shared
            .adopted
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .min()
            .unwrap_or(u64::MAX);
        self.retired.retain(|f| f.version >= min);
    }

    /// The set published last.
    pub fn current(&self) -> Arc<FibSet> {
        self.shared.current.load_full()
    }

    /// The version each worker has adopted.
    pub fn adopted(&self) -> Vec<u64> {
        self.shared
            .adopted
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .collect()
    }

    /// Sets kept until workers move past them.
    pub fn retired(&self) -> usize {
        self.retired.len()
    }
}

impl FibReader {
    /// Adopts the newest published set, if there is one; returns whether it
    /// changed. One acquire load when nothing changed.
    #[inline]
    pub fn refresh(&mut self) -> bool {
        let v = self.shared.version.load(Ordering::Acquire);
        if v == self.version {
            return false;
        }
        let new = self.shared.current.load_full();
        self.version = new.version;
        // The set replaced here stays alive in the publisher's retired list
        // until `adopted` shows that this worker moved on: the last
        // reference is never dropped on a worker.
        self.current = new;
        self.shared.adopted[self.worker].store(self.version, Ordering::Release);
        true
    }

    /// The set in use.
    #[inline(always)]
    pub fn fib(&self) -> &FibSet {
        &self.current
    }

    /// The version in use.
    pub fn version(&self) -> u64 {
        self.version
    }
}

/// Builds the dataplane's FIB set from the control plane's route tables:
/// `hrs` are the box's HR addresses in port order (punted), every
/// `Forward` entry becomes a next hop with the egress SAN's MTU.
pub fn from_route_tables(tables: &rrp::router::RouteTables, hrs: &[Address]) -> FibSet {
    let ports = hrs.len().max(tables.ports());
    let mut f = FibSet::new(ports, hrs);
    for p in (0..tables.ports()).map(PortId::new) {
        for e in tables.entries(p) {
            f.apply(p, e.dst, Some(&e));
        }
    }
    f.version = tables.version;
    f
}

/// A copy of `base` with the rows (ingress port, destination) in `changes`
/// set again from `tables`: what the control plane publishes when the
/// engine tells which rows changed ([`rrp::router::Router::take_fib_changes`]),
/// instead of building the set whole. Next hops no row uses any more stay
/// in the copy's next-hop table: there are at most as many as the
/// neighbours' native addresses times the ports.
pub fn patched(
    base: &FibSet,
    tables: &rrp::router::RouteTables,
    changes: &[(PortId, Address)],
) -> FibSet {
    let mut f = base.clone();
    f.patch(tables, changes);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nh(port: PortId) -> NextHop {
        NextHop {
            port,
            native: NativeAddr::mac([2, 0, 0, 0, 0, port.0 as u8]),
            mtu: 1500,
            redirect: false,
        }
    }

    #[test]
    fn local_and_routes() {
        let mut f = FibSet::new(2, &[Address(0x100), Address(0x200)]);
        assert_eq!(f.lookup(PortId(0), 0x100), NH_LOCAL);
        assert_eq!(f.lookup(PortId(1), 0xFFFE), NH_LOCAL);
        assert_eq!(f.lookup(PortId(1), 0xFFFF), NH_LOCAL);
        assert_eq!(f.lookup(PortId(0), 0x300), NH_NONE);
        f.set_all(Address(0x300), nh(PortId(1)));
        let i = f.lookup(PortId(0), 0x300);
        assert_eq!(*f.nexthop(i), nh(PortId(1)));
        assert_eq!(f.add_nexthop(nh(PortId(1))), i);
        assert_eq!(f.lookup(PortId(7), 0x300), NH_NONE);
        assert_eq!(f.route(PortId(1), Address(0x300)), Some(&nh(PortId(1))));
    }

    #[test]
    fn route_tables_never_name_a_port_the_box_lacks() {
        use rrp::router::{FibEntry, Next, RouteTables};
        let mut t = RouteTables::new(1);
        for (dst, port, n) in [(0x300, 5, 1), (0x301, 0, 2)] {
            t.set(
                PortId(0),
                &FibEntry {
                    dst: Address(dst),
                    next: Next::Forward {
                        port: PortId(port),
                        native: rrp::NativeAddr::mac([2, 0, 0, 0, 0, n]),
                    },
                    q: 1,
                    mtu: 1500,
                    redirect: None,
                },
            );
        }
        t.version = 3;
        let f = from_route_tables(&t, &[Address(0x100)]);
        assert_eq!(f.lookup(PortId(0), 0x300), NH_NONE);
        assert_eq!(f.route(PortId(0), Address(0x301)).unwrap().port, PortId(0));
    }

    #[test]
    fn a_patched_set_equals_one_built_whole() {
        use rrp::router::{FibEntry, Next, RouteTables};
        let e = |dst: u16, port: u16, n: u8, redirect: bool| FibEntry {
            dst: Address(dst),
            next: Next::Forward {
                port: PortId(port),
                native: rrp::NativeAddr::mac([2, 0, 0, 0, 0, n]),
            },
            q: 1,
            mtu: 1500,
            redirect: redirect.then_some(Address(0x0150)),
        };
        let hrs = [Address(0x100), Address(0x200)];
        let mut t = RouteTables::new(2);
        t.set(PortId(0), &e(0x300, 1, 1, false));
        t.set(PortId(1), &e(0x301, 0, 2, true));
        let base = from_route_tables(&t, &hrs);
        // Change one row, add one, remove one; an HR address stays punted.
        t.set(PortId(0), &e(0x300, 1, 3, true));
        t.set(PortId(1), &e(0x302, 0, 2, false));
        t.remove(PortId(1), Address(0x301));
        let changes = [
            (PortId(0), Address(0x300)),
            (PortId(1), Address(0x302)),
            (PortId(1), Address(0x301)),
            (PortId(0), Address(0x200)),
        ];
        let p = patched(&base, &t, &changes);
        let whole = from_route_tables(&t, &hrs);
        for port in [PortId(0), PortId(1)] {
            for dst in [0x100, 0x200, 0x300, 0x301, 0x302, 0xFFFF] {
                assert_eq!(
                    p.route(port, Address(dst)),
                    whole.route(port, Address(dst)),
                    "port {port:?} dst {dst:#x}"
                );
                assert_eq!(
                    p.lookup(port, dst) == NH_LOCAL,
                    whole.lookup(port, dst) == NH_LOCAL
                );
            }
        }
        assert!(p.route(PortId(0), Address(0x300)).unwrap().redirect);
    }

    #[test]
    fn publish_adopt_reclaim() {
        let (mut p, mut r) = fib_channel(FibSet::new(1, &[]), 2);
        assert!(!r[0].refresh());
        let mut f = FibSet::new(1, &[]);
        f.set_all(Address(0x300), nh(PortId(0)));
        assert_eq!(p.publish(f), 1);
        assert_eq!(p.retired(), 1, "workers still use version 0");
        assert!(r[0].refresh());
        assert_eq!(r[0].fib().version, 1);
        assert!(r[0].fib().route(PortId(0), Address(0x300)).is_some());
        p.reclaim();
        assert_eq!(p.retired(), 1, "worker 1 still on version 0");
        assert!(r[1].refresh());
        p.reclaim();
        assert_eq!(p.retired(), 0);
        assert_eq!(p.adopted(), vec![1, 1]);
    }
}
