//! The management client (docs/management.md "The client"): requests with
//! transaction IDs, matched answers, retries and time-outs, sans-IO.
//!
//! InfiniBand's TID rules: a response carries its request's TID; a
//! requester never has two operations with the same (TID, class)
//! outstanding; a retry reuses the TID (so the agent's cache answers it
//! without executing a Set twice). A TID is this client's 32-bit prefix and
//! a 32-bit count. A response to no outstanding request is dropped and
//! counted.

use std::collections::{BTreeSet, HashMap};

use rrp::wire::RouterHop;
use rrp::{Address, NativeAddr, PortId};

use crate::agent::Time;
use crate::wire::{DrRoute, MAD_LEN, Mad, MadRepr, Method, MgmtClass, PathHop, Status};

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// To this address, by the routes (L3).
    Address(Address),
    /// By this directed route: out of `port` (this node's), then the hops
    /// (InitialPath; the first hop's HR is this node's egress HR).
    Directed {
        /// The port it leaves by.
        port: PortId,
        /// The hops.
        path: Vec<PathHop>,
    },
    /// Along an L2 source route (the path tracer's L2 mode): to the router
    /// at `via` as a packet for it would go, then one L2RH per hop; EEP
    /// destination `dst` (Hey-You: whoever is at the end takes it).
    SourceRouted {
        /// The first router's HR (on this node's SAN, or reached by the
        /// routes).
        via: Address,
        /// The router hops after it.
        hops: Vec<RouterHop>,
        /// EEP destination.
        dst: Address,
    },
}

/// A request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Where.
    pub target: Target,
    /// Class (for a directed route, SUBN_DR).
    pub class: MgmtClass,
    /// Get or Set.
    pub method: Method,
    /// The attribute.
    pub attribute: u16,
    /// Its modifier.
    pub modifier: u32,
    /// The M_Key to give.
    pub mkey: u64,
    /// The attribute area of a Set (empty: zeros).
    pub data: Vec<u8>,
    /// How long to wait for each try.
    pub timeout_ms: Time,
    /// Tries after the first.
    pub retries: u32,
}

/// What the client asks its host to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientOutput {
    /// Send `mad` to `dst` by the routes (L3 requests).
    Route {
        /// EEP destination.
        dst: Address,
        /// The MAD.
        mad: Box<[u8; MAD_LEN]>,
    },
    /// Send `mad` out of `port` to `native` with EEP destination Hey-You
    /// (the first hop of a directed route).
    Send {
        /// Egress port.
        port: PortId,
        /// Native destination.
        native: NativeAddr,
        /// The MAD.
        mad: Box<[u8; MAD_LEN]>,
    },
    /// Send `mad` along an L2 source route: to the router at `via` by the
    /// routes' first hop, led by one L2RH per hop, EEP destination `dst`.
    SourceRoute {
        /// The first router's HR.
        via: Address,
        /// The router hops after it.
        hops: Vec<RouterHop>,
        /// EEP destination.
        dst: Address,
        /// The MAD.
        mad: Box<[u8; MAD_LEN]>,
    },
    /// A request finished.
    Done {
        /// The caller's handle.
        id: u64,
        /// The answer, or why there is none.
        result: Result<Answer, Failure>,
    },
}

/// A matched answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The response.
    pub mad: MadRepr,
    /// Who sent it (EEP source).
    pub from: Address,
    /// Tries it took.
    pub tries: u32,
    /// Milliseconds from the first send.
    pub rtt_ms: Time,
}

/// Why a request has no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No answer after every try.
    Timeout {
        /// Tries made.
        tries: u32,
    },
    /// The request cannot be built (a path that does not fit, data of the
    /// wrong length).
    Bad(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Timeout { tries } => write!(f, "no answer after {tries} tries"),
            Failure::Bad(why) => write!(f, "bad request: {why}"),
        }
    }
}

#[derive(Debug, Clone)]
struct Pending {
    id: u64,
    request: Request,
    mad: Box<[u8; MAD_LEN]>,
    started: Time,
    tries: u32,
    next: Time,
}

rrp::counter_set! {
    /// Counters of a client.
    pub struct ClientStats in "mgmt_client" {
        /// Requests started.
        pub requests: u64 => counter "requests",
        /// Sends, retries included.
        pub sent: u64 => counter "sent",
        /// Requests answered.
        pub answered: u64 => counter "answered",
        /// Requests timed out.
        pub timeouts: u64 => counter "timeouts",
        /// Responses that matched no outstanding request.
        pub unmatched: u64 => counter "unmatched",
    }
}

/// The client.
#[derive(Debug, Clone)]
pub struct Client {
    prefix: u32,
    count: u32,
    pending: HashMap<(u64, MgmtClass), Pending>,
    /// (next send, TID, class) of every pending request: what is due is
    /// found without looking at the rest (a manager's sweep has thousands
    /// out at once).
    due: BTreeSet<(Time, u64, u8)>,
    outputs: Vec<ClientOutput>,
    stats: ClientStats,
}

impl Client {
    /// A client whose TIDs start with `prefix` (e.g. drawn at start-up).
    pub fn new(prefix: u32) -> Client {
        Client {
            prefix,
            count: 0,
            pending: HashMap::new(),
            due: BTreeSet::new(),
            outputs: Vec::new(),
            stats: ClientStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> &ClientStats {
        &self.stats
    }

    /// Requests outstanding.
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }

    /// The outputs so far, taken.
    pub fn take_outputs(&mut self) -> Vec<ClientOutput> {
        std::mem::take(&mut self.outputs)
    }

    /// A fresh TID no outstanding request of `class` has.
    fn tid(&mut self, class: MgmtClass) -> u64 {
        loop {
            self.count = self.count.wrapping_add(1);
            let tid = (u64::from(self.prefix) << 32) | u64::from(self.count);
            if !self.pending.contains_key(&(tid, class)) {
                return tid;
            }
        }
    }

    /// Starts request `id` at `now`: its first send is an output.
    pub fn start(&mut self, now: Time, id: u64, request: Request) {
        self.stats.requests += 1;
        let tid = self.tid(request.class);
        let dr = match &request.target {
            Target::Address(_) | Target::SourceRouted { .. } => None,
            Target::Directed { path, .. } => Some(DrRoute::outbound(path.clone())),
        };
        let data = if request.data.is_empty() {
            vec![0; request.class.attribute_len()]
        } else {
            request.data.clone()
        };
        let repr = MadRepr {
            class: request.class,
            class_version: 1,
            response: false,
            method: request.method,
            status: Status::OK,
            tid,
            attribute: request.attribute,
            modifier: request.modifier,
            mkey: request.mkey,
            data,
            dr,
        };
        let mad = match repr.to_bytes() {
            Ok(m) => Box::new(m),
            Err(e) => {
                self.outputs.push(ClientOutput::Done {
                    id,
                    result: Err(Failure::Bad(e.to_string())),
                });
                return;
            }
        };
        let p = Pending {
            id,
            mad,
            started: now,
            tries: 0,
            next: now,
            request,
        };
        self.due.insert((p.next, tid, p.request.class.0));
        self.pending.insert((tid, p.request.class), p);
        self.send_due(now);
    }

    /// A response for this node (from the agent, which hands responses over).
    pub fn on_response(&mut self, now: Time, from: Address, mad: &[u8]) {
        let Ok(r) = Mad::new_checked(mad).and_then(|m| MadRepr::parse(&m)) else {
            self.stats.unmatched += 1;
            return;
        };
        // Directed-route requests go out as SUBN_DR and come back so.
        let Some(p) = self.pending.remove(&(r.tid, r.class)) else {
            self.stats.unmatched += 1;
            return;
        };
        self.due.remove(&(p.next, r.tid, r.class.0));
        self.stats.answered += 1;
        self.outputs.push(ClientOutput::Done {
            id: p.id,
            result: Ok(Answer {
                mad: r,
                from,
                tries: p.tries,
                rtt_ms: now.saturating_sub(p.started),
            }),
        });
    }

    /// Sends what is due (first sends and retries) and gives up what has
    /// no try left.
    pub fn on_timer(&mut self, now: Time) {
        self.send_due(now);
    }

    fn send_due(&mut self, now: Time) {
        let mut done = Vec::new();
        let mut keys: Vec<(u64, MgmtClass)> = self
            .due
            .range(..=(now, u64::MAX, u8::MAX))
            .map(|(_, tid, c)| (*tid, MgmtClass(*c)))
            .collect();
        keys.sort_unstable_by_key(|(tid, c)| (*tid, c.0));
        for key in keys {
            let p = self.pending.get_mut(&key).expect("listed");
            self.due.remove(&(p.next, key.0, key.1.0));
            if p.tries > p.request.retries {
                done.push(key);
                continue;
            }
            p.tries += 1;
            p.next = now + p.request.timeout_ms.max(1);
            self.due.insert((p.next, key.0, key.1.0));
            self.stats.sent += 1;
            let out = match &p.request.target {
                Target::Address(dst) => ClientOutput::Route {
                    dst: *dst,
                    mad: p.mad.clone(),
                },
                Target::Directed { port, path } => ClientOutput::Send {
                    port: *port,
                    native: path.first().map_or(NativeAddr::NONE, |h| h.native),
                    mad: p.mad.clone(),
                },
                Target::SourceRouted { via, hops, dst } => ClientOutput::SourceRoute {
                    via: *via,
                    hops: hops.clone(),
                    dst: *dst,
                    mad: p.mad.clone(),
                },
            };
            self.outputs.push(out);
        }
        for key in done {
            let p = self.pending.remove(&key).expect("listed");
            self.stats.timeouts += 1;
            self.outputs.push(ClientOutput::Done {
                id: p.id,
                result: Err(Failure::Timeout { tries: p.tries }),
            });
        }
    }

    /// When [`Client::on_timer`] wants to run next.
    pub fn next_timer(&self) -> Time {
        self.due.first().map_or(Time::MAX, |(t, _, _)| *t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(timeout_ms: Time) -> Request {
        Request {
            target: Target::Address(Address(0x0140)),
            class: MgmtClass::SUBN,
            method: Method::GET,
            attribute: 0x0011,
            modifier: 0,
            mkey: 0,
            data: Vec::new(),
            timeout_ms,
            retries: 0,
        }
    }

    /// The index of what is due follows every start, answer, retry and
    /// give-up: the next timer is always the earliest pending send.
    #[test]
    fn the_next_timer_is_the_earliest_pending_send() {
        let mut c = Client::new(7);
        assert_eq!(c.next_timer(), Time::MAX);
        for (id, t) in [(1, 30), (2, 10), (3, 20)] {
            c.start(0, id, get(t));
        }
        let sent = c.take_outputs();
        assert_eq!(sent.len(), 3);
        assert_eq!(c.next_timer(), 10);
        // The answer to request 2 (timeout 10): the next is request 3's.
        let ClientOutput::Route { mad, .. } = &sent[1] else {
            panic!("{sent:?}")
        };
        let asked = MadRepr::parse(&Mad::new_checked(&mad[..]).unwrap()).unwrap();
        let answer = asked.response(Status::OK);
        c.on_response(3, Address(0x0140), &answer.to_bytes().unwrap()[..]);
        assert_eq!(c.next_timer(), 20);
        // Request 3 gives up at 20 (no retries), request 1 at 30.
        c.on_timer(20);
        assert_eq!(c.next_timer(), 30);
        c.on_timer(30);
        assert_eq!(c.next_timer(), Time::MAX);
        let done: Vec<u64> = c
            .take_outputs()
            .iter()
            .filter_map(|o| match o {
                ClientOutput::Done { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        assert_eq!(done, [2, 3, 1]);
        assert_eq!(c.outstanding(), 0);
    }
}
