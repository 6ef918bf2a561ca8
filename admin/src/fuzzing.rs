//! The fuzz body of the cargo-fuzz target `admin_request` (under `fuzz/`),
//! shared with the test that replays the checked-in corpus
//! (`admin/tests/fuzz_corpus.rs`), so that the stable test suite runs the
//! same checks.
//!
//! Arbitrary bytes are what a client writes to the admin socket: cut into
//! lines as the server cuts them (at `\n`, a `\r` before it dropped), each
//! line read with [`Request::parse`] as the server reads it. Nothing
//! panics; a refused line gives one of the codes the protocol documents
//! for it with a message, and the error answer is a line that parses back;
//! a request serializes ([`Request::to_line`]) to one line that parses back
//! to an equal request. Every request is then answered as the daemon
//! answers it, by the [`Dispatcher`] over a [`SampleBox`] (one box for the
//! whole input, as one connection to one daemon), with the admin privilege
//! and, for read-only commands, the read-only one; the `mad` command's
//! query is also checked on its own (its class, hops, key, `data`, and the
//! `set` fields over an attribute of zeros). Every answer is a line that
//! parses back.

use std::sync::Arc;

use mgmt::wire::MgmtClass;
use serde_json::Value;

use crate::dispatch::Dispatcher;
use crate::mad::{self, MadQuery};
use crate::proto::{
    AdminError, AdminErrorCode, CAPTURE_MAX_SNAPLEN, CaptureRequest, Command, MAX_LINE, Privilege,
    Request, Response, TRACE_MAX_COUNT, TraceRequest,
};
use crate::sample::SampleBox;
use crate::server::{Handler, StreamOut};

/// Lines of one input read at most (the rest is ignored: a long input is
/// one long line to the fuzzer anyway).
const MAX_LINES: usize = 16;

/// Items of a streamed answer taken before the client "hangs up".
const MAX_ITEMS: usize = 8;

/// A response as the server writes it: one line that reads back to the
/// same response (a `null` result reads back as none).
fn check_response(r: &Response) {
    let line = r.to_line();
    let body = line
        .strip_suffix('\n')
        .expect("a response line ends with its newline");
    assert!(!body.contains('\n'), "a response of several lines: {line}");
    let back = Response::parse(body.as_bytes())
        .unwrap_or_else(|e| panic!("a response line does not parse: {e}\n{line}"));
    assert_eq!(
        (back.v, back.id, back.ok, back.more, &back.error),
        (r.v, r.id, r.ok, r.more, &r.error),
        "a response line reads back otherwise: {line}"
    );
    let null = Value::Null;
    assert_eq!(
        back.result.as_ref().unwrap_or(&null),
        r.result.as_ref().unwrap_or(&null),
        "a response's result reads back otherwise: {line}"
    );
}

/// An error answer carries a message.
fn check_error(e: &AdminError) {
    assert!(!e.message.is_empty(), "an error without a message: {e:?}");
    assert!(!e.to_string().is_empty());
}

/// A streamed answer's client: keeps what it is sent, hangs up after
/// [`MAX_ITEMS`].
struct Collect(Vec<Value>);

impl StreamOut for Collect {
    fn send(&mut self, item: Value) -> Result<(), AdminError> {
        check_response(&Response::item(Some(1), item.clone()));
        self.0.push(item);
        Ok(())
    }

    fn closed(&self) -> bool {
        self.0.len() >= MAX_ITEMS
    }
}

/// The `mad` query on its own: what the dispatcher derives from it never
/// panics, and a Set's area built from `set` fills the class's area.
fn check_mad(q: &MadQuery) {
    let checked = q.check();
    if let Err(e) = &checked {
        check_error(e);
    }
    let _ = q.target_text();
    let _ = q.mkey();
    let _ = q.hops();
    let _ = q.route_hops();
    let _ = q.egress(&[rrp::Address(0x0115), rrp::Address(0x0116)]);
    if checked.is_ok() {
        // Only bounded once checked (timeout_ms, retries).
        let _ = q.budget_ms();
    }
    let class = q.class().unwrap_or(MgmtClass::SUBN);
    for c in [class, MgmtClass::SUBN, MgmtClass::PERF] {
        match q.data_area(c) {
            Ok(Some(area)) => assert_eq!(area.len(), c.attribute_len()),
            Ok(None) => assert!(q.data.is_none()),
            Err(e) => check_error(&e),
        }
    }
    if let Ok(id) = q.attribute_id()
        && !q.set.is_empty()
    {
        let zeros = vec![0u8; class.attribute_len()];
        match mad::modified(class, id, &zeros, &q.set) {
            Ok(area) => assert_eq!(area.len(), class.attribute_len()),
            Err(e) => check_error(&e),
        }
    }
}

/// A request as the daemon answers it.
fn answer(d: &Dispatcher<SampleBox>, req: &Request, privilege: Privilege) {
    let result = if req.cmd.streams() {
        let mut out = Collect(Vec::new());
        let r = d.handle_stream(&req.cmd, privilege, &mut out);
        assert!(out.0.len() <= MAX_ITEMS);
        r
    } else {
        d.handle(&req.cmd, privilege)
    };
    let resp = match result {
        Ok(v) => Response::ok(req.id, v),
        Err(e) => {
            check_error(&e);
            Response::err(req.id, e)
        }
    };
    check_response(&resp);
}

/// One parsed request: it serializes to a line that parses back equal,
/// and the box answers it.
fn check_request(req: &Request, d: &Dispatcher<SampleBox>) {
    let line = req.to_line();
    let body = line
        .strip_suffix('\n')
        .expect("a request line ends with its newline");
    assert!(!body.contains('\n'), "a request of several lines: {line}");
    match Request::parse(body.as_bytes()) {
        Ok(back) => assert_eq!(&back, req, "the request line reads back otherwise: {line}"),
        Err(e) => panic!("a serialized request does not parse: {e:?}\n{line}"),
    }
    assert!(Command::NAMES.contains(&req.cmd.name()));
    assert_eq!(
        req.cmd.privilege() == Privilege::Admin,
        req.cmd.needs_admin()
    );
    if let Some(c) = CaptureRequest::of(&req.cmd) {
        match c {
            Ok(c) => assert!(c.snaplen <= CAPTURE_MAX_SNAPLEN),
            Err(e) => check_error(&e),
        }
    }
    if let Some(t) = TraceRequest::of(&req.cmd) {
        match t {
            Ok(t) => {
                assert!((1..=TRACE_MAX_COUNT).contains(&t.count));
                assert!(t.dst.is_none_or(|d| d.is_valid_destination()));
            }
            Err(e) => check_error(&e),
        }
    }
    if let Command::Mad(q) = &req.cmd {
        check_mad(q);
    }
    answer(d, req, Privilege::Admin);
    if !req.cmd.needs_admin() {
        answer(d, req, Privilege::ReadOnly);
    }
}

/// The body: `data` as what a client writes to the admin socket.
pub fn request(data: &[u8]) {
    let mut dispatcher: Option<Dispatcher<SampleBox>> = None;
    for line in data.split(|&b| b == b'\n').take(MAX_LINES) {
        // The server refuses longer lines before reading them.
        if line.len() + 1 > MAX_LINE {
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match Request::parse(line) {
            Ok(req) => {
                let d =
                    dispatcher.get_or_insert_with(|| Dispatcher::new(Arc::new(SampleBox::new())));
                check_request(&req, d);
            }
            Err(bad) => {
                assert!(
                    matches!(
                        bad.error.code,
                        AdminErrorCode::BadJson
                            | AdminErrorCode::BadRequest
                            | AdminErrorCode::BadVersion
                            | AdminErrorCode::UnknownCommand
                    ),
                    "a line refused with {:?}",
                    bad.error.code
                );
                check_error(&bad.error);
                check_response(&Response::err(bad.id, bad.error));
            }
        }
    }
}
