//! Event subscriptions (docs/management.md "Events", docs/spec-notes.md
//! 73): InfiniBand's InformInfo and Report. A node subscribes at its SAN's
//! master with a SubnAdm Set of InformInfo, for a lease; the master forwards
//! every trap it receives that the subscription matches to the subscriber as
//! Report(Notice), repeated every `report_retry_ms` until ReportResp, at most
//! `report_retries` times after the first. A Delete (or a Set with Subscribe
//! 0) ends a subscription, as does its lease running out. At most
//! `max_subscriptions` per SAN. Standbys copy them at every poll of the
//! master, so that a new master after a failover keeps forwarding. The
//! table itself is [`crate::subscriptions`], shared with the agent's.

use rrp::Address;

use crate::attr::{InformInfo, Notice};
use crate::client::{Answer, Failure, Request, Target};
use crate::subscriptions::{Counters, Subscription, SubscriptionEvent};
use crate::wire::{Method, MgmtClass, Status};

use super::{Manager, ManagerEvent, ManagerStats, Purpose, SmState, Time};

impl Manager {
    /// The subscriptions (a master's, or a standby's copy of its master's).
    pub fn subscriptions(&self) -> impl Iterator<Item = &Subscription> {
        self.subscriptions.iter()
    }

    /// A SubnAdm Set of InformInfo from `requester`: subscribes it (or
    /// renews the lease of the same subscription), or with Subscribe 0
    /// unsubscribes it. Answers the record as granted: the subscriber, the
    /// lease given, the table's size.
    pub fn inform_set(
        &mut self,
        now: Time,
        requester: Address,
        info: &InformInfo,
    ) -> Result<InformInfo, Status> {
        let (answer, events) =
            self.subscriptions
                .set(now, requester, info, &self.cfg.timers, &mut self.stats);
        self.log_subscriptions(events);
        answer
    }

    /// A SubnAdm Delete of InformInfo from `requester`: ends its
    /// subscription of the same filter ("no records" when it has none).
    pub fn inform_delete(
        &mut self,
        requester: Address,
        info: &InformInfo,
    ) -> Result<InformInfo, Status> {
        let (answer, events) = self.subscriptions.delete(requester, info);
        self.log_subscriptions(events);
        answer
    }

    /// A SubnAdm Get of InformInfo: subscription `index` (modifier) in
    /// table order, with the seconds left on its lease and the table's size;
    /// "no records" past the last.
    pub fn inform_get(&self, now: Time, index: u32) -> Result<InformInfo, Status> {
        self.subscriptions.get(now, index)
    }

    /// Drops the subscriptions whose lease ran out by `now`.
    pub(super) fn expire(&mut self, now: Time) {
        let events = self.subscriptions.lapse(now, &mut self.stats);
        self.log_subscriptions(events);
    }

    fn log_subscriptions(&mut self, events: Vec<SubscriptionEvent>) {
        for e in events {
            self.event(ManagerEvent::Subscription(e));
        }
    }

    /// A notice this node received as a trap: as master, a Report of it to
    /// every subscriber whose subscription matches it. Returns how many.
    pub fn forward(&mut self, now: Time, notice: &Notice) -> usize {
        if self.state != SmState::Master {
            return 0;
        }
        self.expire(now);
        let to: Vec<Address> = self.subscriptions.matching(notice);
        let mut data = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
        if notice.emit(&mut data).is_err() {
            return 0;
        }
        for subscriber in &to {
            self.stats.reports_sent += 1;
            let request = Request {
                target: Target::Address(*subscriber),
                class: MgmtClass::SUBN_ADM,
                method: Method::REPORT,
                attribute: Notice::ID,
                modifier: 0,
                mkey: 0,
                data: data.clone(),
                timeout_ms: self.cfg.timers.report_retry_ms,
                retries: self.cfg.timers.report_retries,
            };
            self.start(
                request,
                Purpose::Report {
                    to: *subscriber,
                    trap: notice.trap_number,
                },
            );
        }
        to.len()
    }

    /// A notice the master raises itself (an address given, a duplicate
    /// address): issued from its address, produced by its node, forwarded
    /// to the subscriptions it matches.
    pub(super) fn raise(&mut self, now: Time, mut notice: Notice) {
        notice.producer_type = self
            .own
            .as_ref()
            .map_or(Notice::PRODUCER_ROUTER, |o| u32::from(o.node_type));
        self.forward(now, &notice);
    }

    /// The end of a Report: answered (after how many tries), or given up.
    pub(super) fn on_report(&mut self, to: Address, trap: u16, result: &Result<Answer, Failure>) {
        match result {
            Ok(a) => self.stats.reports_retried += u64::from(a.tries.saturating_sub(1)),
            Err(f) => {
                if let Failure::Timeout { tries } = f {
                    self.stats.reports_retried += u64::from(tries.saturating_sub(1));
                }
                self.stats.reports_given_up += 1;
                self.event(ManagerEvent::ReportGivenUp {
                    subscriber: to,
                    trap,
                });
            }
        }
    }

    /// A standby copies its master's subscriptions: InformInfo `index`.
    pub(super) fn sync_informs(&mut self, master: Address, index: u32) {
        let request = Request {
            target: Target::Address(master),
            class: MgmtClass::SUBN_ADM,
            method: Method::GET,
            attribute: InformInfo::ID,
            modifier: index,
            mkey: 0,
            data: Vec::new(),
            timeout_ms: self.cfg.timers.timeout_ms,
            retries: self.cfg.timers.retries,
        };
        self.start(request, Purpose::SyncInform { master, index });
    }

    /// One of the master's subscriptions copied (or the end of them): the
    /// copy replaces the standby's once the last is read.
    pub(super) fn on_sync_inform(
        &mut self,
        now: Time,
        master: Address,
        index: u32,
        result: &Result<Answer, Failure>,
    ) {
        if self.state != SmState::Standby || self.master != Some(master) {
            return;
        }
        if index == 0 {
            self.synced_informs = Default::default();
        }
        let rec = match result {
            Ok(a) if a.mad.status == Status::OK => InformInfo::parse(&a.mad.data).ok(),
            Ok(a) if a.mad.status == Status::SA_NO_RECORDS => {
                self.finish_inform_sync();
                return;
            }
            _ => None,
        };
        let Some(r) = rec else { return };
        self.synced_informs
            .copy(now, &r, self.cfg.timers.lease_max_s);
        let bound = self.cfg.timers.max_subscriptions;
        if index.saturating_add(1) < u32::from(r.total) && index + 1 < bound {
            self.sync_informs(master, index + 1);
        } else {
            self.finish_inform_sync();
        }
    }

    fn finish_inform_sync(&mut self) {
        let copy = std::mem::take(&mut self.synced_informs);
        let synced = copy.len() as u64;
        self.subscriptions = copy;
        self.stats.synced += synced;
    }
}

/// The SAN's subscriptions in the manager's counters.
impl Counters for ManagerStats {
    fn subscribed(&mut self) {
        self.subscriptions += 1;
    }

    fn refused(&mut self) {
        self.subscriptions_refused += 1;
    }

    fn expired(&mut self) {
        self.subscriptions_expired += 1;
    }
}
