//! The control protocol of a host: requests on its UNIX stream socket,
//! each connection served by a thread of its own.
//!
//! One JSON object per line in, one JSON object per line out:
//! `{"ok":true,...}` or `{"ok":false,"error":"..."}`. Addresses are accepted
//! as numbers (`560`) or strings (`"0x0230"`) and reported as `"0x0230"`.
//!
//! | request | answer |
//! | --- | --- |
//! | `{"cmd":"send","dst":D,"count":N,"rate_pps":R,"size":S,"partition":K,"wait":false}` | L3 probes to D, each to the HR [`Node::first_hr`] names (redirects followed); answers at once unless `wait`; `size` is the frame on the wire: the datagram on UDP, the Ethernet frame without FCS on Ethernet (mwgen's meaning); `partition` the key they travel in (the host must be a member; none: the first it is a full member of, the default one unmarked: docs/partitions.md "At the hosts") |
//! | `{"cmd":"send_l2","dst":D,"count":N,"route":[..] or "route_index":i,"via":HR}` | L2 probes along a source route (docs/architecture.md "Source routes") |
//! | `{"cmd":"stats"}` | every counter (below) |
//! | `{"cmd":"route","dst":D,"timeout_ms":T}` | RRP#1 to the default HR (Level C only): `{"routes":[["0x011a@127.0.0.1:4001",..],..],"q":[..],"from":"0x0117"}` (natives as [`format_native`] writes them for this host's link: `0x011a@02:4d:57:00:01:1a` on Ethernet) |
//! | `{"cmd":"which_hr","dst":D,"timeout_ms":T}` | RRP#6 (Level B and C): `{"via":"0x0117"}`, or `{"via":null}` when nothing came back in time |
//! | `{"cmd":"reset","learned":false}` | clears the traffic counters (with `learned`: also redirects, routes, unknowns) |
//! | `{"cmd":"join","group":G}`, `{"cmd":"leave","group":G}` | listen to group G (0x8000-0xFFFD) or stop, and say so to the SAN at once (RRP#5 to every member); a join may name its partition (`"partition":"0x0010"`; the default partition otherwise); `send` to a group address sends to every member of the SAN |
//! | `{"cmd":"impair","rx_loss":P,"duplicate":D,"reorder":R,"seed":S}` | impairs the link's receive side with the seeded layer of the in-memory backend ([`Impairer`], hw/ports/src/impair.rs): each datagram received is lost with probability P, else duplicated (the copy right after it) with probability D, and held back behind the next datagram that is not lost with probability R. Every field is optional (0; `seed` from the clock); all three 0 ends it (a held datagram is delivered). Lost datagrams are counted as `rx_lost` and not in `datagrams`; copies are datagrams. `stats` reports what it did as `impair` (below) |
//! | `{"cmd":"quit"}` | stops the host |
//!
//! `stats` answers, besides `name`, `address`, `level`, `default_hr` and
//! `tag` (this host's stream tag), `link` (`"udp"` or `"af_packet"`), `bind`
//! (the UDP endpoint, or the interface) and `native` (its own native
//! address: the endpoint, or the interface's MAC):
//! - `sent` (probes per destination), `send_errors`, `redirect_unresolved`
//!   (L3 probes whose redirect named a node of unknown native address: sent to the
//!   default HR instead), `redirect_renewals` (RRP#6 sent to the default HR to
//!   renew a redirect still in use, [`REDIRECT_TTL`]), `busy` (sends still running);
//! - `datagrams` (packets received: datagrams or frames) = `probes` + the sum of `control` (RRP/ERR messages by name,
//!   `"RRP#7"`, `"ERR UNK"`, ...) + `management` (PT 0x0006, to the
//!   management thread; `management_ignored` of them on a host without
//!   management) + `other` (non-probe data) + `not_member` (group packets
//!   of groups it does not listen to) + `partition_refused` (data packets of
//!   a partition it is not a member of, or from a limited member to this
//!   limited one) + `malformed` + `auth_refused`
//!   (refused by its SAN's authentication, `auth_key`): every datagram is
//!   counted exactly once;
//! - `impair`: the settings now (`rx_loss`, `duplicate`, `reorder`, `seed`;
//!   zeros when off) and what the layer did since the host started, over
//!   every `impair` command: `seen`, `passed`, `lost`, `duplicated`,
//!   `reordered`, `held` (the [`ImpairStats`] counts, `held` those not
//!   delivered yet), and `probes` {`seen`, `lost`, `duplicated`,
//!   `reordered`}: the same for probes, `reordered` counting a probe held
//!   back behind a probe of its own stream (same source, destination and
//!   tag), which is what the receiver counts as reordered. With nothing
//!   else reordering or duplicating a stream, each source's `duplicated`
//!   and `reordered` sum to these, and `unique` is what was sent less
//!   `probes.lost` and any loss before the host. A datagram held back is
//!   delivered after the next one, or after [`POLL`] with none;
//! - `groups` (the groups it listens to), `by_group` (probes received per
//!   group: `received`, `unique`, `duplicated`);
//! - `partitions`: its table as its SAN's master set it, key -> `"full"`
//!   or `"limited"` (`{"0x7fff":"full"}` until a master sets one);
//! - `received`: per source, `received`, `unique`, `duplicated`,
//!   `reordered`, `late` ([`mwgen::receiver`]'s definitions), `lost_hint`
//!   (gaps between the least and greatest sequence number seen), `streams`
//!   and `latency_ns` {`min`,`p50`,`p99`,`max`}; `ei`: EI values of unique
//!   probes with counts;
//! - `errors_received` {`UNK`,`HRDOWN`,`LINKDOWN`,`GENERAL`},
//!   `rrp7_answered`, `rrp4_answered`, `recv_errors`, `reply_errors`;
//! - what was learned: `redirects`, `unknown`, `routes`, `routes_from` (the
//!   HR that offered them), `neighbours` (native addresses of the SAN's
//!   nodes, [`format_native`]).
//!
//! What mwrouterd answers (rrp/src/router/engine.rs, `answer_which_hr`): an
//! RRP#6 always gets an answer, an RRP#3 naming the node on the asker's SAN
//! to send to (another HR, the destination itself when it is on the same
//! SAN, or the asked HR itself) or an ERR UNK when the destination is
//! unknown; `which_hr` reports the former as `via` and the latter as
//! `{"ok":false,"error":"unknown destination"}`. An RRP#1 is answered with
//! RRP#2 (routes from the answering HR onward) or ERR UNK.
//!
//! [`format_native`]: super::format_native
//! [`Impairer`]: ports::impair::Impairer
//! [`ImpairStats`]: ports::impair::ImpairStats
//! [`REDIRECT_TTL`]: super::REDIRECT_TTL

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::Scope;
use std::time::{Duration, Instant};

use mwgen::profile::parse_address;
use rrp::Address;
use rrp::node::{Level, Node};
use serde_json::{Value, json};

use super::POLL;
use super::client::nothing_yet;
use super::format::{format_route_on, hex};
use super::link::Link;
use super::spec::HostLink;
use super::state::{Answer, Host, Reply, State};
use super::traffic::{RxTraffic, TxTraffic};

/// The longest control request line accepted.
pub(super) const MAX_LINE: usize = 1 << 20;

/// How long `route` and `which_hr` wait when the request gives no timeout.
pub(super) const DEFAULT_TIMEOUT_MS: u64 = 1000;

impl Host<'_> {
    /// Answers one request line.
    pub(super) fn request<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        line: &str,
        stop: &'s AtomicBool,
    ) -> Value {
        let reply = match serde_json::from_str::<Value>(line) {
            Err(e) => Err(format!("not JSON: {e}")),
            Ok(req) => match req.get("cmd").and_then(Value::as_str) {
                None => Err("no \"cmd\"".into()),
                Some("send") => self.cmd_send(scope, &req, stop),
                Some("send_l2") => self.cmd_send_l2(scope, &req, stop),
                Some("stats") => Ok(self.stats()),
                Some("route") => self.cmd_route(&req),
                Some("which_hr") => self.cmd_which_hr(&req),
                Some("reset") => self.cmd_reset(&req),
                Some("impair") => self.cmd_impair(&req),
                Some("join") => self.cmd_group(&req, true),
                Some("leave") => self.cmd_group(&req, false),
                Some("quit") => {
                    self.quit.store(true, Ordering::Relaxed);
                    Ok(json!({}))
                }
                Some(c) => Err(format!("unknown command {c:?}")),
            },
        };
        match reply {
            Ok(Value::Object(mut m)) => {
                m.insert("ok".into(), Value::Bool(true));
                Value::Object(m)
            }
            Ok(v) => json!({"ok": true, "value": v}),
            Err(e) => json!({"ok": false, "error": e}),
        }
    }

    /// Serves one control connection until it closes or the host stops.
    pub(super) fn serve<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        conn: UnixStream,
        stop: &'s AtomicBool,
    ) {
        if conn.set_read_timeout(Some(POLL)).is_err() {
            return;
        }
        let Ok(mut out) = conn.try_clone() else {
            return;
        };
        let mut input = BufReader::new(conn);
        let mut line = Vec::new();
        while !self.stopping(stop) {
            let eof = match input.read_until(b'\n', &mut line) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) if nothing_yet(&e) => {
                    if line.len() > MAX_LINE {
                        let _ =
                            writeln!(out, "{}", json!({"ok": false, "error": "request too long"}));
                        return;
                    }
                    continue;
                }
                Err(_) => return,
            };
            if !line.ends_with(b"\n") && !eof {
                continue;
            }
            let text = String::from_utf8_lossy(&line).trim().to_string();
            line.clear();
            if !text.is_empty() {
                let answer = self.request(scope, &text, stop);
                if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
                    return;
                }
            }
            if eof {
                return;
            }
        }
    }

    /// Sends a request to an HR (`"hr"`, else the default) and waits for an
    /// answer of kind `want` or an ERR UNK about `dst`; `Ok(false)` on
    /// timeout, `Err` on ERR UNK.
    pub(super) fn ask(
        &self,
        req: &Value,
        dst: Address,
        want: Answer,
        make: impl Fn(&Node, Address) -> Vec<u8>,
    ) -> Result<bool, String> {
        let hr = match req.get("hr") {
            None | Some(Value::Null) => self.default_hr.ok_or("no HR on this SAN")?,
            Some(_) => addr_arg(req, "hr")?,
        };
        let timeout =
            Duration::from_millis(u64_arg(req, "timeout_ms")?.unwrap_or(DEFAULT_TIMEOUT_MS));
        let mut st = self.lock();
        let to = *st
            .neighbours
            .get(&hr)
            .ok_or_else(|| format!("HR {hr}: native address unknown"))?;
        let seen = |st: &State, k| st.answers.get(&(k, dst)).copied().unwrap_or(0);
        let (want0, unk0) = (seen(&st, want), seen(&st, Answer::Unknown));
        let pkt = make(&st.node, hr);
        self.link
            .send(&pkt, &to)
            .map_err(|e| format!("send to {}: {e}", self.link.text(&to)))?;
        let deadline = Instant::now() + timeout;
        loop {
            if seen(&st, want) != want0 {
                return Ok(true);
            }
            if seen(&st, Answer::Unknown) != unk0 {
                return Err("unknown destination".into());
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            st = self
                .answered
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    pub(super) fn cmd_route(&self, req: &Value) -> Reply {
        if self.level < Level::C {
            return Err(format!(
                "a Level {:?} node does not ask for routes (Level C does)",
                self.level
            ));
        }
        let dst = dst_arg(req)?;
        if !self.ask(req, dst, Answer::Routes, |n, hr| n.route_request(hr, dst))? {
            return Err("no answer".into());
        }
        let st = self.lock();
        let routes = st.node.routes.get(&dst).cloned().unwrap_or_default();
        Ok(json!({
            "routes": routes.iter().map(|r| format_route_on(r, self.link.kind())).collect::<Vec<_>>(),
            "q": routes.iter().map(|r| r.q).collect::<Vec<_>>(),
            "mtu": routes.iter().map(|r| r.mtu.and_then(|m| m.bytes())).collect::<Vec<_>>(),
            "from": st.routes_from.get(&dst).map(|a| hex(*a)),
        }))
    }

    pub(super) fn cmd_which_hr(&self, req: &Value) -> Reply {
        if self.level < Level::B {
            return Err("a Level A node does not ask routers (Level B and C do)".into());
        }
        let dst = dst_arg(req)?;
        if !self.ask(req, dst, Answer::Redirect, |n, hr| n.which_hr(hr, dst))? {
            return Ok(json!({"via": null}));
        }
        let st = self.lock();
        Ok(json!({"via": st.node.redirects.get(&dst).map(|a| hex(*a))}))
    }

    /// Every counter: see this module's documentation.
    pub(super) fn stats(&self) -> Value {
        let st = self.lock();
        let rx = &st.rx;
        let errors: BTreeMap<&str, u64> = ["UNK", "HRDOWN", "LINKDOWN", "GENERAL"]
            .into_iter()
            .map(|k| (k, rx.errors.get(k).copied().unwrap_or(0)))
            .collect();
        json!({
            "name": self.spec.name,
            "address": hex(self.me()),
            "level": format!("{:?}", self.level),
            "link": match self.link { Link::Udp(_) => "udp", Link::AfPacket { .. } => "af_packet" },
            "bind": match &self.spec.link {
                HostLink::Udp { bind } => bind.to_string(),
                HostLink::AfPacket { interface } => interface.clone(),
            },
            "native": self.link.text(&self.link.native()),
            "default_hr": self.default_hr.map(hex),
            "tag": self.tag,
            "sent": st.tx.sent.iter().map(|(a, n)| (hex(*a), *n)).collect::<BTreeMap<_, _>>(),
            "send_errors": st.tx.send_errors,
            "redirect_unresolved": st.tx.redirect_unresolved,
            "redirect_renewals": st.tx.redirect_renewals,
            "busy": st.busy,
            "datagrams": rx.datagrams,
            "rx_lost": st.impaired.all.lost,
            "impair": self.impair_json(&st),
            "management": rx.management,
            "management_ignored": rx.management_ignored,
            "auth_refused": rx.auth_refused,
            "probes": rx.probes,
            "received": rx.by_source(),
            "ei": rx.ei(),
            "control": rx.control,
            "errors_received": errors,
            "rrp7_answered": rx.rrp7_answered,
            "rrp4_answered": rx.rrp4_answered,
            "other": rx.other,
            "not_member": rx.not_member,
            "partition_refused": rx.partition_refused,
            "partitions": st.partitions.json(),
            "groups": st.node.config().logical.iter().flatten().map(|g| hex(*g)).collect::<Vec<_>>(),
            "by_group": rx.by_group(),
            "malformed": rx.malformed,
            "recv_errors": rx.recv_errors,
            "reply_errors": rx.reply_errors,
            "redirects": st.node.redirects.iter().map(|(d, v)| (hex(*d), hex(*v))).collect::<BTreeMap<_, _>>(),
            "unknown": st.node.unknown.iter().map(|a| hex(*a)).collect::<Vec<_>>(),
            "routes": st.node.routes.iter().map(|(d, r)| (hex(*d), r.iter().map(|r| format_route_on(r, self.link.kind())).collect::<Vec<_>>())).collect::<BTreeMap<_, _>>(),
            "routes_from": st.routes_from.iter().map(|(d, h)| (hex(*d), hex(*h))).collect::<BTreeMap<_, _>>(),
            "neighbours": st.neighbours.iter().map(|(a, e)| (hex(*a), self.link.text(e))).collect::<BTreeMap<_, _>>(),
        })
    }

    pub(super) fn cmd_reset(&self, req: &Value) -> Reply {
        let learned = req.get("learned").and_then(Value::as_bool).unwrap_or(false);
        let mut st = self.lock();
        st.rx = RxTraffic::default();
        st.tx = TxTraffic::default();
        if learned {
            st.node.redirects.clear();
            st.redirect_at.clear();
            st.renewal_at.clear();
            st.node.routes.clear();
            st.node.unknown.clear();
            st.routes_from.clear();
        }
        Ok(json!({}))
    }
}

/// An address argument: a number or a string (`"0x0230"`, `"560"`).
pub(super) fn addr_arg(req: &Value, key: &'static str) -> Result<Address, String> {
    match req.get(key) {
        None | Some(Value::Null) => Err(format!("missing {key:?}")),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|v| u16::try_from(v).ok())
            .map(Address)
            .ok_or_else(|| format!("{key}: {n} is not a 16-bit address")),
        Some(Value::String(s)) => {
            parse_address("dst", s).map_err(|_| format!("{key}: {s:?} is not an address"))
        }
        Some(v) => Err(format!("{key}: {v} is not an address")),
    }
}

/// The destination of a request: a valid destination (docs/architecture.md "Wire").
pub(super) fn dst_arg(req: &Value) -> Result<Address, String> {
    let d = addr_arg(req, "dst")?;
    if !d.is_valid_destination() {
        return Err(format!("dst: {d} is not a destination (0x0040 and up)"));
    }
    Ok(d)
}

/// An optional count argument.
pub(super) fn u64_arg(req: &Value, key: &'static str) -> Result<Option<u64>, String> {
    match req.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{key}: {v} is not a count")),
    }
}
