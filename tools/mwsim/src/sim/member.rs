//! What a router or a host does with one event, touching only itself: a
//! packet arriving, a router's timer. Everything that reaches beyond the
//! member is written down as an [`Effect`] for the simulation to apply in
//! order ([`super::effect`]), so that members can handle the events of one
//! instant on different threads ([`super::step`]).

use std::sync::Arc;

use dataplane::{Decision, McastFib};
use ports::{HeapBuf, PacketBuf};
use rrp::NativeAddr;
use rrp::limits::MAX_L2RHS;
use rrp::router::{Interner, Output, Time};
use rrp::wire::Header;
use rrp::wire::bytes::be16_checked;
use rrp::wire::header;
use rrp::wire::packet::{Packet, locate_fast};
use rrp::{Address, PortId};

use super::effect::Effect;
use super::{Member, Payload, San, SimHost, SimRouter, Wire};

/// What a member's handling of an event reads of the rest of the
/// simulation: the time, the SANs' members and the routers' interner,
/// none of which an event at a member changes (the interner only gains
/// and drops copies of what routers hold).
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub(super) now: Time,
    pub(super) sans: &'a [San],
    pub(super) interner: &'a Interner,
}

/// The index of member `m` among the members of `san`.
pub(super) fn member_index(san: &San, m: Member) -> usize {
    san.members
        .iter()
        .position(|(x, _)| *x == m)
        .expect("a member of its SAN")
}

impl SimRouter {
    /// The router receives `bytes` on `port` from `native_src`. Returns
    /// whether its engine ran (its next timer may have moved).
    pub(super) fn receive(
        &mut self,
        port: PortId,
        native_src: &NativeAddr,
        bytes: &[u8],
        view: View<'_>,
        out: &mut Vec<Effect>,
    ) -> bool {
        if !self.alive || !self.ports_up[port] {
            out.push(Effect::Lost);
            return false;
        }
        let now = view.now;
        // A packet for this router (no L2RH, addressed to one of its HRs,
        // Hey-You or broadcast) is punted whatever the FIBs hold: handed to
        // the engine as the dataplane would, with the layout it located.
        if let Ok(layout) = locate_fast(bytes, MAX_L2RHS)
            && layout.l2rh_count == 0
        {
            let dst = Header::new_unchecked(bytes).dst();
            if dst == Address::HEY_YOU || dst == Address::BROADCAST || self.hrs.contains(&dst) {
                let view_p = Packet::with_layout_unchecked(bytes, layout);
                self.engine.handle_packet(now, port, native_src, &view_p);
                self.drain(view.interner, out);
                return true;
            }
        }
        let mut buf = HeapBuf::from_bytes(bytes);
        buf.set_native_src(*native_src);
        if self.fib.is_none() {
            self.engine.take_fib_changes();
            let mut f = dataplane::from_route_tables(&self.engine.fib(), &self.hrs);
            f.set_mcast(Arc::new(McastFib::from_tables(&self.engine.mcast())));
            if let Some(g) = &self.partitions {
                f.set_partitions(g.clone());
            }
            self.fib = Some(f);
            self.buddies_at = None;
            self.follow_buddies();
        }
        let decision = self
            .dp
            .decide(self.fib.as_ref().expect("built"), port, &mut buf);
        match decision {
            Decision::Forward {
                port: out_port,
                native,
                redirect,
                ..
            } => {
                let native = *native.get();
                if let Some(n) = redirect {
                    self.engine.handle_notice(now, &n);
                }
                if self.ports_up[out_port] {
                    let san = self.sans[out_port];
                    let from = self.member[out_port];
                    match view.sans[san].by_native.get(&native).copied() {
                        Some(to) => out.push(Effect::Send {
                            san,
                            from,
                            to: Some(to),
                            msg: Wire::new(buf.data().to_vec()),
                        }),
                        None => out.push(Effect::Lost),
                    }
                } else {
                    out.push(Effect::Lost);
                }
            }
            Decision::Replicate {
                ports: mask,
                notice,
                ..
            } => {
                if let Some(n) = notice {
                    self.engine.handle_notice(now, &n);
                }
                out.push(Effect::McastCopies(u64::from(mask.count_ones())));
                let key_of = |san: usize| {
                    let h = Header::new_unchecked(buf.data());
                    (
                        san,
                        h.dst(),
                        h.src(),
                        buf.data()[header::HEADER_LEN..].to_vec(),
                    )
                };
                for p in (0..32).filter(|p| mask & (1u32 << p) != 0) {
                    let out_port = PortId(p as u16);
                    if out_port.index() >= self.sans.len() || !self.ports_up[out_port] {
                        out.push(Effect::Lost);
                        continue;
                    }
                    let san = self.sans[out_port];
                    out.push(Effect::McastOnSan(key_of(san)));
                    let from = self.member[out_port];
                    out.push(Effect::Send {
                        san,
                        from,
                        to: None,
                        msg: Wire::new(buf.data().to_vec()),
                    });
                }
            }
            Decision::Punt { layout, .. } => match Packet::with_layout(buf.data(), layout) {
                Ok(p) => self.engine.handle_packet(now, port, native_src, &p),
                Err(_) => self.engine.handle_bytes(now, port, native_src, buf.data()),
            },
            Decision::Drop { reason, notice } => {
                self.dropped[reason] += 1;
                if let Some(n) = notice {
                    self.engine.handle_notice(now, &n);
                }
            }
        }
        self.drain(view.interner, out);
        true
    }

    /// Router's timers due at `now` run once.
    pub(super) fn timer(&mut self, view: View<'_>, out: &mut Vec<Effect>) {
        self.engine.on_timer(view.now);
        self.drain(view.interner, out);
    }

    /// Takes what the engine asks for: sends become effects (an RRP#9 to
    /// several buddies with its node records left to `interner`'s list,
    /// here on the member's thread), new FIBs and multicast state are
    /// patched into the router's own FIB set.
    pub(super) fn drain(&mut self, interner: &Interner, out: &mut Vec<Effect>) {
        while let Some(o) = self.engine.poll_output() {
            match o {
                Output::Send { .. } => out.push(Effect::Output(o)),
                Output::SendEach { port, to, packet } => out.push(Effect::SendEach {
                    port,
                    to,
                    payload: Payload::sharing_nodes(packet, interner),
                }),
                Output::FibChanged(_) => {
                    let changes = self.engine.take_fib_changes();
                    if let Some(f) = &mut self.fib {
                        match changes {
                            Some(c) => f.patch(&self.engine.fib(), &c),
                            None => {
                                // Built anew: the multicast table, the
                                // buddies and the partitions carried over,
                                // as the control plane does.
                                let mut new =
                                    dataplane::from_route_tables(&self.engine.fib(), &self.hrs);
                                new.set_mcast(f.mcast_arc());
                                new.set_buddies(f.buddies_arc());
                                new.set_partitions(f.partitions_arc());
                                *f = new;
                            }
                        }
                    }
                    out.push(Effect::FibChanged);
                }
                Output::McastChanged(_) => {
                    if let Some(f) = &mut self.fib {
                        let m = McastFib::following(&self.engine.mcast(), f.mcast());
                        f.set_mcast(Arc::new(m));
                    }
                }
                Output::Event(e) => out.push(Effect::Event(e)),
            }
        }
        self.follow_buddies();
    }
}

impl SimHost {
    /// Host `h` (this one), a member of SAN `san`, receives `bytes` from
    /// member `from`.
    pub(super) fn receive(
        &mut self,
        h: usize,
        san: usize,
        from: usize,
        bytes: &[u8],
        view: View<'_>,
        out: &mut Vec<Effect>,
    ) {
        let me = self.node.config().address;
        let Some(dst) = be16_checked(bytes, header::field::DST.start).map(Address) else {
            return;
        };
        let group = dst.is_logical() && self.node.listens(dst);
        if dst != me && dst != Address::BROADCAST && dst != Address::HEY_YOU && !group {
            return;
        }
        let Ok((reply, learned)) = self.node.handle_packet(bytes) else {
            return;
        };
        if let Some(l) = learned {
            self.inbox.push((view.now, l));
        }
        if let Some(reply) = reply {
            let me_idx = member_index(&view.sans[san], Member::Host(h));
            out.push(Effect::Send {
                san,
                from: me_idx,
                to: Some(from),
                msg: Wire::new(reply),
            });
        }
    }
}
