//! The host role: a real MessageWay end node of the lab, in its own process.
//!
//! A host is a node of Level A, B or C ([`rrp::node::Level`], Part-2 "node
//! levels") on one SAN ([`HostLink`]): a UDP SAN on loopback (docs/architecture.md
//! "Wire": one MessageWay packet per datagram) or an Ethernet SAN, where it
//! sends and receives Ethernet II frames (EtherType 0x88B5, padded to 60
//! bytes, the end of a packet taken from its DL) on one interface through
//! the AF_PACKET backend of `ports` (`mwlab --netns`: the host runs inside
//! its own network namespace, the interface a veth whose peer is on the
//! SAN's bridge). Its native address is its UDP endpoint or the interface's
//! MAC. Routers (mwrouterd processes) sweep the SAN with RRP#7s to each
//! member; the host answers them (Level B
//! and C, as [`rrp::node::Node`] does), learns what routers tell it (RRP#2
//! routes, RRP#3 redirects, ERR UNK/HRDOWN/LINKDOWN/GENERAL) and sends and
//! receives mwgen probes ([`mwgen::probe`]) so that the lab can measure
//! loss, duplication, reordering and latency end to end.
//!
//! # Threads
//! [`run`] holds everything in one [`std::thread::scope`]:
//! - the receive loop owns the link's receive side (short timeout, so that
//!   a stop is seen), feeds [`Node::handle_packet`], sends replies to the
//!   packet's sender (its native source) and counts every packet exactly
//!   once;
//! - the control listener accepts connections on a UNIX stream socket; each
//!   connection is served by its own thread (JSON lines, see below);
//! - each `send`/`send_l2` runs in a background thread of its own.
//!
//! State is shared behind one [`Mutex`] (a lab host, not the fast path); a
//! [`Condvar`] wakes requests waiting for an answer (`route`, `which_hr`).
//!
//! On UDP the socket is shared as is (`recv_from` and `send_to` take
//! `&self`). On Ethernet there is one [`AfPacketPort`] (a [`Port`], which
//! needs `&mut`) behind its own [`Mutex`]: the receive loop polls a
//! duplicate of the port's descriptor *without* the lock (50 ms timeout)
//! and takes the lock only for `rx_burst` and for handing the buffers back;
//! senders (replies, control requests, `send` threads) take it for
//! `alloc`/`encap`/`tx_burst`. One port rather than a receive port and a
//! transmit port: a second packet socket bound to the EtherType would get a
//! copy of every MessageWay frame in its receive ring too; left unread, that
//! ring fills and the kernel then drops its copies (harmless, but a second
//! ring of memory and a second copy per frame for nothing).
//!
//! # Control protocol
//! One JSON object per line in, one JSON object per line out:
//! `{"ok":true,...}` or `{"ok":false,"error":"..."}`. Addresses are accepted
//! as numbers (`560`) or strings (`"0x0230"`) and reported as `"0x0230"`.
//!
//! | request | answer |
//! | --- | --- |
//! | `{"cmd":"send","dst":D,"count":N,"rate_pps":R,"size":S,"wait":false}` | L3 probes to D, each to the HR [`Node::first_hr`] names (redirects followed); answers at once unless `wait`; `size` is the frame on the wire: the datagram on UDP, the Ethernet frame without FCS on Ethernet (mwgen's meaning) |
//! | `{"cmd":"send_l2","dst":D,"count":N,"route":[..] or "route_index":i,"via":HR}` | L2 probes along a source route (docs/architecture.md "Source routes") |
//! | `{"cmd":"stats"}` | every counter (below) |
//! | `{"cmd":"route","dst":D,"timeout_ms":T}` | RRP#1 to the default HR (Level C only): `{"routes":[["0x011a@127.0.0.1:4001",..],..],"q":[..],"from":"0x0117"}` (natives as [`format_native`] writes them for this host's link: `0x011a@02:4d:57:00:01:1a` on Ethernet) |
//! | `{"cmd":"which_hr","dst":D,"timeout_ms":T}` | RRP#6 (Level B and C): `{"via":"0x0117"}`, or `{"via":null}` when nothing came back in time |
//! | `{"cmd":"reset","learned":false}` | clears the traffic counters (with `learned`: also redirects, routes, unknowns) |
//! | `{"cmd":"join","group":G}`, `{"cmd":"leave","group":G}` | listen to group G (0x8000-0xFFFD) or stop, and say so to the SAN at once (RRP#5 to every member); `send` to a group address sends to every member of the SAN |
//! | `{"cmd":"impair","rx_loss":P,"duplicate":D,"reorder":R,"seed":S}` | impairs the link's receive side with the seeded layer of the in-memory backend ([`Impairer`], hw/ports/src/impair.rs): each datagram received is lost with probability P, else duplicated (the copy right after it) with probability D, and held back behind the next datagram that is not lost with probability R. Every field is optional (0; `seed` from the clock); all three 0 ends it (a held datagram is delivered). Lost datagrams are counted as `rx_lost` and not in `datagrams`; copies are datagrams. `stats` reports what it did as `impair` (below) |
//! | `{"cmd":"quit"}` | stops the host |
//!
//! `stats` answers, besides `name`, `address`, `level`, `default_hr` and
//! `tag` (this host's stream tag), `link` (`"udp"` or `"af_packet"`), `bind`
//! (the UDP endpoint, or the interface) and `native` (its own native
//! address: the endpoint, or the interface's MAC):
//! - `sent` (probes per destination), `send_errors`, `redirect_unresolved`
//!   (L3 probes whose redirect named a node of unknown native address: sent to the
//!   default HR instead), `redirect_renewals` (RRP#6 sent to the default HR to
//!   renew a redirect still in use, [`REDIRECT_TTL`]), `busy` (sends still running);
//! - `datagrams` (packets received: datagrams or frames) = `probes` + the sum of `control` (RRP/ERR messages by name,
//!   `"RRP#7"`, `"ERR UNK"`, ...) + `management` (PT 0x0006, to the
//!   management thread; `management_ignored` of them on a host without
//!   management) + `other` (non-probe data) + `not_member` (group packets
//!   of groups it does not listen to) + `malformed` + `auth_refused`
//!   (refused by its SAN's authentication, `auth_key`): every datagram is
//!   counted exactly once;
//! - `impair`: the settings now (`rx_loss`, `duplicate`, `reorder`, `seed`;
//!   zeros when off) and what the layer did since the host started, over
//!   every `impair` command: `seen`, `passed`, `lost`, `duplicated`,
//!   `reordered`, `held` (the [`ImpairStats`] counts, `held` those not
//!   delivered yet), and `probes` {`seen`, `lost`, `duplicated`,
//!   `reordered`}: the same for probes, `reordered` counting a probe held
//!   back behind a probe of its own stream (same source, destination and
//!   tag), which is what the receiver counts as reordered. With nothing
//!   else reordering or duplicating a stream, each source's `duplicated`
//!   and `reordered` sum to these, and `unique` is what was sent less
//!   `probes.lost` and any loss before the host. A datagram held back is
//!   delivered after the next one, or after [`POLL`] with none;
//! - `groups` (the groups it listens to), `by_group` (probes received per
//!   group: `received`, `unique`, `duplicated`);
//! - `received`: per source, `received`, `unique`, `duplicated`,
//!   `reordered`, `late` ([`mwgen::receiver`]'s definitions), `lost_hint`
//!   (gaps between the least and greatest sequence number seen), `streams`
//!   and `latency_ns` {`min`,`p50`,`p99`,`max`}; `ei`: EI values of unique
//!   probes with counts;
//! - `errors_received` {`UNK`,`HRDOWN`,`LINKDOWN`,`GENERAL`},
//!   `rrp7_answered`, `rrp4_answered`, `recv_errors`, `reply_errors`;
//! - what was learned: `redirects`, `unknown`, `routes`, `routes_from` (the
//!   HR that offered them), `neighbours` (native addresses of the SAN's
//!   nodes, [`format_native`]).
//!
//! What mwrouterd answers (rrp/src/router/engine.rs, `answer_which_hr`): an
//! RRP#6 always gets an answer, an RRP#3 naming the node on the asker's SAN
//! to send to (another HR, the destination itself when it is on the same
//! SAN, or the asked HR itself) or an ERR UNK when the destination is
//! unknown; `which_hr` reports the former as `via` and the latter as
//! `{"ok":false,"error":"unknown destination"}`. An RRP#1 is answered with
//! RRP#2 (routes from the answering HR onward) or ERR UNK.
//!
//! # Sequence numbers and streams
//! A host sends every probe with one stream tag, drawn at start-up (so that a
//! restarted host is a new stream), and numbers probes per destination from
//! 0, continuing across `send`s and `reset`s: a receiver sees one gapless
//! stream per (source, destination) as long as nothing is lost. Receivers
//! keep one [`Receiver`] per (source, destination, tag) and report them
//! summed per source. Transmit times are wall-clock nanoseconds
//! ([`SystemTime`]), the one clock that all processes of the lab share.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::OwnedFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, Scope};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mwgen::probe::{self, Received};
use mwgen::profile::{Profile, Sizes, parse_address, parse_hop};
use mwgen::receiver::Receiver;
use ports::af_packet::{AfPacketConfig, AfPacketPort};
use ports::impair::{ImpairConfig, ImpairStats, Impairer, MonotonicClock};
use ports::{Burst, HeapBuf, PacketBuf, Port};
use rrp::Address;
use rrp::kind::{ErrorCode, PacketType, RrpType};
use rrp::limits::MAX_L2RHS;
use rrp::node::{Learned, Level, Node, NodeConfig};
use rrp::wire::{Header, Message, RouterHop, SourceRoute, locate};
use rrp::{LinkKind, NativeAddr};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::host_mgmt::{self, HostManagement, HostSide};
use mgmt::agent::PortFacts;
use mgmt::attr::{PortCounters, PortInfo};

/// How long the receive loop and the control threads block before they look
/// at the stop flags again.
const POLL: Duration = Duration::from_millis(50);

/// The longest control request line accepted.
const MAX_LINE: usize = 1 << 20;

/// The frame size of a probe when a request gives none (a UDP datagram of 64
/// bytes: header, 40 data bytes, trailer).
const DEFAULT_SIZE: usize = 64;

/// The rate of a `send` when the request gives none (packets per second).
const DEFAULT_RATE_PPS: f64 = 1000.0;

/// How long `route` and `which_hr` wait when the request gives no timeout.
const DEFAULT_TIMEOUT_MS: u64 = 1000;

/// What a host is: the file `mwlab host --spec FILE` reads (JSON, or TOML
/// when the file name ends in `.toml`).
///
/// NativeAddr addresses are written as text, as [`format_native`] writes them
/// for the spec's link: `"127.0.0.1:4001"` (UDP), `"02:4d:57:00:01:15"`
/// (Ethernet); they are read with [`NativeAddr`]'s `FromStr`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "HostSpecText")]
pub struct HostSpec {
    /// Its name, e.g. `"H0"` (R2 of its RRP#5).
    pub name: String,
    /// Its MessageWay address, e.g. 0x0100.
    pub address: u16,
    /// Its level: `"A"`, `"B"` or `"C"` ([`Level`]).
    pub level: String,
    /// Where it sits: its link to its SAN.
    pub link: HostLink,
    /// The HRs on its SAN: HR address and that HR's native address (UDP
    /// endpoint or MAC).
    #[serde(deserialize_with = "natives_from_text")]
    pub hrs: Vec<(u16, NativeAddr)>,
    /// The HR it sends L3 traffic and requests to first (one of `hrs`);
    /// `None`: the first of `hrs`.
    pub default_hr: Option<u16>,
    /// The UNIX stream socket it listens on for control requests.
    pub control: PathBuf,
    /// In-band management: the agent and client run, and the admin socket
    /// is served, when set.
    #[serde(default)]
    pub management: Option<HostManagement>,
    /// The other members of its SAN (HRs and hosts, native addresses):
    /// where a packet for every member goes on UDP (an RRP#5 after a join,
    /// a group packet). On Ethernet the broadcast MAC reaches them.
    #[serde(default, deserialize_with = "native_list_from_text")]
    pub members: Vec<NativeAddr>,
    /// Its SAN's authentication key (hex; docs/configuration.md
    /// "Authentication"), key ID 1: every RRP, ERR and management packet
    /// it sends is signed, every one it receives checked.
    #[serde(default)]
    pub auth_key: Option<String>,
}

/// Where a host sits: its link to its SAN. In a spec file (JSON):
/// `{"udp":{"bind":"127.0.0.1:4000"}}` or
/// `{"af_packet":{"interface":"eth0"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostLink {
    /// A UDP socket bound to this endpoint (loopback in the lab): one
    /// MessageWay packet per datagram.
    Udp {
        /// Its UDP endpoint, `127.0.0.1:P`.
        bind: SocketAddr,
    },
    /// Ethernet II frames on this interface through AF_PACKET (needs
    /// CAP_NET_RAW; the interface is looked up in the network namespace the
    /// host runs in, e.g. `eth0` inside its own).
    AfPacket {
        /// The interface, e.g. `eth0`.
        interface: String,
    },
}

impl HostLink {
    /// The kind of native addresses on this link.
    pub fn kind(&self) -> LinkKind {
        match self {
            HostLink::Udp { .. } => LinkKind::Udp,
            HostLink::AfPacket { .. } => LinkKind::Ethernet,
        }
    }
}

/// A [`HostSpec`] as written: natives as text ([`format_native`]).
#[derive(Serialize)]
struct HostSpecText {
    name: String,
    address: u16,
    level: String,
    link: HostLink,
    hrs: Vec<(u16, String)>,
    default_hr: Option<u16>,
    control: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    management: Option<HostManagement>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    members: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth_key: Option<String>,
}

impl From<HostSpec> for HostSpecText {
    fn from(s: HostSpec) -> HostSpecText {
        // Every field by name: a new field of HostSpec does not compile here
        // until it is written too.
        let HostSpec {
            name,
            address,
            level,
            link,
            hrs,
            default_hr,
            control,
            management,
            members,
            auth_key,
        } = s;
        let kind = link.kind();
        HostSpecText {
            name,
            address,
            level,
            link,
            hrs: hrs
                .iter()
                .map(|(a, n)| (*a, format_native(n, kind)))
                .collect(),
            default_hr,
            control,
            management,
            members: members.iter().map(|n| format_native(n, kind)).collect(),
            auth_key,
        }
    }
}

/// Reads `members`: native addresses as text.
fn native_list_from_text<'de, D>(d: D) -> Result<Vec<NativeAddr>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let v: Vec<String> = Deserialize::deserialize(d)?;
    v.into_iter()
        .map(|t| t.parse::<NativeAddr>().map_err(serde::de::Error::custom))
        .collect()
}

/// Reads `hrs`: pairs of an address and a native address as text.
fn natives_from_text<'de, D>(d: D) -> Result<Vec<(u16, NativeAddr)>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let v: Vec<(u16, String)> = Deserialize::deserialize(d)?;
    v.into_iter()
        .map(|(a, t)| {
            t.parse::<NativeAddr>()
                .map(|n| (a, n))
                .map_err(serde::de::Error::custom)
        })
        .collect()
}

/// The MAC of interface `ifname` from `/sys/class/net/IF/address`: that of
/// the network namespace whose sysfs this process sees (the one sysfs was
/// mounted in), so call it from inside the host's namespace. `None` when
/// there is no such interface or it has no MAC.
pub fn interface_mac(ifname: &str) -> Option<[u8; 6]> {
    if ifname.is_empty() || ifname.contains('/') || ifname == "." || ifname == ".." {
        return None;
    }
    let text = std::fs::read_to_string(format!("/sys/class/net/{ifname}/address")).ok()?;
    rrp::native::parse_mac(text.trim())
}

impl HostSpec {
    /// Its native address as far as the spec tells: the UDP endpoint it
    /// binds; `None` on AF_PACKET (the interface's MAC is known once the
    /// port is open, inside the host's namespace: `stats` reports it as
    /// `native`, and see [`interface_mac`]).
    pub fn native(&self) -> Option<NativeAddr> {
        match &self.link {
            HostLink::Udp { bind } => Some(NativeAddr::udp(*bind)),
            HostLink::AfPacket { .. } => None,
        }
    }

    /// The level the spec names.
    pub fn level(&self) -> Result<Level, String> {
        match self.level.trim() {
            "A" | "a" => Ok(Level::A),
            "B" | "b" => Ok(Level::B),
            "C" | "c" => Ok(Level::C),
            l => Err(format!("{}: level {l:?} is not A, B or C", self.name)),
        }
    }

    /// The default HR: `default_hr`, else the first of `hrs`; `None` when
    /// the SAN has no HR.
    pub fn default_hr(&self) -> Option<Address> {
        self.default_hr
            .or_else(|| self.hrs.first().map(|h| h.0))
            .map(Address)
    }

    /// Checks what [`run`] relies on: a level, a node address, HR addresses
    /// that are node addresses with natives of the link's kind (a UDP
    /// endpoint, a MAC), a default HR among `hrs`, an interface name.
    pub fn validate(&self) -> Result<Level, String> {
        let level = self.level()?;
        if let HostLink::AfPacket { interface } = &self.link
            && interface.trim().is_empty()
        {
            return Err(format!("{}: no interface", self.name));
        }
        let kind = self.link.kind();
        if let Some((a, n)) = self.hrs.iter().find(|(_, n)| match kind {
            LinkKind::Ethernet => n.as_mac().is_none(),
            _ => n.as_udp().is_none(),
        }) {
            return Err(format!(
                "{}: HR {}: {} is not a {}",
                self.name,
                Address(*a),
                format_native(n, kind),
                if kind == LinkKind::Ethernet {
                    "MAC"
                } else {
                    "UDP endpoint"
                }
            ));
        }
        if self.address == 0 {
            // No address: it gets one from its SAN's manager, which its
            // management asks for and RRP#7 sweeps then find.
            if self.management.is_none() || level == Level::A {
                return Err(format!(
                    "{}: a host without an address needs management and level B or C",
                    self.name
                ));
            }
        } else if !Address(self.address).is_node() {
            return Err(format!(
                "{}: {} is not a node address (0x0040-0x7fff; 0: none, given by the SAN's manager)",
                self.name,
                Address(self.address)
            ));
        }
        if let Some((a, _)) = self.hrs.iter().find(|(a, _)| !Address(*a).is_node()) {
            return Err(format!(
                "{}: HR {} is not a node address",
                self.name,
                Address(*a)
            ));
        }
        if let Some(d) = self.default_hr
            && !self.hrs.iter().any(|(a, _)| *a == d)
        {
            return Err(format!(
                "{}: default HR {} is not one of its HRs",
                self.name,
                Address(d)
            ));
        }
        Ok(level)
    }
}

/// The keys of a host's SAN from its spec's `auth_key` (hex): key ID 1,
/// signing with it, nothing unsigned taken.
pub fn auth_config(hex: &str) -> Result<rrp::auth::AuthConfig, String> {
    let h = hex.trim().trim_start_matches("0x");
    if !h.len().is_multiple_of(2) || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("auth_key: must be hex digits (the value is not shown)".into());
    }
    let secret: Vec<u8> = (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap_or(0))
        .collect();
    let cfg = rrp::auth::AuthConfig {
        keys: vec![rrp::auth::AuthKey { id: 1, secret }],
        send_key: 1,
        accept_unsigned: false,
    };
    cfg.validate("auth_key").map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// Reads a spec file (JSON; TOML when the name ends in `.toml`).
pub fn read_spec(path: &Path) -> Result<HostSpec, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if path.extension().is_some_and(|e| e == "toml") {
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    } else {
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The body of `mwlab host --spec FILE`: reads the spec and runs the host
/// until SIGINT, SIGTERM or a `quit` request.
pub fn main_from_spec_file(path: &Path) -> Result<(), String> {
    let spec = read_spec(path)?;
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).map_err(|e| format!("signal: {e}"))?;
    }
    run(&spec, &stop)
}

// ----- formatting -------------------------------------------------------------

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

/// A router hop as text, in mwgen's `--l2` syntax ([`parse_hop`]):
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

fn hex(a: Address) -> String {
    a.to_string()
}

/// The draft's name of a control message from its PT and TE (`"RRP#7"`,
/// `"ERR UNK"`).
fn control_name(pt: PacketType, te: u16) -> String {
    if pt == PacketType::ERR {
        match ErrorCode::from_u16(te) {
            Some(ErrorCode::Unknown) => "ERR UNK".into(),
            Some(ErrorCode::HrDown) => "ERR HRDOWN".into(),
            Some(ErrorCode::LinkDown) => "ERR LINKDOWN".into(),
            Some(ErrorCode::General) => "ERR GENERAL".into(),
            None => format!("ERR {te}"),
        }
    } else if RrpType::from_u16(te).is_some() {
        format!("RRP#{te}")
    } else {
        format!("RRP?{te}")
    }
}

/// Wall-clock nanoseconds: the clock probes carry (shared by every process
/// of the lab, unlike a process's `Instant`).
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

// ----- received traffic -----------------------------------------------------------

/// The probes of one source, for the lost hint: the sequence numbers seen.
#[derive(Debug, Default, Clone, Copy)]
struct SeqSpan {
    lo: u64,
    hi: u64,
}

/// What arrived, counted so that every datagram lands in exactly one of
/// `probes`, `control`, `other` and `malformed` (`datagrams` is their sum).
#[derive(Debug, Default)]
struct RxTraffic {
    /// Datagrams received.
    datagrams: u64,
    /// Probes (any destination), one receiver per (source, destination, tag).
    probes: u64,
    receivers: BTreeMap<(Address, Address, u16), Receiver>,
    /// Sequence numbers seen per (source, destination, tag).
    spans: BTreeMap<(Address, Address, u16), SeqSpan>,
    /// Well-formed RRP and ERR messages, by the draft's name.
    control: BTreeMap<String, u64>,
    /// ERRs by kind (also in `control`).
    errors: BTreeMap<&'static str, u64>,
    /// RRP#7s answered with RRP#5 (also in `control`).
    rrp7_answered: u64,
    /// RRP#4s answered with RRP#5 (also in `control`).
    rrp4_answered: u64,
    /// Management packets (PT 0x0006), handed to the management thread.
    management: u64,
    /// Management packets of a host without management (also in
    /// `management`).
    management_ignored: u64,
    /// Well-formed packets that are neither probes nor RRP/ERR.
    other: u64,
    /// Group packets for groups this host does not listen to.
    not_member: u64,
    /// Datagrams that are not MessageWay packets, or control packets whose
    /// message does not parse.
    malformed: u64,
    /// Control and management packets its SAN's authentication refused
    /// (a keyed host: unsigned, forged, replayed).
    auth_refused: u64,
    /// Receive errors of the socket (e.g. a pending ICMP error): not
    /// datagrams.
    recv_errors: u64,
    /// Replies that could not be sent.
    reply_errors: u64,
}

impl RxTraffic {
    fn probe(&mut self, src: Address, dst: Address, p: probe::Probe, pkt: &[u8], now: u64) {
        self.probes += 1;
        let key = (src, dst, p.tag);
        self.receivers
            .entry(key)
            .or_insert_with(|| Receiver::new(p.tag, 0, 0))
            .on_packet(pkt, false, now);
        let s = self.spans.entry(key).or_insert(SeqSpan {
            lo: p.seq,
            hi: p.seq,
        });
        s.lo = s.lo.min(p.seq);
        s.hi = s.hi.max(p.seq);
    }

    /// Per source: counts summed over its streams, latency merged.
    fn by_source(&self) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        let sources: BTreeSet<Address> = self.receivers.keys().map(|k| k.0).collect();
        for src in sources {
            let streams: Vec<_> = self
                .receivers
                .range((src, Address(0), 0)..=(src, Address(u16::MAX), u16::MAX))
                .collect();
            let (mut received, mut unique, mut duplicated) = (0, 0, 0);
            let (mut reordered, mut late, mut lost_hint) = (0, 0, 0);
            for (k, r) in &streams {
                let c = r.counts();
                received += c.received;
                unique += c.unique();
                duplicated += c.duplicated;
                reordered += c.reordered;
                late += c.late;
                if let Some(s) = self.spans.get(k) {
                    lost_hint += (s.hi - s.lo + 1).saturating_sub(c.unique());
                }
            }
            // Latency of unique probes: exact least and greatest, percentiles
            // from the streams' histograms added up.
            let timed: Vec<_> = streams
                .iter()
                .map(|(_, r)| r)
                .filter(|r| r.latency().count > 0)
                .collect();
            let latency = match timed.split_first() {
                None => json!({"min": 0, "p50": 0, "p99": 0, "max": 0}),
                Some((first, rest)) => {
                    let mut h = first.histogram().clone();
                    for r in rest {
                        let _ = h.add(r.histogram());
                    }
                    json!({
                        "min": timed.iter().map(|r| r.latency().min).min().unwrap_or(0),
                        "p50": h.value_at_quantile(0.5),
                        "p99": h.value_at_quantile(0.99),
                        "max": timed.iter().map(|r| r.latency().max).max().unwrap_or(0),
                    })
                }
            };
            out.insert(
                hex(src),
                json!({
                    "received": received,
                    "unique": unique,
                    "duplicated": duplicated,
                    "reordered": reordered,
                    "late": late,
                    "lost_hint": lost_hint,
                    "streams": streams.len(),
                    "latency_ns": latency,
                }),
            );
        }
        out
    }

    /// Per group (probes to a logical address): counts summed over sources
    /// and streams.
    fn by_group(&self) -> BTreeMap<String, Value> {
        let mut out: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
        for ((_, dst, _), r) in &self.receivers {
            if !dst.is_logical() {
                continue;
            }
            let c = r.counts();
            let e = out.entry(hex(*dst)).or_default();
            e.0 += c.received;
            e.1 += c.unique();
            e.2 += c.duplicated;
        }
        out.into_iter()
            .map(|(g, (r, u, d))| (g, json!({"received": r, "unique": u, "duplicated": d})))
            .collect()
    }

    /// EI values of unique probes, over every stream.
    fn ei(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for r in self.receivers.values() {
            let (values, other) = r.ei();
            for (v, n) in values {
                *out.entry(format!("{v:#x}")).or_default() += n;
            }
            if other > 0 {
                *out.entry("other".to_string()).or_default() += other;
            }
        }
        out
    }
}

// ----- sent traffic and shared state ---------------------------------------------

/// What was sent.
#[derive(Debug, Default)]
struct TxTraffic {
    /// Probes sent, per destination.
    sent: BTreeMap<Address, u64>,
    /// Probes the link refused (or that had nowhere to go).
    send_errors: u64,
    /// L3 probes whose redirect named a node of unknown native address
    /// (sent to the default HR instead, which forwards them).
    redirect_unresolved: u64,
    /// RRP#6 sent to the default HR to renew a redirect still in use.
    redirect_renewals: u64,
}

/// Which answer a request waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Answer {
    /// RRP#2.
    Routes,
    /// RRP#3.
    Redirect,
    /// ERR UNK.
    Unknown,
}

/// Everything the threads share.
#[derive(Debug)]
struct State {
    /// The node's RRP state: redirects, routes, unknown destinations.
    node: Node,
    /// NativeAddr addresses of the nodes of the SAN: the configured HRs, and
    /// nodes that told us who they are (RRP#7, or RRP#5 about its sender)
    /// directly (no L2RH left). Configured HRs are never overwritten.
    neighbours: BTreeMap<Address, NativeAddr>,
    /// The HR that answered the last RRP#2 about a destination (its routes
    /// start there).
    routes_from: BTreeMap<Address, Address>,
    /// The next sequence number per destination (never reset).
    next_seq: BTreeMap<Address, u64>,
    /// Answers received, per (kind, destination): requests wait for a change.
    answers: BTreeMap<(Answer, Address), u64>,
    rx: RxTraffic,
    tx: TxTraffic,
    /// Sends running in the background.
    busy: u64,
    /// The impairment of the link's receive side (`impair`), if on.
    impair: Option<RxImpair>,
    /// What the impairment did, over every `impair` command.
    impaired: ImpairCounts,
    /// When each redirect was last received: a redirect older than
    /// [`REDIRECT_TTL`] is forgotten, so that a host stops sending to an HR
    /// that has died.
    redirect_at: BTreeMap<Address, Instant>,
    /// When the host last asked its default HR (RRP#6) to renew a redirect
    /// it still uses.
    renewal_at: BTreeMap<Address, Instant>,
}

/// The impairment of a host's receive side: the seeded layer of the
/// in-memory backend over each datagram received, without delay, so that
/// what it releases is delivered at once.
#[derive(Debug)]
struct RxImpair {
    impairer: Impairer,
    /// The stream (source, destination, tag) of the datagram held back for
    /// reordering, when it is a probe.
    held: Option<(Address, Address, u16)>,
}

/// What the receive side's impairment did ([`ImpairStats`]'s meanings), and
/// the same for probes.
#[derive(Debug, Clone, Copy, Default)]
struct ImpairCounts {
    all: ImpairStats,
    probes_seen: u64,
    probes_lost: u64,
    probes_duplicated: u64,
    /// Probes held back behind a probe of their own stream.
    probes_reordered: u64,
}

/// The stream (source, destination, tag) of a probe; `None` for any other
/// packet.
fn probe_stream(pkt: &[u8]) -> Option<(Address, Address, u16)> {
    let Received::Probe(p) = probe::read(pkt) else {
        return None;
    };
    let layout = locate(pkt, MAX_L2RHS).ok()?;
    let hdr = Header::new_unchecked(&pkt[layout.header_offset..]);
    Some((hdr.src(), hdr.dst(), p.tag))
}

impl State {
    /// Takes a received datagram through the impairment (when on) and
    /// returns the datagrams it releases, to be delivered in order.
    fn impair(&mut self, pkt: &[u8], from: NativeAddr) -> Option<Vec<HeapBuf>> {
        let imp = self.impair.as_mut()?;
        let stream = probe_stream(pkt);
        let mut buf = HeapBuf::new(pkt.len(), 0);
        buf.set_data(pkt, 0);
        buf.set_native_src(from);
        let before = imp.impairer.stats();
        // The line never holds more than a datagram, its copy and the
        // next: the capacity is never reached.
        let _ = imp.impairer.push(buf);
        let after = imp.impairer.stats();
        let c = &mut self.impaired;
        c.all.seen += after.seen - before.seen;
        c.all.lost += after.lost - before.lost;
        c.all.duplicated += after.duplicated - before.duplicated;
        c.all.reordered += after.reordered - before.reordered;
        if stream.is_some() {
            c.probes_seen += 1;
            c.probes_lost += after.lost - before.lost;
            c.probes_duplicated += after.duplicated - before.duplicated;
        }
        if after.reordered > before.reordered {
            if imp.held.is_some() && imp.held == stream {
                c.probes_reordered += 1;
            }
            imp.held = None;
        }
        let out = Self::release(imp, c);
        if after.lost == before.lost && imp.impairer.held() > 0 {
            // Held back: this datagram (what the slot holds after a
            // datagram that was not lost). A lost one leaves the slot as
            // it was.
            imp.held = stream;
        }
        Some(out)
    }

    /// The datagrams the impairment has released.
    fn release(imp: &mut RxImpair, c: &mut ImpairCounts) -> Vec<HeapBuf> {
        let mut out = Vec::new();
        while let Some(b) = imp.impairer.pop() {
            c.all.passed += 1;
            out.push(b);
        }
        out
    }

    /// Delivers a datagram held back for reordering (no successor came):
    /// not counted as reordered.
    fn impair_flush(&mut self) -> Vec<HeapBuf> {
        let Some(imp) = self.impair.as_mut() else {
            return Vec::new();
        };
        if !imp.impairer.flush() {
            return Vec::new();
        }
        imp.held = None;
        Self::release(imp, &mut self.impaired)
    }
}

/// How long a redirect (RRP#3) is followed without being repeated: hosts age
/// redirects as IP hosts do (RFC 1122, 3.3.1.2), since MessageWay tells a
/// node nothing when the HR a redirect named goes down. A redirect still in
/// use is renewed before it lapses: past half its life the host asks its
/// default HR again with RRP#6 (docs/spec-notes.md 51), so that its traffic
/// stays on the best first HR instead of returning to the default one.
pub const REDIRECT_TTL: Duration = Duration::from_secs(1);

/// Where the probes of a stream go.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// Each to the HR [`Node::first_hr`] names at the time it is sent.
    FirstHr,
    /// All to this native address (L2: the first hop).
    Fixed(NativeAddr),
    /// Each to every member of the SAN (a group packet).
    Members,
}

/// One `send` or `send_l2`: a probe template and where its copies go.
#[derive(Debug)]
struct Stream {
    dst: Address,
    count: u64,
    /// Packets per second; 0: as fast as the link takes them.
    rate_pps: f64,
    packet: Vec<u8>,
    /// Offset of the EEP header in `packet`.
    hdr: usize,
    first_seq: u64,
    target: Target,
}

// ----- the link ---------------------------------------------------------------------

/// How many times a send retries a full AF_PACKET transmit ring.
const TX_RETRIES: u32 = 200;

/// A host's link to its SAN: a UDP socket or an AF_PACKET port (see the
/// module's "Threads" for how the port is shared).
enum Link {
    Udp(UdpSocket),
    AfPacket {
        /// The port: receive side for the receive loop, transmit side for
        /// every sender (boxed: a port is large, a socket small).
        port: Box<Mutex<AfPacketPort>>,
        /// A duplicate of the port's descriptor, polled by the receive loop
        /// without the lock.
        wait: OwnedFd,
        /// The interface's MAC.
        mac: [u8; 6],
    },
}

fn lock_port(port: &Mutex<AfPacketPort>) -> MutexGuard<'_, AfPacketPort> {
    port.lock().unwrap_or_else(|p| p.into_inner())
}

impl Link {
    fn open(spec: &HostSpec) -> Result<Link, String> {
        match &spec.link {
            HostLink::Udp { bind } => {
                let sock = UdpSocket::bind(bind)
                    .map_err(|e| format!("{}: bind {bind}: {e}", spec.name))?;
                sock.set_read_timeout(Some(POLL))
                    .map_err(|e| format!("{}: {e}", spec.name))?;
                Ok(Link::Udp(sock))
            }
            HostLink::AfPacket { interface } => {
                let mut cfg = AfPacketConfig::new(interface);
                // A host, not a router port: small rings.
                cfg.rx_frames = 256;
                cfg.tx_frames = 256;
                cfg.pool_size = 256;
                let port = AfPacketPort::open(cfg)
                    .map_err(|e| format!("{}: AF_PACKET on {interface}: {e}", spec.name))?;
                let wait = port
                    .wait_fd()
                    .ok_or("AF_PACKET port without a descriptor")?
                    .try_clone_to_owned()
                    .map_err(|e| format!("{}: {e}", spec.name))?;
                Ok(Link::AfPacket {
                    mac: port.mac(),
                    port: Box::new(Mutex::new(port)),
                    wait,
                })
            }
        }
    }

    fn kind(&self) -> LinkKind {
        match self {
            Link::Udp(_) => LinkKind::Udp,
            Link::AfPacket { .. } => LinkKind::Ethernet,
        }
    }

    /// This host's own native address.
    fn native(&self) -> NativeAddr {
        match self {
            Link::Udp(s) => s.local_addr().map_or(NativeAddr::NONE, NativeAddr::udp),
            Link::AfPacket { mac, .. } => NativeAddr::mac(*mac),
        }
    }

    /// A native address as text, for this link.
    fn text(&self, n: &NativeAddr) -> String {
        format_native(n, self.kind())
    }

    /// Sends one MessageWay packet to native address `to` on the SAN.
    fn send(&self, pkt: &[u8], to: &NativeAddr) -> io::Result<()> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        match self {
            Link::Udp(sock) => {
                let sa = to
                    .as_udp()
                    .ok_or_else(|| invalid(format!("{to}: not a UDP endpoint")))?;
                sock.send_to(pkt, sa).map(|_| ())
            }
            Link::AfPacket { port, .. } => {
                let mac = to
                    .as_mac()
                    .ok_or_else(|| invalid(format!("{to}: not a MAC")))?;
                let mut p = lock_port(port);
                let mut b = p
                    .alloc()
                    .ok_or_else(|| io::Error::other("buffer pool exhausted"))?;
                let fits = match b.append(pkt.len()) {
                    Some(tail) => {
                        tail.copy_from_slice(pkt);
                        true
                    }
                    None => false,
                };
                if !fits || !p.encap(&mut b, &NativeAddr::mac(mac)) {
                    p.recycle(b);
                    return Err(invalid(format!("{} bytes: too long", pkt.len())));
                }
                let mut burst = Burst::new();
                burst.push(b);
                for _ in 0..TX_RETRIES {
                    let errors = p.stats().tx_errors;
                    if p.tx_burst(&mut burst) > 0 {
                        return if p.stats().tx_errors == errors {
                            Ok(())
                        } else {
                            Err(invalid(format!(
                                "{} bytes: longer than the interface takes",
                                pkt.len()
                            )))
                        };
                    }
                    // The transmit ring is full: let the kernel drain it.
                    drop(p);
                    thread::sleep(Duration::from_micros(50));
                    p = lock_port(port);
                }
                p.recycle_burst(&mut burst);
                Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "transmit ring full",
                ))
            }
        }
    }

    /// Receives what arrives within about [`POLL`] and hands each packet
    /// with its native source to `f` (on Ethernet without its frame
    /// padding: cut at the end its DL gives). `Ok` also when nothing came.
    fn receive(&self, buf: &mut [u8], mut f: impl FnMut(&[u8], NativeAddr)) -> io::Result<()> {
        match self {
            Link::Udp(sock) => match sock.recv_from(buf) {
                Ok((n, from)) => {
                    f(&buf[..n], NativeAddr::udp(from));
                    Ok(())
                }
                Err(e) if nothing_yet(&e) => Ok(()),
                Err(e) => Err(e),
            },
            Link::AfPacket { port, wait, .. } => {
                use rustix::event::{PollFd, PollFlags, Timespec, poll};
                let mut fds = [PollFd::new(wait, PollFlags::IN)];
                let timeout = Timespec {
                    tv_sec: 0,
                    tv_nsec: POLL.as_nanos() as _,
                };
                match poll(&mut fds, Some(&timeout)) {
                    Ok(0) | Err(rustix::io::Errno::INTR) => return Ok(()),
                    Ok(_) => {}
                    Err(e) => return Err(e.into()),
                }
                let failed = fds[0]
                    .revents()
                    .intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL);
                let mut burst = Burst::new();
                lock_port(port).rx_burst(&mut burst);
                for b in &burst {
                    let d = b.data();
                    let d = match locate(d, MAX_L2RHS) {
                        Ok(l) => &d[..l.total_len().min(d.len())],
                        Err(_) => d,
                    };
                    f(d, b.native_src());
                }
                let got = !burst.is_empty();
                lock_port(port).recycle_burst(&mut burst);
                if failed && !got {
                    // E.g. the interface went away: do not spin.
                    thread::sleep(POLL);
                    return Err(io::Error::other("AF_PACKET socket error"));
                }
                Ok(())
            }
        }
    }
}

/// A running host: its spec, link and shared state.
struct Host<'a> {
    spec: &'a HostSpec,
    level: Level,
    /// Its address: the spec's, or 0 until its SAN's manager gives one.
    me: AtomicU16,
    default_hr: Option<Address>,
    /// The stream tag of every probe this host sends.
    tag: u16,
    link: Link,
    state: Mutex<State>,
    /// Notified whenever `State::answers` changes.
    answered: Condvar,
    /// Set by a `quit` request.
    quit: AtomicBool,
    /// The management thread's inbox, when the host runs management.
    mgmt: Option<std::sync::mpsc::Sender<host_mgmt::Input>>,
}

type Reply = Result<Value, String>;

impl<'a> Host<'a> {
    fn new(
        spec: &'a HostSpec,
        mgmt: Option<std::sync::mpsc::Sender<host_mgmt::Input>>,
    ) -> Result<Host<'a>, String> {
        let level = spec.validate()?;
        let me = Address(spec.address);
        let link = Link::open(spec)?;
        let mut node = Node::new(NodeConfig {
            address: me,
            name: Some(spec.name.as_bytes().to_vec()),
            capabilities: Vec::new(),
            logical: None,
            level,
        });
        if let Some(k) = &spec.auth_key {
            // Numbered from the clock (ms << 20), as mwrouterd does.
            node.set_auth(Some(auth_config(k)?), (now_ns() / 1_000_000) << 20);
        }
        let tag = (now_ns() as u16) ^ (now_ns() >> 16) as u16 ^ spec.address.rotate_left(8);
        Ok(Host {
            spec,
            level,
            me: AtomicU16::new(me.0),
            default_hr: spec.default_hr(),
            tag,
            link,
            state: Mutex::new(State {
                node,
                neighbours: spec.hrs.iter().map(|(a, e)| (Address(*a), *e)).collect(),
                routes_from: BTreeMap::new(),
                next_seq: BTreeMap::new(),
                answers: BTreeMap::new(),
                rx: RxTraffic::default(),
                tx: TxTraffic::default(),
                busy: 0,
                impair: None,
                impaired: ImpairCounts::default(),
                redirect_at: BTreeMap::new(),
                renewal_at: BTreeMap::new(),
            }),
            answered: Condvar::new(),
            quit: AtomicBool::new(false),
            mgmt,
        })
    }

    /// Its address now.
    fn me(&self) -> Address {
        Address(self.me.load(Ordering::Relaxed))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stopping(&self, stop: &AtomicBool) -> bool {
        stop.load(Ordering::Relaxed) || self.quit.load(Ordering::Relaxed)
    }

    fn is_configured_hr(&self, a: Address) -> bool {
        self.spec.hrs.iter().any(|(h, _)| *h == a.0)
    }

    // ----- receiving ---------------------------------------------------------

    /// The receive loop: until stopped.
    fn receive_loop(&self, stop: &AtomicBool) {
        let mut buf = vec![0u8; 65536];
        while !self.stopping(stop) {
            let mut got = false;
            if self
                .link
                .receive(&mut buf, |pkt, from| {
                    got = true;
                    self.on_received(pkt, from)
                })
                .is_err()
            {
                self.lock().rx.recv_errors += 1;
            }
            if !got {
                let held = self.lock().impair_flush();
                self.deliver(held);
            }
        }
    }

    /// One datagram (or frame) from the link: through the impairment, when
    /// on, then to [`Host::on_datagram`].
    fn on_received(&self, pkt: &[u8], from: NativeAddr) {
        let released = self.lock().impair(pkt, from);
        match released {
            None => self.on_datagram(pkt, from),
            Some(bufs) => self.deliver(bufs),
        }
    }

    /// Datagrams the impairment released, in order.
    fn deliver(&self, bufs: Vec<HeapBuf>) {
        for b in bufs {
            self.on_datagram(b.data(), b.native_src());
        }
    }

    /// One datagram (or frame): counted exactly once (probe, control, other
    /// or malformed); a request about this node is answered to `from`.
    fn on_datagram(&self, pkt: &[u8], from: NativeAddr) {
        let now = now_ns();
        let mut st = self.lock();
        st.rx.datagrams += 1;
        let Ok(layout) = locate(pkt, MAX_L2RHS) else {
            st.rx.malformed += 1;
            return;
        };
        let hdr = Header::new_unchecked(&pkt[layout.header_offset..]);
        let (dst, pt, te, src) = (hdr.dst(), hdr.packet_type(), hdr.type_ext(), hdr.src());
        if pt == PacketType::MANAGEMENT {
            // The SAN's authentication first: the MAD as it was signed.
            let mad = match st.node.admit(pkt) {
                Ok(None) => pkt[layout.data_offset()..layout.trailer_offset()].to_vec(),
                Ok(Some(b)) => match locate(&b, MAX_L2RHS) {
                    Ok(l) => b[l.data_offset()..l.trailer_offset()].to_vec(),
                    Err(_) => {
                        st.rx.malformed += 1;
                        return;
                    }
                },
                Err(_) => {
                    st.rx.auth_refused += 1;
                    return;
                }
            };
            st.rx.management += 1;
            drop(st);
            let input = host_mgmt::Input::Packet {
                native: from,
                src,
                dst,
                mad,
            };
            if self.mgmt.as_ref().is_none_or(|m| m.send(input).is_err()) {
                // No management here: counted, not answered.
                self.lock().rx.management_ignored += 1;
            }
            return;
        }
        if dst.is_logical() && !st.node.listens(dst) {
            // A group packet on the SAN for a group this host is not in.
            st.rx.not_member += 1;
            return;
        }
        match probe::read(pkt) {
            Received::Probe(p) => {
                st.rx.probe(src, dst, p, pkt, now);
                return;
            }
            Received::Malformed => {
                // A probe too short for its fields.
                st.rx.malformed += 1;
                return;
            }
            Received::Other => {}
        }
        let (reply, learned) = match st.node.handle_packet(pkt) {
            Ok(x) => x,
            Err(e) if matches!(e.kind, rrp::error::ErrorKind::Unauthenticated(_)) => {
                st.rx.auth_refused += 1;
                return;
            }
            Err(_) => {
                st.rx.malformed += 1;
                return;
            }
        };
        if !pt.is_control() {
            st.rx.other += 1;
            return;
        }
        *st.rx.control.entry(control_name(pt, te)).or_default() += 1;
        let direct = layout.l2rh_count == 0 && src.is_node() && !self.is_configured_hr(src);
        if pt == PacketType::RRP && te == RrpType::WhoAreYou as u16 && direct {
            st.neighbours.insert(src, from);
        }
        let mut answer = None;
        match learned {
            Some(Learned::Redirect { dst, .. }) => {
                st.redirect_at.insert(dst, Instant::now());
                answer = Some((Answer::Redirect, dst))
            }
            Some(Learned::Routes { dst, .. }) => {
                st.routes_from.insert(dst, src);
                answer = Some((Answer::Routes, dst));
            }
            Some(Learned::Unknown(a)) => {
                *st.rx.errors.entry("UNK").or_default() += 1;
                answer = Some((Answer::Unknown, a));
            }
            Some(Learned::Info(nodes)) => {
                if direct && nodes.len() == 1 && nodes[0].address == src {
                    st.neighbours.insert(src, from);
                }
            }
            Some(Learned::Other(m)) => {
                let kind = match m {
                    Message::HrDown { .. } => Some("HRDOWN"),
                    Message::LinkDown { .. } => Some("LINKDOWN"),
                    Message::General { .. } => Some("GENERAL"),
                    _ => None,
                };
                if let Some(k) = kind {
                    *st.rx.errors.entry(k).or_default() += 1;
                }
            }
            Some(Learned::Data(_)) | None => {}
        }
        if let Some(key) = answer {
            *st.answers.entry(key).or_default() += 1;
            self.answered.notify_all();
        }
        if let Some(r) = reply {
            if te == RrpType::WhoAreYou as u16 {
                st.rx.rrp7_answered += 1;
            } else {
                st.rx.rrp4_answered += 1;
            }
            drop(st);
            if self.link.send(&r, &from).is_err() {
                self.lock().rx.reply_errors += 1;
            }
        }
    }

    // ----- sending -----------------------------------------------------------

    /// The native address of the HR to send an L3 packet for `dst` to.
    fn first_hop(&self, st: &mut State, dst: Address) -> Option<NativeAddr> {
        let default = self.default_hr?;
        if let Some(at) = st.redirect_at.get(&dst).copied() {
            let age = at.elapsed();
            if age > REDIRECT_TTL {
                st.node.redirects.remove(&dst);
                st.redirect_at.remove(&dst);
            } else if age > REDIRECT_TTL / 2
                && st.renewal_at.get(&dst).is_none_or(|asked| *asked < at)
            {
                // Still in use: ask the default HR for the best first HR
                // again, once per redirect received; its RRP#3 renews it.
                st.renewal_at.insert(dst, Instant::now());
                if let Some(n) = st.neighbours.get(&default).copied() {
                    let req = st.node.which_hr(default, dst);
                    if self.link.send(&req, &n).is_ok() {
                        st.tx.redirect_renewals += 1;
                    }
                }
            }
        }
        let hr = st.node.first_hr(dst, default);
        match st.neighbours.get(&hr) {
            Some(e) => Some(*e),
            None => {
                st.tx.redirect_unresolved += 1;
                st.neighbours.get(&default).copied()
            }
        }
    }

    /// Sends a stream's probes, paced, until done or stopped.
    fn send_stream(&self, s: Stream, stop: &AtomicBool) {
        let start = Instant::now();
        let mut pkt = s.packet;
        for i in 0..s.count {
            if self.stopping(stop) {
                break;
            }
            if s.rate_pps > 0.0 {
                let due = start + Duration::from_secs_f64(i as f64 / s.rate_pps);
                let now = Instant::now();
                if due > now {
                    thread::sleep(due - now);
                }
            }
            let to = match s.target {
                Target::Fixed(a) => Some(a),
                Target::FirstHr => self.first_hop(&mut self.lock(), s.dst),
                Target::Members => None,
            };
            probe::patch(&mut pkt, s.hdr, s.first_seq + i, now_ns());
            let ok = match s.target {
                Target::Members => self.send_all(&pkt),
                _ => to.is_some_and(|a| self.link.send(&pkt, &a).is_ok()),
            };
            let mut st = self.lock();
            if ok {
                *st.tx.sent.entry(s.dst).or_default() += 1;
            } else {
                st.tx.send_errors += 1;
            }
        }
    }

    /// A stream of `count` probes to `dst` behind the hops `l2`; its sequence
    /// numbers are reserved here.
    fn stream(
        &self,
        req: &Value,
        dst: Address,
        l2: Vec<RouterHop>,
        target: Target,
    ) -> Result<Stream, String> {
        let count = u64_arg(req, "count")?.unwrap_or(1);
        let rate_pps = match req.get("rate_pps") {
            None | Some(Value::Null) => DEFAULT_RATE_PPS,
            Some(v) => v
                .as_f64()
                .filter(|r| r.is_finite() && *r >= 0.0)
                .ok_or("rate_pps: not a rate (packets per second, 0: unpaced)")?,
        };
        let size = u64_arg(req, "size")?.map_or(DEFAULT_SIZE, |s| s as usize);
        if size > mwgen::profile::MAX_FRAME {
            return Err(format!("size: at most {} bytes", mwgen::profile::MAX_FRAME));
        }
        let profile = Profile {
            src: self.me(),
            dsts: vec![dst],
            sizes: Sizes::Fixed(size),
            priority: 0,
            l2,
            seed: 1,
        };
        let t = profile
            .build(self.link.kind(), self.tag)
            .map_err(|e| e.to_string())?
            .into_iter()
            .next()
            .ok_or("no packet built")?;
        let seq = {
            let mut st = self.lock();
            let next = st.next_seq.entry(dst).or_default();
            let seq = *next;
            *next += count;
            seq
        };
        Ok(Stream {
            dst,
            count,
            rate_pps,
            packet: t.bytes,
            hdr: t.hdr.unwrap_or(0),
            first_seq: seq,
            target,
        })
    }

    /// Runs a stream now (`"wait":true`) or in a background thread.
    fn start<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        s: Stream,
        req: &Value,
        stop: &'s AtomicBool,
    ) -> Reply {
        let wait = req.get("wait").and_then(Value::as_bool).unwrap_or(false);
        let first_seq = s.first_seq;
        if wait {
            self.send_stream(s, stop);
            return Ok(json!({"first_seq": first_seq}));
        }
        self.lock().busy += 1;
        scope.spawn(move || {
            self.send_stream(s, stop);
            self.lock().busy -= 1;
        });
        Ok(json!({"first_seq": first_seq}))
    }

    // ----- requests ----------------------------------------------------------

    fn cmd_send<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        req: &Value,
        stop: &'s AtomicBool,
    ) -> Reply {
        let dst = dst_arg(req)?;
        if dst.is_logical() {
            // A group: to every member of the SAN; the routers take it on.
            let s = self.stream(req, dst, Vec::new(), Target::Members)?;
            return self.start(scope, s, req, stop);
        }
        if self.default_hr.is_none() {
            return Err("no HR on this SAN".into());
        }
        let s = self.stream(req, dst, Vec::new(), Target::FirstHr)?;
        self.start(scope, s, req, stop)
    }

    /// Sends `pkt` to every member of the SAN: one datagram each on UDP,
    /// the broadcast MAC on Ethernet. False when any send failed.
    fn send_all(&self, pkt: &[u8]) -> bool {
        match self.link {
            Link::Udp(_) => {
                let mut ok = true;
                for m in &self.spec.members {
                    ok &= self.link.send(pkt, m).is_ok();
                }
                ok
            }
            Link::AfPacket { .. } => self
                .link
                .send(pkt, &NativeAddr::mac(ports::af_packet::BROADCAST))
                .is_ok(),
        }
    }

    /// `{"cmd":"join","group":G}` and `{"cmd":"leave","group":G}`: listen
    /// to group G (a logical address) or stop, and tell the SAN at once (an
    /// RRP#5 about itself to every member, docs/multicast.md "Joining").
    fn cmd_group(&self, req: &Value, join: bool) -> Reply {
        let g = addr_arg(req, "group")?;
        if !g.is_logical() {
            return Err(format!(
                "group: {} is not a logical address (0x8000-0xFFFD)",
                hex(g)
            ));
        }
        // With a SAN manager (the address its agent reports traps to, which
        // the master sets), the join is the manager's to accept first; a
        // leave is told to it too (best effort).
        let mtu = u64_arg(req, "mtu")?.unwrap_or(0);
        let mtu = u32::try_from(mtu).map_err(|_| "mtu: too large")?;
        let asked = if join || self.lock().node.listens(g) {
            self.at_manager(g, mtu, join)?
        } else {
            None
        };
        if let Some(st) = asked
            && join
            && !st.is_ok()
        {
            return Err(format!("join refused by the SAN manager: {st}"));
        }
        let mut st = self.lock();
        let changed = if join {
            st.node.join(g)
        } else {
            st.node.leave(g)
        };
        if join && !changed && !st.node.listens(g) {
            return Err(format!(
                "{}: at most {} groups",
                hex(g),
                rrp::node::MAX_GROUPS
            ));
        }
        let announce = st.node.announce();
        drop(st);
        let told = !changed || self.send_all(&announce);
        Ok(json!({
            "group": hex(g),
            "changed": changed,
            "told": told,
            "manager": asked.map(|s| s.describe()),
        }))
    }

    /// A join (McMemberRecord Set) or leave (Delete) of group `g` at the
    /// SAN manager its agent knows (the master's address, which the master
    /// sets in every agent's PortInfo), and the status it answered; `None`
    /// when there is none (no management on this host, no manager known,
    /// no answer from it), and the host joins on its own (routers learn it
    /// from R4 either way).
    fn at_manager(
        &self,
        g: Address,
        mtu: u32,
        join: bool,
    ) -> Result<Option<mgmt::wire::Status>, String> {
        use mgmt::attr::McMemberRecord;
        use mgmt::attr::mc_member_record::FULL_MEMBER;
        use mgmt::wire::{Method, MgmtClass};
        let Some(tx) = &self.mgmt else {
            return Ok(None);
        };
        let (itx, irx) = std::sync::mpsc::sync_channel(1);
        if tx.send(host_mgmt::Input::Info { reply: itx }).is_err() {
            return Ok(None);
        }
        let Ok(info) = irx.recv_timeout(Duration::from_secs(2)) else {
            return Ok(None);
        };
        let Some(manager) = info.manager.filter(|m| m.is_node()) else {
            return Ok(None);
        };
        let mut data = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
        McMemberRecord {
            group: g,
            join_state: FULL_MEMBER,
            mtu,
            ..Default::default()
        }
        .emit(&mut data)
        .map_err(|e| e.to_string())?;
        let request = mgmt::client::Request {
            target: mgmt::client::Target::Address(manager),
            class: MgmtClass::SUBN_ADM,
            method: if join { Method::SET } else { Method::DELETE },
            attribute: McMemberRecord::ID,
            modifier: 0,
            mkey: 0,
            data,
            timeout_ms: 200,
            retries: 2,
        };
        let (rtx, rrx) = std::sync::mpsc::sync_channel(1);
        if tx
            .send(host_mgmt::Input::Mad {
                request,
                reply: rtx,
            })
            .is_err()
        {
            return Ok(None);
        }
        // No answer: the address traps go to runs no master (SubnAdm goes
        // unanswered there), and the SAN has no manager to ask: the host
        // joins on its own, as on a SAN without one.
        Ok(match rrx.recv_timeout(Duration::from_secs(3)) {
            Ok(Ok(a)) => Some(a.mad.status),
            Ok(Err(_)) | Err(_) => None,
        })
    }

    fn cmd_send_l2<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        req: &Value,
        stop: &'s AtomicBool,
    ) -> Reply {
        let dst = dst_arg(req)?;
        // The hops, and the HR at which they start.
        let (hops, from) = match (req.get("route"), req.get("route_index")) {
            (Some(r), None) => {
                let hops = match r {
                    Value::String(s) => {
                        mwgen::profile::parse_route(s).map_err(|e| e.to_string())?
                    }
                    Value::Array(a) => a
                        .iter()
                        .map(|h| {
                            h.as_str()
                                .ok_or_else(|| {
                                    "route: hops are strings like \"0x011a@127.0.0.1:4001\""
                                        .to_string()
                                })
                                .and_then(|h| parse_hop(h).map_err(|e| e.to_string()))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => return Err("route: a list of hops".into()),
                };
                let via = match req.get("via") {
                    None | Some(Value::Null) => self.default_hr,
                    Some(_) => Some(addr_arg(req, "via")?),
                };
                (hops, via)
            }
            (None, Some(i)) => {
                let i = i.as_u64().ok_or("route_index: not an index")? as usize;
                let st = self.lock();
                let routes = st
                    .node
                    .routes
                    .get(&dst)
                    .ok_or_else(|| format!("no routes learned for {dst} (ask with route)"))?;
                let r = routes.get(i).ok_or_else(|| {
                    format!(
                        "route_index {i}: {} route(s) learned for {dst}",
                        routes.len()
                    )
                })?;
                let hops = r
                    .route
                    .iter()
                    .map(|l| RouterHop::from_content(l.content()).map_err(|e| e.to_string()))
                    .collect::<Result<Vec<_>, _>>()?;
                (hops, st.routes_from.get(&dst).copied())
            }
            _ => return Err("send_l2: give either route or route_index".into()),
        };
        // docs/architecture.md "Source routes": a native-only first hop is the hop on
        // this SAN (the datagram's or frame's destination), not an L2RH;
        // otherwise the chain starts at the HR that offered it.
        let kind = self.link.kind();
        let (to, l2) = match hops.split_first() {
            Some((first, rest)) if first.is_native_only() => {
                let to = NativeAddr::from_bytes(first.native.as_bytes())
                    .filter(|n| match kind {
                        LinkKind::Ethernet => n.as_mac().is_some(),
                        _ => n.as_udp().is_some(),
                    })
                    .ok_or_else(|| {
                        format!(
                            "{}: not a {} on this SAN",
                            format_hop_on(first, kind),
                            if kind == LinkKind::Ethernet {
                                "MAC"
                            } else {
                                "UDP endpoint"
                            }
                        )
                    })?;
                (to, rest.to_vec())
            }
            _ => {
                let hr = from.ok_or("no HR on this SAN")?;
                let to = self
                    .lock()
                    .neighbours
                    .get(&hr)
                    .copied()
                    .ok_or_else(|| format!("HR {hr}: native address unknown"))?;
                (to, hops)
            }
        };
        if l2.len() > MAX_L2RHS {
            return Err(format!(
                "{} L2RHs: routers forward at most {MAX_L2RHS}",
                l2.len()
            ));
        }
        let s = self.stream(req, dst, l2, Target::Fixed(to))?;
        self.start(scope, s, req, stop)
    }

    /// Sends a request to an HR (`"hr"`, else the default) and waits for an
    /// answer of kind `want` or an ERR UNK about `dst`; `Ok(false)` on
    /// timeout, `Err` on ERR UNK.
    fn ask(
        &self,
        req: &Value,
        dst: Address,
        want: Answer,
        make: impl Fn(&Node, Address) -> Vec<u8>,
    ) -> Result<bool, String> {
        let hr = match req.get("hr") {
            None | Some(Value::Null) => self.default_hr.ok_or("no HR on this SAN")?,
            Some(_) => addr_arg(req, "hr")?,
        };
        let timeout =
            Duration::from_millis(u64_arg(req, "timeout_ms")?.unwrap_or(DEFAULT_TIMEOUT_MS));
        let mut st = self.lock();
        let to = *st
            .neighbours
            .get(&hr)
            .ok_or_else(|| format!("HR {hr}: native address unknown"))?;
        let seen = |st: &State, k| st.answers.get(&(k, dst)).copied().unwrap_or(0);
        let (want0, unk0) = (seen(&st, want), seen(&st, Answer::Unknown));
        let pkt = make(&st.node, hr);
        self.link
            .send(&pkt, &to)
            .map_err(|e| format!("send to {}: {e}", self.link.text(&to)))?;
        let deadline = Instant::now() + timeout;
        loop {
            if seen(&st, want) != want0 {
                return Ok(true);
            }
            if seen(&st, Answer::Unknown) != unk0 {
                return Err("unknown destination".into());
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            st = self
                .answered
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn cmd_route(&self, req: &Value) -> Reply {
        if self.level < Level::C {
            return Err(format!(
                "a Level {:?} node does not ask for routes (Level C does)",
                self.level
            ));
        }
        let dst = dst_arg(req)?;
        if !self.ask(req, dst, Answer::Routes, |n, hr| n.route_request(hr, dst))? {
            return Err("no answer".into());
        }
        let st = self.lock();
        let routes = st.node.routes.get(&dst).cloned().unwrap_or_default();
        Ok(json!({
            "routes": routes.iter().map(|r| format_route_on(r, self.link.kind())).collect::<Vec<_>>(),
            "q": routes.iter().map(|r| r.q).collect::<Vec<_>>(),
            "mtu": routes.iter().map(|r| r.mtu.and_then(|m| m.bytes())).collect::<Vec<_>>(),
            "from": st.routes_from.get(&dst).map(|a| hex(*a)),
        }))
    }

    fn cmd_which_hr(&self, req: &Value) -> Reply {
        if self.level < Level::B {
            return Err("a Level A node does not ask routers (Level B and C do)".into());
        }
        let dst = dst_arg(req)?;
        if !self.ask(req, dst, Answer::Redirect, |n, hr| n.which_hr(hr, dst))? {
            return Ok(json!({"via": null}));
        }
        let st = self.lock();
        Ok(json!({"via": st.node.redirects.get(&dst).map(|a| hex(*a))}))
    }

    /// Every counter: see the module's documentation.
    fn stats(&self) -> Value {
        let st = self.lock();
        let rx = &st.rx;
        let errors: BTreeMap<&str, u64> = ["UNK", "HRDOWN", "LINKDOWN", "GENERAL"]
            .into_iter()
            .map(|k| (k, rx.errors.get(k).copied().unwrap_or(0)))
            .collect();
        json!({
            "name": self.spec.name,
            "address": hex(self.me()),
            "level": format!("{:?}", self.level),
            "link": match self.link { Link::Udp(_) => "udp", Link::AfPacket { .. } => "af_packet" },
            "bind": match &self.spec.link {
                HostLink::Udp { bind } => bind.to_string(),
                HostLink::AfPacket { interface } => interface.clone(),
            },
            "native": self.link.text(&self.link.native()),
            "default_hr": self.default_hr.map(hex),
            "tag": self.tag,
            "sent": st.tx.sent.iter().map(|(a, n)| (hex(*a), *n)).collect::<BTreeMap<_, _>>(),
            "send_errors": st.tx.send_errors,
            "redirect_unresolved": st.tx.redirect_unresolved,
            "redirect_renewals": st.tx.redirect_renewals,
            "busy": st.busy,
            "datagrams": rx.datagrams,
            "rx_lost": st.impaired.all.lost,
            "impair": self.impair_json(&st),
            "management": rx.management,
            "management_ignored": rx.management_ignored,
            "auth_refused": rx.auth_refused,
            "probes": rx.probes,
            "received": rx.by_source(),
            "ei": rx.ei(),
            "control": rx.control,
            "errors_received": errors,
            "rrp7_answered": rx.rrp7_answered,
            "rrp4_answered": rx.rrp4_answered,
            "other": rx.other,
            "not_member": rx.not_member,
            "groups": st.node.config().logical.iter().flatten().map(|g| hex(*g)).collect::<Vec<_>>(),
            "by_group": rx.by_group(),
            "malformed": rx.malformed,
            "recv_errors": rx.recv_errors,
            "reply_errors": rx.reply_errors,
            "redirects": st.node.redirects.iter().map(|(d, v)| (hex(*d), hex(*v))).collect::<BTreeMap<_, _>>(),
            "unknown": st.node.unknown.iter().map(|a| hex(*a)).collect::<Vec<_>>(),
            "routes": st.node.routes.iter().map(|(d, r)| (hex(*d), r.iter().map(|r| format_route_on(r, self.link.kind())).collect::<Vec<_>>())).collect::<BTreeMap<_, _>>(),
            "routes_from": st.routes_from.iter().map(|(d, h)| (hex(*d), hex(*h))).collect::<BTreeMap<_, _>>(),
            "neighbours": st.neighbours.iter().map(|(a, e)| (hex(*a), self.link.text(e))).collect::<BTreeMap<_, _>>(),
        })
    }

    /// `stats`' `impair`: the settings and the counts (module docs).
    fn impair_json(&self, st: &State) -> Value {
        let cfg = st.impair.as_ref().map(|i| *i.impairer.config());
        let c = &st.impaired;
        json!({
            "rx_loss": cfg.map_or(0.0, |c| c.loss),
            "duplicate": cfg.map_or(0.0, |c| c.duplicate),
            "reorder": cfg.map_or(0.0, |c| c.reorder),
            "seed": cfg.map(|c| c.seed),
            "seen": c.all.seen,
            "passed": c.all.passed,
            "lost": c.all.lost,
            "duplicated": c.all.duplicated,
            "reordered": c.all.reordered,
            "held": c.all.held(),
            "probes": {
                "seen": c.probes_seen,
                "lost": c.probes_lost,
                "duplicated": c.probes_duplicated,
                "reordered": c.probes_reordered,
            },
        })
    }

    /// `{"cmd":"impair","rx_loss":P,"duplicate":D,"reorder":R,"seed":S}`:
    /// impairs what the link receives, as a lossy, duplicating, reordering
    /// link would (module docs); all three 0 ends it.
    fn cmd_impair(&self, req: &Value) -> Reply {
        let prob = |k: &str| -> Result<f64, String> {
            match req.get(k) {
                None => Ok(0.0),
                Some(v) => v
                    .as_f64()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| format!("{k}: a probability from 0 to 1")),
            }
        };
        let (loss, duplicate, reorder) = (prob("rx_loss")?, prob("duplicate")?, prob("reorder")?);
        let seed = match req.get("seed") {
            None => now_ns() | 1,
            Some(v) => v.as_u64().ok_or("seed: an unsigned integer")?,
        };
        let on = loss + duplicate + reorder > 0.0;
        let cfg = ImpairConfig {
            loss,
            duplicate,
            reorder,
            ..ImpairConfig::seeded(seed)
        };
        let mut st = self.lock();
        // A datagram the previous settings held back is delivered first.
        let held = st.impair_flush();
        st.impair = on.then(|| RxImpair {
            impairer: Impairer::new(cfg, Arc::new(MonotonicClock::new()), 64),
            held: None,
        });
        drop(st);
        self.deliver(held);
        Ok(json!({
            "rx_loss": loss,
            "duplicate": duplicate,
            "reorder": reorder,
            "seed": on.then_some(seed),
        }))
    }

    fn cmd_reset(&self, req: &Value) -> Reply {
        let learned = req.get("learned").and_then(Value::as_bool).unwrap_or(false);
        let mut st = self.lock();
        st.rx = RxTraffic::default();
        st.tx = TxTraffic::default();
        if learned {
            st.node.redirects.clear();
            st.redirect_at.clear();
            st.renewal_at.clear();
            st.node.routes.clear();
            st.node.unknown.clear();
            st.routes_from.clear();
        }
        Ok(json!({}))
    }

    /// Answers one request line.
    fn request<'s>(&'s self, scope: &'s Scope<'s, '_>, line: &str, stop: &'s AtomicBool) -> Value {
        let reply = match serde_json::from_str::<Value>(line) {
            Err(e) => Err(format!("not JSON: {e}")),
            Ok(req) => match req.get("cmd").and_then(Value::as_str) {
                None => Err("no \"cmd\"".into()),
                Some("send") => self.cmd_send(scope, &req, stop),
                Some("send_l2") => self.cmd_send_l2(scope, &req, stop),
                Some("stats") => Ok(self.stats()),
                Some("route") => self.cmd_route(&req),
                Some("which_hr") => self.cmd_which_hr(&req),
                Some("reset") => self.cmd_reset(&req),
                Some("impair") => self.cmd_impair(&req),
                Some("join") => self.cmd_group(&req, true),
                Some("leave") => self.cmd_group(&req, false),
                Some("quit") => {
                    self.quit.store(true, Ordering::Relaxed);
                    Ok(json!({}))
                }
                Some(c) => Err(format!("unknown command {c:?}")),
            },
        };
        match reply {
            Ok(Value::Object(mut m)) => {
                m.insert("ok".into(), Value::Bool(true));
                Value::Object(m)
            }
            Ok(v) => json!({"ok": true, "value": v}),
            Err(e) => json!({"ok": false, "error": e}),
        }
    }

    /// Serves one control connection until it closes or the host stops.
    fn serve<'s>(&'s self, scope: &'s Scope<'s, '_>, conn: UnixStream, stop: &'s AtomicBool) {
        if conn.set_read_timeout(Some(POLL)).is_err() {
            return;
        }
        let Ok(mut out) = conn.try_clone() else {
            return;
        };
        let mut input = BufReader::new(conn);
        let mut line = Vec::new();
        while !self.stopping(stop) {
            let eof = match input.read_until(b'\n', &mut line) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) if nothing_yet(&e) => {
                    if line.len() > MAX_LINE {
                        let _ =
                            writeln!(out, "{}", json!({"ok": false, "error": "request too long"}));
                        return;
                    }
                    continue;
                }
                Err(_) => return,
            };
            if !line.ends_with(b"\n") && !eof {
                continue;
            }
            let text = String::from_utf8_lossy(&line).trim().to_string();
            line.clear();
            if !text.is_empty() {
                let answer = self.request(scope, &text, stop);
                if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
                    return;
                }
            }
            if eof {
                return;
            }
        }
    }
}

// ----- request arguments ----------------------------------------------------------

/// An address argument: a number or a string (`"0x0230"`, `"560"`).
fn addr_arg(req: &Value, key: &'static str) -> Result<Address, String> {
    match req.get(key) {
        None | Some(Value::Null) => Err(format!("missing {key:?}")),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|v| u16::try_from(v).ok())
            .map(Address)
            .ok_or_else(|| format!("{key}: {n} is not a 16-bit address")),
        Some(Value::String(s)) => {
            parse_address("dst", s).map_err(|_| format!("{key}: {s:?} is not an address"))
        }
        Some(v) => Err(format!("{key}: {v} is not an address")),
    }
}

/// The destination of a request: a valid destination (docs/architecture.md "Wire").
fn dst_arg(req: &Value) -> Result<Address, String> {
    let d = addr_arg(req, "dst")?;
    if !d.is_valid_destination() {
        return Err(format!("dst: {d} is not a destination (0x0040 and up)"));
    }
    Ok(d)
}

/// An optional count argument.
fn u64_arg(req: &Value, key: &'static str) -> Result<Option<u64>, String> {
    match req.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{key}: {v} is not a count")),
    }
}

// ----- the process ------------------------------------------------------------------

/// Removes the control socket when the host stops.
struct RemoveOnDrop<'a>(&'a Path);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

impl HostSide for Host<'_> {
    fn address(&self) -> Address {
        self.me()
    }

    /// The address its SAN's manager gave: RRP answers carry it from now
    /// on, and an RRP#7 to each of its HRs has them ask who it is.
    fn set_address(&self, address: Address) {
        self.me.store(address.0, Ordering::Relaxed);
        let mut st = self.lock();
        st.node.set_address(address);
        for (hr, n) in &self.spec.hrs {
            if let Ok(mut bytes) = Message::WhoAreYou
                .to_packet(Address(*hr), address)
                .and_then(|p| p.to_bytes())
            {
                st.node.sign(&mut bytes);
                let _ = self.link.send(&bytes, n);
            }
        }
    }

    fn port(&self) -> PortFacts {
        let m = self.spec.management.as_ref();
        PortFacts {
            address: self.me(),
            san_id: Address(m.map_or(0, |m| m.san_id)),
            mtu: m.map_or(0, |m| m.mtu),
            cost: 0,
            up: true,
            link_kind: PortInfo::link_kind_of(self.link.kind()),
            native: self.link.native(),
            lrt_entries: 0,
            buddies: self.spec.hrs.len().min(usize::from(u16::MAX)) as u16,
        }
    }

    /// The host's traffic in the router's slots: `received` all datagrams,
    /// `rx_errors` the socket's receive errors, `punted` the RRP/ERR and
    /// management packets (what a router hands its control plane),
    /// `transmitted` probes and replies sent, `inject_failed` sends the
    /// link refused, `dropped.bad-header` the malformed ones.
    fn counters(&self) -> Vec<u64> {
        let st = self.lock();
        let mut c = vec![0u64; PortCounters::COUNT];
        let mut put = |name: &str, v: u64| {
            if let Some(i) = PortCounters::NAMES.iter().position(|n| *n == name) {
                c[i] = v;
            }
        };
        let control: u64 = st.rx.control.values().sum();
        let sent: u64 = st.tx.sent.values().sum();
        put("received", st.rx.datagrams);
        put("rx_errors", st.rx.recv_errors);
        put("punted", control + st.rx.management);
        put(
            "transmitted",
            sent + st.rx.rrp7_answered + st.rx.rrp4_answered,
        );
        put("inject_failed", st.tx.send_errors + st.rx.reply_errors);
        put("dropped.bad-header", st.rx.malformed);
        c
    }

    fn clear_counters(&self) {
        let mut st = self.lock();
        st.rx = RxTraffic::default();
        st.tx = TxTraffic::default();
    }

    fn first_hop(&self, dst: Address) -> Option<NativeAddr> {
        let mut st = self.lock();
        Host::first_hop(self, &mut st, dst)
    }

    /// An empty `to` is every member of the SAN: each neighbour.
    fn send(&self, packet: &[u8], to: &NativeAddr) -> bool {
        // Signed on a keyed SAN, as the node's own packets are.
        let mut signed = packet.to_vec();
        self.lock().node.sign(&mut signed);
        let packet = &signed[..];
        if to.is_empty() {
            let all: BTreeSet<NativeAddr> = self.lock().neighbours.values().copied().collect();
            return all.iter().all(|n| self.link.send(packet, n).is_ok());
        }
        self.link.send(packet, to).is_ok()
    }

    fn neighbours(&self) -> Vec<Address> {
        self.lock().neighbours.keys().copied().collect()
    }

    fn native_of(&self, address: Address) -> Option<NativeAddr> {
        self.lock().neighbours.get(&address).copied()
    }

    fn neighbour(&self, native: &NativeAddr) -> Option<Address> {
        let st = self.lock();
        st.neighbours
            .iter()
            .find(|(_, n)| *n == native)
            .map(|(a, _)| *a)
    }
}

/// Runs the host until `stop` is set or a `quit` request comes; removes the
/// control socket on the way out. The link (UDP socket, AF_PACKET port) is
/// open before the control socket appears, so that a control socket means a
/// host ready to receive.
pub fn run(spec: &HostSpec, stop: &AtomicBool) -> Result<(), String> {
    let (mgmt_tx, mgmt_rx) = std::sync::mpsc::channel();
    let host = Host::new(spec, spec.management.as_ref().map(|_| mgmt_tx.clone()))?;
    // The admin socket, served while the host runs (its handle removes it).
    let _admin = match &spec.management {
        Some(m) => {
            let handler = host_mgmt::AdminHandler::new(mgmt_tx, Address(spec.address));
            let server = admin::server::serve(
                admin::server::ServerConfig::new(&m.admin),
                std::sync::Arc::new(handler),
            )
            .map_err(|e| format!("{}: admin socket {}: {e}", spec.name, m.admin.display()))?;
            Some(server)
        }
        None => {
            drop(mgmt_tx);
            None
        }
    };
    let path = spec.control.as_path();
    if path.exists() {
        // A socket left by an earlier run of this host.
        let _ = std::fs::remove_file(path);
    }
    let listener =
        UnixListener::bind(path).map_err(|e| format!("{}: {}: {e}", spec.name, path.display()))?;
    let _remove = RemoveOnDrop(path);
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("{}: {e}", spec.name))?;
    let host = &host;
    thread::scope(|scope| {
        scope.spawn(|| host.receive_loop(stop));
        if let Some(m) = &spec.management {
            let level = match host.level {
                Level::A => 1,
                Level::B => 2,
                Level::C => 3,
            };
            let cfg = m.agent_config(&spec.name, host.me(), level);
            let manager = m.manager_priority.map(|p| (p, m.sm_key, m.pool));
            scope.spawn(move || {
                host_mgmt::run(host, cfg, manager, &mgmt_rx, &|| host.stopping(stop))
            });
        }
        while !host.stopping(stop) {
            match listener.accept() {
                Ok((conn, _)) => {
                    // The accepted stream must block (with a timeout).
                    if conn.set_nonblocking(false).is_ok() {
                        scope.spawn(move || host.serve(scope, conn, stop));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(10))
                }
                Err(_) => thread::sleep(POLL),
            }
        }
    });
    Ok(())
}

// ----- the client ---------------------------------------------------------------------

/// A connection to a host's control socket.
#[derive(Debug)]
pub struct Client {
    input: BufReader<UnixStream>,
    out: UnixStream,
    timeout: Duration,
}

impl Client {
    /// Connects to the socket at `path`, retrying until `timeout` while the
    /// host is starting (no socket yet, or not listening yet). `timeout` is
    /// also how long [`Client::request`] waits for an answer, beyond what the
    /// request itself asks to wait (`timeout_ms`, a `send` with `wait`).
    pub fn connect(path: &Path, timeout: Duration) -> Result<Client, String> {
        let deadline = Instant::now() + timeout;
        let conn = loop {
            match UnixStream::connect(path) {
                Ok(c) => break c,
                Err(e) if Instant::now() >= deadline => {
                    return Err(format!("{}: {e}", path.display()));
                }
                Err(_) => thread::sleep(Duration::from_millis(20)),
            }
        };
        let out = conn.try_clone().map_err(|e| e.to_string())?;
        Ok(Client {
            input: BufReader::new(conn),
            out,
            timeout,
        })
    }

    /// Sends one request and reads its answer.
    pub fn request(&mut self, req: &Value) -> Result<Value, String> {
        let ms = |k: &str| req.get(k).and_then(Value::as_u64).unwrap_or(0);
        let mut wait = self.timeout + Duration::from_millis(ms("timeout_ms"));
        if req.get("wait").and_then(Value::as_bool) == Some(true) {
            let rate = req
                .get("rate_pps")
                .and_then(Value::as_f64)
                .unwrap_or(DEFAULT_RATE_PPS);
            if rate > 0.0 {
                wait += Duration::from_secs_f64(ms("count") as f64 / rate);
            }
        }
        self.input
            .get_ref()
            .set_read_timeout(Some(wait))
            .map_err(|e| e.to_string())?;
        writeln!(self.out, "{req}")
            .and_then(|_| self.out.flush())
            .map_err(|e| format!("request: {e}"))?;
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) => Err("the host closed the connection".into()),
            Ok(_) => serde_json::from_str(&line).map_err(|e| format!("answer {line:?}: {e}")),
            Err(e) => Err(format!("answer: {e}")),
        }
    }
}

/// Whether a read on a socket with a timeout ended without data and without
/// failing (timed out, would block, or interrupted): try again later.
fn nothing_yet(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}
