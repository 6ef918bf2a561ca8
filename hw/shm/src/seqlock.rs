//! A seqlock over words of a [`Segment`](crate::Segment): one word is the
//! generation, odd while the publisher writes and even when the words are
//! consistent; a reader copies the words and keeps the copy only if the
//! generation was even and unchanged across it (docs/stats.md "The
//! seqlock"). The publisher never waits for readers; a reader retries.

use std::sync::atomic::{AtomicU64, Ordering, fence};

/// Publishes: makes the generation word `generation` odd, lets `write`
/// store words (relaxed stores are enough), then makes the generation even
/// again (two more than before). One publisher at a time.
pub fn publish(words: &[AtomicU64], generation: usize, write: impl FnOnce(&[AtomicU64])) -> u64 {
    let g = words[generation].load(Ordering::Relaxed);
    let odd = g | 1;
    words[generation].store(odd, Ordering::Relaxed);
    // The odd generation is seen before any word written below.
    fence(Ordering::Release);
    write(words);
    let even = odd + 1;
    words[generation].store(even, Ordering::Release);
    even
}

/// Stores `values` into `words` from word `at` on (relaxed: inside
/// [`publish`]).
pub fn store(words: &[AtomicU64], at: usize, values: &[u64]) {
    for (w, v) in words[at..at + values.len()].iter().zip(values) {
        w.store(*v, Ordering::Relaxed);
    }
}

/// One attempt to read: copies `words` into `out` (the same length) and
/// returns the generation if the copy is consistent, `None` if the
/// publisher was writing (try again).
pub fn read(words: &[AtomicU64], generation: usize, out: &mut [u64]) -> Option<u64> {
    let first = words[generation].load(Ordering::Acquire);
    if first % 2 == 1 {
        return None;
    }
    for (o, w) in out.iter_mut().zip(words) {
        *o = w.load(Ordering::Relaxed);
    }
    // The words above are read before the generation is read again.
    fence(Ordering::Acquire);
    let last = words[generation].load(Ordering::Relaxed);
    (first == last && out[generation] == first).then_some(first)
}
