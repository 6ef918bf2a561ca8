//! Packets a box sends because of packets it received, bounded per sender and
//! in all, in windows of one second: the error manners of
//! docs/architecture.md "Route tables and RRP" (ERR and redirects, RFC 1122's
//! rate limit), the RRP engine's answers to requests and the HR-DOWNs it
//! takes (docs/spec-notes.md 58, 60), and the management agent's answers
//! (docs/management.md "Answers at a bounded rate", spec-notes 62). One
//! [`RateLimiter`] serves each of them.

use std::collections::HashMap;

use crate::address::Address;

/// Senders remembered before those of past windows are forgotten: at most
/// this many plus the window's bound in all (a sender is only remembered
/// once the global bound let one of its packets through).
const SENDERS_KEPT: usize = 4096;

/// At most `per_source` packets per second per sender and `global` in all.
/// A window is a second of the caller's clock (milliseconds / 1000), and
/// the counts start again at each new one: within a window a sender gets at
/// most its bound, within a second that spans two windows at most twice it.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    per_source: u32,
    global: u32,
    /// Per sender: the window of its count, and the count.
    sources: HashMap<Address, (u64, u32)>,
    /// The current window and the count in all.
    window: (u64, u32),
}

impl RateLimiter {
    /// A limiter of `per_source` per sender and `global` in all, per second.
    pub fn new(per_source: u32, global: u32) -> RateLimiter {
        RateLimiter {
            per_source,
            global,
            sources: HashMap::new(),
            window: (0, 0),
        }
    }

    /// New bounds (a live reload); the counts of the window stay.
    pub fn set(&mut self, per_source: u32, global: u32) {
        self.per_source = per_source;
        self.global = global;
    }

    /// The bound per sender.
    pub fn per_source(&self) -> u32 {
        self.per_source
    }

    /// The bound in all.
    pub fn global(&self) -> u32 {
        self.global
    }

    /// Whether one more packet because of `src` may go at `now`
    /// (milliseconds); counts it if so.
    pub fn allow(&mut self, now: u64, src: Address) -> bool {
        let sec = now / 1000;
        if self.window.0 != sec {
            self.window = (sec, 0);
        }
        if self.window.1 >= self.global {
            return false;
        }
        if self.sources.len() > SENDERS_KEPT {
            self.sources.retain(|_, (s, _)| *s == sec);
        }
        let e = self.sources.entry(src).or_insert((sec, 0));
        if e.0 != sec {
            *e = (sec, 0);
        }
        if e.1 >= self.per_source {
            return false;
        }
        e.1 += 1;
        self.window.1 += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(l: &mut RateLimiter, now: u64, src: u16, n: u32) -> u32 {
        (0..n).filter(|_| l.allow(now, Address(src))).count() as u32
    }

    #[test]
    fn per_source_and_global_bounds_per_second() {
        let mut l = RateLimiter::new(3, 5);
        assert_eq!(allowed(&mut l, 0, 0x0100, 10), 3);
        assert_eq!(allowed(&mut l, 500, 0x0101, 10), 2, "the global bound");
        assert_eq!(allowed(&mut l, 999, 0x0102, 10), 0);
        // A new second: every count starts again.
        assert_eq!(allowed(&mut l, 1_000, 0x0100, 10), 3);
        assert_eq!(allowed(&mut l, 1_000, 0x0101, 10), 2);
    }

    #[test]
    fn new_bounds_apply_at_once() {
        let mut l = RateLimiter::new(1, 100);
        assert_eq!(allowed(&mut l, 0, 0x0100, 10), 1);
        l.set(4, 100);
        assert_eq!((l.per_source(), l.global()), (4, 100));
        assert_eq!(allowed(&mut l, 10, 0x0100, 10), 3);
    }

    #[test]
    fn senders_of_past_windows_are_forgotten() {
        let mut l = RateLimiter::new(1, u32::MAX);
        for a in 0..=SENDERS_KEPT as u16 {
            assert!(l.allow(0, Address(0x0100 + a)));
        }
        assert!(l.allow(1_000, Address(0x7000)));
        assert_eq!(l.sources.len(), 1, "only this window's sender is kept");
    }
}
