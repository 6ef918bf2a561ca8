//! Which budget a packet for this box is handed to the control plane under
//! (docs/dataplane.md "Punt classes"; docs/spec-notes.md 61): each class has
//! its own rate limit and its own room between the worker and the control
//! thread, so that a flood in one class costs that class only, and the
//! control thread serves the classes in this order.

crate::named_enum! {
    /// A punt class: its name in counters and logs, and its place in the
    /// control thread's order of service (declaration order).
    pub enum PuntClass counted by PuntCounts {
        /// RRP and ERR packets from a buddy the HR knows, from the native
        /// address it learned for it: the routers' keepalive answers, RTs
        /// and HR-DOWNs, the control plane's lifeblood.
        Routing = "routing",
        /// RRP and ERR packets from anyone else: the nodes' requests, a
        /// newcomer's first answers to a sweep, strangers.
        Request = "request",
        /// Management datagrams (PT 0x0006): requests to the agent, the
        /// SAN managers' traffic, answers to this box's client.
        Management = "management",
        /// Every other packet for this box.
        Local = "local",
    }
}

impl PuntClass {
    /// Whether the sources of this class each get a share of its budget
    /// (docs/dataplane.md "Punt classes"): every class but `routing`, whose
    /// sources are the HR's buddies, few and known, and whose burst of RTs
    /// after a sweep is legitimate at any size.
    #[inline]
    pub const fn shared_by_source(self) -> bool {
        !matches!(self, PuntClass::Routing)
    }

    /// The class of a packet of type `pt` for this box; `from_buddy` says
    /// whether its SA is a buddy of the HR it arrived on, sent from that
    /// buddy's native address (asked only of RRP and ERR packets).
    #[inline]
    pub fn of(pt: crate::PacketType, from_buddy: impl FnOnce() -> bool) -> PuntClass {
        PuntClass::by_type(pt).refined(from_buddy)
    }

    /// The class as far as the packet type tells: RRP and ERR are `routing`
    /// until [`PuntClass::refined`] asks who sent them (the forwarding path
    /// decides this much in its hot loop and the rest where it punts).
    #[inline(always)]
    pub const fn by_type(pt: crate::PacketType) -> PuntClass {
        match pt {
            crate::PacketType::RRP | crate::PacketType::ERR => PuntClass::Routing,
            crate::PacketType::MANAGEMENT => PuntClass::Management,
            _ => PuntClass::Local,
        }
    }

    /// This class of [`PuntClass::by_type`] once the sender is known:
    /// `routing` stays so only when `from_buddy` says the sender is a buddy,
    /// else it is `request`; the other classes do not depend on the sender
    /// (`from_buddy` is not asked).
    #[inline]
    pub fn refined(self, from_buddy: impl FnOnce() -> bool) -> PuntClass {
        match self {
            PuntClass::Routing if !from_buddy() => PuntClass::Request,
            c => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketType;

    #[test]
    fn classes_by_packet_type_and_sender() {
        let buddy = || true;
        let other = || false;
        assert_eq!(PuntClass::of(PacketType::RRP, buddy), PuntClass::Routing);
        assert_eq!(PuntClass::of(PacketType::ERR, buddy), PuntClass::Routing);
        assert_eq!(PuntClass::of(PacketType::RRP, other), PuntClass::Request);
        assert_eq!(PuntClass::of(PacketType::ERR, other), PuntClass::Request);
        assert_eq!(
            PuntClass::of(PacketType::MANAGEMENT, buddy),
            PuntClass::Management
        );
        assert_eq!(PuntClass::of(PacketType::EMBEDDED, buddy), PuntClass::Local);
        assert_eq!(PuntClass::of(PacketType(0x0100), other), PuntClass::Local);
        assert_eq!(PuntClass::ALL[0], PuntClass::Routing);
        assert!(!PuntClass::Routing.shared_by_source());
        assert!(PuntClass::ALL[1..].iter().all(|c| c.shared_by_source()));
    }

    #[test]
    fn the_sender_is_asked_only_of_rrp_and_err() {
        for pt in [
            PacketType::MANAGEMENT,
            PacketType::EMBEDDED,
            PacketType(0x0800),
        ] {
            PuntClass::of(pt, || panic!("asked of {pt:?}"));
        }
    }
}
