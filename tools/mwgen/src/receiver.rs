//! The receiving side: counts probes of one stream, finds duplicates and
//! reordering from their sequence numbers, and records one-way latency.
//!
//! Definitions (the impairment layer's, ports::impair, so that tests can
//! compare):
//! - **received**: probes of this stream that arrived, copies included;
//! - **duplicated**: arrivals of a sequence number already seen;
//! - **reordered**: first arrivals of a number below the highest seen so far;
//! - **late**: arrivals more than [`WINDOW`] numbers below the highest seen,
//!   which can no longer be told from duplicates: counted as reordered and
//!   as unique;
//! - **unique** = received - duplicated; the sender's `sent - unique` are
//!   lost once nothing is in flight any more.
//!
//! A probe carries its sequence number's low 32 bits (crate::probe); each
//! stream's window extends them to 64 against the highest number seen
//! ([`probe::extend_seq`]), so that the counts stay exact across the 2^32
//! wrap for any probe that arrives less than 2^31 numbers from the highest.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::probe::{self, Received};

/// Sequence numbers remembered below the highest seen (a power of two).
pub const WINDOW: u64 = 1 << 18;

/// Distinct EI values remembered; further values count in `ei_other`.
pub const EI_VALUES: usize = 16;

/// Counts of the receiving side.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RxCounts {
    /// Probes of this stream, copies included.
    pub received: u64,
    /// Arrivals of a number already seen.
    pub duplicated: u64,
    /// First arrivals below the highest number seen.
    pub reordered: u64,
    /// Arrivals too far behind to check for duplication (also reordered).
    pub late: u64,
    /// Probes of another stream (another run, an old capture).
    pub foreign: u64,
    /// Well-formed packets that are not probes (RRP sweeps and the like).
    pub other: u64,
    /// Packets that do not parse.
    pub malformed: u64,
    /// Packets the port flagged with a receive error (counted above too).
    pub rx_errors: u64,
    /// Bytes of this stream's probes as received, link header included.
    pub bytes: u64,
}

impl RxCounts {
    /// Probes received once: `received - duplicated`.
    pub fn unique(&self) -> u64 {
        self.received - self.duplicated
    }
}

/// Which numbers of one stream arrived lately: the duplicate and
/// reordering window.
#[derive(Debug, Clone)]
struct Window {
    seen: Vec<u64>,
    /// The highest (extended) sequence number seen: what the next probe's
    /// 32 bits are extended against.
    highest: Option<u64>,
}

impl Window {
    fn new() -> Window {
        Window {
            seen: vec![0; (WINDOW / 64) as usize],
            highest: None,
        }
    }

    fn clear(&mut self) {
        self.seen.fill(0);
        self.highest = None;
    }
}

/// The receiver of one stream, or of the consecutive streams of a run on
/// several cores (`--cores`: each core sends its own stream, and a router
/// may deliver any of them to any core's queue). Each stream has its own
/// duplicate and reordering window; the counts, the latency and the EI
/// values are the streams' together.
#[derive(Debug)]
pub struct Receiver {
    tag: u16,
    windows: Vec<Window>,
    counts: RxCounts,
    link_hdr: u64,
    min_frame: u64,
    latency: Histogram<u64>,
    lat_min: u64,
    lat_max: u64,
    ei: Vec<(u64, u64)>,
    ei_other: u64,
}

impl Receiver {
    /// A receiver for stream `tag`, on a port whose link header is
    /// `link_hdr` bytes and whose frames are at least `min_frame` bytes
    /// (for byte counts as on the wire).
    pub fn new(tag: u16, link_hdr: usize, min_frame: usize) -> Receiver {
        Receiver {
            tag,
            windows: vec![Window::new()],
            counts: RxCounts::default(),
            link_hdr: link_hdr as u64,
            min_frame: min_frame as u64,
            latency: Histogram::new(3).expect("3 significant figures"),
            lat_min: u64::MAX,
            lat_max: 0,
            ei: Vec::with_capacity(EI_VALUES),
            ei_other: 0,
        }
    }

    /// Forgets everything and follows stream `tag` from now on.
    pub fn reset(&mut self, tag: u16) {
        self.reset_streams(tag, 1);
    }

    /// Forgets everything and follows the `n` streams (at least one) from
    /// `tag` on (`tag`, `tag + 1`, ...; wrapping) from now on.
    pub fn reset_streams(&mut self, tag: u16, n: u16) {
        self.tag = tag;
        self.windows.truncate(usize::from(n.max(1)));
        for w in &mut self.windows {
            w.clear();
        }
        while self.windows.len() < usize::from(n.max(1)) {
            self.windows.push(Window::new());
        }
        self.counts = RxCounts::default();
        self.latency.reset();
        self.lat_min = u64::MAX;
        self.lat_max = 0;
        self.ei.clear();
        self.ei_other = 0;
    }

    /// The (first) stream followed.
    pub fn tag(&self) -> u16 {
        self.tag
    }

    /// How many streams it follows.
    pub fn streams(&self) -> usize {
        self.windows.len()
    }

    /// Adds `other`'s counts, latency samples and EI values to this
    /// receiver's (a run's cores merged into one report; the windows stay
    /// this receiver's).
    pub fn absorb(&mut self, other: &Receiver) {
        let (c, o) = (&mut self.counts, &other.counts);
        c.received += o.received;
        c.duplicated += o.duplicated;
        c.reordered += o.reordered;
        c.late += o.late;
        c.foreign += o.foreign;
        c.other += o.other;
        c.malformed += o.malformed;
        c.rx_errors += o.rx_errors;
        c.bytes += o.bytes;
        // Both histograms have the same bounds (3 significant figures,
        // auto-resizing): adding cannot fail.
        let _ = self.latency.add(&other.latency);
        self.lat_min = self.lat_min.min(other.lat_min);
        self.lat_max = self.lat_max.max(other.lat_max);
        for &(v, n) in &other.ei {
            if let Some(e) = self.ei.iter_mut().find(|(x, _)| *x == v) {
                e.1 += n;
            } else if self.ei.len() < EI_VALUES {
                self.ei.push((v, n));
            } else {
                self.ei_other += n;
            }
        }
        self.ei_other += other.ei_other;
    }

    /// Takes one received packet (`pkt` starts at the MessageWay packet) at
    /// time `now_ns` of the sender's clock. Returns the probe's sequence
    /// number extended to 64 bits when it is a probe of a stream followed.
    #[inline]
    pub fn on_packet(&mut self, pkt: &[u8], rx_error: bool, now_ns: u64) -> Option<u64> {
        if rx_error {
            self.counts.rx_errors += 1;
        }
        let p = match probe::read(pkt) {
            Received::Probe(p) => p,
            Received::Other => {
                self.counts.other += 1;
                return None;
            }
            Received::Malformed => {
                self.counts.malformed += 1;
                return None;
            }
        };
        let Some(win) = self
            .windows
            .get_mut(usize::from(p.tag.wrapping_sub(self.tag)))
        else {
            self.counts.foreign += 1;
            return None;
        };
        let c = &mut self.counts;
        c.received += 1;
        c.bytes += (pkt.len() as u64 + self.link_hdr).max(self.min_frame);
        let s = match win.highest {
            Some(h) => probe::extend_seq(h, p.seq32),
            None => u64::from(p.seq32),
        };
        let bit = |s: u64| ((s % WINDOW / 64) as usize, 1u64 << (s % 64));
        match win.highest {
            Some(h) if s <= h => {
                if h - s >= WINDOW {
                    c.late += 1;
                    c.reordered += 1;
                } else {
                    let (w, m) = bit(s);
                    if win.seen[w] & m != 0 {
                        c.duplicated += 1;
                        return Some(s); // a copy: its latency says nothing new
                    }
                    win.seen[w] |= m;
                    c.reordered += 1;
                }
            }
            h => {
                // Forget the numbers that leave the window.
                let from = h.map_or(s, |h| h + 1);
                if s - from >= WINDOW {
                    win.seen.fill(0);
                } else {
                    for x in from..s {
                        let (w, m) = bit(x);
                        win.seen[w] &= !m;
                    }
                }
                let (w, m) = bit(s);
                win.seen[w] = (win.seen[w] & !m) | m;
                win.highest = Some(s);
            }
        }
        if let Some(tx) = p.tx_ns32 {
            self.time(tx, now_ns);
        }
        if let Some(e) = self.ei.iter_mut().find(|(v, _)| *v == p.ei) {
            e.1 += 1;
        } else if self.ei.len() < EI_VALUES {
            self.ei.push((p.ei, 1));
        } else {
            self.ei_other += 1;
        }
        Some(s)
    }

    /// Records the latency of a timed probe sent at `tx_ns32`.
    #[inline]
    fn time(&mut self, tx_ns32: u32, now_ns: u64) {
        let lat = probe::latency_ns(tx_ns32, now_ns);
        let _ = self.latency.record(lat);
        self.lat_min = self.lat_min.min(lat);
        self.lat_max = self.lat_max.max(lat);
    }

    /// The counts so far.
    pub fn counts(&self) -> &RxCounts {
        &self.counts
    }

    /// The latency histogram (ns) of unique probes (3 significant figures).
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.latency
    }

    /// The latency of unique timed probes: exact least and greatest,
    /// percentiles from the histogram; `count` is the number of samples.
    pub fn latency(&self) -> Latency {
        let h = &self.latency;
        if h.is_empty() {
            return Latency::default();
        }
        Latency {
            count: h.len(),
            min: self.lat_min,
            mean: h.mean(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: self.lat_max,
        }
    }

    /// The EI values seen, with counts, and the count of probes whose EI was
    /// not among the first [`EI_VALUES`] distinct values.
    pub fn ei(&self) -> (&[(u64, u64)], u64) {
        (&self.ei, self.ei_other)
    }
}

/// Latency in nanoseconds: exact least and greatest, percentiles to three
/// significant figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Latency {
    /// Timed probes measured (the samples behind the percentiles).
    pub count: u64,
    /// Smallest.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;
    use rrp::LinkKind;

    fn probe(seq: u64, tx: u64) -> Vec<u8> {
        let mut t = Profile::default().build(LinkKind::Memory, 5).unwrap()[0]
            .bytes
            .clone();
        probe::patch(&mut t, 0, seq, tx);
        t
    }

    #[test]
    fn counts_follow_the_definitions() {
        let mut r = Receiver::new(5, 0, 0);
        for s in [0, 1, 3, 2, 2, 5, 4, 4, 6] {
            r.on_packet(&probe(s, 100), false, 150);
        }
        let c = r.counts();
        assert_eq!(c.received, 9);
        assert_eq!(c.duplicated, 2);
        assert_eq!(c.reordered, 2);
        assert_eq!(c.unique(), 7);
        assert_eq!(r.latency().min, 50);
        assert_eq!(r.latency().count, 7);
        let mut other = probe(9, 0);
        probe::set_tag(&mut other, 0, 6);
        r.on_packet(&other, true, 0);
        r.on_packet(&[1, 2, 3], false, 0);
        assert_eq!(r.counts().foreign, 1);
        assert_eq!(r.counts().malformed, 1);
        assert_eq!(r.counts().rx_errors, 1);
        assert_eq!(r.ei().0, &[(0, 7)]);
    }

    #[test]
    fn window_slides_and_late_arrivals_count() {
        let mut r = Receiver::new(5, 0, 0);
        r.on_packet(&probe(0, 0), false, 0);
        r.on_packet(&probe(WINDOW + 10, 0), false, 0);
        r.on_packet(&probe(0, 0), false, 0); // too old to tell: late
        r.on_packet(&probe(WINDOW + 5, 0), false, 0);
        r.on_packet(&probe(WINDOW + 5, 0), false, 0);
        let c = r.counts();
        assert_eq!((c.late, c.reordered, c.duplicated), (1, 2, 1));
        // A bit left set by an old number is cleared as the window passes it.
        let mut r = Receiver::new(5, 0, 0);
        r.on_packet(&probe(3, 0), false, 0);
        r.on_packet(&probe(3 + WINDOW, 0), false, 0);
        assert_eq!(r.counts().duplicated, 0);
        r.on_packet(&probe(3 + 2 * WINDOW - 1, 0), false, 0);
        r.on_packet(&probe(3 + 2 * WINDOW - 2, 0), false, 0);
        assert_eq!(r.counts().duplicated, 0);
        assert_eq!(r.counts().reordered, 1);
    }

    #[test]
    fn only_timed_probes_are_timed() {
        let mut r = Receiver::new(5, 0, 0);
        for s in 0..100u64 {
            let mut t = probe(s, 10);
            if s % 4 != 0 {
                probe::patch_untimed(&mut t, 0, s);
            }
            r.on_packet(&t, false, 110);
        }
        assert_eq!(r.counts().unique(), 100);
        let l = r.latency();
        assert_eq!((l.count, l.min, l.max), (25, 100, 100));
    }

    #[test]
    fn several_streams_each_with_its_window() {
        let mut r = Receiver::new(5, 0, 0);
        r.reset_streams(5, 2);
        let other = |seq| {
            let mut t = probe(seq, 10);
            probe::set_tag(&mut t, 0, 6);
            t
        };
        // The same numbers in two streams are no copies; a third is foreign.
        for s in 0..10 {
            r.on_packet(&probe(s, 10), false, 11);
            r.on_packet(&other(s), false, 11);
        }
        r.on_packet(&other(3), false, 11);
        let mut third = probe(0, 10);
        probe::set_tag(&mut third, 0, 7);
        r.on_packet(&third, false, 11);
        let c = r.counts();
        assert_eq!((c.received, c.duplicated, c.foreign), (21, 1, 1));
        assert_eq!(r.streams(), 2);
        // Merged: counts and samples add up.
        let mut m = Receiver::new(5, 0, 0);
        m.on_packet(&probe(0, 10), false, 17);
        m.absorb(&r);
        assert_eq!(m.counts().received, 22);
        assert_eq!(m.latency().count, 21);
        assert_eq!((m.latency().min, m.latency().max), (1, 7));
        assert_eq!(m.ei().0, &[(0, 21)]);
    }

    #[test]
    fn latency_percentiles() {
        let mut r = Receiver::new(5, 14, 60);
        for i in 0..1000u64 {
            r.on_packet(&probe(i, 1000), false, 2000 + i);
        }
        let l = r.latency();
        assert_eq!(l.count, 1000);
        assert_eq!(l.min, 1000);
        assert!(l.p50 >= 1495 && l.p50 <= 1505, "{l:?}");
        assert_eq!(l.max, 1999);
        assert_eq!(r.counts().bytes, 1000 * (64 + 14));
    }

    #[test]
    fn a_stream_crossing_2_to_the_32_counts_exactly() {
        // The numbers travel as 32 bits: in order across the wrap, nothing
        // is a copy or reordered, and each is extended to what was sent.
        let w = 1u64 << 32;
        let mut r = Receiver::new(5, 0, 0);
        for s in w - 1000..w + 1000 {
            assert_eq!(r.on_packet(&probe(s, 10), false, 20), Some(s));
        }
        let c = r.counts();
        assert_eq!(
            (c.received, c.duplicated, c.reordered, c.late),
            (2000, 0, 0, 0)
        );
        assert_eq!(r.latency().count, 2000);
        // Copies and reordering around the wrap are still told apart.
        let mut r = Receiver::new(5, 0, 0);
        for s in [w - 2, w + 1, w - 1, w, w, w + 2, w - 2] {
            r.on_packet(&probe(s, 10), false, 20);
        }
        let c = r.counts();
        assert_eq!((c.received, c.duplicated, c.reordered), (7, 2, 2));
        // A late arrival from before the wrap is late, not a number 2^32
        // ahead that would clear the window. (The first number of a stream
        // is taken in the first cycle.)
        let mut r = Receiver::new(5, 0, 0);
        r.on_packet(&probe(w - WINDOW, 10), false, 20);
        assert_eq!(r.on_packet(&probe(w + 10, 10), false, 20), Some(w + 10));
        assert_eq!(
            r.on_packet(&probe(w + 10 - WINDOW - 5, 10), false, 20),
            Some(w + 10 - WINDOW - 5)
        );
        assert_eq!(r.on_packet(&probe(w + 11, 10), false, 20), Some(w + 11));
        r.on_packet(&probe(w + 10, 10), false, 20);
        let c = r.counts();
        assert_eq!((c.late, c.reordered, c.duplicated), (1, 1, 1));
    }
}
