//! A table of event subscriptions (docs/management.md "Events",
//! docs/spec-notes.md 73): InfiniBand's InformInfo, kept by subscriber and
//! filter, each with a lease. One table, two keepers: a SAN's master
//! manager (`manager::subscriptions`, for every trap it receives) and an
//! agent that does not run its SAN's master (`agent::subscribers`, for the
//! node's own traps). The table answers its keeper's requests, counts in
//! its keeper's counters ([`Counters`]) and gives it the events to log
//! ([`events`]); the bounds are [`ManagerTimers`]' `max_subscriptions`,
//! `lease_default_s` and `lease_max_s`.

pub mod events;

use std::collections::BTreeMap;

use rrp::Address;

use crate::attr::{InformInfo, Notice};
use crate::manager::ManagerTimers;
use crate::wire::Status;

pub use events::{Keeper, SubscriptionEvent};

/// Time in milliseconds since an arbitrary epoch (the host's clock).
pub type Time = u64;

/// One subscription: what it matches, and when its lease runs out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The record as granted (its lease the one given).
    pub info: InformInfo,
    /// When its lease runs out.
    pub expires: Time,
}

/// The fields a subscription matches on, as a key.
type FilterKey = (u16, u16, u16, bool, u8, u32);

fn key(subscriber: Address, i: &InformInfo) -> (Address, FilterKey) {
    let f = i.filter();
    (
        subscriber,
        (
            f.issuer_first.0,
            f.issuer_last.0,
            f.trap_number,
            f.is_generic,
            f.notice_type,
            f.producer_type,
        ),
    )
}

/// Why a Set was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The requester is not a node's address (answered "invalid value").
    NotNode,
    /// The table is full (answered SubnAdm's "no resources").
    Full,
}

impl Refusal {
    /// The status it is answered with.
    pub const fn status(self) -> Status {
        match self {
            Refusal::NotNode => Status::INVALID_VALUE,
            Refusal::Full => Status::SA_NO_RESOURCES,
        }
    }
}

/// The counters a keeper keeps of its table (docs/stats.md, the same
/// names in the agent's and in the manager's counters).
pub trait Counters {
    /// A new subscription (`subscriptions`); a renewal is not counted.
    fn subscribed(&mut self);
    /// A Set refused, for either [`Refusal`] (`subscriptions_refused`).
    fn refused(&mut self);
    /// A lease that ran out (`subscriptions_expired`).
    fn expired(&mut self);
}

/// A request's answer, and the events its keeper logs, in order.
pub type Outcome = (Result<InformInfo, Status>, Vec<SubscriptionEvent>);

/// Subscriptions by (subscriber, filter): a Set of the same renews it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscriptions {
    table: BTreeMap<(Address, FilterKey), Subscription>,
}

impl Subscriptions {
    /// The subscriptions, in table order.
    pub fn iter(&self) -> impl Iterator<Item = &Subscription> {
        self.table.values()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The table's size as an answer's Total.
    fn total(&self) -> u16 {
        self.table.len().min(usize::from(u16::MAX)) as u16
    }

    /// A SubnAdm Set of InformInfo from `requester`: with Subscribe 1,
    /// drops the leases run out by `now` ([`lapse`](Self::lapse)), then
    /// subscribes it or renews its subscription; with Subscribe 0, a
    /// [`delete`](Self::delete). A new subscription is reported; a refusal
    /// is counted, and reported when the table is full (a requester that
    /// is not a node's address is bad input: counted only).
    pub fn set(
        &mut self,
        now: Time,
        requester: Address,
        info: &InformInfo,
        limits: &ManagerTimers,
        counters: &mut impl Counters,
    ) -> Outcome {
        if !info.subscribe {
            return self.delete(requester, info);
        }
        let mut events = self.lapse(now, counters);
        let answer = match self.subscribe(now, requester, info, limits) {
            Ok((granted, fresh)) => {
                if fresh {
                    counters.subscribed();
                    events.push(SubscriptionEvent::Subscribed {
                        subscriber: requester,
                        lease_s: granted.lease_s,
                    });
                }
                Ok(granted)
            }
            Err(r) => {
                counters.refused();
                if r == Refusal::Full {
                    events.push(SubscriptionEvent::Refused {
                        subscriber: requester,
                    });
                }
                Err(r.status())
            }
        };
        (answer, events)
    }

    /// A SubnAdm Delete of InformInfo (or a Set with Subscribe 0) from
    /// `requester`: ends its subscription of the same filter, answered
    /// with the record and reported; "no records" when it has none.
    pub fn delete(&mut self, requester: Address, info: &InformInfo) -> Outcome {
        match self.unsubscribe(requester, info) {
            Ok(r) => (
                Ok(r),
                vec![SubscriptionEvent::Unsubscribed {
                    subscriber: requester,
                }],
            ),
            Err(status) => (Err(status), Vec::new()),
        }
    }

    /// Drops the subscriptions whose lease ran out by `now`: each counted
    /// and reported.
    pub fn lapse(&mut self, now: Time, counters: &mut impl Counters) -> Vec<SubscriptionEvent> {
        self.expire(now)
            .into_iter()
            .map(|subscriber| {
                counters.expired();
                SubscriptionEvent::Expired { subscriber }
            })
            .collect()
    }

    /// A Set with Subscribe 1 from `requester`: subscribes it, or renews
    /// the lease of the same subscription (the lease asked, 0: the
    /// default, at most the longest). Answers the record as granted (the
    /// subscriber, the lease given, the table's size) and whether it is a
    /// new subscription. [`set`](Self::set) expires the table first.
    fn subscribe(
        &mut self,
        now: Time,
        requester: Address,
        info: &InformInfo,
        limits: &ManagerTimers,
    ) -> Result<(InformInfo, bool), Refusal> {
        if !requester.is_node() {
            return Err(Refusal::NotNode);
        }
        let lease_s = match info.lease_s {
            0 => limits.lease_default_s,
            s => s.min(limits.lease_max_s),
        };
        let k = key(requester, info);
        let fresh = !self.table.contains_key(&k);
        if fresh && self.table.len() >= limits.max_subscriptions as usize {
            return Err(Refusal::Full);
        }
        let granted = InformInfo {
            subscriber: requester,
            lease_s,
            ..info.filter()
        };
        self.table.insert(
            k,
            Subscription {
                info: granted.clone(),
                expires: now + Time::from(lease_s) * 1000,
            },
        );
        Ok((
            InformInfo {
                total: self.total(),
                ..granted
            },
            fresh,
        ))
    }

    /// A Delete (or a Set with Subscribe 0) from `requester`: ends its
    /// subscription of the same filter, answered with the record; "no
    /// records" when it has none.
    fn unsubscribe(&mut self, requester: Address, info: &InformInfo) -> Result<InformInfo, Status> {
        let s = self
            .table
            .remove(&key(requester, info))
            .ok_or(Status::SA_NO_RECORDS)?;
        Ok(InformInfo {
            subscribe: false,
            total: self.total(),
            ..s.info
        })
    }

    /// Subscription `index` in table order among those alive at `now`,
    /// with the seconds left on its lease and their number; "no records"
    /// past the last.
    pub fn get(&self, now: Time, index: u32) -> Result<InformInfo, Status> {
        let live: Vec<&Subscription> = self.table.values().filter(|s| s.expires > now).collect();
        let s = live.get(index as usize).ok_or(Status::SA_NO_RECORDS)?;
        Ok(InformInfo {
            total: live.len().min(usize::from(u16::MAX)) as u16,
            lease_s: u32::try_from(s.expires.saturating_sub(now).div_ceil(1000))
                .unwrap_or(u32::MAX),
            ..s.info.clone()
        })
    }

    /// A copy of another keeper's record `r` (a standby copying its
    /// master's), its lease what is left, at most `lease_max_s`; a record
    /// whose subscriber is not a node is skipped.
    pub fn copy(&mut self, now: Time, r: &InformInfo, lease_max_s: u32) {
        if !r.subscriber.is_node() {
            return;
        }
        let lease_s = r.lease_s.min(lease_max_s);
        self.table.insert(
            key(r.subscriber, r),
            Subscription {
                expires: now + Time::from(lease_s) * 1000,
                info: InformInfo {
                    total: 0,
                    ..r.clone()
                },
            },
        );
    }

    /// Drops the subscriptions whose lease ran out by `now`; returns their
    /// subscribers.
    fn expire(&mut self, now: Time) -> Vec<Address> {
        let mut gone = Vec::new();
        self.table.retain(|_, s| {
            let keep = s.expires > now;
            if !keep {
                gone.push(s.info.subscriber);
            }
            keep
        });
        gone
    }

    /// When the next lease runs out.
    pub fn next_expiry(&self) -> Option<Time> {
        self.table.values().map(|s| s.expires).min()
    }

    /// The subscribers whose subscriptions match `notice`, one per
    /// matching subscription.
    pub fn matching(&self, notice: &Notice) -> Vec<Address> {
        self.table
            .values()
            .filter(|s| s.info.matches(notice))
            .map(|s| s.info.subscriber)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_renewed_unsubscribed_expired() {
        let limits = ManagerTimers {
            max_subscriptions: 1,
            ..ManagerTimers::default()
        };
        let mut t = Subscriptions::default();
        let every = InformInfo::default();
        let (g, fresh) = t.subscribe(0, Address(0x0521), &every, &limits).unwrap();
        assert!(fresh);
        assert_eq!((g.subscriber, g.lease_s, g.total), (Address(0x0521), 60, 1));
        // The same filter renews; another is past the bound.
        let longer = InformInfo {
            lease_s: 100_000,
            ..every.clone()
        };
        let (g, fresh) = t.subscribe(10, Address(0x0521), &longer, &limits).unwrap();
        assert!(!fresh);
        assert_eq!(g.lease_s, limits.lease_max_s);
        assert_eq!(
            t.subscribe(10, Address(0x0531), &every, &limits),
            Err(Refusal::Full)
        );
        assert_eq!(
            t.subscribe(10, Address::BROADCAST, &every, &limits),
            Err(Refusal::NotNode)
        );
        assert_eq!(t.get(10, 0).unwrap().lease_s, limits.lease_max_s);
        assert_eq!(t.get(10, 1), Err(Status::SA_NO_RECORDS));
        assert_eq!(
            t.unsubscribe(Address(0x0531), &every),
            Err(Status::SA_NO_RECORDS)
        );
        assert!(!t.unsubscribe(Address(0x0521), &every).unwrap().subscribe);
        assert!(t.is_empty());
        t.subscribe(0, Address(0x0521), &every, &limits).unwrap();
        assert_eq!(t.next_expiry(), Some(60_000));
        assert!(t.expire(59_999).is_empty());
        assert_eq!(t.expire(60_000), vec![Address(0x0521)]);
        assert!(t.is_empty());
    }

    #[derive(Default)]
    struct Counted {
        subscribed: u64,
        refused: u64,
        expired: u64,
    }

    impl Counters for Counted {
        fn subscribed(&mut self) {
            self.subscribed += 1;
        }
        fn refused(&mut self) {
            self.refused += 1;
        }
        fn expired(&mut self) {
            self.expired += 1;
        }
    }

    #[test]
    fn set_delete_lapse_counted_and_reported() {
        let limits = ManagerTimers {
            max_subscriptions: 1,
            ..ManagerTimers::default()
        };
        let mut t = Subscriptions::default();
        let mut c = Counted::default();
        let every = InformInfo {
            subscribe: true,
            ..InformInfo::default()
        };
        let a = Address(0x0521);
        let (r, e) = t.set(0, a, &every, &limits, &mut c);
        assert_eq!(r.unwrap().lease_s, 60);
        assert_eq!(
            e,
            vec![SubscriptionEvent::Subscribed {
                subscriber: a,
                lease_s: 60
            }]
        );
        // A renewal: neither counted nor reported.
        let (r, e) = t.set(10, a, &every, &limits, &mut c);
        assert!(r.is_ok() && e.is_empty());
        // Full: counted and reported; not a node: counted only.
        let (r, e) = t.set(10, Address(0x0531), &every, &limits, &mut c);
        assert_eq!(r, Err(Status::SA_NO_RESOURCES));
        assert_eq!(
            e,
            vec![SubscriptionEvent::Refused {
                subscriber: Address(0x0531)
            }]
        );
        let (r, e) = t.set(10, Address::BROADCAST, &every, &limits, &mut c);
        assert_eq!(r, Err(Status::INVALID_VALUE));
        assert!(e.is_empty());
        // Subscribe 0 ends it, as a Delete does; none left to end.
        let end = InformInfo {
            subscribe: false,
            ..every.clone()
        };
        let (r, e) = t.set(20, a, &end, &limits, &mut c);
        assert!(!r.unwrap().subscribe);
        assert_eq!(e, vec![SubscriptionEvent::Unsubscribed { subscriber: a }]);
        let (r, e) = t.delete(a, &every);
        assert_eq!(r, Err(Status::SA_NO_RECORDS));
        assert!(e.is_empty());
        // A lease run out is dropped before the next Set is taken.
        t.set(100_000, a, &every, &limits, &mut c).0.unwrap();
        assert!(t.lapse(160_000 - 1, &mut c).is_empty());
        let (r, e) = t.set(160_000, Address(0x0531), &every, &limits, &mut c);
        assert!(r.is_ok());
        assert_eq!(
            e,
            vec![
                SubscriptionEvent::Expired { subscriber: a },
                SubscriptionEvent::Subscribed {
                    subscriber: Address(0x0531),
                    lease_s: 60
                }
            ]
        );
        assert_eq!((c.subscribed, c.refused, c.expired), (3, 2, 1));
    }
}
