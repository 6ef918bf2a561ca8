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
use mgmt::attr::{LrtBlock, NodeInfo, PortCounters, PortInfo, RouteEntry, lrt_block};
use rrp::Address;
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

/// How MADs are sent: key, waits, tries.
#[derive(Debug, Clone, Args)]
pub struct MadOptions {
    /// The M_Key to give (hex with 0x, or decimal).
    #[arg(short = 'k', long, value_name = "KEY")]
    pub mkey: Option<String>,
    /// Milliseconds to wait for each try (default 1000).
    #[arg(long = "mad-timeout", value_name = "MS")]
    pub mad_timeout: Option<u64>,
    /// Tries after the first (default 2).
    #[arg(short = 'r', long, value_name = "N")]
    pub retries: Option<u32>,
}

/// `mwctl mad`.
#[derive(Debug, Clone, Args)]
pub struct MadArgs {
    /// get or set.
    pub method: MethodArg,
    /// The attribute: node_info, node_description, port_info,
    /// port_counters (counters), sm_info, class_port_info, route_entry,
    /// fib_block, lrt_block, or a number (0x0015).
    pub attribute: String,
    /// The node: its address (0x0241), or a directed route from this box,
    /// `dr:HR/NATIVE,HR/NATIVE,...` (each hop: the HR it leaves by, the next
    /// node's native address).
    pub target: String,
    /// For set: the fields to change, FIELD=VALUE (port_state=down,
    /// cost=5, mtu=0x400).
    #[arg(value_name = "FIELD=VALUE")]
    pub fields: Vec<String>,
    /// The attribute modifier (the port for port_info and port_counters;
    /// port << 16 | address or block for route_entry, fib_block, lrt_block).
    #[arg(short = 'm', long, value_name = "N", value_parser = parse_u32)]
    pub modifier: Option<u32>,
    /// The class (subn, subn_dr, perf, trace, or a number); by default
    /// perf for counters, subn_dr on a directed route, subn otherwise.
    #[arg(long)]
    pub class: Option<String>,
    /// For set: the whole attribute area as hex instead of fields.
    #[arg(long, value_name = "HEX", conflicts_with = "fields")]
    pub data: Option<String>,
    /// Key, waits, tries.
    #[command(flatten)]
    pub opts: MadOptions,
}

/// What `mwctl query` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QueryWhat {
    /// NodeInfo and NodeDescription.
    Node,
    /// PortInfo of every port (or of --port).
    Ports,
    /// PortCounters of every port (or of --port).
    Counters,
    /// The LRT of --port (default 0), by LrtBlock.
    Lrt,
    /// The route to --dst from every ingress port (or --port), by RouteEntry.
    Route,
}

/// `mwctl query`.
#[derive(Debug, Clone, Args)]
pub struct QueryArgs {
    /// What to read.
    pub what: QueryWhat,
    /// The node: its address, or `dr:HR/NATIVE,...`.
    pub target: String,
    /// Only this port of the node.
    #[arg(short, long, value_name = "N")]
    pub port: Option<u8>,
    /// For route: the destination.
    #[arg(long, value_name = "ADDR", required_if_eq("what", "route"))]
    pub dst: Option<Address>,
    /// Key, waits, tries.
    #[command(flatten)]
    pub opts: MadOptions,
}

fn parse_u32(s: &str) -> Result<u32, String> {
    admin::mad::parse_number(s)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("not a 32-bit number: {s}"))
}

/// A target: an address, or `dr:` and hops.
pub fn parse_target(s: &str) -> Result<(Option<Address>, Vec<DrHop>), String> {
    let Some(hops) = s.strip_prefix("dr:") else {
        let a = s
            .parse::<Address>()
            .map_err(|e| format!("target {s:?}: {e} (an address, or dr:HR/NATIVE,...)"))?;
        return Ok((Some(a), Vec::new()));
    };
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
    Ok((None, out))
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
    fn apply(&self, q: &mut MadQuery) {
        q.mkey.clone_from(&self.mkey);
        q.timeout_ms = self.mad_timeout;
        q.retries = self.retries;
    }
}

impl MadArgs {
    /// The protocol command.
    pub fn query(&self) -> Result<MadQuery, String> {
        let (dst, dr) = parse_target(&self.target)?;
        let set = parse_fields(&self.fields)?;
        if self.method == MethodArg::Get && (!set.is_empty() || self.data.is_some()) {
            return Err("fields and --data go with set".into());
        }
        let mut q = MadQuery {
            dst,
            dr,
            class: self.class.clone(),
            method: match self.method {
                MethodArg::Get => MadMethod::Get,
                MethodArg::Set => MadMethod::Set,
            },
            attribute: self.attribute.clone(),
            modifier: self.modifier.unwrap_or(0),
            set,
            data: self.data.clone(),
            ..MadQuery::default()
        };
        self.opts.apply(&mut q);
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
    let (dst, dr) = parse_target(&args.target).map_err(ClientError::Other)?;
    let mut base = MadQuery {
        dst,
        dr,
        ..MadQuery::default()
    };
    args.opts.apply(&mut base);
    let ports = |c: &mut Client| -> Result<Vec<u8>, ClientError> {
        if let Some(p) = args.port {
            return Ok(vec![p]);
        }
        let (a, _) = ask(c, &get(&base, NodeInfo::ID, 0))?;
        let n = fields(&ok(a)?)["num_ports"].as_u64().unwrap_or(1);
        Ok((0..n.min(255) as u8).collect())
    };
    match args.what {
        QueryWhat::Node => {
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
        QueryWhat::Ports => {
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
                let link = match r["link_kind"].as_u64() {
                    Some(0) => "memory".to_string(),
                    Some(1) => "udp".to_string(),
                    Some(2) => "ethernet".to_string(),
                    _ => cell(&r["link_kind"]),
                };
                t.row(vec![
                    cell(&r["local_port_num"]),
                    cell(&r["address"]),
                    cell(&r["san_id"]),
                    state,
                    cell(&r["mtu"]),
                    cell(&r["cost"]),
                    link,
                    cell(&r["native"]),
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

    #[test]
    fn targets() {
        assert_eq!(
            parse_target("0x0241").unwrap(),
            (Some(Address(0x0241)), vec![])
        );
        let (d, hops) = parse_target("dr:0x0101/02:00:00:00:00:02,0x0240/127.0.0.1:7000").unwrap();
        assert_eq!(d, None);
        assert_eq!(hops.len(), 2);
        assert_eq!(hops[1].hr, Address(0x0240));
        assert_eq!(hops[1].native, "127.0.0.1:7000");
        assert!(parse_target("dr:0x0101").is_err());
        assert!(parse_target("nowhere").is_err());
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
