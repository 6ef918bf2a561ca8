//! `mwctl mad` and `mwctl query`: in-band management from the box the
//! daemon runs on (docs/management.md "mwctl").
//!
//! `mad` sends one MAD and prints its answer field by field; `query` reads
//! what an operator usually wants of a node (its identity, its ports, their
//! counters, an LRT, a route) with as many MADs as it takes and prints
//! tables, as infiniband-diags' smpquery and perfquery do.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use admin::mad::{DrHop, MadAnswer, MadMethod, MadQuery};
use admin::proto::Command;
use admin::{Client, ClientError};
use clap::{Args, ValueEnum};
use mgmt::attr::{FibBlock, LrtBlock, NodeInfo, PortCounters, PortInfo, RouteEntry, lrt_block};
use mgmt::wire::MgmtClass;
use rrp::{Address, LinkKind};
use serde_json::Value;

use crate::table::{Table, cell};

/// Get or Set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Read the attribute.
    Get,
    /// Write it (the fields given change; the others keep their values).
    Set,
}

/// How MADs are sent: path, key, waits, tries.
#[derive(Debug, Clone, Args)]
pub struct MadOptions {
    /// Go by directed route instead of by address: the hops from this box,
    /// each HR/NATIVE (the HR the MAD leaves by, the next box's native
    /// address), as infiniband-diags' -D.
    #[arg(long, value_name = "HOP,HOP,...")]
    pub dr: Option<String>,
    /// The M_Key to give (hex with 0x, or decimal).
    #[arg(short = 'k', long, value_name = "KEY")]
    pub mkey: Option<String>,
    /// Milliseconds to wait for each try (default 1000).
    #[arg(short = 't', long = "mad-timeout", value_name = "MS")]
    pub mad_timeout: Option<u64>,
    /// Tries after the first (default 2).
    #[arg(short = 'r', long, value_name = "N")]
    pub retries: Option<u32>,
}

/// `mwctl mad`.
#[derive(Debug, Clone, Args)]
#[command(after_help = "\
Examples:
  mwctl mad 0x0110 get node_info
  mwctl mad 0x0110 get port_info -m 1
  mwctl mad 0x0110 set port_info -m 1 port_state=down -k 0x1234
  mwctl mad --dr 0x0101/127.0.0.1:7001 get node_info")]
pub struct MadArgs {
    /// `[ADDR] get|set ATTRIBUTE [FIELD=VALUE ...]`: the node's address
    /// (none with --dr); get or set; the attribute (node_info,
    /// node_description, port_info, port_counters or counters, sm_info,
    /// class_port_info, route_entry, fib_block, lrt_block, or a number such
    /// as 0x0015); for set, the fields to change (port_state=down, cost=5,
    /// mtu=0x400).
    #[arg(value_name = "WORDS", required = true)]
    pub words: Vec<String>,
    /// The attribute modifier (the port for port_info and port_counters;
    /// port << 16 | address or block for route_entry, fib_block, lrt_block).
    #[arg(short = 'm', long, value_name = "N", value_parser = parse_u32)]
    pub modifier: Option<u32>,
    /// The class (subn, subn_dr, perf, trace, or a number); by default
    /// perf for counters, subn_dr on a directed route, subn otherwise.
    #[arg(long)]
    pub class: Option<String>,
    /// The whole attribute area as hex: for set instead of fields, for get
    /// when the attribute says what is asked (source_route).
    #[arg(long, value_name = "HEX")]
    pub data: Option<String>,
    /// Path, key, waits, tries.
    #[command(flatten)]
    pub opts: MadOptions,
}

/// What `mwctl query` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QueryWhat {
    /// NodeInfo and NodeDescription (smpquery nodeinfo, nodedesc).
    #[value(alias = "node")]
    Nodeinfo,
    /// PortInfo of every port, or of --port (smpquery portinfo).
    #[value(alias = "ports")]
    Portinfo,
    /// PortCounters of every port, or of --port (perfquery).
    Counters,
    /// The FIB of --port (default 0) over --from..--to, by FibBlock: the
    /// entries that route somewhere.
    Routes,
    /// The LRT of --port (default 0), by LrtBlock.
    Lrt,
    /// The route to --dst from every ingress port (or --port), by RouteEntry.
    Route,
    /// The SAN's members, from its master manager's database (SubnAdm
    /// NodeRecords; ADDR: the master's HR), as saquery does; only those
    /// with --name, --identity, --type, --level when given.
    Members,
    /// How a member of the SAN reaches --dst, from its master manager
    /// (SubnAdm PathRecord; ADDR: the master's HR): the first HR, Q, MTU.
    Path,
}

/// `mwctl query`.
#[derive(Debug, Clone, Args)]
#[command(after_help = "\
Examples:
  mwctl query 0x0110 nodeinfo
  mwctl query 0x0110 portinfo
  mwctl query 0x0110 counters -p 1
  mwctl query 0x0110 routes -p 0 --from 0x0100 --to 0x01ff
  mwctl query --dr 0x0101/127.0.0.1:7001 nodeinfo")]
pub struct QueryArgs {
    /// `[ADDR] WHAT`: the node's address (none with --dr) and what to read:
    /// nodeinfo, portinfo, counters, routes, lrt, route.
    #[arg(value_name = "WORDS", required = true)]
    pub words: Vec<String>,
    /// Only this port of the node.
    #[arg(short, long, value_name = "N")]
    pub port: Option<u8>,
    /// For route and path: the destination.
    #[arg(long, value_name = "ADDR")]
    pub dst: Option<Address>,
    /// For members: only the member with this name (NodeDescription).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// For members: only the member with this node identity.
    #[arg(long, value_name = "ID", value_parser = parse_u64)]
    pub identity: Option<u64>,
    /// For members: only hosts or only routers.
    #[arg(long = "type", value_name = "host|router", value_parser = parse_node_type)]
    pub node_type: Option<u8>,
    /// For members: only this implementation level (1-4, or A-D).
    #[arg(long, value_name = "LEVEL", value_parser = parse_level)]
    pub level: Option<u8>,
    /// For routes: the first address (default 0x0040).
    #[arg(long, value_name = "ADDR")]
    pub from: Option<Address>,
    /// For routes: the last address (default 0x7fff, the last physical
    /// one).
    #[arg(long, value_name = "ADDR")]
    pub to: Option<Address>,
    /// Path, key, waits, tries.
    #[command(flatten)]
    pub opts: MadOptions,
}

/// The words of `mad` and `query` parsed: the address if given, the rest.
fn split_address<'a>(
    words: &'a [String],
    opts: &MadOptions,
    starts: &[&str],
) -> Result<(Option<Address>, &'a [String]), String> {
    let first = words.first().map(String::as_str).unwrap_or_default();
    let addressed = !starts.iter().any(|w| w.eq_ignore_ascii_case(first));
    match (addressed, &opts.dr) {
        (true, Some(_)) => Err(format!(
            "{first:?}: no address with --dr (the route names the node)"
        )),
        (true, None) => {
            let a = first
                .parse::<Address>()
                .map_err(|e| format!("address {first:?}: {e}"))?;
            Ok((Some(a), &words[1..]))
        }
        (false, Some(_)) => Ok((None, words)),
        (false, None) => Err("which node? give its address, or --dr HOP,HOP,...".into()),
    }
}

impl QueryArgs {
    /// The node's address (None with --dr) and what to read.
    pub fn target(&self) -> Result<(Option<Address>, QueryWhat), String> {
        let names: Vec<String> = QueryWhat::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .flat_map(|p| {
                p.get_name_and_aliases()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (dst, rest) = split_address(&self.words, &self.opts, &names)?;
        let [what] = rest else {
            return Err(format!("one of {} after the address", names.join(", ")));
        };
        let what = QueryWhat::from_str(what, true)
            .map_err(|_| format!("{what:?}: one of {}", names.join(", ")))?;
        Ok((dst, what))
    }
}

fn parse_u64(s: &str) -> Result<u64, String> {
    admin::mad::parse_number(s).ok_or_else(|| format!("not a 64-bit number: {s}"))
}

fn parse_node_type(s: &str) -> Result<u8, String> {
    match s.to_ascii_lowercase().as_str() {
        "host" => Ok(NodeInfo::HOST),
        "router" => Ok(NodeInfo::ROUTER),
        _ => Err(format!("{s:?}: host or router")),
    }
}

fn parse_level(s: &str) -> Result<u8, String> {
    match s.to_ascii_uppercase().as_str() {
        "A" | "1" => Ok(1),
        "B" | "2" => Ok(2),
        "C" | "3" => Ok(3),
        "D" | "4" => Ok(4),
        _ => Err(format!("{s:?}: a level, A-D or 1-4")),
    }
}

impl QueryArgs {
    /// The NodeRecord template and component mask of `members`' filters.
    pub fn member_filter(&self) -> (mgmt::attr::NodeRecord, u16) {
        use mgmt::attr::node_record::component;
        let mut t = mgmt::attr::NodeRecord::default();
        let mut mask = 0;
        if let Some(n) = &self.name {
            t.description = n.clone();
            mask |= component::DESCRIPTION;
        }
        if let Some(i) = self.identity {
            t.identity = i;
            mask |= component::IDENTITY;
        }
        if let Some(k) = self.node_type {
            t.node_type = k;
            mask |= component::NODE_TYPE;
        }
        if let Some(l) = self.level {
            t.level = l;
            mask |= component::LEVEL;
        }
        (t, mask)
    }
}

/// An attribute area as the hex text `MadQuery::data` takes.
fn hex_area(emit: impl FnOnce(&mut [u8]) -> mgmt::Result<()>) -> Result<String, ClientError> {
    let mut area = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
    emit(&mut area).map_err(|e| ClientError::Other(e.to_string()))?;
    Ok(area.iter().map(|b| format!("{b:02x}")).collect())
}

fn parse_u32(s: &str) -> Result<u32, String> {
    admin::mad::parse_number(s)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("not a 32-bit number: {s}"))
}

/// A directed route: `HR/NATIVE,HR/NATIVE,...`.
pub fn parse_hops(hops: &str) -> Result<Vec<DrHop>, String> {
    let mut out = Vec::new();
    for (i, h) in hops.split(',').enumerate() {
        let (hr, native) = h
            .split_once('/')
            .ok_or_else(|| format!("hop {i} {h:?}: HR/NATIVE (0x0101/02:00:00:00:00:02)"))?;
        let hr = hr
            .parse::<Address>()
            .map_err(|e| format!("hop {i}: HR {hr:?}: {e}"))?;
        out.push(DrHop {
            hr,
            native: native.to_string(),
        });
    }
    Ok(out)
}

/// FIELD=VALUE pairs: a value that reads as JSON (a number, true, a
/// quoted string) is that; anything else is text.
pub fn parse_fields(fields: &[String]) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    for f in fields {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| format!("{f:?}: FIELD=VALUE"))?;
        let v = serde_json::from_str::<Value>(v).unwrap_or_else(|_| Value::String(v.to_string()));
        out.insert(k.trim().to_string(), v);
    }
    Ok(out)
}

impl MadOptions {
    fn apply(&self, q: &mut MadQuery) -> Result<(), String> {
        if let Some(h) = &self.dr {
            q.dr = parse_hops(h)?;
        }
        q.mkey.clone_from(&self.mkey);
        q.timeout_ms = self.mad_timeout;
        q.retries = self.retries;
        Ok(())
    }
}

impl MadArgs {
    /// The protocol command.
    pub fn query(&self) -> Result<MadQuery, String> {
        let (dst, rest) = split_address(&self.words, &self.opts, &["get", "set"])?;
        let [method, attribute, fields @ ..] = rest else {
            return Err("get|set and an attribute after the address".into());
        };
        let method =
            MethodArg::from_str(method, true).map_err(|_| format!("{method:?}: get or set"))?;
        let set = parse_fields(fields)?;
        if method == MethodArg::Get && !set.is_empty() {
            return Err("fields go with set".into());
        }
        if !set.is_empty() && self.data.is_some() {
            return Err("fields or --data, not both".into());
        }
        let mut q = MadQuery {
            dst,
            class: self.class.clone(),
            method: match method {
                MethodArg::Get => MadMethod::Get,
                MethodArg::Set => MadMethod::Set,
            },
            attribute: attribute.clone(),
            modifier: self.modifier.unwrap_or(0),
            set,
            data: self.data.clone(),
            ..MadQuery::default()
        };
        self.opts.apply(&mut q)?;
        Ok(q)
    }
}

/// How long the daemon may take to answer `q`: every try, and a margin.
pub fn answer_timeout(q: &MadQuery, base: Option<Duration>) -> Option<Duration> {
    // A Set given fields is a Get and a Set.
    let n = if q.method == MadMethod::Set && !q.set.is_empty() {
        2
    } else {
        1
    };
    let need = Duration::from_millis(q.budget_ms() * n) + Duration::from_secs(5);
    base.map(|b| b.max(need))
}

/// Sends `q` and reads its answer.
pub fn ask(c: &mut Client, q: &MadQuery) -> Result<(MadAnswer, Value), ClientError> {
    let v = c.request(Command::Mad(q.clone()))?;
    let a = serde_json::from_value::<MadAnswer>(v.clone())
        .map_err(|e| ClientError::Other(format!("malformed mad answer: {e}")))?;
    Ok((a, v))
}

/// A `mad` answer for people: a title line, then the fields.
pub fn render_answer(a: &MadAnswer) -> String {
    let mut out = format!(
        "{} {} from {} (modifier {:#x}): {} [{} tr{}, {} ms]\n",
        a.class,
        a.attribute,
        a.from,
        a.modifier,
        if a.ok() {
            "ok".to_string()
        } else {
            format!("status {:#06x}: {}", a.status, a.status_text)
        },
        a.tries,
        if a.tries == 1 { "y" } else { "ies" },
        a.rtt_ms
    );
    match &a.fields {
        Some(Value::Object(m)) if a.attribute_id == PortCounters::ID => {
            let values = m.get("counters").and_then(Value::as_array);
            let _ = writeln!(out, "  port_select  {}", cell(&m["port_select"]));
            for (i, v) in values.into_iter().flatten().enumerate() {
                let name =
                    PortCounters::name(i).map_or_else(|| format!("counter {i}"), str::to_string);
                let _ = writeln!(out, "  {name:24}  {}", cell(v));
            }
        }
        Some(Value::Object(m)) => {
            let width = m.keys().map(String::len).max().unwrap_or(0);
            for (k, v) in m {
                let text = match (k.as_str(), v) {
                    (_, Value::Array(items)) if items.iter().all(Value::is_object) => {
                        let t = crate::table::objects_table(items, &[]).render();
                        let _ = writeln!(out, "  {k}:");
                        for l in t.lines() {
                            let _ = writeln!(out, "    {l}");
                        }
                        continue;
                    }
                    (
                        "mkey"
                        | "sm_key"
                        | "system_image_identity"
                        | "node_identity"
                        | "port_identity",
                        Value::Number(n),
                    ) => n
                        .as_u64()
                        .map_or_else(|| n.to_string(), |x| format!("{x:#018x}")),
                    _ => cell(v),
                };
                let _ = writeln!(out, "  {k:width$}  {text}");
            }
        }
        Some(v) => {
            let _ = writeln!(out, "  {}", cell(v));
        }
        None => {
            if let Some(d) = &a.data {
                let _ = writeln!(out, "  data  {d}");
            }
        }
    }
    if !a.return_path.is_empty() {
        let hops: Vec<String> = a
            .return_path
            .iter()
            .map(|h| format!("{}/{}", h.hr, h.native))
            .collect();
        let _ = writeln!(out, "  return path  {}", hops.join(", "));
    }
    out
}

/// The query for attribute `attribute` (modifier `modifier`) of the target.
fn get(base: &MadQuery, attribute: u16, modifier: u32) -> MadQuery {
    MadQuery {
        attribute: format!("{attribute:#06x}"),
        modifier,
        ..base.clone()
    }
}

/// Fails with the status of an answer that is not ok.
fn ok(a: MadAnswer) -> Result<MadAnswer, ClientError> {
    if a.ok() {
        Ok(a)
    } else {
        Err(ClientError::Other(format!(
            "{} from {}: status {:#06x}: {}",
            a.attribute, a.from, a.status, a.status_text
        )))
    }
}

fn fields(a: &MadAnswer) -> Value {
    a.fields.clone().unwrap_or(Value::Null)
}

/// Runs `mwctl query`: the answers' fields (for `--json`) and the text.
pub fn query(c: &mut Client, args: &QueryArgs) -> Result<(Value, String), ClientError> {
    let (dst, what) = args.target().map_err(ClientError::Other)?;
    let mut base = MadQuery {
        dst,
        ..MadQuery::default()
    };
    args.opts.apply(&mut base).map_err(ClientError::Other)?;
    let ports = |c: &mut Client| -> Result<Vec<u8>, ClientError> {
        if let Some(p) = args.port {
            return Ok(vec![p]);
        }
        let (a, _) = ask(c, &get(&base, NodeInfo::ID, 0))?;
        let n = fields(&ok(a)?)["num_ports"].as_u64().unwrap_or(1);
        Ok((0..n.min(255) as u8).collect())
    };
    match what {
        QueryWhat::Nodeinfo => {
            let (info, _) = ask(c, &get(&base, NodeInfo::ID, 0))?;
            let info = ok(info)?;
            let (desc, _) = ask(c, &get(&base, mgmt::attr::NodeDescription::ID, 0))?;
            let desc = ok(desc)?;
            let mut text = format!("node {} \"{}\"\n", info.from, cell(&fields(&desc)));
            text.push_str(
                render_answer(&info)
                    .split_once('\n')
                    .map_or("", |(_, rest)| rest),
            );
            Ok((
                serde_json::json!({"node_info": fields(&info), "node_description": fields(&desc)}),
                text,
            ))
        }
        QueryWhat::Portinfo => {
            let mut rows = Vec::new();
            for p in ports(c)? {
                let (a, _) = ask(c, &get(&base, PortInfo::ID, u32::from(p)))?;
                rows.push(fields(&ok(a)?));
            }
            let mut t = Table::new(&[
                "port",
                "address",
                "san",
                "state",
                "mtu",
                "cost",
                "link",
                "native",
                "lrt",
                "buddies",
                "protect",
                "violations",
            ]);
            for r in &rows {
                let state = match r["port_state"].as_u64() {
                    Some(s) if s == u64::from(PortInfo::ACTIVE) => "up".to_string(),
                    Some(s) if s == u64::from(PortInfo::DOWN) => "down".to_string(),
                    _ => cell(&r["port_state"]),
                };
                let kind = match r["link_kind"].as_u64() {
                    Some(0) => Some(LinkKind::Memory),
                    Some(1) => Some(LinkKind::Udp),
                    Some(2) => Some(LinkKind::Ethernet),
                    _ => None,
                };
                let link = match kind {
                    Some(LinkKind::Memory) => "memory".to_string(),
                    Some(LinkKind::Udp) => "udp".to_string(),
                    Some(LinkKind::Ethernet) => "ethernet".to_string(),
                    None => cell(&r["link_kind"]),
                };
                // The native address as its link writes it (an endpoint on UDP).
                let native = match (kind, r["native"].as_str()) {
                    (Some(k), Some(text)) => rrp::NativeAddr::parse(text)
                        .map_or_else(|_| text.to_string(), |n| n.on(k).to_string()),
                    _ => cell(&r["native"]),
                };
                t.row(vec![
                    cell(&r["local_port_num"]),
                    cell(&r["address"]),
                    cell(&r["san_id"]),
                    state,
                    cell(&r["mtu"]),
                    cell(&r["cost"]),
                    link,
                    native,
                    cell(&r["lrt_entries"]),
                    cell(&r["buddies"]),
                    cell(&r["mkey_protect_bits"]),
                    cell(&r["mkey_violations"]),
                ]);
            }
            Ok((Value::Array(rows), t.render()))
        }
        QueryWhat::Counters => {
            let mut rows = Vec::new();
            let mut t = Table::new(&[
                "port",
                "received",
                "forwarded",
                "punted",
                "transmitted",
                "injected",
                "dropped",
            ]);
            t.right = vec![true; t.headers.len()];
            let mut drops = String::new();
            for p in ports(c)? {
                let (a, _) = ask(c, &get(&base, PortCounters::ID, u32::from(p)))?;
                let f = fields(&ok(a)?);
                let values: Vec<u64> = f["counters"]
                    .as_array()
                    .map(|v| v.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_default();
                let at = |name: &str| {
                    PortCounters::NAMES
                        .iter()
                        .position(|n| *n == name)
                        .and_then(|i| values.get(i).copied())
                        .unwrap_or(0)
                };
                let dropped: u64 = values.iter().skip(PortCounters::FIRST_DROP).sum();
                t.row(vec![
                    p.to_string(),
                    at("received").to_string(),
                    at("forwarded").to_string(),
                    at("punted").to_string(),
                    at("transmitted").to_string(),
                    at("injected").to_string(),
                    dropped.to_string(),
                ]);
                for (i, v) in values.iter().enumerate().skip(PortCounters::FIRST_DROP) {
                    if *v > 0 {
                        let name = PortCounters::name(i).unwrap_or("dropped.?");
                        let _ = writeln!(drops, "port {p} {name}: {v}");
                    }
                }
                let named: serde_json::Map<String, Value> = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        (
                            PortCounters::name(i)
                                .map_or_else(|| format!("counter{i}"), str::to_string),
                            Value::from(*v),
                        )
                    })
                    .collect();
                rows.push(serde_json::json!({"port": p, "counters": named}));
            }
            let mut text = t.render();
            if !drops.is_empty() {
                text.push('\n');
                text.push_str(&drops);
            }
            Ok((Value::Array(rows), text))
        }
        QueryWhat::Routes => {
            let p = args.port.unwrap_or(0);
            let from = args.from.unwrap_or(Address(0x0040));
            let to = args.to.unwrap_or(Address(0x7fff));
            if from > to {
                return Err(ClientError::Other(format!(
                    "--from {from} is past --to {to}"
                )));
            }
            let (first, _) = FibBlock::block_of(from);
            let (last, _) = FibBlock::block_of(to);
            let mut rows = Vec::new();
            let mut t = Table::new(&["destination", "kind", "egress", "q"]);
            for block in first..=last {
                let (a, _) = ask(c, &get(&base, FibBlock::ID, FibBlock::modifier(p, block)))?;
                let f = fields(&ok(a)?);
                let Some(base_addr) = FibBlock::first_address(block) else {
                    break;
                };
                for (i, e) in f["entries"].as_array().into_iter().flatten().enumerate() {
                    let dst = Address(base_addr.0 + i as u16);
                    let kind = e["kind"].as_u64().unwrap_or(0);
                    if dst < from || dst > to || kind == u64::from(RouteEntry::NONE) {
                        continue;
                    }
                    let kind_text = mgmt::attr::route_entry::kind_name(kind as u8)
                        .map_or_else(|| kind.to_string(), str::to_string);
                    t.row(vec![
                        dst.to_string(),
                        kind_text,
                        cell(&e["egress_port"]),
                        cell(&e["q"]),
                    ]);
                    rows.push(serde_json::json!({
                        "destination": dst,
                        "kind": kind,
                        "egress_port": e["egress_port"],
                        "q": e["q"],
                    }));
                }
            }
            Ok((
                Value::Array(rows),
                format!(
                    "port {p}: {} destinations routed in {from}..{to}\n{}",
                    t.rows.len(),
                    t.render()
                ),
            ))
        }
        QueryWhat::Members => {
            let mut rows = Vec::new();
            let mut t = Table::new(&[
                "address", "name", "type", "identity", "level", "ports", "manager",
            ]);
            let (template, mask) = args.member_filter();
            let data = hex_area(|a| template.emit(a))?;
            let mut i = 0u16;
            loop {
                let q = MadQuery {
                    class: Some("subn_adm".into()),
                    data: Some(data.clone()),
                    ..get(
                        &base,
                        mgmt::attr::NodeRecord::ID,
                        mgmt::attr::node_record::query(mask, i),
                    )
                };
                let (a, _) = ask(c, &q)?;
                if !a.ok() {
                    if i == 0 && a.status != mgmt::wire::Status::SA_NO_RECORDS.0 {
                        ok(a)?;
                    }
                    break;
                }
                let f = fields(&a);
                let total = f["total"].as_u64().unwrap_or(0);
                let manager = match f["manager"].as_u64() {
                    Some(m) if m == u64::from(mgmt::attr::node_record::NO_MANAGER) => {
                        "-".to_string()
                    }
                    Some(m) => mgmt::manager::SmState::from_u8(m as u8)
                        .map_or_else(|| m.to_string(), |s| s.name().to_string()),
                    None => "-".into(),
                };
                t.row(vec![
                    cell(&f["address"]),
                    cell(&f["description"]),
                    match f["node_type"].as_u64() {
                        Some(1) => "host".into(),
                        Some(3) => "router".into(),
                        _ => cell(&f["node_type"]),
                    },
                    f["identity"]
                        .as_u64()
                        .map_or_else(|| cell(&f["identity"]), |x| format!("{x:#018x}")),
                    cell(&f["level"]),
                    cell(&f["num_ports"]),
                    manager,
                ]);
                rows.push(f);
                i = i.saturating_add(1);
                if u64::from(i) >= total || i == u16::MAX {
                    break;
                }
            }
            Ok((
                Value::Array(rows),
                format!("{} members\n{}", t.rows.len(), t.render()),
            ))
        }
        QueryWhat::Path => {
            let dst = args
                .dst
                .ok_or_else(|| ClientError::Other("path needs --dst".into()))?;
            let data = hex_area(|a| mgmt::attr::PathRecord::request(dst, Address(0)).emit(a))?;
            let q = MadQuery {
                class: Some("subn_adm".into()),
                data: Some(data),
                ..get(&base, mgmt::attr::PathRecord::ID, 0)
            };
            let (a, _) = ask(c, &q)?;
            if a.status == mgmt::wire::Status::SA_NO_RECORDS.0 {
                return Err(ClientError::Other(format!(
                    "{}: the SAN's manager knows no path to {dst}",
                    a.from
                )));
            }
            let f = fields(&ok(a)?);
            let kind = f["kind"]
                .as_u64()
                .and_then(|k| mgmt::attr::path_record::kind_name(k as u8))
                .unwrap_or("?");
            let text = format!(
                "path to {dst}: {kind}, first hr {} at {}, q {}, mtu {}\n",
                cell(&f["first_hr"]),
                cell(&f["native"]),
                cell(&f["q"]),
                cell(&f["mtu"]),
            );
            Ok((f, text))
        }
        QueryWhat::Lrt => {
            let p = args.port.unwrap_or(0);
            let mut entries = Vec::new();
            let mut block = 0u16;
            loop {
                let (a, _) = ask(c, &get(&base, LrtBlock::ID, LrtBlock::modifier(p, block)))?;
                let f = fields(&ok(a)?);
                let total = f["total"].as_u64().unwrap_or(0);
                let got = f["entries"].as_array().cloned().unwrap_or_default();
                let n = got.len();
                entries.extend(got);
                block += 1;
                if n < lrt_block::ENTRIES || entries.len() as u64 >= total || block == u16::MAX {
                    break;
                }
            }
            let mut t = Table::new(&["address", "router", "static", "missed"]);
            for e in &entries {
                let flags = e["flags"].as_u64().unwrap_or(0);
                t.row(vec![
                    cell(&e["address"]),
                    cell(&Value::Bool(
                        flags & u64::from(mgmt::attr::LrtBlockEntry::ROUTER) != 0,
                    )),
                    cell(&Value::Bool(
                        flags & u64::from(mgmt::attr::LrtBlockEntry::STATIC) != 0,
                    )),
                    cell(&e["keepalives_missed"]),
                ]);
            }
            Ok((
                Value::Array(entries),
                format!("port {p}: {} entries\n{}", t.rows.len(), t.render()),
            ))
        }
        QueryWhat::Route => {
            let dst = args
                .dst
                .ok_or_else(|| ClientError::Other("route needs --dst".into()))?;
            let mut rows = Vec::new();
            let mut t = Table::new(&[
                "port",
                "kind",
                "egress",
                "egress_hr",
                "native",
                "q",
                "mtu",
                "first_hr",
            ]);
            for p in ports(c)? {
                let (a, _) = ask(c, &get(&base, RouteEntry::ID, RouteEntry::modifier(p, dst)))?;
                let f = fields(&ok(a)?);
                let kind = f["kind"]
                    .as_u64()
                    .and_then(|k| mgmt::attr::route_entry::kind_name(k as u8));
                t.row(vec![
                    p.to_string(),
                    kind.map_or_else(|| cell(&f["kind"]), str::to_string),
                    cell(&f["egress_port"]),
                    cell(&f["egress_address"]),
                    cell(&f["native"]),
                    cell(&f["q"]),
                    cell(&f["mtu"]),
                    cell(&f["first_hr"]),
                ]);
                rows.push(serde_json::json!({"port": p, "route_entry": f}));
            }
            Ok((
                Value::Array(rows),
                format!("route to {dst}\n{}", t.render()),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(clap::Parser)]
    struct T {
        #[command(subcommand)]
        cmd: Sub,
    }

    #[derive(clap::Subcommand)]
    enum Sub {
        Mad(MadArgs),
        Query(QueryArgs),
    }

    fn mad(args: &[&str]) -> Result<MadQuery, String> {
        use clap::Parser;
        let t = T::try_parse_from(["t", "mad"].iter().chain(args)).map_err(|e| e.to_string())?;
        let Sub::Mad(m) = t.cmd else { unreachable!() };
        m.query()
    }

    fn query(args: &[&str]) -> Result<(Option<Address>, QueryWhat, QueryArgs), String> {
        use clap::Parser;
        let t = T::try_parse_from(["t", "query"].iter().chain(args)).map_err(|e| e.to_string())?;
        let Sub::Query(q) = t.cmd else { unreachable!() };
        let (a, w) = q.target()?;
        Ok((a, w, q))
    }

    #[test]
    fn mad_words() {
        let q = mad(&[
            "0x0241",
            "get",
            "port_info",
            "-m",
            "1",
            "-t",
            "300",
            "-r",
            "4",
        ])
        .unwrap();
        assert_eq!(q.dst, Some(Address(0x0241)));
        assert_eq!(q.method, MadMethod::Get);
        assert_eq!(q.attribute, "port_info");
        assert_eq!(q.modifier, 1);
        assert_eq!(q.timeout_ms, Some(300));
        assert_eq!(q.retries, Some(4));
        let q = mad(&[
            "0x0241",
            "set",
            "port_info",
            "port_state=down",
            "--mkey",
            "0x12",
        ])
        .unwrap();
        assert_eq!(q.method, MadMethod::Set);
        assert_eq!(q.set["port_state"], json!("down"));
        assert_eq!(q.mkey.as_deref(), Some("0x12"));
        let q = mad(&[
            "get",
            "node_info",
            "--dr",
            "0x0101/127.0.0.1:7000,0x0240/02:00:00:00:00:02",
        ])
        .unwrap();
        assert_eq!(q.dst, None);
        assert_eq!(q.dr.len(), 2);
        assert_eq!(q.dr[1].hr, Address(0x0240));
        assert_eq!(q.dr[1].native, "02:00:00:00:00:02");
        // Refused: no node, both, get with fields, a bad hop, a bad method.
        assert!(
            mad(&["get", "node_info"])
                .unwrap_err()
                .contains("which node")
        );
        assert!(mad(&["0x0241", "get", "node_info", "--dr", "0x0101/a"]).is_err());
        assert!(mad(&["0x0241", "get", "port_info", "cost=3"]).is_err());
        assert!(mad(&["get", "node_info", "--dr", "0x0101"]).is_err());
        assert!(mad(&["0x0241", "put", "node_info"]).is_err());
        assert!(mad(&["nowhere", "get", "node_info"]).is_err());
    }

    #[test]
    fn query_words() {
        let (a, w, q) = query(&["0x0110", "portinfo", "-p", "2"]).unwrap();
        assert_eq!(
            (a, w, q.port),
            (Some(Address(0x0110)), QueryWhat::Portinfo, Some(2))
        );
        let (a, w, _) = query(&["counters", "--dr", "0x0101/127.0.0.1:7000"]).unwrap();
        assert_eq!((a, w), (None, QueryWhat::Counters));
        let (_, w, q) = query(&["0x0110", "routes", "--from", "0x0100", "--to", "0x01ff"]).unwrap();
        assert_eq!(w, QueryWhat::Routes);
        assert_eq!(
            (q.from, q.to),
            (Some(Address(0x0100)), Some(Address(0x01ff)))
        );
        assert_eq!(query(&["0x0110", "node"]).unwrap().1, QueryWhat::Nodeinfo);
        assert!(query(&["0x0110", "everything"]).is_err());
        assert!(query(&["nodeinfo"]).is_err());
    }

    #[test]
    fn fields() {
        let f = parse_fields(&[
            "cost=5".into(),
            "port_state=down".into(),
            "text=\"a b\"".into(),
        ])
        .unwrap();
        assert_eq!(f["cost"], json!(5));
        assert_eq!(f["port_state"], json!("down"));
        assert_eq!(f["text"], json!("a b"));
        assert!(parse_fields(&["cost".into()]).is_err());
    }
}
