//! The agent's response cache (InfiniBand's TID rules, docs/management.md
//! "Response cache"): a requester retransmits a request it got no answer to
//! with the same TID; the agent answers such a duplicate with the response
//! it gave, instead of executing a Set twice.

use std::collections::VecDeque;

use rrp::{Address, NativeAddr, PortId};

use crate::agent::Time;
use crate::wire::{MAD_LEN, MgmtClass};

/// Who asked, and which transaction: a duplicate has the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The port it arrived on.
    pub port: PortId,
    /// The native address it came from.
    pub native: NativeAddr,
    /// The requester's address (EEP SA).
    pub src: Address,
    /// The class.
    pub class: MgmtClass,
    /// The transaction.
    pub tid: u64,
}

/// Recent responses, oldest first, bounded in number and age.
#[derive(Debug, Clone)]
pub struct Cache {
    entries: VecDeque<(Key, Time, Box<[u8; MAD_LEN]>)>,
    capacity: usize,
    keep_ms: Time,
}

impl Cache {
    /// A cache of at most `capacity` responses, each kept `keep_ms`.
    pub fn new(capacity: usize, keep_ms: Time) -> Cache {
        Cache {
            entries: VecDeque::new(),
            capacity,
            keep_ms,
        }
    }

    /// The response given to `key`, if it is recent.
    pub fn get(&mut self, now: Time, key: &Key) -> Option<&[u8; MAD_LEN]> {
        self.expire(now);
        self.entries
            .iter()
            .rev()
            .find(|(k, _, _)| k == key)
            .map(|(_, _, r)| &**r)
    }

    /// Remembers the response given to `key`.
    pub fn put(&mut self, now: Time, key: Key, response: &[u8; MAD_LEN]) {
        self.expire(now);
        if self.capacity == 0 {
            return;
        }
        while self.entries.len() >= self.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back((key, now, Box::new(*response)));
    }

    fn expire(&mut self, now: Time) {
        while self
            .entries
            .front()
            .is_some_and(|(_, t, _)| now.saturating_sub(*t) > self.keep_ms)
        {
            self.entries.pop_front();
        }
    }

    /// Responses held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tid: u64) -> Key {
        Key {
            port: PortId(0),
            native: NativeAddr::mac([2, 0, 0, 0, 0, 1]),
            src: Address(0x0100),
            class: MgmtClass::SUBN,
            tid,
        }
    }

    #[test]
    fn found_while_recent_and_bounded() {
        let mut c = Cache::new(2, 1_000);
        c.put(0, key(1), &[1; MAD_LEN]);
        c.put(10, key(2), &[2; MAD_LEN]);
        assert_eq!(c.get(20, &key(1)).map(|r| r[0]), Some(1));
        assert!(c.get(20, &key(3)).is_none());
        // A third pushes out the oldest.
        c.put(30, key(3), &[3; MAD_LEN]);
        assert!(c.get(30, &key(1)).is_none());
        assert_eq!(c.get(30, &key(3)).map(|r| r[0]), Some(3));
        // Old ones go.
        assert!(c.get(2_000, &key(2)).is_none());
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn another_port_or_source_is_another_transaction() {
        let mut c = Cache::new(8, 1_000);
        c.put(0, key(7), &[7; MAD_LEN]);
        let mut other = key(7);
        other.src = Address(0x0101);
        assert!(c.get(1, &other).is_none());
        let mut other = key(7);
        other.class = MgmtClass::PERF;
        assert!(c.get(1, &other).is_none());
    }
}
