//! Fuzz bodies, shared by the cargo-fuzz targets under `fuzz/` and by the
//! ordinary test that replays the checked-in corpus (`rrp/tests/fuzz_corpus.rs`),
//! so that the stable test suite runs the same checks.
//!
//! Each body parses arbitrary bytes; whatever parses must emit again and
//! parse back to the same value, the zero-copy view must agree with the
//! owned representation, and every error must name a field and point inside
//! the buffer.

use crate::error::Error;
use crate::limits::MAX_L2RHS;
use crate::wire::record::RecordIter;
use crate::wire::{L2rh, L2rhRepr, Message, Packet, PacketRepr, Record, RecordRepr, RouterHop};

/// An error names its field and points at most one past the end of the
/// `len`-byte buffer it was found in.
fn check_error(e: &Error, len: usize) {
    assert!(!e.field.is_empty(), "error without a field: {e:?}");
    assert!(
        e.offset <= len,
        "error offset past the buffer ({len}): {e:?}"
    );
}

/// Packet parser: views and owned representation agree; emit-then-parse is
/// the identity; nothing panics.
pub fn packet(data: &[u8]) {
    let owned = PacketRepr::parse(data);
    let view = Packet::new_checked(data, usize::MAX);
    assert_eq!(owned.is_ok(), view.is_ok(), "view and repr disagree");
    match (&owned, &view) {
        (Ok(p), Ok(v)) => {
            assert_eq!(p.data, v.data());
            assert_eq!(p.ei, v.ei());
            assert_eq!(p.l2rhs.len(), v.layout().l2rh_count);
            assert!(
                p.l2rhs
                    .iter()
                    .zip(v.l2rhs())
                    .all(|(o, l)| o.content() == l.content())
            );
            let bytes = p.to_bytes().expect("a parsed packet fits its own fields");
            assert_eq!(bytes.len(), v.layout().total_len());
            assert_eq!(bytes.len(), p.buffer_len());
            assert_eq!(&PacketRepr::parse(&bytes).expect("re-parse"), p);
            let limited = Packet::new_checked(data, MAX_L2RHS);
            assert_eq!(limited.is_ok(), p.l2rhs.len() <= MAX_L2RHS);
            auth_checks(v);
            // The look for an RRP#9's node list parses the packet's first
            // records; an interner that holds no list finds none.
            let interner = crate::router::Interner::new();
            assert!(interner.rrp9_node_list(data).is_none());
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "view and repr report different errors");
            check_error(a, data.len());
        }
        _ => unreachable!("checked above"),
    }
}

/// The authentication checks (docs/spec-notes.md 59) over any packet: a
/// member with keys and one without never panic, and what they take out
/// of a packet is a packet again; a packet signed here verifies once.
fn auth_checks(v: &Packet<&[u8]>) {
    use crate::auth::{AuthConfig, AuthKey, Replay, Verdict, check};
    let keys = AuthConfig {
        keys: vec![AuthKey {
            id: 1,
            secret: b"a fuzzing key, 32 bytes long....".to_vec(),
        }],
        send_key: 1,
        accept_unsigned: false,
    };
    for cfg in [None, Some(&keys)] {
        let mut replay = Replay::default();
        match check(cfg, &mut replay, 0, v, 8) {
            Verdict::Unchecked(b) | Verdict::Verified(b) => {
                // A record's OPL may claim more padding than the data
                // block has: then the stripped bytes are no packet, and
                // the engine counts a parse error.
                let _ = Packet::new_checked(&b[..], usize::MAX);
            }
            Verdict::Plain | Verdict::Unsigned | Verdict::Refused(_) => {}
        }
    }
    let mut signed = v.bytes().to_vec();
    if crate::auth::sign(&keys, 7, &mut signed) {
        let s = Packet::new_checked(&signed[..], usize::MAX).expect("a signed packet is a packet");
        let mut replay = Replay::default();
        let Verdict::Verified(back) = check(Some(&keys), &mut replay, 0, &s, 8) else {
            panic!("a packet signed with the key does not verify");
        };
        assert_eq!(back, v.bytes(), "signing and stripping is not the identity");
        assert!(matches!(
            check(Some(&keys), &mut replay, 0, &s, 8),
            Verdict::Refused(crate::wire::auth::AuthRefusal::Replay)
        ));
    }
}

/// RRP/ERR message parser over a whole packet, and the record parser over
/// the raw bytes.
pub fn message(data: &[u8]) {
    match Message::parse_packet(data) {
        Ok((p, m)) => {
            let q = m
                .to_packet(p.header.dst, p.header.src)
                .expect("a parsed message fits");
            let bytes = q.to_bytes().expect("fits");
            let (_, m2) = Message::parse_packet(&bytes).expect("re-parse");
            assert_eq!(m2, m);
        }
        Err(e) => check_error(&e, data.len()),
    }
    record(data);
}

/// Records, L2RHs and router hops at the start of the raw bytes: a record
/// (view and owned), the records that follow each other, an L2RH and the
/// router hop it carries, and the bytes taken as router-hop content.
pub fn record(data: &[u8]) {
    match Record::new_checked(data).and_then(|r| RecordRepr::parse(&r).map(|repr| (r, repr))) {
        Ok((r, repr)) => {
            assert!(r.bytes().len() <= data.len());
            let mut out = Vec::new();
            repr.emit(&mut out).expect("fits");
            assert_eq!(out.len(), repr.buffer_len());
            let r2 = Record::new_checked(&out).expect("re-parse view");
            assert_eq!(r2.bytes().len(), out.len());
            assert_eq!(RecordRepr::parse(&r2).expect("re-parse"), repr);
        }
        Err(e) => check_error(&e, data.len()),
    }
    for item in RecordIter::new(data, 0) {
        match item {
            Ok((r, at)) => assert!(at + r.bytes().len() <= data.len()),
            Err(e) => check_error(&e, data.len()),
        }
    }
    match L2rhRepr::parse(data) {
        Ok((l, n)) => {
            assert!(n <= data.len());
            assert_eq!(n, l.buffer_len());
            let v = L2rh::new_checked(data).expect("view agrees");
            assert_eq!(v.content(), l.content());
            let mut out = Vec::new();
            l.emit(&mut out);
            assert_eq!(out.len(), n);
            assert_eq!(out[..2 + l.content().len()], data[..2 + l.content().len()]);
            assert_eq!(L2rhRepr::parse(&out).expect("re-parse"), (l.clone(), n));
            match RouterHop::from_content(l.content()) {
                Ok(h) => assert_eq!(h.to_l2rh(), l),
                Err(e) => check_error(&e, l.content().len()),
            }
        }
        Err(e) => {
            check_error(&e, data.len());
            assert!(L2rh::new_checked(data).is_err());
        }
    }
    match RouterHop::from_content(data) {
        Ok(h) => assert_eq!(h.to_l2rh().content(), data),
        Err(e) => check_error(&e, data.len()),
    }
}
