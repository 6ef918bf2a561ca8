//! `mwtrace` and `mwctl trace`: trace the path a packet takes from the node
//! the admin socket belongs to (a router running mwrouterd, or an mwlab
//! host) to a destination, and validate it hop by hop, as InfiniBand's
//! ibtracer does (docs/mwtrace.md).
//!
//! The walk, with the node's own management client (every request is one
//! `mad` over the admin socket):
//! 1. the source's route to the destination: its RouteEntry (a host's is
//!    its first hop: the HR a redirect named, else its default HR), whose
//!    NextAddress is the first router's ingress HR;
//! 2. at each hop: VendorGet(ClassPortInfo) of class 0x30 says whether the
//!    hop runs the tracer's agent (a node without it answers status 0x0004,
//!    and is skipped); VendorGet(SourceRoute) with the HRs expected so far
//!    asks it to check that the request arrived on the HR expected at this
//!    hop: status 7 when it did not, and either way the HR it did arrive on;
//! 3. the hop's FIB entry for the destination (Subn RouteEntry on the HR
//!    the packet came in by) names the next hop; the walk ends at the
//!    destination;
//! 4. the partitions (module [`partition`]), once the path is validated:
//!    the source's own table (Subn PartitionTable, modifier 0), the first
//!    router's copy of it (modifier source << 16, asked of the HR the
//!    packet arrives on), the destination's own; block 1 of each only when
//!    block 0 is full. Whether the routers would admit the packet is their
//!    own rule applied to them; a table that cannot be read makes the
//!    verdict unknown and never fails the trace.
//!
//! Responses come back by the reverse path, which need not be the forward
//! one; `--both` reads the reverse path from the FIBs (the destination's
//! route to the source, then each router's), which only a trace started at
//! the destination can validate.

pub mod partition;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use admin::mad::{MadAnswer, MadMethod, MadQuery};
use admin::proto::{AdminErrorCode, Command, Show};
use admin::view::ManagementInfo;
use admin::{Client, ClientError};
use clap::Args;
use mgmt::attr::partition_table::ENTRIES;
use mgmt::attr::source_route::MAX_HOPS;
use mgmt::attr::{PartitionTable, RouteEntry, SourceRoute};
use mgmt::wire::MgmtClass;
use rrp::Address;
use serde::Serialize;
use serde_json::Value;

use partition::{Checkers, PartitionArg, PartitionReport, Read};

/// Exit status: the path is validated.
pub const EXIT_VALIDATED: i32 = 0;
/// Exit status: a hop saw the request arrive on another HR than expected
/// (status 7), or the path loops.
pub const EXIT_MISMATCH: i32 = 1;
/// Exit status: a hop did not answer, or there is no route.
pub const EXIT_UNREACHABLE: i32 = 2;
/// Exit status (mwtrace): bad arguments, or the admin socket cannot be
/// used.
pub const EXIT_USAGE: i32 = 3;
/// Exit status: the path is validated, but the routers would refuse the
/// packet in its partition (`--partition`'s, or every one of the source's
/// table) and drop it with the reason `partition`.
pub const EXIT_PARTITION: i32 = 4;

/// Milliseconds each request waits for an answer, by default.
pub const DEFAULT_TIMEOUT_MS: u64 = 1000;
/// Tries after the first, by default.
pub const DEFAULT_RETRIES: u32 = 2;

/// What to trace, and how.
#[derive(Debug, Clone, Args)]
pub struct TraceArgs {
    /// The destination's address (0x0108).
    #[arg(value_name = "DEST_ADDRESS", required_unless_present = "route")]
    pub dst: Option<Address>,
    /// Trace this L2 source route instead: the first router's HR (a
    /// neighbour of the source), then its router hops, EGRESS@NATIVE each
    /// (as RRP#2 routes print: 0x0119,0x011a@127.0.0.1:4001); the requests
    /// travel along it with L2RHs.
    #[arg(long, value_name = "VIA,HOP,...", conflicts_with = "dst")]
    pub route: Option<String>,
    /// Print the whole path: per hop the node, the HR expected and the HR
    /// the request arrived on, the round trip.
    #[arg(short, long)]
    pub verbose: bool,
    /// Tries after the first of each request.
    #[arg(short = 'r', long, value_name = "N", default_value_t = DEFAULT_RETRIES)]
    pub retries: u32,
    /// Milliseconds each try waits for its answer.
    #[arg(short = 't', long = "mad-timeout", value_name = "MS", default_value_t = DEFAULT_TIMEOUT_MS)]
    pub timeout_ms: u64,
    /// Also read the reverse path (the destination's route back) from the
    /// FIBs.
    #[arg(long)]
    pub both: bool,
    /// Trace again every SECS seconds and print each change of the path.
    #[arg(long, value_name = "SECS")]
    pub watch: Option<f64>,
    /// With --watch: stop after this many traces.
    #[arg(long, value_name = "N", requires = "watch")]
    pub count: Option<u64>,
    /// The partition the traced packet is sent in (0x0010, or decimal), and
    /// the membership it claims (the source's own without one): whether
    /// the routers would admit it. Without it, every partition of the
    /// source's table.
    #[arg(long, value_name = "KEY[:full|:limited]", conflicts_with = "route")]
    pub partition: Option<PartitionArg>,
}

/// How a trace ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every hop with the agent saw the request arrive where expected.
    Validated,
    /// A hop saw it arrive elsewhere (or the path loops).
    Mismatch,
    /// A hop did not answer, or nothing routes further.
    Unreachable,
}

impl Outcome {
    /// The exit status.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Validated => EXIT_VALIDATED,
            Outcome::Mismatch => EXIT_MISMATCH,
            Outcome::Unreachable => EXIT_UNREACHABLE,
        }
    }
}

/// One hop of a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hop {
    /// 1 for the first router.
    pub hop: usize,
    /// Its NodeDescription (`?` when it did not say).
    pub node: String,
    /// The HR the request should arrive on.
    pub expected: Address,
    /// The HR it arrived on (from the hop's agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<Address>,
    /// That HR's index in its box.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_port: Option<u8>,
    /// `ok`, `mismatch`, `no_agent` (skipped), `no_answer`.
    pub status: &'static str,
    /// The round trip of the SourceRoute request (or of the last one
    /// answered), ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<u64>,
    /// Tries it took.
    pub tries: u32,
}

/// A hop of the reverse path, read from a FIB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReverseHop {
    /// Its NodeDescription.
    pub node: String,
    /// The HR the packet arrives on.
    pub address: Address,
}

/// A whole trace.
#[derive(Debug, Clone, Serialize)]
pub struct Trace {
    /// Where it starts (the node's first address).
    pub source: Address,
    /// Where it goes.
    pub destination: Address,
    /// How it ended.
    pub outcome: Outcome,
    /// The one line without -v.
    pub summary: String,
    /// The hops, in order.
    pub hops: Vec<Hop>,
    /// The reverse path (`--both`), read from the FIBs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse: Option<Vec<ReverseHop>>,
    /// Why the reverse path is incomplete, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_note: Option<String>,
    /// Whether the routers would admit the packet in its partitions, once
    /// the path is validated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<PartitionReport>,
}

impl Trace {
    /// The exit status: the path's, else [`EXIT_PARTITION`] when the
    /// routers would refuse the packet's partition.
    pub fn exit_code(&self) -> i32 {
        match self.outcome {
            Outcome::Validated if self.partition.as_ref().is_some_and(|p| p.refused()) => {
                EXIT_PARTITION
            }
            o => o.exit_code(),
        }
    }
}

/// Why a request gave nothing.
#[derive(Debug)]
pub enum Miss {
    /// No answer after every try.
    NoAnswer(String),
    /// Anything else (the admin socket, a refusal): the trace cannot go on.
    Fatal(ClientError),
}

impl From<ClientError> for Miss {
    fn from(e: ClientError) -> Miss {
        match e {
            ClientError::Daemon(d) if d.code == AdminErrorCode::NoAnswer => {
                Miss::NoAnswer(d.message)
            }
            other => Miss::Fatal(other),
        }
    }
}

/// Sends one `mad` and reads its answer.
pub trait Ask {
    /// The answer to `q`.
    fn ask(&mut self, q: &MadQuery) -> Result<MadAnswer, Miss>;
    /// `show management` of the node the trace starts from.
    fn management(&mut self) -> Result<ManagementInfo, Miss>;
}

impl Ask for Client {
    fn ask(&mut self, q: &MadQuery) -> Result<MadAnswer, Miss> {
        let v = self.request(Command::Mad(q.clone()))?;
        serde_json::from_value(v)
            .map_err(|e| Miss::Fatal(ClientError::Other(format!("malformed mad answer: {e}"))))
    }

    fn management(&mut self) -> Result<ManagementInfo, Miss> {
        let v = self.request(Command::Show(Show::Management {}))?;
        serde_json::from_value(v).map_err(|e| {
            Miss::Fatal(ClientError::Other(format!(
                "malformed show management answer: {e}"
            )))
        })
    }
}

/// Where a request goes: by address, or along an L2 source route (to
/// whoever is at its end).
#[derive(Debug, Clone)]
enum At {
    Address(Address),
    L2 { via: Address, hops: Vec<String> },
}

/// The walk's requests, with the trace's waits and tries.
struct Walker<'a, A: Ask + ?Sized> {
    ask: &'a mut A,
    timeout_ms: u64,
    retries: u32,
}

impl<A: Ask + ?Sized> Walker<'_, A> {
    fn get(
        &mut self,
        dst: Address,
        class: &str,
        attribute: &str,
        modifier: u32,
        data: Option<String>,
    ) -> Result<MadAnswer, Miss> {
        self.get_at(&At::Address(dst), class, attribute, modifier, data)
    }

    fn get_at(
        &mut self,
        at: &At,
        class: &str,
        attribute: &str,
        modifier: u32,
        data: Option<String>,
    ) -> Result<MadAnswer, Miss> {
        let (dst, via, route) = match at {
            At::Address(a) => (Some(*a), None, Vec::new()),
            At::L2 { via, hops } => (None, Some(*via), hops.clone()),
        };
        self.ask.ask(&MadQuery {
            dst,
            via,
            route,
            class: Some(class.into()),
            method: MadMethod::Get,
            attribute: attribute.into(),
            modifier,
            data,
            timeout_ms: Some(self.timeout_ms),
            retries: Some(self.retries),
            ..MadQuery::default()
        })
    }

    /// Checks hop `expected.len()` at `at`: VendorGet(ClassPortInfo) says
    /// whether it runs the tracer's agent (`no_agent` when not), then
    /// VendorGet(SourceRoute) with the HRs expected so far (`ok` or
    /// `mismatch`, and the HR it arrived on). `Err` inside: no answer, why.
    fn check_hop(
        &mut self,
        at: &At,
        expected: &[Address],
        hop: &mut Hop,
    ) -> Result<Result<(), String>, Miss> {
        let cpi = match self.get_at(at, "trace", "class_port_info", 0, None) {
            Ok(a) => a,
            Err(Miss::NoAnswer(why)) => {
                hop.status = "no_answer";
                return Ok(Err(why));
            }
            Err(e) => return Err(e),
        };
        hop.tries = cpi.tries;
        hop.rtt_ms = Some(cpi.rtt_ms);
        if !cpi.ok() {
            hop.status = "no_agent";
            return Ok(Ok(()));
        }
        let a = match self.get_at(
            at,
            "trace",
            "source_route",
            0,
            Some(source_route_hex(expected)),
        ) {
            Ok(a) => a,
            Err(Miss::NoAnswer(why)) => {
                hop.status = "no_answer";
                return Ok(Err(why));
            }
            Err(e) => return Err(e),
        };
        hop.tries = a.tries;
        hop.rtt_ms = Some(a.rtt_ms);
        let f = a.fields.clone().unwrap_or(Value::Null);
        hop.actual = Some(address_field(&f["actual_address"]));
        hop.actual_port = f["actual_port"].as_u64().map(|p| p as u8);
        if !a.ok() {
            hop.status = "mismatch";
        }
        Ok(Ok(()))
    }

    /// The node's name, `?` when it does not say.
    fn name(&mut self, at: Address) -> String {
        self.name_at(&At::Address(at))
    }

    fn name_at(&mut self, at: &At) -> String {
        match self.get_at(at, "subn", "node_description", 0, None) {
            Ok(a) if a.ok() => a
                .fields
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
            _ => "?".into(),
        }
    }

    /// The RouteEntry of `dst` at node `at`, on its port `port`.
    fn route(&mut self, at: Address, port: u8, dst: Address) -> Result<RouteEntryView, Miss> {
        let a = self.get(
            at,
            "subn",
            "route_entry",
            RouteEntry::modifier(port, dst),
            None,
        )?;
        if !a.ok() {
            return Ok(RouteEntryView::default());
        }
        let f = a.fields.unwrap_or(Value::Null);
        Ok(RouteEntryView {
            kind: f["kind"].as_u64().unwrap_or(0) as u8,
            q: f["q"].as_u64().unwrap_or(u64::MAX),
            next: address_field(&f["next_address"]),
            native: f["native"].as_str().unwrap_or("").to_string(),
            first_hr: address_field(&f["first_hr"]),
        })
    }

    /// The table of partitions node `at` keeps for `member`
    /// (`Address::UNSPECIFIED`: its own): block 0, and block 1 only when
    /// block 0 is full. What does not answer, or does not serve the
    /// attribute, is unknown, with why.
    fn partition_table(&mut self, at: Address, member: Address) -> Read {
        let mut table = Vec::new();
        for block in 0..2 {
            let a = match self.get(
                at,
                "subn",
                "partition_table",
                PartitionTable::modifier(member, block),
                None,
            ) {
                Ok(a) => a,
                Err(Miss::NoAnswer(why)) => return Read::Unknown(why),
                Err(Miss::Fatal(e)) => return Read::Unknown(e.to_string()),
            };
            if !a.ok() {
                return Read::Unknown(format!(
                    "{at} answered status {:#06x} ({})",
                    a.status, a.status_text
                ));
            }
            let Some(t) = a
                .fields
                .and_then(|f| serde_json::from_value::<PartitionTable>(f).ok())
            else {
                return Read::Unknown(format!("{at}: a PartitionTable that does not parse"));
            };
            let full = t.entries.len() == ENTRIES;
            table.extend(t.entries);
            if !full {
                break;
            }
        }
        Read::Entries(table)
    }

    /// The index of HR `hr` in its box (by PortInfo), when it answers.
    fn port_index(&mut self, hr: Address) -> Result<Option<u8>, Miss> {
        let info = self.get(hr, "subn", "node_info", 0, None)?;
        let f = info.fields.unwrap_or(Value::Null);
        if address_field(&f["local_port_address"]) == hr {
            return Ok(f["local_port_num"].as_u64().map(|p| p as u8));
        }
        let n = f["num_ports"].as_u64().unwrap_or(0).min(255) as u8;
        for p in 0..n {
            let pi = self.get(hr, "subn", "port_info", u32::from(p), None)?;
            if pi
                .fields
                .as_ref()
                .is_some_and(|f| address_field(&f["address"]) == hr)
            {
                return Ok(Some(p));
            }
        }
        Ok(None)
    }

    /// The best route from the node of `own` addresses (one per port): its
    /// cheapest forwarding entry on any port; `Local` when `dst` is one of
    /// its own.
    fn first(&mut self, own: &[Address], dst: Address) -> Result<RouteEntryView, Miss> {
        let mut best: Option<RouteEntryView> = None;
        for (p, a) in own.iter().enumerate() {
            let e = self.route(*a, p.min(255) as u8, dst)?;
            if e.kind == RouteEntry::LOCAL {
                return Ok(e);
            }
            if e.kind == RouteEntry::FORWARD && best.as_ref().is_none_or(|b| e.q < b.q) {
                best = Some(e);
            }
        }
        Ok(best.unwrap_or_default())
    }
}

/// What the walk needs of a RouteEntry.
#[derive(Debug, Clone, Default)]
struct RouteEntryView {
    kind: u8,
    q: u64,
    next: Address,
    native: String,
    /// The best first HR for a node on the ingress SAN (0: this HR).
    first_hr: Address,
}

/// An address as the answers write it (`"0x0121"` or a number).
fn address_field(v: &Value) -> Address {
    match v {
        Value::String(s) => s.parse().unwrap_or(Address::UNSPECIFIED),
        Value::Number(n) => Address(n.as_u64().unwrap_or(0).min(0xFFFF) as u16),
        _ => Address::UNSPECIFIED,
    }
}

/// The SourceRoute request for the hops expected so far, as hex.
fn source_route_hex(expected: &[Address]) -> String {
    let mut area = vec![0u8; MgmtClass::VENDOR_TRACE.attribute_len()];
    // 64 hops at most: the walk stops before.
    let _ = SourceRoute::request(expected).emit(&mut area);
    area[..SourceRoute::LEN]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Traces the path from the node `ask` speaks for to `dst`, as its packets
/// go.
pub fn trace<A: Ask + ?Sized>(
    ask: &mut A,
    dst: Option<Address>,
    args: &TraceArgs,
) -> Result<Trace, Miss> {
    let own = ask.management()?.addresses;
    let source = own.first().copied().unwrap_or(Address::UNSPECIFIED);
    let destination = dst.unwrap_or(Address::UNSPECIFIED);
    let mut w = Walker {
        ask,
        timeout_ms: args.timeout_ms,
        retries: args.retries,
    };
    let mut t = Trace {
        source,
        destination,
        outcome: Outcome::Validated,
        summary: String::new(),
        hops: Vec::new(),
        reverse: None,
        reverse_note: None,
        partition: None,
    };
    let mut fail: Option<String> = None;
    // The first hop: the source's own route.
    if own.contains(&destination) {
        t.summary = format!("{destination} is the source itself");
        return Ok(t);
    }
    let e = w.first(&own, destination)?;
    if e.kind != RouteEntry::FORWARD || e.next == Address::UNSPECIFIED {
        t.outcome = Outcome::Unreachable;
        t.summary = format!("unreachable: the source {source} has no route to {destination}");
        return Ok(t);
    }
    // The first HR answer: the HR the source sends to names the best first
    // HR from the source's position (RRP#6, or the redirect its first
    // packet draws), which a packet then takes.
    let mut next = e.next;
    if let Ok(Some(p)) = w.port_index(next)
        && let Ok(r) = w.route(next, p, destination)
        && r.first_hr != Address::UNSPECIFIED
        && r.first_hr != next
    {
        next = r.first_hr;
    }
    let mut expected: Vec<Address> = Vec::new();
    loop {
        let k = expected.len() + 1;
        if expected.contains(&next) {
            t.outcome = Outcome::Mismatch;
            fail.get_or_insert(format!(
                "loop: hop {k} is {next} again (hops {})",
                hops_text(&t.hops)
            ));
            break;
        }
        if k > MAX_HOPS {
            t.outcome = Outcome::Unreachable;
            fail.get_or_insert(format!("more than {MAX_HOPS} hops"));
            break;
        }
        expected.push(next);
        let mut hop = Hop {
            hop: k,
            node: String::from("?"),
            expected: next,
            actual: None,
            actual_port: None,
            status: "ok",
            rtt_ms: None,
            tries: 0,
        };
        // Does the hop run the tracer's agent, and where did it arrive?
        if let Err(why) = w.check_hop(&At::Address(next), &expected, &mut hop)? {
            t.hops.push(hop);
            t.outcome = Outcome::Unreachable;
            fail.get_or_insert(format!("hop {k} ({next}): {why}"));
            break;
        }
        if hop.status == "mismatch" && t.outcome == Outcome::Validated {
            t.outcome = Outcome::Mismatch;
        }
        hop.node = w.name(next);
        if hop.status == "mismatch" {
            fail.get_or_insert(format!(
                "mismatch at hop {k} ({}): arrived on {}, expected {next}",
                hop.node,
                hop.actual.map_or("?".into(), |a| a.to_string())
            ));
        }
        let ingress = hop.actual.filter(|a| *a == next).and(hop.actual_port);
        t.hops.push(hop);
        if next == destination {
            break;
        }
        // The next hop from this hop's FIB, for a packet that came in by
        // the HR expected here.
        let port = match ingress {
            Some(p) => Some(p),
            None => match w.port_index(next) {
                Ok(p) => p,
                Err(Miss::NoAnswer(why)) => {
                    t.outcome = Outcome::Unreachable;
                    fail.get_or_insert(format!("hop {k} ({next}): {why}"));
                    break;
                }
                Err(e) => return Err(e),
            },
        };
        let Some(port) = port else {
            t.outcome = Outcome::Unreachable;
            fail.get_or_insert(format!(
                "hop {k}: {next} is not an HR of the node answering"
            ));
            break;
        };
        let e = match w.route(next, port, destination) {
            Ok(e) => e,
            Err(Miss::NoAnswer(why)) => {
                t.outcome = Outcome::Unreachable;
                fail.get_or_insert(format!("hop {k} ({next}): {why}"));
                break;
            }
            Err(e) => return Err(e),
        };
        match e.kind {
            RouteEntry::LOCAL => break,
            RouteEntry::FORWARD if e.next != Address::UNSPECIFIED => next = e.next,
            RouteEntry::FORWARD => {
                t.outcome = Outcome::Unreachable;
                fail.get_or_insert(format!(
                    "hop {k} ({next}) forwards to {}, a node it knows no address of",
                    e.native
                ));
                break;
            }
            _ => {
                t.outcome = Outcome::Unreachable;
                fail.get_or_insert(format!("hop {k} ({next}) has no route to {destination}"));
                break;
            }
        }
    }
    t.summary = match (&fail, t.outcome) {
        (Some(f), _) => format!("{}: {f}", outcome_word(t.outcome)),
        (None, _) => {
            let skipped = t.hops.iter().filter(|h| h.status == "no_agent").count();
            format!(
                "validated: {source} -> {destination} in {} hop{} ({}){}",
                t.hops.len(),
                if t.hops.len() == 1 { "" } else { "s" },
                hops_text(&t.hops),
                if skipped > 0 {
                    format!(", {skipped} without the tracer's agent (not validated)")
                } else {
                    String::new()
                }
            )
        }
    };
    if t.outcome == Outcome::Validated {
        t.partition = Some(partitions(&mut w, &t, args.partition));
    }
    if args.both {
        reverse(&mut w, &mut t);
    }
    Ok(t)
}

/// The partitions of a validated path: the source's table, the first
/// router's copy of it, the destination's, and the routers' verdict.
fn partitions<A: Ask + ?Sized>(
    w: &mut Walker<'_, A>,
    t: &Trace,
    asked: Option<PartitionArg>,
) -> PartitionReport {
    // The routers: every hop but the destination.
    let routers = &t.hops[..t.hops.len().saturating_sub(1)];
    let named = |h: &Hop| (h.node.clone(), h.expected);
    let at = Checkers {
        first: routers.first().map(named),
        last: routers.last().map(named),
    };
    let source_table = w.partition_table(t.source, Address::UNSPECIFIED);
    let first_router = at
        .first
        .as_ref()
        .map(|(_, hr)| (*hr, w.partition_table(*hr, t.source)));
    let destination_table = w.partition_table(t.destination, Address::UNSPECIFIED);
    PartitionReport::decide(asked, source_table, first_router, destination_table, &at)
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Validated => "validated",
        Outcome::Mismatch => "failed",
        Outcome::Unreachable => "unreachable",
    }
}

fn hops_text(hops: &[Hop]) -> String {
    hops.iter()
        .map(|h| h.node.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reverse path, read from the FIBs: the destination's route to the
/// source (its RouteEntry), then each router's.
fn reverse<A: Ask + ?Sized>(w: &mut Walker<'_, A>, t: &mut Trace) {
    let mut path = Vec::new();
    let (src, dst) = (t.source, t.destination);
    let mut at = dst;
    let mut port = 0u8;
    // The destination's first hop (a host answers its first hop on port 0;
    // a router's cheapest route is taken on the HR the trace reached).
    let note = loop {
        if path.len() > MAX_HOPS {
            break Some("more than 64 hops".to_string());
        }
        let e = match w.route(at, port, src) {
            Ok(e) => e,
            Err(Miss::NoAnswer(why)) => break Some(format!("{at}: {why}")),
            Err(Miss::Fatal(e)) => break Some(e.to_string()),
        };
        match e.kind {
            RouteEntry::LOCAL => break None,
            RouteEntry::FORWARD if e.next != Address::UNSPECIFIED => {
                if e.next == src {
                    break None;
                }
                if path.iter().any(|h: &ReverseHop| h.address == e.next) {
                    break Some(format!("loop at {}", e.next));
                }
                let node = w.name(e.next);
                path.push(ReverseHop {
                    node,
                    address: e.next,
                });
                at = e.next;
                port = match w.port_index(at) {
                    Ok(Some(p)) => p,
                    _ => break Some(format!("{at}: its port index is unknown")),
                };
            }
            RouteEntry::FORWARD => {
                break Some(format!("{at} forwards to {}, of unknown address", e.native));
            }
            _ => {
                break Some(format!(
                    "{at} has no route to {src} that its agent reports (a host without \
                     management, or no route)"
                ));
            }
        }
    };
    t.reverse = Some(path);
    t.reverse_note = note;
}

/// The trace for people: one line, or with `verbose` the whole path.
pub fn render(t: &Trace, verbose: bool) -> String {
    let mut out = String::new();
    if !verbose {
        let _ = writeln!(out, "{}", t.summary);
    } else {
        let _ = writeln!(out, "trace {} -> {}", t.source, t.destination);
        let mut table = crate::table::Table::new(&[
            "hop", "node", "expected", "arrived", "status", "rtt_ms", "tries",
        ]);
        for h in &t.hops {
            table.row(vec![
                h.hop.to_string(),
                h.node.clone(),
                if h.expected == Address::UNSPECIFIED {
                    "?".to_string()
                } else {
                    h.expected.to_string()
                },
                h.actual.map_or("-".into(), |a| match h.actual_port {
                    Some(p) => format!("{a} (port {p})"),
                    None => a.to_string(),
                }),
                match h.status {
                    "no_agent" => "skipped: no tracer agent".to_string(),
                    s => s.to_string(),
                },
                h.rtt_ms.map_or("-".into(), |r| r.to_string()),
                h.tries.to_string(),
            ]);
        }
        out.push_str(&table.render());
        let _ = writeln!(out, "{}", t.summary);
        if let Some(p) = &t.partition
            && p.shown()
        {
            for l in p.tables_text() {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    if let Some(p) = &t.partition
        && p.shown()
    {
        for d in &p.decisions {
            let _ = writeln!(out, "{}", d.text);
        }
    }
    if let Some(r) = &t.reverse {
        let hops: Vec<String> = r
            .iter()
            .map(|h| format!("{} ({})", h.node, h.address))
            .collect();
        let _ = writeln!(
            out,
            "reverse {} -> {} (read from the FIBs, not validated): {}{}",
            t.destination,
            t.source,
            if hops.is_empty() {
                "direct".to_string()
            } else {
                hops.join(", ")
            },
            t.reverse_note
                .as_ref()
                .map_or(String::new(), |n| format!("; incomplete: {n}"))
        );
    }
    out
}

/// A path as `--watch` compares it: each hop's node, expected and actual
/// HR, status; each partition's verdict.
type Shape = (
    Vec<(String, Address, Option<Address>, &'static str)>,
    Vec<String>,
);

/// The shape of a trace.
fn shape(t: &Trace) -> Shape {
    (
        t.hops
            .iter()
            .map(|h| (h.node.clone(), h.expected, h.actual, h.status))
            .collect(),
        t.partition
            .iter()
            .flat_map(|p| p.decisions.iter().map(|d| d.text.clone()))
            .collect(),
    )
}

/// Parses `--route`: the first router's HR, then `EGRESS@NATIVE` hops.
pub fn parse_route(s: &str) -> Result<(Address, Vec<String>), String> {
    let mut parts = s.split(',').map(str::trim);
    let via = parts
        .next()
        .unwrap_or_default()
        .parse::<Address>()
        .map_err(|e| format!("--route: the first router's HR: {e}"))?;
    let hops: Vec<String> = parts.map(str::to_string).collect();
    if hops.len() > admin::mad::MAX_ROUTE_HOPS {
        return Err(format!(
            "--route: at most {} hops after the first router",
            admin::mad::MAX_ROUTE_HOPS
        ));
    }
    for h in &hops {
        let ok = h.split_once('@').is_some_and(|(e, n)| {
            e.parse::<Address>().is_ok() && rrp::NativeAddr::parse(n).is_ok()
        });
        if !ok {
            return Err(format!(
                "--route: hop {h:?}: EGRESS@NATIVE (0x011a@127.0.0.1:4001)"
            ));
        }
    }
    Ok((via, hops))
}

/// Traces an L2 source route (`--route`): hop 1 is the router at `via`,
/// hop k + 1 whoever is at the native address of the route's hop k. Each
/// request travels along the route's first hops (L2RHs) to Hey-You, so the
/// node at the end takes it; the HR expected there is the one the previous
/// router believes is at that native address (its Neighbour attribute).
pub fn trace_l2<A: Ask + ?Sized>(
    ask: &mut A,
    via: Address,
    hops: &[String],
    args: &TraceArgs,
) -> Result<Trace, Miss> {
    let own = ask.management()?.addresses;
    let source = own.first().copied().unwrap_or(Address::UNSPECIFIED);
    let mut w = Walker {
        ask,
        timeout_ms: args.timeout_ms,
        retries: args.retries,
    };
    let mut t = Trace {
        source,
        destination: Address::UNSPECIFIED,
        outcome: Outcome::Validated,
        summary: String::new(),
        hops: Vec::new(),
        reverse: None,
        reverse_note: None,
        partition: None,
    };
    let mut fail: Option<String> = None;
    let mut expected: Vec<Address> = Vec::new();
    // Each hop's address as it answered (else as expected).
    let mut reached: Vec<Address> = Vec::new();
    for k in 1..=hops.len() + 1 {
        let at = At::L2 {
            via,
            hops: hops[..k - 1].to_vec(),
        };
        // The HR expected at hop k: `via`, then who the previous router
        // believes is at the native address its hop sends to.
        let e = if k == 1 {
            via
        } else {
            let (egress, native) = hops[k - 2].split_once('@').unwrap_or_default();
            let egress: Address = egress.parse().unwrap_or(Address::UNSPECIFIED);
            let n = rrp::NativeAddr::parse(native).unwrap_or(rrp::NativeAddr::NONE);
            let mut area = vec![0u8; 64];
            let _ = mgmt::attr::Neighbour {
                address: Address::UNSPECIFIED,
                native: n,
            }
            .emit(&mut area);
            let hex: String = area.iter().map(|b| format!("{b:02x}")).collect();
            // The previous router, by the HR it said it was reached on.
            let prev = reached[k - 2];
            match w.get(prev, "subn", "neighbour", u32::from(egress.0), Some(hex)) {
                Ok(a) if a.ok() => a
                    .fields
                    .as_ref()
                    .map_or(Address::UNSPECIFIED, |f| address_field(&f["address"])),
                Ok(_) => Address::UNSPECIFIED,
                Err(Miss::NoAnswer(why)) => {
                    t.outcome = Outcome::Unreachable;
                    fail.get_or_insert(format!("hop {} ({prev}): {why}", k - 1));
                    break;
                }
                Err(e) => return Err(e),
            }
        };
        expected.push(e);
        let mut hop = Hop {
            hop: k,
            node: String::from("?"),
            expected: e,
            actual: None,
            actual_port: None,
            status: "ok",
            rtt_ms: None,
            tries: 0,
        };
        if let Err(why) = w.check_hop(&at, &expected, &mut hop)? {
            t.hops.push(hop);
            t.outcome = Outcome::Unreachable;
            fail.get_or_insert(format!("hop {k}: {why}"));
            break;
        }
        if hop.status == "mismatch" && t.outcome == Outcome::Validated {
            t.outcome = Outcome::Mismatch;
        }
        hop.node = w.name_at(&at);
        if hop.status == "mismatch" {
            fail.get_or_insert(format!(
                "mismatch at hop {k} ({}): arrived on {}, expected {}",
                hop.node,
                hop.actual.map_or("?".into(), |a| a.to_string()),
                if e == Address::UNSPECIFIED {
                    "a node the previous router does not know".to_string()
                } else {
                    e.to_string()
                }
            ));
        }
        t.destination = hop
            .actual
            .filter(|a| *a != Address::UNSPECIFIED)
            .unwrap_or(e);
        reached.push(t.destination);
        if t.destination == Address::UNSPECIFIED {
            // Neither the previous router nor the hop itself says who it is:
            // the route cannot be followed further.
            t.hops.push(hop);
            t.outcome = Outcome::Unreachable;
            fail.get_or_insert(format!("hop {k}: no node there says who it is"));
            break;
        }
        t.hops.push(hop);
    }
    t.summary = match &fail {
        Some(f) => format!("{}: {f}", outcome_word(t.outcome)),
        None => format!(
            "validated: the source route from {source} via {via} in {} hop{} ({})",
            t.hops.len(),
            if t.hops.len() == 1 { "" } else { "s" },
            hops_text(&t.hops)
        ),
    };
    Ok(t)
}

/// Runs a trace (or, with `--watch`, traces until `count` or for ever),
/// printing as `json` and `verbose` say; returns the exit status of the
/// last trace.
pub fn run<A: Ask + ?Sized>(
    ask: &mut A,
    args: &TraceArgs,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<i32, Miss> {
    let route = match &args.route {
        Some(r) => Some(parse_route(r).map_err(|e| Miss::Fatal(ClientError::Other(e)))?),
        None => None,
    };
    let once = |ask: &mut A| match &route {
        Some((via, hops)) => trace_l2(ask, *via, hops, args),
        None => trace(ask, args.dst, args),
    };
    let print = |t: &Trace, out: &mut dyn std::io::Write| {
        let text = if json {
            format!("{}\n", serde_json::to_string_pretty(t).unwrap_or_default())
        } else {
            render(t, args.verbose)
        };
        let _ = out.write_all(text.as_bytes());
    };
    let Some(every) = args.watch else {
        let t = once(ask)?;
        print(&t, out);
        return Ok(t.exit_code());
    };
    let every = Duration::try_from_secs_f64(every)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            Miss::Fatal(ClientError::Other(
                "--watch: a positive number of seconds".into(),
            ))
        })?;
    let t0 = Instant::now();
    let mut last: Option<Shape> = None;
    let mut code;
    let mut n = 0u64;
    loop {
        let started = Instant::now();
        let t = once(ask)?;
        code = t.exit_code();
        let s = shape(&t);
        if last.as_ref() != Some(&s) {
            if !json {
                let _ = write!(out, "[{:8.1} s] ", t0.elapsed().as_secs_f64());
            }
            print(&t, out);
            last = Some(s);
        }
        n += 1;
        if args.count.is_some_and(|c| n >= c) {
            break;
        }
        std::thread::sleep(every.saturating_sub(started.elapsed()));
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_parse() {
        let (via, hops) =
            parse_route("0x0119, 0x011a@127.0.0.1:4001,0x0122@02:00:00:00:01:08").unwrap();
        assert_eq!(via, Address(0x0119));
        assert_eq!(hops, ["0x011a@127.0.0.1:4001", "0x0122@02:00:00:00:01:08"]);
        assert_eq!(parse_route("0x0119").unwrap().1.len(), 0);
        assert!(parse_route("0x0119,x").is_err());
        assert!(parse_route("0x0119,0x011a@nowhere").is_err());
        assert!(parse_route("x").is_err());
        let long = std::iter::once("0x0119".to_string())
            .chain(std::iter::repeat_n("0x011a@127.0.0.1:4001".to_string(), 40))
            .collect::<Vec<_>>()
            .join(",");
        assert!(parse_route(&long).is_err());
    }

    #[test]
    fn source_route_requests() {
        let h = source_route_hex(&[Address(0x0119), Address(0x0121)]);
        assert_eq!(h.len(), 2 * SourceRoute::LEN);
        assert!(h.starts_with("0002000001190121"), "{h}");
    }

    /// One block as a test node answers it: (the address asked, modifier)
    /// and its entries' bits, `None` for status 0x001C.
    type Block = ((Address, u32), Option<Vec<u16>>);

    /// Nodes whose agents answer PartitionTable with these blocks; nothing
    /// else answers.
    struct Tables(Vec<Block>);

    impl Ask for Tables {
        fn ask(&mut self, q: &MadQuery) -> Result<MadAnswer, Miss> {
            let at = q.dst.unwrap_or(Address::UNSPECIFIED);
            let Some((_, entries)) = self.0.iter().find(|(k, _)| *k == (at, q.modifier)) else {
                return Err(Miss::NoAnswer(format!("no answer from {at}")));
            };
            let fields = entries.as_ref().map(|e| {
                let entries: Vec<Value> = e
                    .iter()
                    .map(|v| {
                        let full = if v & 0x8000 != 0 { "full" } else { "limited" };
                        serde_json::json!([format!("{:#06x}", v & 0x7fff), full])
                    })
                    .collect();
                serde_json::json!({ "entries": entries })
            });
            Ok(MadAnswer {
                target: at.to_string(),
                from: at,
                tries: 1,
                rtt_ms: 0,
                class: "subn".into(),
                method: "GetResp".into(),
                status: if fields.is_some() { 0 } else { 0x001C },
                status_text: "invalid value".into(),
                attribute: q.attribute.clone(),
                attribute_id: PartitionTable::ID,
                modifier: q.modifier,
                fields,
                data: None,
                return_path: Vec::new(),
            })
        }

        fn management(&mut self) -> Result<ManagementInfo, Miss> {
            Err(Miss::NoAnswer("not asked".into()))
        }
    }

    #[test]
    fn a_table_is_read_whole_and_what_does_not_answer_is_unknown() {
        use mgmt::partition::{Membership, PartitionKey};
        let (node, router, quiet) = (Address(0x0100), Address(0x0119), Address(0x0108));
        // A full block 0: block 1 is read too.
        let block0: Vec<u16> = (1..=32).map(|k| 0x8000 | k).collect();
        let mut ask = Tables(vec![
            ((node, 0), Some(block0)),
            ((node, 1), Some(vec![0x0030])),
            (
                (router, PartitionTable::modifier(node, 0)),
                Some(vec![0x7fff]),
            ),
            ((quiet, 0), None),
        ]);
        let mut w = Walker {
            ask: &mut ask,
            timeout_ms: 10,
            retries: 0,
        };
        let Read::Entries(t) = w.partition_table(node, Address::UNSPECIFIED) else {
            panic!("read")
        };
        assert_eq!(t.len(), 33);
        assert_eq!(
            t[32],
            (PartitionKey::new(0x30).unwrap(), Membership::Limited)
        );
        // A block that is not full ends the table: one request.
        assert_eq!(
            w.partition_table(router, node),
            Read::Entries(vec![(PartitionKey::DEFAULT, Membership::Limited)])
        );
        assert!(matches!(
            w.partition_table(quiet, Address::UNSPECIFIED),
            Read::Unknown(why) if why.contains("0x001c")
        ));
        assert!(matches!(
            w.partition_table(Address(0x0200), Address::UNSPECIFIED),
            Read::Unknown(why) if why.contains("no answer")
        ));
    }

    #[test]
    fn a_refused_partition_has_its_own_exit_status_on_a_validated_path_only() {
        use mgmt::partition::{Membership, PartitionKey};
        let key = PartitionKey::new(0x10).unwrap();
        let refused = PartitionReport::decide(
            Some(PartitionArg {
                key,
                membership: None,
            }),
            Read::Entries(vec![(key, Membership::Full)]),
            None,
            Read::Entries(vec![(PartitionKey::DEFAULT, Membership::Full)]),
            &Checkers::default(),
        );
        assert!(refused.refused());
        let mut t = Trace {
            source: Address(0x0100),
            destination: Address(0x0108),
            outcome: Outcome::Validated,
            summary: "validated: 0x0100 -> 0x0108 in 1 hop (H8)".into(),
            hops: Vec::new(),
            reverse: None,
            reverse_note: None,
            partition: Some(refused),
        };
        assert_eq!(t.exit_code(), EXIT_PARTITION);
        assert_eq!(
            render(&t, false),
            "validated: 0x0100 -> 0x0108 in 1 hop (H8)\n\
             partition 0x0010 full: refused at the destination (destination not a member): no \
             router on the path, the node's own check drops it\n"
        );
        t.outcome = Outcome::Mismatch;
        assert_eq!(t.exit_code(), EXIT_MISMATCH);
        t.outcome = Outcome::Validated;
        t.partition = None;
        assert_eq!(t.exit_code(), EXIT_VALIDATED);
    }

    #[test]
    fn addresses_in_answers() {
        assert_eq!(address_field(&Value::from("0x0121")), Address(0x0121));
        assert_eq!(address_field(&Value::from(289)), Address(0x0121));
        assert_eq!(address_field(&Value::Null), Address::UNSPECIFIED);
    }
}
