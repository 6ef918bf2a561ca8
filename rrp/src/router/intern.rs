//! One copy of each node list and of each RT body (docs/rrp.md "Memory").
//!
//! The RTs of one SAN and SN reach a box by several paths with the same
//! node list, and every buddy of a SAN receives the same advertisement: the
//! engine keeps one [`NodeList`] per distinct list and one [`RtBody`] per
//! distinct advertisement, found again when they arrive again. A node list
//! is found by its records' bytes (hashed, then compared whole: a hash
//! collision never merges two lists), so an RRP#9 whose list the box holds
//! is not parsed past its R7. Entries no RT uses any more are dropped as
//! the table grows.
//!
//! A box has its own interner. Engines in one process (the simulator's
//! routers) may share one ([`crate::router::Router::with_interner`]): the
//! copies are immutable, so sharing changes nothing but memory. Engines on
//! several threads share it too: it is divided into [`SHARDS`] tables, each
//! behind its own lock, chosen by the hash (computed before any lock is
//! taken), so that two threads seldom wait for each other.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::rng::mix64;

use super::engine::Router;
use super::rt::{NodeList, RtBody};
use crate::wire::packet::Packet;

/// How many separately locked tables an [`Interner`] is divided into.
pub const SHARDS: usize = 16;

/// Insertions into one table below which it is never swept (1,024 for
/// the whole interner).
const SWEEP_FROM: usize = 1024 / SHARDS;

/// Node lists and RT bodies, each held once.
#[derive(Debug)]
pub struct Interner {
    seed: u64,
    hasher: RandomState,
    shards: [Mutex<Inner>; SHARDS],
}

#[derive(Debug, Default)]
struct Inner {
    lists: HashMap<u64, Vec<Weak<NodeList>>>,
    bodies: HashMap<u64, Vec<Weak<RtBody>>>,
    /// Insertions since the last sweep of dead entries, and the entries
    /// alive after it: a sweep runs when the former exceeds the latter.
    inserted: usize,
    live: usize,
}

/// A quick hash of a byte string (8 bytes at a time), keyed by `seed`.
fn hash_bytes(seed: u64, b: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h = seed ^ (b.len() as u64).wrapping_mul(K);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    mix64(h)
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Arc<Interner> {
        let hasher = RandomState::new();
        let seed = hasher.hash_one(0x6d77_u64);
        Arc::new(Interner {
            seed,
            hasher,
            shards: std::array::from_fn(|_| Mutex::new(Inner::default())),
        })
    }

    /// The table of the entries whose hash is `h`, locked.
    fn lock(&self, h: u64) -> MutexGuard<'_, Inner> {
        self.shards[(h >> 60) as usize % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The node list whose records are `encoded`, if one is held.
    pub(super) fn node_list(&self, encoded: &[u8]) -> Option<Arc<NodeList>> {
        let h = hash_bytes(self.seed, encoded);
        let g = self.lock(h);
        g.lists
            .get(&h)?
            .iter()
            .filter_map(Weak::upgrade)
            .find(|l| l.encoded() == encoded)
    }

    /// The held copy of `list` (by its records), `list` itself when new.
    pub(super) fn add_node_list(&self, list: NodeList) -> Arc<NodeList> {
        let h = hash_bytes(self.seed, list.encoded());
        let mut g = self.lock(h);
        let bucket = g.lists.entry(h).or_default();
        if let Some(l) = bucket
            .iter()
            .filter_map(Weak::upgrade)
            .find(|l| l.encoded() == list.encoded())
        {
            return l;
        }
        let a = Arc::new(list);
        bucket.push(Arc::downgrade(&a));
        g.inserted += 1;
        g.sweep();
        a
    }

    /// The held copy of `body`, `body` itself when new.
    pub(super) fn body(&self, body: RtBody) -> Arc<RtBody> {
        let h = self.hasher.hash_one(&body);
        let mut g = self.lock(h);
        let bucket = g.bodies.entry(h).or_default();
        if let Some(b) = bucket
            .iter()
            .filter_map(Weak::upgrade)
            .find(|b| **b == body)
        {
            return b;
        }
        let a = Arc::new(body);
        bucket.push(Arc::downgrade(&a));
        g.inserted += 1;
        g.sweep();
        a
    }

    /// The held node list whose records end the whole RRP#9 `packet` (an
    /// EEP packet as sent, no L2RH in front), and where its records start
    /// in the packet: what lets a holder of many packets at once (the
    /// simulator's messages in flight) keep each list's records once, not
    /// once per packet.
    pub fn rrp9_node_list(&self, packet: &[u8]) -> Option<(usize, Arc<NodeList>)> {
        let p = Packet::new_checked(packet, 0).ok()?;
        let (_, _, _, start) = Router::rt_head(&p)?;
        let list = self.node_list(&p.data()[start..])?;
        Some((p.layout().data_offset() + start, list))
    }

    /// (node lists, RT bodies) held and in use.
    pub fn census(&self) -> (usize, usize) {
        fn live<T>(m: &HashMap<u64, Vec<Weak<T>>>) -> usize {
            m.values()
                .flatten()
                .filter(|w| w.strong_count() > 0)
                .count()
        }
        self.shards.iter().fold((0, 0), |(l, b), s| {
            let g = s.lock().unwrap_or_else(|e| e.into_inner());
            (l + live(&g.lists), b + live(&g.bodies))
        })
    }
}

impl Inner {
    /// Drops the entries nothing uses any more, once as many have been
    /// inserted since the last sweep as were alive after it.
    fn sweep(&mut self) {
        if self.inserted <= self.live.max(SWEEP_FROM) {
            return;
        }
        fn clean<T>(m: &mut HashMap<u64, Vec<Weak<T>>>) -> usize {
            m.retain(|_, v| {
                v.retain(|w| w.strong_count() > 0);
                !v.is_empty()
            });
            m.values().map(Vec::len).sum()
        }
        self.live = clean(&mut self.lists) + clean(&mut self.bodies);
        self.inserted = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Address;
    use crate::route::Route;
    use crate::router::rt::{NodeEntry, NodesRef};
    use crate::wire::message::NodeInfo;

    fn list(a: u16) -> NodeList {
        NodeList::new(vec![NodeEntry {
            info: NodeInfo {
                address: Address(a),
                ..Default::default()
            },
            route: Route::empty(),
            q: 0,
        }])
    }

    #[test]
    fn lists_and_bodies_are_held_once_and_dropped_when_unused() {
        let i = Interner::new();
        let a = i.add_node_list(list(0x100));
        let b = i.add_node_list(list(0x100));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(Arc::ptr_eq(&i.node_list(a.encoded()).unwrap(), &a));
        assert!(i.node_list(list(0x101).encoded()).is_none());
        let body = |nodes: &Arc<NodeList>, sn| RtBody {
            san_id: Address(0x200),
            sn,
            q: 1,
            mtu: None,
            csr: Box::new([]),
            rcvf: Box::new([Address(0x300)]),
            nodes: NodesRef(nodes.clone()),
        };
        let x = i.body(body(&a, 1));
        assert!(Arc::ptr_eq(&x, &i.body(body(&a, 1))));
        assert!(!Arc::ptr_eq(&x, &i.body(body(&a, 2))));
        assert_eq!(i.census(), (1, 1));
        drop((a, b, x));
        assert_eq!(i.census(), (0, 0));
        // Many insertions of lists nobody keeps: the table stays small.
        for n in 0..5000u16 {
            i.add_node_list(list(0x1000 + n));
        }
        let buckets: usize = i.shards.iter().map(|s| s.lock().unwrap().lists.len()).sum();
        assert!(buckets < 3000, "{buckets} buckets");
    }

    #[test]
    fn an_rrp9_is_found_to_carry_a_held_list_and_where() {
        use crate::wire::message::{Message, RouteTable};
        use crate::wire::record::SourceRoute;
        let i = Interner::new();
        let held = i.add_node_list(list(0x100));
        let rrp9 = |a: u16| {
            let nodes = list(a).iter().map(NodeEntry::rt_node).collect();
            Message::RouteTable(RouteTable {
                san_id: Address(0x200),
                sn: 7,
                csr: SourceRoute::default(),
                rcvf: vec![Address(0x300)],
                nodes,
            })
            .to_packet(Address(0x0040), Address(0x0051))
            .unwrap()
            .to_bytes()
            .unwrap()
        };
        let p = rrp9(0x100);
        let (at, found) = i.rrp9_node_list(&p).expect("held");
        assert!(Arc::ptr_eq(&found, &held));
        assert_eq!(&p[at..at + held.encoded().len()], held.encoded());
        // Its records end the data: the trailer follows them.
        assert_eq!(
            at + held.encoded().len() + crate::wire::TRAILER_LEN,
            p.len()
        );
        // A list nobody holds, and what is no RRP#9, are not found.
        assert!(i.rrp9_node_list(&rrp9(0x101)).is_none());
        assert!(i.rrp9_node_list(&p[..20]).is_none());
    }

    #[test]
    fn the_quick_hash_sees_every_byte() {
        let a = hash_bytes(1, b"0123456789abcdefXYZ");
        assert_ne!(a, hash_bytes(1, b"0123456789abcdefXYW"));
        assert_ne!(a, hash_bytes(1, b"1123456789abcdefXYZ"));
        assert_ne!(a, hash_bytes(2, b"0123456789abcdefXYZ"));
        assert_ne!(hash_bytes(1, b"ab"), hash_bytes(1, b"ab\0"));
    }
}
