//! Why a router dropped a packet: the forwarding path counts every drop
//! under one of these, per ingress port (docs/dataplane.md "Drop reasons");
//! the counters, captures, logs and the admin answers name them the same.

use crate::wire::packet::Fault;

crate::named_enum! {
    /// A drop reason: its name in counters, logs and captures, and its
    /// place in the counters (declaration order).
    pub enum DropReason counted by DropCounts {
        /// The buffer ends before the packet that DL describes (or before a
        /// header or an L2RH).
        Truncated = "truncated",
        /// EEP Version is not 5.
        BadVersion = "bad-version",
        /// EEP PL larger than 7 or than the data block.
        BadHeader = "bad-header",
        /// L2RH with L = 0, too short for a router hop, an egress that is not an
        /// HR of this box, or a native address the egress SAN cannot use.
        BadL2rh = "bad-l2rh",
        /// More than [`crate::limits::MAX_L2RHS`] leading L2RHs.
        TooManyL2rh = "too-many-l2rh",
        /// No FIB entry for the destination.
        NoRoute = "no-route",
        /// The L3 next hop is the native address the packet came from.
        Loop = "loop",
        /// Larger than the egress SAN's MTU as it would be transmitted.
        Mtu = "mtu",
        /// The egress queue refused the packet.
        TxFull = "tx-full",
        /// The punt ring for its class was full.
        PuntFull = "punt-full",
        /// The punt rate limit for its class was exceeded.
        PuntRate = "punt-rate",
        /// The egress port could not add its native header (no headroom).
        Encap = "encap",
        /// A group packet that failed the reverse-path check: not on the
        /// upstream HR for its source, not from the member that may put it on
        /// that SAN, or from a source the box does not know (docs/multicast.md).
        McastRpf = "mcast-rpf",
        /// A group packet with no branch to a member SAN from this box.
        McastPruned = "mcast-pruned",
        /// A control packet with the SA of a buddy or of this box from another
        /// native address: the control plane refused it (docs/spec-notes.md 60).
        SpoofedSource = "spoofed-source",
        /// A packet for this box from a source over its share of its punt
        /// class's budget (docs/dataplane.md "Punt classes").
        PuntSource = "punt-source",
        /// A packet its partition does not allow across this box: its
        /// source or destination is not a member of the partition its Free
        /// field names, both are limited members, or a sender on a SAN
        /// with partitions is not the node its SA names (docs/partitions.md
        /// "At the routers").
        Partition = "partition",
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
