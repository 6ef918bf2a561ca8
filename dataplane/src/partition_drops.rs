//! A worker's counts of the packets the partitions refused, per partition
//! key and ingress port (docs/partitions.md "At the routers"), so that an
//! operator sees whose packets were refused: a small table, a slot given to
//! each (key, port) at its first refusal, and one slot for the pairs past
//! the table's size. Only refused packets touch it.

use arrayvec::ArrayVec;
use rrp::PortId;
use rrp::counters::PartitionStats;

/// The (key, port) pairs a worker counts apart; the rest count together.
pub const PARTITION_SLOTS: usize = 64;

/// The tag of a slot: its key and ingress port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PartitionTag {
    /// The partition key (15 bits) of the refused packets.
    pub key: u16,
    /// Their ingress port.
    pub port: PortId,
}

impl PartitionTag {
    /// The tag as one word, never 0 (0 is an empty slot when published).
    pub fn to_word(self) -> u64 {
        1 << 32 | u64::from(self.key) << 16 | u64::from(self.port.0)
    }

    /// The tag a word carries (`None` for 0, an empty slot).
    pub fn from_word(w: u64) -> Option<PartitionTag> {
        (w >> 32 == 1).then_some(PartitionTag {
            key: (w >> 16) as u16,
            port: PortId(w as u16),
        })
    }
}

/// The counts, by slot, and the count of the pairs without one.
#[derive(Debug, Clone, Default)]
pub struct PartitionDrops {
    tags: ArrayVec<PartitionTag, PARTITION_SLOTS>,
    counts: ArrayVec<PartitionStats, PARTITION_SLOTS>,
    other: PartitionStats,
    changed: bool,
}

impl PartitionDrops {
    /// Counts a packet of `key` refused after it came in on `port`.
    pub fn count(&mut self, key: u16, port: PortId) {
        self.changed = true;
        let tag = PartitionTag { key, port };
        if let Some(i) = self.tags.iter().position(|t| *t == tag) {
            self.counts[i].dropped += 1;
        } else if self.tags.try_push(tag).is_ok() {
            self.counts.push(PartitionStats { dropped: 1 });
        } else {
            self.other.dropped += 1;
        }
    }

    /// The slots' tags, in slot order.
    pub fn tags(&self) -> &[PartitionTag] {
        &self.tags
    }

    /// The slots' counts, in slot order.
    pub fn counts(&self) -> &[PartitionStats] {
        &self.counts
    }

    /// The count of the pairs without a slot.
    pub fn other(&self) -> &PartitionStats {
        &self.other
    }

    /// Whether a count moved since the last call (and clears the flag).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_and_port_has_its_slot_until_the_table_is_full() {
        let mut d = PartitionDrops::default();
        d.count(0x10, PortId(1));
        d.count(0x10, PortId(1));
        d.count(0x10, PortId(2));
        d.count(0x20, PortId(1));
        assert!(d.take_changed() && !d.take_changed());
        assert_eq!(d.tags().len(), 3);
        assert_eq!(d.counts()[0].dropped, 2);
        assert_eq!(
            d.tags()[2],
            PartitionTag {
                key: 0x20,
                port: PortId(1)
            }
        );
        for k in 0..PARTITION_SLOTS as u16 {
            d.count(0x100 + k, PortId(0));
        }
        assert_eq!(d.tags().len(), PARTITION_SLOTS);
        assert_eq!(d.other().dropped, 3);
    }

    #[test]
    fn a_tag_is_a_word_and_back() {
        let t = PartitionTag {
            key: 0x7fff,
            port: PortId(31),
        };
        assert_eq!(PartitionTag::from_word(t.to_word()), Some(t));
        assert_eq!(PartitionTag::from_word(0), None);
    }
}
