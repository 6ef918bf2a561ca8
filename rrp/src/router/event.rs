//! What the router engine reports: log events as values (the daemon turns
//! them into log lines) and counters.

use core::fmt;

use crate::address::Address;
use crate::error::Error;
use crate::port::PortId;
pub use crate::wire::auth::AuthRefusal;

crate::named_enum! {
    /// Why an RT was not taken; its name is the `reason` of the
    /// `rts_refused` counters.
    pub enum RtRefusal counted by RefusalCounts {
        /// The sender is neither a known buddy nor a twin.
        UnknownSender = "unknown-sender",
        /// The RT describes the receiving HR's own SAN.
        OwnSan = "own-san",
        /// Its RCVF holds an HR of this box (a loop).
        Loop = "loop",
        /// Its SN is older than the one held for the same RCVF.
        Stale = "stale",
        /// It crosses an HR that is down (tombstone).
        Tombstone = "tombstone",
        /// RCVF longer than the limit.
        RcvfTooLong = "rcvf-too-long",
        /// More node entries than the limit.
        TooManyNodes = "too-many-nodes",
        /// More RTs from this neighbour than the limit.
        TooManyRts = "too-many-rts",
        /// Its CSR or a node SR is not in the router-hop layout, or too long.
        BadRoute = "bad-route",
        /// A part of a multi-part RT that does not match the others.
        BadPart = "bad-part",
        /// The HR keeps as many RTs (from all its neighbours) as the limit.
        HrFull = "hr-full",
    }
}

/// A log event of the router engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A node answered on an HR's SAN for the first time.
    NodeUp {
        /// The HR's port.
        port: PortId,
        /// The node.
        node: Address,
        /// Whether it is a router HR (a buddy).
        router: bool,
    },
    /// A node stopped answering keepalives and was removed.
    NodeDown {
        /// The HR's port.
        port: PortId,
        /// The node.
        node: Address,
    },
    /// An HR is down (missed keepalives, port down, or ERR HRDOWN received).
    HrDown {
        /// The HR that is down.
        hr: Address,
        /// RTs deleted because they crossed it.
        deleted: usize,
        /// Who told us (None: detected here).
        from: Option<Address>,
    },
    /// A link is down (ERR LINKDOWN received).
    LinkDown {
        /// One end.
        a: Address,
        /// The other end.
        b: Address,
        /// RTs deleted.
        deleted: usize,
    },
    /// An RT was refused.
    RtRefused {
        /// The HR's port.
        port: PortId,
        /// The sender.
        from: Address,
        /// The SAN it describes.
        san: Address,
        /// Why.
        why: RtRefusal,
    },
    /// A packet for this box failed to parse.
    BadPacket {
        /// The port it came on.
        port: PortId,
        /// Its SA, when its EEP header could be read.
        from: Option<Address>,
        /// The error.
        error: Error,
    },
    /// New FIBs were computed.
    FibComputed {
        /// Their version.
        version: u64,
        /// Destinations routed: the most any HR's FIB holds.
        routes: usize,
    },
    /// A port went down or up.
    Port {
        /// The port.
        port: PortId,
        /// Up or down.
        up: bool,
    },
    /// A node's RRP#5 listed logical addresses that are not groups, twice,
    /// or more than a node may: what was kept.
    GroupsTrimmed {
        /// The port.
        port: PortId,
        /// The node.
        node: Address,
        /// Addresses it listed.
        listed: usize,
        /// Addresses kept.
        kept: usize,
    },
    /// A group packet from a router conflicted with this box's view of
    /// who forwards onto that SAN; the box asked it for its RTs.
    McastConflict {
        /// The port.
        port: PortId,
        /// The router HR asked.
        router: Address,
    },
    /// An RT limit was reached: RTs past it are refused (counted as
    /// [`Event::RtRefused`]); raised once until the limit is left again.
    RtLimit {
        /// The HR's port.
        port: PortId,
        /// The neighbour whose RT was refused first.
        from: Address,
        /// Which limit: [`RtRefusal::TooManyRts`] (per neighbour) or
        /// [`RtRefusal::HrFull`] (all of the HR's).
        limit: RtRefusal,
        /// The limit, in RTs.
        max: usize,
    },
    /// A control packet claimed the SA of a buddy or of this box and came
    /// from another native address: dropped (docs/spec-notes.md 60).
    Spoofed {
        /// The port it came on.
        port: PortId,
        /// The SA it claimed.
        from: Address,
        /// Where it came from.
        native: crate::native::NativeAddr,
    },
    /// A third party's HR-DOWN about an HR that answered its last
    /// keepalive: the HR is probed before its routes are deleted.
    HrDownProbe {
        /// The HR said to be down.
        hr: Address,
        /// Who said so.
        from: Address,
        /// Whether it answered (the HR-DOWN not taken) or the probe is sent.
        answered: bool,
    },
    /// A control packet failed the SAN's authentication (docs/spec-notes.md
    /// 59): counted, logged, and trapped to the manager (trap 1027,
    /// docs/management.md "Traps and notices").
    AuthRefused {
        /// The port it came on.
        port: PortId,
        /// Its SA (not proven: the packet did not authenticate).
        from: Address,
        /// The native address it came from.
        native: crate::native::NativeAddr,
        /// Why.
        why: AuthRefusal,
    },
}

/// The kinds of [`Event`], for what is counted or limited per kind (the
/// daemon's log rate limit, docs/daemon.md "Logging").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// [`Event::NodeUp`].
    NodeUp,
    /// [`Event::NodeDown`].
    NodeDown,
    /// [`Event::HrDown`].
    HrDown,
    /// [`Event::LinkDown`].
    LinkDown,
    /// [`Event::RtRefused`].
    RtRefused,
    /// [`Event::BadPacket`].
    BadPacket,
    /// [`Event::FibComputed`].
    FibComputed,
    /// [`Event::Port`].
    Port,
    /// [`Event::GroupsTrimmed`].
    GroupsTrimmed,
    /// [`Event::McastConflict`].
    McastConflict,
    /// [`Event::AuthRefused`].
    AuthRefused,
    /// [`Event::RtLimit`].
    RtLimit,
    /// [`Event::Spoofed`].
    Spoofed,
    /// [`Event::HrDownProbe`].
    HrDownProbe,
}

impl EventKind {
    /// Its name in log lines ("bad packet", "RT refused", ...).
    pub const fn name(self) -> &'static str {
        match self {
            EventKind::NodeUp => "node up",
            EventKind::NodeDown => "node down",
            EventKind::HrDown => "HR down",
            EventKind::LinkDown => "link down",
            EventKind::RtRefused => "RT refused",
            EventKind::BadPacket => "bad packet",
            EventKind::FibComputed => "FIB computed",
            EventKind::Port => "port up/down",
            EventKind::GroupsTrimmed => "groups trimmed",
            EventKind::McastConflict => "group conflict",
            EventKind::AuthRefused => "authentication refused",
            EventKind::RtLimit => "RT limit reached",
            EventKind::Spoofed => "spoofed source",
            EventKind::HrDownProbe => "HR-DOWN probe",
        }
    }
}

impl Event {
    /// Its kind.
    pub const fn kind(&self) -> EventKind {
        match self {
            Event::NodeUp { .. } => EventKind::NodeUp,
            Event::NodeDown { .. } => EventKind::NodeDown,
            Event::HrDown { .. } => EventKind::HrDown,
            Event::LinkDown { .. } => EventKind::LinkDown,
            Event::RtRefused { .. } => EventKind::RtRefused,
            Event::BadPacket { .. } => EventKind::BadPacket,
            Event::FibComputed { .. } => EventKind::FibComputed,
            Event::Port { .. } => EventKind::Port,
            Event::GroupsTrimmed { .. } => EventKind::GroupsTrimmed,
            Event::McastConflict { .. } => EventKind::McastConflict,
            Event::AuthRefused { .. } => EventKind::AuthRefused,
            Event::RtLimit { .. } => EventKind::RtLimit,
            Event::Spoofed { .. } => EventKind::Spoofed,
            Event::HrDownProbe { .. } => EventKind::HrDownProbe,
        }
    }

    /// The node whose packet caused it, when a received packet did: the
    /// sender of a bad packet, a refused RT or an ERR, the node that
    /// answered or listed groups.
    pub const fn source(&self) -> Option<Address> {
        match self {
            Event::NodeUp { node, .. } | Event::GroupsTrimmed { node, .. } => Some(*node),
            Event::HrDown { from, .. } | Event::BadPacket { from, .. } => *from,
            Event::RtRefused { from, .. }
            | Event::AuthRefused { from, .. }
            | Event::RtLimit { from, .. }
            | Event::Spoofed { from, .. }
            | Event::HrDownProbe { from, .. } => Some(*from),
            Event::McastConflict { router, .. } => Some(*router),
            Event::NodeDown { .. }
            | Event::LinkDown { .. }
            | Event::FibComputed { .. }
            | Event::Port { .. } => None,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::NodeUp { port, node, router } => write!(
                f,
                "port {port}: {} {node} up",
                if *router { "router HR" } else { "node" }
            ),
            Event::NodeDown { port, node } => write!(f, "port {port}: node {node} down"),
            Event::HrDown { hr, deleted, from } => match from {
                Some(a) => write!(f, "HR {hr} down (told by {a}): {deleted} RTs deleted"),
                None => write!(f, "HR {hr} down: {deleted} RTs deleted"),
            },
            Event::LinkDown { a, b, deleted } => {
                write!(f, "link {a}-{b} down: {deleted} RTs deleted")
            }
            Event::RtRefused {
                port,
                from,
                san,
                why,
            } => write!(
                f,
                "port {port}: RT of SAN {san} from {from} refused: {why:?}"
            ),
            Event::BadPacket { port, from, error } => match from {
                Some(a) => write!(f, "port {port}: bad packet from {a}: {error}"),
                None => write!(f, "port {port}: bad packet: {error}"),
            },
            Event::FibComputed { version, routes } => {
                write!(f, "FIB version {version}: {routes} destinations")
            }
            Event::Port { port, up } => {
                write!(f, "port {port} {}", if *up { "up" } else { "down" })
            }
            Event::GroupsTrimmed {
                port,
                node,
                listed,
                kept,
            } => write!(
                f,
                "port {port}: node {node} listed {listed} logical addresses, {kept} kept"
            ),
            Event::McastConflict { port, router } => write!(
                f,
                "port {port}: group packets from {router} conflict with this box's routes: RTs asked again"
            ),
            Event::RtLimit {
                port,
                from,
                limit,
                max,
            } => match limit {
                RtRefusal::HrFull => write!(
                    f,
                    "port {port}: the HR holds {max} RTs (limits.max_rts_per_hr): new RTs refused, first from {from}"
                ),
                _ => write!(
                    f,
                    "port {port}: {from} sent {max} RTs (limits.max_rts_per_neighbour): its new RTs refused"
                ),
            },
            Event::Spoofed { port, from, native } => write!(
                f,
                "port {port}: control packet with SA {from} from {native}, not its native address: dropped (spoofed source)"
            ),
            Event::HrDownProbe {
                hr,
                from,
                answered: false,
            } => write!(
                f,
                "HR-DOWN of {hr} from {from}: {hr} answered its last keepalive, probing it first"
            ),
            Event::HrDownProbe {
                hr,
                from,
                answered: true,
            } => write!(
                f,
                "HR-DOWN of {hr} from {from} not taken: {hr} answered the probe"
            ),
            Event::AuthRefused {
                port,
                from,
                native,
                why,
            } => write!(
                f,
                "port {port}: control packet with SA {from} from {native} refused: authentication {}",
                why.name()
            ),
        }
    }
}
