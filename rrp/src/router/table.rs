//! The route tables the engine publishes: for every HR of the box (ingress
//! port) and destination address, where a packet goes, the route's Q, and
//! the destination's best first HR as a node on that HR's SAN sees it
//! (docs/rrp.md "Routes and FIBs").
//!
//! A box routes a whole MessageWay (thousands of destinations per HR), and
//! the engine patches rows one by one as RTs change, so the tables are
//! compact and indexed by address: per port, a two-level table of 256
//! chunks of 256 rows (6 bytes each: next-hop index, Q, first HR), a chunk
//! allocated when a destination in it is first routed; next hops (egress
//! port, native address, MTU) are held once per box, counted by the rows
//! that use them. [`FibEntry`] is the readable form of a row.

use crate::address::Address;
use crate::fxhash::FxHashMap;
use crate::native::NativeAddr;
use crate::port::{PerPort, PortId};

/// Where a FIB entry sends a packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Next {
    /// This box.
    Local,
    /// Out of `port` to `native`.
    Forward {
        /// Egress port.
        port: PortId,
        /// Native next hop on the egress SAN.
        native: NativeAddr,
    },
}

/// One FIB entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FibEntry {
    /// Destination.
    pub dst: Address,
    /// Where to send it.
    pub next: Next,
    /// Total Q of the route.
    pub q: u16,
    /// MTU of the egress SAN in bytes (0 = unlimited).
    pub mtu: u32,
    /// The best first HR for this destination as a node on this HR's SAN
    /// sees it, when that is another member of the SAN (a buddy, or the
    /// destination itself): RRP#6 answers with it and a packet a node sends
    /// here draws an RRP#3 naming it (docs/spec-notes.md 52). `None`: this HR.
    pub redirect: Option<Address>,
}

/// Row index: no route.
const NH_NONE: u16 = 0;
/// Row index: this box.
const NH_LOCAL: u16 = 1;
/// First index of a real next hop.
const NH_FIRST: u16 = 2;

/// A next hop: egress port, native address, MTU of the egress SAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Hop {
    port: PortId,
    native: NativeAddr,
    mtu: u32,
}

/// One destination's row: next-hop index, Q, best first HR (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Row {
    nh: u16,
    q: u16,
    redirect: u16,
}

const CHUNK: usize = 256;

/// One port's rows, indexed by destination address.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct PortTable {
    chunks: Vec<Option<Box<[Row; CHUNK]>>>,
    len: usize,
}

impl PortTable {
    fn get(&self, dst: Address) -> Row {
        let (c, i) = (dst.0 as usize / CHUNK, dst.0 as usize % CHUNK);
        self.chunks
            .get(c)
            .and_then(|c| c.as_ref())
            .map_or(Row::default(), |c| c[i])
    }

    /// Sets a row and returns the one it replaced.
    fn set(&mut self, dst: Address, row: Row) -> Row {
        let (c, i) = (dst.0 as usize / CHUNK, dst.0 as usize % CHUNK);
        if self.chunks.len() <= c {
            if row.nh == NH_NONE {
                return Row::default();
            }
            self.chunks.resize(c + 1, None);
        }
        let chunk = match &mut self.chunks[c] {
            Some(ch) => ch,
            None if row.nh == NH_NONE => return Row::default(),
            slot => slot.insert(Box::new([Row::default(); CHUNK])),
        };
        let old = std::mem::replace(&mut chunk[i], row);
        match (old.nh == NH_NONE, row.nh == NH_NONE) {
            (true, false) => self.len += 1,
            (false, true) => self.len -= 1,
            _ => {}
        }
        old
    }

    /// The routed destinations and their rows, in address order.
    fn iter(&self) -> impl Iterator<Item = (Address, Row)> + '_ {
        self.chunks.iter().enumerate().flat_map(|(c, ch)| {
            ch.iter().flat_map(move |ch| {
                ch.iter()
                    .enumerate()
                    .filter(|(_, r)| r.nh != NH_NONE)
                    .map(move |(i, r)| (Address((c * CHUNK + i) as u16), *r))
            })
        })
    }
}

/// The FIBs of every HR of the box, one per ingress port.
#[derive(Debug, Clone, Default)]
pub struct RouteTables {
    tables: PerPort<PortTable>,
    hops: Vec<Hop>,
    refs: Vec<u32>,
    free: Vec<u16>,
    index: FxHashMap<Hop, u16>,
    /// Version, incremented on every change.
    pub version: u64,
}

impl PartialEq for RouteTables {
    /// Equal when every port routes every destination alike (next hops
    /// compared by value, not by index).
    fn eq(&self, o: &RouteTables) -> bool {
        self.version == o.version
            && self.ports() == o.ports()
            && (0..self.ports()).all(|p| {
                let p = PortId::new(p);
                self.entries(p).eq(o.entries(p))
            })
    }
}

impl Eq for RouteTables {}

impl RouteTables {
    /// Tables for `ports` ingress ports, with no routes.
    pub fn new(ports: usize) -> RouteTables {
        RouteTables {
            tables: (0..ports).map(|_| PortTable::default()).collect(),
            ..RouteTables::default()
        }
    }

    /// Number of ingress ports.
    pub fn ports(&self) -> usize {
        self.tables.len()
    }

    /// Destinations routed from ingress `port`.
    pub fn len(&self, port: PortId) -> usize {
        self.tables.get(port).map_or(0, |t| t.len)
    }

    /// Whether ingress `port` routes no destination.
    pub fn is_empty(&self, port: PortId) -> bool {
        self.len(port) == 0
    }

    /// The entry for `dst` on ingress `port`.
    pub fn lookup(&self, port: PortId, dst: Address) -> Option<FibEntry> {
        let row = self.tables.get(port)?.get(dst);
        self.entry(dst, row)
    }

    /// The entries of ingress `port`, in address order.
    pub fn entries(&self, port: PortId) -> impl Iterator<Item = FibEntry> + '_ {
        self.tables
            .get(port)
            .into_iter()
            .flat_map(|t| t.iter())
            .filter_map(|(dst, row)| self.entry(dst, row))
    }

    /// Routes `dst` on ingress `port` as `e` says (`e.dst` is the destination).
    pub fn set(&mut self, port: PortId, e: &FibEntry) {
        let nh = match &e.next {
            Next::Local => NH_LOCAL,
            Next::Forward { port, native } => self.hop(Hop {
                port: *port,
                native: *native,
                mtu: e.mtu,
            }),
        };
        let row = Row {
            nh,
            q: e.q,
            redirect: e.redirect.map_or(0, |a| a.0),
        };
        self.set_row(port, e.dst, row);
    }

    /// Stops routing `dst` on ingress `port`.
    pub fn remove(&mut self, port: PortId, dst: Address) {
        self.set_row(port, dst, Row::default());
    }

    /// The row of `dst` on `port`.
    pub(super) fn row(&self, port: PortId, dst: Address) -> Row {
        self.tables.get(port).map_or(Row::default(), |t| t.get(dst))
    }

    /// Sets a row (the next hop's reference counted); returns whether it changed.
    pub(super) fn set_row(&mut self, port: PortId, dst: Address, row: Row) -> bool {
        let Some(t) = self.tables.get_mut(port) else {
            self.unref(row.nh);
            return false;
        };
        let old = t.set(dst, row);
        self.unref(old.nh);
        old != row
    }

    /// A row for `e`, its next hop referenced once more.
    pub(super) fn make_row(&mut self, e: &FibEntry) -> Row {
        Row {
            nh: match &e.next {
                Next::Local => NH_LOCAL,
                Next::Forward { port, native } => self.hop(Hop {
                    port: *port,
                    native: *native,
                    mtu: e.mtu,
                }),
            },
            q: e.q,
            redirect: e.redirect.map_or(0, |a| a.0),
        }
    }

    /// A forwarding row (out of `port` to `native`), its next hop
    /// referenced once more.
    pub(super) fn forward_row(
        &mut self,
        port: PortId,
        native: &NativeAddr,
        mtu: u32,
        q: u16,
        redirect: Option<Address>,
    ) -> Row {
        Row {
            nh: self.hop(Hop {
                port,
                native: *native,
                mtu,
            }),
            q,
            redirect: redirect.map_or(0, |a| a.0),
        }
    }

    /// Drops the reference a row made by [`RouteTables::make_row`] holds,
    /// when the row is not set after all.
    pub(super) fn unref_row(&mut self, row: Row) {
        self.unref(row.nh);
    }

    fn unref(&mut self, nh: u16) {
        if nh < NH_FIRST {
            return;
        }
        let i = (nh - NH_FIRST) as usize;
        self.refs[i] -= 1;
        if self.refs[i] == 0 {
            self.index.remove(&self.hops[i]);
            self.free.push(nh);
        }
    }

    /// The index of next hop `h`, referenced once more.
    fn hop(&mut self, h: Hop) -> u16 {
        if let Some(&nh) = self.index.get(&h) {
            self.refs[(nh - NH_FIRST) as usize] += 1;
            return nh;
        }
        let nh = match self.free.pop() {
            Some(nh) => {
                let i = (nh - NH_FIRST) as usize;
                self.hops[i] = h;
                self.refs[i] = 1;
                nh
            }
            None => {
                assert!(
                    self.hops.len() < (u16::MAX - NH_FIRST) as usize,
                    "next-hop table full"
                );
                self.hops.push(h);
                self.refs.push(1);
                (self.hops.len() - 1) as u16 + NH_FIRST
            }
        };
        self.index.insert(h, nh);
        nh
    }

    fn entry(&self, dst: Address, row: Row) -> Option<FibEntry> {
        let (next, mtu) = match row.nh {
            NH_NONE => return None,
            NH_LOCAL => (Next::Local, 0),
            nh => {
                let h = &self.hops[(nh - NH_FIRST) as usize];
                (
                    Next::Forward {
                        port: h.port,
                        native: h.native,
                    },
                    h.mtu,
                )
            }
        };
        Some(FibEntry {
            dst,
            next,
            q: row.q,
            mtu,
            redirect: (row.redirect != 0).then_some(Address(row.redirect)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fwd(port: u16, n: u8, q: u16) -> FibEntry {
        FibEntry {
            dst: Address(0),
            next: Next::Forward {
                port: PortId(port),
                native: NativeAddr::mac([2, 0, 0, 0, 0, n]),
            },
            q,
            mtu: 1500,
            redirect: None,
        }
    }

    #[test]
    fn rows_set_read_and_removed() {
        let mut t = RouteTables::new(2);
        let e = FibEntry {
            dst: Address(0x1234),
            redirect: Some(Address(0x0099)),
            ..fwd(1, 7, 3)
        };
        t.set(PortId(0), &e);
        assert_eq!(t.lookup(PortId(0), Address(0x1234)), Some(e.clone()));
        assert_eq!(t.lookup(PortId(1), Address(0x1234)), None);
        assert_eq!(t.lookup(PortId(5), Address(0x1234)), None);
        assert_eq!(t.len(PortId(0)), 1);
        let local = FibEntry {
            dst: Address(0xFFFF),
            next: Next::Local,
            q: 0,
            mtu: 0,
            redirect: None,
        };
        t.set(PortId(0), &local);
        let all: Vec<FibEntry> = t.entries(PortId(0)).collect();
        assert_eq!(all, vec![e, local]);
        t.remove(PortId(0), Address(0x1234));
        t.remove(PortId(0), Address(0x1234));
        assert_eq!(t.len(PortId(0)), 1);
        assert!(t.hops.iter().zip(&t.refs).all(|(_, r)| *r == 0));
    }

    #[test]
    fn next_hops_are_shared_counted_and_reused() {
        let mut t = RouteTables::new(2);
        for d in 0x100..0x200u16 {
            let e = FibEntry {
                dst: Address(d),
                ..fwd(1, 1, 2)
            };
            t.set(PortId(0), &e);
            t.set(PortId(1), &e);
        }
        assert_eq!(t.hops.len(), 1);
        assert_eq!(t.refs[0], 512);
        // Replacing every row frees the first next hop, which is reused.
        for d in 0x100..0x200u16 {
            for p in [PortId(0), PortId(1)] {
                t.set(
                    p,
                    &FibEntry {
                        dst: Address(d),
                        ..fwd(0, 2, 2)
                    },
                );
            }
        }
        assert_eq!(t.refs, vec![0, 512]);
        t.set(
            PortId(0),
            &FibEntry {
                dst: Address(0x300),
                ..fwd(0, 3, 2)
            },
        );
        assert_eq!(t.hops.len(), 2, "the freed slot is reused");
    }

    #[test]
    fn equality_compares_routes_not_indices() {
        let mut a = RouteTables::new(1);
        let mut b = RouteTables::new(1);
        let e1 = FibEntry {
            dst: Address(0x100),
            ..fwd(0, 1, 1)
        };
        let e2 = FibEntry {
            dst: Address(0x101),
            ..fwd(0, 2, 1)
        };
        a.set(PortId(0), &e1);
        a.set(PortId(0), &e2);
        b.set(PortId(0), &e2);
        b.set(PortId(0), &e1);
        assert_eq!(a, b);
        b.remove(PortId(0), Address(0x100));
        assert_ne!(a, b);
    }
}
