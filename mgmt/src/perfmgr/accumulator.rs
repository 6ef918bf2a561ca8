//! One port's counters accumulated across resets (docs/management.md
//! "Fabric performance manager"): what the scrape shows never goes back,
//! whether the node restarted, an operator cleared the port
//! (`mwctl clear counters`, a PortCounters Set) or a counter wrapped.
//!
//! The first read is taken whole (the totals are the counters as read).
//! After that each read adds its delta to the totals: the counter less its
//! last read. A counter lower than its last read means the port's counters
//! started again from 0 (InfiniBand's PortCounters are cleared as a block,
//! by a Set or a reset; spec-notes 72): the whole port is taken as reset,
//! and each counter adds what it reads now. Totals saturate at `u64::MAX`
//! instead of wrapping, so that they never go down.

/// A port's counters as last read, and their totals across resets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortTotals {
    last: Vec<u64>,
    totals: Vec<u64>,
    reads: u64,
    resets: u64,
}

impl PortTotals {
    /// Takes a read of the counters (in the attribute's order; a read may
    /// carry fewer or more counters than the last, from another version
    /// of the agent). Returns whether it found the port reset.
    pub fn update(&mut self, read: &[u64]) -> bool {
        if self.totals.len() < read.len() {
            self.totals.resize(read.len(), 0);
        }
        let reset = self.reads > 0
            && read
                .iter()
                .zip(&self.last)
                .any(|(now, before)| now < before);
        for (i, now) in read.iter().enumerate() {
            let before = match self.last.get(i) {
                Some(b) if !reset => *b,
                _ => 0,
            };
            // `now >= before` here: a lower read made `reset`, and `before` 0.
            self.totals[i] = self.totals[i].saturating_add(now - before);
        }
        // Counters this read did not carry keep their last read.
        if self.last.len() < read.len() {
            self.last.resize(read.len(), 0);
        }
        self.last[..read.len()].copy_from_slice(read);
        self.reads += 1;
        if reset {
            self.resets += 1;
        }
        reset
    }

    /// The totals, in the attribute's order (as many as the longest read).
    pub fn totals(&self) -> &[u64] {
        &self.totals
    }

    /// The counters as last read (each as its latest read carried it).
    pub fn last(&self) -> &[u64] {
        &self.last
    }

    /// Resets seen.
    pub fn resets(&self) -> u64 {
        self.resets
    }

    /// Reads taken.
    pub fn reads(&self) -> u64 {
        self.reads
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_read_is_taken_whole_then_deltas_add() {
        let mut p = PortTotals::default();
        assert!(!p.update(&[10, 0, 5]));
        assert_eq!(p.totals(), [10, 0, 5]);
        assert!(!p.update(&[15, 2, 5]));
        assert_eq!(p.totals(), [15, 2, 5]);
        assert_eq!((p.reads(), p.resets()), (2, 0));
    }

    /// A restarted node: its counters start again from 0; the totals are
    /// the previous totals plus what it counted since, never lower.
    #[test]
    fn a_reset_adds_the_new_counts_to_the_previous_totals() {
        let mut p = PortTotals::default();
        p.update(&[100, 7, 50]);
        p.update(&[120, 7, 60]);
        // Restarted: received went down. The third counter did not (it
        // counted 70 since the restart) but restarted all the same.
        assert!(p.update(&[3, 0, 70]));
        assert_eq!(p.totals(), [123, 7, 130]);
        assert_eq!(p.resets(), 1);
        assert!(!p.update(&[10, 1, 71]));
        assert_eq!(p.totals(), [130, 8, 131]);
        assert_eq!(p.last(), [10, 1, 71]);
    }

    /// A counter that wraps past 2^64 reads lower: taken as a reset (the
    /// counts between the last read and the wrap are lost, not made
    /// negative), and totals that would pass `u64::MAX` stay there.
    #[test]
    fn a_wrap_is_a_reset_and_totals_saturate() {
        let mut p = PortTotals::default();
        p.update(&[u64::MAX - 10, 1]);
        assert!(p.update(&[5, 1]));
        assert_eq!(p.totals(), [u64::MAX - 5, 2]);
        assert!(!p.update(&[20, 1]));
        assert_eq!(p.totals(), [u64::MAX, 2]);
        assert!(!p.update(&[30, 2]));
        assert_eq!(p.totals(), [u64::MAX, 3]);
    }

    #[test]
    fn reads_of_another_length_keep_the_totals() {
        let mut p = PortTotals::default();
        p.update(&[5, 5]);
        // A newer agent carries a third counter: it starts whole.
        assert!(!p.update(&[6, 5, 9]));
        assert_eq!(p.totals(), [6, 5, 9]);
        // An older one carries one: the others keep their totals.
        assert!(!p.update(&[8]));
        assert_eq!(p.totals(), [8, 5, 9]);
        assert!(!p.update(&[9, 6, 9]));
        assert_eq!(p.totals(), [9, 6, 9]);
    }
}
