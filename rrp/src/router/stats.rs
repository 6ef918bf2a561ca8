//! [`RouterStats`]: the RRP engine's counters (docs/stats.md "Router-wide"),
//! declared once; the engine's per-port counts go into the ports'
//! [`PortStats`](crate::counters::PortStats) ([`Router::port_stats`]).
//!
//! [`Router::port_stats`]: super::Router::port_stats

use super::event::{AuthRefusal, RefusalCounts};

crate::counter_set! {
    /// Counters of the router engine.
    pub struct RouterStats in "rrp" {
        /// Control packets received (parsed or not).
        pub received: u64 => counter "received",
        /// Control packets that failed to parse.
        pub parse_errors: u64 => counter "parse_errors",
        /// Packets for this box that are not RRP or ERR.
        pub not_control: u64 => counter "not_control",
        /// Control packets sent.
        pub sent: u64 => counter "sent",
        /// RRP#9 messages received.
        pub rts_received: u64 => counter "rts_received",
        /// RTs taken (new or newer SN).
        pub rts_accepted: u64 => counter "rts_accepted",
        /// RTs whose hold timer an equal SN refreshed.
        pub rts_refreshed: u64 => counter "rts_refreshed",
        /// RTs deleted by hold expiry.
        pub rts_expired: u64 => counter "rts_expired",
        /// RTs deleted by HR-DOWN or LINK-DOWN.
        pub rts_deleted_down: u64 => counter "rts_deleted_down",
        /// RRP#9 messages sent (parts counted one by one).
        pub rts_sent: u64 => counter "rts_sent",
        /// Requests answered (RRP#1, #4, #6, #7, #8).
        pub requests_answered: u64 => counter "requests_answered",
        /// ERR UNK sent.
        pub err_unk_sent: u64 => counter "err_unk_sent",
        /// RRP#3 sent for redirect notices.
        pub redirects_sent: u64 => counter "redirects_sent",
        /// ERR GENERAL sent.
        pub err_general_sent: u64 => counter "err_general_sent",
        /// Error messages not sent: the failed packet was an ERR.
        pub errors_suppressed_err: u64 => counter "errors_suppressed_err",
        /// Error messages not sent: invalid source address (or, for a
        /// redirect, a source not in the ingress HR's LRT).
        pub errors_suppressed_source: u64 => counter "errors_suppressed_source",
        /// Error messages not sent: rate limit.
        pub errors_suppressed_rate: u64 => counter "errors_suppressed_rate",
        /// HR-DOWN events handled.
        pub hr_down: u64 => counter "hr_down",
        /// FIB computations that changed something.
        pub fib_versions: u64 => counter "fib_versions",
        /// Requests not answered: over the answer rate (per sender or in all).
        pub requests_limited: u64 => counter "requests_limited",
        /// Signed control packets whose signature verified.
        pub auth_verified: u64 => counter "auth_verified",
        /// Unsigned control packets taken by an HR with keys that accepts them.
        pub auth_unsigned: u64 => counter "auth_unsigned",
        /// Signed control packets taken unchecked by an HR without keys.
        pub auth_unchecked: u64 => counter "auth_unchecked",
        /// Control packets refused: unsigned, on an HR that asks for a signature.
        pub auth_refused_missing: u64 => counter "auth_refused_missing",
        /// Control packets refused: an authentication record of an unknown algorithm.
        pub auth_refused_malformed: u64 => counter "auth_refused_malformed",
        /// Control packets refused: signed with a key the HR does not hold.
        pub auth_refused_unknown_key: u64 => counter "auth_refused_unknown_key",
        /// Control packets refused: the digest is not the key's.
        pub auth_refused_bad_digest: u64 => counter "auth_refused_bad_digest",
        /// Control packets refused: a sequence number seen already or too old.
        pub auth_refused_replay: u64 => counter "auth_refused_replay",
        /// HR-DOWN and LINK-DOWN refused: the sender is no buddy of the HR.
        pub downs_not_buddy: u64 => counter "downs_not_buddy",
        /// HR-DOWN and LINK-DOWN refused: over limits.downs_per_source.
        pub downs_limited: u64 => counter "downs_limited",
        /// A third party's HR-DOWN about an HR that answered its last
        /// keepalive: the HR probed.
        pub hr_down_probes: u64 => counter "hr_down_probes",
        /// Probed HRs that answered: their HR-DOWN not taken.
        pub hr_down_disproved: u64 => counter "hr_down_disproved",
        /// RTs refused, by reason.
        pub rts_refused: RefusalCounts => counter "rts_refused" by "reason",
    }
}

impl RouterStats {
    /// The counter of control packets refused by authentication for `why`.
    pub fn auth_refused(&self, why: AuthRefusal) -> u64 {
        match why {
            AuthRefusal::Missing => self.auth_refused_missing,
            AuthRefusal::Malformed => self.auth_refused_malformed,
            AuthRefusal::UnknownKey => self.auth_refused_unknown_key,
            AuthRefusal::BadDigest => self.auth_refused_bad_digest,
            AuthRefusal::Replay => self.auth_refused_replay,
        }
    }

    /// Control packets refused by authentication, for every reason.
    pub fn auth_refused_total(&self) -> u64 {
        AuthRefusal::ALL.iter().map(|w| self.auth_refused(*w)).sum()
    }

    /// The counter of `why`, to count.
    pub fn auth_refused_mut(&mut self, why: AuthRefusal) -> &mut u64 {
        match why {
            AuthRefusal::Missing => &mut self.auth_refused_missing,
            AuthRefusal::Malformed => &mut self.auth_refused_malformed,
            AuthRefusal::UnknownKey => &mut self.auth_refused_unknown_key,
            AuthRefusal::BadDigest => &mut self.auth_refused_bad_digest,
            AuthRefusal::Replay => &mut self.auth_refused_replay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::CounterSet;

    /// The slot order is the stats area's (docs/stats.md "Router-wide").
    #[test]
    fn slots_in_the_documented_order() {
        assert_eq!(RouterStats::SLOTS, 32 + 11);
        let names = RouterStats::slot_names();
        assert_eq!(names[19], "requests_limited");
        assert_eq!(names[23], "auth_refused_missing");
        assert_eq!(names[31], "hr_down_disproved");
        assert_eq!(names[32], "rts_refused.unknown-sender");
        assert_eq!(names[42], "rts_refused.hr-full");
        for why in AuthRefusal::ALL {
            let mut s = RouterStats::default();
            *s.auth_refused_mut(why) += 1;
            assert_eq!(s.auth_refused(why), 1);
            assert_eq!(
                s.get(&format!("auth_refused_{}", why.name().replace('-', "_"))),
                Some(1)
            );
        }
    }
}
