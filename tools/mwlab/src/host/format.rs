//! Addresses, hops and routes as text, as the control protocol reports them
//! and mwgen's `--l2` syntax reads them back.

use rrp::Address;
use rrp::kind::PacketType;
use rrp::wire::{RouterHop, SourceRoute};
use rrp::{LinkKind, NativeAddr};

/// A native address as text for a link of kind `link` (six bytes are a MAC
/// on Ethernet and an IPv4 endpoint on UDP): `02:4d:57:00:01:15` (MAC,
/// [`NativeAddr`]'s `Display`), `127.0.0.1:4001` or `[::1]:4001` (UDP), `-`
/// (empty), colon-separated hex otherwise. [`NativeAddr`]'s `FromStr` reads
/// each back.
pub fn format_native(n: &NativeAddr, link: LinkKind) -> String {
    match (link, n.as_udp()) {
        (LinkKind::Udp, Some(sa)) => sa.to_string(),
        _ => n.to_string(),
    }
}

/// A router hop as text, in mwgen's `--l2` syntax ([`parse_hop`](mwgen::profile::parse_hop)):
/// `EGRESS@NATIVE`, `EGRESS` (egress only) or `@NATIVE` (native only); a
/// six-byte native is read as a UDP endpoint `ip:port` ([`format_hop_on`]
/// for Ethernet).
pub fn format_hop(h: &RouterHop) -> String {
    format_hop_on(h, LinkKind::Udp)
}

/// A router hop as text, natives as [`format_native`] writes them for a
/// link of kind `link` (the kind of the SAN the hop's native is on; in the
/// lab every SAN is of the host's kind).
pub fn format_hop_on(h: &RouterHop, link: LinkKind) -> String {
    let native = if h.native.is_empty() {
        String::new()
    } else {
        match NativeAddr::from_bytes(h.native.as_bytes()) {
            Some(n) => format!("@{}", format_native(&n, link)),
            None => format!("@{:?}", h.native).replace(['[', ']'], ""),
        }
    };
    if h.is_native_only() {
        native
    } else {
        format!("{}{native}", h.egress)
    }
}

/// A source route (R5) as a list of hops ([`format_hop`]); an L2RH that is
/// not a router hop shows as `?` and its bytes in hex.
pub fn format_route(r: &SourceRoute) -> Vec<String> {
    format_route_on(r, LinkKind::Udp)
}

/// A source route as a list of hops, natives for a link of kind `link`
/// ([`format_hop_on`]).
pub fn format_route_on(r: &SourceRoute, link: LinkKind) -> Vec<String> {
    r.route
        .iter()
        .map(|l| match RouterHop::from_content(l.content()) {
            Ok(h) => format_hop_on(&h, link),
            Err(_) => {
                let hex: Vec<String> = l.content().iter().map(|b| format!("{b:02x}")).collect();
                format!("?{}", hex.join(""))
            }
        })
        .collect()
}

pub(super) fn hex(a: Address) -> String {
    a.to_string()
}

/// The draft's name of a control message from its PT and TE (`"RRP#7"`,
/// `"ERR UNK"`; `"ERR 9"` and `"RRP?12"` for numbers the draft does not
/// define).
pub(super) fn control_name(pt: PacketType, te: u16) -> String {
    match pt.control_name(te) {
        Some(n) => n.to_string(),
        None if pt == PacketType::ERR => format!("ERR {te}"),
        None => format!("RRP?{te}"),
    }
}
