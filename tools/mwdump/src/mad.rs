//! Decoding a management packet's datagram (PT 0x0006, docs/management.md)
//! into a [`MadInfo`]: the MAD header, the directed route, and the fields
//! of every attribute the `mgmt` crate knows.

use mgmt::attr::{
    Attribute, ClassPortInfo, FibBlock, LrtBlock, NodeDescription, NodeInfo, Notice,
    PartitionTable, PortCounters, PortCountersExtended, PortInfo, RouteEntry, SmInfo, SourceRoute,
};
use mgmt::wire::mad::field::{ATTR_DATA, INITIAL_PATH, RETURN_PATH};
use mgmt::wire::{Mad, MadRepr, Method, PathHop, mad_in};
use rrp::wire::Packet;
use rrp::{Address, NativeAddr};

use crate::decode::{addr_text, snake_kind};
use crate::hex;
use crate::model::{DrInfo, ErrorInfo, Field, FieldValue, Fields, MadInfo, PathHopInfo};

/// A `mgmt` error whose offsets count from a packet at `base` in the frame.
pub fn mgmt_error(e: &mgmt::Error, base: usize) -> ErrorInfo {
    ErrorInfo {
        field: e.field.into(),
        offset: base + e.offset,
        packet_offset: Some(base),
        kind: snake_kind(&e.kind),
        message: e.kind.to_string(),
    }
}

/// The MAD of a management packet that lies at `base` in the frame. Errors
/// count from the packet's first byte (`mgmt_error` adds `base`).
pub fn mad_info(p: &Packet<&[u8]>, base: usize) -> mgmt::Result<MadInfo> {
    let at = p.layout().data_offset();
    let view: Mad<&[u8]> = mad_in(p)?;
    let m = MadRepr::parse(&view).map_err(|e| e.shifted(at))?;
    let area_at = at + ATTR_DATA;
    // A Get's attribute area carries nothing: it is not decoded (and shown
    // in hex only when it is not all zero).
    let get = m.method == Method::GET;
    let attr = if get {
        None
    } else {
        Attribute::parse(m.class, m.attribute, &m.data).map_err(|e| e.shifted(area_at))?
    };
    let attribute_hex =
        (attr.is_none() && !(get && m.data.iter().all(|&b| b == 0))).then(|| hex::encode(&m.data));
    let frame_at = base + at;
    let dr = m.dr.as_ref().map(|dr| DrInfo {
        returning: dr.returning,
        hop_pointer: dr.hop_pointer,
        hop_count: dr.hop_count,
        initial_path: path_info(&dr.initial, frame_at + INITIAL_PATH.start),
        return_path: path_info(&dr.ret, frame_at + RETURN_PATH.start),
    });
    Ok(MadInfo {
        offset: frame_at,
        base_version: view.base_version(),
        class: m.class.0,
        class_name: m.class.name().map(Into::into),
        class_version: m.class_version,
        response: m.response,
        method: m.method.0,
        method_name: m.method.name().map(Into::into),
        status: m.status.0,
        status_text: m.status.describe(),
        tid: m.tid,
        tid_hex: format!("0x{:016x}", m.tid),
        attribute: m.attribute,
        attribute_name: mgmt::attr::name(m.class, m.attribute).map(Into::into),
        modifier: m.modifier,
        mkey: m.mkey,
        mkey_hex: format!("0x{:016x}", m.mkey),
        dr,
        attribute_hex,
        fields: attr.as_ref().map(fields),
    })
}

fn path_info(hops: &[PathHop], mut offset: usize) -> Vec<PathHopInfo> {
    hops.iter()
        .map(|h| {
            let i = PathHopInfo {
                offset,
                hr: h.hr.0,
                native_len: h.native.len(),
                native_hex: hex::encode(h.native.as_bytes()),
                mac: h.native.as_mac().map(|m| hex::colons(&m)),
                udp: h.native.as_udp().map(|s| s.to_string()),
            };
            offset += h.encoded_len();
            i
        })
        .collect()
}

/// A native address as text: MAC and/or UDP endpoint, or hex, or `-`.
pub fn native_text(n: &NativeAddr) -> String {
    match (n.as_mac(), n.as_udp()) {
        (Some(m), Some(u)) => format!("{} / {u}", hex::colons(&m)),
        (None, Some(u)) => u.to_string(),
        _ if n.is_empty() => "-".into(),
        _ => hex::colons(n.as_bytes()),
    }
}

/// Builds the fields of one attribute.
#[derive(Default)]
struct B(Vec<Field>);

impl B {
    fn push(&mut self, name: &'static str, value: FieldValue, text: Option<String>) {
        self.0.push(Field { name, value, text });
    }
    fn num(&mut self, name: &'static str, v: impl Into<u64>) {
        let v = v.into();
        self.push(name, FieldValue::Num(v), Some(v.to_string()));
    }
    /// A number with its meaning in the text view: `3 (router)`.
    fn named(&mut self, name: &'static str, v: impl Into<u64>, label: Option<&str>) {
        let v = v.into();
        let t = match label {
            Some(l) => format!("{v} ({l})"),
            None => v.to_string(),
        };
        self.push(name, FieldValue::Num(v), Some(t));
    }
    fn addr(&mut self, name: &'static str, a: Address) {
        self.push(name, FieldValue::Num(a.0.into()), Some(addr_text(a.0)));
    }
    /// A partition key as records carry it: `0x0010`, 0 with its meaning.
    fn partition(&mut self, v: u16, zero: &str) {
        let t = if v == 0 {
            format!("0 ({zero})")
        } else {
            format!("{v:#06x}")
        };
        self.push("partition", FieldValue::Num(v.into()), Some(t));
    }
    fn bool(&mut self, name: &'static str, v: bool) {
        self.push(name, FieldValue::Bool(v), Some(v.to_string()));
    }
    /// A 64-bit value: a number, and a `_hex` string companion (JSON only).
    fn u64_hex(&mut self, name: &'static str, hex_name: &'static str, v: u64) {
        let h = format!("0x{v:016x}");
        self.push(name, FieldValue::Num(v), Some(h.clone()));
        self.push(hex_name, FieldValue::Text(h), None);
    }
    fn native(&mut self, n: &NativeAddr) {
        let opt = |s: Option<String>| s.map(FieldValue::Text).unwrap_or(FieldValue::Null);
        self.push("native_len", FieldValue::Num(n.len() as u64), None);
        self.push(
            "native_hex",
            FieldValue::Text(hex::encode(n.as_bytes())),
            Some(native_text(n)),
        );
        self.push("native_mac", opt(n.as_mac().map(|m| hex::colons(&m))), None);
        self.push("native_udp", opt(n.as_udp().map(|s| s.to_string())), None);
    }
    fn done(self) -> Fields {
        Fields(self.0)
    }
}

/// The fields of an attribute, in layout order.
pub fn fields(a: &Attribute) -> Fields {
    let mut b = B::default();
    match a {
        Attribute::ClassPortInfo(c) => class_port_info(&mut b, c),
        Attribute::Notice(n) => notice(&mut b, n),
        Attribute::NodeDescription(NodeDescription(t)) => {
            b.push("text", FieldValue::Text(t.clone()), Some(format!("{t:?}")));
        }
        Attribute::NodeInfo(n) => node_info(&mut b, n),
        Attribute::PortCounters(p) => {
            counters(&mut b, p.port_select, &p.counters, &PortCounters::NAMES)
        }
        Attribute::PortCountersExtended(p) => counters(
            &mut b,
            p.port_select,
            &p.counters,
            &PortCountersExtended::NAMES,
        ),
        Attribute::PortInfo(p) => port_info(&mut b, p),
        Attribute::PartitionTable(t) => partition_table(&mut b, t),
        Attribute::SmInfo(s) => sm_info(&mut b, s),
        Attribute::RouteEntry(r) => route_entry(&mut b, r),
        Attribute::FibBlock(f) => fib_block(&mut b, f),
        Attribute::LrtBlock(l) => lrt_block(&mut b, l),
        Attribute::SourceRoute(r) => source_route(&mut b, r),
        Attribute::NodeRecord(r) => {
            b.num("total", r.total);
            b.addr("address", r.address);
            b.u64_hex("identity", "identity_hex", r.identity);
            b.num("node_type", r.node_type);
            b.num("level", r.level);
            b.num("num_ports", r.num_ports);
            b.num("manager", r.manager);
            b.push(
                "description",
                FieldValue::Text(r.description.clone()),
                Some(format!("{:?}", r.description)),
            );
        }
        Attribute::Neighbour(n) => {
            b.addr("address", n.address);
            b.native(&n.native);
        }
        Attribute::McMemberRecord(m) => {
            b.addr("group", m.group);
            b.addr("member", m.member);
            b.named(
                "join_state",
                m.join_state,
                match m.join_state {
                    mgmt::attr::mc_member_record::FULL_MEMBER => Some("full member"),
                    mgmt::attr::mc_member_record::SEND_ONLY => Some("send-only"),
                    _ => None,
                },
            );
            b.partition(m.partition, "the default partition");
            b.named("mtu", m.mtu, Some("bytes"));
            b.named("group_mtu", m.group_mtu, Some("bytes"));
            b.num("total", m.total);
        }
        Attribute::McGroupRecord(g) => {
            b.addr("group", g.group);
            b.num("total", g.total);
            b.named("mtu", g.mtu, Some("bytes"));
            b.num("members", g.members);
            b.num("full_members", g.full_members);
            b.num("flags", g.flags);
            b.partition(g.partition, "not fixed yet");
        }
        Attribute::InformInfo(i) => {
            b.addr("subscriber", i.subscriber);
            b.num("total", i.total);
            b.addr("issuer_first", i.issuer_first);
            b.addr("issuer_last", i.issuer_last);
            b.num("trap_number", i.trap_number);
            b.bool("is_generic", i.is_generic);
            b.bool("subscribe", i.subscribe);
            b.num("type", i.notice_type);
            b.num("producer_type", i.producer_type);
            b.named("lease_s", i.lease_s, Some("seconds"));
        }
        Attribute::AddressTable(t) => {
            let records = t
                .records
                .iter()
                .map(|r| {
                    let mut x = B::default();
                    x.u64_hex("identity", "identity_hex", r.identity);
                    x.addr("address", r.address);
                    x.done()
                })
                .collect();
            b.push("records", FieldValue::List(records), None);
        }
        Attribute::PartitionsText(t) => {
            b.u64_hex("version", "version_hex", t.version);
            b.named("total", t.total, Some("bytes"));
            b.named("offset", t.offset, Some("bytes"));
            b.named("length", t.text.len() as u64, Some("bytes"));
        }
        Attribute::PathRecord(p) => {
            b.addr("destination", p.destination);
            b.addr("source", p.source);
            b.named("kind", p.kind, mgmt::attr::path_record::kind_name(p.kind));
            b.addr("first_hr", p.first_hr);
            b.num("q", p.q);
            b.named("mtu", p.mtu, Some("bytes"));
            b.native(&p.native);
        }
    }
    b.done()
}

fn class_port_info(b: &mut B, c: &ClassPortInfo) {
    b.num("base_version", c.base_version);
    b.num("class_version", c.class_version);
    let caps: Vec<&str> = [
        (ClassPortInfo::CAP_TRAPS, "traps"),
        (ClassPortInfo::CAP_DIRECTED_ROUTES, "directed routes"),
        (ClassPortInfo::CAP_MKEY, "M_Key"),
    ]
    .iter()
    .filter(|(bit, _)| c.capability_mask & bit != 0)
    .map(|(_, n)| *n)
    .collect();
    let label = (!caps.is_empty()).then(|| caps.join(", "));
    b.push(
        "capability_mask",
        FieldValue::Num(c.capability_mask.into()),
        Some(match label {
            Some(l) => format!("0x{:04x} ({l})", c.capability_mask),
            None => format!("0x{:04x}", c.capability_mask),
        }),
    );
    b.named("resp_time_value", c.resp_time_value, Some("ms"));
    b.addr("trap_address", c.trap_address);
}

fn notice(b: &mut B, n: &Notice) {
    b.bool("is_generic", n.is_generic);
    b.named("type", n.notice_type, n.type_name());
    b.named("producer_type", n.producer_type, n.producer_name());
    b.named("trap_number", n.trap_number, n.trap_name());
    b.addr("issuer", n.issuer);
    b.bool("toggle", n.toggle);
    b.num("count", n.count);
    let mut d = B::default();
    if let Some(x) = n.port_state_details() {
        d.num("port", x.port);
        d.named("state", x.state, port_state_name(x.state));
        d.addr("hr", x.hr);
    } else if let Some(x) = n.drops_details() {
        d.num("port", x.port);
        d.num("drops", x.drops);
    } else if let Some(x) = n.bad_mkey_details() {
        d.addr("requester", x.requester);
        d.named("method", x.method.0, x.method.name());
        d.named("class", x.class.0, x.class.name());
        d.named(
            "attribute",
            x.attribute,
            mgmt::attr::name(x.class, x.attribute),
        );
        d.push(
            "modifier",
            FieldValue::Num(x.modifier.into()),
            Some(format!("0x{:08x}", x.modifier)),
        );
        d.u64_hex("key", "key_hex", x.key);
    } else if let Some(x) = n.rt_limit_details() {
        d.addr("from", x.from);
        d.num("port", x.port);
        d.named(
            "limit",
            x.which,
            match x.which {
                Notice::RT_LIMIT_NEIGHBOUR => Some("per neighbour"),
                Notice::RT_LIMIT_HR => Some("per HR"),
                _ => None,
            },
        );
        d.num("max", x.max);
    } else if let Some(x) = n.auth_refused_details() {
        d.addr("from", x.from);
        d.num("port", x.port);
        d.named(
            "reason",
            n.details[3],
            x.why.map(rrp::wire::auth::AuthRefusal::name),
        );
        d.native(&x.native);
    }
    b.push(
        "details_hex",
        FieldValue::Text(hex::encode(&n.details)),
        d.0.is_empty().then(|| hex::spaced(trim_zeros(&n.details))),
    );
    let details = if d.0.is_empty() {
        FieldValue::Null
    } else {
        FieldValue::Object(d.done())
    };
    b.push("details", details, None);
}

/// The bytes up to the last non-zero one.
fn trim_zeros(b: &[u8]) -> &[u8] {
    let end = b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
    &b[..end]
}

fn port_state_name(s: u8) -> Option<&'static str> {
    PortInfo {
        port_state: s,
        ..PortInfo::default()
    }
    .port_state_name()
}

fn node_info(b: &mut B, n: &NodeInfo) {
    b.num("base_version", n.base_version);
    b.num("class_version", n.class_version);
    b.named("node_type", n.node_type, n.node_type_name());
    b.num("num_ports", n.num_ports);
    b.u64_hex(
        "system_image_identity",
        "system_image_identity_hex",
        n.system_image_identity,
    );
    b.u64_hex("node_identity", "node_identity_hex", n.node_identity);
    b.u64_hex("port_identity", "port_identity_hex", n.port_identity);
    b.num("partition_cap", n.partition_cap);
    let level = match n.implementation_level {
        1 => Some("A"),
        2 => Some("B"),
        3 => Some("C"),
        4 => Some("D"),
        _ => None,
    };
    b.named("implementation_level", n.implementation_level, level);
    let r = n.revision;
    b.push(
        "revision",
        FieldValue::Num(r.into()),
        Some(format!(
            "0x{r:08x} ({}.{}.{})",
            r >> 16,
            (r >> 8) & 0xFF,
            r & 0xFF
        )),
    );
    b.num("local_port_num", n.local_port_num);
    b.num("vendor_id", n.vendor_id);
    b.addr("local_port_address", n.local_port_address);
}

/// PortCounters and PortCountersExtended: the counters by their `names`.
fn counters(b: &mut B, port_select: u8, counters: &[u64], names: &[&'static str]) {
    b.num("port_select", port_select);
    b.num("counter_count", counters.len() as u64);
    let known = counters.len().min(names.len());
    let mut c = B::default();
    for (name, v) in names.iter().zip(counters) {
        c.num(name, *v);
    }
    b.push("counters", FieldValue::Object(c.done()), None);
    let extra = &counters[known..];
    if !extra.is_empty() {
        let t: Vec<String> = extra.iter().map(u64::to_string).collect();
        b.push(
            "extra_counters",
            FieldValue::Nums(extra.to_vec()),
            Some(t.join(" ")),
        );
    }
}

fn port_info(b: &mut B, p: &PortInfo) {
    b.u64_hex("mkey", "mkey_hex", p.mkey);
    b.addr("address", p.address);
    b.addr("san_id", p.san_id);
    b.addr("manager_address", p.manager_address);
    b.named("mkey_lease_period", p.mkey_lease_period, Some("s"));
    b.named("mtu", p.mtu, Some("bytes"));
    b.num("cost", p.cost);
    b.num("local_port_num", p.local_port_num);
    b.named("port_state", p.port_state, p.port_state_name());
    b.num("mkey_protect_bits", p.mkey_protect_bits);
    let kind = match p.link_kind {
        PortInfo::LINK_MEMORY => Some("memory"),
        PortInfo::LINK_UDP => Some("UDP"),
        PortInfo::LINK_ETHERNET => Some("Ethernet"),
        _ => None,
    };
    b.named("link_kind", p.link_kind, kind);
    b.num("mkey_violations", p.mkey_violations);
    b.num("lrt_entries", p.lrt_entries);
    b.num("buddies", p.buddies);
    b.native(&p.native);
}

fn partition_table(b: &mut B, t: &PartitionTable) {
    let entries = t
        .entries
        .iter()
        .map(|(k, m)| {
            let mut x = B::default();
            x.push("key", FieldValue::Num(k.get().into()), Some(k.to_string()));
            x.push(
                "membership",
                FieldValue::Text(m.name().into()),
                Some(m.name().into()),
            );
            x.done()
        })
        .collect();
    b.push("entries", FieldValue::List(entries), None);
}

fn sm_info(b: &mut B, s: &SmInfo) {
    b.u64_hex("identity", "identity_hex", s.identity);
    b.u64_hex("sm_key", "sm_key_hex", s.sm_key);
    b.num("act_count", s.act_count);
    b.num("priority", s.priority);
    b.named(
        "sm_state",
        s.sm_state,
        (s.sm_state == 0).then_some("not active"),
    );
}

fn route_entry(b: &mut B, r: &RouteEntry) {
    b.named("kind", r.kind, r.kind_name());
    b.num("egress_port", r.egress_port);
    b.addr("egress_address", r.egress_address);
    b.num("q", r.q);
    b.addr("first_hr", r.first_hr);
    b.named("mtu", r.mtu, Some("bytes"));
    b.native(&r.native);
    b.addr("next_address", r.next_address);
}

fn source_route(b: &mut B, r: &SourceRoute) {
    b.num("actual_port", r.actual_port);
    b.num("hop_count", r.hop_count);
    b.addr("actual_address", r.actual_address);
    let hops: Vec<String> = r.expected.iter().map(|a| a.to_string()).collect();
    b.push(
        "expected",
        FieldValue::Text(hops.join(",")),
        Some(hops.join(" ")),
    );
}

fn fib_block(b: &mut B, f: &FibBlock) {
    let entries = f
        .entries
        .iter()
        .map(|e| {
            let mut x = B::default();
            x.named("kind", e.kind, mgmt::attr::route_entry::kind_name(e.kind));
            x.num("egress_port", e.egress_port);
            x.num("q", e.q);
            x.done()
        })
        .collect();
    b.push("entries", FieldValue::List(entries), None);
}

fn lrt_block(b: &mut B, l: &LrtBlock) {
    b.num("total", l.total);
    let entries = l
        .entries
        .iter()
        .map(|e| {
            let mut x = B::default();
            x.addr("address", e.address);
            let mut flags = Vec::new();
            if e.is_router() {
                flags.push("router");
            }
            if e.is_static() {
                flags.push("static");
            }
            let label = (!flags.is_empty()).then(|| flags.join(", "));
            x.named("flags", e.flags, label.as_deref());
            x.num("keepalives_missed", e.keepalives_missed);
            x.done()
        })
        .collect();
    b.push("entries", FieldValue::List(entries), None);
}
