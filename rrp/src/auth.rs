//! Keyed authentication of control packets (docs/spec-notes.md 59): the
//! keys of a SAN, what a sender signs, and the checks a receiver makes,
//! with the replay protection by each sender's sequence number. Shared by
//! the router engine (per HR) and the node side ([`crate::node::Node`]).
//!
//! - A member with keys signs every RRP, ERR and management packet it
//!   sends with its `send_key` and the next number of its counter.
//! - It takes a packet signed with any key it holds whose digest verifies
//!   and whose sequence number it has not seen from that SA: higher than
//!   any seen, or one of the [`REPLAY_WINDOW`] below the highest that did
//!   not come yet (the IPsec anti-replay window, RFC 4303 3.4.3), so that
//!   a SAN that reorders a little loses nothing.
//! - Unsigned packets are refused (`missing`) unless `accept_unsigned`.
//! - A member without keys takes signed packets unchecked (the record
//!   removed): a box that gets keys first does not cut off the others.

use crate::address::Address;
use crate::fxhash::FxHashMap;
use crate::kind::PacketType;
use crate::wire::auth::{self, ALG_HMAC_SHA256, AuthRefusal};
use crate::wire::packet::Packet;

/// Most keys one HR holds at a time (two in a rollover; room for one more).
pub const MAX_AUTH_KEYS: usize = 4;
/// Fewest bytes of a key's secret.
pub const MIN_SECRET_LEN: usize = 16;

/// One authentication key of a SAN.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthKey {
    /// Its Key ID on the wire.
    pub id: u16,
    /// The secret (HMAC-SHA-256 key), at least [`MIN_SECRET_LEN`] bytes.
    pub secret: Vec<u8>,
}

impl std::fmt::Debug for AuthKey {
    // The secret never reaches a log or a `Debug` dump.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthKey")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// An HR's authentication of RRP, ERR and management packets on its SAN
/// (docs/spec-notes.md 59).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    /// The keys accepted (a packet names its key by ID).
    pub keys: Vec<AuthKey>,
    /// The ID of the key packets are signed with.
    pub send_key: u16,
    /// Whether packets without a signature are taken too (while a SAN
    /// moves to authentication, box by box); signed ones are checked all
    /// the same.
    pub accept_unsigned: bool,
}

impl AuthConfig {
    /// The key with ID `id`.
    pub fn key(&self, id: u16) -> Option<&AuthKey> {
        self.keys.iter().find(|k| k.id == id)
    }

    /// Checks the keys; the error names the field (under `field`).
    pub fn validate(&self, field: &str) -> Result<(), crate::router::ConfigError> {
        let err = |f: String, why: &str| {
            Err(crate::router::ConfigError {
                field: f,
                why: why.to_string(),
            })
        };
        if self.keys.is_empty() || self.keys.len() > MAX_AUTH_KEYS {
            return err(format!("{field}.keys"), "must hold 1 to 4 keys");
        }
        for (i, k) in self.keys.iter().enumerate() {
            if k.secret.len() < MIN_SECRET_LEN {
                return err(
                    format!("{field}.keys[{i}].secret"),
                    "must be at least 16 bytes",
                );
            }
            if self.keys[..i].iter().any(|o| o.id == k.id) {
                return err(format!("{field}.keys[{i}].id"), "two keys with this ID");
            }
        }
        if self.key(self.send_key).is_none() {
            return err(format!("{field}.send_key"), "names no key of the list");
        }
        Ok(())
    }
}

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
    heard: u64,
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
    fn take(&mut self, seq: u64, now: u64) {
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
pub struct Replay {
    senders: FxHashMap<Address, Window>,
}

impl Replay {
    /// Takes `seq` from `sa` if it is fresh; at most `cap` senders are
    /// remembered (the one heard longest ago is forgotten for a new one:
    /// only holders of a key get here).
    pub fn take(&mut self, now: u64, sa: Address, seq: u64, cap: usize) -> bool {
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

/// What the checks made of a control packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Unsigned, and the member has no keys: taken as it is.
    Plain,
    /// Unsigned, taken by a member with keys that accepts unsigned packets.
    Unsigned,
    /// Signed, on a member without keys: these are its bytes without the
    /// record, unchecked.
    Unchecked(Vec<u8>),
    /// Signed and verified: its bytes without the record.
    Verified(Vec<u8>),
    /// Refused.
    Refused(AuthRefusal),
}

/// Checks control packet `p` from the SA in its header against `cfg` (the
/// member's keys, if any), remembering its sequence number in `replay`
/// (at most `cap` senders) when it is taken.
pub fn check<T: AsRef<[u8]>>(
    cfg: Option<&AuthConfig>,
    replay: &mut Replay,
    now: u64,
    p: &Packet<T>,
    cap: usize,
) -> Verdict {
    let record = auth::record(p);
    let Some(cfg) = cfg else {
        return match record {
            Some(r) if r.opl < 8 => Verdict::Unchecked(auth::strip(p, r.opl)),
            _ => Verdict::Plain,
        };
    };
    let r = match record {
        None if cfg.accept_unsigned => return Verdict::Unsigned,
        None => return Verdict::Refused(AuthRefusal::Missing),
        Some(r) => r,
    };
    if r.alg != ALG_HMAC_SHA256 || r.opl >= 8 {
        return Verdict::Refused(AuthRefusal::Malformed);
    }
    let Some(k) = cfg.key(r.key_id) else {
        return Verdict::Refused(AuthRefusal::UnknownKey);
    };
    if !auth::verify(p, &k.secret) {
        return Verdict::Refused(AuthRefusal::BadDigest);
    }
    if !replay.take(now, p.header().src(), r.seq, cap) {
        return Verdict::Refused(AuthRefusal::Replay);
    }
    Verdict::Verified(auth::strip(p, r.opl))
}

/// Signs `packet` (a whole packet: L2RHs, header, data, trailer) with
/// `cfg`'s send key and sequence number `seq` when it is an RRP, ERR or
/// management packet; returns whether it did.
pub fn sign(cfg: &AuthConfig, seq: u64, packet: &mut Vec<u8>) -> bool {
    let Some(key) = cfg.key(cfg.send_key) else {
        return false;
    };
    let Ok(layout) = crate::wire::locate(packet, usize::MAX) else {
        return false;
    };
    let pt = Packet::with_layout(&packet[..], layout)
        .map(|p| p.header().packet_type())
        .ok();
    if !matches!(
        pt,
        Some(PacketType::RRP | PacketType::ERR | PacketType::MANAGEMENT)
    ) {
        return false;
    }
    auth::sign(packet, layout, cfg.send_key, &key.secret, seq)
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
