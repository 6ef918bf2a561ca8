//! The readable text view of a [`Report`].

use core::fmt::Write as _;

use crate::decode::addr_text;
use crate::hex;
use crate::link::Encap;
use crate::model::*;

/// Renders a report as lines of text (ending with a newline).
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    match r {
        Report::Packet(p) => packet(&mut s, p),
        Report::Skipped(k) => {
            first_line(
                &mut s,
                k.index,
                k.timestamp.as_ref(),
                k.frame_len,
                k.orig_len,
                Some(k.link),
            );
            encap(&mut s, &k.encap);
            let _ = writeln!(
                s,
                "  skipped: {} (at frame byte {}: {})",
                k.skipped.reason, k.skipped.offset, k.skipped.field
            );
        }
        Report::Error(e) => {
            first_line(
                &mut s,
                e.index,
                e.timestamp.as_ref(),
                e.frame_len,
                None,
                None,
            );
            let _ = writeln!(s, "  error: {}", error_text(&e.error));
        }
    }
    s
}

/// The error as one line: field, offset(s) and message.
pub fn error_text(e: &ErrorInfo) -> String {
    if e.field.starts_with("pcap") || e.field.starts_with("capture") {
        return format!("{} at file byte {}: {}", e.field, e.offset, e.message);
    }
    match e.packet_offset {
        Some(p) => format!(
            "{} at frame byte {} (byte {} of the MessageWay packet): {}",
            e.field,
            e.offset,
            e.offset.saturating_sub(p),
            e.message
        ),
        None => format!("{} at frame byte {}: {}", e.field, e.offset, e.message),
    }
}

/// The one-line message for stderr: `packet N: field at byte ...: what`.
pub fn error_line(e: &ErrorReport) -> String {
    format!("packet {}: {}", e.index, error_text(&e.error))
}

fn first_line(
    s: &mut String,
    index: u64,
    ts: Option<&TimeInfo>,
    frame_len: usize,
    orig_len: Option<usize>,
    link: Option<&str>,
) {
    let _ = write!(s, "packet {index}");
    if let Some(t) = ts {
        let _ = write!(s, "  {}", t.utc);
    }
    let _ = write!(s, "  frame {frame_len} bytes");
    if let Some(o) = orig_len.filter(|&o| o != frame_len) {
        let _ = write!(s, " ({o} on the wire)");
    }
    if let Some(l) = link {
        let _ = write!(s, "  link {l}");
    }
    s.push('\n');
}

fn encap(s: &mut String, e: &Encap) {
    if let Some(eth) = &e.eth {
        let _ = write!(s, "  ethernet {} > {}", eth.src, eth.dst);
        if let Some(v) = &eth.vlan {
            let _ = write!(
                s,
                " vlan {} (tpid 0x{:04x}, pcp {}{})",
                v.vid,
                v.tpid,
                v.pcp,
                if v.dei { ", dei" } else { "" }
            );
        }
        let _ = writeln!(s, " type 0x{:04x}", eth.ethertype);
    }
    if let Some(ip) = &e.ip {
        let _ = writeln!(
            s,
            "  ipv{} {} > {} protocol {} ttl {} length {}",
            ip.version, ip.src, ip.dst, ip.protocol, ip.ttl, ip.len
        );
    }
    if let Some(u) = &e.udp {
        let _ = writeln!(
            s,
            "  udp {} > {} length {} checksum 0x{:04x}",
            u.src_port, u.dst_port, u.len, u.checksum
        );
    }
}

fn spaced_hex(h: &str) -> String {
    let bytes: Vec<u8> = crate::hex::parse(h).unwrap_or_default();
    hex::spaced(&bytes)
}

fn l2rh(s: &mut String, indent: &str, n: usize, l: &L2rhInfo) {
    let _ = writeln!(
        s,
        "{indent}L2RH {n} @{}: L={} ({} word{}) {}",
        l.offset,
        l.len,
        l.words,
        if l.words == 1 { "" } else { "s" },
        spaced_hex(&l.content_hex)
    );
    if let Some(h) = &l.hop {
        let _ = write!(s, "{indent}  hop: egress 0x{:04x}", h.egress);
        if h.native_only {
            let _ = write!(s, " (native hop only)");
        }
        match (&h.mac, &h.udp) {
            (Some(mac), Some(udp)) => {
                let _ = write!(s, " native {mac} / {udp}");
            }
            (None, Some(udp)) => {
                let _ = write!(s, " native {udp}");
            }
            _ => {
                let _ = write!(s, " (egress only)");
            }
        }
        s.push('\n');
    }
}

fn endian_text(h: &HeaderInfo) -> String {
    let order = if h.little_endian {
        "little endian"
    } else {
        "big endian"
    };
    let swap = match h.swap_bits {
        Some(8) => "8-bit data (no swap)".to_string(),
        Some(b) => format!("swap as {b}-bit fields"),
        None => format!("reserved swap code {}", h.e & 7),
    };
    format!("0x{:x}: {order}, {swap}", h.e)
}

fn pt_text(h: &HeaderInfo) -> String {
    format!("0x{:04x} {}", h.packet_type, h.packet_class)
}

fn te_text(h: &HeaderInfo) -> String {
    match &h.type_name {
        Some(n) => format!("{} ({n})", h.type_ext),
        None => h.type_ext.to_string(),
    }
}

fn header(s: &mut String, h: &HeaderInfo, rt_part: Option<&RtPartInfo>) {
    let _ = writeln!(s, "  EEP header @{}", h.offset);
    let _ = writeln!(s, "    DA        {}", addr_text(h.dst));
    let _ = writeln!(s, "    priority  {}", h.priority);
    let _ = writeln!(s, "    version   {}", h.version);
    let _ = writeln!(s, "    PT        {}", pt_text(h));
    let _ = writeln!(s, "    TE        {}", te_text(h));
    let _ = writeln!(s, "    E         {}", endian_text(h));
    let _ = writeln!(s, "    PL        {}", h.pad_len);
    let _ = writeln!(
        s,
        "    DL        {} word{} ({} bytes)",
        h.data_words,
        if h.data_words == 1 { "" } else { "s" },
        u64::from(h.data_words) * 8
    );
    let _ = writeln!(s, "    SA        {}", addr_text(h.src));
    let _ = write!(s, "    Free      0x{:04x}", h.free);
    if let Some(p) = rt_part {
        let _ = write!(s, " ({})", part_text(p));
    }
    s.push('\n');
}

fn part_text(p: &RtPartInfo) -> String {
    if !p.valid {
        format!("not a valid RT part marker: {}/{}", p.index, p.count)
    } else if p.count == 1 {
        "whole RT".into()
    } else {
        format!("RT part {} of {}", p.index, p.count)
    }
}

fn packet(s: &mut String, p: &PacketReport) {
    first_line(
        s,
        p.index,
        p.timestamp.as_ref(),
        p.frame_len,
        p.orig_len,
        Some(p.link),
    );
    encap(s, &p.encap);
    let l2 = match p.l2rhs.len() {
        0 => String::new(),
        1 => " (1 L2RH)".to_string(),
        n => format!(" ({n} L2RHs)"),
    };
    let _ = writeln!(
        s,
        "  {} packet at frame byte {}, {} bytes{l2}, padding {} bytes",
        p.kind, p.packet_offset, p.packet_len, p.padding_len
    );
    for (i, l) in p.l2rhs.iter().enumerate() {
        l2rh(s, "  ", i + 1, l);
    }
    header(
        s,
        &p.header,
        p.message.as_ref().and_then(|m| m.rt_part.as_ref()),
    );
    match &p.data_hex {
        Some(h) if p.data_len > 0 => {
            let _ = writeln!(
                s,
                "  data {} bytes: {}{}",
                p.data_len,
                spaced_hex(h),
                if p.data_truncated { " ..." } else { "" }
            );
        }
        _ => {
            let _ = writeln!(s, "  data {} bytes", p.data_len);
        }
    }
    let _ = writeln!(s, "  EI {}", p.ei_hex);
    if let Some(m) = &p.message {
        message(s, m);
    }
    if let Some(m) = &p.mad {
        mad(s, m);
    }
}

fn named<T: core::fmt::LowerHex>(v: T, width: usize, name: &Option<String>) -> String {
    match name {
        Some(n) => format!("{n} (0x{v:0width$x})"),
        None => format!("0x{v:0width$x}"),
    }
}

fn mad(s: &mut String, m: &MadInfo) {
    let _ = writeln!(
        s,
        "  MAD @{}: {} class version {}, {} {}, status 0x{:04x} ({})",
        m.offset,
        named(m.class, 2, &m.class_name),
        m.class_version,
        named(m.method, 2, &m.method_name),
        if m.response { "response" } else { "request" },
        m.status,
        m.status_text
    );
    let _ = writeln!(s, "    TID        {}", m.tid_hex);
    let _ = writeln!(
        s,
        "    attribute  {}, modifier 0x{:08x}",
        named(m.attribute, 4, &m.attribute_name),
        m.modifier
    );
    let _ = writeln!(s, "    M_Key      {}", m.mkey_hex);
    if let Some(dr) = &m.dr {
        let _ = writeln!(
            s,
            "    directed route: {}, hop pointer {}, hop count {}",
            if dr.returning {
                "returning"
            } else {
                "outbound"
            },
            dr.hop_pointer,
            dr.hop_count
        );
        for (name, path) in [
            ("InitialPath", &dr.initial_path),
            ("ReturnPath", &dr.return_path),
        ] {
            if path.is_empty() {
                let _ = writeln!(s, "      {name}: empty");
            }
            for (i, h) in path.iter().enumerate() {
                let native = match (&h.mac, &h.udp) {
                    (Some(mac), Some(udp)) => format!("{mac} / {udp}"),
                    (None, Some(udp)) => udp.clone(),
                    _ if h.native_len == 0 => "-".to_string(),
                    _ => spaced_hex(&h.native_hex),
                };
                let _ = writeln!(
                    s,
                    "      {name}[{i}] @{}: HR 0x{:04x} native {native}",
                    h.offset, h.hr
                );
            }
        }
    }
    match (&m.fields, &m.attribute_hex) {
        (Some(f), _) => {
            let _ = writeln!(
                s,
                "    {}:",
                m.attribute_name.as_deref().unwrap_or("attribute")
            );
            fields(s, "      ", f);
        }
        (None, Some(h)) => {
            let _ = writeln!(s, "    attribute data: {}", spaced_hex(h));
        }
        (None, None) => {}
    }
}

fn fields(s: &mut String, indent: &str, f: &Fields) {
    let width =
        f.0.iter()
            .filter(|x| x.text.is_some())
            .map(|x| x.name.len())
            .max()
            .unwrap_or(0);
    for x in &f.0 {
        match (&x.value, &x.text) {
            (_, Some(t)) => {
                let _ = writeln!(s, "{indent}{:width$}  {t}", x.name);
            }
            (FieldValue::Object(inner), None) => {
                let _ = writeln!(s, "{indent}{}:", x.name);
                fields(s, &format!("{indent}  "), inner);
            }
            (FieldValue::List(items), None) => {
                let _ = writeln!(s, "{indent}{}:", x.name);
                for (i, item) in items.iter().enumerate() {
                    let parts: Vec<String> = item
                        .0
                        .iter()
                        .filter_map(|y| y.text.as_ref().map(|t| format!("{} {t}", y.name)))
                        .collect();
                    let _ = writeln!(s, "{indent}  [{i}] {}", parts.join(", "));
                }
            }
            _ => {}
        }
    }
}

fn message(s: &mut String, m: &MessageInfo) {
    let _ = write!(s, "  {}: {}", m.kind, m.description);
    if let Some(p) = &m.rt_part {
        let _ = write!(s, " [{}]", part_text(p));
    }
    s.push('\n');
    for r in &m.records {
        record(s, r);
    }
    if let Some(e) = &m.enclosed {
        enclosed(s, e);
    }
}

fn mtu_text(m: &MtuInfo) -> String {
    match m.bytes {
        Some(b) => format!("MTU {} words ({b} bytes)", m.words),
        None => "MTU 0 (unlimited)".into(),
    }
}

fn record(s: &mut String, r: &RecordInfo) {
    let role = match r.node {
        Some(n) => format!("node[{n}] {}", r.role),
        None => r.role.clone(),
    };
    let _ = write!(
        s,
        "    @{} {} (pl {}, rl {}) {role}: ",
        r.offset, r.type_name, r.pl, r.rl
    );
    match &r.body {
        RecordBody::Address { address, .. } => {
            let _ = writeln!(s, "{}", addr_text(*address));
        }
        RecordBody::Name { name, name_hex } => {
            let _ = match name {
                Some(n) => writeln!(s, "{n:?}"),
                None => writeln!(s, "(hex) {}", spaced_hex(name_hex)),
            };
        }
        RecordBody::Capability {
            code,
            code_name,
            params,
        } => {
            let _ = write!(
                s,
                "CC {code} {}",
                code_name.as_deref().unwrap_or("(unassigned)")
            );
            if params.is_empty() {
                let _ = writeln!(s, ", no parameters");
            } else {
                let _ = writeln!(s, ", parameters {}", hex::spaced(params));
            }
        }
        RecordBody::Addresses { addresses } => {
            if addresses.is_empty() {
                let _ = writeln!(s, "(empty)");
            } else {
                let list: Vec<String> = addresses.iter().map(|a| format!("0x{a:04x}")).collect();
                let _ = writeln!(s, "{}", list.join(" "));
            }
        }
        RecordBody::SourceRoute { q, l2rhs, mtu } => {
            let _ = writeln!(
                s,
                "Q {q}, {} L2RH{}, {}",
                l2rhs.len(),
                if l2rhs.len() == 1 { "" } else { "s" },
                mtu.as_ref()
                    .map(mtu_text)
                    .unwrap_or_else(|| "no MTU".into())
            );
            for (i, l) in l2rhs.iter().enumerate() {
                l2rh(s, "        ", i + 1, l);
            }
        }
        RecordBody::Mtu { mtu } => {
            let _ = writeln!(s, "{}", mtu_text(mtu));
        }
        RecordBody::RtHeader { san_id, sn } => {
            let _ = writeln!(s, "SAN-ID {}, SN {sn} (0x{sn:04x})", addr_text(*san_id));
        }
    }
}

fn enclosed(s: &mut String, e: &EnclosedInfo) {
    let _ = writeln!(
        s,
        "    enclosed {} bytes @{}: {}{}",
        e.len,
        e.offset,
        spaced_hex(&e.hex),
        if e.hex_truncated { " ..." } else { "" }
    );
    let _ = writeln!(
        s,
        "      {}",
        if e.complete {
            "a whole packet"
        } else {
            "the first bytes of a packet"
        }
    );
    for (i, l) in e.l2rhs.iter().enumerate() {
        l2rh(s, "      ", i + 1, l);
    }
    if let Some(h) = &e.header {
        let _ = writeln!(
            s,
            "      EEP header @{}: DA {} priority {} version {} PT {} TE {} E 0x{:x} PL {} DL {} SA {} Free 0x{:04x}",
            h.offset,
            addr_text(h.dst),
            h.priority,
            h.version,
            pt_text(h),
            te_text(h),
            h.e,
            h.pad_len,
            h.data_words,
            addr_text(h.src),
            h.free
        );
    }
    if let Some(k) = &e.kind {
        let _ = writeln!(s, "      kind {k}");
    }
    if let Some(n) = &e.note {
        let _ = writeln!(s, "      note: {n}");
    }
}
