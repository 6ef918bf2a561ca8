//! The router's side of keyed authentication (docs/spec-notes.md 59,
//! [`crate::auth`]): each HR checks what arrives with its SAN's keys and
//! signs what it sends, from one box-wide counter that starts at
//! [`RouterConfig::auth_seq_seed`](super::config::RouterConfig); refusals
//! are counted by reason and logged.

use crate::auth::{self as keyed, Verdict};
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::router::event::Event;
use crate::wire::auth::AuthRefusal;
use crate::wire::packet::Packet;

use super::engine::{Router, Time};

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
    /// arrived on `port` from `native`, by the keys of that HR. A refusal
    /// is counted by reason and reported ([`Event::AuthRefused`]).
    pub fn admit(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        p: &Packet<&[u8]>,
    ) -> Admission {
        let Some(hr) = self.cfg.hrs.get(port) else {
            return Admission::AsIs;
        };
        let cap = self.cfg.limits.max_lrt;
        match keyed::check(hr.auth.as_ref(), &mut self.replay[port], now, p, cap) {
            Verdict::Plain => Admission::AsIs,
            Verdict::Unsigned => {
                self.stats.auth_unsigned += 1;
                Admission::AsIs
            }
            Verdict::Unchecked(bytes) => {
                self.stats.auth_unchecked += 1;
                Admission::Stripped(bytes)
            }
            Verdict::Verified(bytes) => {
                self.stats.auth_verified += 1;
                Admission::Stripped(bytes)
            }
            Verdict::Refused(why) => {
                *self.stats.auth_refused_mut(why) += 1;
                let from = p.header().src();
                self.event(Event::AuthRefused {
                    port,
                    from,
                    native: *native,
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
        if keyed::sign(cfg, self.auth_seq + 1, packet) {
            self.auth_seq += 1;
        }
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
