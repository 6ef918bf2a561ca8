//! The partition a packet travels in, as its sender marks it in the EEP
//! header's Free field (docs/partitions.md "In packets", docs/spec-notes.md
//! 75): bit 15 the sender's membership (1 = full), bits 0-14 the
//! partition key, as InfiniBand's P_Key in every packet. The routers at
//! the boundaries between SANs read it (they never write it: <06> l.166-168);
//! control traffic (RRP, ERR, management) is not marked.

/// Bit 15: the sender is a full member of the partition.
pub const FULL: u16 = 0x8000;
/// Bits 0-14: the partition key.
pub const KEY: u16 = 0x7FFF;
/// The default partition's key, every node's partition unless a SAN's
/// partitions say otherwise.
pub const DEFAULT_KEY: u16 = 0x7FFF;

/// A packet's partition and the membership its sender claims in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PartitionMark(u16);

impl PartitionMark {
    /// The default partition, full: what a packet with Free 0 (a sender
    /// that knows no partitions) travels in.
    pub const UNMARKED: PartitionMark = PartitionMark(FULL | DEFAULT_KEY);

    /// The mark a packet's Free field `free` carries; 0 is
    /// [`PartitionMark::UNMARKED`].
    #[inline(always)]
    pub const fn from_free(free: u16) -> PartitionMark {
        if free == 0 {
            PartitionMark::UNMARKED
        } else {
            PartitionMark(free)
        }
    }

    /// The mark of key `key` (its low 15 bits) with membership `full`.
    pub const fn new(key: u16, full: bool) -> PartitionMark {
        PartitionMark((key & KEY) | if full { FULL } else { 0 })
    }

    /// The Free field that carries it.
    pub const fn to_free(self) -> u16 {
        self.0
    }

    /// The partition key (0 is none: a mark no node is a member of).
    #[inline(always)]
    pub const fn key(self) -> u16 {
        self.0 & KEY
    }

    /// Whether the sender claims full membership.
    #[inline(always)]
    pub const fn full(self) -> bool {
        self.0 & FULL != 0
    }

    /// Whether it is the default partition's.
    #[inline(always)]
    pub const fn is_default(self) -> bool {
        self.key() == DEFAULT_KEY
    }

    /// Whether a member of the packet's partition (a full one with
    /// `full`) may send it with the membership it claims: a limited member
    /// may not claim full. The routers' source check (docs/partitions.md
    /// "What is checked"), and the traces' reading of it.
    #[inline(always)]
    pub const fn sender_may_claim(self, full: bool) -> bool {
        full || !self.full()
    }

    /// Whether a member of the packet's partition (a full one with
    /// `full`) may receive it: two limited members may not talk. The
    /// routers' destination check, and the traces' reading of it.
    #[inline(always)]
    pub const fn receiver_may_take(self, full: bool) -> bool {
        full || self.full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_zero_is_the_default_partition_full() {
        let m = PartitionMark::from_free(0);
        assert!(m.is_default() && m.full());
        assert_eq!(m.to_free(), 0xFFFF);
    }

    #[test]
    fn bit_15_is_membership_and_the_rest_the_key() {
        let m = PartitionMark::from_free(0x0010);
        assert_eq!((m.key(), m.full()), (0x0010, false));
        let m = PartitionMark::new(0x0010, true);
        assert_eq!(m.to_free(), 0x8010);
        assert_eq!(PartitionMark::from_free(0x8010), m);
        assert_eq!(
            PartitionMark::from_free(0x8000).key(),
            0,
            "key 0: no partition"
        );
    }

    #[test]
    fn limited_members_claim_limited_and_reach_full_members_only() {
        let (full, limited) = (
            PartitionMark::new(0x0010, true),
            PartitionMark::new(0x0010, false),
        );
        assert!(full.sender_may_claim(true) && !full.sender_may_claim(false));
        assert!(limited.sender_may_claim(true) && limited.sender_may_claim(false));
        assert!(full.receiver_may_take(true) && full.receiver_may_take(false));
        assert!(limited.receiver_may_take(true) && !limited.receiver_may_take(false));
    }
}
