//! A running host: its spec, link and the state its threads share.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use rrp::node::{Level, Node, NodeConfig};
use rrp::{Address, NativeAddr};
use serde_json::Value;

use super::impair::{ImpairCounts, RxImpair};
use super::link::Link;
use super::management;
use super::now_ns;
use super::partitions::HostPartitions;
use super::spec::{HostSpec, auth_config};
use super::traffic::{RxTraffic, TxTraffic};

/// Which answer a request waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Answer {
    /// RRP#2.
    Routes,
    /// RRP#3.
    Redirect,
    /// ERR UNK.
    Unknown,
}

/// Everything the threads share.
#[derive(Debug)]
pub(super) struct State {
    /// The node's RRP state: redirects, routes, unknown destinations.
    pub(super) node: Node,
    /// NativeAddr addresses of the nodes of the SAN: the configured HRs, and
    /// nodes that told us who they are (RRP#7, or RRP#5 about its sender)
    /// directly (no L2RH left). Configured HRs are never overwritten.
    pub(super) neighbours: BTreeMap<Address, NativeAddr>,
    /// Its partitions, as its SAN's master set them in its agent.
    pub(super) partitions: HostPartitions,
    /// The HR that answered the last RRP#2 about a destination (its routes
    /// start there).
    pub(super) routes_from: BTreeMap<Address, Address>,
    /// The next sequence number per destination (never reset).
    pub(super) next_seq: BTreeMap<Address, u64>,
    /// Answers received, per (kind, destination): requests wait for a change.
    pub(super) answers: BTreeMap<(Answer, Address), u64>,
    pub(super) rx: RxTraffic,
    pub(super) tx: TxTraffic,
    /// Sends running in the background.
    pub(super) busy: u64,
    /// The impairment of the link's receive side (`impair`), if on.
    pub(super) impair: Option<RxImpair>,
    /// What the impairment did, over every `impair` command.
    pub(super) impaired: ImpairCounts,
    /// When each redirect was last received: a redirect older than
    /// [`REDIRECT_TTL`](super::REDIRECT_TTL) is forgotten, so that a host stops sending to an HR
    /// that has died.
    pub(super) redirect_at: BTreeMap<Address, Instant>,
    /// When the host last asked its default HR (RRP#6) to renew a redirect
    /// it still uses.
    pub(super) renewal_at: BTreeMap<Address, Instant>,
}

/// A running host: its spec, link and shared state.
pub(super) struct Host<'a> {
    pub(super) spec: &'a HostSpec,
    pub(super) level: Level,
    /// Its address: the spec's, or 0 until its SAN's manager gives one.
    pub(super) me: AtomicU16,
    pub(super) default_hr: Option<Address>,
    /// The stream tag of every probe this host sends.
    pub(super) tag: u16,
    pub(super) link: Link,
    pub(super) state: Mutex<State>,
    /// Notified whenever `State::answers` changes.
    pub(super) answered: Condvar,
    /// Set by a `quit` request.
    pub(super) quit: AtomicBool,
    /// The management thread's inbox, when the host runs management.
    pub(super) mgmt: Option<std::sync::mpsc::Sender<management::Input>>,
}

pub(super) type Reply = Result<Value, String>;

impl<'a> Host<'a> {
    pub(super) fn new(
        spec: &'a HostSpec,
        mgmt: Option<std::sync::mpsc::Sender<management::Input>>,
    ) -> Result<Host<'a>, String> {
        let level = spec.validate()?;
        let me = Address(spec.address);
        let link = Link::open(spec)?;
        let mut node = Node::new(NodeConfig {
            address: me,
            name: Some(spec.name.as_bytes().to_vec()),
            capabilities: Vec::new(),
            logical: None,
            level,
        });
        if let Some(k) = &spec.auth_key {
            // Numbered from the clock (ms << 20), as mwrouterd does.
            node.set_auth(Some(auth_config(k)?), (now_ns() / 1_000_000) << 20);
        }
        let tag = (now_ns() as u16) ^ (now_ns() >> 16) as u16 ^ spec.address.rotate_left(8);
        Ok(Host {
            spec,
            level,
            me: AtomicU16::new(me.0),
            default_hr: spec.default_hr(),
            tag,
            link,
            state: Mutex::new(State {
                node,
                neighbours: spec.hrs.iter().map(|(a, e)| (Address(*a), *e)).collect(),
                partitions: HostPartitions::default(),
                routes_from: BTreeMap::new(),
                next_seq: BTreeMap::new(),
                answers: BTreeMap::new(),
                rx: RxTraffic::default(),
                tx: TxTraffic::default(),
                busy: 0,
                impair: None,
                impaired: ImpairCounts::default(),
                redirect_at: BTreeMap::new(),
                renewal_at: BTreeMap::new(),
            }),
            answered: Condvar::new(),
            quit: AtomicBool::new(false),
            mgmt,
        })
    }

    /// Its address now.
    pub(super) fn me(&self) -> Address {
        Address(self.me.load(Ordering::Relaxed))
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn stopping(&self, stop: &AtomicBool) -> bool {
        stop.load(Ordering::Relaxed) || self.quit.load(Ordering::Relaxed)
    }

    pub(super) fn is_configured_hr(&self, a: Address) -> bool {
        self.spec.hrs.iter().any(|(h, _)| *h == a.0)
    }
}
