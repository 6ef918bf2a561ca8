//! Node-side RRP (Part-2 node levels A-C): what a host on a SAN does.
//!
//! A [`Node`] answers RRP#7 (and RRP#4 about itself) with RRP#5, remembers
//! the answers it gets (RRP#3 redirects, RRP#2 routes, RRP#5 information,
//! ERR UNK), and builds the requests a Level-B/C node sends (RRP#1, #4, #6).
//! Sans-IO like the router: the host process carries the bytes.

use std::collections::{BTreeMap, BTreeSet};

use std::sync::atomic::{AtomicU64, Ordering};

use crate::address::Address;
use crate::auth::{AuthConfig, Replay, Verdict};
use crate::error::Result;
use crate::wire::header::{HEADER_LEN, Header};
use crate::wire::message::{InfoQuery, Message, NodeInfo};
use crate::wire::packet::PacketRepr;
use crate::wire::record::{Capability, SourceRoute};

/// The most groups one node listens to: what its R4 carries.
pub const MAX_GROUPS: usize = 64;

/// The longest node name (R2) a box is given, in bytes: the router's, an
/// HR's, a static LRT entry's (in the configuration or by `route add`).
pub const MAX_NAME: usize = 64;

/// Node implementation levels (Part-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Built-in L2 source routes only; does not answer RRP.
    A,
    /// Built-in L3 addresses; asks HRs for the first HR and follows redirects.
    B,
    /// Asks for routes and node information; answers queries about itself.
    C,
}

/// What a node is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// Its address.
    pub address: Address,
    /// Its name.
    pub name: Option<Vec<u8>>,
    /// Its capabilities.
    pub capabilities: Vec<Capability>,
    /// Logical addresses it listens to.
    pub logical: Option<Vec<Address>>,
    /// Its level.
    pub level: Level,
}

/// What a node learned from an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Learned {
    /// RRP#3: use HR `via` for `dst`.
    Redirect {
        /// Destination.
        dst: Address,
        /// HR to use.
        via: Address,
    },
    /// RRP#2: routes to `dst`.
    Routes {
        /// Destination.
        dst: Address,
        /// Routes, best first.
        routes: Vec<SourceRoute>,
    },
    /// RRP#5: information about nodes.
    Info(Vec<NodeInfo>),
    /// ERR UNK.
    Unknown(Address),
    /// Another ERR (HRDOWN, LINKDOWN, GENERAL) or an unexpected message.
    Other(Message),
    /// A packet that is not RRP or ERR (data for this node).
    Data(PacketRepr),
}

/// A node's RRP state.
#[derive(Debug, Clone)]
pub struct Node {
    cfg: NodeConfig,
    /// Redirects received: destination -> HR to use.
    pub redirects: BTreeMap<Address, Address>,
    /// Routes received: destination -> routes.
    pub routes: BTreeMap<Address, Vec<SourceRoute>>,
    /// Destinations reported unknown.
    pub unknown: BTreeSet<Address>,
    /// The SAN's keys (docs/spec-notes.md 59): what it sends is signed,
    /// what it receives is checked.
    auth: Option<AuthConfig>,
    /// The sequence number of the last packet signed.
    seq: SignSeq,
    /// Its senders' sequence numbers.
    replay: Replay,
}

/// The sequence number of a node's last signed packet, advanced through
/// `&self` as it signs; atomic so that a node can be read from several
/// threads (the simulator's checks walk every host's pairs on threads).
#[derive(Debug, Default)]
struct SignSeq(AtomicU64);

impl Clone for SignSeq {
    fn clone(&self) -> Self {
        SignSeq(AtomicU64::new(self.0.load(Ordering::Relaxed)))
    }
}

/// Senders whose sequence numbers a node remembers.
const NODE_SENDERS: usize = 1024;

impl Node {
    /// A node.
    pub fn new(cfg: NodeConfig) -> Node {
        Node {
            cfg,
            redirects: BTreeMap::new(),
            routes: BTreeMap::new(),
            unknown: BTreeSet::new(),
            auth: None,
            seq: SignSeq::default(),
            replay: Replay::default(),
        }
    }

    /// Gives the node its SAN's keys (none: it signs nothing and checks
    /// nothing); its signed packets are numbered from `seq_seed` (the
    /// clock, so that a restarted node is not taken for a replay).
    pub fn set_auth(&mut self, auth: Option<AuthConfig>, seq_seed: u64) {
        self.auth = auth;
        self.seq.0.fetch_max(seq_seed, Ordering::Relaxed);
    }

    /// Signs `packet` (one this node built otherwise: a management
    /// answer, a probe) when it has keys; only RRP, ERR and management
    /// packets are signed.
    pub fn sign(&self, packet: &mut Vec<u8>) {
        if let Some(a) = &self.auth
            && crate::auth::sign(a, self.seq.0.load(Ordering::Relaxed) + 1, packet)
        {
            self.seq.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Checks a packet it received against its keys: the packet as it
    /// was before it was signed (`None`: as it came), or why it is refused.
    pub fn admit(&mut self, bytes: &[u8]) -> Result<Option<Vec<u8>>> {
        let Ok(p) = crate::wire::packet::Packet::new_checked(bytes, usize::MAX) else {
            return Ok(None); // the parsers say what is wrong with it
        };
        if !p.header().packet_type().is_control()
            && p.header().packet_type() != crate::kind::PacketType::MANAGEMENT
        {
            return Ok(None);
        }
        match crate::auth::check(self.auth.as_ref(), &mut self.replay, 0, &p, NODE_SENDERS) {
            Verdict::Plain | Verdict::Unsigned => Ok(None),
            Verdict::Unchecked(b) | Verdict::Verified(b) => Ok(Some(b)),
            Verdict::Refused(why) => Err(crate::error::Error::new(
                crate::error::ErrorKind::Unauthenticated(why),
                "auth",
                p.layout()
                    .trailer_offset()
                    .saturating_sub(crate::wire::auth::RA_LEN),
            )),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &NodeConfig {
        &self.cfg
    }

    /// Gives the node its address (a SAN manager's assignment, for a node
    /// that started without one).
    pub fn set_address(&mut self, address: Address) {
        self.cfg.address = address;
    }

    /// Listens to group `g` (a logical address) from now on: R4 of its
    /// RRP#5 answers lists it (docs/multicast.md). False when `g` is not
    /// logical, already listened to, or the node listens to
    /// [`MAX_GROUPS`] groups already.
    pub fn join(&mut self, g: Address) -> bool {
        let l = self.cfg.logical.get_or_insert_with(Vec::new);
        if !g.is_logical() || l.contains(&g) || l.len() >= MAX_GROUPS {
            return false;
        }
        l.push(g);
        l.sort_unstable();
        true
    }

    /// Stops listening to group `g`; false when it did not.
    pub fn leave(&mut self, g: Address) -> bool {
        let Some(l) = self.cfg.logical.as_mut() else {
            return false;
        };
        let before = l.len();
        l.retain(|x| *x != g);
        let left = l.len() != before;
        if l.is_empty() {
            self.cfg.logical = None;
        }
        left
    }

    /// Whether it listens to group `g`.
    pub fn listens(&self, g: Address) -> bool {
        self.cfg.logical.as_ref().is_some_and(|l| l.contains(&g))
    }

    /// RRP#5 about itself to every member of its SAN (destination
    /// broadcast), sent after a join or a leave so that the HRs of its SAN
    /// update their LRTs at once rather than at their next keepalive.
    pub fn announce(&self) -> Vec<u8> {
        self.packet(Address::BROADCAST, &Message::Info(vec![self.info()]))
    }

    /// What this node reports about itself.
    pub fn info(&self) -> NodeInfo {
        NodeInfo {
            address: self.cfg.address,
            name: self.cfg.name.clone(),
            capabilities: self.cfg.capabilities.clone(),
            logical: self.cfg.logical.clone(),
        }
    }

    fn packet(&self, dst: Address, m: &Message) -> Vec<u8> {
        let mut p = m
            .to_packet(dst, self.cfg.address)
            .and_then(|p| p.to_bytes())
            .expect("requests are small");
        self.sign(&mut p);
        p
    }

    /// RRP#6 to HR `hr`: which HR should I use for `dst`?
    pub fn which_hr(&self, hr: Address, dst: Address) -> Vec<u8> {
        self.packet(hr, &Message::WhichHr { dst })
    }

    /// RRP#1 to HR `hr`: routes to `dst`.
    pub fn route_request(&self, hr: Address, dst: Address) -> Vec<u8> {
        self.packet(hr, &Message::RouteRequest { dst })
    }

    /// RRP#4 to `to`.
    pub fn info_request(&self, to: Address, q: InfoQuery) -> Vec<u8> {
        self.packet(to, &Message::InfoRequest(q))
    }

    /// The HR to use for `dst`: the one a redirect named, else `default`.
    pub fn first_hr(&self, dst: Address, default: Address) -> Address {
        self.redirects.get(&dst).copied().unwrap_or(default)
    }

    /// Handles a packet addressed to this node (or broadcast); returns the
    /// reply to send back to the packet's sender, if any, and what was learned.
    pub fn handle_packet(&mut self, bytes: &[u8]) -> Result<(Option<Vec<u8>>, Option<Learned>)> {
        let stripped = self.admit(bytes)?;
        let bytes = stripped.as_deref().unwrap_or(bytes);
        let p = PacketRepr::parse(bytes)?;
        if !p.header.packet_type.is_control() {
            return Ok((None, Some(Learned::Data(p))));
        }
        let (_, m) = Message::parse_packet(bytes)?;
        let sa = p.header.src;
        let answers = self.cfg.level >= Level::C || matches!(m, Message::WhoAreYou);
        Ok(match m {
            Message::WhoAreYou if self.cfg.level > Level::A && sa.is_node() => (
                Some(self.packet(sa, &Message::Info(vec![self.info()]))),
                None,
            ),
            Message::InfoRequest(q) if answers && sa.is_node() => {
                let me = self.info();
                let hit = match &q {
                    InfoQuery::Address(a) => *a == me.address,
                    InfoQuery::Name(n) => me.name.as_deref() == Some(&n[..]),
                    InfoQuery::Capabilities(cs) => cs
                        .iter()
                        .any(|c| me.capabilities.iter().any(|h| h.code == c.code)),
                };
                (hit.then(|| self.packet(sa, &Message::Info(vec![me]))), None)
            }
            Message::Redirect { dst, via } => {
                self.redirects.insert(dst, via);
                (None, Some(Learned::Redirect { dst, via }))
            }
            Message::Routes { dst, routes } => {
                self.routes.insert(dst, routes.clone());
                (None, Some(Learned::Routes { dst, routes }))
            }
            Message::Info(n) => (None, Some(Learned::Info(n))),
            Message::Unknown { addr } => {
                self.unknown.insert(addr);
                (None, Some(Learned::Unknown(addr)))
            }
            other => (None, Some(Learned::Other(other))),
        })
    }
}

/// Whether `bytes` start with an EEP header of a control packet type
/// (RRP or ERR).
pub fn is_control(bytes: &[u8]) -> bool {
    bytes.len() >= HEADER_LEN && Header::new_unchecked(bytes).packet_type().is_control()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_and_leaves_show_in_its_info() {
        let mut n = node(Level::C);
        assert!(n.join(Address(0x8002)));
        assert!(n.join(Address(0x8001)));
        assert!(!n.join(Address(0x8001)), "twice");
        assert!(!n.join(Address(0x0105)), "not logical");
        assert!(!n.join(Address::HEY_YOU), "not logical");
        assert_eq!(
            n.info().logical,
            Some(vec![Address(0x8001), Address(0x8002)])
        );
        assert!(n.listens(Address(0x8001)));
        let a = n.announce();
        let (_, m) = Message::parse_packet(&a).unwrap();
        assert_eq!(Header::new_unchecked(&a[..]).dst(), Address::BROADCAST);
        assert_eq!(m, Message::Info(vec![n.info()]));
        assert!(n.leave(Address(0x8001)));
        assert!(!n.leave(Address(0x8001)));
        assert!(n.leave(Address(0x8002)));
        assert_eq!(n.info().logical, None);
        for g in 0..MAX_GROUPS as u16 {
            assert!(n.join(Address(0x9000 + g)));
        }
        assert!(!n.join(Address(0xA000)), "bounded");
    }

    fn node(level: Level) -> Node {
        Node::new(NodeConfig {
            address: Address(0x0102),
            name: Some(b"Super".to_vec()),
            capabilities: vec![Capability {
                code: 7,
                params: vec![4, 8],
            }],
            logical: None,
            level,
        })
    }

    #[test]
    fn answers_who_are_you_and_learns_redirects() {
        let mut n = node(Level::C);
        let who = Message::WhoAreYou
            .to_packet(Address::BROADCAST, Address(0x0121))
            .unwrap()
            .to_bytes()
            .unwrap();
        let (reply, _) = n.handle_packet(&who).unwrap();
        let (p, m) = Message::parse_packet(&reply.unwrap()).unwrap();
        assert_eq!(p.header.dst, Address(0x0121));
        assert_eq!(m, Message::Info(vec![n.info()]));
        let red = Message::Redirect {
            dst: Address(0x0103),
            via: Address(0x0121),
        }
        .to_packet(Address(0x0102), Address(0x0111))
        .unwrap()
        .to_bytes()
        .unwrap();
        n.handle_packet(&red).unwrap();
        assert_eq!(
            n.first_hr(Address(0x0103), Address(0x0111)),
            Address(0x0121)
        );
        let mut a = node(Level::A);
        assert!(a.handle_packet(&who).unwrap().0.is_none());
    }
}
