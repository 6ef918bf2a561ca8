//! What a keeper of a subscription table reports of it (docs/management.md
//! "Events"): a subscription taken, ended, run out or refused. The agent
//! ([`AgentEvent::Subscription`](crate::agent::AgentEvent::Subscription))
//! and a SAN's master
//! ([`ManagerEvent::Subscription`](crate::manager::ManagerEvent::Subscription))
//! report the same events, each in its own words ([`Keeper`]).

use std::fmt;

use rrp::Address;

/// Who keeps a table: what its events' texts speak of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keeper {
    /// An agent: subscriptions to its node's own traps.
    Agent,
    /// A SAN's master: subscriptions to the SAN's events.
    Manager,
}

/// A change to a subscription table, for its keeper's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubscriptionEvent {
    /// A node subscribed (InformInfo Set); a renewal is not reported.
    Subscribed {
        /// The subscriber.
        subscriber: Address,
        /// The lease given, in seconds.
        lease_s: u32,
    },
    /// A node unsubscribed (InformInfo Delete, or Set with Subscribe 0).
    Unsubscribed {
        /// The subscriber.
        subscriber: Address,
    },
    /// A subscription's lease ran out.
    Expired {
        /// The subscriber.
        subscriber: Address,
    },
    /// A subscription refused: the table is full (`max_subscriptions`).
    Refused {
        /// Who asked.
        subscriber: Address,
    },
}

impl SubscriptionEvent {
    /// Its kind's name (the key of the daemon's log rate limit).
    pub const fn kind(&self) -> &'static str {
        match self {
            SubscriptionEvent::Subscribed { .. } => "subscribed",
            SubscriptionEvent::Unsubscribed { .. } => "unsubscribed",
            SubscriptionEvent::Expired { .. } => "subscription expired",
            SubscriptionEvent::Refused { .. } => "subscription refused",
        }
    }

    /// The subscriber it is about.
    pub const fn subscriber(&self) -> Address {
        match self {
            SubscriptionEvent::Subscribed { subscriber, .. }
            | SubscriptionEvent::Unsubscribed { subscriber }
            | SubscriptionEvent::Expired { subscriber }
            | SubscriptionEvent::Refused { subscriber } => *subscriber,
        }
    }

    /// The node whose request caused it: the subscriber, but for a lease
    /// that ran out.
    pub const fn source(&self) -> Option<Address> {
        match self {
            SubscriptionEvent::Expired { .. } => None,
            _ => Some(self.subscriber()),
        }
    }

    /// Its text as `keeper` logs it.
    pub const fn text(&self, keeper: Keeper) -> Text<'_> {
        Text {
            event: self,
            keeper,
        }
    }
}

/// An event's text in its keeper's words ([`SubscriptionEvent::text`]).
#[derive(Debug, Clone, Copy)]
pub struct Text<'a> {
    event: &'a SubscriptionEvent,
    keeper: Keeper,
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Keeper::{Agent, Manager};
        use SubscriptionEvent::{Expired, Refused, Subscribed, Unsubscribed};
        match (self.event, self.keeper) {
            (
                Subscribed {
                    subscriber,
                    lease_s,
                },
                Agent,
            ) => write!(
                f,
                "{subscriber} subscribed to this node's traps for {lease_s} s"
            ),
            (
                Subscribed {
                    subscriber,
                    lease_s,
                },
                Manager,
            ) => write!(
                f,
                "manager: {subscriber} subscribed to the SAN's events for {lease_s} s"
            ),
            (Unsubscribed { subscriber }, Agent) => {
                write!(f, "{subscriber} unsubscribed from this node's traps")
            }
            (Unsubscribed { subscriber }, Manager) => {
                write!(f, "manager: {subscriber} unsubscribed")
            }
            (Expired { subscriber }, Agent) => {
                write!(f, "the subscription of {subscriber} ran out")
            }
            (Expired { subscriber }, Manager) => {
                write!(f, "manager: the subscription of {subscriber} ran out")
            }
            (Refused { subscriber }, Agent) => write!(
                f,
                "subscription of {subscriber} refused: max_subscriptions reached"
            ),
            (Refused { subscriber }, Manager) => write!(
                f,
                "manager: subscription of {subscriber} refused: the SAN's bound is reached"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sources_and_texts() {
        let a = Address(0x0521);
        let cases = [
            (
                SubscriptionEvent::Subscribed {
                    subscriber: a,
                    lease_s: 60,
                },
                "subscribed",
                Some(a),
                "0x0521 subscribed to this node's traps for 60 s",
                "manager: 0x0521 subscribed to the SAN's events for 60 s",
            ),
            (
                SubscriptionEvent::Unsubscribed { subscriber: a },
                "unsubscribed",
                Some(a),
                "0x0521 unsubscribed from this node's traps",
                "manager: 0x0521 unsubscribed",
            ),
            (
                SubscriptionEvent::Expired { subscriber: a },
                "subscription expired",
                None,
                "the subscription of 0x0521 ran out",
                "manager: the subscription of 0x0521 ran out",
            ),
            (
                SubscriptionEvent::Refused { subscriber: a },
                "subscription refused",
                Some(a),
                "subscription of 0x0521 refused: max_subscriptions reached",
                "manager: subscription of 0x0521 refused: the SAN's bound is reached",
            ),
        ];
        for (e, kind, source, agent, manager) in cases {
            assert_eq!(e.kind(), kind);
            assert_eq!(e.subscriber(), a);
            assert_eq!(e.source(), source);
            assert_eq!(e.text(Keeper::Agent).to_string(), agent);
            assert_eq!(e.text(Keeper::Manager).to_string(), manager);
        }
    }
}
