//! What handling one event at a router or a host asks of the whole
//! simulation, and its application.
//!
//! A router's or host's own state changes where the event is handled
//! ([`super::member`]); what reaches beyond it (sending on a SAN, which
//! draws on the one seeded generator and queues in order, and the run's
//! counters) is an [`Effect`], applied in the order of the events that
//! caused it. Whether the events of one instant were handled on one thread
//! or several ([`super::step`]), the effects are applied in the same
//! order, so the run is the same bit for bit.

use rrp::router::{Event, Output};
use rrp::{Address, PortId};

use super::{Payload, Sim, Wire};

/// One thing a handled event asks of the simulation.
#[derive(Debug)]
pub(super) enum Effect {
    /// An engine's [`Output::Send`], to send out of one of the router's
    /// ports.
    Output(Output),
    /// An engine's [`Output::SendEach`], its packet made a [`Payload`].
    SendEach {
        port: PortId,
        to: Vec<(Address, rrp::NativeAddr)>,
        payload: Payload,
    },
    /// A message onto SAN `san` from member `from` to member `to` (None:
    /// every member but the sender): a packet forwarded, a host's reply.
    Send {
        san: usize,
        from: usize,
        to: Option<usize>,
        msg: Wire,
    },
    /// A message lost (a dead router, a down link, an unknown recipient).
    Lost,
    /// The router's FIBs changed.
    FibChanged,
    /// The router's forwarding decision made this many multicast copies.
    McastCopies(u64),
    /// A multicast copy put on a SAN: (SAN, group, source, the packet after
    /// its header).
    McastOnSan((usize, Address, Address, Vec<u8>)),
    /// Something the router's engine reported.
    Event(Event),
    /// Moved out for application (an effect is applied once).
    Applied,
}

impl Sim {
    /// Applies `e`, caused by an event at router `r` (None: at a host).
    pub(super) fn apply(&mut self, r: Option<usize>, e: Effect) {
        match e {
            Effect::Output(Output::Send {
                port,
                native,
                packet,
            }) => {
                let r = r.expect("engine outputs come from routers");
                if !self.routers[r].ports_up[port] {
                    return;
                }
                let san = self.routers[r].sans[port];
                let from = self.router_member(r, port);
                let to = if native.is_empty() {
                    None
                } else {
                    match self.sans[san].by_native.get(&native).copied() {
                        Some(i) => Some(i),
                        None => {
                            self.stats.lost += 1;
                            return;
                        }
                    }
                };
                self.send(san, from, to, Wire::new(packet));
            }
            Effect::SendEach { port, to, payload } => {
                let r = r.expect("engine outputs come from routers");
                if !self.routers[r].ports_up[port] {
                    return;
                }
                let san = self.routers[r].sans[port];
                let from = self.router_member(r, port);
                for (dst, native) in to {
                    let Some(i) = self.sans[san].by_native.get(&native).copied() else {
                        self.stats.lost += 1;
                        continue;
                    };
                    let msg = Wire {
                        payload: payload.clone(),
                        dst: Some(dst),
                    };
                    self.send(san, from, Some(i), msg);
                }
            }
            Effect::Output(_) | Effect::Applied => {}
            Effect::Send { san, from, to, msg } => self.send(san, from, to, msg),
            Effect::Lost => self.stats.lost += 1,
            Effect::FibChanged => {
                self.stats.fib_changes += 1;
                self.last_fib_change = self.now;
                if self.cfg.track_loops {
                    self.loop_check_at = self.loop_check_at.min(self.now);
                }
            }
            Effect::McastCopies(n) => self.stats.mcast_copies += n,
            Effect::McastOnSan(key) => *self.mcast_on_san.entry(key).or_default() += 1,
            Effect::Event(e) => {
                if matches!(e, Event::HrDown { .. }) {
                    self.stats.hr_down_events += 1;
                }
                if self.events.len() < 100_000 {
                    let r = r.expect("engine events come from routers");
                    self.events.push((self.now, r, e));
                }
            }
        }
    }

    /// The member index of HR `port` of router `r` on its SAN.
    fn router_member(&self, r: usize, port: PortId) -> usize {
        self.routers[r].member[port]
    }
}
