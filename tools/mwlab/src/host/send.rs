//! What a host sends: probe streams (`send`, `send_l2`), each probe to the
//! HR its node names first (redirects followed and renewed) or along a
//! source route.
//!
//! # Sequence numbers and streams
//! A host sends every probe with one stream tag, drawn at start-up (so that a
//! restarted host is a new stream), and numbers probes per destination from
//! 0, continuing across `send`s and `reset`s: a receiver sees one gapless
//! stream per (source, destination) as long as nothing is lost. Receivers
//! keep one [`Receiver`] per (source, destination, tag) and report them
//! summed per source. Transmit times are wall-clock nanoseconds
//! ([`SystemTime`]), the one clock that all processes of the lab share.
//!
//! [`Receiver`]: mwgen::receiver::Receiver
//! [`SystemTime`]: std::time::SystemTime
//! [`Node::first_hr`]: rrp::node::Node::first_hr

use std::sync::atomic::AtomicBool;
use std::thread::{self, Scope};
use std::time::{Duration, Instant};

use mwgen::probe;
use mwgen::profile::{Profile, Sizes, parse_hop};
use rrp::limits::MAX_L2RHS;
use rrp::wire::RouterHop;
use rrp::{Address, PartitionMark};
use rrp::{LinkKind, NativeAddr};
use serde_json::{Value, json};

use super::control::{addr_arg, dst_arg, u64_arg};
use super::format::format_hop_on;
use super::link::Link;
use super::now_ns;
use super::partitions::partition_arg;
use super::state::{Host, Reply, State};

/// The frame size of a probe when a request gives none (a UDP datagram of 64
/// bytes: header, 40 data bytes, trailer).
pub(super) const DEFAULT_SIZE: usize = 64;

/// The rate of a `send` when the request gives none (packets per second).
pub(super) const DEFAULT_RATE_PPS: f64 = 1000.0;

/// How long a redirect (RRP#3) is followed without being repeated: hosts age
/// redirects as IP hosts do (RFC 1122, 3.3.1.2), since MessageWay tells a
/// node nothing when the HR a redirect named goes down. A redirect still in
/// use is renewed before it lapses: past half its life the host asks its
/// default HR again with RRP#6 (docs/spec-notes.md 51), so that its traffic
/// stays on the best first HR instead of returning to the default one.
pub const REDIRECT_TTL: Duration = Duration::from_secs(1);

/// Where the probes of a stream go.
#[derive(Debug, Clone, Copy)]
pub(super) enum Target {
    /// Each to the HR [`Node::first_hr`] names at the time it is sent.
    FirstHr,
    /// All to this native address (L2: the first hop).
    Fixed(NativeAddr),
    /// Each to every member of the SAN (a group packet).
    Members,
}

/// One `send` or `send_l2`: a probe template and where its copies go.
#[derive(Debug)]
pub(super) struct Stream {
    pub(super) dst: Address,
    pub(super) count: u64,
    /// Packets per second; 0: as fast as the link takes them.
    pub(super) rate_pps: f64,
    pub(super) packet: Vec<u8>,
    /// Offset of the EEP header in `packet`.
    pub(super) hdr: usize,
    pub(super) first_seq: u64,
    pub(super) target: Target,
}

impl Host<'_> {
    /// The native address of the HR to send an L3 packet for `dst` to.
    pub(super) fn first_hop(&self, st: &mut State, dst: Address) -> Option<NativeAddr> {
        let default = self.default_hr?;
        if let Some(at) = st.redirect_at.get(&dst).copied() {
            let age = at.elapsed();
            if age > REDIRECT_TTL {
                st.node.redirects.remove(&dst);
                st.redirect_at.remove(&dst);
            } else if age > REDIRECT_TTL / 2
                && st.renewal_at.get(&dst).is_none_or(|asked| *asked < at)
            {
                // Still in use: ask the default HR for the best first HR
                // again, once per redirect received; its RRP#3 renews it.
                st.renewal_at.insert(dst, Instant::now());
                if let Some(n) = st.neighbours.get(&default).copied() {
                    let req = st.node.which_hr(default, dst);
                    if self.link.send(&req, &n).is_ok() {
                        st.tx.redirect_renewals += 1;
                    }
                }
            }
        }
        let hr = st.node.first_hr(dst, default);
        match st.neighbours.get(&hr) {
            Some(e) => Some(*e),
            None => {
                st.tx.redirect_unresolved += 1;
                st.neighbours.get(&default).copied()
            }
        }
    }

    /// Sends a stream's probes, paced, until done or stopped.
    pub(super) fn send_stream(&self, s: Stream, stop: &AtomicBool) {
        let start = Instant::now();
        let mut pkt = s.packet;
        for i in 0..s.count {
            if self.stopping(stop) {
                break;
            }
            if s.rate_pps > 0.0 {
                let due = start + Duration::from_secs_f64(i as f64 / s.rate_pps);
                let now = Instant::now();
                if due > now {
                    thread::sleep(due - now);
                }
            }
            let to = match s.target {
                Target::Fixed(a) => Some(a),
                Target::FirstHr => self.first_hop(&mut self.lock(), s.dst),
                Target::Members => None,
            };
            probe::patch(&mut pkt, s.hdr, s.first_seq + i, now_ns());
            let ok = match s.target {
                Target::Members => self.send_all(&pkt),
                _ => to.is_some_and(|a| self.link.send(&pkt, &a).is_ok()),
            };
            let mut st = self.lock();
            if ok {
                *st.tx.sent.entry(s.dst).or_default() += 1;
            } else {
                st.tx.send_errors += 1;
            }
        }
    }

    /// A stream of `count` probes to `dst` behind the hops `l2`; its sequence
    /// numbers are reserved here.
    pub(super) fn stream(
        &self,
        req: &Value,
        dst: Address,
        l2: Vec<RouterHop>,
        target: Target,
    ) -> Result<Stream, String> {
        let count = u64_arg(req, "count")?.unwrap_or(1);
        let rate_pps = match req.get("rate_pps") {
            None | Some(Value::Null) => DEFAULT_RATE_PPS,
            Some(v) => v
                .as_f64()
                .filter(|r| r.is_finite() && *r >= 0.0)
                .ok_or("rate_pps: not a rate (packets per second, 0: unpaced)")?,
        };
        let size = u64_arg(req, "size")?.map_or(DEFAULT_SIZE, |s| s as usize);
        if size > mwgen::profile::MAX_FRAME {
            return Err(format!("size: at most {} bytes", mwgen::profile::MAX_FRAME));
        }
        // The partition mark goes into the template's Free; probe::patch
        // writes only the data word, so every copy keeps it.
        let free = self.lock().partitions.free_for(partition_arg(req)?)?;
        let profile = Profile {
            src: self.me(),
            dsts: vec![dst],
            sizes: Sizes::Fixed(size),
            priority: 0,
            l2,
            partition: (free != 0).then(|| PartitionMark::from_free(free)),
            seed: 1,
        };
        let t = profile
            .build(self.link.kind(), self.tag)
            .map_err(|e| e.to_string())?
            .into_iter()
            .next()
            .ok_or("no packet built")?;
        let seq = {
            let mut st = self.lock();
            let next = st.next_seq.entry(dst).or_default();
            let seq = *next;
            *next += count;
            seq
        };
        Ok(Stream {
            dst,
            count,
            rate_pps,
            packet: t.bytes,
            hdr: t.hdr.unwrap_or(0),
            first_seq: seq,
            target,
        })
    }

    /// Runs a stream now (`"wait":true`) or in a background thread.
    pub(super) fn start<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        s: Stream,
        req: &Value,
        stop: &'s AtomicBool,
    ) -> Reply {
        let wait = req.get("wait").and_then(Value::as_bool).unwrap_or(false);
        let first_seq = s.first_seq;
        if wait {
            self.send_stream(s, stop);
            return Ok(json!({"first_seq": first_seq}));
        }
        self.lock().busy += 1;
        scope.spawn(move || {
            self.send_stream(s, stop);
            self.lock().busy -= 1;
        });
        Ok(json!({"first_seq": first_seq}))
    }

    /// Sends `pkt` to every member of the SAN: one datagram each on UDP,
    /// the broadcast MAC on Ethernet. False when any send failed.
    pub(super) fn send_all(&self, pkt: &[u8]) -> bool {
        match self.link {
            Link::Udp(_) => {
                let mut ok = true;
                for m in &self.spec.members {
                    ok &= self.link.send(pkt, m).is_ok();
                }
                ok
            }
            Link::AfPacket { .. } => self
                .link
                .send(pkt, &NativeAddr::mac(ports::af_packet::BROADCAST))
                .is_ok(),
        }
    }

    pub(super) fn cmd_send<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        req: &Value,
        stop: &'s AtomicBool,
    ) -> Reply {
        let dst = dst_arg(req)?;
        if dst.is_logical() {
            // A group: to every member of the SAN; the routers take it on.
            let s = self.stream(req, dst, Vec::new(), Target::Members)?;
            return self.start(scope, s, req, stop);
        }
        if self.default_hr.is_none() {
            return Err("no HR on this SAN".into());
        }
        let s = self.stream(req, dst, Vec::new(), Target::FirstHr)?;
        self.start(scope, s, req, stop)
    }

    pub(super) fn cmd_send_l2<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        req: &Value,
        stop: &'s AtomicBool,
    ) -> Reply {
        let dst = dst_arg(req)?;
        // The hops, and the HR at which they start.
        let (hops, from) = match (req.get("route"), req.get("route_index")) {
            (Some(r), None) => {
                let hops = match r {
                    Value::String(s) => {
                        mwgen::profile::parse_route(s).map_err(|e| e.to_string())?
                    }
                    Value::Array(a) => a
                        .iter()
                        .map(|h| {
                            h.as_str()
                                .ok_or_else(|| {
                                    "route: hops are strings like \"0x011a@127.0.0.1:4001\""
                                        .to_string()
                                })
                                .and_then(|h| parse_hop(h).map_err(|e| e.to_string()))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => return Err("route: a list of hops".into()),
                };
                let via = match req.get("via") {
                    None | Some(Value::Null) => self.default_hr,
                    Some(_) => Some(addr_arg(req, "via")?),
                };
                (hops, via)
            }
            (None, Some(i)) => {
                let i = i.as_u64().ok_or("route_index: not an index")? as usize;
                let st = self.lock();
                let routes = st
                    .node
                    .routes
                    .get(&dst)
                    .ok_or_else(|| format!("no routes learned for {dst} (ask with route)"))?;
                let r = routes.get(i).ok_or_else(|| {
                    format!(
                        "route_index {i}: {} route(s) learned for {dst}",
                        routes.len()
                    )
                })?;
                let hops = r
                    .route
                    .iter()
                    .map(|l| RouterHop::from_content(l.content()).map_err(|e| e.to_string()))
                    .collect::<Result<Vec<_>, _>>()?;
                (hops, st.routes_from.get(&dst).copied())
            }
            _ => return Err("send_l2: give either route or route_index".into()),
        };
        // docs/architecture.md "Source routes": a native-only first hop is the hop on
        // this SAN (the datagram's or frame's destination), not an L2RH;
        // otherwise the chain starts at the HR that offered it.
        let kind = self.link.kind();
        let (to, l2) = match hops.split_first() {
            Some((first, rest)) if first.is_native_only() => {
                let to = NativeAddr::from_bytes(first.native.as_bytes())
                    .filter(|n| match kind {
                        LinkKind::Ethernet => n.as_mac().is_some(),
                        _ => n.as_udp().is_some(),
                    })
                    .ok_or_else(|| {
                        format!(
                            "{}: not a {} on this SAN",
                            format_hop_on(first, kind),
                            if kind == LinkKind::Ethernet {
                                "MAC"
                            } else {
                                "UDP endpoint"
                            }
                        )
                    })?;
                (to, rest.to_vec())
            }
            _ => {
                let hr = from.ok_or("no HR on this SAN")?;
                let to = self
                    .lock()
                    .neighbours
                    .get(&hr)
                    .copied()
                    .ok_or_else(|| format!("HR {hr}: native address unknown"))?;
                (to, hops)
            }
        };
        if l2.len() > MAX_L2RHS {
            return Err(format!(
                "{} L2RHs: routers forward at most {MAX_L2RHS}",
                l2.len()
            ));
        }
        let s = self.stream(req, dst, l2, Target::Fixed(to))?;
        self.start(scope, s, req, stop)
    }
}
