//! Ports going down and up, HR-DOWN and LINK-DOWN (Part-3 ERR 2 and 3),
//! and the tombstones that keep late re-advertisements of a downed HR out
//! (docs/spec-notes.md 44).

use std::collections::BTreeSet;

use crate::address::Address;
use crate::port::PortId;
use crate::router::event::Event;
use crate::wire::message::Message;

use super::engine::*;
use super::rt::*;

impl Router {
    /// HRs whose RTs are refused at `now` (tombstones not yet expired):
    /// while there are any, RTs through them are missing and the box may
    /// still change its routes when they lapse.
    pub fn tombstones(&self, now: Time) -> usize {
        self.tombstones.values().filter(|t| **t > now).count()
    }

    pub(super) fn tombstoned(&self, now: Time, a: Address) -> bool {
        self.tombstones.get(&a).is_some_and(|t| *t > now)
    }

    /// The port's link went down: its HR is down.
    pub fn port_down(&mut self, now: Time, port: PortId) {
        if !self.hrs[port].up {
            return;
        }
        let me = self.cfg.hrs[port].address;
        let h = &mut self.hrs[port];
        h.up = false;
        h.lrt.retain(|_, e| e.is_static);
        h.learned.clear();
        h.per_buddy.clear();
        h.advertised.clear();
        h.parts.clear();
        self.lrt_changed(port);
        self.fib_all_changed();
        self.event(Event::Port { port, up: false });
        // Tell the twins' buddies that routes through this HR are gone.
        self.hr_down(now, me, None);
        self.tombstones.remove(&me);
    }

    /// The port's link came up again.
    pub fn port_up(&mut self, now: Time, port: PortId) {
        if self.hrs[port].up {
            return;
        }
        let h = &mut self.hrs[port];
        h.up = true;
        h.next_sweep = now;
        h.next_keepalive = now + self.cfg.timers.keepalive_ms;
        self.lrt_changed(port);
        self.fib_all_changed();
        self.event(Event::Port { port, up: true });
    }

    /// HR `x` is down: delete every RT crossing it, relay ERR HRDOWN "up and
    /// down" (to the neighbours those RTs came from and went to), refuse RTs
    /// crossing it for a while.
    pub fn hr_down(&mut self, now: Time, x: Address, from: Option<Address>) {
        if from.is_some() && self.tombstoned(now, x) {
            return;
        }
        self.stats.hr_down += 1;
        // A buddy's own HRs see the downed HR answer keepalives again and
        // lift the tombstone then (or after a hold time); elsewhere it only
        // has to outlast the relay and the messages in flight.
        let buddy = self.hrs.iter().any(|h| h.lrt.contains_key(&x));
        let until = if buddy {
            self.cfg.timers.hold_ms
        } else {
            self.cfg.timers.tombstone_ms
        };
        self.tombstones.insert(x, now + until);
        let deleted = self.delete_where(
            x,
            from,
            |rcvf| rcvf.contains(&x),
            &Message::HrDown { hr: x },
        );
        self.event(Event::HrDown {
            hr: x,
            deleted,
            from,
        });
    }

    /// The link between `a` and `b` is down.
    pub fn link_down(&mut self, now: Time, a: Address, b: Address, from: Option<Address>) {
        let _ = now;
        let adjacent = |r: &[Address]| {
            r.windows(2)
                .any(|w| (w[0] == a && w[1] == b) || (w[0] == b && w[1] == a))
        };
        let deleted = self.delete_where(a, from, adjacent, &Message::LinkDown { a, b });
        self.event(Event::LinkDown { a, b, deleted });
    }

    pub(super) fn delete_where(
        &mut self,
        x: Address,
        from: Option<Address>,
        hit: impl Fn(&[Address]) -> bool,
        relay: &Message,
    ) -> usize {
        let mut up: BTreeSet<(PortId, Address)> = BTreeSet::new();
        let mut down_ports: BTreeSet<PortId> = BTreeSet::new();
        let mut deleted = 0;
        let mut changed_sans: Vec<(PortId, Address)> = Vec::new();
        for p in self.hrs.ids() {
            // A buddy that is itself the downed HR leaves this SAN's LRT.
            if self.hrs[p]
                .lrt
                .get(&x)
                .is_some_and(|e| !e.is_static && matches!(relay, Message::HrDown { .. }))
            {
                self.hrs[p].lrt.remove(&x);
                self.lrt_changed(p);
            }
            let h = &mut self.hrs[p];
            for (san, list) in h.learned.iter_mut() {
                let before = list.len();
                let senders_before = senders(list);
                list.retain(|l| {
                    let h = hit(&l.rcvf());
                    if h {
                        up.insert((p, l.from));
                    }
                    !h
                });
                if list.len() != before {
                    deleted += before - list.len();
                    changed_sans.push((p, *san));
                    recount(&mut h.per_buddy, &senders_before, list);
                }
            }
            self.hrs[p].learned.retain(|_, l| !l.is_empty());
            // What this HR advertised to its buddies across x went "down".
            let before = self.hrs[p].advertised.len();
            let twins: Vec<Address> = self.cfg.hrs.iter().map(|h| h.address).collect();
            self.hrs[p]
                .advertised
                .retain(|k, a| !hit(&k.rcvf(twins[k.twin().index()], a)));
            if self.hrs[p].advertised.len() != before {
                down_ports.insert(p);
            }
        }
        for (p, san) in changed_sans {
            self.learned_changed(p, san);
        }
        self.stats.rts_deleted_down += deleted as u64;
        let mut targets: BTreeSet<(PortId, Address)> = up;
        for p in down_ports {
            for b in self.buddies(p) {
                targets.insert((p, b));
            }
        }
        for (p, b) in targets {
            if Some(b) == from || b == x || !self.hrs[p].up {
                continue;
            }
            if let Some(native) = self.hrs[p].lrt.get(&b).map(|e| e.native) {
                self.send_msg(p, native, b, relay, 0);
            }
        }
        deleted
    }
}
