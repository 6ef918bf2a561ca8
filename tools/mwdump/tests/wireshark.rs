//! The Wireshark dissector tools/wireshark/mwrouter.lua, run by tshark, agrees
//! with mwdump's JSON field by field: on examples/sample.pcap and on captures
//! written here (LINKTYPE_USER0, Ethernet, UDP/IPv4) with user data, router
//! hops, RRP messages, ERR messages and management datagrams; and malformed
//! packets give an expert info, never a Lua error.
//!
//! Every `mw.*` field tshark shows must be in [`FIELDS`] (checked against
//! mwdump's JSON), in [`STRUCTURE`] (subtree headers) or in [`UNCHECKED`].
//! Skipped, with `testkit::skip`, when tshark is not installed.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use common::*;
use serde_json::Value;

use mgmt::wire::{MadRepr, Method, MgmtClass, mad_packet};
use mwdump::capture::PcapWriter;
use rrp::wire::{
    Capability, HeaderRepr, InfoQuery, L2rhRepr, Message, Mtu, NodeInfo, PacketRepr, RouteTable,
    RouterHop, RtNode, SourceRoute,
};
use rrp::{Address, Endian, NativeAddr, PacketType, SwapWidth};

const LINKTYPE_ETHERNET: u32 = 1;
const LINKTYPE_USER0: u32 = 147;

/// How a field's values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An integer (tshark: decimal or `0x` hex).
    Num,
    /// A boolean (tshark: `1`/`0` or `True`/`False`).
    Bool,
    /// A string, exactly.
    Str,
    /// Bytes (tshark: `aa:bb`; mwdump: hex text or an array of numbers);
    /// empty ones are not shown.
    Hex,
    /// Bytes of which mwdump shows only a prefix (64 bytes).
    HexPrefix,
    /// A MAC address.
    Mac,
}

use Kind::*;

/// tshark field, how to compare, and where its values are in mwdump's JSON
/// object of the same frame (in wire order; see [`extract`] for the paths).
const FIELDS: &[(&str, Kind, &[&str])] = &[
    ("mw.kind", Str, &["kind"]),
    ("mw.packet_len", Num, &["packet_len"]),
    ("mw.padding_len", Num, &["padding_len"]),
    ("mw.data_len", Num, &["data_len"]),
    ("mw.data", HexPrefix, &["data_hex"]),
    ("mw.ei", Num, &["ei"]),
    // Leading L2RHs.
    ("mw.l2rh.len", Num, &["l2rhs[].len"]),
    ("mw.l2rh.words", Num, &["l2rhs[].words"]),
    ("mw.l2rh.content", Hex, &["l2rhs[].content_hex"]),
    ("mw.l2rh.egress", Num, &["l2rhs[].hop.egress"]),
    ("mw.l2rh.native_len", Num, &["l2rhs[].hop.native_len"]),
    ("mw.l2rh.native", Hex, &["l2rhs[].hop.native_hex"]),
    ("mw.l2rh.mac", Mac, &["l2rhs[].hop.mac"]),
    ("mw.l2rh.udp", Str, &["l2rhs[].hop.udp"]),
    ("mw.l2rh.native_only", Bool, &["l2rhs[].hop.native_only"]),
    ("mw.l2rh.egress_only", Bool, &["l2rhs[].hop.egress_only"]),
    // EEP header.
    ("mw.dst", Num, &["header.dst"]),
    ("mw.dst_class", Str, &["header.dst_class"]),
    ("mw.priority", Num, &["header.priority"]),
    ("mw.version", Num, &["header.version"]),
    ("mw.pt", Num, &["header.packet_type"]),
    ("mw.pt_class", Str, &["header.packet_class"]),
    ("mw.te", Num, &["header.type_ext"]),
    ("mw.te_name", Str, &["header.type_name"]),
    ("mw.e", Num, &["header.e"]),
    ("mw.e.little_endian", Bool, &["header.little_endian"]),
    ("mw.e.swap_bits", Num, &["header.swap_bits"]),
    ("mw.pl", Num, &["header.pad_len"]),
    ("mw.dl", Num, &["header.data_words"]),
    ("mw.src", Num, &["header.src"]),
    ("mw.src_class", Str, &["header.src_class"]),
    ("mw.free", Num, &["header.free"]),
    // RRP and ERR messages.
    ("mw.rrp.description", Str, &["message.description"]),
    ("mw.rrp.rtyp", Num, &["message.records[].rtyp"]),
    ("mw.rrp.type", Str, &["message.records[].type"]),
    ("mw.rrp.pl", Num, &["message.records[].pl"]),
    ("mw.rrp.rl", Num, &["message.records[].rl"]),
    ("mw.rrp.role", Str, &["message.records[].role"]),
    ("mw.rrp.node", Num, &["message.records[].node"]),
    ("mw.rrp.address", Num, &["message.records[].address"]),
    (
        "mw.rrp.address_class",
        Str,
        &["message.records[].address_class"],
    ),
    ("mw.rrp.name", Str, &["message.records[].name"]),
    ("mw.rrp.name_bytes", Hex, &["message.records[].name_hex"]),
    ("mw.rrp.cc", Num, &["message.records[].code"]),
    ("mw.rrp.cc_name", Str, &["message.records[].code_name"]),
    ("mw.rrp.params", Hex, &["message.records[].params"]),
    (
        "mw.rrp.logical",
        Num,
        &["message.records[type=R4].addresses[]"],
    ),
    (
        "mw.rrp.rcvf",
        Num,
        &["message.records[type=R7].addresses[]"],
    ),
    ("mw.rrp.q", Num, &["message.records[].q"]),
    ("mw.rrp.mtu", Num, &["message.records[].mtu.words"]),
    ("mw.rrp.mtu_bytes", Num, &["message.records[].mtu.bytes"]),
    (
        "mw.rrp.mtu_unlimited",
        Bool,
        &["message.records[].mtu.unlimited"],
    ),
    ("mw.rrp.san_id", Num, &["message.records[].san_id"]),
    ("mw.rrp.sn", Num, &["message.records[].sn"]),
    ("mw.rrp.part_index", Num, &["message.rt_part.index"]),
    ("mw.rrp.part_count", Num, &["message.rt_part.count"]),
    ("mw.rrp.part_valid", Bool, &["message.rt_part.valid"]),
    // L2RHs of R5 records.
    ("mw.rrp.l2rh.len", Num, &["message.records[].l2rhs[].len"]),
    (
        "mw.rrp.l2rh.words",
        Num,
        &["message.records[].l2rhs[].words"],
    ),
    (
        "mw.rrp.l2rh.content",
        Hex,
        &["message.records[].l2rhs[].content_hex"],
    ),
    (
        "mw.rrp.l2rh.egress",
        Num,
        &["message.records[].l2rhs[].hop.egress"],
    ),
    (
        "mw.rrp.l2rh.native_len",
        Num,
        &["message.records[].l2rhs[].hop.native_len"],
    ),
    (
        "mw.rrp.l2rh.native",
        Hex,
        &["message.records[].l2rhs[].hop.native_hex"],
    ),
    (
        "mw.rrp.l2rh.mac",
        Mac,
        &["message.records[].l2rhs[].hop.mac"],
    ),
    (
        "mw.rrp.l2rh.udp",
        Str,
        &["message.records[].l2rhs[].hop.udp"],
    ),
    (
        "mw.rrp.l2rh.native_only",
        Bool,
        &["message.records[].l2rhs[].hop.native_only"],
    ),
    (
        "mw.rrp.l2rh.egress_only",
        Bool,
        &["message.records[].l2rhs[].hop.egress_only"],
    ),
    // ERR GENERAL's enclosed bytes.
    ("mw.err.enclosed", HexPrefix, &["message.enclosed.hex"]),
    ("mw.err.enclosed_len", Num, &["message.enclosed.len"]),
    (
        "mw.err.enclosed_complete",
        Bool,
        &["message.enclosed.complete"],
    ),
    ("mw.err.enclosed_kind", Str, &["message.enclosed.kind"]),
    ("mw.err.enclosed.dst", Num, &["message.enclosed.header.dst"]),
    ("mw.err.enclosed.src", Num, &["message.enclosed.header.src"]),
    (
        "mw.err.enclosed.pt",
        Num,
        &["message.enclosed.header.packet_type"],
    ),
    (
        "mw.err.enclosed.te",
        Num,
        &["message.enclosed.header.type_ext"],
    ),
    (
        "mw.err.enclosed.dl",
        Num,
        &["message.enclosed.header.data_words"],
    ),
    ("mw.err.l2rh.len", Num, &["message.enclosed.l2rhs[].len"]),
    (
        "mw.err.l2rh.words",
        Num,
        &["message.enclosed.l2rhs[].words"],
    ),
    (
        "mw.err.l2rh.content",
        Hex,
        &["message.enclosed.l2rhs[].content_hex"],
    ),
    (
        "mw.err.l2rh.egress",
        Num,
        &["message.enclosed.l2rhs[].hop.egress"],
    ),
    (
        "mw.err.l2rh.native_len",
        Num,
        &["message.enclosed.l2rhs[].hop.native_len"],
    ),
    (
        "mw.err.l2rh.native",
        Hex,
        &["message.enclosed.l2rhs[].hop.native_hex"],
    ),
    (
        "mw.err.l2rh.mac",
        Mac,
        &["message.enclosed.l2rhs[].hop.mac"],
    ),
    (
        "mw.err.l2rh.udp",
        Str,
        &["message.enclosed.l2rhs[].hop.udp"],
    ),
    (
        "mw.err.l2rh.native_only",
        Bool,
        &["message.enclosed.l2rhs[].hop.native_only"],
    ),
    (
        "mw.err.l2rh.egress_only",
        Bool,
        &["message.enclosed.l2rhs[].hop.egress_only"],
    ),
    // Management datagrams.
    ("mw.mad.base_version", Num, &["mad.base_version"]),
    ("mw.mad.class", Num, &["mad.class"]),
    ("mw.mad.class_name", Str, &["mad.class_name"]),
    ("mw.mad.class_version", Num, &["mad.class_version"]),
    ("mw.mad.response", Bool, &["mad.response"]),
    ("mw.mad.method", Num, &["mad.method"]),
    ("mw.mad.method_name", Str, &["mad.method_name"]),
    ("mw.mad.status", Num, &["mad.status"]),
    ("mw.mad.status_text", Str, &["mad.status_text"]),
    ("mw.mad.tid", Num, &["mad.tid"]),
    ("mw.mad.attribute", Num, &["mad.attribute"]),
    ("mw.mad.attribute_name", Str, &["mad.attribute_name"]),
    ("mw.mad.modifier", Num, &["mad.modifier"]),
    ("mw.mad.mkey", Num, &["mad.mkey"]),
    ("mw.mad.dr.returning", Bool, &["mad.dr.returning"]),
    ("mw.mad.dr.hop_pointer", Num, &["mad.dr.hop_pointer"]),
    ("mw.mad.dr.hop_count", Num, &["mad.dr.hop_count"]),
    ("mw.mad.dr.initial.hr", Num, &["mad.dr.initial_path[].hr"]),
    (
        "mw.mad.dr.initial.native_len",
        Num,
        &["mad.dr.initial_path[].native_len"],
    ),
    (
        "mw.mad.dr.initial.native",
        Hex,
        &["mad.dr.initial_path[].native_hex"],
    ),
    ("mw.mad.dr.initial.mac", Mac, &["mad.dr.initial_path[].mac"]),
    ("mw.mad.dr.initial.udp", Str, &["mad.dr.initial_path[].udp"]),
    ("mw.mad.dr.return.hr", Num, &["mad.dr.return_path[].hr"]),
    (
        "mw.mad.dr.return.native_len",
        Num,
        &["mad.dr.return_path[].native_len"],
    ),
    (
        "mw.mad.dr.return.native",
        Hex,
        &["mad.dr.return_path[].native_hex"],
    ),
    ("mw.mad.dr.return.mac", Mac, &["mad.dr.return_path[].mac"]),
    ("mw.mad.dr.return.udp", Str, &["mad.dr.return_path[].udp"]),
];

/// The attributes whose fields the dissector shows (as `mw.mad.attr.<key>`,
/// `<key>` being mwdump's `mad.fields` key); for the others it shows the
/// attribute area's bytes only.
const DECODED_ATTRIBUTES: &[&str] = &["NodeDescription", "NodeInfo", "PortInfo"];

/// Subtree headers (no value of their own).
const STRUCTURE: &[&str] = &[
    "mw.header",
    "mw.trailer",
    "mw.rrp",
    "mw.rrp.record",
    "mw.l2rh",
    "mw.rrp.l2rh",
    "mw.err.l2rh",
    "mw.mad",
    "mw.mad.dr.initial",
    "mw.mad.dr.return",
];

/// Fields mwdump has no counterpart for, each checked otherwise (see
/// [`check_frame`]): padding bytes (zero), the enclosed note (worded
/// differently), the attribute area (against the frame's bytes).
const UNCHECKED: &[&str] = &[
    "mw.padding",
    "mw.rrp.pad",
    "mw.l2rh.pad",
    "mw.rrp.l2rh.pad",
    "mw.err.l2rh.pad",
    "mw.err.enclosed_note",
    "mw.mad.attribute_data",
];

fn lua_script() -> String {
    workspace()
        .join("tools/wireshark/mwrouter.lua")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

fn tshark_installed() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The dissector in Wireshark's global Lua plugin folder, where the Debian
/// package installs it (`tshark -G folders`), when there is one.
fn installed_dissector() -> Option<std::path::PathBuf> {
    let out = Command::new("tshark")
        .args(["-G", "folders"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let dir = text
        .lines()
        .find_map(|l| l.strip_prefix("Global Lua Plugins:"))?
        .trim()
        .to_string();
    let f = std::path::Path::new(&dir).join("mwrouter.lua");
    f.exists().then_some(f)
}

/// What tshark made of a capture.
struct Tshark {
    /// `_source.layers` of each frame.
    frames: Vec<Value>,
    stdout: String,
    stderr: String,
}

/// Runs tshark with the dissector on `pcap`, JSON output, in a scratch
/// HOME (no personal plugins or preferences).
fn tshark(pcap: &str) -> Tshark {
    let base = std::path::Path::new(pcap)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("capture");
    let home = std::env::temp_dir().join(format!(
        "mwdump-test-{}-tshark-home-{base}",
        std::process::id()
    ));
    std::fs::create_dir_all(&home).expect("scratch HOME");
    // With the package installed, its copy loads first and this one steps
    // aside (a protocol registers once): what runs must be this tree's.
    if let Some(f) = installed_dissector() {
        let installed = std::fs::read(&f).unwrap_or_default();
        let here = std::fs::read(lua_script()).expect("the dissector");
        assert!(
            installed == here,
            "{} is not this tree's tools/wireshark/mwrouter.lua and would be \
             tested instead: remove it or reinstall the package",
            f.display()
        );
    }
    let out = Command::new("tshark")
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .args(["-n", "-X"])
        .arg(format!("lua_script:{}", lua_script()))
        .args(["-r", pcap, "-T", "json", "--no-duplicate-keys"])
        .output()
        .expect("run tshark");
    let _ = std::fs::remove_dir_all(&home);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "tshark failed ({:?}): {stderr}",
        out.status
    );
    for s in [&stdout, &stderr] {
        assert!(
            !s.contains("Lua Error") && !s.contains("lua_error") && !s.contains("mwrouter.lua:"),
            "a Lua error: {s}"
        );
    }
    let v: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("tshark's JSON ({e}): {stdout}"));
    let frames = v
        .as_array()
        .expect("an array of frames")
        .iter()
        .map(|f| f["_source"]["layers"].clone())
        .collect();
    Tshark {
        frames,
        stdout,
        stderr,
    }
}

/// Every `mw.*` field under `v`, with its values in document order; and the
/// expert infos' `_ws.expert.message`s and field names.
#[derive(Default, Debug)]
struct Shown {
    fields: BTreeMap<String, Vec<String>>,
    experts: Vec<String>,
}

fn walk(key: &str, v: &Value, out: &mut Shown) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| walk(key, x, out)),
        Value::Object(o) => {
            if key == "_ws.expert" {
                let mut text = String::new();
                for (k, x) in o {
                    text.push_str(&format!("{k}={x} "));
                }
                out.experts.push(text);
            }
            for (k, x) in o {
                walk(k, x, out);
            }
        }
        Value::String(s) if key.starts_with("mw.") && !key.ends_with("_tree") => {
            out.fields
                .entry(key.to_string())
                .or_default()
                .push(s.clone());
        }
        _ => {}
    }
}

fn shown(layers: &Value) -> Shown {
    let mut s = Shown::default();
    if let Some(mw) = layers.get("mw") {
        walk("mw", mw, &mut s);
    }
    s
}

/// The values at `path` in `v`: segments split by `.`; `name[]` iterates an
/// array, `name[k=v]` the elements whose `k` is the string `v`. Missing
/// keys and nulls give nothing.
fn extract(v: &Value, path: &str) -> Vec<Value> {
    let mut cur = vec![v.clone()];
    for seg in path.split('.') {
        let (name, filter) = match seg.find('[') {
            Some(i) => (&seg[..i], Some(&seg[i + 1..seg.len() - 1])),
            None => (seg, None),
        };
        let mut next = Vec::new();
        for x in &cur {
            let Some(y) = x.get(name) else { continue };
            if y.is_null() {
                continue;
            }
            match filter {
                None => next.push(y.clone()),
                Some(f) => {
                    let items = y.as_array().map(Vec::as_slice).unwrap_or(&[]);
                    for it in items {
                        if let Some((k, want)) = f.split_once('=')
                            && it.get(k).and_then(Value::as_str) != Some(want)
                        {
                            continue;
                        }
                        next.push(it.clone());
                    }
                }
            }
        }
        cur = next;
    }
    cur.into_iter().filter(|x| !x.is_null()).collect()
}

/// mwdump's value as the string it is compared as; `None` when the
/// dissector does not show it (empty bytes).
fn expected(kind: Kind, v: &Value) -> Option<String> {
    Some(match kind {
        Num => v
            .as_u64()
            .unwrap_or_else(|| panic!("a number: {v}"))
            .to_string(),
        Bool => v
            .as_bool()
            .unwrap_or_else(|| panic!("a bool: {v}"))
            .to_string(),
        Str => v
            .as_str()
            .unwrap_or_else(|| panic!("a string: {v}"))
            .to_string(),
        Mac => v.as_str().expect("a MAC").to_lowercase(),
        Hex | HexPrefix => {
            let h = match v {
                Value::Array(a) => hex(&a
                    .iter()
                    .map(|x| x.as_u64().expect("a byte") as u8)
                    .collect::<Vec<_>>()),
                _ => v.as_str().expect("hex text").to_lowercase(),
            };
            if h.is_empty() {
                return None;
            }
            h
        }
    })
}

/// tshark's value as the string it is compared as.
fn normalized(kind: Kind, s: &str) -> String {
    match kind {
        Num => {
            let n = match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => s.parse::<u64>(),
            };
            n.unwrap_or_else(|e| panic!("not a number ({e}): {s:?}"))
                .to_string()
        }
        Bool => match s {
            "1" | "True" | "true" => "true".into(),
            "0" | "False" | "false" => "false".into(),
            other => panic!("not a boolean: {other:?}"),
        },
        Str => s.to_string(),
        Mac => s.to_lowercase(),
        Hex | HexPrefix => s.replace(':', "").to_lowercase(),
    }
}

/// Checks one frame: tshark's fields against mwdump's object `m`; `frame`
/// is the frame's bytes. Returns the number of values compared.
fn check_frame(n: usize, layers: &Value, m: &Value, frame: &[u8]) -> usize {
    let s = shown(layers);
    assert!(
        !s.fields.is_empty(),
        "frame {n}: tshark shows no MessageWay fields; mwdump: {m}"
    );
    assert!(
        s.experts.is_empty(),
        "frame {n}: expert infos on a well-formed packet: {:?}",
        s.experts
    );
    let mut compared = 0;
    let mut known: BTreeSet<String> = BTreeSet::new();
    for (field, kind, paths) in FIELDS {
        known.insert(field.to_string());
        let want: Vec<String> = paths
            .iter()
            .flat_map(|p| extract(m, p))
            .filter_map(|v| expected(*kind, &v))
            .collect();
        let got: Vec<String> = s
            .fields
            .get(*field)
            .map(|v| v.iter().map(|x| normalized(*kind, x)).collect())
            .unwrap_or_default();
        if *kind == HexPrefix {
            assert_eq!(
                got.len(),
                want.len(),
                "frame {n}: {field}: {got:?} vs {want:?}"
            );
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    g.starts_with(w.as_str()),
                    "frame {n}: {field}: {g} does not start with {w}"
                );
            }
        } else {
            assert_eq!(got, want, "frame {n}: field {field} (mwdump {paths:?})");
        }
        compared += want.len();
    }
    // The attribute's fields, by mwdump's key.
    let attr_name = m["mad"]["attribute_name"].as_str().unwrap_or("");
    let decoded = DECODED_ATTRIBUTES.contains(&attr_name);
    let mut want_attr: BTreeMap<String, String> = BTreeMap::new();
    if decoded && let Some(f) = m["mad"]["fields"].as_object() {
        for (k, v) in f {
            if k.ends_with("_hex") && k != "native_hex" {
                continue; // a JSON-only companion of a 64-bit value
            }
            let w = match v {
                Value::Number(x) => x.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::String(t) if k == "native_hex" => {
                    if t.is_empty() {
                        continue;
                    }
                    t.clone()
                }
                Value::String(t) if k == "native_mac" => t.to_lowercase(),
                Value::String(t) => t.clone(),
                Value::Null => continue,
                other => panic!("frame {n}: an attribute field mwdump nests: {k} = {other}"),
            };
            want_attr.insert(format!("mw.mad.attr.{k}"), w);
        }
    }
    let mut got_attr: BTreeMap<String, String> = BTreeMap::new();
    for (k, vals) in &s.fields {
        if let Some(key) = k.strip_prefix("mw.mad.attr.") {
            assert_eq!(vals.len(), 1, "frame {n}: {k} shown more than once");
            let v = &vals[0];
            let norm = match key {
                "native_hex" => normalized(Hex, v),
                "native_mac" => normalized(Mac, v),
                "text" | "native_udp" => v.clone(),
                _ => normalized(Num, v),
            };
            got_attr.insert(k.clone(), norm);
            known.insert(k.clone());
        }
    }
    assert_eq!(got_attr, want_attr, "frame {n}: attribute fields");
    compared += want_attr.len();
    // The attribute area, against the frame's bytes.
    if let Some(at) = m["mad"]["offset"].as_u64() {
        let at = at as usize + 64;
        let len = if matches!(m["mad"]["class"].as_u64(), Some(0x01 | 0x81)) {
            64
        } else {
            192
        };
        let got = s
            .fields
            .get("mw.mad.attribute_data")
            .expect("mw.mad.attribute_data");
        assert_eq!(
            got,
            &vec![hex_colons(&frame[at..at + len])],
            "frame {n}: attribute area"
        );
        compared += 1;
    }
    // Padding bytes are zero when emitted by rrp.
    for k in [
        "mw.padding",
        "mw.rrp.pad",
        "mw.l2rh.pad",
        "mw.rrp.l2rh.pad",
        "mw.err.l2rh.pad",
    ] {
        for v in s.fields.get(k).into_iter().flatten() {
            assert!(v.split(':').all(|b| b == "00"), "frame {n}: {k} = {v}");
        }
    }
    let pl = m["header"]["pad_len"].as_u64().unwrap();
    let pad = s
        .fields
        .get("mw.padding")
        .map_or(0, |v| v[0].split(':').count() as u64);
    assert_eq!(pad, pl, "frame {n}: mw.padding is PL bytes");
    // Every field shown is accounted for.
    for k in s.fields.keys() {
        assert!(
            known.contains(k) || STRUCTURE.contains(&k.as_str()) || UNCHECKED.contains(&k.as_str()),
            "frame {n}: tshark shows {k}, which the test does not check"
        );
    }
    compared
}

fn hex_colons(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Writes `frames` as a pcap of `linktype`, runs tshark and mwdump on it and
/// compares every frame. Returns the mwdump objects.
fn compare_capture(name: &str, linktype: u32, frames: &[Vec<u8>]) -> Vec<Value> {
    let mut w = PcapWriter::in_memory(linktype);
    for (i, f) in frames.iter().enumerate() {
        w.push(1_704_067_200 + i as u32, 0, f);
    }
    let file = scratch(name);
    std::fs::write(file.path(), w.finish()).expect("write capture");
    compare_file(file.path(), frames)
}

fn compare_file(path: &str, frames: &[Vec<u8>]) -> Vec<Value> {
    let run = mwdump(&["--json", path], b"");
    assert_eq!(run.code, 0, "mwdump: {}", run.stderr);
    let want = run.json();
    let t = tshark(path);
    assert_eq!(
        t.frames.len(),
        frames.len(),
        "tshark's frames: {}",
        t.stderr
    );
    assert_eq!(want.len(), frames.len());
    let mut compared = 0;
    for (i, ((layers, m), f)) in t.frames.iter().zip(&want).zip(frames).enumerate() {
        assert!(m.get("error").is_none(), "frame {}: mwdump: {m}", i + 1);
        compared += check_frame(i + 1, layers, m, f);
    }
    assert!(
        compared > 10 * frames.len(),
        "only {compared} values compared"
    );
    want
}

fn skip_without_tshark(test: &str) -> bool {
    if tshark_installed() {
        return false;
    }
    testkit::skip(test, "tshark not installed (apt-get install tshark)");
    true
}

// The packets -------------------------------------------------------------

fn eth_hop(egress: u16, last: u8) -> RouterHop {
    RouterHop::new(Address(egress), NativeAddr::mac([2, 0, 0, 0, 1, last]))
}

fn udp_hop(egress: u16, addr: &str) -> RouterHop {
    RouterHop::new(Address(egress), NativeAddr::udp(addr.parse().unwrap()))
}

fn bytes_of(m: &Message, dst: u16, src: u16) -> Vec<u8> {
    m.to_packet(Address(dst), Address(src))
        .unwrap()
        .to_bytes()
        .unwrap()
}

fn route(q: u16, hops: &[RouterHop], mtu: Option<u32>) -> SourceRoute {
    SourceRoute {
        q,
        route: hops.iter().map(RouterHop::to_l2rh).collect(),
        mtu: mtu.map(Mtu),
    }
}

fn node(addr: u16, name: Option<&[u8]>, caps: &[(u8, &[u8])], logical: Option<&[u16]>) -> NodeInfo {
    NodeInfo {
        address: Address(addr),
        name: name.map(<[u8]>::to_vec),
        capabilities: caps
            .iter()
            .map(|(c, p)| Capability {
                code: *c,
                params: p.to_vec(),
            })
            .collect(),
        logical: logical.map(|l| l.iter().copied().map(Address).collect()),
    }
}

/// User data over two router hops (Ethernet, UDP/IPv6), with PL padding,
/// a priority, little-endian 32-bit E, EI set and Free.
fn routed_user_data() -> Vec<u8> {
    PacketRepr {
        l2rhs: vec![
            eth_hop(0x0115, 0x07).to_l2rh(),
            udp_hop(0x0131, "[fd00:1::31]:34997").to_l2rh(),
            RouterHop::egress(Address(0x0140)).to_l2rh(),
        ],
        header: HeaderRepr {
            dst: Address(0x0140),
            priority: 7,
            packet_type: PacketType(0x0123),
            type_ext: 0x0042,
            endian: Endian {
                little: true,
                swap: SwapWidth::W32,
            },
            src: Address(0x0101),
            free: 0xBEEF,
        },
        data: (0u8..77).collect(),
        ei: 0x5,
    }
    .to_bytes()
    .unwrap()
}

/// L2RHs of every shape: content that is no router hop, a native-only
/// hop, a 2-byte native part (no router hop either), a UDP/IPv4 hop; a
/// logical destination, an EtherType PT, a reserved swap width, EI all ones.
fn odd_l2rhs() -> Vec<u8> {
    PacketRepr {
        l2rhs: vec![
            L2rhRepr::new(&[1, 2, 3]).unwrap(),
            RouterHop::native(NativeAddr::mac([2, 0, 0, 0, 0, 9])).to_l2rh(),
            L2rhRepr::new(&[0x01, 0x15, 0xAA, 0xBB]).unwrap(),
            udp_hop(0x0113, "10.3.0.2:34997").to_l2rh(),
        ],
        header: HeaderRepr {
            dst: Address(0x8001),
            packet_type: PacketType(0x0800),
            endian: Endian {
                little: false,
                swap: SwapWidth::Reserved(6),
            },
            ..HeaderRepr::default()
        },
        data: vec![0xAB; 103],
        ei: u64::MAX,
    }
    .to_bytes()
    .unwrap()
}

fn rrp_messages() -> Vec<Vec<u8>> {
    let rt = RouteTable {
        san_id: Address(0x0202),
        sn: 4660,
        csr: route(
            3,
            &[eth_hop(0x0122, 0x13), udp_hop(0, "10.3.0.2:34997")],
            Some(1500 / 8),
        ),
        rcvf: vec![Address(0x0121), Address(0x0111)],
        nodes: vec![
            RtNode {
                info: node(0x0102, Some(b"Node2"), &[(1, &[])], Some(&[0x8001, 0x8002])),
                route: route(1, &[], None),
            },
            RtNode {
                info: node(
                    0x0122,
                    Some(&[0xFF, 0x41]),
                    &[(2, &[2, 1, 2, 2]), (42, &[7])],
                    None,
                ),
                route: route(0, &[RouterHop::egress(Address(0x0122))], Some(0)),
            },
        ],
    };
    let mut rt_packet = Message::RouteTable(rt)
        .to_packet(Address(0xFFFF), Address(0x0121))
        .unwrap();
    rt_packet.header.free = 0x0203; // part 2 of 3
    vec![
        bytes_of(
            &Message::RouteRequest {
                dst: Address(0x0103),
            },
            0x0111,
            0x0101,
        ),
        bytes_of(
            &Message::Routes {
                dst: Address(0x0103),
                routes: vec![
                    route(2, &[eth_hop(0x0113, 0x31)], Some(1024)),
                    route(
                        5,
                        &[eth_hop(0x0113, 0x32), udp_hop(0x0131, "[::1]:34997")],
                        None,
                    ),
                ],
            },
            0x0101,
            0x0111,
        ),
        bytes_of(
            &Message::Redirect {
                dst: Address(0x0103),
                via: Address(0x0121),
            },
            0x0101,
            0x0111,
        ),
        bytes_of(
            &Message::InfoRequest(InfoQuery::Capabilities(vec![
                Capability {
                    code: 2,
                    params: vec![],
                },
                Capability {
                    code: 7,
                    params: vec![4, 8],
                },
            ])),
            0x0111,
            0x0101,
        ),
        bytes_of(
            &Message::InfoRequest(InfoQuery::Name(b"printer-3".to_vec())),
            0x0111,
            0x0101,
        ),
        bytes_of(
            &Message::Info(vec![
                node(0x0102, Some(b"Super"), &[(7, &[4, 8])], Some(&[0x8001])),
                node(0x0103, None, &[], None),
            ]),
            0x0101,
            0x0111,
        ),
        bytes_of(
            &Message::WhichHr {
                dst: Address(0x0103),
            },
            0xFFFE,
            0x0101,
        ),
        bytes_of(&Message::WhoAreYou, 0xFFFE, 0x0111),
        bytes_of(&Message::RtRequest, 0x0121, 0x0111),
        rt_packet.to_bytes().unwrap(),
    ]
}

fn err_messages() -> Vec<Vec<u8>> {
    let mut enclosed = routed_user_data();
    enclosed.truncate(40);
    let whole = bytes_of(
        &Message::RouteRequest {
            dst: Address(0x0104),
        },
        0x0111,
        0x0101,
    );
    let mut with_hop = PacketRepr::parse(&whole).unwrap();
    with_hop.l2rhs.push(eth_hop(0x0113, 0x44).to_l2rh());
    vec![
        bytes_of(
            &Message::Unknown {
                addr: Address(0x0107),
            },
            0x0101,
            0x0111,
        ),
        bytes_of(
            &Message::HrDown {
                hr: Address(0x0122),
            },
            0x0101,
            0x0111,
        ),
        bytes_of(
            &Message::LinkDown {
                a: Address(0x0121),
                b: Address(0x0122),
            },
            0x0101,
            0x0111,
        ),
        bytes_of(&Message::General { enclosed }, 0x0101, 0x0111),
        bytes_of(
            &Message::General {
                enclosed: with_hop.to_bytes().unwrap(),
            },
            0x0101,
            0x0111,
        ),
    ]
}

fn vector(name: &str) -> Vec<u8> {
    let p = workspace().join("mgmt/tests/vectors").join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    mwdump::hex::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()))
}

/// Management packets: the packet vector, the bare MAD vectors wrapped in a
/// packet, and a NodeDescription GetResp built with mgmt's MadRepr.
fn mad_packets() -> Vec<Vec<u8>> {
    let mut out = vec![vector("packet-subn-get-node-info.hex")];
    for name in [
        "subn-getresp-node-info.hex",
        "dr-get-port-info-outbound.hex",
        "dr-getresp-port-info-returning.hex",
        "perf-getresp-port-counters.hex",
        "subn-trap-bad-mkey.hex",
        "subn-set-partition-table.hex",
    ] {
        let mad: [u8; 256] = vector(name).try_into().expect("a 256-byte MAD");
        out.push(mad_packet(Address(0xFFFE), Address(0x0101), &mad).unwrap());
    }
    let mut m = MadRepr::new(MgmtClass::SUBN, Method::GET_RESP, 0x77, 0x0010, 0);
    m.status = mgmt::wire::Status(0x1D03);
    mgmt::attr::NodeDescription("router-b \u{e9}t\u{e9}".into())
        .emit(&mut m.data)
        .unwrap();
    out.push(mad_packet(Address(0x0101), Address(0x0122), &m.to_bytes().unwrap()).unwrap());
    let mad: [u8; 256] = vector("perf-getresp-port-counters-extended.hex")
        .try_into()
        .expect("a 256-byte MAD");
    out.push(mad_packet(Address(0x0101), Address(0x0111), &mad).unwrap());
    out
}

fn eth_frame(payload: &[u8], ethertype: u16) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 1, 0x11, 2, 0, 0, 0, 1, 0x01];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    if f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

/// IPv4 + UDP (40001 -> 34997) around `payload`, checksums left zero.
fn udp4_frame(payload: &[u8]) -> Vec<u8> {
    let udp_len = 8 + payload.len();
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 1, 0, 1, 10, 1, 0, 17,
    ];
    ip[2..4].copy_from_slice(&((20 + udp_len) as u16).to_be_bytes());
    let mut sum = 0u32;
    for c in ip.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    ip.extend_from_slice(&40001u16.to_be_bytes());
    ip.extend_from_slice(&34997u16.to_be_bytes());
    ip.extend_from_slice(&(udp_len as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 0]);
    ip.extend_from_slice(payload);
    eth_frame(&ip, 0x0800)
}

// The tests ------------------------------------------------------------------

#[test]
fn sample_capture_agrees_with_mwdump() {
    if skip_without_tshark("sample_capture_agrees_with_mwdump") {
        return;
    }
    let path = workspace().join("examples/sample.pcap");
    let frames: Vec<Vec<u8>> = mwdump::sample::sample_frames()
        .into_iter()
        .map(|f| f.frame)
        .collect();
    let v = compare_file(path.to_str().unwrap(), &frames);
    assert!(v.len() >= 18);
}

#[test]
fn user0_capture_of_every_kind_agrees_with_mwdump() {
    if skip_without_tshark("user0_capture_of_every_kind_agrees_with_mwdump") {
        return;
    }
    let mut frames = vec![routed_user_data(), odd_l2rhs()];
    frames.extend(rrp_messages());
    frames.extend(err_messages());
    frames.extend(mad_packets());
    // Bytes after the trailer in a raw frame are not part of the packet.
    let mut trailing = bytes_of(&Message::RtRequest, 0x0121, 0x0111);
    trailing.extend_from_slice(&[0xEE; 5]);
    frames.push(trailing);
    let v = compare_capture("user0.pcap", LINKTYPE_USER0, &frames);
    let kinds: BTreeSet<&str> = v.iter().map(|p| p["kind"].as_str().unwrap()).collect();
    for k in [
        "USER",
        "ETHERTYPE",
        "RRP#1",
        "RRP#2",
        "RRP#3",
        "RRP#4",
        "RRP#5",
        "RRP#6",
        "RRP#7",
        "RRP#8",
        "RRP#9",
        "ERR UNK",
        "ERR HRDOWN",
        "ERR LINKDOWN",
        "ERR GENERAL",
        "MANAGEMENT",
    ] {
        assert!(kinds.contains(k), "{k} in {kinds:?}");
    }
}

#[test]
fn ethernet_and_udp_captures_agree_with_mwdump() {
    if skip_without_tshark("ethernet_and_udp_captures_agree_with_mwdump") {
        return;
    }
    let mads = mad_packets();
    let mut frames = vec![
        eth_frame(&routed_user_data(), 0x88B5),
        eth_frame(&bytes_of(&Message::WhoAreYou, 0xFFFE, 0x0111), 0x88B5),
        eth_frame(&mads[3], 0x88B5),
        udp4_frame(&mads[1]),
        udp4_frame(&rrp_messages()[9]),
        udp4_frame(&err_messages()[4]),
    ];
    frames.push(eth_frame(&mads[6], 0x88B5));
    let v = compare_capture("eth.pcap", LINKTYPE_ETHERNET, &frames);
    assert_eq!(v[0]["link"], "eth");
    assert_eq!(v[1]["padding_len"], 60 - 14 - 24);
    assert!(v[3]["encap"]["udp"].is_object());
}

#[test]
fn malformed_packets_give_an_expert_info_not_a_lua_error() {
    if skip_without_tshark("malformed_packets_give_an_expert_info_not_a_lua_error") {
        return;
    }
    let good = bytes_of(
        &Message::RouteRequest {
            dst: Address(0x0103),
        },
        0x0111,
        0x0101,
    );
    let mut frames: Vec<Vec<u8>> = vec![
        good[..good.len() - 3].to_vec(), // cut in the trailer
        good[..20].to_vec(),             // cut in the data block
        good[..9].to_vec(),              // cut in the header
        vec![0x01],                      // one byte
    ];
    let mut bad_version = good.clone();
    bad_version[3] = 9;
    frames.push(bad_version);
    frames.push(vec![0, 0, 0, 0, 0, 0, 0, 0]); // L2RH of length 0
    let mut bad_rtyp = good.clone();
    bad_rtyp[16] = 9;
    frames.push(bad_rtyp);
    let mut bad_rl = good.clone();
    bad_rl[19] = 5;
    frames.push(bad_rl);
    let mut bad_te = good.clone();
    bad_te[7] = 12;
    frames.push(bad_te);
    let mut cut_l2rh = routed_user_data();
    cut_l2rh.truncate(12);
    frames.push(cut_l2rh);
    let mut short_mad = mad_packets()[1].clone();
    short_mad[11] = 31; // DL 31: not a 256-byte MAD
    frames.push(short_mad);
    let mut bad_path = mad_packets()[3].clone();
    bad_path[16 + 7] = 9; // HopCount 9
    frames.push(bad_path);
    let mut w = PcapWriter::in_memory(LINKTYPE_USER0);
    for f in &frames {
        w.push(1_704_067_200, 0, f);
    }
    let file = scratch("malformed.pcap");
    std::fs::write(file.path(), w.finish()).unwrap();
    let t = tshark(file.path());
    assert_eq!(t.frames.len(), frames.len());
    let run = mwdump(&["--json", file.path()], b"");
    let want = run.json();
    for (i, (layers, m)) in t.frames.iter().zip(&want).enumerate() {
        assert!(m.get("error").is_some(), "frame {}: mwdump says {m}", i + 1);
        let s = shown(layers);
        assert_eq!(s.experts.len(), 1, "frame {}: {:?}", i + 1, s.experts);
        let e = &s.experts[0];
        assert!(
            e.contains("mw.malformed") && !e.contains("mw.dissector_bug"),
            "frame {}: {e}",
            i + 1
        );
        // The expert names the field mwdump names, or its record/field family.
        let field = m["error"]["field"].as_str().unwrap();
        let family = field.split('.').next().unwrap();
        assert!(
            e.contains(field) || e.contains(family),
            "frame {}: {e} vs mwdump's {field}",
            i + 1
        );
    }
    assert!(!t.stdout.contains("Lua"), "{}", t.stdout);
}
