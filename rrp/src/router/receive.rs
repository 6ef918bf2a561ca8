//! Punted packets for this box: parsing, the cheap pre-checks of RRP#9
//! (refusals, refreshes without a parse), multi-part RTs (docs/spec-notes.md
//! 23), and the RT procedure of Part-2 (docs/rrp.md "The RT procedure").

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::address::Address;
use crate::kind::PacketType;
use crate::limits::{MAX_L2RHS, MAX_RCVF};
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::route::Route;
use crate::router::event::{Event, RtRefusal};
use crate::serial;
use crate::wire::bytes::be16;
use crate::wire::message::{Message, RouteTable, RtPart};
use crate::wire::packet::Packet;
use crate::wire::record::{Mtu, Record, RecordIter, RecordRepr, RecordType};
use arrayvec::ArrayVec;

use super::auth::Admission;
use super::engine::*;
use super::guard::Source;
use super::rt::*;
use super::select::*;

#[derive(Debug, Clone)]
pub(super) struct PartBuf {
    pub(super) count: u8,
    pub(super) parts: BTreeMap<u8, RouteTable>,
    pub(super) expires: Time,
}

/// Whether `p` is a whole (not split) RRP#9 with no L2RH in front.
pub(super) fn whole_rrp9(p: &Packet<&[u8]>) -> bool {
    let h = p.header();
    p.layout().l2rh_count == 0
        && h.packet_type() == PacketType::RRP
        && h.type_ext() == 9
        && h.free() == 0
}

impl Router {
    /// An RT limit refused an RT of `from` on `port` (`why`: the
    /// per-neighbour or the per-HR limit, `max` RTs): the first refusal
    /// since the limit was last reached raises [`Event::RtLimit`] (the
    /// daemon's trap to the manager); the next ones are only counted.
    fn limit_reached(&mut self, port: PortId, from: Address, why: RtRefusal, max: usize) {
        let key = match why {
            RtRefusal::HrFull => (port, Address::UNSPECIFIED, why),
            _ => (port, from, why),
        };
        if self.at_limit.len() < 4096 && self.at_limit.insert(key) {
            self.event(Event::RtLimit {
                port,
                from,
                limit: why,
                max,
            });
        }
    }

    /// A packet for this box (DA = one of its HRs, Hey-You or broadcast)
    /// arrived on `port` from `native_src`, as the forwarding path located
    /// it (its layout travels with the punt: the packet is not walked again).
    pub fn handle_packet(
        &mut self,
        now: Time,
        port: PortId,
        native_src: &NativeAddr,
        p: &Packet<&[u8]>,
    ) {
        self.stats.received += 1;
        if !self.hrs.get(port).is_some_and(|h| h.up) {
            return;
        }
        if !p.header().packet_type().is_control() {
            self.stats.not_control += 1;
            return;
        }
        // The SAN's authentication first (docs/spec-notes.md 59): what
        // follows reads the packet as it was before it was signed.
        let stripped;
        let checked;
        let p = match self.admit(now, port, native_src, p) {
            Admission::AsIs => p,
            Admission::Refused(_) => return,
            Admission::Stripped(bytes) => {
                stripped = bytes;
                match Packet::new_checked(&stripped[..], usize::MAX) {
                    Ok(v) => {
                        checked = v;
                        &checked
                    }
                    Err(error) => {
                        self.stats.parse_errors += 1;
                        self.event(Event::BadPacket {
                            port,
                            from: Some(p.header().src()),
                            error,
                        });
                        return;
                    }
                }
            }
        };
        // Who sent it (docs/spec-notes.md 60): a buddy's or this box's SA
        // from elsewhere is dropped; strangers are counted.
        if self.check_source(port, p.header().src(), native_src) == Source::Spoofed {
            return;
        }
        let h = p.header();
        if self.rt_precheck(now, port, native_src, p) {
            return;
        }
        if self.rt_known_nodes(now, port, native_src, p) {
            return;
        }
        let m = match Message::parse(
            h.packet_type(),
            h.type_ext(),
            p.data(),
            p.layout().data_offset(),
        ) {
            Ok(m) => m,
            Err(error) => {
                self.stats.parse_errors += 1;
                self.event(Event::BadPacket {
                    port,
                    from: Some(h.src()),
                    error,
                });
                return;
            }
        };
        self.handle_message(now, port, native_src, p, m);
    }

    /// A packet for this box as bytes (hosts without a forwarding path in
    /// front, such as the simulator's or a test's): located, then handled
    /// as [`Router::handle_packet`]; a malformed one is counted and logged.
    pub fn handle_bytes(&mut self, now: Time, port: PortId, native_src: &NativeAddr, bytes: &[u8]) {
        match Packet::new_checked(bytes, usize::MAX) {
            Ok(p) => self.handle_packet(now, port, native_src, &p),
            Err(error) => {
                self.stats.received += 1;
                if !self.hrs.get(port).is_some_and(|h| h.up) {
                    return;
                }
                let head = crate::wire::packet::header_of(bytes, usize::MAX)
                    .map(|(h, _)| (h.packet_type(), h.src()));
                if head.is_some_and(|(pt, _)| !pt.is_control()) {
                    self.stats.not_control += 1;
                } else {
                    self.stats.parse_errors += 1;
                    self.event(Event::BadPacket {
                        port,
                        from: head.map(|(_, src)| src),
                        error,
                    });
                }
            }
        }
    }

    pub(super) fn handle_message(
        &mut self,
        now: Time,
        port: PortId,
        native_src: &NativeAddr,
        p: &Packet<&[u8]>,
        m: Message,
    ) {
        let h = p.header();
        let sa = h.src();
        // Requests are answered at a bounded rate per sender and in all
        // (a flood of RRP#7 or #8 costs answers, and an RRP#8 a full set).
        let request = matches!(
            m,
            Message::RouteRequest { .. }
                | Message::WhichHr { .. }
                | Message::InfoRequest(_)
                | Message::WhoAreYou
                | Message::RtRequest
        );
        if request && !self.answers.allow(now, sa) {
            self.stats.requests_limited += 1;
            return;
        }
        // Requests are answered by the HR they are addressed to.
        let hr = self.port_of(h.dst()).unwrap_or(port);
        match m {
            Message::RouteRequest { dst } => self.answer_routes(port, hr, native_src, sa, dst),
            Message::WhichHr { dst } => self.answer_which_hr(port, hr, native_src, sa, dst),
            Message::InfoRequest(q) => self.answer_info(port, hr, native_src, sa, &q),
            Message::WhoAreYou => {
                if sa.is_node() {
                    let info = self.my_info(hr);
                    self.stats.requests_answered += 1;
                    self.send_reply(port, native_src, sa, hr, &Message::Info(vec![info]));
                    if hr == port
                        && !self.hrs[port].lrt.contains_key(&sa)
                        && !self.box_has(sa)
                        && self.hrs[port].lrt.len() < self.cfg.limits.max_lrt
                    {
                        // An unknown node on this SAN: ask who it is.
                        self.send_msg(port, *native_src, sa, &Message::WhoAreYou, 0);
                    }
                }
            }
            Message::Info(nodes) => self.handle_info(now, port, native_src, sa, &nodes),
            Message::RtRequest => {
                if sa.is_node() {
                    self.stats.requests_answered += 1;
                    let buddy = self.hrs[port]
                        .lrt
                        .get(&sa)
                        .is_some_and(|e| e.router && e.native == *native_src);
                    if buddy {
                        // Batched with the full set a new buddy gets anyway.
                        self.hrs[port].full_to.insert(sa);
                    } else {
                        self.send_full_set(port, sa, *native_src);
                    }
                }
            }
            Message::RouteTable(rt) => {
                let part = RtPart::from_free(h.free());
                // The node records of a whole RRP#9, as they came: the list
                // is found again by them.
                let nodes = match Self::rt_head(p) {
                    Some((_, _, _, start)) => NodesIn::Encoded(p.data()[start..].to_vec()),
                    None => NodesIn::Parsed,
                };
                self.handle_rt(now, port, native_src, sa, part, rt, nodes)
            }
            // From buddies only, at a bounded rate; a live HR is probed
            // before a third party's word is taken.
            Message::HrDown { hr: x } => {
                if self.take_down(now, port, sa) {
                    self.hr_down_from(now, x, sa);
                }
            }
            Message::LinkDown { a, b } => {
                if self.take_down(now, port, sa) {
                    self.link_down(now, a, b, Some(sa));
                }
            }
            Message::Routes { .. }
            | Message::Redirect { .. }
            | Message::Unknown { .. }
            | Message::General { .. } => {}
        }
    }

    /// Where the node records of an unsplit RRP#9 start in its data
    /// block (after R8, R5 and R7), with the three records.
    pub(super) fn rt_head<'p>(
        p: &'p Packet<&[u8]>,
    ) -> Option<(Record<'p>, Record<'p>, Record<'p>, usize)> {
        if !whole_rrp9(p) {
            return None;
        }
        let mut it = RecordIter::new(p.data(), 0);
        let (r8, _) = it.next()?.ok()?;
        let (r5, _) = it.next()?.ok()?;
        let (r7, at) = it.next()?.ok()?;
        if r7.record_type() != RecordType::Rcvf {
            return None;
        }
        let start = at + r7.bytes().len();
        Some((r8, r5, r7, start))
    }

    /// An RRP#9 whose node list this box already holds: only its R8, R5 and
    /// R7 are parsed. Returns whether it was handled.
    pub(super) fn rt_known_nodes(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        p: &Packet<&[u8]>,
    ) -> bool {
        let Some((r8, r5, r7, start)) = Self::rt_head(p) else {
            return false;
        };
        let Some(nodes) = self.interner.node_list(&p.data()[start..]) else {
            return false;
        };
        let (Some((san_id, sn)), Ok(RecordRepr::SourceRoute(csr)), Ok(RecordRepr::Rcvf(rcvf))) = (
            r8.rt_header(),
            RecordRepr::parse(&r5),
            RecordRepr::parse(&r7),
        ) else {
            return false;
        };
        let rt = RouteTable {
            san_id,
            sn,
            csr,
            rcvf,
            nodes: Vec::new(),
        };
        let sa = p.header().src();
        self.handle_rt(
            now,
            port,
            native,
            sa,
            Some(RtPart::WHOLE),
            rt,
            NodesIn::Known(nodes),
        );
        true
    }

    /// Settles an RRP#9 from its R8, R5 and R7 alone, without building its
    /// node list, when the outcome does not depend on the nodes: a refresh
    /// (same RCVF, same SN), or an RT that would not be among the k best.
    /// Returns whether it was settled.
    pub(super) fn rt_precheck(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        p: &Packet<&[u8]>,
    ) -> bool {
        let Some((r8, r5, r7, _)) = Self::rt_head(p) else {
            return false;
        };
        let sa = p.header().src();
        let known = self.hrs[port]
            .lrt
            .get(&sa)
            .is_some_and(|e| e.router && e.native == *native);
        if !known {
            return false;
        }
        let (Some((san, sn)), Some(q)) = (r8.rt_header(), r5.route_quality()) else {
            return false;
        };
        let d7 = r7.data_pad();
        if d7.len() % 2 != 0 || d7.len() / 2 + 1 > self.cfg.limits.max_rcvf {
            return false;
        }
        let mut rcvf: ArrayVec<Address, MAX_RCVF> = ArrayVec::new();
        for c in d7.chunks_exact(2) {
            let a = Address(be16(c, 0));
            if rcvf.try_push(a).is_err() {
                return false;
            }
        }
        if san == self.cfg.hrs[port].san_id || rcvf.iter().any(|a| self.box_has(*a)) {
            return false;
        }
        let k = self.cfg.k;
        let q = q.saturating_add(self.cfg.hrs[port].cost);
        let Some(list) = self.hrs[port].learned.get_mut(&san) else {
            return false;
        };
        if let Some(i) = list.iter().position(|l| l.same_rcvf(sa, &rcvf)) {
            match serial::compare(sn, list[i].body.sn) {
                Ordering::Equal => {
                    list[i].expires = now + self.cfg.timers.hold_ms;
                    self.stats.rts_received += 1;
                    self.stats.rts_refreshed += 1;
                    return true;
                }
                _ => return false,
            }
        }
        if list.len() >= k {
            let cand = Rank {
                q,
                native: native.as_bytes(),
                pre: [Some(sa), None],
                rcvf: &rcvf,
            };
            if cand.cmp(&learned_rank(&list[k - 1])) != Ordering::Less {
                self.stats.rts_received += 1;
                return true;
            }
        }
        false
    }

    /// The RT procedure for an RRP#9 (or one part of a split one) from `sa`:
    /// refusals by reason, reassembly, then the k best per SAN.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle_rt(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        sa: Address,
        part: Option<RtPart>,
        rt: RouteTable,
        nodes_in: NodesIn,
    ) {
        self.stats.rts_received += 1;
        let refuse = |s: &mut Self, why: RtRefusal, san: Address| {
            s.stats.rts_refused[why] += 1;
            s.event(Event::RtRefused {
                port,
                from: sa,
                san,
                why,
            });
        };
        let known = self.hrs[port]
            .lrt
            .get(&sa)
            .is_some_and(|e| e.router && e.native == *native);
        if !known {
            return refuse(self, RtRefusal::UnknownSender, rt.san_id);
        }
        let Some(part) = part else {
            return refuse(self, RtRefusal::BadPart, rt.san_id);
        };
        let (rt, nodes_in) = if part.count > 1 {
            let key = (sa, rt.san_id, rt.sn);
            let hold = self.cfg.timers.hold_ms;
            let buf = self.hrs[port].parts.entry(key).or_insert_with(|| PartBuf {
                count: part.count,
                parts: BTreeMap::new(),
                expires: now + hold,
            });
            if buf.count != part.count
                || buf
                    .parts
                    .values()
                    .next()
                    .is_some_and(|f| f.csr != rt.csr || f.rcvf != rt.rcvf)
            {
                self.hrs[port].parts.remove(&key);
                return refuse(self, RtRefusal::BadPart, key.1);
            }
            buf.parts.insert(part.index, rt);
            if buf.parts.len() < part.count as usize {
                return;
            }
            let buf = self.hrs[port].parts.remove(&key).expect("present");
            let mut it = buf.parts.into_values();
            let mut whole = it.next().expect("count >= 2");
            for p in it {
                whole.nodes.extend(p.nodes);
            }
            (whole, NodesIn::Parsed)
        } else {
            (rt, nodes_in)
        };
        let san = rt.san_id;
        if rt.rcvf.len() + 1 > self.cfg.limits.max_rcvf {
            return refuse(self, RtRefusal::RcvfTooLong, san);
        }
        let count = match &nodes_in {
            NodesIn::Known(a) => a.len(),
            _ => rt.nodes.len(),
        };
        if count > self.cfg.limits.max_nodes_per_rt {
            return refuse(self, RtRefusal::TooManyNodes, san);
        }
        if san == self.cfg.hrs[port].san_id {
            return refuse(self, RtRefusal::OwnSan, san);
        }
        if rt.rcvf.iter().any(|a| self.box_has(*a)) {
            return refuse(self, RtRefusal::Loop, san);
        }
        if rt
            .rcvf
            .iter()
            .chain([&sa])
            .any(|a| self.tombstoned(now, *a))
        {
            // Asked again for its RTs once the tombstone is gone, so that a
            // route refused now does not wait for the next refresh.
            self.refused_tombstoned.insert((port, sa));
            return refuse(self, RtRefusal::Tombstone, san);
        }
        let Ok(csr) = Route::from_l2rhs(&rt.csr.route) else {
            return refuse(self, RtRefusal::BadRoute, san);
        };
        // Held, the CSR starts with the hop to the buddy (a native hop,
        // which never merges with the next).
        if csr.len() + 1 > MAX_L2RHS {
            return refuse(self, RtRefusal::BadRoute, san);
        }
        let nodes = match nodes_in {
            NodesIn::Known(a) => a,
            nodes_in => {
                let mut nodes = Vec::with_capacity(rt.nodes.len());
                for n in rt.nodes {
                    let Ok(r) = Route::from_l2rhs(&n.route.route) else {
                        return refuse(self, RtRefusal::BadRoute, san);
                    };
                    nodes.push(NodeEntry {
                        info: n.info,
                        route: r,
                        q: n.route.q,
                    });
                }
                // RTs of one SAN with one SN arrive by several paths: one
                // copy of their node list, found again by its records.
                let list = match nodes_in {
                    NodesIn::Encoded(bytes) => NodeList::with_encoding(nodes, bytes),
                    _ => NodeList::new(nodes),
                };
                self.interner.add_node_list(list)
            }
        };
        let body = RtBody {
            san_id: san,
            sn: rt.sn,
            q: rt.csr.q,
            mtu: rt.csr.mtu,
            csr: csr.0.into(),
            rcvf: rt.rcvf.into(),
            nodes: NodesRef(nodes),
        };
        self.accept_rt(now, port, native, sa, body);
    }

    /// An RT that passed every check: held if it is among the k best of its
    /// SAN (replacing an older version of itself).
    fn accept_rt(
        &mut self,
        now: Time,
        port: PortId,
        native: &NativeAddr,
        sa: Address,
        body: RtBody,
    ) {
        let san = body.san_id;
        let hc = &self.cfg.hrs[port];
        let q = body.q.saturating_add(hc.cost);
        let mtu = mtu_words(hc.mtu).min(body.mtu.unwrap_or(Mtu::UNLIMITED));
        let expires = now + self.cfg.timers.hold_ms;
        let k = self.cfg.k;
        let limit = self.cfg.limits.max_rts_per_neighbour;
        let refuse = |s: &mut Self, why: RtRefusal| {
            s.stats.rts_refused[why] += 1;
            // A loop is RRP working (a buddy's RT coming back through this
            // box, every refresh): counted, not logged.
            if why != RtRefusal::Loop {
                s.event(Event::RtRefused {
                    port,
                    from: sa,
                    san,
                    why,
                });
            }
        };
        let h = &mut self.hrs[port];
        let from_count = h.per_buddy.get(&sa).copied().unwrap_or(0);
        let list = h.learned.entry(san).or_default();
        let fib_before = fib_summary(list);
        let mut replaced = false;
        if let Some(i) = list.iter().position(|l| l.same_rcvf(sa, &body.rcvf)) {
            match serial::compare(body.sn, list[i].body.sn) {
                Ordering::Less => return refuse(self, RtRefusal::Stale),
                Ordering::Equal => {
                    list[i].expires = expires;
                    self.stats.rts_refreshed += 1;
                    return;
                }
                Ordering::Greater => {
                    let old = list.remove(i);
                    uncount(&mut h.per_buddy, old.from);
                    replaced = true;
                }
            }
        } else if from_count >= limit {
            self.limit_reached(port, sa, RtRefusal::TooManyRts, limit);
            return refuse(self, RtRefusal::TooManyRts);
        } else if h.per_buddy.values().sum::<usize>() >= self.cfg.limits.max_rts_per_hr {
            let max = self.cfg.limits.max_rts_per_hr;
            self.limit_reached(port, sa, RtRefusal::HrFull, max);
            return refuse(self, RtRefusal::HrFull);
        }
        // A new RT taken: below the limits again, so the next time one is
        // reached is news (a newer SN replacing a held RT says nothing).
        if !replaced && !self.at_limit.is_empty() {
            self.at_limit.retain(|(p, from, why)| {
                *p != port || (*why == RtRefusal::TooManyRts && *from != sa)
            });
        }
        let cand = Rank {
            q,
            native: native.as_bytes(),
            pre: [Some(sa), None],
            rcvf: &body.rcvf,
        };
        let pos = list
            .iter()
            .position(|l| cand.cmp(&learned_rank(l)) == Ordering::Less)
            .unwrap_or(list.len());
        if pos < k {
            let body = self.interner.body(body);
            list.insert(
                pos,
                Learned {
                    body,
                    from: sa,
                    native: *native,
                    q,
                    mtu,
                    expires,
                },
            );
            *h.per_buddy.entry(sa).or_default() += 1;
            if list.len() > k {
                for old in list.drain(k..) {
                    uncount(&mut h.per_buddy, old.from);
                }
            }
            self.stats.rts_accepted += 1;
        } else if !replaced {
            // Not among the k best: nothing changes.
            return;
        }
        // Inserted, or the older version it replaced is gone.
        let fib_after = fib_summary(list);
        if list.is_empty() {
            h.learned.remove(&san);
        }
        let fib = fib_before.is_none() || fib_after.is_none() || fib_before != fib_after;
        self.learned_changed_fib(port, san, fib);
    }
}

/// What the engine has of an RRP#9's node list when it handles the RT.
#[derive(Debug)]
pub(super) enum NodesIn {
    /// A list it holds already (found by its records).
    Known(Arc<NodeList>),
    /// The parsed entries of a whole RRP#9, and the records they came in.
    Encoded(Vec<u8>),
    /// The parsed entries only (reassembled from parts).
    Parsed,
}
