//! What a host receives: the receive loop, and each datagram counted and
//! handled (probes, RRP and ERR, management).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use mwgen::probe::{self, Received};
use ports::{HeapBuf, PacketBuf};
use rrp::NativeAddr;
use rrp::kind::{PacketType, RrpType};
use rrp::limits::MAX_L2RHS;
use rrp::node::Learned;
use rrp::wire::{Header, Message, locate};

use super::format::control_name;
use super::management;
use super::now_ns;
use super::state::{Answer, Host};

impl Host<'_> {
    /// The receive loop: until stopped.
    pub(super) fn receive_loop(&self, stop: &AtomicBool) {
        let mut buf = vec![0u8; 65536];
        while !self.stopping(stop) {
            let mut got = false;
            if self
                .link
                .receive(&mut buf, |pkt, from| {
                    got = true;
                    self.on_received(pkt, from)
                })
                .is_err()
            {
                self.lock().rx.recv_errors += 1;
            }
            if !got {
                let held = self.lock().impair_flush();
                self.deliver(held);
            }
        }
    }

    /// One datagram (or frame) from the link: through the impairment, when
    /// on, then to [`Host::on_datagram`].
    pub(super) fn on_received(&self, pkt: &[u8], from: NativeAddr) {
        let released = self.lock().impair(pkt, from);
        match released {
            None => self.on_datagram(pkt, from),
            Some(bufs) => self.deliver(bufs),
        }
    }

    /// Datagrams the impairment released, in order.
    pub(super) fn deliver(&self, bufs: Vec<HeapBuf>) {
        for b in bufs {
            self.on_datagram(b.data(), b.native_src());
        }
    }

    /// One datagram (or frame): counted exactly once (probe, control, other
    /// or malformed); a request about this node is answered to `from`.
    pub(super) fn on_datagram(&self, pkt: &[u8], from: NativeAddr) {
        let now = now_ns();
        let mut st = self.lock();
        st.rx.datagrams += 1;
        let Ok(layout) = locate(pkt, MAX_L2RHS) else {
            st.rx.malformed += 1;
            return;
        };
        let hdr = Header::new_unchecked(&pkt[layout.header_offset..]);
        let (dst, pt, te, src) = (hdr.dst(), hdr.packet_type(), hdr.type_ext(), hdr.src());
        if pt == PacketType::MANAGEMENT {
            // The SAN's authentication first: the MAD as it was signed.
            let mad = match st.node.admit(pkt) {
                Ok(None) => pkt[layout.data_offset()..layout.trailer_offset()].to_vec(),
                Ok(Some(b)) => match locate(&b, MAX_L2RHS) {
                    Ok(l) => b[l.data_offset()..l.trailer_offset()].to_vec(),
                    Err(_) => {
                        st.rx.malformed += 1;
                        return;
                    }
                },
                Err(_) => {
                    st.rx.auth_refused += 1;
                    return;
                }
            };
            st.rx.management += 1;
            drop(st);
            let input = management::Input::Packet {
                native: from,
                src,
                dst,
                mad,
            };
            if self.mgmt.as_ref().is_none_or(|m| m.send(input).is_err()) {
                // No management here: counted, not answered.
                self.lock().rx.management_ignored += 1;
            }
            return;
        }
        if dst.is_logical() && !st.node.listens(dst) {
            // A group packet on the SAN for a group this host is not in.
            st.rx.not_member += 1;
            return;
        }
        if !pt.is_control() && !st.partitions.admits(hdr.free()) {
            st.rx.partition_refused += 1;
            return;
        }
        match probe::read(pkt) {
            Received::Probe(p) => {
                st.rx.probe(src, dst, p, pkt, now);
                return;
            }
            Received::Malformed => {
                // A probe too short for its fields.
                st.rx.malformed += 1;
                return;
            }
            Received::Other => {}
        }
        let (reply, learned) = match st.node.handle_packet(pkt) {
            Ok(x) => x,
            Err(e) if matches!(e.kind, rrp::error::ErrorKind::Unauthenticated(_)) => {
                st.rx.auth_refused += 1;
                return;
            }
            Err(_) => {
                st.rx.malformed += 1;
                return;
            }
        };
        if !pt.is_control() {
            st.rx.other += 1;
            return;
        }
        *st.rx.control.entry(control_name(pt, te)).or_default() += 1;
        let direct = layout.l2rh_count == 0 && src.is_node() && !self.is_configured_hr(src);
        if pt == PacketType::RRP && te == RrpType::WhoAreYou as u16 && direct {
            st.neighbours.insert(src, from);
        }
        let mut answer = None;
        match learned {
            Some(Learned::Redirect { dst, .. }) => {
                st.redirect_at.insert(dst, Instant::now());
                answer = Some((Answer::Redirect, dst))
            }
            Some(Learned::Routes { dst, .. }) => {
                st.routes_from.insert(dst, src);
                answer = Some((Answer::Routes, dst));
            }
            Some(Learned::Unknown(a)) => {
                *st.rx.errors.entry("UNK").or_default() += 1;
                answer = Some((Answer::Unknown, a));
            }
            Some(Learned::Info(nodes)) => {
                if direct && nodes.len() == 1 && nodes[0].address == src {
                    st.neighbours.insert(src, from);
                }
            }
            Some(Learned::Other(m)) => {
                let kind = match m {
                    Message::HrDown { .. } => Some("HRDOWN"),
                    Message::LinkDown { .. } => Some("LINKDOWN"),
                    Message::General { .. } => Some("GENERAL"),
                    _ => None,
                };
                if let Some(k) = kind {
                    *st.rx.errors.entry(k).or_default() += 1;
                }
            }
            Some(Learned::Data(_)) | None => {}
        }
        if let Some(key) = answer {
            *st.answers.entry(key).or_default() += 1;
            self.answered.notify_all();
        }
        if let Some(r) = reply {
            if te == RrpType::WhoAreYou as u16 {
                st.rx.rrp7_answered += 1;
            } else {
                st.rx.rrp4_answered += 1;
            }
            drop(st);
            if self.link.send(&r, &from).is_err() {
                self.lock().rx.reply_errors += 1;
            }
        }
    }
}
