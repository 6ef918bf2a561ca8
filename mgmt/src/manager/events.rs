//! What a manager outputs: requests for its node to send, and events to
//! log.

use std::fmt;

use rrp::{Address, NativeAddr};

use crate::client::Request;
use crate::subscriptions::{Keeper, SubscriptionEvent};
use crate::wire::Status;

use super::{Control, SmState};

/// What the manager asks its node to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManagerOutput {
    /// Send this request; its answer goes to [`Manager::on_answer`](super::Manager::on_answer) with
    /// `id`.
    Request {
        /// The manager's handle.
        id: u64,
        /// The request.
        request: Request,
    },
    /// Something to log (every transition once, with the reason).
    Event(ManagerEvent),
}

/// What a manager reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManagerEvent {
    /// A transition, and why.
    State {
        /// From.
        from: SmState,
        /// To.
        to: SmState,
        /// Why.
        why: String,
    },
    /// A node without an address was given one (`again`: the one it had
    /// before).
    AddressAssigned {
        /// Its identity.
        identity: u64,
        /// The address.
        address: Address,
        /// Where it is on the SAN.
        native: NativeAddr,
        /// The address it had before.
        again: bool,
    },
    /// Two identities answered at one address within two sweeps.
    DuplicateAddress {
        /// The address.
        address: Address,
        /// The identity seen before, the one seen now.
        identities: [u64; 2],
    },
    /// A node without an address got none: the pool is used up.
    PoolExhausted {
        /// Its identity.
        identity: u64,
    },
    /// A multicast group was created.
    GroupCreated {
        /// The group.
        group: Address,
        /// Its MTU (bytes; 0: unlimited).
        mtu: u32,
    },
    /// A multicast group was deleted.
    GroupDeleted {
        /// The group.
        group: Address,
        /// The member records it had.
        members: usize,
    },
    /// A join was refused.
    JoinRefused {
        /// The group.
        group: Address,
        /// Who asked.
        member: Address,
        /// Why (the status answered).
        status: Status,
    },
    /// A member the sweeps no longer find lost its record.
    MemberPruned {
        /// The group.
        group: Address,
        /// The member.
        member: Address,
    },
    /// A member lost its record because the partitions in force no longer
    /// make it a member of its group's partition (docs/multicast.md
    /// "Groups in partitions").
    MemberOutOfPartition {
        /// The group.
        group: Address,
        /// The member.
        member: Address,
        /// The group's partition.
        partition: crate::partition::PartitionKey,
    },
    /// A change to the SAN's subscriptions (InformInfo).
    Subscription(SubscriptionEvent),
    /// A Report was given up: no ReportResp after every try.
    ReportGivenUp {
        /// The subscriber.
        subscriber: Address,
        /// The trap it reported.
        trap: u16,
    },
    /// A control Set refused (no SM key, or not valid in this state).
    ControlRefused {
        /// From whom.
        from: Address,
        /// What.
        control: Control,
        /// Why.
        why: &'static str,
    },
    /// The partitions it gives changed: `members` members' tables to set
    /// (as master; 0 otherwise).
    PartitionsChanged {
        /// The partitions in force now (the default one included).
        partitions: usize,
        /// Members whose table changes.
        members: usize,
    },
    /// A standby copied its master's partitions (docs/partitions.md
    /// "Standbys"): they are the ones it gives when it becomes master.
    PartitionsCopied {
        /// The master.
        master: Address,
        /// Their version (`Partitions::version`).
        version: u64,
        /// How many (the default one included).
        partitions: usize,
    },
    /// A standby's copy of its master's partitions was refused whole: the
    /// partitions it holds do not change.
    PartitionsCopyRefused {
        /// The master.
        master: Address,
        /// The copy's version.
        version: u64,
        /// Why (the first error).
        why: String,
    },
}

impl ManagerEvent {
    /// Its kind's name (the key of the daemon's log rate limit).
    pub const fn kind(&self) -> &'static str {
        match self {
            ManagerEvent::State { .. } => "manager state",
            ManagerEvent::AddressAssigned { .. } => "address assigned",
            ManagerEvent::DuplicateAddress { .. } => "duplicate address",
            ManagerEvent::PoolExhausted { .. } => "address pool exhausted",
            ManagerEvent::GroupCreated { .. } => "group created",
            ManagerEvent::GroupDeleted { .. } => "group deleted",
            ManagerEvent::JoinRefused { .. } => "join refused",
            ManagerEvent::MemberPruned { .. } => "member pruned",
            ManagerEvent::MemberOutOfPartition { .. } => "member out of partition",
            ManagerEvent::ControlRefused { .. } => "control refused",
            ManagerEvent::Subscription(e) => e.kind(),
            ManagerEvent::ReportGivenUp { .. } => "report given up",
            ManagerEvent::PartitionsChanged { .. } => "partitions changed",
            ManagerEvent::PartitionsCopied { .. } => "partitions copied",
            ManagerEvent::PartitionsCopyRefused { .. } => "partitions copy refused",
        }
    }

    /// The node whose request caused it, when a received packet did.
    pub const fn source(&self) -> Option<Address> {
        match self {
            ManagerEvent::JoinRefused { member, .. } => Some(*member),
            ManagerEvent::ControlRefused { from, .. } => Some(*from),
            ManagerEvent::Subscription(e) => e.source(),
            _ => None,
        }
    }
}

impl fmt::Display for ManagerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManagerEvent::State { from, to, why } => write!(f, "manager {from} -> {to}: {why}"),
            ManagerEvent::AddressAssigned {
                identity,
                address,
                native,
                again,
            } => write!(
                f,
                "manager: {address} given to node {identity:#018x} at {native}{}",
                if *again { " (its address before)" } else { "" }
            ),
            ManagerEvent::DuplicateAddress {
                address,
                identities,
            } => write!(
                f,
                "manager: duplicate address {address}: nodes {:#018x} and {:#018x} answer at it",
                identities[0], identities[1]
            ),
            ManagerEvent::PoolExhausted { identity } => write!(
                f,
                "manager: no address left in the pool for node {identity:#018x}"
            ),
            ManagerEvent::GroupCreated { group, mtu } => {
                write!(f, "manager: group {group} created, MTU {mtu}")
            }
            ManagerEvent::GroupDeleted { group, members } => {
                write!(
                    f,
                    "manager: group {group} deleted ({members} member records)"
                )
            }
            ManagerEvent::JoinRefused {
                group,
                member,
                status,
            } => write!(f, "manager: join of {member} to {group} refused: {status}"),
            ManagerEvent::MemberPruned { group, member } => {
                write!(
                    f,
                    "manager: {member} pruned from {group} (no longer on the SAN)"
                )
            }
            ManagerEvent::MemberOutOfPartition {
                group,
                member,
                partition,
            } => write!(
                f,
                "manager: {member} removed from {group}: no longer a member of its partition {partition}"
            ),
            ManagerEvent::Subscription(e) => write!(f, "{}", e.text(Keeper::Manager)),
            ManagerEvent::ReportGivenUp { subscriber, trap } => write!(
                f,
                "manager: report of trap {trap} to {subscriber} given up: no ReportResp"
            ),
            ManagerEvent::ControlRefused { from, control, why } => {
                write!(f, "manager: {} from {from} refused: {why}", control.name())
            }
            ManagerEvent::PartitionsChanged {
                partitions,
                members,
            } => write!(
                f,
                "manager: partitions changed ({partitions} in force): {members} members' tables to set"
            ),
            ManagerEvent::PartitionsCopied {
                master,
                version,
                partitions,
            } => write!(
                f,
                "manager: partitions copied from master {master} (version {version:#018x}, {partitions} partitions)"
            ),
            ManagerEvent::PartitionsCopyRefused {
                master,
                version,
                why,
            } => write!(
                f,
                "manager: copy of master {master}'s partitions (version {version:#018x}) refused, the partitions held do not change: {why}"
            ),
        }
    }
}
