//! Why a router dropped a packet: the forwarding path counts every drop
//! under one of these, per ingress port (docs/dataplane.md "Drop reasons");
//! the counters, captures, logs and the admin answers name them the same.

use core::fmt;

use crate::wire::packet::Fault;

/// A drop reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer ends before the packet that DL describes (or before a
    /// header or an L2RH).
    Truncated = 0,
    /// EEP Version is not 5.
    BadVersion,
    /// EEP PL larger than 7 or than the data block.
    BadHeader,
    /// L2RH with L = 0, too short for a router hop, an egress that is not an
    /// HR of this box, or a native address the egress SAN cannot use.
    BadL2rh,
    /// More than [`crate::limits::MAX_L2RHS`] leading L2RHs.
    TooManyL2rh,
    /// No FIB entry for the destination.
    NoRoute,
    /// The L3 next hop is the native address the packet came from.
    Loop,
    /// Larger than the egress SAN's MTU as it would be transmitted.
    Mtu,
    /// The egress queue refused the packet.
    TxFull,
    /// The punt ring for its class was full.
    PuntFull,
    /// The punt rate limit for its class was exceeded.
    PuntRate,
    /// The egress port could not add its native header (no headroom).
    Encap,
    /// A group packet that failed the reverse-path check: not on the
    /// upstream HR for its source, not from the member that may put it on
    /// that SAN, or from a source the box does not know (docs/multicast.md).
    McastRpf,
    /// A group packet with no branch to a member SAN from this box.
    McastPruned,
    /// A control packet with the SA of a buddy or of this box from another
    /// native address: the control plane refused it (docs/spec-notes.md 60).
    SpoofedSource,
}

impl DropReason {
    /// Number of reasons.
    pub const COUNT: usize = 15;

    /// All reasons, in counter order.
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::Truncated,
        DropReason::BadVersion,
        DropReason::BadHeader,
        DropReason::BadL2rh,
        DropReason::TooManyL2rh,
        DropReason::NoRoute,
        DropReason::Loop,
        DropReason::Mtu,
        DropReason::TxFull,
        DropReason::PuntFull,
        DropReason::PuntRate,
        DropReason::Encap,
        DropReason::McastRpf,
        DropReason::McastPruned,
        DropReason::SpoofedSource,
    ];

    /// The reason's name in counters, logs and captures.
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::Truncated => "truncated",
            DropReason::BadVersion => "bad-version",
            DropReason::BadHeader => "bad-header",
            DropReason::BadL2rh => "bad-l2rh",
            DropReason::TooManyL2rh => "too-many-l2rh",
            DropReason::NoRoute => "no-route",
            DropReason::Loop => "loop",
            DropReason::Mtu => "mtu",
            DropReason::TxFull => "tx-full",
            DropReason::PuntFull => "punt-full",
            DropReason::PuntRate => "punt-rate",
            DropReason::Encap => "encap",
            DropReason::McastRpf => "mcast-rpf",
            DropReason::McastPruned => "mcast-pruned",
            DropReason::SpoofedSource => "spoofed-source",
        }
    }
}

impl From<Fault> for DropReason {
    /// The drop reason of a packet whose framing is malformed.
    #[inline(always)]
    fn from(f: Fault) -> DropReason {
        match f {
            Fault::Truncated(_) => DropReason::Truncated,
            Fault::ZeroL2rh => DropReason::BadL2rh,
            Fault::TooManyL2rhs => DropReason::TooManyL2rh,
            Fault::BadVersion => DropReason::BadVersion,
            Fault::BadPadLength => DropReason::BadHeader,
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_counter_order() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
    }
}
