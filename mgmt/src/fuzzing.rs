//! The fuzz body, shared by the cargo-fuzz target `mad` under `fuzz/` and by
//! the test that replays the checked-in corpus (`mgmt/tests/fuzz_corpus.rs`),
//! so that the stable test suite runs the same checks.
//!
//! Arbitrary bytes are read as a MAD (the whole input, and its first 256
//! bytes), as an EEP packet carrying a MAD, and as every attribute area;
//! whatever parses must emit again and parse back to the same value, and
//! every error must name a field and point inside the input.

use crate::attr::{
    Attribute, ClassPortInfo, FibBlock, LrtBlock, NodeDescription, NodeInfo, Notice, PortCounters,
    PortInfo, RouteEntry, SmInfo,
};
use crate::error::Error;
use crate::wire::{MAD_LEN, Mad, MadRepr, MgmtClass, mad_in};

/// An error names its field and points at most one past the end of the
/// `len`-byte buffer it was found in.
fn check_error(e: &Error, len: usize) {
    assert!(!e.field.is_empty(), "error without a field: {e:?}");
    assert!(
        e.offset <= len,
        "error offset past the buffer ({len}): {e:?}"
    );
}

/// A MAD's bytes: the view agrees with the owned form, emit-then-parse is
/// the identity, the known attribute parses and round-trips.
fn one_mad(b: &[u8]) {
    let view = match Mad::new_checked(b) {
        Ok(v) => v,
        Err(e) => {
            check_error(&e, b.len());
            return;
        }
    };
    match MadRepr::parse(&view) {
        Ok(m) => {
            assert_eq!(m.class, view.class());
            assert_eq!(m.tid, view.tid());
            assert_eq!(m.data, view.attribute_data());
            let bytes = m.to_bytes().expect("a parsed MAD emits");
            let again =
                MadRepr::parse(&Mad::new_checked(&bytes[..]).expect("re-view")).expect("re-parse");
            assert_eq!(again, m);
            attribute(m.class, m.attribute, &m.data);
        }
        Err(e) => check_error(&e, b.len()),
    }
}

/// Attribute `id` of `class` over `area`, when the class has it.
fn attribute(class: MgmtClass, id: u16, area: &[u8]) {
    match Attribute::parse(class, id, area) {
        Ok(Some(a)) => {
            assert_eq!(a.id(), id);
            let mut out = vec![0u8; area.len()];
            a.emit(&mut out).expect("a parsed attribute emits");
            assert_eq!(
                Attribute::parse(class, id, &out).expect("re-parse"),
                Some(a)
            );
        }
        Ok(None) => {}
        Err(e) => check_error(&e, area.len()),
    }
}

/// Every attribute over the bytes, as a Subn (64-byte) and a Perf
/// (192-byte) area would hold them.
fn every_attribute(data: &[u8]) {
    let smp = &data[..data.len().min(64)];
    let perf = &data[..data.len().min(192)];
    for id in [
        ClassPortInfo::ID,
        Notice::ID,
        NodeDescription::ID,
        NodeInfo::ID,
        PortInfo::ID,
        SmInfo::ID,
        RouteEntry::ID,
        FibBlock::ID,
        LrtBlock::ID,
    ] {
        attribute(MgmtClass::SUBN, id, smp);
    }
    attribute(MgmtClass::PERF, PortCounters::ID, perf);
    attribute(MgmtClass::PERF, ClassPortInfo::ID, perf);
}

/// The body: `data` as a MAD, its first 256 bytes as a MAD, an EEP packet
/// carrying a MAD, and every attribute area.
pub fn mad(data: &[u8]) {
    one_mad(data);
    if data.len() > MAD_LEN {
        one_mad(&data[..MAD_LEN]);
    }
    match rrp::wire::Packet::new_checked(data, usize::MAX) {
        Ok(p) => match mad_in(&p) {
            Ok(m) => one_mad(m.as_bytes()),
            Err(e) => check_error(&e, data.len()),
        },
        Err(e) => assert!(e.offset <= data.len()),
    }
    every_attribute(data);
}
