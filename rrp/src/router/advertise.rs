//! RRP#9 to buddies (docs/spec-notes.md 48): what an HR offers, batched
//! changes once per advertisement interval, the full set on refresh and to
//! a new buddy, and the encoding of RTs (multi-part when larger than the
//! SAN's MTU, node lists encoded once).

use std::collections::BTreeSet;

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::address::Address;
use crate::fxhash::FxHasher;
use crate::kind::PacketType;
use crate::native::NativeAddr;
use crate::port::PortId;
use crate::wire::message::{Message, RouteTable, RtPart};
use crate::wire::record::SourceRoute;

use super::engine::*;
use super::rt::*;
use super::select::*;

impl Router {
    /// `rt`'s CSR as its RRP#9 carries it: an R5 with its Q and MinMTU.
    fn csr_record(rt: &Rt) -> SourceRoute {
        SourceRoute {
            q: rt.q,
            route: rt.csr.to_l2rhs(),
            mtu: Some(rt.mtu),
        }
    }

    pub(super) fn rt_message(rt: &Rt) -> RouteTable {
        RouteTable {
            san_id: rt.san_id,
            sn: rt.sn,
            csr: Self::csr_record(rt),
            rcvf: rt.rcvf.clone(),
            nodes: rt.nodes.iter().map(NodeEntry::rt_node).collect(),
        }
    }

    /// `rt` as one RRP#9 packet from `src` (destination 0x0040, patched by
    /// the sender), its node records those its node list holds. One
    /// allocation: the records' lengths are known before any is written.
    pub(super) fn encode_rt_whole(&self, src: Address, rt: &Rt) -> Option<Vec<u8>> {
        use crate::wire::header::{HEADER_LEN, Header, HeaderRepr};
        use crate::wire::record::RecordRef;
        let nodes = rt.nodes.encoded();
        let csr = Self::csr_record(rt);
        let records = [
            RecordRef::RtHeader {
                san_id: rt.san_id,
                sn: rt.sn,
            },
            RecordRef::SourceRoute(&csr),
            RecordRef::Rcvf(&rt.rcvf),
        ];
        let data_len = records.iter().map(RecordRef::buffer_len).sum::<usize>() + nodes.len();
        if data_len / 8 > crate::wire::header::MAX_DATA_WORDS as usize {
            return None;
        }
        let mut bytes = Vec::with_capacity(HEADER_LEN + data_len + crate::wire::TRAILER_LEN);
        bytes.resize(HEADER_LEN, 0);
        for r in &records {
            r.emit(&mut bytes).ok()?;
        }
        bytes.extend_from_slice(nodes);
        debug_assert_eq!(bytes.len(), HEADER_LEN + data_len);
        HeaderRepr {
            dst: Address(0x0040),
            packet_type: PacketType::RRP,
            type_ext: crate::kind::RrpType::RouteTable as u16,
            src,
            ..HeaderRepr::default()
        }
        .emit(
            &mut Header::new_unchecked(&mut bytes[..HEADER_LEN]),
            data_len,
        );
        bytes.resize(HEADER_LEN + data_len + crate::wire::TRAILER_LEN, 0);
        Some(bytes)
    }

    /// Encodes `rt` as RRP#9 packets from HR `port` (destination left 0),
    /// split into parts when it exceeds the SAN's MTU.
    pub(super) fn encode_rt(&mut self, port: PortId, rt: &Rt) -> Vec<Vec<u8>> {
        let src = self.cfg.hrs[port].address;
        let mtu = self.cfg.hrs[port].mtu as usize;
        // Fast path: the node entries of a shared node list are encoded once.
        if let Some(bytes) = self.encode_rt_whole(src, rt)
            && (mtu == 0 || bytes.len() <= mtu)
        {
            return vec![bytes];
        }
        let whole = Self::rt_message(rt);
        let packet = |m: RouteTable, free: u16| -> Option<Vec<u8>> {
            let mut p = Message::RouteTable(m)
                .to_packet(Address(0x0040), src)
                .ok()?;
            p.header.free = free;
            p.to_bytes().ok()
        };
        let Some(bytes) = packet(whole.clone(), 0) else {
            return Vec::new();
        };
        if mtu == 0 || bytes.len() <= mtu {
            return vec![bytes];
        }
        let empty = RouteTable {
            nodes: Vec::new(),
            ..whole.clone()
        };
        let base = packet(empty.clone(), 0).map_or(usize::MAX, |b| b.len());
        let mut parts: Vec<RouteTable> = Vec::new();
        let mut cur = empty.clone();
        let mut cur_size = base;
        for n in whole.nodes {
            let mut v = Vec::new();
            if Message::RouteTable(RouteTable {
                nodes: vec![n.clone()],
                ..empty.clone()
            })
            .emit(&mut v)
            .is_err()
            {
                continue;
            }
            let one = 16 + v.len() + 8 - base;
            if base + one > mtu {
                // A node entry that cannot fit the SAN at all: left out.
                continue;
            }
            if cur_size + one > mtu && !cur.nodes.is_empty() {
                parts.push(std::mem::replace(&mut cur, empty.clone()));
                cur_size = base;
            }
            cur.nodes.push(n);
            cur_size += one;
        }
        parts.push(cur);
        let count = parts.len().min(255) as u8;
        parts
            .into_iter()
            .take(255)
            .enumerate()
            .filter_map(|(i, p)| {
                let free = RtPart {
                    index: i as u8 + 1,
                    count,
                }
                .to_free();
                packet(p, free)
            })
            .collect()
    }

    /// Sends encoded RRP#9 packets to buddies `to` (address, native), each
    /// packet once for all of them.
    pub(super) fn send_encoded(
        &mut self,
        port: PortId,
        to: &[(Address, NativeAddr)],
        packets: Vec<Vec<u8>>,
    ) {
        if to.is_empty() {
            return;
        }
        for p in packets {
            self.stats.rts_sent += to.len() as u64;
            self.emit(Output::SendEach {
                port,
                to: to.to_vec(),
                packet: p.into(),
            });
        }
    }

    /// Sends `rt` from HR `port` to buddy `dst`.
    pub(super) fn send_rt(&mut self, port: PortId, dst: Address, native: NativeAddr, rt: &Rt) {
        let packets = self.encode_rt(port, rt);
        self.send_encoded(port, &[(dst, native)], packets);
    }

    /// The RTs HR `port` offers its buddies: its kept RTs that came from twins.
    pub(super) fn offer(&self, port: PortId, san: Address) -> Vec<Rt> {
        self.offer_srcs(port, san)
            .into_iter()
            .map(|s| self.materialize(port, san, s).0)
            .collect()
    }

    /// [`Router::offer`] without building the RTs. While starting or
    /// draining, the box's own RTs rank below its buddies' and would drop
    /// out of the k best, unsent, leaving the buddies their cheaper copies
    /// (there is no withdrawal): then the k best of its own are offered, at
    /// the worst Q (docs/spec-notes.md 74).
    pub(super) fn offer_srcs(&self, port: PortId, san: Address) -> Vec<Src> {
        let own = |s: &Src| !matches!(s, Src::Learned(_));
        let ranked = self.ranked(port, san).into_iter().map(|(_, s)| s);
        if self.router_cost() == super::leave::Q_WORST {
            ranked.filter(own).take(self.cfg.k).collect()
        } else {
            ranked.take(self.cfg.k).filter(own).collect()
        }
    }

    /// The path and SN of the RT a source stands for, as HR `port`
    /// advertises it: what tells whether it was advertised already.
    fn adv_key(&self, san: Address, src: Src) -> (AdvKey, u16, Option<&Arc<RtBody>>) {
        match src {
            Src::TwinLrt(t) => (
                AdvKey {
                    san,
                    twin: t,
                    from: Address::UNSPECIFIED,
                    rcvf: 0,
                },
                self.hrs[t].lrt_sn,
                None,
            ),
            Src::TwinLearned(t, i) => {
                let l = &self.hrs[t].learned[&san][i];
                let mut h = FxHasher::default();
                l.body.rcvf.hash(&mut h);
                (
                    AdvKey {
                        san,
                        twin: t,
                        from: l.from,
                        rcvf: h.finish(),
                    },
                    l.body.sn,
                    Some(&l.body),
                )
            }
            Src::Learned(_) => unreachable!("learned RTs are not offered"),
        }
    }

    pub(super) fn send_full_set(&mut self, port: PortId, dst: Address, native: NativeAddr) {
        for san in self.known_sans() {
            for rt in self.offer(port, san) {
                self.send_rt(port, dst, native, &rt);
            }
        }
    }

    pub(super) fn advertise(&mut self, full: bool) {
        for p in self.hrs.ids() {
            if !self.hrs[p].up {
                continue;
            }
            let buddies: Vec<(Address, NativeAddr)> = self.hrs[p]
                .lrt
                .values()
                .filter(|e| e.router)
                .map(|e| (e.info.address, e.native))
                .collect();
            // Buddies due for the full set get it once, not also the changes.
            let new: BTreeSet<Address> = std::mem::take(&mut self.hrs[p].full_to);
            let to: Vec<(Address, NativeAddr)> = buddies
                .iter()
                .filter(|(b, _)| full || !new.contains(b))
                .copied()
                .collect();
            let sans: Vec<Address> = if full {
                self.hrs[p].dirty.clear();
                self.known_sans().into_iter().collect()
            } else {
                std::mem::take(&mut self.hrs[p].dirty).into_iter().collect()
            };
            for san in sans {
                for src in self.offer_srcs(p, san) {
                    let (key, sn, body) = self.adv_key(san, src);
                    let tail = body.map_or(&[][..], |b| &b.rcvf[..]);
                    let same = |a: &Advertised| a.sn == sn && *a.tail() == *tail;
                    if !full && self.hrs[p].advertised.get(&key).is_some_and(same) {
                        continue;
                    }
                    let body = body.cloned();
                    self.hrs[p].advertised.insert(key, Advertised { sn, body });
                    let rt = self.materialize(p, san, src).0;
                    if !to.is_empty() {
                        let packets = self.encode_rt(p, &rt);
                        self.send_encoded(p, &to, packets);
                    }
                }
            }
            if !full {
                for b in new {
                    if let Some(n) = self.hrs[p].lrt.get(&b).map(|e| e.native) {
                        self.send_full_set(p, b, n);
                    }
                }
            }
        }
    }
}

/// An RT an HR advertised, by SAN and path: the twin it came through, the
/// buddy that twin learned it from (0 for the twin's LRT), and a hash of
/// the rest of its RCVF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct AdvKey {
    san: Address,
    twin: PortId,
    from: Address,
    rcvf: u64,
}

/// What was advertised under an [`AdvKey`]: the SN, and the body the
/// buddy sent (none for the twin's LRT), which holds the rest of the RCVF.
#[derive(Debug, Clone)]
pub(super) struct Advertised {
    sn: u16,
    body: Option<Arc<RtBody>>,
}

impl Advertised {
    /// The RCVF after the twin and the buddy.
    fn tail(&self) -> &[Address] {
        self.body.as_ref().map_or(&[][..], |b| &b.rcvf[..])
    }
}

impl AdvKey {
    /// The whole RCVF of an RT advertised under this key: the twin (its
    /// address `twin`), the buddy, the rest.
    pub(super) fn rcvf(&self, twin: Address, a: &Advertised) -> Vec<Address> {
        let mut v = vec![twin];
        if self.from != Address::UNSPECIFIED {
            v.push(self.from);
        }
        v.extend_from_slice(a.tail());
        v
    }

    /// The twin the RT came through.
    pub(super) fn twin(&self) -> PortId {
        self.twin
    }
}
