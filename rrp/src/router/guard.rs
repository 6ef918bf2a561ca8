//! What a router takes from whom, by default and without keys
//! (docs/spec-notes.md 60, docs/rrp.md "What a router accepts"):
//!
//! - **Source check.** A control packet whose SA is a buddy this HR knows,
//!   or one of this box's own HRs, must come from that buddy's native
//!   address as the HR knows it (its keepalives, RRP#5, the static
//!   entries); this box's own addresses never come from the wire. Anything
//!   else is dropped as a spoofed source, counted per port and logged
//!   within the log's rate limit.
//! - **Strangers.** Packets for this box from a source the HR does not
//!   know (an SA not in its LRT, or a node's SA from another native
//!   address) are counted per port: an operator sees a stranger on a SAN.
//! - **Buddies only.** HR-DOWN and LINK-DOWN are taken only from routers
//!   the HR knows as buddies (RTs already are, `unknown-sender`), at most
//!   `limits.downs_per_source` per second from one sender.
//! - **Probe first.** A third party's HR-DOWN about an HR that answered
//!   its last keepalive (on any HR of this box) is taken only if that HR
//!   does not answer a probe (RRP#7) within `timers.probe_ms`.

use std::collections::BTreeMap;

use crate::DropReason;
use crate::address::Address;
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::router::event::Event;
use crate::wire::message::Message;

use super::engine::{Router, Time};

/// A probe of an HR that a third party said is down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Probe {
    /// Who said it is down.
    pub(super) from: Address,
    /// When the HR-DOWN is taken if no answer came.
    pub(super) deadline: Time,
}

/// What the source check made of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// A member the HR knows, from its native address.
    Known,
    /// A source the HR does not know: counted, taken.
    Stranger,
    /// A buddy's or this box's SA from elsewhere: dropped.
    Spoofed,
}

/// The probes in flight, by the HR probed.
pub(super) type Probes = BTreeMap<Address, Probe>;

impl Router {
    /// The source check of a packet with SA `sa` from `native` on `port`:
    /// counts strangers and spoofed packets (and logs the latter).
    pub(super) fn check_source(
        &mut self,
        port: PortId,
        sa: Address,
        native: &NativeAddr,
    ) -> Source {
        let verdict = if self.box_has(sa) {
            Source::Spoofed
        } else {
            match self.hrs[port].lrt.get(&sa) {
                Some(e) if e.native == *native => Source::Known,
                Some(e) if e.router => Source::Spoofed,
                _ => Source::Stranger,
            }
        };
        let i = port.index();
        match verdict {
            Source::Known => {}
            Source::Stranger => {
                if let Some(p) = self.port_stats.get_mut(i) {
                    p.strangers += 1;
                }
            }
            Source::Spoofed => {
                if let Some(p) = self.port_stats.get_mut(i) {
                    p.dropped[DropReason::SpoofedSource] += 1;
                }
                self.event(Event::Spoofed {
                    port,
                    from: sa,
                    native: *native,
                });
            }
        }
        verdict
    }

    /// Whether an HR-DOWN or LINK-DOWN from `sa` on `port` is taken: from a
    /// buddy of that HR, within the rate. Counts what is not.
    pub(super) fn take_down(&mut self, now: Time, port: PortId, sa: Address) -> bool {
        if !self.hrs[port].lrt.get(&sa).is_some_and(|e| e.router) {
            self.stats.downs_not_buddy += 1;
            return false;
        }
        if !self.downs.allow(now, sa) {
            self.stats.downs_limited += 1;
            return false;
        }
        true
    }

    /// An HR-DOWN about `x` from buddy `from`: taken at once, unless `x` is
    /// a router an HR of this box keeps alive that answered its last
    /// keepalive; then `x` is probed and the HR-DOWN taken at the probe's
    /// deadline if `x` did not answer.
    pub(super) fn hr_down_from(&mut self, now: Time, x: Address, from: Address) {
        if self.probes.contains_key(&x) {
            return; // probing already: the first HR-DOWN decides
        }
        if x == from {
            // An HR saying it is going down itself.
            self.hr_down(now, x, Some(from));
            return;
        }
        let alive = self.hrs.ids().find_map(|p| {
            let e = self.hrs[p].lrt.get(&x)?;
            (e.router && e.missed == 0 && !e.is_static && self.hrs[p].up).then_some((p, e.native))
        });
        let Some((port, native)) = alive else {
            self.hr_down(now, x, Some(from));
            return;
        };
        self.stats.hr_down_probes += 1;
        let wait = self.cfg.timers.probe_ms.min(self.cfg.timers.keepalive_ms);
        self.probes.insert(
            x,
            Probe {
                from,
                deadline: now + wait,
            },
        );
        self.event(Event::HrDownProbe {
            hr: x,
            from,
            answered: false,
        });
        self.send_msg(port, native, x, &Message::WhoAreYou, 0);
    }

    /// `x` answered (an RRP#5 from it): a probe of it ends, its HR-DOWN
    /// not taken.
    pub(super) fn probe_answered(&mut self, x: Address) {
        if let Some(p) = self.probes.remove(&x) {
            self.stats.hr_down_disproved += 1;
            self.event(Event::HrDownProbe {
                hr: x,
                from: p.from,
                answered: true,
            });
        }
    }

    /// Probes whose deadline passed: their HR-DOWNs are taken.
    pub(super) fn probes_due(&mut self, now: Time) {
        let due: Vec<(Address, Address)> = self
            .probes
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(x, p)| (*x, p.from))
            .collect();
        for (x, from) in due {
            self.probes.remove(&x);
            self.hr_down(now, x, Some(from));
        }
    }

    /// The earliest probe deadline.
    pub(super) fn next_probe(&self) -> Option<Time> {
        self.probes.values().map(|p| p.deadline).min()
    }
}
