//! `mwctl discover`: InfiniBand's ibnetdiscover for MessageWay
//! (docs/management.md "mwctl discover", docs/spec-notes.md 68). From the
//! box mwctl talks to, it walks the routers in band, breadth first: each
//! router is read with NodeInfo, NodeDescription, its own partitions
//! (PartitionTable, [`discover_partitions`](crate::discover_partitions)),
//! and PortInfo and the LRT (LrtBlock) of every HR; the routers an HR's LRT lists are the routers
//! across its SAN, read the same way by their address. A router is visited
//! once, known by its NodeInfo identity; a router that does not answer is
//! listed as such, with the address it was tried at and who named it.
//!
//! The requests are `mad` commands through the admin socket, as `mwctl
//! query` sends them, each on a connection of its own: the routers of one
//! round of the walk are read in parallel, [`MAX_OUTSTANDING`] at most (the
//! requests of one router go one after another).

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::io::Write;
use std::time::{Duration, Instant};

use admin::mad::{MadAnswer, MadQuery};
use admin::proto::{AdminErrorCode, Command, Show};
use admin::{Client, ClientError};
use clap::Args;
use mgmt::attr::{
    LrtBlock, LrtBlockEntry, NodeDescription, NodeInfo, PortCounters, PortInfo, lrt_block,
};
use rrp::Address;
use serde_json::{Value, json};

use crate::Cli;
use crate::discover_cache::Snapshot;
use crate::discover_partitions::Table;
pub use crate::discover_sans::{Member, MemberSource, San};
use crate::walk_args::WalkArgs;

/// NodeInfo's NodeType of a host.
pub const NODE_TYPE_HOST: u64 = 1;

/// Routers read at the same time at most (each with one request
/// outstanding).
pub const MAX_OUTSTANDING: usize = 16;

/// `mwctl discover`.
#[derive(Debug, Clone, Args)]
#[command(after_help = "\
Walks the routers in band from this box (or from ADDR), breadth first, as
ibnetdiscover walks a fabric: NodeInfo, NodeDescription, PartitionTable (the
node's partitions; '-' when it does not answer), then PortInfo and the LRT of
every HR; the routers an HR's LRT lists are read next.

Exit status: 0 every router answered, 1 some did not (listed as such),
2 bad arguments, 3 mwrouterd cannot be reached, 4 --diff found a difference.

Examples:
  mwctl discover
  mwctl discover 0x0119 -t 500
  mwctl discover --cache net.json
  mwctl discover --diff net.json
  mwctl --json discover")]
pub struct DiscoverArgs {
    /// Where the walk starts and how each request is sent.
    #[command(flatten)]
    pub walk: WalkArgs,
    /// Print the network as a Graphviz graph (SANs, routers, HRs as edges) instead.
    #[arg(long)]
    pub dot: bool,
    /// Save the topology found to FILE (JSON), to compare with later by --diff.
    #[arg(long, value_name = "FILE")]
    pub cache: Option<std::path::PathBuf>,
    /// Compare the live network with the topology saved in FILE and print the differences
    /// instead (exit status 4 when there are some).
    #[arg(long, value_name = "FILE", conflicts_with = "dot")]
    pub diff: Option<std::path::PathBuf>,
    /// Also write the network as one self-contained HTML page to FILE (`-`:
    /// to standard output instead of the text): the map, then the tables;
    /// each HR's PortCounters are read for its error count.
    #[arg(long, value_name = "FILE", conflicts_with = "diff")]
    pub html: Option<std::path::PathBuf>,
}

/// What one Get brought back.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    /// An answer with status 0: the attribute's fields.
    Fields(Value),
    /// An answer with another status.
    Status(u16),
    /// No answer after every try.
    NoAnswer,
}

/// The management class of a Get (docs/management.md "Classes and
/// methods"): the attribute IDs of different classes overlap (NodeInfo and
/// NodeRecord are both 0x0011).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Subn: NodeInfo, NodeDescription, PortInfo, LrtBlock.
    Subn,
    /// SubnAdm: the records a SAN's master manager keeps (NodeRecord).
    SubnAdm,
    /// Perf: PortCounters.
    Perf,
}

impl Class {
    /// The name the admin socket's `mad` command takes.
    pub const fn name(self) -> &'static str {
        match self {
            Class::Subn => "subn",
            Class::SubnAdm => "subn_adm",
            Class::Perf => "perf",
        }
    }
}

/// The seam of the walk: one Get of `attribute` of `class` (modifier
/// `modifier`) to the node at `dst`. An error stops the walk (the daemon
/// cannot be reached, or refused the request for another reason than no
/// answer).
pub trait Ask: Sync {
    /// Sends the Get and waits for its answer.
    fn get(
        &self,
        class: Class,
        dst: Address,
        attribute: u16,
        modifier: u32,
    ) -> Result<Got, ClientError>;
}

/// How a router was reached: from where the walk started, or named by the
/// LRT of another router's HR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// The start of the walk.
    Start,
    /// Listed as a router by the LRT of HR `hr` of the router `by`.
    Lrt {
        /// The identity of the router whose LRT listed it.
        by: u64,
        /// That router's HR.
        hr: Address,
    },
    /// Recorded as a router of the start host's SAN by that SAN's manager.
    Manager {
        /// The manager's address.
        manager: Address,
    },
}

impl Reached {
    pub(crate) fn text(&self) -> String {
        match self {
            Reached::Start => "start".into(),
            Reached::Lrt { by, hr } => format!("LRT of {hr} (router {by:#018x})"),
            Reached::Manager { manager } => format!("records of manager {manager}"),
        }
    }

    pub(crate) fn json(&self) -> Value {
        match self {
            Reached::Start => json!({"start": true}),
            Reached::Lrt { by, hr } => json!({"by": format!("{by:#018x}"), "hr": hr}),
            Reached::Manager { manager } => json!({"manager": manager}),
        }
    }
}

/// One HR of a router, from its PortInfo and LRT.
#[derive(Debug, Clone, PartialEq)]
pub struct Hr {
    /// The port (PortInfo's modifier).
    pub port: u8,
    /// PortInfo, or None when it was not answered.
    pub info: Option<HrInfo>,
    /// The routers the HR's LRT lists (their HRs on this SAN), or None
    /// when the LRT was not answered.
    pub across: Option<Vec<Address>>,
    /// The other nodes the HR's LRT lists (empty when it was not
    /// answered).
    pub nodes: Vec<Address>,
    /// The port's PortCounters (class Perf), when they were asked for
    /// (`--html`) and answered.
    pub counters: Option<PortCounters>,
}

impl Hr {
    /// The port's error count, when its counters were read: the sum of the
    /// PortCounters counters `mwctl errors` checks
    /// ([`thresholds::watched`](crate::thresholds::watched): rx_errors and
    /// every drop by reason), so that the map and the sweep agree.
    pub fn errors(&self) -> Option<u64> {
        self.counters.as_ref().map(|c| {
            crate::thresholds::watched()
                .into_iter()
                .filter_map(|(_, at)| match at {
                    crate::thresholds::Attr::Counters(i) => c.counters.get(i).copied(),
                    crate::thresholds::Attr::Link(_) => None,
                })
                .fold(0u64, u64::saturating_add)
        })
    }
}

/// The PortInfo fields discover shows.
#[derive(Debug, Clone, PartialEq)]
pub struct HrInfo {
    /// The HR's address.
    pub address: Address,
    /// The SAN's id.
    pub san: Address,
    /// PortState.
    pub state: u8,
    /// MTU in bytes.
    pub mtu: u64,
    /// Cost.
    pub cost: u64,
    /// The SAN's manager as the HR knows it (0: none).
    pub manager: Address,
    /// Buddies: the routers the HR shares its SAN with, as it counts them.
    pub buddies: u64,
}

/// A router that answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Router {
    /// NodeInfo's NodeIdentity.
    pub identity: u64,
    /// NodeInfo's NodeType (3 router, 1 host).
    pub node_type: u64,
    /// NodeInfo's ImplementationLevel (1-4: levels A-D).
    pub level: u64,
    /// NodeDescription (empty if it was not answered).
    pub description: String,
    /// Whether NodeDescription was answered.
    pub described: bool,
    /// The address it was read at.
    pub address: Address,
    /// How it was reached.
    pub reached: Reached,
    /// Its HRs.
    pub hrs: Vec<Hr>,
    /// Its own partitions (PartitionTable), when they were asked for and
    /// answered.
    pub partitions: Option<Table>,
}

impl Router {
    /// Whether a request after NodeInfo went unanswered.
    pub fn incomplete(&self) -> bool {
        !self.described
            || self
                .hrs
                .iter()
                .any(|h| h.info.is_none() || h.across.is_none())
    }
}

/// A node tried that did not answer NodeInfo.
#[derive(Debug, Clone, PartialEq)]
pub struct Unanswered {
    /// The address tried.
    pub address: Address,
    /// How it was reached.
    pub reached: Reached,
    /// The status of its answer, when it answered with one other than 0.
    pub status: Option<u16>,
}

/// What the walk found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Discovery {
    /// The routers, in the order they were found.
    pub routers: Vec<Router>,
    /// The nodes that did not answer.
    pub unanswered: Vec<Unanswered>,
    /// The SANs, with their members (filled by
    /// [`discover_sans::read_sans`](crate::discover_sans::read_sans)).
    pub sans: Vec<San>,
    /// The host the walk started at (address, description), when it
    /// started at one: it is listed among its SAN's nodes, not as a router.
    pub start_host: Option<(Address, String)>,
    /// How long the walk took.
    pub elapsed: Duration,
}

/// What the walk reads besides the topology.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extras {
    /// Each HR's PortCounters (class Perf; the page, `--html`).
    pub counters: bool,
    /// Each node's own partitions (PartitionTable;
    /// [`discover_partitions`](crate::discover_partitions)).
    pub partitions: bool,
}

/// What visiting one address gave.
enum Visit {
    Router(Router),
    Unanswered(Unanswered),
}

/// Reads the router at `address` (and what `extras` asks for).
fn visit(
    ask: &dyn Ask,
    address: Address,
    reached: Reached,
    extras: Extras,
) -> Result<Visit, ClientError> {
    let info = match ask.get(Class::Subn, address, NodeInfo::ID, 0)? {
        Got::Fields(f) => f,
        Got::Status(s) => {
            return Ok(Visit::Unanswered(Unanswered {
                address,
                reached,
                status: Some(s),
            }));
        }
        Got::NoAnswer => {
            return Ok(Visit::Unanswered(Unanswered {
                address,
                reached,
                status: None,
            }));
        }
    };
    let described = description(ask, address)?;
    let ports = info["num_ports"].as_u64().unwrap_or(1).min(255) as u8;
    let mut hrs = Vec::new();
    for port in 0..ports {
        let info = match ask.get(Class::Subn, address, PortInfo::ID, u32::from(port))? {
            Got::Fields(f) => Some(HrInfo {
                address: addr(&f["address"]),
                san: addr(&f["san_id"]),
                state: f["port_state"].as_u64().unwrap_or(0) as u8,
                mtu: f["mtu"].as_u64().unwrap_or(0),
                cost: f["cost"].as_u64().unwrap_or(0),
                manager: addr(&f["manager_address"]),
                buddies: f["buddies"].as_u64().unwrap_or(0),
            }),
            _ => None,
        };
        let (across, nodes) = match read_lrt(ask, address, port)? {
            Some((routers, nodes)) => (Some(routers), nodes),
            None => (None, Vec::new()),
        };
        let counters = if extras.counters {
            port_counters(ask, address, port)?
        } else {
            None
        };
        hrs.push(Hr {
            port,
            info,
            across,
            nodes,
            counters,
        });
    }
    let partitions = if extras.partitions {
        crate::discover_partitions::read(ask, address)?
    } else {
        None
    };
    Ok(Visit::Router(Router {
        identity: info["node_identity"].as_u64().unwrap_or(0),
        node_type: info["node_type"].as_u64().unwrap_or(0),
        level: info["implementation_level"].as_u64().unwrap_or(0),
        description: described.clone().unwrap_or_default(),
        described: described.is_some(),
        address,
        reached,
        hrs,
        partitions,
    }))
}

/// PortCounters of `port` of the node at `address`, by a Get in class
/// Perf; None when it was not answered (a host's agent counts no links).
fn port_counters(
    ask: &dyn Ask,
    address: Address,
    port: u8,
) -> Result<Option<PortCounters>, ClientError> {
    Ok(
        match ask.get(Class::Perf, address, PortCounters::ID, u32::from(port))? {
            Got::Fields(f) => Some(PortCounters {
                port_select: f["port_select"].as_u64().unwrap_or(u64::from(port)) as u8,
                counters: f["counters"]
                    .as_array()
                    .map(|a| a.iter().map(|v| v.as_u64().unwrap_or(0)).collect())
                    .unwrap_or_default(),
            }),
            _ => None,
        },
    )
}

/// The NodeDescription of the node at `address` (None when not answered).
pub(crate) fn description(ask: &dyn Ask, address: Address) -> Result<Option<String>, ClientError> {
    Ok(
        match ask.get(Class::Subn, address, NodeDescription::ID, 0)? {
            Got::Fields(f) => Some(f["text"].as_str().or(f.as_str()).unwrap_or("").to_string()),
            _ => None,
        },
    )
}

/// The LRT of `port` of the node at `address`, by LrtBlock: the routers it
/// lists, and the other nodes; None if a block was not answered.
type Lrt = (Vec<Address>, Vec<Address>);

fn read_lrt(ask: &dyn Ask, address: Address, port: u8) -> Result<Option<Lrt>, ClientError> {
    let mut routers = Vec::new();
    let mut nodes = Vec::new();
    let mut seen = 0u64;
    let mut block = 0u16;
    loop {
        let f = match ask.get(
            Class::Subn,
            address,
            LrtBlock::ID,
            LrtBlock::modifier(port, block),
        )? {
            Got::Fields(f) => f,
            _ => return Ok(None),
        };
        let total = f["total"].as_u64().unwrap_or(0);
        let entries = f["entries"].as_array().cloned().unwrap_or_default();
        seen += entries.len() as u64;
        for e in &entries {
            let flags = e["flags"].as_u64().unwrap_or(0);
            if flags & u64::from(LrtBlockEntry::ROUTER) != 0 {
                routers.push(addr(&e["address"]));
            } else {
                nodes.push(addr(&e["address"]));
            }
        }
        block += 1;
        if entries.len() < lrt_block::ENTRIES || seen >= total || block == u16::MAX {
            return Ok(Some((routers, nodes)));
        }
    }
}

/// An address as the answers' fields give it (`"0x0115"`, or a number).
pub(crate) fn addr(v: &Value) -> Address {
    match v {
        Value::String(s) => s.parse().unwrap_or(Address(0)),
        Value::Number(n) => Address(n.as_u64().unwrap_or(0) as u16),
        _ => Address(0),
    }
}

/// Walks from `start`, breadth first: each round's addresses are visited
/// in parallel, [`MAX_OUTSTANDING`] at a time; a router is kept once (by
/// identity) and its HRs' addresses are not tried again.
pub fn walk(ask: &dyn Ask, start: Address) -> Result<Discovery, ClientError> {
    walk_with(ask, start, Extras::default())
}

/// [`walk`], reading what `extras` asks for too.
pub fn walk_with(ask: &dyn Ask, start: Address, extras: Extras) -> Result<Discovery, ClientError> {
    let began = Instant::now();
    let mut d = Discovery::default();
    let mut known: HashSet<Address> = HashSet::from([start]);
    let mut identities: HashSet<u64> = HashSet::new();
    let mut round = vec![(start, Reached::Start)];
    while !round.is_empty() {
        let visits = in_parallel(std::mem::take(&mut round), |(a, r)| {
            visit(ask, a, r, extras)
        })?;
        // Every HR of this round's routers is known before any router
        // across is queued, so that none is tried by another address.
        let mut found = Vec::new();
        let mut next_from_host = Vec::new();
        for v in visits {
            match v {
                Visit::Unanswered(u) => d.unanswered.push(u),
                Visit::Router(r)
                    if r.node_type == NODE_TYPE_HOST && r.reached == Reached::Start =>
                {
                    // A host has no LRT to go on: its SAN's routers come
                    // from the records of the SAN's manager.
                    next_from_host = crate::discover_sans::routers_of_host_san(ask, &r)?;
                    d.start_host = Some((r.address, r.description.clone()));
                }
                Visit::Router(r) => {
                    if identities.insert(r.identity) {
                        known.extend(
                            r.hrs
                                .iter()
                                .filter_map(|h| h.info.as_ref())
                                .map(|i| i.address),
                        );
                        found.push(r);
                    }
                }
            }
        }
        let mut next: Vec<(Address, Reached)> = next_from_host
            .into_iter()
            .filter(|(a, _)| known.insert(*a))
            .collect();
        for r in &found {
            for h in &r.hrs {
                let hr = h.info.as_ref().map_or(r.address, |i| i.address);
                for &a in h.across.iter().flatten() {
                    if known.insert(a) {
                        next.push((a, Reached::Lrt { by: r.identity, hr }));
                    }
                }
            }
        }
        d.routers.extend(found);
        round = next;
    }
    crate::discover_sans::read_sans(ask, &mut d, extras.partitions)?;
    d.elapsed = began.elapsed();
    Ok(d)
}

/// `f` of each of `items`, [`MAX_OUTSTANDING`] threads at a time, the
/// results in the items' order; the first error is returned.
pub(crate) fn in_parallel<T: Send, R: Send>(
    items: Vec<T>,
    f: impl Fn(T) -> Result<R, ClientError> + Sync,
) -> Result<Vec<R>, ClientError> {
    let mut out = Vec::with_capacity(items.len());
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        let chunk: Vec<T> = items.by_ref().take(MAX_OUTSTANDING).collect();
        let got: Vec<Result<R, ClientError>> = std::thread::scope(|s| {
            let f = &f;
            let handles: Vec<_> = chunk.into_iter().map(|t| s.spawn(move || f(t))).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(ClientError::Other("a request thread failed".into()))
                    })
                })
                .collect()
        });
        for r in got {
            out.push(r?);
        }
    }
    Ok(out)
}

impl Discovery {
    /// HRs read, of every router.
    pub fn hr_count(&self) -> usize {
        self.routers.iter().map(|r| r.hrs.len()).sum()
    }

    /// The SANs' members found (nodes other than the routers' HRs).
    pub fn member_count(&self) -> usize {
        self.sans.iter().map(|s| s.members.len()).sum()
    }

    /// Whether some node, or some request of a router or node, went
    /// unanswered.
    pub fn complete(&self) -> bool {
        self.unanswered.is_empty()
            && !self.routers.iter().any(Router::incomplete)
            && self
                .sans
                .iter()
                .flat_map(|s| &s.members)
                .all(|m| m.described)
    }

    /// What did not answer, when anything did not (`mwctl discover` and
    /// `links` print it on stderr).
    pub fn shortfall(&self) -> Option<String> {
        (!self.complete()).then(|| {
            format!(
                "{} nodes did not answer, {} routers answered in part",
                self.unanswered.len(),
                self.routers.iter().filter(|r| r.incomplete()).count()
            )
        })
    }

    /// The exit status: 0 when every node answered, 1 when some did not.
    pub fn exit_code(&self) -> i32 {
        if self.complete() {
            crate::EXIT_OK
        } else {
            crate::EXIT_FAILED
        }
    }

    /// The summary line: `N routers, M SANs, K HRs, H nodes, U did not
    /// answer (T ms)`.
    pub fn summary(&self) -> String {
        format!(
            "{} routers, {} SANs, {} HRs, {} nodes, {} did not answer ({} ms)",
            self.routers.len(),
            self.sans.len(),
            self.hr_count(),
            self.member_count(),
            self.unanswered.len(),
            self.elapsed.as_millis()
        )
    }
}

/// A port state by name.
pub(crate) fn state_name(s: u8) -> &'static str {
    match s {
        PortInfo::ACTIVE => "active",
        PortInfo::DOWN => "down",
        _ => "unknown",
    }
}

/// An implementation level by letter (NodeInfo's 1-4: levels A-D).
pub(crate) fn level_name(l: u64) -> &'static str {
    match l {
        1 => "A",
        2 => "B",
        3 => "C",
        4 => "D",
        _ => "?",
    }
}

/// A node type by name, as smpquery prints it.
pub(crate) fn node_type_name(t: u64) -> &'static str {
    match t {
        3 => "router",
        1 => "host",
        _ => "node",
    }
}

/// The text, as ibnetdiscover prints a fabric: a block per router, its
/// partitions, a line per HR, then each SAN's nodes with their partitions,
/// the nodes that did not answer and the summary.
pub fn render_text(d: &Discovery) -> String {
    let names: BTreeMap<Address, (u64, &str)> = d
        .routers
        .iter()
        .flat_map(|r| {
            r.hrs
                .iter()
                .filter_map(|h| h.info.as_ref())
                .map(move |i| (i.address, (r.identity, r.description.as_str())))
        })
        .collect();
    let mut out = String::new();
    if let Some((a, desc)) = &d.start_host {
        let _ = writeln!(out, "from host {a} \"{desc}\"\n");
    }
    for r in &d.routers {
        let _ = writeln!(
            out,
            "{} {:#018x} \"{}\" level {} ({} HRs, read at {}, reached by {})",
            node_type_name(r.node_type),
            r.identity,
            r.description,
            level_name(r.level),
            r.hrs.len(),
            r.address,
            r.reached.text()
        );
        if !r.described {
            let _ = writeln!(out, "  NodeDescription not answered");
        }
        let _ = writeln!(
            out,
            "  partitions {}",
            crate::discover_partitions::text(r.partitions.as_deref())
        );
        for h in &r.hrs {
            let mut line = match &h.info {
                Some(i) => format!(
                    "  [{}] {} {} san {} mtu {} cost {}",
                    h.port,
                    i.address,
                    state_name(i.state),
                    i.san,
                    i.mtu,
                    i.cost
                ),
                None => format!("  [{}] PortInfo not answered", h.port),
            };
            match &h.across {
                None => line.push_str(" ; LRT not answered"),
                Some(a) if a.is_empty() => line.push_str(" ; no routers across"),
                Some(a) => {
                    let across: Vec<String> = a
                        .iter()
                        .map(|x| match names.get(x) {
                            Some((_, desc)) => format!("{x} \"{desc}\""),
                            None => format!("{x}"),
                        })
                        .collect();
                    let _ = write!(line, " ; across {}", across.join(", "));
                }
            }
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    for san in &d.sans {
        let from = match san.manager {
            Some(m) => format!("records of manager {m}"),
            None => "the LRTs".to_string(),
        };
        let _ = writeln!(
            out,
            "san {} cost {} mtu {} ({} HRs, {} nodes, from {from})",
            san.id,
            san.cost,
            san.mtu,
            san.hrs.len(),
            san.members.len()
        );
        for m in &san.members {
            let _ = writeln!(
                out,
                "  {} {} {:#018x} \"{}\" level {} partitions {}",
                node_type_name(m.node_type),
                m.address,
                m.identity,
                m.description,
                level_name(m.level),
                crate::discover_partitions::text(m.partitions.as_deref())
            );
            if !m.described {
                let _ = writeln!(out, "    NodeDescription not answered");
            }
        }
        out.push('\n');
    }
    for u in &d.unanswered {
        let _ = write!(
            out,
            "no answer from {} (reached by {})",
            u.address,
            u.reached.text()
        );
        if let Some(s) = u.status {
            let _ = write!(out, ": status {s:#06x}");
        }
        out.push('\n');
    }
    if !d.unanswered.is_empty() {
        out.push('\n');
    }
    out.push_str(&d.summary());
    out.push('\n');
    out
}

/// The `--json` object: routers (each with its HRs and partitions), SANs
/// (each with its nodes and their partitions), unanswered, counts and
/// timing. Partitions are `[["0x0010", "full"], ...]`, `null` when
/// unknown.
pub fn to_json(d: &Discovery) -> Value {
    let routers: Vec<Value> = d
        .routers
        .iter()
        .map(|r| {
            let hrs: Vec<Value> = r
                .hrs
                .iter()
                .map(|h| {
                    let mut v = hr_json(h);
                    if let Some(i) = &h.info {
                        v["manager"] = json!(i.manager);
                    }
                    v["routers_across"] = match &h.across {
                        Some(a) => json!(a),
                        None => Value::Null,
                    };
                    v["nodes_across"] = json!(h.nodes);
                    v
                })
                .collect();
            let mut v = router_json(r, hrs);
            v["described"] = json!(r.described);
            v["partitions"] = json!(r.partitions);
            v
        })
        .collect();
    let sans: Vec<Value> = d
        .sans
        .iter()
        .map(|san| {
            let hrs: Vec<Value> = san
                .hrs
                .iter()
                .map(|(a, by)| json!({"address": a, "router": format!("{by:#018x}")}))
                .collect();
            let members: Vec<Value> = san
                .members
                .iter()
                .map(|m| {
                    json!({
                        "address": m.address,
                        "identity": format!("{:#018x}", m.identity),
                        "node_type": m.node_type,
                        "node_type_name": node_type_name(m.node_type),
                        "level": m.level,
                        "level_name": level_name(m.level),
                        "description": m.description,
                        "described": m.described,
                        "partitions": m.partitions,
                        "source": match m.source {
                            MemberSource::Manager(a) => json!({"manager": a}),
                            MemberSource::Lrt { by, hr } => {
                                json!({"by": format!("{by:#018x}"), "hr": hr})
                            }
                        },
                    })
                })
                .collect();
            json!({
                "id": san.id,
                "cost": san.cost,
                "mtu": san.mtu,
                "manager": san.manager,
                "hrs": hrs,
                "nodes": members,
            })
        })
        .collect();
    let unanswered = unanswered_json(d);
    json!({
        "routers": routers,
        "sans": sans,
        "unanswered": unanswered,
        "counts": {
            "routers": d.routers.len(),
            "sans": sans.len(),
            "hrs": d.hr_count(),
            "nodes": d.member_count(),
            "unanswered": d.unanswered.len(),
        },
        "start_host": d.start_host.as_ref().map(|(a, desc)| json!({"address": a, "description": desc})),
        "elapsed_ms": u64::try_from(d.elapsed.as_millis()).unwrap_or(u64::MAX),
    })
}

/// An HR's object in the JSON of `discover` and `links`: its port and what
/// its PortInfo said (`port_info: null` when it did not answer), the state
/// by number and by name.
pub(crate) fn hr_json(h: &Hr) -> Value {
    match &h.info {
        Some(i) => json!({
            "port": h.port,
            "address": i.address,
            "state": i.state,
            "state_name": state_name(i.state),
            "san": i.san,
            "mtu": i.mtu,
            "cost": i.cost,
        }),
        None => json!({"port": h.port, "port_info": null}),
    }
}

/// A router's object in the JSON of `discover` and `links`, with its HRs'
/// objects `hrs`.
pub(crate) fn router_json(r: &Router, hrs: Vec<Value>) -> Value {
    json!({
        "answered": true,
        "identity": format!("{:#018x}", r.identity),
        "node_type": r.node_type,
        "node_type_name": node_type_name(r.node_type),
        "level": r.level,
        "level_name": level_name(r.level),
        "description": r.description,
        "address": r.address,
        "reached": r.reached.json(),
        "complete": !r.incomplete(),
        "hrs": hrs,
    })
}

/// The routers that did not answer, as `discover` and `links` list them.
pub(crate) fn unanswered_json(d: &Discovery) -> Vec<Value> {
    d.unanswered
        .iter()
        .map(|u| {
            json!({
                "answered": false,
                "address": u.address,
                "reached": u.reached.json(),
                "status": u.status,
            })
        })
        .collect()
}

/// [`Ask`] through the admin socket: each Get a `mad` command on a
/// connection of its own (the walk's threads ask at the same time).
pub struct SocketAsk<'a> {
    cli: &'a Cli,
    args: &'a WalkArgs,
}

impl<'a> SocketAsk<'a> {
    /// Asks through `cli`'s socket with `args`' M_Key, wait and retries.
    pub fn new(cli: &'a Cli, args: &'a WalkArgs) -> Self {
        SocketAsk { cli, args }
    }

    /// The `mad` command of a Get of `attribute` at `dst`, in the
    /// attribute's default class.
    pub(crate) fn query(&self, dst: Address, attribute: u16, modifier: u32) -> MadQuery {
        MadQuery {
            dst: Some(dst),
            attribute: format!("{attribute:#06x}"),
            modifier,
            mkey: self.args.mkey.clone(),
            timeout_ms: Some(self.args.mad_timeout),
            retries: Some(self.args.retries),
            ..MadQuery::default()
        }
    }
}

impl Ask for SocketAsk<'_> {
    fn get(
        &self,
        class: Class,
        dst: Address,
        attribute: u16,
        modifier: u32,
    ) -> Result<Got, ClientError> {
        let mut q = self.query(dst, attribute, modifier);
        q.class = Some(class.name().to_string());
        self.send(&q)
    }
}

impl SocketAsk<'_> {
    /// Sends `q` on a connection of its own and waits for its answer.
    pub(crate) fn send(&self, q: &MadQuery) -> Result<Got, ClientError> {
        let wait = crate::mad::answer_timeout(q, Some(Duration::ZERO));
        let mut c = Client::connect(&self.cli.socket, wait)?;
        match crate::mad::ask(&mut c, q) {
            Ok((a, _)) => Ok(got(a)),
            Err(ClientError::Daemon(e)) if e.code == AdminErrorCode::NoAnswer => Ok(Got::NoAnswer),
            Err(e) => Err(e),
        }
    }
}

fn got(a: MadAnswer) -> Got {
    if a.ok() {
        Got::Fields(a.fields.unwrap_or(Value::Null))
    } else {
        Got::Status(a.status)
    }
}

/// The box's first HR, by `show hrs`: where the walk starts by default.
pub(crate) fn first_hr(cli: &Cli) -> Result<Address, ClientError> {
    let mut c = Client::connect(&cli.socket, Some(Duration::from_secs(5)))?;
    let v = c
        .request(Command::Show(Show::Hrs {}))
        .map_err(|e| match e {
            // A host's socket (mwlab) answers `mad` but not `show hrs`.
            ClientError::Daemon(d) => ClientError::Other(format!(
                "cannot read this box's HRs to start from (give ADDR): {d}"
            )),
            e => e,
        })?;
    v.as_array()
        .and_then(|rows| rows.first())
        .map(|r| addr(&r["hr"]))
        .filter(|a| a.0 != 0)
        .ok_or_else(|| ClientError::Other("the box has no HR to start from".into()))
}

/// Runs `mwctl discover`; returns the exit status.
pub fn run(
    cli: &Cli,
    args: &DiscoverArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, ClientError> {
    let start = crate::sweep::start(cli, &args.walk)?;
    let saved = match &args.diff {
        Some(p) => Some(Snapshot::load(p).map_err(|e| ClientError::Other(e.0))?),
        None => None,
    };
    let extras = Extras {
        counters: args.html.is_some(),
        partitions: true,
    };
    let d = walk_with(&SocketAsk::new(cli, &args.walk), start, extras)?;
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.as_secs());
    let snapshot = Snapshot::of(&d, now_s);
    if let Some(p) = &args.cache {
        snapshot.save(p).map_err(|e| ClientError::Other(e.0))?;
    }
    if let (Some(saved), Some(path)) = (&saved, &args.diff) {
        let changes = crate::discover_diff::diff(saved, &snapshot);
        let text = if cli.json {
            let v = json!({
                "against": path.display().to_string(),
                "saved_unix_s": saved.taken_unix_s,
                "changes": crate::discover_diff::to_json(&changes),
                "counts": to_json(&d)["counts"],
            });
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        } else {
            let mut t = crate::discover_diff::render_text(&changes);
            let _ = writeln!(
                t,
                "{} differences from {} (saved {} s ago); now {}",
                changes.len(),
                path.display(),
                now_s.saturating_sub(saved.taken_unix_s),
                d.summary()
            );
            t
        };
        out.write_all(text.as_bytes())
            .map_err(|e| ClientError::Other(format!("writing the output: {e}")))?;
        return Ok(if changes.is_empty() {
            d.exit_code()
        } else {
            crate::EXIT_DIFFERS
        });
    }
    let page_out = args.html.as_deref() == Some(std::path::Path::new("-"));
    let page = args.html.as_ref().map(|_| {
        crate::discover_html::render_html(&d, &crate::discover_html::utc_text(now_s), start)
    });
    if let (Some(path), Some(page)) = (&args.html, &page)
        && !page_out
    {
        std::fs::write(path, page)
            .map_err(|e| ClientError::Other(format!("writing {}: {e}", path.display())))?;
    }
    let json = (cli.json && !page_out && !args.dot).then(|| to_json(&d));
    let text = || match page.filter(|_| page_out) {
        Some(page) => page,
        None if args.dot => crate::discover_dot::render_dot(&d),
        None => render_text(&d),
    };
    crate::sweep::print(out, err, json.as_ref(), text, d.shortfall())?;
    Ok(d.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mgmt::attr::{NodeRecord, PartitionTable, SmInfo};
    use std::sync::Mutex;

    /// A router of the fake fabric: identity, name, and its HRs (address,
    /// SAN, the router HRs its LRT lists).
    struct Node {
        identity: u64,
        name: &'static str,
        hrs: Vec<(u16, u16, Vec<u16>)>,
    }

    /// Answers Gets from an in-memory fabric; `dead` nodes never answer.
    /// Hosts are (address, SAN, name); the host at `manager` keeps the
    /// records of its SAN.
    struct Fabric {
        nodes: Vec<Node>,
        dead: Vec<u64>,
        hosts: Vec<(u16, u16, &'static str)>,
        dead_hosts: Vec<u16>,
        manager: Option<u16>,
        asked: Mutex<Vec<(Address, u16)>>,
    }

    impl Fabric {
        fn node(&self, a: Address) -> Option<&Node> {
            self.nodes.iter().find(|n| n.hrs.iter().any(|h| h.0 == a.0))
        }
    }

    impl Ask for Fabric {
        fn get(
            &self,
            class: Class,
            dst: Address,
            attribute: u16,
            modifier: u32,
        ) -> Result<Got, ClientError> {
            self.asked.lock().unwrap().push((dst, attribute));
            if let Some(h) = self.hosts.iter().find(|h| h.0 == dst.0) {
                if self.dead_hosts.contains(&h.0) {
                    return Ok(Got::NoAnswer);
                }
                return Ok(match (class, attribute) {
                    (Class::Subn, NodeInfo::ID) => Got::Fields(json!({
                        "node_type": 1,
                        "num_ports": 1,
                        "node_identity": 0x100 + u64::from(h.0),
                        "implementation_level": 2,
                    })),
                    (Class::Subn, NodeDescription::ID) => Got::Fields(json!(h.2)),
                    (Class::SubnAdm, NodeRecord::ID) if self.manager == Some(h.0) => {
                        // The SAN's hosts, then the routers' HRs on it.
                        let mut members: Vec<(u16, u64, String)> = self
                            .hosts
                            .iter()
                            .filter(|m| m.1 == h.1)
                            .map(|m| (m.0, 1, format!("{} (record)", m.2)))
                            .collect();
                        for n in &self.nodes {
                            for hr in n.hrs.iter().filter(|hr| hr.1 == h.1) {
                                members.push((hr.0, 3, n.name.to_string()));
                            }
                        }
                        let i = (modifier & 0xffff) as usize;
                        match members.get(i) {
                            Some(m) => Got::Fields(json!({
                                "total": members.len(),
                                "address": Address(m.0),
                                "identity": 0x100 + u64::from(m.0),
                                "node_type": m.1,
                                "level": 3,
                                "description": m.2,
                            })),
                            None => Got::Status(0x000c),
                        }
                    }
                    (Class::Subn, SmInfo::ID) if self.manager == Some(h.0) => {
                        Got::Fields(json!({"sm_state": 3, "priority": 5}))
                    }
                    (Class::Subn, PortInfo::ID) => Got::Fields(json!({
                        "address": Address(h.0), "san_id": Address(h.1),
                        "port_state": 4, "mtu": 1500, "cost": 0,
                        "manager_address": Address(self.manager.unwrap_or(0)),
                    })),
                    // A host has no LRT: an empty one.
                    (Class::Subn, LrtBlock::ID) => Got::Fields(json!({"total": 0, "entries": []})),
                    // Hosts at even addresses keep a table; the others
                    // refuse the attribute.
                    (Class::Subn, PartitionTable::ID) if h.0 % 2 == 0 && modifier == 0 => {
                        Got::Fields(json!({"entries": [["0x0010", "full"], ["0x7fff", "limited"]]}))
                    }
                    _ => Got::Status(0x000c),
                });
            }
            let Some(n) = self.node(dst) else {
                return Ok(Got::NoAnswer);
            };
            if self.dead.contains(&n.identity) {
                return Ok(Got::NoAnswer);
            }
            let port = (modifier >> 16) as usize;
            if class == Class::Perf {
                if attribute != PortCounters::ID {
                    return Ok(Got::Status(0x000c));
                }
                // Port p of router i: p + 1 receive errors and i drops of
                // no-route, 100 packets received.
                let mut counters = vec![0u64; PortCounters::COUNT];
                counters[0] = 100;
                counters[1] = u64::from(modifier) + 1;
                counters[PortCounters::FIRST_DROP + 5] = n.identity;
                return Ok(Got::Fields(
                    json!({"port_select": modifier, "counters": counters}),
                ));
            }
            Ok(match attribute {
                NodeInfo::ID => Got::Fields(json!({
                    "node_type": 3,
                    "num_ports": n.hrs.len(),
                    "node_identity": n.identity,
                })),
                NodeDescription::ID => Got::Fields(json!(n.name)),
                PortInfo::ID => {
                    let (a, san, _) = &n.hrs[modifier as usize];
                    // Every HR names the manager, as where its traps go,
                    // whichever SAN the manager is on.
                    let manager = self.manager.unwrap_or(0);
                    Got::Fields(json!({
                        "address": Address(*a), "san_id": Address(*san),
                        "port_state": 4, "mtu": 1500, "cost": 1,
                        "manager_address": Address(manager),
                    }))
                }
                LrtBlock::ID => {
                    let san = n.hrs[port].1;
                    let hosts = self.hosts.iter().filter(|h| h.1 == san);
                    let across: Vec<(u16, u8)> = n.hrs[port]
                        .2
                        .iter()
                        .map(|&a| (a, 1))
                        .chain(hosts.map(|h| (h.0, 0)))
                        .collect();
                    let block = (modifier & 0xffff) as usize;
                    let entries: Vec<Value> = across
                        .iter()
                        .skip(block * lrt_block::ENTRIES)
                        .take(lrt_block::ENTRIES)
                        .map(|&(a, flags)| {
                            json!({"address": Address(a), "flags": flags, "keepalives_missed": 0})
                        })
                        .collect();
                    Got::Fields(json!({"total": across.len(), "entries": entries}))
                }
                _ => Got::Status(0x000c),
            })
        }
    }

    /// Three routers in a ring over three SANs (a loop), and d behind c.
    fn ring() -> Vec<Node> {
        vec![
            Node {
                identity: 0xa,
                name: "a",
                hrs: vec![
                    (0x0111, 0x0601, vec![0x0121]),
                    (0x0112, 0x0603, vec![0x0132]),
                ],
            },
            Node {
                identity: 0xb,
                name: "b",
                hrs: vec![
                    (0x0121, 0x0601, vec![0x0111]),
                    (0x0122, 0x0602, vec![0x0131]),
                ],
            },
            Node {
                identity: 0xc,
                name: "c",
                hrs: vec![
                    (0x0131, 0x0602, vec![0x0122]),
                    (0x0132, 0x0603, vec![0x0112]),
                    (0x0133, 0x0604, vec![0x0141]),
                ],
            },
            Node {
                identity: 0xd,
                name: "d",
                hrs: vec![(0x0141, 0x0604, vec![0x0133])],
            },
        ]
    }

    fn fabric(dead: Vec<u64>) -> Fabric {
        Fabric {
            nodes: ring(),
            dead,
            hosts: vec![],
            dead_hosts: vec![],
            manager: None,
            asked: Mutex::new(Vec::new()),
        }
    }

    #[test]
    fn a_loop_is_walked_once_per_router() {
        let f = fabric(vec![]);
        let d = walk(&f, Address(0x0111)).unwrap();
        let ids: Vec<u64> = d.routers.iter().map(|r| r.identity).collect();
        assert_eq!(ids, [0xa, 0xb, 0xc, 0xd]);
        assert!(d.unanswered.is_empty());
        assert_eq!(d.exit_code(), 0);
        // One NodeInfo per router: the loop a-b-c-a does not bring a back,
        // nor c by its second address.
        let node_infos = f
            .asked
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, attr)| *attr == NodeInfo::ID)
            .count();
        assert_eq!(node_infos, 4);
        assert_eq!(d.sans.len(), 4);
        assert_eq!(d.hr_count(), 8);
        assert_eq!(
            d.routers[3].reached,
            Reached::Lrt {
                by: 0xc,
                hr: Address(0x0133)
            }
        );
        let text = render_text(&d);
        assert!(
            text.contains("router 0x000000000000000c \"c\" level ? (3 HRs, read at 0x0132"),
            "{text}"
        );
        assert!(
            text.contains("  [2] 0x0133 active san 0x0604 mtu 1500 cost 1 ; across 0x0141 \"d\""),
            "{text}"
        );
        assert!(
            text.contains("4 routers, 4 SANs, 8 HRs, 0 nodes, 0 did not answer ("),
            "{text}"
        );
        let v = to_json(&d);
        assert_eq!(v["counts"]["routers"], 4);
        assert_eq!(
            v["routers"][0]["hrs"][0]["routers_across"],
            json!(["0x0121"])
        );
        assert_eq!(v["sans"][0]["id"], "0x0601");
        assert_eq!(v["sans"][0]["hrs"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn a_node_that_never_answers_is_listed_and_the_rest_walked() {
        let f = fabric(vec![0xc]);
        let d = walk(&f, Address(0x0111)).unwrap();
        let ids: Vec<u64> = d.routers.iter().map(|r| r.identity).collect();
        // c is named by a and by b: tried at both addresses; d behind it is
        // not found.
        assert_eq!(ids, [0xa, 0xb]);
        let tried: Vec<Address> = d.unanswered.iter().map(|u| u.address).collect();
        assert_eq!(tried, [Address(0x0132), Address(0x0131)]);
        assert_eq!(
            d.unanswered[0].reached,
            Reached::Lrt {
                by: 0xa,
                hr: Address(0x0112)
            }
        );
        assert_eq!(d.exit_code(), 1);
        let text = render_text(&d);
        assert!(
            text.contains("no answer from 0x0132 (reached by LRT of 0x0112"),
            "{text}"
        );
        assert!(
            text.contains("2 routers, 3 SANs, 4 HRs, 0 nodes, 2 did not answer"),
            "{text}"
        );
        let v = to_json(&d);
        assert_eq!(v["unanswered"][0]["answered"], false);
        assert_eq!(v["unanswered"][0]["address"], "0x0132");
        assert_eq!(v["counts"]["unanswered"], 2);
    }

    #[test]
    fn each_node_shows_its_partitions_or_a_dash_when_it_refuses_them() {
        let mut f = fabric(vec![]);
        f.hosts = vec![
            (0x0101, 0x0601, "h1"),
            (0x0102, 0x0601, "h2"),
            (0x0103, 0x0602, "h3"),
            (0x0104, 0x0602, "h4"),
        ];
        f.manager = Some(0x0103);
        let extras = Extras {
            partitions: true,
            ..Extras::default()
        };
        let d = walk_with(&f, Address(0x0111), extras).unwrap();
        // Refused by the routers and the odd hosts: unknown, and the walk
        // complete all the same.
        assert_eq!(d.exit_code(), 0);
        assert!(d.routers.iter().all(|r| r.partitions.is_none()));
        let tables: Vec<(u16, usize)> = d
            .sans
            .iter()
            .flat_map(|s| &s.members)
            .map(|m| (m.address.0, m.partitions.as_ref().map_or(0, Vec::len)))
            .collect();
        assert_eq!(tables, [(0x0101, 0), (0x0102, 2), (0x0103, 0), (0x0104, 2)]);
        let text = render_text(&d);
        assert!(
            text.contains("\"h4 (record)\" level C partitions 0x0010 0x7fff(limited)\n"),
            "{text}"
        );
        assert!(text.contains("\"h1\" level B partitions -\n"), "{text}");
        assert!(text.contains("\n  partitions -\n  [0] 0x0111"), "{text}");
        let v = to_json(&d);
        assert_eq!(
            v["sans"][1]["nodes"][1]["partitions"],
            json!([["0x0010", "full"], ["0x7fff", "limited"]])
        );
        assert_eq!(v["sans"][1]["nodes"][0]["partitions"], Value::Null);
        assert_eq!(v["routers"][0]["partitions"], Value::Null);
        // One Get a node: block 0, not full.
        let asked = f.asked.lock().unwrap();
        let gets = |a: u16| {
            asked
                .iter()
                .filter(|(d, at)| d.0 == a && *at == PartitionTable::ID)
                .count()
        };
        assert_eq!((gets(0x0104), gets(0x0101), gets(0x0111)), (1, 1, 1));
    }

    #[test]
    fn each_san_gets_its_nodes_from_its_manager_or_from_the_lrts() {
        let mut f = fabric(vec![]);
        f.hosts = vec![
            (0x0101, 0x0601, "h1"),
            (0x0102, 0x0601, "h2"),
            (0x0103, 0x0602, "h3"),
            (0x0104, 0x0602, "h4"),
            (0x0105, 0x0604, "h5"),
        ];
        f.manager = Some(0x0103);
        f.dead_hosts = vec![0x0105];
        let d = walk(&f, Address(0x0111)).unwrap();
        let ids: Vec<u16> = d.sans.iter().map(|s| s.id.0).collect();
        assert_eq!(ids, [0x0601, 0x0602, 0x0603, 0x0604]);
        // SAN 0x0601's HRs name the manager of SAN 0x0602 (where their
        // traps go); it is not on 0x0601: its hosts are read one by one.
        let a = &d.sans[0];
        assert_eq!(a.manager, None);
        assert_eq!((a.cost, a.mtu, a.hrs.len()), (1, 1500, 2));
        let names: Vec<&str> = a.members.iter().map(|m| m.description.as_str()).collect();
        assert_eq!(names, ["h1", "h2"]);
        assert_eq!(a.members[0].level, 2);
        assert!(matches!(a.members[0].source, MemberSource::Lrt { .. }));
        // SAN 0x0602's manager answers with its records: no host is read
        // itself.
        let b = &d.sans[1];
        assert_eq!(b.manager, Some(Address(0x0103)));
        let names: Vec<&str> = b.members.iter().map(|m| m.description.as_str()).collect();
        assert_eq!(names, ["h3 (record)", "h4 (record)"]);
        let asked = f.asked.lock().unwrap();
        assert!(
            !asked.contains(&(Address(0x0104), NodeInfo::ID)),
            "{asked:?}"
        );
        drop(asked);
        // The host that does not answer is listed, with the HR that named
        // it; the SAN shows none.
        assert!(d.sans[3].members.is_empty());
        assert_eq!(d.unanswered.len(), 1);
        assert_eq!(d.unanswered[0].address, Address(0x0105));
        assert_eq!(
            d.unanswered[0].reached,
            Reached::Lrt {
                by: 0xc,
                hr: Address(0x0133)
            }
        );
        assert_eq!(d.exit_code(), 1);
        let text = render_text(&d);
        assert!(
            text.contains(
                "san 0x0602 cost 1 mtu 1500 (2 HRs, 2 nodes, from records of manager 0x0103)"
            ),
            "{text}"
        );
        assert!(
            text.contains("  host 0x0101 0x0000000000000201 \"h1\" level B"),
            "{text}"
        );
        assert!(
            text.contains("4 routers, 4 SANs, 8 HRs, 4 nodes, 1 did not answer"),
            "{text}"
        );
        let v = to_json(&d);
        assert_eq!(v["counts"]["nodes"], 4);
        assert_eq!(v["sans"][1]["manager"], "0x0103");
        assert_eq!(v["sans"][1]["nodes"][0]["level"], 3);
        assert_eq!(v["sans"][1]["nodes"][0]["level_name"], "C");
        assert_eq!(v["sans"][0]["nodes"][1]["node_type_name"], "host");
    }

    /// The fabric behind a link that loses `percent` of the requests: each
    /// Get is tried `tries` times (as the daemon's retries do) and answered
    /// only if some try got through. Which Gets failed is recorded.
    struct Lossy {
        inner: Fabric,
        percent: u64,
        tries: u32,
        seed: Mutex<u64>,
        failed: Mutex<Vec<(Class, Address, u16, u32)>>,
    }

    impl Lossy {
        fn lost(&self) -> bool {
            let mut x = self.seed.lock().unwrap();
            // xorshift64: a fixed sequence per seed.
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            *x % 100 < self.percent
        }
    }

    impl Ask for Lossy {
        fn get(&self, c: Class, dst: Address, a: u16, m: u32) -> Result<Got, ClientError> {
            if (0..self.tries).all(|_| self.lost()) {
                self.failed.lock().unwrap().push((c, dst, a, m));
                return Ok(Got::NoAnswer);
            }
            self.inner.get(c, dst, a, m)
        }
    }

    #[test]
    fn with_loss_the_walk_is_complete_after_retries_or_marks_exactly_what_failed() {
        let mut complete = 0;
        for seed in 1..=40u64 {
            let mut inner = fabric(vec![]);
            inner.hosts = vec![(0x0101, 0x0601, "h1"), (0x0105, 0x0604, "h5")];
            let f = Lossy {
                inner,
                percent: 30,
                tries: 4,
                seed: Mutex::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                failed: Mutex::new(Vec::new()),
            };
            let d = walk(&f, Address(0x0111)).unwrap();
            let failed = f.failed.lock().unwrap().clone();
            // Every node listed as not answering is one whose NodeInfo was
            // lost on every try, and every such node is listed.
            let mut silent: Vec<Address> = d.unanswered.iter().map(|u| u.address).collect();
            let mut lost: Vec<Address> = failed
                .iter()
                .filter(|(c, _, a, _)| *c == Class::Subn && *a == NodeInfo::ID)
                .map(|(_, dst, _, _)| *dst)
                .collect();
            silent.sort_unstable();
            lost.sort_unstable();
            assert_eq!(silent, lost, "seed {seed}: {failed:?}");
            // A router is marked incomplete exactly when one of its PortInfo
            // or LrtBlock Gets was lost.
            for r in &d.routers {
                let own: Vec<Address> = std::iter::once(r.address).collect();
                let lost_here = failed.iter().any(|(_, dst, a, _)| {
                    own.contains(dst)
                        && [NodeDescription::ID, PortInfo::ID, LrtBlock::ID].contains(a)
                });
                assert_eq!(
                    r.incomplete(),
                    lost_here,
                    "seed {seed}: {} {failed:?}",
                    r.description
                );
            }
            if failed.is_empty() {
                assert!(d.complete(), "seed {seed}");
                assert_eq!(d.routers.len(), 4);
                assert_eq!(d.member_count(), 2);
                complete += 1;
            } else {
                assert_eq!(d.exit_code(), 1, "seed {seed}");
            }
        }
        // 4 tries at 30 % loss: most walks are whole.
        assert!(complete >= 20, "{complete} of 40 complete");
    }

    #[test]
    fn from_a_host_the_walk_starts_at_the_routers_its_manager_records() {
        let mut f = fabric(vec![]);
        f.hosts = vec![(0x0103, 0x0602, "h3"), (0x0104, 0x0602, "h4")];
        f.manager = Some(0x0103);
        let d = walk(&f, Address(0x0104)).unwrap();
        assert_eq!(d.start_host, Some((Address(0x0104), "h4".to_string())));
        let mut ids: Vec<u64> = d.routers.iter().map(|r| r.identity).collect();
        ids.sort_unstable();
        assert_eq!(ids, [0xa, 0xb, 0xc, 0xd]);
        assert_eq!(
            d.routers[0].reached,
            Reached::Manager {
                manager: Address(0x0103)
            }
        );
        // The host is a node of its SAN, not a router.
        let san = d.sans.iter().find(|s| s.id == Address(0x0602)).unwrap();
        let names: Vec<&str> = san.members.iter().map(|m| m.description.as_str()).collect();
        assert_eq!(names, ["h3 (record)", "h4 (record)"]);
        assert!(d.complete());
        let text = render_text(&d);
        assert!(text.starts_with("from host 0x0104 \"h4\"\n"), "{text}");
        assert!(
            text.contains("reached by records of manager 0x0103"),
            "{text}"
        );
        assert_eq!(to_json(&d)["start_host"]["address"], "0x0104");

        // Without a manager nothing names the host's routers: an error
        // that says what to give.
        f.manager = None;
        let e = walk(&f, Address(0x0104)).unwrap_err().to_string();
        assert!(e.contains("give a router's address"), "{e}");
    }

    #[test]
    fn a_start_that_does_not_answer_is_the_one_node_listed() {
        let f = fabric(vec![0xa]);
        let d = walk(&f, Address(0x0111)).unwrap();
        assert!(d.routers.is_empty());
        assert_eq!(d.unanswered[0].reached, Reached::Start);
        assert_eq!(d.exit_code(), 1);
        assert!(render_text(&d).contains("0 routers, 0 SANs, 0 HRs, 0 nodes, 1 did not answer"));
    }

    #[test]
    fn a_long_lrt_is_read_block_by_block() {
        // 20 routers across one SAN: two LrtBlocks; none answers.
        let across: Vec<u16> = (0x0200..0x0214).collect();
        let f = Fabric {
            nodes: vec![Node {
                identity: 1,
                name: "hub",
                hrs: vec![(0x0111, 0x0601, across)],
            }],
            dead: vec![],
            hosts: vec![],
            dead_hosts: vec![],
            manager: None,
            asked: Mutex::new(Vec::new()),
        };
        let d = walk(&f, Address(0x0111)).unwrap();
        assert_eq!(d.unanswered.len(), 20);
        assert_eq!(d.routers[0].hrs[0].across.as_ref().unwrap().len(), 20);
    }

    #[test]
    fn the_page_of_the_fake_fabric_holds_every_node_and_the_errors() {
        let mut f = fabric(vec![0xc]);
        f.nodes[1].name = "b <i>&</i>";
        f.hosts = vec![(0x0101, 0x0601, "h1"), (0x0103, 0x0602, "h3")];
        let extras = Extras {
            counters: true,
            partitions: false,
        };
        let d = walk_with(&f, Address(0x0111), extras).unwrap();
        // Counters are read only when asked for.
        let plain = walk(&fabric(vec![]), Address(0x0111)).unwrap();
        assert!(plain.routers[0].hrs[0].counters.is_none());
        // Port 1 of a: 2 receive errors and 0xa drops of no-route.
        assert_eq!(d.routers[0].hrs[1].errors(), Some(2 + 0xa));
        let page = crate::discover_html::render_html(&d, "now", Address(0x0111));
        for r in &d.routers {
            assert!(page.contains(&format!("id=\"r-{:#018x}\"", r.identity)));
        }
        for san in &d.sans {
            assert!(
                page.contains(&format!("id=\"san-{}\"", san.id)),
                "{}",
                san.id
            );
            assert!(
                page.contains(&format!(">SAN {}</text>", san.id)),
                "{}",
                san.id
            );
        }
        for u in &d.unanswered {
            assert!(page.contains(&format!("class=\"el node silent\" id=\"u-{}\"", u.address)));
        }
        // The hosts, on their SANs.
        assert_eq!(d.member_count(), 2);
        for h in ["0x0101", "0x0103"] {
            assert!(
                page.contains(&format!("class=\"el node host\" id=\"h-{h}\"")),
                "{h}"
            );
        }
        assert!(page.contains("b &lt;i&gt;&amp;&lt;/i&gt;"));
        assert!(!page.contains("<i>"));
        assert!(page.contains("status incomplete"));
        // Every port's errors are on the map: 2 routers, 4 HRs.
        assert_eq!(page.matches("<g class=\"badge bad\">").count(), 4);
    }

    #[test]
    fn a_daemon_error_stops_the_walk() {
        struct Gone;
        impl Ask for Gone {
            fn get(&self, _: Class, _: Address, _: u16, _: u32) -> Result<Got, ClientError> {
                Err(ClientError::Other("gone".into()))
            }
        }
        assert!(walk(&Gone, Address(0x0111)).is_err());
    }
}
