//! Fuzz bodies, shared by the cargo-fuzz targets under `fuzz/` and by the
//! ordinary test that replays the checked-in corpus, so that the stable test
//! suite runs the same checks.
//!
//! Each body parses arbitrary bytes; whatever parses must emit again and
//! parse back to the same value, and the zero-copy view must agree with the
//! owned representation.

use crate::limits::MAX_L2RHS;
use crate::wire::{Message, Packet, PacketRepr, Record, RecordRepr};

/// Packet parser: views and owned representation agree; emit-then-parse is
/// the identity; nothing panics.
pub fn packet(data: &[u8]) {
    let owned = PacketRepr::parse(data);
    let view = Packet::new_checked(data, usize::MAX);
    assert_eq!(owned.is_ok(), view.is_ok(), "view and repr disagree");
    if let (Ok(p), Ok(v)) = (&owned, &view) {
        assert_eq!(p.data, v.data());
        assert_eq!(p.ei, v.ei());
        assert_eq!(p.l2rhs.len(), v.layout().l2rh_count);
        let bytes = p.to_bytes().expect("a parsed packet fits its own fields");
        assert_eq!(bytes.len(), v.layout().total_len());
        assert_eq!(&PacketRepr::parse(&bytes).expect("re-parse"), p);
        let limited = Packet::new_checked(data, MAX_L2RHS);
        assert_eq!(limited.is_ok(), p.l2rhs.len() <= MAX_L2RHS);
    }
}

/// RRP/ERR message parser over a whole packet, and the record parser over
/// the raw bytes.
pub fn message(data: &[u8]) {
    if let Ok((p, m)) = Message::parse_packet(data) {
        let q = m
            .to_packet(p.header.dst, p.header.src)
            .expect("a parsed message fits");
        let bytes = q.to_bytes().expect("fits");
        let (_, m2) = Message::parse_packet(&bytes).expect("re-parse");
        assert_eq!(m2, m);
    }
    if let Ok(r) = Record::new_checked(data)
        && let Ok(repr) = RecordRepr::parse(&r)
    {
        let mut out = Vec::new();
        repr.emit(&mut out).expect("fits");
        let r2 = Record::new_checked(&out).expect("re-parse view");
        assert_eq!(RecordRepr::parse(&r2).expect("re-parse"), repr);
    }
}
