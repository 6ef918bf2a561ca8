//! The identity -> address map a manager keeps (docs/manager.md "Address
//! assignment"), and the assignments under way, each with the reverse
//! index that lets a master tell in O(log n) whether an address is held by
//! another node: choosing an address stays cheap at thousands of members.

use std::collections::{BTreeMap, BTreeSet};

use rrp::{Address, NativeAddr};

/// Identity -> address: given, swept, copied from the master. Two
/// identities may map to one address (a node that left and another that
/// took its address); an identity's entry is replaced, never removed.
#[derive(Debug, Default)]
pub(super) struct AddressMap {
    by_identity: BTreeMap<u64, Address>,
    /// (address, identity) for every entry.
    holders: BTreeSet<(Address, u64)>,
}

impl AddressMap {
    /// The map.
    pub(super) fn as_map(&self) -> &BTreeMap<u64, Address> {
        &self.by_identity
    }

    /// `identity`'s address.
    pub(super) fn get(&self, identity: u64) -> Option<Address> {
        self.by_identity.get(&identity).copied()
    }

    /// `identity` is at `address` from now on.
    pub(super) fn insert(&mut self, identity: u64, address: Address) {
        if let Some(old) = self.by_identity.insert(identity, address) {
            self.holders.remove(&(old, identity));
        }
        self.holders.insert((address, identity));
    }

    /// Whether an identity other than `identity` maps to `address`.
    pub(super) fn held_by_other(&self, address: Address, identity: u64) -> bool {
        self.holders
            .range((address, 0)..=(address, u64::MAX))
            .any(|(_, i)| *i != identity)
    }

    /// Whether any identity maps to `address`.
    pub(super) fn is_given(&self, address: Address) -> bool {
        self.holders
            .range((address, 0)..=(address, u64::MAX))
            .next()
            .is_some()
    }
}

/// Nodes without an address being given one: native -> (identity, the
/// address chosen, [`Address::UNSPECIFIED`] before).
#[derive(Debug, Default)]
pub(super) struct Assigning {
    by_native: BTreeMap<NativeAddr, (u64, Address)>,
    /// (address, identity) of the entries with an address chosen, and how
    /// many there are of each (one identity may announce from two natives).
    chosen: BTreeMap<(Address, u64), u32>,
}

impl Assigning {
    pub(super) fn contains(&self, native: &NativeAddr) -> bool {
        self.by_native.contains_key(native)
    }

    pub(super) fn insert(&mut self, native: NativeAddr, identity: u64, address: Address) {
        self.remove(&native);
        self.by_native.insert(native, (identity, address));
        if address != Address::UNSPECIFIED {
            *self.chosen.entry((address, identity)).or_insert(0) += 1;
        }
    }

    pub(super) fn remove(&mut self, native: &NativeAddr) {
        if let Some((identity, address)) = self.by_native.remove(native)
            && let Some(n) = self.chosen.get_mut(&(address, identity))
        {
            *n -= 1;
            if *n == 0 {
                self.chosen.remove(&(address, identity));
            }
        }
    }

    /// Whether an assignment of `address` to an identity other than
    /// `identity` is under way.
    pub(super) fn held_by_other(&self, address: Address, identity: u64) -> bool {
        self.chosen
            .range((address, 0)..=(address, u64::MAX))
            .any(|((_, i), _)| *i != identity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reverse_index_follows_replacements() {
        let mut m = AddressMap::default();
        m.insert(1, Address(0x100));
        m.insert(2, Address(0x100));
        assert!(m.held_by_other(Address(0x100), 1));
        m.insert(2, Address(0x101));
        assert!(!m.held_by_other(Address(0x100), 1));
        assert!(m.held_by_other(Address(0x101), 1));
        assert!(m.is_given(Address(0x100)) && !m.is_given(Address(0x102)));
        assert_eq!(m.get(2), Some(Address(0x101)));
        assert_eq!(m.as_map().len(), 2);
    }

    #[test]
    fn an_assignment_under_way_holds_its_address_until_removed() {
        let mut a = Assigning::default();
        let n = NativeAddr::mac([2, 0, 0, 0, 0, 1]);
        a.insert(n, 7, Address::UNSPECIFIED);
        assert!(a.contains(&n));
        assert!(!a.held_by_other(Address(0x100), 8));
        a.insert(n, 7, Address(0x100));
        assert!(a.held_by_other(Address(0x100), 8));
        assert!(!a.held_by_other(Address(0x100), 7));
        a.remove(&n);
        assert!(!a.contains(&n) && !a.held_by_other(Address(0x100), 8));
    }
}
