//! The rate limit on log lines about received packets (docs/daemon.md
//! "Logs"): whoever can reach a port can make the engine report an event
//! per packet (a bad packet, a refused RT, an HR-DOWN it was told of), and
//! one log line per packet fills a disk. As the kernel's `net_ratelimit`
//! and FRR's rate-limited logs do, lines are let through up to a burst per
//! kind and source and per kind in all, within a window; the rest are
//! counted and summarised once the window ends ("... and 33,310 more like
//! it in the last 10 s"). The counters keep the full figures: only the log
//! is limited.
//!
//! Sans-IO: the caller gives the time; nothing here reads a clock.

use std::collections::HashMap;

use rrp::{Address, LinkKind, NativeAddr};

/// The limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLimits {
    /// The window, in milliseconds.
    pub window_ms: u64,
    /// Lines per kind and source within a window.
    pub per_source: u32,
    /// Lines per kind within a window, all sources together.
    pub per_kind: u32,
    /// Sources tracked at once; events of further sources count as "other
    /// sources" of their kind.
    pub sources: usize,
}

impl Default for LogLimits {
    fn default() -> Self {
        LogLimits {
            window_ms: 10_000,
            per_source: 5,
            per_kind: 50,
            sources: 1024,
        }
    }
}

/// Where an event came from, as the limit keys it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// The node that sent the packet.
    Node(Address),
    /// A sender known by its native address on a SAN of this kind (a
    /// flooder of packets for the box, whose SA proves nothing).
    Native(NativeAddr, LinkKind),
    /// None (no header, or a local cause): its summary names no source.
    Unknown,
    /// One of the sources past [`LogLimits::sources`].
    Others,
}

/// Where a summary says the events came from: " from 0x0599", " from
/// other sources", and nothing for events without a source (a local cause
/// such as a FIB computed has no sender to name).
impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Node(a) => write!(f, " from {a}"),
            Source::Native(n, k) => write!(f, " from {}", n.on(*k)),
            Source::Unknown => Ok(()),
            Source::Others => write!(f, " from other sources"),
        }
    }
}

/// Lines not logged in a window that has ended (or is cut short by
/// [`LogLimiter::flush`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suppressed {
    /// The kind of event (its name in the summary).
    pub kind: &'static str,
    /// The source (`None`: the kind's total cap).
    pub source: Option<Source>,
    /// Lines not logged.
    pub count: u64,
    /// The window's length so far, in milliseconds.
    pub over_ms: u64,
}

impl std::fmt::Display for Suppressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.over_ms.div_ceil(1000).max(1);
        match self.source {
            Some(s) => write!(
                f,
                "{}{s}: ... and {} more like it in the last {secs} s (not logged; counted)",
                self.kind,
                grouped(self.count)
            ),
            None => write!(
                f,
                "{}: ... and {} more from several sources in the last {secs} s (not logged; counted)",
                self.kind,
                grouped(self.count)
            ),
        }
    }
}

/// `n` with thousands separated by commas.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One window's account.
#[derive(Debug, Clone, Copy)]
struct Window {
    start_ms: u64,
    logged: u32,
    suppressed: u64,
}

impl Window {
    const fn new(now_ms: u64) -> Window {
        Window {
            start_ms: now_ms,
            logged: 0,
            suppressed: 0,
        }
    }
}

/// The limiter.
#[derive(Debug)]
pub struct LogLimiter {
    limits: LogLimits,
    sources: HashMap<(&'static str, Source), Window>,
    kinds: HashMap<&'static str, Window>,
    /// Lines let through and held back since the start.
    logged: u64,
    suppressed: u64,
}

impl LogLimiter {
    /// A limiter with `limits`.
    pub fn new(limits: LogLimits) -> LogLimiter {
        LogLimiter {
            limits,
            sources: HashMap::new(),
            kinds: HashMap::new(),
            logged: 0,
            suppressed: 0,
        }
    }

    /// Whether the line of an event of `kind` (a kind's name, e.g.
    /// [`rrp::router::EventKind::name`]) from `source` (its sender, when a
    /// received packet caused it) at `now_ms` may be logged;
    /// counted either way. Windows that have ended are summarised by
    /// [`LogLimiter::expired`], which the caller runs now and then.
    pub fn admit(&mut self, now_ms: u64, kind: &'static str, source: Option<Address>) -> bool {
        self.admit_from(now_ms, kind, source.map_or(Source::Unknown, Source::Node))
    }

    /// [`LogLimiter::admit`] for a line whose source is any [`Source`].
    pub fn admit_from(&mut self, now_ms: u64, kind: &'static str, source: Source) -> bool {
        let mut src = source;
        if !self.sources.contains_key(&(kind, src)) && self.sources.len() >= self.limits.sources {
            src = Source::Others;
        }
        let w = self
            .sources
            .entry((kind, src))
            .or_insert_with(|| Window::new(now_ms));
        let k = self
            .kinds
            .entry(kind)
            .or_insert_with(|| Window::new(now_ms));
        if w.logged < self.limits.per_source && k.logged < self.limits.per_kind {
            w.logged += 1;
            k.logged += 1;
            self.logged += 1;
            return true;
        }
        // Held back by the source's burst, or by the kind's when the
        // source still had room.
        if w.logged < self.limits.per_source {
            k.suppressed += 1;
        } else {
            w.suppressed += 1;
        }
        self.suppressed += 1;
        false
    }

    /// The summaries of the windows that have ended by `now_ms` (those with
    /// nothing held back end silently); their accounts start again.
    pub fn expired(&mut self, now_ms: u64) -> Vec<Suppressed> {
        self.ended(now_ms, self.limits.window_ms)
    }

    /// Every window's summary now, ended or not (at shutdown); the
    /// accounts start again.
    pub fn flush(&mut self, now_ms: u64) -> Vec<Suppressed> {
        self.ended(now_ms, 0)
    }

    /// The summaries of the windows at least `window` ms old.
    fn ended(&mut self, now_ms: u64, window: u64) -> Vec<Suppressed> {
        let mut out = Vec::new();
        self.sources.retain(|&(kind, src), w| {
            if now_ms.saturating_sub(w.start_ms) < window {
                return true;
            }
            if w.suppressed > 0 {
                out.push(Suppressed {
                    kind,
                    source: Some(src),
                    count: w.suppressed,
                    over_ms: now_ms.saturating_sub(w.start_ms),
                });
            }
            false
        });
        self.kinds.retain(|&kind, w| {
            if now_ms.saturating_sub(w.start_ms) < window {
                return true;
            }
            if w.suppressed > 0 {
                out.push(Suppressed {
                    kind,
                    source: None,
                    count: w.suppressed,
                    over_ms: now_ms.saturating_sub(w.start_ms),
                });
            }
            false
        });
        out.sort_by_key(|s| (s.kind, s.source));
        out
    }

    /// Lines let through since the start.
    pub fn logged(&self) -> u64 {
        self.logged
    }

    /// Lines held back since the start.
    pub fn suppressed(&self) -> u64 {
        self.suppressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rrp::router::EventKind;

    const A: Option<Address> = Some(Address(0x011c));
    const B: Option<Address> = Some(Address(0x0121));

    fn limiter() -> LogLimiter {
        LogLimiter::new(LogLimits {
            window_ms: 10_000,
            per_source: 3,
            per_kind: 5,
            sources: 4,
        })
    }

    #[test]
    fn a_burst_per_source_then_a_summary_when_the_window_ends() {
        let mut l = limiter();
        let admitted = (0..1000)
            .filter(|i| l.admit(*i, EventKind::BadPacket.name(), A))
            .count();
        assert_eq!(admitted, 3);
        assert!(l.expired(9_999).is_empty(), "the window has not ended");
        let s = l.expired(10_000);
        assert_eq!(
            s,
            vec![Suppressed {
                kind: "bad packet",
                source: Some(Source::Node(Address(0x011c))),
                count: 997,
                over_ms: 10_000,
            }]
        );
        assert_eq!(
            s[0].to_string(),
            "bad packet from 0x011c: ... and 997 more like it in the last 10 s (not logged; counted)"
        );
        // A new window: another burst.
        assert!(l.admit(10_001, EventKind::BadPacket.name(), A));
        assert_eq!((l.logged(), l.suppressed()), (4, 997));
    }

    #[test]
    fn kinds_and_sources_have_their_own_bursts() {
        let mut l = limiter();
        for _ in 0..3 {
            assert!(l.admit(0, EventKind::BadPacket.name(), A));
            assert!(l.admit(0, EventKind::RtRefused.name(), A));
        }
        assert!(!l.admit(0, EventKind::BadPacket.name(), A));
        assert!(l.admit(0, EventKind::BadPacket.name(), B), "another source");
    }

    #[test]
    fn many_sources_share_the_kinds_cap() {
        let mut l = limiter();
        let n = (0..100u16)
            .filter(|i| l.admit(0, EventKind::HrDown.name(), Some(Address(0x0100 + i))))
            .count();
        assert_eq!(n, 5, "the kind's cap");
        let s = l.expired(10_000);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!((s[0].source, s[0].count), (None, 95));
        assert!(
            s[0].to_string()
                .starts_with("HR down: ... and 95 more from several sources")
        );
    }

    #[test]
    fn sources_past_the_table_are_others() {
        let mut l = limiter();
        for i in 0..4u16 {
            assert!(l.admit(0, EventKind::NodeUp.name(), Some(Address(0x0200 + i))));
        }
        // The table is full: four more senders share the key "others" and
        // its burst of 3.
        let n = (0..4u16)
            .filter(|i| l.admit(0, EventKind::RtRefused.name(), Some(Address(0x0300 + i))))
            .count();
        assert_eq!(n, 3);
        let s = l.flush(1);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!((s[0].source, s[0].count), (Some(Source::Others), 1));
        assert!(s[0].to_string().contains("RT refused from other sources"));
    }

    #[test]
    fn flush_summarises_open_windows() {
        let mut l = limiter();
        for _ in 0..10 {
            l.admit(100, EventKind::BadPacket.name(), None);
        }
        let s = l.flush(2_500);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].count, 7);
        assert_eq!(s[0].source, Some(Source::Unknown));
        assert_eq!(
            s[0].to_string(),
            "bad packet: ... and 7 more like it in the last 3 s (not logged; counted)"
        );
        assert!(l.flush(2_600).is_empty());
    }

    #[test]
    fn events_without_a_source_are_summarised_without_one() {
        let mut l = LogLimiter::new(LogLimits {
            per_source: 3,
            ..LogLimits::default()
        });
        let admitted = (0..40)
            .filter(|i| l.admit(i * 100, EventKind::FibComputed.name(), None))
            .count();
        assert_eq!(admitted, 3);
        // A sender's events of the same kind keep their own burst and name.
        for _ in 0..4 {
            l.admit(0, EventKind::FibComputed.name(), A);
        }
        let s = l.expired(10_000);
        let lines: Vec<String> = s.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            lines,
            [
                "FIB computed from 0x011c: ... and 1 more like it in the last 10 s (not logged; counted)",
                "FIB computed: ... and 37 more like it in the last 10 s (not logged; counted)",
            ]
        );
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(33_310), "33,310");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    proptest! {
        /// Every event is either logged or counted in exactly one summary;
        /// no window logs more than its bursts.
        #[test]
        fn every_event_is_logged_or_summarised(
            events in proptest::collection::vec((0u64..30_000, 0u8..3, 0u16..8), 0..400),
        ) {
            let mut events = events;
            events.sort_by_key(|e| e.0);
            let kinds = [EventKind::BadPacket.name(), EventKind::RtRefused.name(), EventKind::HrDown.name()];
            let mut l = limiter();
            let mut summarised = 0u64;
            let mut logged = 0u64;
            for &(t, k, s) in &events {
                summarised += l.expired(t).iter().map(|x| x.count).sum::<u64>();
                logged += u64::from(l.admit(t, kinds[k as usize], Some(Address(s))));
            }
            summarised += l.flush(30_000).iter().map(|x| x.count).sum::<u64>();
            prop_assert_eq!(logged + summarised, events.len() as u64);
            prop_assert_eq!(logged, l.logged());
        }
    }
}
