//! Keyed authentication of the control packets on an HR's SAN
//! (docs/spec-notes.md 59): what the box signs, what it takes, and the
//! replay protection by each sender's sequence number.
//!
//! - An HR with keys signs every RRP, ERR and management packet it sends
//!   with its `send_key`, numbered from one box-wide counter that starts
//!   at [`RouterConfig::auth_seq_seed`](super::config::RouterConfig).
//! - It takes a packet signed with any key it holds whose digest verifies
//!   and whose sequence number it has not seen from that SA: higher than
//!   any seen, or one of the [`REPLAY_WINDOW`] below the highest that did
//!   not come yet (the IPsec anti-replay window, RFC 4303 3.4.3), so that
//!   a SAN that reorders a little loses nothing.
//! - Unsigned packets are refused (`missing`) unless `accept_unsigned`.
//! - An HR without keys takes signed packets unchecked (the record
//!   removed): a box that gets keys first does not cut off the others.

use crate::address::Address;
use crate::fxhash::FxHashMap;
use crate::kind::PacketType;
use crate::port::PortId;
use crate::router::event::Event;
use crate::wire::auth::{self, ALG_HMAC_SHA256, AuthRefusal};
use crate::wire::packet::Packet;

use super::engine::{Router, Time};

/// Sequence numbers below a sender's highest that may still come once.
pub const REPLAY_WINDOW: u64 = 64;

/// What one sender's sequence numbers were.
#[derive(Debug, Clone, Copy)]
struct Window {
    /// The highest taken.
    highest: u64,
    /// Bit i: `highest - i` was taken.
    seen: u64,
    /// When a packet of this sender was last taken.
    heard: Time,
}

impl Window {
    /// Whether `seq` may be taken (not seen, not too old).
    fn fresh(&self, seq: u64) -> bool {
        if seq > self.highest {
            return true;
        }
        let back = self.highest - seq;
        back < REPLAY_WINDOW && self.seen & (1 << back) == 0
    }

    /// Marks `seq` taken (it is [`Window::fresh`]).
    fn take(&mut self, seq: u64, now: Time) {
        if seq > self.highest {
            let shift = seq - self.highest;
            self.seen = if shift >= REPLAY_WINDOW {
                0
            } else {
                self.seen << shift
            };
            self.seen |= 1;
            self.highest = seq;
        } else {
            self.seen |= 1 << (self.highest - seq);
        }
        self.heard = now;
    }
}

/// The senders an HR heard signed packets from.
#[derive(Debug, Clone, Default)]
pub(super) struct Replay {
    senders: FxHashMap<Address, Window>,
}

impl Replay {
    /// Takes `seq` from `sa` if it is fresh; at most `cap` senders are
    /// remembered (the one heard longest ago is forgotten for a new one:
    /// only holders of a key get here).
    fn take(&mut self, now: Time, sa: Address, seq: u64, cap: usize) -> bool {
        if let Some(w) = self.senders.get_mut(&sa) {
            if !w.fresh(seq) {
                return false;
            }
            w.take(seq, now);
            return true;
        }
        if self.senders.len() >= cap.max(1)
            && let Some(oldest) = self
                .senders
                .iter()
                .min_by_key(|(_, w)| w.heard)
                .map(|(a, _)| *a)
        {
            self.senders.remove(&oldest);
        }
        self.senders.insert(
            sa,
            Window {
                highest: seq,
                seen: 1,
                heard: now,
            },
        );
        true
    }
}

/// A punted control packet after the SAN's authentication.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    /// Taken as it is (unsigned, on an HR that takes unsigned packets).
    AsIs,
    /// Taken: these are its bytes without the authentication record.
    Stripped(Vec<u8>),
    /// Refused (counted, and logged within the log's rate limit).
    Refused(AuthRefusal),
}

impl Router {
    /// Authenticates a control packet (RRP, ERR or management) that
    /// arrived on `port`, by the keys of that HR.
    pub fn admit(&mut self, now: Time, port: PortId, p: &Packet<&[u8]>) -> Admission {
        let Some(hr) = self.cfg.hrs.get(port) else {
            return Admission::AsIs;
        };
        let record = auth::record(p);
        let Some(cfg) = &hr.auth else {
            return match record {
                Some(r) if r.opl < 8 => {
                    self.stats.auth_unchecked += 1;
                    Admission::Stripped(auth::strip(p, r.opl))
                }
                _ => Admission::AsIs,
            };
        };
        let sa = p.header().src();
        let verdict = match record {
            None if cfg.accept_unsigned => {
                self.stats.auth_unsigned += 1;
                return Admission::AsIs;
            }
            None => Err(AuthRefusal::Missing),
            Some(r) if r.alg != ALG_HMAC_SHA256 || r.opl >= 8 => Err(AuthRefusal::Malformed),
            Some(r) => match cfg.key(r.key_id) {
                None => Err(AuthRefusal::UnknownKey),
                Some(k) if !auth::verify(p, &k.secret) => Err(AuthRefusal::BadDigest),
                Some(_) => {
                    let cap = self.cfg.limits.max_lrt;
                    if self.replay[port].take(now, sa, r.seq, cap) {
                        Ok(r.opl)
                    } else {
                        Err(AuthRefusal::Replay)
                    }
                }
            },
        };
        match verdict {
            Ok(opl) => {
                self.stats.auth_verified += 1;
                Admission::Stripped(auth::strip(p, opl))
            }
            Err(why) => {
                self.stats.auth_refused[why as usize] += 1;
                self.event(Event::AuthRefused {
                    port,
                    from: sa,
                    why,
                });
                Admission::Refused(why)
            }
        }
    }

    /// Signs `packet` (to be sent out of `port`) when that HR has keys:
    /// RRP, ERR and management packets only. Anything else, and every
    /// packet of an HR without keys, is left as it is.
    pub fn sign(&mut self, port: PortId, packet: &mut Vec<u8>) {
        let Some(cfg) = self.cfg.hrs.get(port).and_then(|h| h.auth.as_ref()) else {
            return;
        };
        let Some(key) = cfg.key(cfg.send_key) else {
            return;
        };
        let Ok(layout) = crate::wire::locate(packet, usize::MAX) else {
            return;
        };
        let pt = Packet::with_layout(&packet[..], layout)
            .map(|p| p.header().packet_type())
            .ok();
        if !matches!(
            pt,
            Some(PacketType::RRP | PacketType::ERR | PacketType::MANAGEMENT)
        ) {
            return;
        }
        self.auth_seq += 1;
        auth::sign(packet, layout, cfg.send_key, &key.secret, self.auth_seq);
    }

    /// Changes HR `port`'s keys at run time (a reload: a key rollover, or
    /// a SAN moving to authentication). What each sender sent is still
    /// remembered: a replay stays one across a rollover.
    pub fn set_auth(
        &mut self,
        port: PortId,
        auth: Option<super::config::AuthConfig>,
    ) -> Result<(), super::config::ConfigError> {
        let mut cfg = self.cfg.clone();
        let Some(h) = cfg.hrs.get_mut(port) else {
            return Err(super::config::ConfigError {
                field: "hrs".into(),
                why: format!("no port {port}"),
            });
        };
        h.auth = auth;
        cfg.validate()?;
        self.cfg = cfg;
        Ok(())
    }

    /// Whether HR `port` signs what it sends.
    pub fn signs(&self, port: PortId) -> bool {
        self.cfg.hrs.get(port).is_some_and(|h| h.auth.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_takes_each_number_once_and_not_the_too_old() {
        let mut r = Replay::default();
        let a = Address(0x0101);
        assert!(r.take(0, a, 100, 8));
        assert!(!r.take(0, a, 100, 8), "replayed");
        assert!(r.take(0, a, 98, 8), "late but in the window");
        assert!(!r.take(0, a, 98, 8));
        assert!(r.take(0, a, 101, 8));
        assert!(r.take(0, a, 99, 8));
        assert!(r.take(0, a, 200, 8));
        assert!(!r.take(0, a, 200 - REPLAY_WINDOW, 8), "out of the window");
        assert!(r.take(0, a, 201 - REPLAY_WINDOW, 8), "the window's last");
        assert!(!r.take(0, a, 101, 8));
        // Far ahead: the window empties.
        assert!(r.take(0, a, 10_000, 8));
        assert!(r.take(0, a, 9_999, 8));
    }

    #[test]
    fn senders_are_bounded_and_the_longest_silent_is_forgotten() {
        let mut r = Replay::default();
        for i in 0..4u16 {
            assert!(r.take(u64::from(i), Address(0x0100 + i), 10, 4));
        }
        assert!(r.take(9, Address(0x0100), 11, 4));
        assert!(r.take(10, Address(0x0200), 1, 4));
        assert_eq!(r.senders.len(), 4);
        assert!(!r.senders.contains_key(&Address(0x0101)), "heard at 1");
        assert!(r.senders.contains_key(&Address(0x0100)), "heard at 9");
    }
}
