//! A host's spec: what a host is (its name, address, level, link and HRs),
//! as the file `mwlab host --spec FILE` reads and [`super::run`] checks.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use rrp::Address;
use rrp::node::Level;
use rrp::{LinkKind, NativeAddr};
use serde::{Deserialize, Serialize};

use super::format::format_native;
use super::management::HostManagement;

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

    /// Checks what [`run`](super::run) relies on: a level, a node address, HR addresses
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
