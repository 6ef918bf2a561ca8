//! `mwctl query`: what an operator usually wants of a node (its identity,
//! its ports, their counters, an LRT, a route, the SAN's members and paths)
//! read with as many MADs as it takes and printed as tables, as
//! infiniband-diags' smpquery, perfquery and saquery do (docs/management.md
//! "mwctl"). One function per kind of query.

use std::fmt::Write as _;

use admin::mad::{MadAnswer, MadQuery};
use admin::{Client, ClientError};
use clap::{Args, ValueEnum};
use mgmt::attr::{
    FibBlock, LrtBlock, NodeInfo, PortCounters, PortCountersExtended, PortInfo, RouteEntry,
    lrt_block,
};
use mgmt::wire::MgmtClass;
use rrp::{Address, LinkKind};
use serde_json::Value;

use crate::mad::{MadOptions, ask, render_answer, split_address};
use crate::table::{Table, cell};

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
    /// PortCountersExtended of every port, or of --port (perfquery -x):
    /// the link's bytes and what it lost below the port.
    #[value(alias = "extended")]
    Link,
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
  mwctl query 0x0110 link
  mwctl query 0x0110 routes -p 0 --from 0x0100 --to 0x01ff
  mwctl query --dr 0x0101/127.0.0.1:7001 nodeinfo")]
pub struct QueryArgs {
    /// `[ADDR] WHAT`: the node's address (none with --dr) and what to read:
    /// nodeinfo, portinfo, counters, link, routes, lrt, route.
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
    match what {
        QueryWhat::Nodeinfo => node_info(c, &base),
        QueryWhat::Portinfo => port_info(c, args, &base),
        QueryWhat::Counters => counters(c, args, &base),
        QueryWhat::Link => link(c, args, &base),
        QueryWhat::Routes => routes(c, args, &base),
        QueryWhat::Members => members(c, args, &base),
        QueryWhat::Path => path(c, args, &base),
        QueryWhat::Lrt => lrt(c, args, &base),
        QueryWhat::Route => route(c, args, &base),
    }
}

/// The ports to read: `--port`, or every port the node's NodeInfo counts.
fn ports(c: &mut Client, args: &QueryArgs, base: &MadQuery) -> Result<Vec<u8>, ClientError> {
    if let Some(p) = args.port {
        return Ok(vec![p]);
    }
    let (a, _) = ask(c, &get(base, NodeInfo::ID, 0))?;
    let n = fields(&ok(a)?)["num_ports"].as_u64().unwrap_or(1);
    Ok((0..n.min(255) as u8).collect())
}

/// `query nodeinfo`: NodeInfo and NodeDescription.
fn node_info(c: &mut Client, base: &MadQuery) -> Result<(Value, String), ClientError> {
    let (info, _) = ask(c, &get(base, NodeInfo::ID, 0))?;
    let info = ok(info)?;
    let (desc, _) = ask(c, &get(base, mgmt::attr::NodeDescription::ID, 0))?;
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

/// `query portinfo`: PortInfo of every port (or `--port`), as a table.
fn port_info(
    c: &mut Client,
    args: &QueryArgs,
    base: &MadQuery,
) -> Result<(Value, String), ClientError> {
    let mut rows = Vec::new();
    for p in ports(c, args, base)? {
        let (a, _) = ask(c, &get(base, PortInfo::ID, u32::from(p)))?;
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
            Some(k) => k.name().to_string(),
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

/// `query counters`: PortCounters of every port (or `--port`), and the
/// drops by reason.
fn counters(
    c: &mut Client,
    args: &QueryArgs,
    base: &MadQuery,
) -> Result<(Value, String), ClientError> {
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
    for p in ports(c, args, base)? {
        let (a, _) = ask(c, &get(base, PortCounters::ID, u32::from(p)))?;
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
                    PortCounters::name(i).map_or_else(|| format!("counter{i}"), str::to_string),
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

/// `query link`: PortCountersExtended of every port (or `--port`): the
/// link's bytes, and the packets it lost below the port each way
/// (docs/stats.md "The link's counters").
fn link(c: &mut Client, args: &QueryArgs, base: &MadQuery) -> Result<(Value, String), ClientError> {
    let mut rows = Vec::new();
    let mut t = Table::new(&["port", "rx_bytes", "tx_bytes", "rx_lost", "tx_lost"]);
    t.right = vec![true; t.headers.len()];
    for p in ports(c, args, base)? {
        let (a, _) = ask(c, &get(base, PortCountersExtended::ID, u32::from(p)))?;
        let f = fields(&ok(a)?);
        let e = PortCountersExtended {
            port_select: p,
            counters: f["counters"]
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default(),
        };
        let num = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |n| n.to_string());
        t.row(vec![
            p.to_string(),
            num(e.rx_bytes()),
            num(e.tx_bytes()),
            num(e.rx_lost()),
            num(e.tx_lost()),
        ]);
        let named: serde_json::Map<String, Value> = e
            .counters
            .iter()
            .enumerate()
            .map(|(i, v)| {
                (
                    PortCountersExtended::name(i)
                        .map_or_else(|| format!("counter{i}"), str::to_string),
                    Value::from(*v),
                )
            })
            .collect();
        rows.push(serde_json::json!({"port": p, "counters": named}));
    }
    Ok((Value::Array(rows), t.render()))
}

/// `query routes`: the FIB of `--port` over `--from`..`--to`, by
/// FibBlock: the entries that route somewhere.
fn routes(
    c: &mut Client,
    args: &QueryArgs,
    base: &MadQuery,
) -> Result<(Value, String), ClientError> {
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
        let (a, _) = ask(c, &get(base, FibBlock::ID, FibBlock::modifier(p, block)))?;
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

/// `query members`: the SAN's members from its master's database (SubnAdm
/// NodeRecords), filtered.
fn members(
    c: &mut Client,
    args: &QueryArgs,
    base: &MadQuery,
) -> Result<(Value, String), ClientError> {
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
                base,
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
            Some(m) if m == u64::from(mgmt::attr::node_record::NO_MANAGER) => "-".to_string(),
            Some(m) => mgmt::manager::SmState::from_code(m as u8)
                .map_or_else(|| m.to_string(), |s| s.name().to_string()),
            None => "-".into(),
        };
        t.row(vec![
            cell(&f["address"]),
            cell(&f["description"]),
            f["node_type"].as_u64().map_or_else(
                || cell(&f["node_type"]),
                |t| crate::discover::node_type_name(t).to_string(),
            ),
            f["identity"]
                .as_u64()
                .map_or_else(|| cell(&f["identity"]), |x| format!("{x:#018x}")),
            f["level"].as_u64().map_or_else(
                || cell(&f["level"]),
                |l| crate::discover::level_name(l).to_string(),
            ),
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

/// `query path`: how a member reaches `--dst`, from the SAN's master
/// (SubnAdm PathRecord).
fn path(c: &mut Client, args: &QueryArgs, base: &MadQuery) -> Result<(Value, String), ClientError> {
    let dst = args
        .dst
        .ok_or_else(|| ClientError::Other("path needs --dst".into()))?;
    let data = hex_area(|a| mgmt::attr::PathRecord::request(dst, Address(0)).emit(a))?;
    let q = MadQuery {
        class: Some("subn_adm".into()),
        data: Some(data),
        ..get(base, mgmt::attr::PathRecord::ID, 0)
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

/// `query lrt`: the LRT of `--port`, by LrtBlock.
fn lrt(c: &mut Client, args: &QueryArgs, base: &MadQuery) -> Result<(Value, String), ClientError> {
    let p = args.port.unwrap_or(0);
    let mut entries = Vec::new();
    let mut block = 0u16;
    loop {
        let (a, _) = ask(c, &get(base, LrtBlock::ID, LrtBlock::modifier(p, block)))?;
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

/// `query route`: the route to `--dst` from every ingress port (or
/// `--port`), by RouteEntry.
fn route(
    c: &mut Client,
    args: &QueryArgs,
    base: &MadQuery,
) -> Result<(Value, String), ClientError> {
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
    for p in ports(c, args, base)? {
        let (a, _) = ask(c, &get(base, RouteEntry::ID, RouteEntry::modifier(p, dst)))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct T {
        #[command(subcommand)]
        cmd: Sub,
    }

    #[derive(clap::Subcommand)]
    enum Sub {
        Query(QueryArgs),
    }

    fn query(args: &[&str]) -> Result<(Option<Address>, QueryWhat, QueryArgs), String> {
        use clap::Parser;
        let t = T::try_parse_from(["t", "query"].iter().chain(args)).map_err(|e| e.to_string())?;
        let Sub::Query(q) = t.cmd;
        let (a, w) = q.target()?;
        Ok((a, w, q))
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
}
