//! Subscriptions at an agent (docs/management.md "Events", docs/spec-notes.md
//! 73): a node subscribes to another node's own traps at that node's agent,
//! with a SubnAdm Set of InformInfo addressed to it, when the node does not
//! run its SAN's master on the HR the Set arrives on (there the master's
//! table answers). The agent keeps its own table
//! ([`crate::subscriptions::Subscriptions`], bounded and leased by the
//! `manager_timers` of its configuration), and sends every trap it raises
//! that a subscription matches to the subscriber as Report(Notice), beside
//! the Trap to its manager, repeated every `report_retry_ms` until
//! ReportResp, at most `report_retries` times after the first.

use rrp::Address;

use crate::agent::traps::{Due, Traps};
use crate::agent::{Agent, AgentEvent, AgentStats, Output, Time};
use crate::attr::{InformInfo, Notice};
use crate::subscriptions::{Counters, SubscriptionEvent};
use crate::wire::{Method, MgmtClass, Status};

/// Reports waiting for their ReportResp at most; one more gives up the
/// oldest (`reports_given_up`).
pub const REPORTS_PENDING: usize = 64;

/// The queue that repeats an agent's Reports, from its configuration.
pub(super) fn queue(t: &crate::manager::ManagerTimers) -> Traps {
    let mut q = Traps::new(
        u32::MAX,
        t.report_retry_ms,
        t.report_retries.saturating_add(1),
    );
    q.max_pending = REPORTS_PENDING;
    q
}

impl Agent {
    /// The subscriptions at this agent.
    pub fn subscriptions(&self) -> impl Iterator<Item = &crate::subscriptions::Subscription> {
        self.subscriptions.iter()
    }

    /// A SubnAdm InformInfo request from `requester` that no master here
    /// answers: a Set subscribes (or renews; Subscribe 0 unsubscribes), a
    /// Delete unsubscribes. A Get is a master's only (a standby copies the
    /// SAN's table with it): `None`, dropped.
    pub(super) fn inform(
        &mut self,
        now: Time,
        requester: Address,
        method: Method,
        info: &InformInfo,
    ) -> Option<Result<InformInfo, Status>> {
        let (answer, events) = match method {
            Method::SET => self.subscriptions.set(
                now,
                requester,
                info,
                &self.cfg.manager_timers,
                &mut self.stats,
            ),
            Method::DELETE => self.subscriptions.delete(requester, info),
            _ => return None,
        };
        self.log_subscriptions(events);
        Some(answer)
    }

    /// Drops the subscriptions whose lease ran out by `now`.
    pub(super) fn expire_subscriptions(&mut self, now: Time) {
        let events = self.subscriptions.lapse(now, &mut self.stats);
        self.log_subscriptions(events);
    }

    fn log_subscriptions(&mut self, events: Vec<SubscriptionEvent>) {
        for e in events {
            self.event(AgentEvent::Subscription(e));
        }
    }

    /// Whether a subscription here matches `notice`.
    pub(super) fn subscribed(&mut self, now: Time, notice: &Notice) -> bool {
        self.expire_subscriptions(now);
        !self.subscriptions.matching(notice).is_empty()
    }

    /// Report(Notice) of `notice`, a trap this node raised, to every
    /// subscription here that matches it.
    pub(super) fn report(&mut self, now: Time, notice: &Notice) {
        self.expire_subscriptions(now);
        for to in self.subscriptions.matching(notice) {
            let Some((tid, bytes)) = self.notice_mad(MgmtClass::SUBN_ADM, Method::REPORT, notice)
            else {
                return;
            };
            let number = notice.trap_number;
            if let Some((old, subscriber)) = self.reports.sent(now, tid, number, to, &bytes) {
                self.stats.reports_given_up += 1;
                self.event(AgentEvent::ReportGivenUp {
                    subscriber,
                    trap: old,
                });
            }
            self.stats.reports_sent += 1;
            self.outputs.push_back(Output::Route {
                dst: to,
                mad: Box::new(bytes),
            });
        }
    }

    /// A ReportResp of TID `tid`: whether it answers a Report of this
    /// agent's (which then stops repeating).
    pub(super) fn report_answered(&mut self, tid: u64) -> bool {
        self.reports.repress(tid).is_some()
    }

    /// Repeats the Reports that are due, gives up those sent their last
    /// time, drops the subscriptions whose lease ran out.
    pub(super) fn reports_due(&mut self, now: Time) {
        for d in self.reports.due(now) {
            match d {
                Due::Send(to, mad) => {
                    self.stats.reports_retried += 1;
                    self.outputs.push_back(Output::Route { dst: to, mad });
                }
                Due::GaveUp { number, to } => {
                    self.stats.reports_given_up += 1;
                    self.event(AgentEvent::ReportGivenUp {
                        subscriber: to,
                        trap: number,
                    });
                }
            }
        }
        self.expire_subscriptions(now);
    }

    /// When a Report is repeated or a lease runs out next.
    pub(super) fn subscribers_timer(&self) -> Option<Time> {
        [self.reports.next_timer(), self.subscriptions.next_expiry()]
            .into_iter()
            .flatten()
            .min()
    }
}

/// The subscriptions here in the agent's counters.
impl Counters for AgentStats {
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
