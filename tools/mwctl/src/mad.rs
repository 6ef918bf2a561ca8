//! `mwctl mad`: in-band management from the box the daemon runs on
//! (docs/management.md "mwctl"): one MAD sent, its answer printed field by
//! field. `mwctl query` ([`crate::query`]) reads a node with the same
//! options and requests.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use admin::mad::{DrHop, MadAnswer, MadMethod, MadQuery};
use admin::proto::Command;
use admin::{Client, ClientError};
use clap::{Args, ValueEnum};
use mgmt::attr::{PartitionTable, PortCounters, PortCountersExtended};
use rrp::Address;
use serde_json::Value;

use crate::table::cell;

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
    /// node_description, port_info, port_counters or counters,
    /// port_counters_extended or link_counters, sm_info, class_port_info,
    /// route_entry, fib_block, lrt_block, partition_table, or a number such
    /// as 0x0015); for set, the fields to change (port_state=down, cost=5,
    /// mtu=0x400, entries='[["0x7fff","full"]]').
    #[arg(value_name = "WORDS", required = true)]
    pub words: Vec<String>,
    /// The attribute modifier (the port for port_info and the counters;
    /// port << 16 | address or block for route_entry, fib_block, lrt_block;
    /// the block, 0 or 1, for partition_table).
    #[arg(short = 'm', long, value_name = "N", value_parser = parse_u32)]
    pub modifier: Option<u32>,
    /// The class (subn, subn_dr, perf, trace, or a number); by default
    /// perf for the counters, subn_dr on a directed route, subn otherwise.
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

/// The words of `mad` and `query` parsed: the address if given, the rest.
pub(crate) fn split_address<'a>(
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
    pub(crate) fn apply(&self, q: &mut MadQuery) -> Result<(), String> {
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
        Some(Value::Object(m))
            if a.attribute_id == PortCounters::ID || a.attribute_id == PortCountersExtended::ID =>
        {
            let values = m.get("counters").and_then(Value::as_array);
            let _ = writeln!(out, "  port_select  {}", cell(&m["port_select"]));
            for (i, v) in values.into_iter().flatten().enumerate() {
                let name = if a.attribute_id == PortCounters::ID {
                    PortCounters::name(i)
                } else {
                    PortCountersExtended::name(i)
                };
                let name = name.map_or_else(|| format!("counter {i}"), str::to_string);
                let _ = writeln!(out, "  {name:24}  {}", cell(v));
            }
        }
        Some(Value::Object(m)) => {
            let width = m.keys().map(String::len).max().unwrap_or(0);
            for (k, v) in m {
                let text = match (k.as_str(), v) {
                    // PartitionTable's entries: `0x7fff full, 0x0010 limited`.
                    ("entries", Value::Array(items))
                        if a.attribute_id == PartitionTable::ID && !items.is_empty() =>
                    {
                        items.iter().map(cell).collect::<Vec<_>>().join(", ")
                    }
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
    }

    fn mad(args: &[&str]) -> Result<MadQuery, String> {
        use clap::Parser;
        let t = T::try_parse_from(["t", "mad"].iter().chain(args)).map_err(|e| e.to_string())?;
        let Sub::Mad(m) = t.cmd;
        m.query()
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

    #[test]
    fn a_partition_table_prints_its_entries() {
        let a = MadAnswer {
            target: "0x0140".into(),
            from: Address(0x0140),
            tries: 1,
            rtt_ms: 1,
            class: "Subn".into(),
            method: "GetResp".into(),
            status: 0,
            status_text: "ok".into(),
            attribute: "PartitionTable".into(),
            attribute_id: PartitionTable::ID,
            modifier: 0,
            fields: Some(json!({"entries": [["0x7fff", "full"], ["0x0010", "limited"]]})),
            data: None,
            return_path: Vec::new(),
        };
        let text = render_answer(&a);
        assert!(
            text.contains("  entries  0x7fff full, 0x0010 limited\n"),
            "{text}"
        );
        let f = parse_fields(&[r#"entries=[["0x7fff","full"]]"#.into()]).unwrap();
        assert_eq!(f["entries"], json!([["0x7fff", "full"]]));
    }
}
