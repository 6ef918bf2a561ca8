//! The engine's timers: sweeps, keepalives, refresh, expiry, batched
//! advertisement and FIB computation, driven by the host's explicit time.

use crate::address::Address;
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::wire::message::Message;

use super::engine::*;
use super::rt::*;

pub(super) const EXPIRY_CHECK_MS: Time = 1000;

impl Router {
    /// When [`Router::on_timer`] wants to run next.
    pub fn next_timer(&self) -> Time {
        let mut t = self.next_refresh.min(self.next_expiry);
        for h in self.hrs.iter().filter(|h| h.up) {
            t = t.min(h.next_sweep).min(h.next_keepalive);
            if !h.dirty.is_empty() || !h.full_to.is_empty() {
                t = t.min(self.next_adv);
            }
        }
        if self.fibs.dirty() || self.mcast_dirty {
            t = t.min(self.fib_at);
        }
        if let Some(p) = self.next_probe() {
            t = t.min(p);
        }
        if let Some(s) = self.next_standing_check() {
            t = t.min(s);
        }
        t
    }

    /// Runs every timer that is due at `now`.
    pub fn on_timer(&mut self, now: Time) {
        let tm = self.cfg.timers;
        self.probes_due(now);
        for p in self.hrs.ids() {
            if !self.hrs[p].up {
                continue;
            }
            if now >= self.hrs[p].next_sweep {
                self.hrs[p].next_sweep = now + tm.sweep_ms;
                self.send_msg(
                    p,
                    NativeAddr::none(),
                    Address::BROADCAST,
                    &Message::WhoAreYou,
                    0,
                );
            }
            if now >= self.hrs[p].next_keepalive {
                self.hrs[p].next_keepalive = now + tm.keepalive_ms;
                self.keepalives(now, p);
            }
        }
        if now >= self.next_expiry {
            self.next_expiry = now + EXPIRY_CHECK_MS;
            self.expire(now);
        }
        if now >= self.next_refresh {
            self.next_refresh = now + tm.refresh_ms;
            self.advertise(true);
            self.next_adv = now + tm.advertise_ms;
        } else if now >= self.next_adv {
            let pending = self
                .hrs
                .iter()
                .any(|h| !h.dirty.is_empty() || !h.full_to.is_empty());
            if pending {
                self.advertise(false);
                self.next_adv = now + tm.advertise_ms;
            }
        }
        if (self.fibs.dirty() || self.mcast_dirty) && now >= self.fib_at {
            if self.fibs.dirty() {
                let before = self.stats.fib_versions;
                self.compute_fib();
                if self.stats.fib_versions != before {
                    self.last_fib_change = now;
                }
            }
            // Group state follows RTs and LRTs even when no FIB row moved
            // (a node list with a new R4 under the same routes).
            self.mcast_dirty = false;
            if self.compute_mcast() {
                self.outputs
                    .push_back(Output::McastChanged(self.mcast.version));
            }
            self.fib_at = now + tm.fib_ms;
        }
        self.standing_due(now);
    }

    pub(super) fn expire(&mut self, now: Time) {
        let mut changed: Vec<(PortId, Address)> = Vec::new();
        for p in self.hrs.ids() {
            let h = &mut self.hrs[p];
            for (san, list) in h.learned.iter_mut() {
                let before = list.len();
                let senders_before = senders(list);
                list.retain(|l| l.expires > now);
                if list.len() != before {
                    recount(&mut h.per_buddy, &senders_before, list);
                    self.stats.rts_expired += (before - list.len()) as u64;
                    changed.push((p, *san));
                }
            }
            h.learned.retain(|_, l| !l.is_empty());
            h.parts.retain(|_, b| b.expires > now);
        }
        for (p, san) in changed {
            self.learned_changed(p, san);
        }
        let before = self.tombstones.len();
        self.tombstones.retain(|_, t| *t > now);
        if self.tombstones.len() != before {
            // RTs a tombstone refused may be good again: ask their senders
            // (as when a neighbour comes up) rather than wait for a refresh.
            for (p, b) in std::mem::take(&mut self.refused_tombstoned) {
                let Some(native) = self.hrs[p].lrt.get(&b).map(|e| e.native) else {
                    continue;
                };
                if self.hrs[p].up {
                    self.send_msg(p, native, b, &Message::RtRequest, 0);
                }
            }
        }
    }
}
