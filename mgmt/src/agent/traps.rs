//! Traps (docs/management.md "Traps and notices"): an agent tells the manager of an
//! event with Trap(Notice), and repeats it until the manager answers with
//! TrapRepress of the same TID (UD management is unreliable), at most a
//! configured number of times. Traps are rate-limited (a flapping port or a
//! stream of bad keys cannot flood the manager); what is suppressed is
//! counted.
//!
//! Here are the queue of traps in flight ([`Traps`]) and the agent's trap
//! senders: port state (128), drops (129), M_Key violation (256), HR down
//! (1024), no address (1025, the announcement), RT limit (1026), a packet
//! refused by the SAN's authentication (1027).

use std::collections::VecDeque;

use rrp::wire::auth::AuthRefusal;
use rrp::{Address, NativeAddr, PortId};

use crate::agent::{Agent, AgentEvent, Incoming, Managed, Output, Time};
use crate::attr::{Notice, PortCounters, PortInfo};
use crate::wire::{MAD_LEN, MadRepr, Method, MgmtClass, Status};

/// Sources (SA and native address) of packets refused by the SAN's
/// authentication that the agent remembers, to send trap 1027 once per
/// source within `auth_trap_ms`: past it, the one trapped longest ago is
/// forgotten (a flood of forged sources is bounded by `traps_per_s`).
pub const AUTH_SOURCES_KEPT: usize = 256;

/// A trap waiting for its TrapRepress (or a Report of one waiting for its
/// ReportResp, `agent::subscribers`).
#[derive(Debug, Clone)]
pub struct Pending {
    /// Its TID.
    pub tid: u64,
    /// Its number (for logs).
    pub number: u16,
    /// Where it was sent: a Report's subscriber, repeated there; a trap's
    /// repeats go to the manager of the moment.
    pub to: Address,
    /// The MAD, sent again as it is.
    pub mad: Box<[u8; MAD_LEN]>,
    /// Times sent.
    pub sends: u32,
    /// When it is sent again.
    pub next: Time,
}

/// The traps in flight and the rate limit (the same queue, without the
/// limit, repeats an agent's Reports).
#[derive(Debug, Clone)]
pub struct Traps {
    /// Waiting for TrapRepress, oldest first.
    pub pending: VecDeque<Pending>,
    /// Tokens of the rate limit and when they were last refilled.
    tokens: u32,
    refilled: Time,
    /// Traps allowed per second.
    pub per_s: u32,
    /// Interval between repeats.
    pub resend_ms: Time,
    /// Sends of one trap at most.
    pub max_sends: u32,
    /// At most this many traps wait for TrapRepress; older ones are given up.
    pub max_pending: usize,
}

/// What [`Traps::due`] asks the agent to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// Send this MAD (again), first sent to this address.
    Send(Address, Box<[u8; MAD_LEN]>),
    /// This trap was sent its last time without a TrapRepress.
    GaveUp {
        /// Its number.
        number: u16,
        /// Where it went.
        to: Address,
    },
}

impl Traps {
    /// Traps at `per_s` per second, repeated every `resend_ms` up to
    /// `max_sends` times.
    pub fn new(per_s: u32, resend_ms: Time, max_sends: u32) -> Traps {
        Traps {
            pending: VecDeque::new(),
            tokens: per_s,
            refilled: 0,
            per_s,
            resend_ms,
            max_sends: max_sends.max(1),
            max_pending: 64,
        }
    }

    /// Whether a new trap may go out now (takes a token).
    pub fn allow(&mut self, now: Time) -> bool {
        let elapsed = now.saturating_sub(self.refilled);
        if elapsed >= 1000 {
            self.tokens = self.per_s;
            self.refilled = now;
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    /// A new trap sent now to `to`; returns the trap given up to make
    /// room (its number and destination), if any.
    pub fn sent(
        &mut self,
        now: Time,
        tid: u64,
        number: u16,
        to: Address,
        mad: &[u8; MAD_LEN],
    ) -> Option<(u16, Address)> {
        let dropped = (self.pending.len() >= self.max_pending)
            .then(|| self.pending.pop_front().map(|p| (p.number, p.to)))
            .flatten();
        self.pending.push_back(Pending {
            tid,
            number,
            to,
            mad: Box::new(*mad),
            sends: 1,
            next: now + self.resend_ms,
        });
        dropped
    }

    /// TrapRepress for `tid`: returns the trap's number if it was pending.
    pub fn repress(&mut self, tid: u64) -> Option<u16> {
        let i = self.pending.iter().position(|p| p.tid == tid)?;
        self.pending.remove(i).map(|p| p.number)
    }

    /// What is due at `now`: repeats, and traps given up.
    pub fn due(&mut self, now: Time) -> Vec<Due> {
        let mut out = Vec::new();
        let max = self.max_sends;
        let resend = self.resend_ms;
        self.pending.retain_mut(|p| {
            if p.next > now {
                return true;
            }
            if p.sends >= max {
                out.push(Due::GaveUp {
                    number: p.number,
                    to: p.to,
                });
                return false;
            }
            p.sends += 1;
            p.next = now + resend;
            out.push(Due::Send(p.to, p.mad.clone()));
            true
        });
        out
    }

    /// When the next repeat is due.
    pub fn next_timer(&self) -> Option<Time> {
        self.pending.iter().map(|p| p.next).min()
    }
}

// The trap senders: each builds its notice and hands it to `Agent::trap`,
// which sends it and keeps it until repressed.
impl Agent {
    /// A failed M_Key check: logged, and trap 256 to the manager.
    pub(super) fn violation(&mut self, now: Time, input: &Incoming<'_>, req: &MadRepr) {
        self.event(AgentEvent::MKeyViolation {
            from: input.src,
            class: req.class,
            method: req.method,
            attribute: req.attribute,
        });
        let issuer = self.issuer(input.port);
        let n = Notice::bad_mkey(
            issuer,
            input.src,
            req.method,
            req.class,
            req.attribute,
            req.modifier,
            req.mkey,
        );
        self.trap(now, n);
    }

    /// This node's address as a notice's issuer: the port's.
    pub(super) fn issuer(&self, port: PortId) -> Address {
        self.ports
            .get(port.index())
            .copied()
            .filter(|a| *a != Address::UNSPECIFIED)
            .or_else(|| {
                self.ports
                    .iter()
                    .copied()
                    .find(|a| *a != Address::UNSPECIFIED)
            })
            .unwrap_or(Address::UNSPECIFIED)
    }

    /// Sends a notice to the manager as Trap(Notice), repeated until
    /// repressed, and as Report(Notice) to every subscriber here whose
    /// subscription matches it, repeated until ReportResp
    /// (`agent::subscribers`). The rate limit bounds both.
    pub fn trap(&mut self, now: Time, mut notice: Notice) {
        // The producer is what this node is (1 host, 3 router).
        notice.producer_type = self.cfg.node_type as u32;
        let to = self.cfg.manager;
        if to == Address::UNSPECIFIED {
            self.stats.traps_no_manager += 1;
            if !self.subscribed(now, &notice) {
                return;
            }
        }
        if !self.traps.allow(now) {
            self.stats.traps_suppressed += 1;
            return;
        }
        if to != Address::UNSPECIFIED
            && let Some((tid, bytes)) = self.trap_mad(&notice)
        {
            let number = notice.trap_number;
            if let Some((old, _)) = self.traps.sent(now, tid, number, to, &bytes) {
                self.stats.traps_unanswered += 1;
                self.event(AgentEvent::TrapUnanswered { number: old });
            }
            self.stats.traps_sent += 1;
            self.event(AgentEvent::TrapSent { number, to });
            self.outputs.push_back(Output::Route {
                dst: to,
                mad: Box::new(bytes),
            });
        }
        self.report(now, &notice);
    }

    /// A port went down or up (trap 128).
    pub fn port_changed<M: Managed + ?Sized>(
        &mut self,
        now: Time,
        managed: &M,
        port: PortId,
        up: bool,
    ) {
        self.refresh_ports(managed);
        let hr = self.ports.get(port.index()).copied().unwrap_or_default();
        let n = Notice::port_state(
            self.issuer(port),
            port.index() as u8,
            if up { PortInfo::ACTIVE } else { PortInfo::DOWN },
            hr,
        );
        self.trap(now, n);
    }

    /// A neighbour HR is down (trap 1024).
    pub fn hr_down<M: Managed + ?Sized>(
        &mut self,
        now: Time,
        managed: &M,
        hr: Address,
        port: PortId,
    ) {
        self.refresh_ports(managed);
        let n = Notice::hr_down(self.issuer(port), hr, port.index() as u8);
        self.trap(now, n);
    }

    /// An RT limit was reached on `port` (trap 1026).
    pub fn rt_limit<M: Managed + ?Sized>(
        &mut self,
        now: Time,
        managed: &M,
        port: PortId,
        from: Address,
        which: u8,
        max: u32,
    ) {
        self.refresh_ports(managed);
        let n = Notice::rt_limit(self.issuer(port), from, port.index() as u8, which, max);
        self.trap(now, n);
    }

    /// A control packet from `native` with SA `from` failed the SAN's
    /// authentication on `port` for `why` (trap 1027): once per source (SA
    /// and native address) within `auth_trap_ms`, so that a box with a
    /// wrong key tells the manager once a minute, not once a packet.
    #[allow(clippy::too_many_arguments)]
    pub fn auth_refused<M: Managed + ?Sized>(
        &mut self,
        now: Time,
        managed: &M,
        port: PortId,
        from: Address,
        native: NativeAddr,
        why: AuthRefusal,
    ) {
        let window = self.cfg.auth_trap_ms;
        let source = (from, native);
        if self
            .auth_trapped
            .get(&source)
            .is_some_and(|t| now < t.saturating_add(window))
        {
            return;
        }
        if self.auth_trapped.len() >= AUTH_SOURCES_KEPT && !self.auth_trapped.contains_key(&source)
        {
            self.auth_trapped
                .retain(|_, t| now < t.saturating_add(window));
            if self.auth_trapped.len() >= AUTH_SOURCES_KEPT
                && let Some(oldest) = self
                    .auth_trapped
                    .iter()
                    .min_by_key(|(_, t)| **t)
                    .map(|(k, _)| *k)
            {
                self.auth_trapped.remove(&oldest);
            }
        }
        self.auth_trapped.insert(source, now);
        self.refresh_ports(managed);
        let n = Notice::auth_refused(self.issuer(port), from, port.index() as u8, why, &native);
        self.trap(now, n);
    }

    /// The Trap(Notice) MAD of `notice` with the next transaction id, and
    /// that id; none if it does not encode.
    fn trap_mad(&mut self, notice: &Notice) -> Option<(u64, [u8; MAD_LEN])> {
        self.notice_mad(MgmtClass::SUBN, Method::TRAP, notice)
    }

    /// A MAD of `method` carrying `notice` in `class` (Trap: Subn;
    /// Report: SubnAdm) with the next transaction id, and that id.
    pub(super) fn notice_mad(
        &mut self,
        class: MgmtClass,
        method: Method,
        notice: &Notice,
    ) -> Option<(u64, [u8; MAD_LEN])> {
        let mut data = vec![0u8; class.attribute_len()];
        notice.emit(&mut data).ok()?;
        let tid = self.next_tid;
        self.next_tid = self.next_tid.wrapping_add(1);
        let mad = MadRepr {
            class,
            class_version: 1,
            response: false,
            method,
            status: Status::OK,
            tid,
            attribute: Notice::ID,
            modifier: 0,
            mkey: 0,
            data,
            dr: None,
        };
        Some((tid, mad.to_bytes().ok()?))
    }

    /// Trap 1025 out of every port without an address, to every member of
    /// its SAN (docs/manager.md "Address assignment").
    pub(super) fn announce(&mut self) {
        for p in 0..self.ports.len() {
            if self.ports[p] != Address::UNSPECIFIED {
                continue;
            }
            let mut notice = Notice::no_address(self.cfg.identity, p as u8);
            notice.producer_type = self.cfg.node_type as u32;
            let Some((_, bytes)) = self.trap_mad(&notice) else {
                continue;
            };
            self.stats.announcements += 1;
            self.outputs.push_back(Output::Send {
                port: PortId::new(p),
                native: NativeAddr::NONE,
                dst: Address::BROADCAST,
                mad: Box::new(bytes),
            });
        }
    }

    /// Trap 129 for each port whose drops since the last check reach the
    /// threshold.
    pub(super) fn check_drops<M: Managed + ?Sized>(&mut self, now: Time, managed: &M) {
        let n = managed.ports();
        self.drops_seen.resize(n, u64::MAX);
        for p in (0..n).map(PortId::new) {
            let Some(c) = managed.counters(p) else {
                continue;
            };
            let drops: u64 = c.iter().skip(PortCounters::FIRST_DROP).sum();
            let before = std::mem::replace(&mut self.drops_seen[p.index()], drops);
            if before != u64::MAX && drops.saturating_sub(before) >= self.cfg.drop_threshold {
                let notice = Notice::drops(self.issuer(p), p.index() as u8, drops - before);
                self.trap(now, notice);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_until_repressed_or_given_up() {
        let mut t = Traps::new(10, 1_000, 3);
        assert!(t.allow(0));
        t.sent(0, 7, 128, Address(1), &[1; MAD_LEN]);
        assert_eq!(t.next_timer(), Some(1_000));
        assert!(t.due(999).is_empty());
        assert_eq!(
            t.due(1_000),
            vec![Due::Send(Address(1), Box::new([1; MAD_LEN]))]
        );
        assert_eq!(t.due(2_000).len(), 1);
        // Sent three times: given up at the next due time.
        assert_eq!(
            t.due(3_000),
            vec![Due::GaveUp {
                number: 128,
                to: Address(1)
            }]
        );
        assert!(t.pending.is_empty());
        // A repressed trap is not repeated.
        t.sent(4_000, 8, 256, Address(1), &[2; MAD_LEN]);
        assert_eq!(t.repress(9), None);
        assert_eq!(t.repress(8), Some(256));
        assert!(t.due(10_000).is_empty());
    }

    #[test]
    fn rate_limited_per_second() {
        let mut t = Traps::new(2, 1_000, 3);
        assert!(t.allow(0));
        assert!(t.allow(10));
        assert!(!t.allow(20));
        assert!(t.allow(1_020));
    }

    /// A node of one port at 0x0140, for the trap senders.
    struct One;

    impl Managed for One {
        fn ports(&self) -> usize {
            1
        }
        fn port(&self, _: PortId) -> Option<crate::agent::PortFacts> {
            Some(crate::agent::PortFacts {
                address: Address(0x0140),
                san_id: Address(0x0100),
                mtu: 1500,
                cost: 1,
                up: true,
                link_kind: 2,
                native: NativeAddr::NONE,
                lrt_entries: 0,
                buddies: 0,
            })
        }
        fn counters(&self, _: PortId) -> Option<Vec<u64>> {
            None
        }
        fn route(&self, _: PortId, _: Address) -> Option<rrp::router::FibEntry> {
            None
        }
        fn lrt(&self, _: PortId) -> Vec<crate::agent::LrtItem> {
            Vec::new()
        }
        fn set_port_up(&mut self, _: PortId, _: bool) -> Result<(), Status> {
            Ok(())
        }
        fn set_mtu(&mut self, _: PortId, _: u32) -> Result<(), Status> {
            Ok(())
        }
        fn set_cost(&mut self, _: PortId, _: u16) -> Result<(), Status> {
            Ok(())
        }
        fn clear_counters(&mut self, _: PortId) -> Result<(), Status> {
            Ok(())
        }
        fn set_name(&mut self, _: &str) {}
    }

    #[test]
    fn authentication_sources_are_remembered_within_a_bound() {
        let mut cfg = crate::agent::AgentConfig::new(crate::agent::NodeType::Router, 1, "a");
        cfg.manager = Address(0x0150);
        cfg.traps_per_s = u32::MAX;
        let mut a = Agent::new(cfg, 0);
        let refuse = |a: &mut Agent, now: Time, i: u16| {
            let native = NativeAddr::mac([2, 0, 0, 0, (i >> 8) as u8, i as u8]);
            a.auth_refused(
                now,
                &One,
                PortId::new(0),
                Address(0x0200),
                native,
                AuthRefusal::Missing,
            );
        };
        for i in 0..1_000 {
            refuse(&mut a, 0, i);
        }
        assert_eq!(a.auth_trapped.len(), AUTH_SOURCES_KEPT);
        assert_eq!(a.stats().traps_sent, 1_000, "each source new when it came");
        // Past the window, the ones of the window before are forgotten.
        refuse(&mut a, 60_000, 5_000);
        assert_eq!(a.auth_trapped.len(), 1);
    }

    #[test]
    fn bounded_in_flight() {
        let mut t = Traps::new(1_000, 1_000, 3);
        t.max_pending = 2;
        assert_eq!(t.sent(0, 1, 128, Address(1), &[0; MAD_LEN]), None);
        assert_eq!(t.sent(0, 2, 129, Address(1), &[0; MAD_LEN]), None);
        assert_eq!(
            t.sent(0, 3, 256, Address(1), &[0; MAD_LEN]),
            Some((128, Address(1)))
        );
        assert_eq!(t.pending.len(), 2);
    }
}
