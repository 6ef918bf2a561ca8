//! In-band management through the admin socket (docs/admin-protocol.md
//! "mad"): the `mad` command asks the box's management client to send one
//! MAD to a node, by its address or by a directed route, and answers with
//! the response, its attribute decoded field by field.
//!
//! A Set may give the attribute's fields to change (`"set": {"cost": 5}`):
//! the dispatcher reads the attribute first (with the same key), changes
//! those fields and writes the whole attribute back, as InfiniBand's tools
//! do (a Set writes every field of an attribute).
//!
//! The query is a message of the protocol, defined in [`crate::proto::mad`]
//! (re-exported here); this module gives it its meaning: its checks, the
//! request it makes, how a box runs it and the answer.

use std::collections::BTreeMap;

use mgmt::attr::{self, Attribute, NodeDescription, PortCounters, PortCountersExtended, PortInfo};
use std::time::Duration;

use mgmt::client::{Answer, Failure, Request, Target};
use mgmt::wire::{Method, MgmtClass, PathHop, Status};
use rrp::wire::RouterHop;
use rrp::{Address, NativeAddr, PortId};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::proto::{AdminError, AdminErrorCode};

pub use crate::proto::mad::{DrHop, MadMethod, MadQuery};

/// How long one try waits by default, in ms.
pub const DEFAULT_TIMEOUT_MS: u64 = 1_000;
/// Tries after the first, by default.
pub const DEFAULT_RETRIES: u32 = 2;
/// The longest wait for one try, in ms.
pub const MAX_TIMEOUT_MS: u64 = 10_000;
/// The most retries.
pub const MAX_RETRIES: u32 = 10;
/// Router hops of a source route at most (the L2RHs a packet may carry).
pub const MAX_ROUTE_HOPS: usize = rrp::limits::MAX_L2RHS;

/// Status of a Set refused for the M_Key (protect 0 or 1); the same value
/// as the agent's (docs/management.md "Management key").
pub const STATUS_MKEY: Status = mgmt::agent::STATUS_MKEY;

/// What a box's management client made of a request: the answer, or why
/// there is none.
pub type MadResult = Result<Answer, Failure>;

/// A hop of a directed route's ReturnPath, as an answer shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReturnHop {
    /// The HR the request arrived on at that hop.
    pub hr: Address,
    /// The native address it came from.
    pub native: String,
}

/// The answer to `mad`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MadAnswer {
    /// Where the request went: an address, or `dr` and the hops.
    pub target: String,
    /// Who answered (the EEP source; Hey-You's sender on a directed route
    /// is the last hop's HR).
    pub from: Address,
    /// Tries it took.
    pub tries: u32,
    /// Milliseconds from the first send to the answer.
    pub rtt_ms: u64,
    /// The class's name.
    pub class: String,
    /// The response's method (`GetResp`).
    pub method: String,
    /// The status.
    pub status: u16,
    /// The status in words.
    pub status_text: String,
    /// The attribute's name (or its number).
    pub attribute: String,
    /// The AttributeID.
    pub attribute_id: u16,
    /// The modifier.
    pub modifier: u32,
    /// The attribute, field by field (absent for an attribute this client
    /// does not know, or one that does not parse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Value>,
    /// The attribute area as hex, when `fields` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// A directed route's ReturnPath.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub return_path: Vec<ReturnHop>,
}

impl MadAnswer {
    /// Whether the status is success.
    pub fn ok(&self) -> bool {
        self.status == 0
    }
}

/// The AttributeIDs by name: each attribute's name in lower case, with and
/// without underscores, and short forms.
const NAMES: [(&str, u16); 35] = [
    ("class_port_info", attr::ClassPortInfo::ID),
    ("classportinfo", attr::ClassPortInfo::ID),
    ("notice", attr::Notice::ID),
    ("node_description", NodeDescription::ID),
    ("nodedescription", NodeDescription::ID),
    ("description", NodeDescription::ID),
    ("node_info", attr::NodeInfo::ID),
    ("nodeinfo", attr::NodeInfo::ID),
    ("port_counters", PortCounters::ID),
    ("portcounters", PortCounters::ID),
    ("counters", PortCounters::ID),
    ("port_counters_extended", PortCountersExtended::ID),
    ("portcountersextended", PortCountersExtended::ID),
    ("link_counters", PortCountersExtended::ID),
    ("port_info", PortInfo::ID),
    ("portinfo", PortInfo::ID),
    ("partition_table", attr::PartitionTable::ID),
    ("partitiontable", attr::PartitionTable::ID),
    ("pkey_table", attr::PartitionTable::ID),
    ("sm_info", attr::SmInfo::ID),
    ("sminfo", attr::SmInfo::ID),
    ("route_entry", attr::RouteEntry::ID),
    ("fib_block", attr::FibBlock::ID),
    ("lrt_block", attr::LrtBlock::ID),
    ("neighbour", attr::Neighbour::ID),
    // SubnAdm's (the SAN manager's); its class goes with it.
    ("node_record", attr::NodeRecord::ID),
    ("noderecord", attr::NodeRecord::ID),
    ("path_record", attr::PathRecord::ID),
    ("pathrecord", attr::PathRecord::ID),
    ("mc_member_record", attr::McMemberRecord::ID),
    ("mcmemberrecord", attr::McMemberRecord::ID),
    ("mc_group_record", attr::McGroupRecord::ID),
    ("mcgrouprecord", attr::McGroupRecord::ID),
    // The vendor class's (the path tracer's); its class goes with it.
    ("source_route", attr::SourceRoute::ID),
    ("sourceroute", attr::SourceRoute::ID),
];

/// The AttributeID a name or number gives.
pub fn attribute_id(name: &str) -> Option<u16> {
    let n = name.trim().to_ascii_lowercase();
    if let Some((_, id)) = NAMES.iter().find(|(k, _)| *k == n) {
        return Some(*id);
    }
    match n.as_str() {
        "routeentry" => Some(attr::RouteEntry::ID),
        "fibblock" => Some(attr::FibBlock::ID),
        "lrtblock" => Some(attr::LrtBlock::ID),
        "neighbor" => Some(attr::Neighbour::ID),
        _ => parse_number(&n).and_then(|v| u16::try_from(v).ok()),
    }
}

/// A class by name or number.
pub fn class_of(name: &str) -> Option<MgmtClass> {
    Some(match name.trim().to_ascii_lowercase().as_str() {
        "subn" => MgmtClass::SUBN,
        "subn_dr" | "subndr" | "dr" => MgmtClass::SUBN_DR,
        "subn_adm" | "subnadm" => MgmtClass::SUBN_ADM,
        "perf" => MgmtClass::PERF,
        "trace" | "vendor" => MgmtClass::VENDOR_TRACE,
        n => MgmtClass(u8::try_from(parse_number(n)?).ok()?),
    })
}

/// `0x...` hex or decimal.
pub fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn bad(m: impl Into<String>) -> AdminError {
    AdminError::bad_request(m)
}

impl MadQuery {
    /// The AttributeID asked for.
    pub fn attribute_id(&self) -> Result<u16, AdminError> {
        attribute_id(&self.attribute).ok_or_else(|| {
            bad(format!(
                "unknown attribute {:?} (a name such as port_info, node_info, counters, or a number)",
                self.attribute
            ))
        })
    }

    /// The class: as given, or the attribute's and target's default.
    pub fn class(&self) -> Result<MgmtClass, AdminError> {
        let id = self.attribute_id()?;
        let class = match &self.class {
            Some(c) => class_of(c).ok_or_else(|| bad(format!("unknown class {c:?}")))?,
            None if !self.dr.is_empty() => MgmtClass::SUBN_DR,
            None if id == PortCounters::ID || id == PortCountersExtended::ID => MgmtClass::PERF,
            None if matches!(
                self.attribute.trim().to_ascii_lowercase().as_str(),
                "source_route" | "sourceroute"
            ) =>
            {
                MgmtClass::VENDOR_TRACE
            }
            None if matches!(
                self.attribute.trim().to_ascii_lowercase().as_str(),
                "node_record"
                    | "noderecord"
                    | "path_record"
                    | "pathrecord"
                    | "mc_member_record"
                    | "mcmemberrecord"
                    | "mc_group_record"
                    | "mcgrouprecord"
            ) =>
            {
                MgmtClass::SUBN_ADM
            }
            None => MgmtClass::SUBN,
        };
        if self.dr.is_empty() == class.is_directed_route() {
            return Err(bad(if self.dr.is_empty() {
                "class subn_dr needs a directed route (dr)"
            } else {
                "a directed route goes in class subn_dr"
            }));
        }
        Ok(class)
    }

    /// The key to give.
    pub fn mkey(&self) -> Result<u64, AdminError> {
        match &self.mkey {
            None => Ok(0),
            Some(k) => parse_number(k).ok_or_else(|| bad("mkey: not a 64-bit number")),
        }
    }

    /// The directed route's hops.
    pub fn hops(&self) -> Result<Vec<PathHop>, AdminError> {
        self.dr
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let native = NativeAddr::parse(&h.native)
                    .ok()
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| {
                        bad(format!(
                            "dr[{i}].native: not a native address: {:?}",
                            h.native
                        ))
                    })?;
                Ok(PathHop { hr: h.hr, native })
            })
            .collect()
    }

    /// Checks the shape of the query: a target, limits, a Set's contents.
    pub fn check(&self) -> Result<(), AdminError> {
        if self.via.is_some() || !self.route.is_empty() {
            if self.via.is_none() || !self.dr.is_empty() {
                return Err(bad(
                    "a source route takes via (and route), not dr; dst is then optional",
                ));
            }
            self.route_hops()?;
            if self.dst.is_some_and(|d| !d.is_valid_destination()) {
                return Err(bad("dst: not an address a packet can carry"));
            }
            return self.check_rest();
        }
        match (self.dst, self.dr.is_empty()) {
            (None, true) => return Err(bad("mad needs dst (an address) or dr (a directed route)")),
            (Some(_), false) => return Err(bad("mad takes dst or dr, not both")),
            (Some(d), true) if !d.is_valid_destination() || d == Address::HEY_YOU => {
                return Err(bad(format!("dst {d}: not a node address")));
            }
            _ => {}
        }
        self.check_rest()
    }

    /// The checks every target shares: limits, class, key, a Set's contents.
    fn check_rest(&self) -> Result<(), AdminError> {
        if self.dr.len() > mgmt::wire::path::MAX_HOPS {
            return Err(bad(format!(
                "dr: {} hops, at most {}",
                self.dr.len(),
                mgmt::wire::path::MAX_HOPS
            )));
        }
        self.class()?;
        self.mkey()?;
        self.hops()?;
        if self
            .timeout_ms
            .is_some_and(|t| t == 0 || t > MAX_TIMEOUT_MS)
        {
            return Err(bad(format!("timeout_ms: 1 to {MAX_TIMEOUT_MS}")));
        }
        if self.retries.is_some_and(|r| r > MAX_RETRIES) {
            return Err(bad(format!("retries: at most {MAX_RETRIES}")));
        }
        match self.method {
            // A Get may carry its attribute area (data): the path tracer's
            // SourceRoute says what it expects in it.
            MadMethod::Get | MadMethod::Delete if !self.set.is_empty() => {
                Err(bad("set goes with method set"))
            }
            MadMethod::Delete if self.data.is_none() => {
                Err(bad("a Delete needs the record (data)"))
            }
            MadMethod::Set if !self.set.is_empty() && self.data.is_some() => Err(bad(
                "a Set takes set (fields) or data (the whole area), not both",
            )),
            _ => Ok(()),
        }
    }

    /// How long the whole request may take: every try, in ms.
    pub fn budget_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)
            * (u64::from(self.retries.unwrap_or(DEFAULT_RETRIES)) + 1)
    }

    /// The client request: `method` and `data` as given (the Get of a
    /// get-modify-set is built with [`Method::GET`] and no data).
    pub fn request(
        &self,
        egress: Option<PortId>,
        method: Method,
        data: Vec<u8>,
    ) -> Result<Request, AdminError> {
        let target = match (self.via, self.dst, egress) {
            (Some(via), dst, _) => Target::SourceRouted {
                via,
                hops: self.route_hops()?,
                dst: dst.unwrap_or(Address::HEY_YOU),
            },
            (None, Some(d), _) => Target::Address(d),
            (None, None, Some(port)) => Target::Directed {
                port,
                path: self.hops()?,
            },
            (None, None, None) => {
                return Err(bad("a directed route needs the port it leaves by"));
            }
        };
        Ok(Request {
            target,
            class: self.class()?,
            method,
            attribute: self.attribute_id()?,
            modifier: self.modifier,
            mkey: self.mkey()?,
            data,
            timeout_ms: self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
            retries: self.retries.unwrap_or(DEFAULT_RETRIES),
        })
    }

    /// The port a directed route leaves by: the first hop's HR, which must
    /// be one of this box's (`hrs`, in port order).
    pub fn egress(&self, hrs: &[Address]) -> Result<Option<PortId>, AdminError> {
        let Some(first) = self.dr.first() else {
            return Ok(None);
        };
        hrs.iter()
            .position(|a| *a == first.hr)
            .map(|p| Some(PortId::new(p)))
            .ok_or_else(|| {
                AdminError::not_found(format!("dr[0].hr {}: not an HR of this box", first.hr))
            })
    }

    /// The router hops of `route`.
    pub fn route_hops(&self) -> Result<Vec<RouterHop>, AdminError> {
        if self.route.len() > MAX_ROUTE_HOPS {
            return Err(bad(format!("route: at most {MAX_ROUTE_HOPS} hops")));
        }
        self.route
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let (egress, native) = h.split_once('@').ok_or_else(|| {
                    bad(format!(
                        "route[{i}] {h:?}: EGRESS@NATIVE (0x011a@127.0.0.1:4001)"
                    ))
                })?;
                let egress = egress
                    .parse::<Address>()
                    .map_err(|e| bad(format!("route[{i}]: egress {egress:?}: {e}")))?;
                let native = NativeAddr::parse(native)
                    .ok()
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| bad(format!("route[{i}]: not a native address: {native:?}")))?;
                Ok(RouterHop::new(egress, native))
            })
            .collect()
    }

    /// The target as an answer shows it.
    pub fn target_text(&self) -> String {
        if let Some(via) = self.via {
            return format!(
                "{} via {via}{}{}",
                self.dst.unwrap_or(Address::HEY_YOU),
                if self.route.is_empty() { "" } else { " " },
                self.route.join(" ")
            );
        }
        match self.dst {
            Some(d) => d.to_string(),
            None => {
                let hops: Vec<String> = self
                    .dr
                    .iter()
                    .map(|h| format!("{}/{}", h.hr, h.native))
                    .collect();
                format!("dr {}", hops.join(","))
            }
        }
    }

    /// The attribute area of a Set given as `data` (hex).
    pub fn data_area(&self, class: MgmtClass) -> Result<Option<Vec<u8>>, AdminError> {
        let Some(hex) = &self.data else {
            return Ok(None);
        };
        let digits: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
        // Only ASCII hex digits: the pairs below are byte ranges (a
        // multi-byte character would split), and from_str_radix takes a
        // sign (`+a`).
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("data: not hex"));
        }
        if !digits.len().is_multiple_of(2) {
            return Err(bad("data: an odd number of hex digits"));
        }
        let mut area = (0..digits.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&digits[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| bad("data: not hex"))?;
        let len = class.attribute_len();
        if area.len() > len {
            return Err(bad(format!(
                "data: {} bytes, the area holds {len}",
                area.len()
            )));
        }
        area.resize(len, 0);
        Ok(Some(area))
    }
}

/// Runs `q` from a box whose HRs are `hrs` (in port order; a host has one),
/// with `send`, which hands a request to the box's management client and
/// waits at most the given time for what it made of it. A Set given fields
/// reads the attribute first (with the same key) and writes it back changed;
/// when that Get is not answered ok, its answer is the result.
pub fn execute(
    q: &MadQuery,
    hrs: &[Address],
    send: impl Fn(Request, Duration) -> Result<MadResult, AdminError>,
) -> Result<MadAnswer, AdminError> {
    q.check()?;
    let egress = q.egress(hrs)?;
    let class = q.class()?;
    let id = q.attribute_id()?;
    // The answer may take every try, and the box's thread a moment.
    let budget = Duration::from_millis(q.budget_ms()) + Duration::from_secs(1);
    let ask = |method: Method, data: Vec<u8>| -> Result<Answer, AdminError> {
        match send(q.request(egress, method, data)?, budget)? {
            Ok(a) => Ok(a),
            Err(Failure::Timeout { tries }) => Err(AdminError::new(
                AdminErrorCode::NoAnswer,
                format!(
                    "no answer from {} after {tries} tr{}",
                    q.target_text(),
                    if tries == 1 { "y" } else { "ies" }
                ),
            )),
            Err(Failure::Bad(why)) => Err(bad(why)),
        }
    };
    let ans = match q.method {
        MadMethod::Get => ask(Method::GET, q.data_area(class)?.unwrap_or_default())?,
        MadMethod::Set => {
            let data = match q.data_area(class)? {
                Some(d) => d,
                None if q.set.is_empty() => {
                    return Err(bad(
                        "a Set needs the fields to change (set) or the whole area (data)",
                    ));
                }
                None => {
                    let now = ask(Method::GET, Vec::new())?;
                    if !now.mad.status.is_ok() {
                        // The Get's answer says why (the key, the port).
                        return Ok(answer_of(q, &now));
                    }
                    modified(class, id, &now.mad.data, &q.set)?
                }
            };
            ask(Method::SET, data)?
        }
        MadMethod::Delete => {
            let data = q
                .data_area(class)?
                .ok_or_else(|| bad("a Delete needs the record (data)"))?;
            ask(Method::DELETE, data)?
        }
    };
    Ok(answer_of(q, &ans))
}

/// The fields of an attribute as JSON (the inside of [`Attribute`]'s
/// serialisation).
pub fn fields_of(class: MgmtClass, id: u16, area: &[u8]) -> Option<Value> {
    let a = Attribute::parse(class, id, area).ok()??;
    match serde_json::to_value(&a).ok()? {
        Value::Object(m) => m.into_iter().next().map(|(_, v)| v),
        _ => None,
    }
}

/// The attribute area of a Set: the attribute as it reads now (`current`)
/// with the fields of `set` changed. A field the attribute does not have
/// is refused, with the fields it has. Numbers may be given as text (`"0x20"`);
/// PortInfo's `port_state` also as `down` or `active` (`up`).
pub fn modified(
    class: MgmtClass,
    id: u16,
    current: &[u8],
    set: &BTreeMap<String, Value>,
) -> Result<Vec<u8>, AdminError> {
    let a = Attribute::parse(class, id, current)
        .map_err(|e| AdminError::failed(format!("the attribute as read does not parse: {e}")))?
        .ok_or_else(|| bad("set: fields of an unknown attribute cannot be changed; give data"))?;
    let Value::Object(outer) =
        serde_json::to_value(&a).map_err(|e| AdminError::failed(e.to_string()))?
    else {
        return Err(AdminError::failed("attribute not an object"));
    };
    let (variant, inner) = outer
        .into_iter()
        .next()
        .ok_or_else(|| AdminError::failed("empty attribute"))?;
    // NodeDescription is one string: its field is `text`.
    let (mut fields, is_text) = match inner {
        Value::Object(m) => (m, false),
        other => {
            let mut m = Map::new();
            m.insert("text".into(), other);
            (m, true)
        }
    };
    for (k, v) in set {
        let Some(old) = fields.get(k) else {
            let names: Vec<&str> = fields.keys().map(String::as_str).collect();
            return Err(bad(format!(
                "{variant} has no field {k:?}; its fields: {}",
                names.join(", ")
            )));
        };
        let new = coerce(id, k, old, v).ok_or_else(|| bad(format!("{k}: {v} does not fit")))?;
        fields.insert(k.clone(), new);
    }
    let inner = if is_text {
        fields.remove("text").unwrap_or(Value::Null)
    } else {
        Value::Object(fields)
    };
    let mut outer = Map::new();
    outer.insert(variant.clone(), inner);
    let a: Attribute =
        serde_json::from_value(Value::Object(outer)).map_err(|e| bad(format!("{variant}: {e}")))?;
    let mut area = vec![0u8; class.attribute_len()];
    a.emit(&mut area)
        .map_err(|e| bad(format!("{variant}: {e}")))?;
    Ok(area)
}

/// `v` in the type of `old`: numbers given as text, port states by name.
fn coerce(id: u16, key: &str, old: &Value, v: &Value) -> Option<Value> {
    if id == PortInfo::ID
        && key == "port_state"
        && let Some(s) = v.as_str()
    {
        return match s.to_ascii_lowercase().as_str() {
            "down" => Some(Value::from(PortInfo::DOWN)),
            "active" | "up" => Some(Value::from(PortInfo::ACTIVE)),
            n => parse_number(n).map(Value::from),
        };
    }
    match (old, v) {
        (Value::Number(_), Value::String(s)) => parse_number(s).map(Value::from),
        (Value::Bool(_), Value::String(s)) => s.parse::<bool>().ok().map(Value::Bool),
        (Value::String(_), Value::Number(n)) => Some(Value::String(n.to_string())),
        _ => Some(v.clone()),
    }
}

/// The answer to show for `ans`.
pub fn answer_of(q: &MadQuery, ans: &Answer) -> MadAnswer {
    let m = &ans.mad;
    let fields = fields_of(m.class, m.attribute, &m.data);
    let data = fields
        .is_none()
        .then(|| m.data.iter().map(|b| format!("{b:02x}")).collect());
    let status_text = if m.class.is_smp() && m.status == STATUS_MKEY {
        "M_Key refused: the Set was not applied".to_string()
    } else {
        m.status.describe()
    };
    MadAnswer {
        target: q.target_text(),
        from: ans.from,
        tries: ans.tries,
        rtt_ms: ans.rtt_ms,
        class: m.class.to_string(),
        method: m.method.to_string(),
        status: m.status.0,
        status_text,
        attribute: attr::name(m.class, m.attribute)
            .map_or_else(|| format!("{:#06x}", m.attribute), str::to_string),
        attribute_id: m.attribute,
        modifier: m.modifier,
        fields,
        data,
        return_path: m
            .dr
            .as_ref()
            .map(|d| {
                d.ret
                    .iter()
                    .map(|h| ReturnHop {
                        hr: h.hr,
                        native: h.native.to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn port_info() -> PortInfo {
        PortInfo {
            mkey: 7,
            address: Address(0x0140),
            san_id: Address(0x0100),
            manager_address: Address(0),
            mkey_lease_period: 0,
            mtu: 1500,
            cost: 1,
            local_port_num: 0,
            port_state: PortInfo::ACTIVE,
            mkey_protect_bits: 0,
            link_kind: 2,
            mkey_violations: 0,
            lrt_entries: 3,
            buddies: 1,
            native: NativeAddr::mac([2, 0, 0, 0, 0, 1]),
        }
    }

    fn area<A>(a: &A, f: impl Fn(&A, &mut [u8]) -> mgmt::Result<()>) -> Vec<u8> {
        let mut v = vec![0; 64];
        f(a, &mut v).unwrap();
        v
    }

    #[test]
    fn names_and_numbers() {
        assert_eq!(attribute_id("PortInfo"), Some(0x0015));
        assert_eq!(attribute_id("port_info"), Some(0x0015));
        assert_eq!(attribute_id("counters"), Some(0x0012));
        assert_eq!(attribute_id("0xff12"), Some(0xFF12));
        assert_eq!(attribute_id("LrtBlock"), Some(0xFF12));
        assert_eq!(attribute_id("nope"), None);
        assert_eq!(class_of("perf"), Some(MgmtClass::PERF));
        assert_eq!(class_of("0x81"), Some(MgmtClass::SUBN_DR));
        assert_eq!(class_of("0x181"), None);
    }

    #[test]
    fn classes_follow_the_attribute_and_the_target() {
        let mut q = MadQuery {
            dst: Some(Address(0x0140)),
            attribute: "counters".into(),
            ..MadQuery::default()
        };
        assert_eq!(q.class().unwrap(), MgmtClass::PERF);
        q.attribute = "node_info".into();
        assert_eq!(q.class().unwrap(), MgmtClass::SUBN);
        q.class = Some("subn_dr".into());
        assert!(q.class().is_err(), "subn_dr without a route");
        q.class = None;
        q.dst = None;
        q.dr = vec![DrHop {
            hr: Address(0x0101),
            native: "02:00:00:00:00:02".into(),
        }];
        assert_eq!(q.class().unwrap(), MgmtClass::SUBN_DR);
        assert!(q.check().is_ok());
        assert_eq!(
            q.egress(&[Address(0x0100), Address(0x0101)]).unwrap(),
            Some(PortId::new(1))
        );
        assert!(q.egress(&[Address(0x0100)]).is_err());
    }

    #[test]
    fn checks() {
        let ok = MadQuery {
            dst: Some(Address(0x0140)),
            attribute: "port_info".into(),
            ..MadQuery::default()
        };
        assert!(ok.check().is_ok());
        let cases = [
            MadQuery {
                dst: None,
                ..ok.clone()
            },
            MadQuery {
                dst: Some(Address(0x0010)),
                ..ok.clone()
            },
            MadQuery {
                mkey: Some("zz".into()),
                ..ok.clone()
            },
            MadQuery {
                timeout_ms: Some(0),
                ..ok.clone()
            },
            MadQuery {
                retries: Some(99),
                ..ok.clone()
            },
            MadQuery {
                attribute: "bogus".into(),
                ..ok.clone()
            },
            MadQuery {
                set: [("cost".to_string(), json!(5))].into(),
                ..ok.clone()
            },
            MadQuery {
                dr: vec![DrHop {
                    hr: Address(0x0101),
                    native: "nope".into(),
                }],
                dst: None,
                ..ok.clone()
            },
        ];
        for q in cases {
            assert!(q.check().is_err(), "{q:?}");
        }
        assert_eq!(ok.budget_ms(), 3_000);
        assert_eq!(
            MadQuery {
                mkey: Some("0x10".into()),
                ..ok
            }
            .mkey()
            .unwrap(),
            16
        );
    }

    #[test]
    fn get_modify_set_changes_only_what_is_named() {
        let cur = area(&port_info(), PortInfo::emit);
        let set: BTreeMap<String, Value> = [
            ("cost".to_string(), json!(5)),
            ("port_state".to_string(), json!("down")),
            ("mtu".to_string(), json!("0x400")),
        ]
        .into();
        let new = modified(MgmtClass::SUBN, PortInfo::ID, &cur, &set).unwrap();
        let p = PortInfo::parse(&new).unwrap();
        assert_eq!((p.cost, p.port_state, p.mtu), (5, PortInfo::DOWN, 1024));
        assert_eq!(p.mkey, 7);
        assert_eq!(p.native, port_info().native);
        // A field it does not have: refused, with the fields it has.
        let e = modified(
            MgmtClass::SUBN,
            PortInfo::ID,
            &cur,
            &[("colour".to_string(), json!(1))].into(),
        )
        .unwrap_err();
        assert!(e.message.contains("port_state"), "{}", e.message);
        // A value that does not fit.
        assert!(
            modified(
                MgmtClass::SUBN,
                PortInfo::ID,
                &cur,
                &[("cost".to_string(), json!(70000))].into()
            )
            .is_err()
        );
    }

    #[test]
    fn a_partition_table_is_its_entries() {
        assert_eq!(attribute_id("PartitionTable"), Some(0x0016));
        assert_eq!(attribute_id("pkey_table"), Some(0x0016));
        let mut cur = vec![0u8; 64];
        cur[..2].copy_from_slice(&[0xFF, 0xFF]);
        let id = attr::PartitionTable::ID;
        assert_eq!(
            fields_of(MgmtClass::SUBN, id, &cur),
            Some(json!({"entries": [["0x7fff", "full"]]}))
        );
        let set: BTreeMap<String, Value> = [(
            "entries".to_string(),
            json!([["0x7fff", "limited"], [16, "full"]]),
        )]
        .into();
        let new = modified(MgmtClass::SUBN, id, &cur, &set).unwrap();
        assert_eq!(&new[..6], &[0x7F, 0xFF, 0x80, 0x10, 0, 0]);
        // Not a key, not a membership, a key twice.
        for bad in [
            json!([["0x8000", "full"]]),
            json!([[0, "full"]]),
            json!([["0x10", "both"]]),
            json!([["0x10", "full"], [16, "limited"]]),
        ] {
            let set: BTreeMap<String, Value> = [("entries".to_string(), bad.clone())].into();
            assert!(modified(MgmtClass::SUBN, id, &cur, &set).is_err(), "{bad}");
        }
    }

    #[test]
    fn node_description_is_its_text() {
        let cur = area(&NodeDescription("old".into()), NodeDescription::emit);
        assert_eq!(
            fields_of(MgmtClass::SUBN, NodeDescription::ID, &cur),
            Some(json!("old"))
        );
        let new = modified(
            MgmtClass::SUBN,
            NodeDescription::ID,
            &cur,
            &[("text".to_string(), json!("edge-7"))].into(),
        )
        .unwrap();
        assert_eq!(NodeDescription::parse(&new).unwrap().0, "edge-7");
    }

    #[test]
    fn data_areas() {
        let q = MadQuery {
            dst: Some(Address(0x0140)),
            attribute: "0x7777".into(),
            method: MadMethod::Set,
            data: Some("01 02 0a".into()),
            ..MadQuery::default()
        };
        let a = q.data_area(MgmtClass::SUBN).unwrap().unwrap();
        assert_eq!((a.len(), &a[..3]), (64, &[1u8, 2, 10][..]));
        // A character of two bytes at an odd offset ("aé0": four bytes,
        // the first pair ends inside it) and a sign were read as hex.
        for bad in ["0", "zz", &"00".repeat(65), "a\u{e9}0", "+a+b", "0\u{e9}"] {
            let q = MadQuery {
                data: Some(bad.to_string()),
                ..q.clone()
            };
            assert!(q.data_area(MgmtClass::SUBN).is_err(), "{bad}");
        }
    }
}
