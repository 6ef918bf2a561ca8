//! Dataplane notices answered under the error manners of
//! docs/architecture.md "Route tables and RRP": ERR UNK, RRP#3, ERR GENERAL
//! (a packet too large, or one the partitions refused: docs/spec-notes.md
//! 76), rate-limited per source and in all (`rrp::rate::RateLimiter`).

use crate::kind::PacketType;
use crate::router::notice::{Notice, NoticeKind};
use crate::wire::message::Message;

use super::engine::*;

impl Router {
    /// A dataplane notice: may produce ERR UNK, RRP#3 or ERR GENERAL under
    /// the error manners of docs/architecture.md "Route tables and RRP".
    pub fn handle_notice(&mut self, now: Time, n: &Notice) {
        if !self.hrs.has(n.in_port) {
            return;
        }
        if n.kind == NoticeKind::McastConflict {
            self.mcast_conflict(now, n.in_port, &n.native_src);
            return;
        }
        let Some(h) = n.header() else {
            return;
        };
        let (dst, src, pt) = (h.dst(), h.src(), h.packet_type());
        if pt == PacketType::ERR {
            self.stats.errors_suppressed_err += 1;
            return;
        }
        if !src.is_node() {
            self.stats.errors_suppressed_source += 1;
            return;
        }
        let port = n.in_port;
        let msg = match n.kind {
            NoticeKind::NoRoute => Message::Unknown { addr: dst },
            NoticeKind::McastConflict => return,
            NoticeKind::Redirect => {
                // Only to a node of this HR's SAN, and naming the best first
                // HR as that node sees it (docs/spec-notes.md 52).
                if !self.hrs[port].lrt.contains_key(&src) {
                    self.stats.errors_suppressed_source += 1;
                    return;
                }
                match self.which_hr(port, dst) {
                    Some(via) if via != self.cfg.hrs[port].address => {
                        Message::Redirect { dst, via }
                    }
                    _ => return,
                }
            }
            NoticeKind::Mtu | NoticeKind::Partition => {
                // The packet's first bytes, enclosed as far as the SAN the
                // ERR goes back on carries them.
                let mtu = self.cfg.hrs[port].mtu as usize;
                let room = if mtu == 0 {
                    usize::MAX
                } else {
                    mtu.saturating_sub(24)
                };
                let take = n.bytes().len().min(room);
                Message::General {
                    enclosed: n.bytes()[..take].to_vec(),
                }
            }
        };
        if !self.limiter.allow(now, src) {
            self.stats.errors_suppressed_rate += 1;
            return;
        }
        match n.kind {
            NoticeKind::NoRoute => self.stats.err_unk_sent += 1,
            NoticeKind::Redirect => self.stats.redirects_sent += 1,
            NoticeKind::Mtu | NoticeKind::Partition => self.stats.err_general_sent += 1,
            NoticeKind::McastConflict => {}
        }
        self.send_reply(port, &n.native_src, src, port, &msg);
    }
}
