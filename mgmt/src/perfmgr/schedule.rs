//! The poll schedule (docs/management.md "Fabric performance manager"): a
//! sweep every `interval_ms`, never two at once, its polls kept in flight
//! `outstanding` at a time so that a SAN of many nodes is read in parallel
//! and a node that does not answer costs one request's time-outs, not the
//! sweep's (its other polls are dropped from the sweep at its first
//! failure). The lessons of OpenSM's perfmgr (`perfmgr_max_outstanding_queries`)
//! and of infiniband-exporter's serial scans.

use std::collections::{BTreeSet, VecDeque};

use rrp::Address;

use super::Time;

/// One poll of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Poll {
    /// NodeInfo, for a node whose number of ports is not known yet.
    NodeInfo,
    /// NodeDescription, for such a node whose name is not known either.
    Description,
    /// PortCounters of a port.
    Counters(u8),
    /// PortCountersExtended of a port.
    Extended(u8),
}

/// The sweep under way.
#[derive(Debug, Clone)]
struct Sweep {
    started: Time,
    queue: VecDeque<(Address, Poll)>,
    in_flight: usize,
    nodes: BTreeSet<Address>,
    failed: BTreeSet<Address>,
}

/// What a finished sweep did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SweepSummary {
    /// When it started.
    pub started: Time,
    /// How long it took, from its start to its last answer or time-out.
    pub duration_ms: Time,
    /// Nodes it polled.
    pub nodes: usize,
    /// Nodes that did not answer it.
    pub unanswered: usize,
}

/// Sweeps and their polls in flight.
#[derive(Debug, Clone)]
pub struct Schedule {
    interval_ms: Time,
    outstanding: usize,
    next_at: Time,
    sweep: Option<Sweep>,
}

impl Schedule {
    /// A schedule whose first sweep is due at `now`.
    pub fn new(now: Time, interval_ms: Time, outstanding: usize) -> Schedule {
        Schedule {
            interval_ms,
            outstanding: outstanding.max(1),
            next_at: now,
            sweep: None,
        }
    }

    /// New settings, from the next sweep on.
    pub fn configure(&mut self, interval_ms: Time, outstanding: usize) {
        self.interval_ms = interval_ms;
        self.outstanding = outstanding.max(1);
    }

    /// Whether a sweep should start at `now`: the interval since the last
    /// start has passed and no sweep is under way.
    pub fn due(&self, now: Time) -> bool {
        self.sweep.is_none() && now >= self.next_at
    }

    /// Whether a sweep is under way.
    pub fn sweeping(&self) -> bool {
        self.sweep.is_some()
    }

    /// Starts a sweep of `polls` at `now` (the next is due an interval
    /// later); with no poll, only the next is scheduled.
    pub fn start(&mut self, now: Time, polls: Vec<(Address, Poll)>) {
        self.next_at = now.saturating_add(self.interval_ms);
        if polls.is_empty() {
            return;
        }
        self.sweep = Some(Sweep {
            started: now,
            nodes: polls.iter().map(|(a, _)| *a).collect(),
            queue: polls.into(),
            in_flight: 0,
            failed: BTreeSet::new(),
        });
    }

    /// The next poll to send, when one is queued and fewer than
    /// `outstanding` are in flight.
    pub fn next_poll(&mut self) -> Option<(Address, Poll)> {
        let s = self.sweep.as_mut()?;
        if s.in_flight >= self.outstanding {
            return None;
        }
        let p = s.queue.pop_front()?;
        s.in_flight += 1;
        Some(p)
    }

    /// Polls to add to the sweep (a node's ports, once its NodeInfo told
    /// how many).
    pub fn add(&mut self, polls: impl IntoIterator<Item = (Address, Poll)>) {
        if let Some(s) = self.sweep.as_mut() {
            s.queue.extend(polls);
        }
    }

    /// A poll in flight was answered.
    pub fn answered(&mut self) {
        if let Some(s) = self.sweep.as_mut() {
            s.in_flight = s.in_flight.saturating_sub(1);
        }
    }

    /// A poll in flight to `node` had no answer: the node is marked for
    /// this sweep and its polls still queued are dropped.
    pub fn failed(&mut self, node: Address) {
        if let Some(s) = self.sweep.as_mut() {
            s.in_flight = s.in_flight.saturating_sub(1);
            s.failed.insert(node);
            s.queue.retain(|(a, _)| *a != node);
        }
    }

    /// Whether `node` failed in the sweep under way.
    pub fn has_failed(&self, node: Address) -> bool {
        self.sweep
            .as_ref()
            .is_some_and(|s| s.failed.contains(&node))
    }

    /// When the sweep under way has nothing queued or in flight: ends it
    /// at `now`, with the nodes it polled and those that failed.
    pub fn finish(
        &mut self,
        now: Time,
    ) -> Option<(SweepSummary, BTreeSet<Address>, BTreeSet<Address>)> {
        let s = self.sweep.as_ref()?;
        if !s.queue.is_empty() || s.in_flight > 0 {
            return None;
        }
        let s = self.sweep.take()?;
        let summary = SweepSummary {
            started: s.started,
            duration_ms: now.saturating_sub(s.started),
            nodes: s.nodes.len(),
            unanswered: s.failed.len(),
        };
        Some((summary, s.nodes, s.failed))
    }

    /// When the next sweep is due (`Time::MAX` while one is under way: its
    /// answers and time-outs move it on).
    pub fn next_timer(&self) -> Time {
        if self.sweep.is_some() {
            Time::MAX
        } else {
            self.next_at
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polls(nodes: &[u16], ports: u8) -> Vec<(Address, Poll)> {
        nodes
            .iter()
            .flat_map(|n| (0..ports).map(move |p| (Address(*n), Poll::Counters(p))))
            .collect()
    }

    #[test]
    fn at_most_outstanding_polls_are_in_flight() {
        let mut s = Schedule::new(0, 1_000, 3);
        assert!(s.due(0));
        s.start(0, polls(&[0x100, 0x101], 2));
        let first: Vec<_> = std::iter::from_fn(|| s.next_poll()).collect();
        assert_eq!(first.len(), 3);
        assert_eq!(s.next_poll(), None);
        s.answered();
        assert_eq!(s.next_poll(), Some((Address(0x101), Poll::Counters(1))));
        assert_eq!(s.next_poll(), None);
        for _ in 0..3 {
            assert!(s.finish(5).is_none());
            s.answered();
        }
        let (sum, nodes, failed) = s.finish(40).unwrap();
        assert_eq!(sum.duration_ms, 40);
        assert_eq!((sum.nodes, sum.unanswered), (2, 0));
        assert_eq!(nodes.len(), 2);
        assert!(failed.is_empty());
    }

    #[test]
    fn sweeps_do_not_overlap_and_keep_their_interval() {
        let mut s = Schedule::new(100, 1_000, 4);
        assert!(!s.due(99));
        s.start(100, polls(&[0x100], 1));
        assert_eq!(s.next_timer(), Time::MAX);
        assert!(!s.due(5_000), "a sweep is under way");
        let _ = s.next_poll();
        s.answered();
        assert!(s.finish(2_500).is_some());
        // Late: due at once, and the one after an interval after its start.
        assert_eq!(s.next_timer(), 1_100);
        assert!(s.due(2_500));
        s.start(2_500, Vec::new());
        assert!(!s.sweeping());
        assert_eq!(s.next_timer(), 3_500);
    }

    /// A node that does not answer loses its queued polls: the sweep does
    /// not wait out one time-out per port.
    #[test]
    fn a_failed_node_drops_its_queued_polls() {
        let mut s = Schedule::new(0, 1_000, 1);
        s.start(0, polls(&[0x100, 0x101], 3));
        assert_eq!(s.next_poll(), Some((Address(0x100), Poll::Counters(0))));
        s.failed(Address(0x100));
        assert!(s.has_failed(Address(0x100)));
        let rest: Vec<_> = std::iter::from_fn(|| {
            let p = s.next_poll();
            s.answered();
            p
        })
        .collect();
        assert_eq!(rest, polls(&[0x101], 3));
        let (sum, _, failed) = s.finish(10).unwrap();
        assert_eq!((sum.nodes, sum.unanswered), (2, 1));
        assert_eq!(failed.into_iter().collect::<Vec<_>>(), [Address(0x100)]);
    }

    #[test]
    fn polls_added_during_a_sweep_belong_to_it() {
        let mut s = Schedule::new(0, 1_000, 2);
        s.start(0, vec![(Address(0x100), Poll::NodeInfo)]);
        assert_eq!(s.next_poll(), Some((Address(0x100), Poll::NodeInfo)));
        s.add(polls(&[0x100], 2));
        s.answered();
        assert!(s.finish(1).is_none());
        assert_eq!(s.next_poll(), Some((Address(0x100), Poll::Counters(0))));
        assert_eq!(s.next_poll(), Some((Address(0x100), Poll::Counters(1))));
        s.answered();
        s.answered();
        assert_eq!(s.finish(2).unwrap().0.nodes, 1);
    }
}
