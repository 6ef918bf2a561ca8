//! The buddies each HR knows, as the workers read them to classify the
//! packets they punt (docs/dataplane.md "Punt classes"; docs/spec-notes.md
//! 61): RRP and ERR from a buddy, at the native address the HR learned for
//! it, go in the `routing` class; from anyone else in `request`. The
//! control thread builds the table from the engine's LRTs whenever they
//! change and publishes it with the FIB set, so a worker reads it without
//! locks; only punted packets look at it.

use rrp::{Address, NativeAddr, PerPort, PortId};

/// Per HR, its buddies' addresses and native addresses, sorted by address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Buddies {
    per_port: PerPort<Box<[(Address, NativeAddr)]>>,
}

impl Buddies {
    /// The table of `ports` HRs, each with the buddies its iterator gives
    /// (in any order).
    pub fn new<I, J>(ports: I) -> Buddies
    where
        I: IntoIterator<Item = J>,
        J: IntoIterator<Item = (Address, NativeAddr)>,
    {
        Buddies {
            per_port: ports
                .into_iter()
                .map(|b| {
                    let mut v: Vec<_> = b.into_iter().collect();
                    v.sort_by_key(|(a, _)| *a);
                    v.into_boxed_slice()
                })
                .collect(),
        }
    }

    /// Whether `sa`, from native address `native`, is a buddy of HR `port`.
    #[inline]
    pub fn knows(&self, port: PortId, sa: Address, native: &NativeAddr) -> bool {
        listed(self.of(port), sa, native)
    }

    /// Whether `native` is the native address of one of HR `port`'s
    /// buddies: a packet from it comes from another router of the SAN
    /// (docs/partitions.md "At the routers"). A HR has few buddies: a
    /// linear search.
    #[inline]
    pub fn is_router(&self, port: PortId, native: &NativeAddr) -> bool {
        self.of(port).iter().any(|(_, n)| n == native)
    }

    /// The buddies of HR `port`, by address.
    pub fn of(&self, port: PortId) -> &[(Address, NativeAddr)] {
        self.per_port.get(port).map_or(&[], |b| b)
    }

    /// Number of HRs in the table.
    pub fn ports(&self) -> usize {
        self.per_port.len()
    }
}

/// Whether `sa`, from `native`, is in one HR's `list` (sorted by address).
#[inline]
fn listed(list: &[(Address, NativeAddr)], sa: Address, native: &NativeAddr) -> bool {
    match list.binary_search_by_key(&sa, |(a, _)| *a) {
        Ok(i) => list[i].1 == *native,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buddy_is_known_only_from_its_own_native_address() {
        let n1 = NativeAddr::mac([2, 0, 0, 0, 0, 1]);
        let n2 = NativeAddr::mac([2, 0, 0, 0, 0, 2]);
        let b = Buddies::new([vec![(Address(0x0150), n2), (Address(0x0120), n1)], vec![]]);
        assert!(b.knows(PortId(0), Address(0x0120), &n1));
        assert!(b.knows(PortId(0), Address(0x0150), &n2));
        assert!(!b.knows(PortId(0), Address(0x0120), &n2), "spoofed native");
        assert!(!b.knows(PortId(0), Address(0x0130), &n1), "not a buddy");
        assert!(!b.knows(PortId(1), Address(0x0120), &n1), "another HR's");
        assert!(!b.knows(PortId(7), Address(0x0120), &n1), "no such port");
        assert_eq!(b.of(PortId(0))[0].0, Address(0x0120));
        assert!(Buddies::default().of(PortId(0)).is_empty());
        assert!(b.is_router(PortId(0), &n1) && b.is_router(PortId(0), &n2));
        assert!(!b.is_router(PortId(1), &n1), "another HR's");
        assert!(!b.is_router(PortId(0), &NativeAddr::mac([2, 0, 0, 0, 0, 3])));
    }
}
