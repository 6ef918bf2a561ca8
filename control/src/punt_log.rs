//! The daemon's log of floods of packets for the box (docs/daemon.md
//! "Logs", docs/dataplane.md "Punt classes"): the workers drop what is
//! over a source's share or a class's budget and count it; this turns the
//! heaviest sources that lose packets into log lines, within the log's
//! rate limit ([`LogLimiter`], keyed by the source's native address), so
//! that an operator reading the log learns of a flood and its source while
//! it happens, and a flood cannot fill the log.
//!
//! Sans-IO: the caller gives the time and the sources, and logs the lines.

use rrp::PuntSource;

use crate::log_limit::{LogLimiter, LogLimits, Source, Suppressed};

/// The kind of the lines, in the limiter and its summaries.
pub const KIND: &str = "packets for the box dropped";

/// How often the sources are looked at: a flood is logged within a second
/// of its start.
pub const EVERY_MS: u64 = 1_000;

/// The limit: one line a source a minute, then a summary of the looks held
/// back ("... and 59 more like it in the last 60 s"); the heaviest sources
/// are at most 16 at once.
pub const LIMITS: LogLimits = LogLimits {
    window_ms: 60_000,
    per_source: 1,
    per_kind: 16,
    sources: 64,
};

/// The log of floods.
#[derive(Debug)]
pub struct PuntLog {
    limiter: LogLimiter,
    next_ms: u64,
}

/// What to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A source losing packets now.
    Flood(PuntSource),
    /// Lines held back in a window that ended.
    Suppressed(Suppressed),
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Line::Flood(s) => write!(
                f,
                "{KIND}: {} on port {} sends {} a second for the box ({}), {} of them dropped \
                 over its share or the class's budget",
                s.source(),
                s.port,
                s.offered_per_s,
                s.class,
                s.dropped_per_s
            ),
            Line::Suppressed(s) => write!(f, "{s}"),
        }
    }
}

impl Default for PuntLog {
    fn default() -> Self {
        PuntLog {
            limiter: LogLimiter::new(LIMITS),
            next_ms: 0,
        }
    }
}

impl PuntLog {
    /// The lines for `sources` (the box's heaviest now) at `now_ms`: at most
    /// every [`EVERY_MS`], the summaries of the windows that ended, then one
    /// line for each source that lost packets and that the limit lets
    /// through.
    pub fn lines(&mut self, now_ms: u64, sources: &[PuntSource]) -> Vec<Line> {
        if now_ms < self.next_ms {
            return Vec::new();
        }
        self.next_ms = now_ms + EVERY_MS;
        let mut out: Vec<Line> = self
            .limiter
            .expired(now_ms)
            .into_iter()
            .map(Line::Suppressed)
            .collect();
        for s in sources.iter().filter(|s| s.dropped_per_s > 0) {
            if self
                .limiter
                .admit_from(now_ms, KIND, Source::Native(s.native, s.link))
            {
                out.push(Line::Flood(*s));
            }
        }
        out
    }

    /// When [`PuntLog::lines`] looks next (ms): asking the workers for
    /// their sources earlier is of no use.
    pub fn next_ms(&self) -> u64 {
        self.next_ms
    }

    /// The summaries of every open window (at shutdown).
    pub fn flush(&mut self, now_ms: u64) -> Vec<Line> {
        self.limiter
            .flush(now_ms)
            .into_iter()
            .map(Line::Suppressed)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::{LinkKind, NativeAddr, PortId, PuntClass};

    fn flooder(dropped: u64) -> PuntSource {
        PuntSource {
            class: PuntClass::Management,
            port: PortId(1),
            link: LinkKind::Udp,
            native: NativeAddr::udp("127.0.0.1:41822".parse().unwrap()),
            offered_per_s: 180_000,
            dropped_per_s: dropped,
        }
    }

    #[test]
    fn a_sustained_flood_is_a_line_and_a_summary_a_minute() {
        let mut log = PuntLog::default();
        let quiet = PuntSource {
            dropped_per_s: 0,
            ..flooder(0)
        };
        let mut lines = Vec::new();
        // Two minutes of flood, looked at every 100 ms as the stats thread
        // does, then its end.
        for t in (0..120_000).step_by(100) {
            lines.extend(log.lines(t, &[flooder(178_750), quiet]));
        }
        lines.extend(log.flush(120_000));
        let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
        assert_eq!(
            text[0],
            "packets for the box dropped: 127.0.0.1:41822 on port 1 sends 180000 a second for \
             the box (management), 178750 of them dropped over its share or the class's budget"
        );
        assert_eq!(text.len(), 4, "{text:?}");
        assert!(
            text[1].starts_with(
                "packets for the box dropped from 127.0.0.1:41822: ... and 59 more like it in the last 60 s"
            ),
            "{text:?}"
        );
        assert!(text[2].contains("sends 180000"), "{text:?}");
        assert!(text[3].contains("and 59 more like it"), "{text:?}");
    }

    #[test]
    fn a_short_flood_is_logged_and_quiet_sources_are_not() {
        let mut log = PuntLog::default();
        assert!(log.lines(0, &[]).is_empty());
        assert!(
            log.lines(500, &[flooder(5)]).is_empty(),
            "not yet time to look"
        );
        assert_eq!(log.lines(1_000, &[flooder(5)]).len(), 1);
        let quiet = PuntSource {
            dropped_per_s: 0,
            ..flooder(0)
        };
        assert!(log.lines(2_000, &[quiet]).is_empty());
    }
}
