//! Which budget a packet for this box is handed to the control plane under
//! (docs/dataplane.md "Punt classes"; docs/spec-notes.md 61): each class has
//! its own rate limit and its own room between the worker and the control
//! thread, so that a flood in one class costs that class only, and the
//! control thread serves the classes in this order.

crate::named_enum! {
    /// A punt class: its name in counters and logs, and its place in the
    /// control thread's order of service (declaration order).
    pub enum PuntClass counted by PuntCounts {
        /// RRP and ERR packets: the routers' keepalives, RTs and HR-DOWNs,
        /// and the nodes' requests.
        Routing = "routing",
        /// Management datagrams (PT 0x0006): requests to the agent, the
        /// SAN managers' traffic, answers to this box's client.
        Management = "management",
        /// Every other packet for this box.
        Local = "local",
    }
}

impl PuntClass {
    /// Whether the sources of this class each get a share of its budget
    /// (docs/dataplane.md "Punt classes"). Not yet `routing`: a buddy's
    /// burst of RTs is legitimate and must not be cut to one source's
    /// share, and the worker does not yet tell buddies from strangers.
    #[inline]
    pub const fn shared_by_source(self) -> bool {
        !matches!(self, PuntClass::Routing)
    }

    /// The class of a packet of type `pt` for this box.
    #[inline]
    pub const fn of(pt: crate::PacketType) -> PuntClass {
        match pt {
            crate::PacketType::RRP | crate::PacketType::ERR => PuntClass::Routing,
            crate::PacketType::MANAGEMENT => PuntClass::Management,
            _ => PuntClass::Local,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketType;

    #[test]
    fn classes_by_packet_type() {
        assert_eq!(PuntClass::of(PacketType::RRP), PuntClass::Routing);
        assert_eq!(PuntClass::of(PacketType::ERR), PuntClass::Routing);
        assert_eq!(PuntClass::of(PacketType::MANAGEMENT), PuntClass::Management);
        assert_eq!(PuntClass::of(PacketType::EMBEDDED), PuntClass::Local);
        assert_eq!(PuntClass::of(PacketType(0x0100)), PuntClass::Local);
        assert_eq!(PuntClass::ALL[0], PuntClass::Routing);
    }
}
