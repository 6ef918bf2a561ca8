//! InformInfo (0x0003, SubnAdm): a subscription to the traps a SAN's master
//! manager receives, or to a node's own traps at its agent
//! (docs/management.md "Events", docs/spec-notes.md 73), InfiniBand's SA
//! InformInfo. A Set with Subscribe 1 subscribes the
//! requester (or renews its lease), a Delete (or a Set with Subscribe 0)
//! unsubscribes it; the master then forwards every matching notice to the
//! subscriber as Report(Notice), repeated until ReportResp. A Get reads the
//! `index`th subscription (modifier): what a standby copies.

use rrp::Address;

use crate::attr::{Notice, need, prepare};
use crate::error::Result;
use rrp::wire::bytes::{be16, be24, be32, put16, put24, put32};

/// Byte offsets of InformInfo.
pub mod field {
    /// The subscriber's address (answers; in a request, ignored: the
    /// requester subscribes itself).
    pub const SUBSCRIBER: usize = 0;
    /// Subscriptions in the manager's table (answers).
    pub const TOTAL: usize = 2;
    /// The first issuer address matched (IssuerAddress; [`super::ALL`]:
    /// every issuer), InfiniBand's LIDRangeBegin.
    pub const ISSUER_FIRST: usize = 4;
    /// The last issuer address matched, InfiniBand's LIDRangeEnd.
    pub const ISSUER_LAST: usize = 6;
    /// The TrapNumber matched ([`super::ALL`]: every trap).
    pub const TRAP_NUMBER: usize = 8;
    /// IsGeneric (bit 7) and Subscribe (bit 0).
    pub const FLAGS: usize = 10;
    /// The notice Type matched ([`super::ALL_TYPES`]: every type).
    pub const TYPE: usize = 11;
    /// The ProducerType matched (24 bits, then a reserved byte;
    /// [`super::ALL_PRODUCERS`]: every producer).
    pub const PRODUCER_TYPE: usize = 12;
    /// The lease in seconds: asked in a Set (0: the manager's default),
    /// granted in its answer, left in a Get's.
    pub const LEASE_S: usize = 16;
}

/// IssuerFirst or TrapNumber: every one.
pub const ALL: u16 = 0xFFFF;
/// Type: every type.
pub const ALL_TYPES: u8 = 0xFF;
/// ProducerType: every producer.
pub const ALL_PRODUCERS: u32 = 0x00FF_FFFF;
/// FLAGS: IsGeneric.
const GENERIC: u8 = 0x80;
/// FLAGS: Subscribe.
const SUBSCRIBE: u8 = 0x01;

/// InformInfo.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct InformInfo {
    /// The subscriber.
    pub subscriber: Address,
    /// Subscriptions in the manager's table (answers).
    pub total: u16,
    /// The first issuer matched ([`ALL`]: every issuer; the last is then
    /// ignored).
    pub issuer_first: Address,
    /// The last issuer matched.
    pub issuer_last: Address,
    /// The trap matched ([`ALL`]: every trap).
    pub trap_number: u16,
    /// IsGeneric: generic notices (every trap mwrouter sends is).
    pub is_generic: bool,
    /// Subscribe (1) or unsubscribe (0).
    pub subscribe: bool,
    /// The notice type matched ([`ALL_TYPES`]: every type).
    pub notice_type: u8,
    /// The producer matched ([`ALL_PRODUCERS`]: every producer).
    pub producer_type: u32,
    /// The lease in seconds.
    pub lease_s: u32,
}

impl Default for InformInfo {
    /// Every generic notice, subscribing, with the manager's default lease.
    fn default() -> Self {
        InformInfo {
            subscriber: Address::UNSPECIFIED,
            total: 0,
            issuer_first: Address(ALL),
            issuer_last: Address(ALL),
            trap_number: ALL,
            is_generic: true,
            subscribe: true,
            notice_type: ALL_TYPES,
            producer_type: ALL_PRODUCERS,
            lease_s: 0,
        }
    }
}

impl InformInfo {
    /// AttributeID (InfiniBand's SA InformInfo).
    pub const ID: u16 = 0x0003;
    /// Bytes of the layout (20 used).
    pub const LEN: usize = 64;

    /// Reads the attribute area (at least 64 bytes).
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "inform_info")?;
        let flags = area[field::FLAGS];
        Ok(InformInfo {
            subscriber: Address(be16(area, field::SUBSCRIBER)),
            total: be16(area, field::TOTAL),
            issuer_first: Address(be16(area, field::ISSUER_FIRST)),
            issuer_last: Address(be16(area, field::ISSUER_LAST)),
            trap_number: be16(area, field::TRAP_NUMBER),
            is_generic: flags & GENERIC != 0,
            subscribe: flags & SUBSCRIBE != 0,
            notice_type: area[field::TYPE],
            producer_type: be24(area, field::PRODUCER_TYPE),
            lease_s: be32(area, field::LEASE_S),
        })
    }

    /// Writes the attribute into `area` (at least 64 bytes), zeroing the
    /// rest; ProducerType keeps its low 24 bits.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        prepare(area, Self::LEN, "inform_info")?;
        put16(area, field::SUBSCRIBER, self.subscriber.0);
        put16(area, field::TOTAL, self.total);
        put16(area, field::ISSUER_FIRST, self.issuer_first.0);
        put16(area, field::ISSUER_LAST, self.issuer_last.0);
        put16(area, field::TRAP_NUMBER, self.trap_number);
        area[field::FLAGS] =
            if self.is_generic { GENERIC } else { 0 } | if self.subscribe { SUBSCRIBE } else { 0 };
        area[field::TYPE] = self.notice_type;
        put24(
            area,
            field::PRODUCER_TYPE,
            self.producer_type & ALL_PRODUCERS,
        );
        put32(area, field::LEASE_S, self.lease_s);
        Ok(())
    }

    /// Whether `notice` is one this subscription asks for: its issuer in
    /// the range, its trap, type, producer and IsGeneric as asked.
    pub fn matches(&self, notice: &Notice) -> bool {
        let issuer = self.issuer_first.0 == ALL
            || (self.issuer_first..=self.issuer_last).contains(&notice.issuer);
        issuer
            && (self.trap_number == ALL || self.trap_number == notice.trap_number)
            && (self.notice_type == ALL_TYPES || self.notice_type == notice.notice_type)
            && (self.producer_type & ALL_PRODUCERS == ALL_PRODUCERS
                || self.producer_type == notice.producer_type)
            && self.is_generic == notice.is_generic
    }

    /// What tells one subscription from another of the same subscriber:
    /// everything it matches on (a Set of the same renews the lease).
    pub fn filter(&self) -> InformInfo {
        InformInfo {
            total: 0,
            subscribe: true,
            lease_s: 0,
            producer_type: self.producer_type & ALL_PRODUCERS,
            issuer_last: if self.issuer_first.0 == ALL {
                Address(ALL)
            } else {
                self.issuer_last
            },
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes() {
        let r = InformInfo {
            subscriber: Address(0x0521),
            total: 2,
            issuer_first: Address(0x0500),
            issuer_last: Address(0x05FF),
            trap_number: 1024,
            is_generic: true,
            subscribe: true,
            notice_type: 1,
            producer_type: 3,
            lease_s: 60,
        };
        let mut area = [0xAAu8; 192];
        r.emit(&mut area).unwrap();
        assert_eq!(
            &area[..20],
            &[
                0x05, 0x21, 0, 2, 0x05, 0x00, 0x05, 0xFF, 0x04, 0x00, 0x81, 1, 0, 0, 3, 0, 0, 0, 0,
                60
            ]
        );
        assert!(area[20..].iter().all(|b| *b == 0));
        assert_eq!(InformInfo::parse(&area).unwrap(), r);
        assert!(InformInfo::parse(&area[..63]).is_err());
    }

    #[test]
    fn matching() {
        let hr_down = Notice::hr_down(Address(0x0511), Address(0x0531), 0);
        let mut n = hr_down.clone();
        n.producer_type = 3;
        let every = InformInfo::default();
        assert!(every.matches(&n));
        let only = InformInfo {
            trap_number: Notice::TRAP_HR_DOWN,
            issuer_first: Address(0x0500),
            issuer_last: Address(0x0510),
            ..InformInfo::default()
        };
        assert!(!only.matches(&n), "issuer out of range");
        let only = InformInfo {
            issuer_last: Address(0x0511),
            ..only
        };
        assert!(only.matches(&n));
        let other = InformInfo {
            trap_number: 128,
            ..InformInfo::default()
        };
        assert!(!other.matches(&n));
        let vendor = InformInfo {
            is_generic: false,
            ..InformInfo::default()
        };
        assert!(!vendor.matches(&n));
        let hosts = InformInfo {
            producer_type: 1,
            ..InformInfo::default()
        };
        assert!(!hosts.matches(&n));
        // The lease and Subscribe do not tell subscriptions apart.
        let a = InformInfo {
            lease_s: 5,
            subscribe: false,
            ..InformInfo::default()
        };
        assert_eq!(a.filter(), InformInfo::default().filter());
    }
}
