//! From TOML text to a [`Config`]: serde structs that mirror the file
//! (unknown keys refused everywhere; `[timers]` and `[limits]` are
//! `rrp::router::Timers` and `Limits` themselves), the key path of a
//! deserialisation error (serde_path_to_error), then the per-backend reading
//! of `[hr.port]` and of the static entries' native addresses.
//!
//! `management.mkey` is a secret: its parse errors say what is wrong without
//! the value, and a TOML syntax error on a line that may hold it does not
//! quote the line. So are `management.sm_key` and the `[hr.auth]` keys. A
//! secret given as a file (`mkey_file`, `sm_key_file`, `secret_file`) is
//! read here, through [`KeyFiles`] ([`super::key_file`]).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use rrp::auth::MIN_SECRET_LEN;
use rrp::native::parse_mac;
use rrp::router::{AuthConfig, AuthKey, Limits, StaticNode, Timers};
use rrp::wire::record::Capability;
use rrp::{Address, NativeAddr};
use serde::Deserialize;

use super::key_file::{self, KeyFiles};
use super::{
    AdminSection, AfPacketPortConfig, Backend, Config, ConfigError, DpdkPortConfig, DpdkSection,
    HrSection, LogSection, ManagementSection, PortConfig, RatesSection, RouterSection,
    UdpPortConfig, WorkersSection,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    router: RouterSection,
    #[serde(default)]
    dpdk: Option<DpdkSection>,
    #[serde(default)]
    workers: WorkersSection,
    #[serde(default)]
    timers: Timers,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    rates: RatesSection,
    #[serde(default)]
    admin: AdminSection,
    #[serde(default)]
    log: LogSection,
    #[serde(default)]
    management: RawManagement,
    #[serde(default)]
    drain: super::DrainSection,
    #[serde(default)]
    hr: Vec<RawHr>,
}

/// `[management]` as written: 64-bit values as an integer or a string; a
/// key inline or as a file (`mkey`, `mkey_file`), not both.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawManagement {
    identity: Option<Wide>,
    description: Option<String>,
    mkey: Option<Wide>,
    mkey_file: Option<PathBuf>,
    protect: u8,
    lease_s: u16,
    manager: Option<u16>,
    drop_threshold: u64,
    traps_per_s: u32,
    tracer: bool,
    answers_per_source: u32,
    answers_global: u32,
    manager_priority: Option<u8>,
    manager_hrs: Vec<u16>,
    sm_key: Option<Wide>,
    sm_key_file: Option<PathBuf>,
    address_pools: Vec<RawPool>,
    manager_timers: mgmt::manager::ManagerTimers,
    perf_manager: mgmt::perfmgr::PerfConfig,
    partitions_file: Option<PathBuf>,
    static_partitions: Vec<RawStaticPartitions>,
}

/// `{ hr = .., node = .., table = [..] }` in `management.static_partitions`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStaticPartitions {
    hr: u16,
    node: u16,
    table: Vec<String>,
}

/// `{ hr = .., first = .., last = .. }` in `management.address_pools`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPool {
    hr: u16,
    first: u16,
    last: u16,
}

impl Default for RawManagement {
    fn default() -> Self {
        let m = ManagementSection::default();
        RawManagement {
            identity: m.identity.map(Wide),
            description: m.description,
            mkey: None,
            mkey_file: None,
            protect: m.protect,
            lease_s: m.lease_s,
            manager: m.manager.map(|a| a.0),
            drop_threshold: m.drop_threshold,
            traps_per_s: m.traps_per_s,
            tracer: m.tracer,
            answers_per_source: m.answers_per_source,
            answers_global: m.answers_global,
            manager_priority: m.manager_priority,
            manager_hrs: m.manager_hrs.iter().map(|a| a.0).collect(),
            sm_key: None,
            sm_key_file: None,
            address_pools: m
                .address_pools
                .iter()
                .map(|p| RawPool {
                    hr: p.hr.0,
                    first: p.first.0,
                    last: p.last.0,
                })
                .collect(),
            manager_timers: m.manager_timers,
            perf_manager: m.perf_manager,
            partitions_file: m.partitions_file,
            static_partitions: Vec::new(),
        }
    }
}

/// What a key file of `[management]` holds: a 64-bit value as the key's
/// string form takes it. The error does not repeat the text.
fn wide_in_file(text: &str) -> Result<u64, String> {
    parse_wide(text).map_err(|why| {
        if why.starts_with("not a 64-bit value") {
            "holds no 64-bit value: \"0x\" and 1-16 hex digits, or decimal digits, and at most a newline (the content is not shown)".to_string()
        } else {
            why
        }
    })
}

/// A 64-bit key of `[management]` (`mkey`, `sm_key`): inline, read from
/// its file, or 0 without either.
fn management_key(
    name: &str,
    inline: Option<Wide>,
    file: Option<&PathBuf>,
    files: &dyn KeyFiles,
    errs: &mut Vec<ConfigError>,
) -> u64 {
    let key = format!("management.{name}_file");
    match (inline, file) {
        (Some(_), Some(_)) => {
            errs.push(ConfigError::new(
                key,
                format!("give {name} or {name}_file, not both"),
            ));
            0
        }
        (None, Some(path)) => key_file::read(files, &key, path, wide_in_file).unwrap_or_else(|e| {
            errs.push(e);
            0
        }),
        (inline, None) => inline.map_or(0, |w| w.0),
    }
}

/// `[management]` with its keys read (an unreadable key file is an error in
/// `errs`).
fn management(
    m: RawManagement,
    files: &dyn KeyFiles,
    errs: &mut Vec<ConfigError>,
) -> ManagementSection {
    ManagementSection {
        identity: m.identity.map(|w| w.0),
        description: m.description,
        mkey: management_key("mkey", m.mkey, m.mkey_file.as_ref(), files, errs),
        mkey_file: m.mkey_file,
        protect: m.protect,
        lease_s: m.lease_s,
        manager: m.manager.map(Address),
        drop_threshold: m.drop_threshold,
        traps_per_s: m.traps_per_s,
        tracer: m.tracer,
        answers_per_source: m.answers_per_source,
        answers_global: m.answers_global,
        manager_priority: m.manager_priority,
        manager_hrs: m.manager_hrs.into_iter().map(Address).collect(),
        sm_key: management_key("sm_key", m.sm_key, m.sm_key_file.as_ref(), files, errs),
        sm_key_file: m.sm_key_file,
        address_pools: m
            .address_pools
            .into_iter()
            .map(|p| super::AddressPool {
                hr: Address(p.hr),
                first: Address(p.first),
                last: Address(p.last),
            })
            .collect(),
        manager_timers: m.manager_timers,
        perf_manager: m.perf_manager,
        partitions_file: m.partitions_file,
        static_partitions: m
            .static_partitions
            .into_iter()
            .enumerate()
            .map(|(j, s)| super::StaticPartitions {
                hr: Address(s.hr),
                node: Address(s.node),
                table: s
                    .table
                    .iter()
                    .enumerate()
                    .filter_map(|(k, e)| {
                        table_entry(e)
                            .map_err(|why| {
                                errs.push(ConfigError::new(
                                    format!("management.static_partitions[{j}].table[{k}]"),
                                    why,
                                ))
                            })
                            .ok()
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// An entry of a static partition table: `"KEY=full"` or `"KEY=limited"`,
/// the key 0x0001-0x7FFF as in the partitions file.
fn table_entry(
    e: &str,
) -> Result<(mgmt::partition::PartitionKey, mgmt::partition::Membership), String> {
    use mgmt::partition::{Membership, PartitionKey};
    let (k, m) = e
        .split_once('=')
        .ok_or_else(|| format!("{e:?}: write KEY=full or KEY=limited"))?;
    let (k, m) = (k.trim(), m.trim());
    let key = k
        .strip_prefix("0x")
        .or_else(|| k.strip_prefix("0X"))
        .map_or_else(|| k.parse().ok(), |h| u16::from_str_radix(h, 16).ok())
        .and_then(PartitionKey::new)
        .ok_or_else(|| format!("{k:?} is not a partition key (0x0001-0x7fff)"))?;
    let membership = match m {
        "full" => Membership::Full,
        "limited" => Membership::Limited,
        _ => return Err(format!("{m:?}: full or limited")),
    };
    Ok((key, membership))
}

/// A 64-bit value (`management.identity`, `management.mkey`): a TOML
/// integer (not negative, so at most `i64::MAX`), or a string, `"0x"` and
/// 1-16 hex digits or decimal digits (`_` between digits allowed).
///
/// Its errors never repeat the value: it may be the M_Key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wide(u64);

const WIDE_EXPECTED: &str = "expected an integer 0-9223372036854775807, or a string: \"0x\" and 1-16 hex digits (\"0x0123456789abcdef\"), or decimal digits";

impl<'de> Deserialize<'de> for Wide {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Wide, D::Error> {
        struct V;
        impl<'v> serde::de::Visitor<'v> for V {
            type Value = Wide;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(WIDE_EXPECTED)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Wide, E> {
                u64::try_from(v)
                    .map(Wide)
                    .map_err(|_| E::custom(format!("must not be negative ({WIDE_EXPECTED})")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Wide, E> {
                Ok(Wide(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Wide, E> {
                parse_wide(v).map(Wide).map_err(E::custom)
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Wide, E> {
                Err(E::custom(format!("invalid type: boolean, {WIDE_EXPECTED}")))
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Wide, E> {
                Err(E::custom(format!(
                    "invalid type: floating point, {WIDE_EXPECTED}"
                )))
            }
            fn visit_seq<A: serde::de::SeqAccess<'v>>(self, _: A) -> Result<Wide, A::Error> {
                Err(serde::de::Error::custom(format!(
                    "invalid type: array, {WIDE_EXPECTED}"
                )))
            }
            fn visit_map<A: serde::de::MapAccess<'v>>(self, _: A) -> Result<Wide, A::Error> {
                Err(serde::de::Error::custom(format!(
                    "invalid type: table or date-time, {WIDE_EXPECTED}"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// A 64-bit value written as a string; the error does not repeat it.
fn parse_wide(s: &str) -> Result<u64, String> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (s, 10),
    };
    let ok_digit = |b: u8| {
        if radix == 16 {
            b.is_ascii_hexdigit()
        } else {
            b.is_ascii_digit()
        }
    };
    let b = digits.as_bytes();
    let well_formed = !b.is_empty()
        && b.iter().all(|&c| ok_digit(c) || c == b'_')
        && ok_digit(b[0])
        && ok_digit(b[b.len() - 1])
        && !digits.contains("__");
    if !well_formed {
        return Err(format!("not a 64-bit value ({WIDE_EXPECTED})"));
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    u64::from_str_radix(&clean, radix).map_err(|_| "larger than 64 bits".to_string())
}

fn port_up() -> admin::PortState {
    admin::PortState::Up
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHr {
    address: u16,
    san_id: u16,
    mtu: u32,
    #[serde(default = "super::one_u16")]
    cost: u16,
    #[serde(default = "port_up")]
    admin_state: admin::PortState,
    name: Option<String>,
    port: RawPort,
    #[serde(default, rename = "static")]
    statics: Vec<RawStatic>,
    auth: Option<RawAuth>,
}

/// `[hr.auth]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAuth {
    send_key: u16,
    #[serde(default)]
    accept_unsigned: bool,
    keys: Vec<RawKey>,
}

/// `{ id = .., secret = ".." }` or `{ id = .., secret_file = ".." }` in
/// `hr.auth.keys`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKey {
    id: u16,
    secret: Option<String>,
    secret_file: Option<PathBuf>,
}

/// A key's secret: hex digits (an even count; `0x` and `:` allowed). The
/// error never quotes the value.
fn secret_bytes(s: &str) -> Result<Vec<u8>, String> {
    let hex: Vec<u8> = s
        .trim()
        .trim_start_matches("0x")
        .bytes()
        .filter(|b| *b != b':')
        .collect();
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return Err("must be hex digits (the value is not shown)".into());
    }
    if !hex.len().is_multiple_of(2) {
        return Err("an odd number of hex digits (the value is not shown)".into());
    }
    Ok(hex
        .chunks(2)
        .map(|p| {
            let d = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            d(p[0]) << 4 | d(p[1])
        })
        .collect())
}

/// What a key file of `[hr.auth]` holds: a secret as `secret` takes it, at
/// least [`MIN_SECRET_LEN`] bytes. The error does not repeat the text.
fn secret_in_file(text: &str) -> Result<Vec<u8>, String> {
    let secret = secret_bytes(text)?;
    if secret.len() < MIN_SECRET_LEN {
        return Err(format!(
            "holds fewer than {MIN_SECRET_LEN} bytes of key (the content is not shown)"
        ));
    }
    Ok(secret)
}

/// `[hr.port]`: the keys of every backend; which ones a port may have
/// depends on its backend (checked after parsing, naming the key).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPort {
    backend: Backend,
    // udp
    bind: Option<SocketAddr>,
    members: Option<Vec<SocketAddr>>,
    // udp, af_packet
    pool_size: Option<usize>,
    socket_buf: Option<usize>,
    // af_packet
    interface: Option<String>,
    rx_frames: Option<u32>,
    tx_frames: Option<u32>,
    // dpdk
    device: Option<String>,
    rx_ring: Option<u16>,
    tx_ring: Option<u16>,
    mac: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStatic {
    address: u16,
    native: String,
    name: Option<String>,
    #[serde(default)]
    capabilities: Vec<RawCapability>,
    #[serde(default)]
    groups: Vec<u16>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCapability {
    code: u8,
    #[serde(default)]
    params: Vec<u8>,
}

/// The keys each backend takes in `[hr.port]` (besides `backend`).
pub(super) fn backend_keys(b: Backend) -> &'static [&'static str] {
    match b {
        Backend::Udp => &["bind", "members", "pool_size", "socket_buf"],
        Backend::AfPacket => &[
            "interface",
            "rx_frames",
            "tx_frames",
            "pool_size",
            "socket_buf",
        ],
        Backend::Dpdk => &["device", "rx_ring", "tx_ring", "mac"],
    }
}

/// Parses `text`, reading the key files it names through `files`: `Err` for
/// a file that is not a configuration's TOML (the first error), `Ok(Err)`
/// for values that parsed but do not fit their port's backend, and key
/// files refused (every such error).
pub(super) fn parse(
    text: &str,
    files: &dyn KeyFiles,
) -> Result<Result<Config, Vec<ConfigError>>, ConfigError> {
    let de = toml::Deserializer::new(text);
    let raw: RawConfig = serde_path_to_error::deserialize(de).map_err(|e| serde_error(e, text))?;
    Ok(convert(raw, files))
}

fn serde_error(e: serde_path_to_error::Error<toml::de::Error>, text: &str) -> ConfigError {
    let path = e.path().to_string();
    let path = if path == "." { String::new() } else { path };
    let inner = e.into_inner();
    let location = inner.span().map(|s| super::locate::line_col(text, s.start));
    let msg = inner.message().trim().to_string();
    let join = |field: &str| {
        if path.is_empty() {
            field.to_string()
        } else {
            format!("{path}.{field}")
        }
    };
    let (key, why) = if let Some(field) = backticked_after(&msg, "missing field ") {
        (join(field), "missing (required)".to_string())
    } else if let Some(field) = backticked_after(&msg, "unknown field ") {
        // The path ends with the unknown key already.
        let rest = msg
            .split_once(", expected ")
            .map(|(_, r)| format!("unknown key (expected {r})"))
            .unwrap_or_else(|| "unknown key".to_string());
        let key = if path.ends_with(field) {
            path.clone()
        } else {
            join(field)
        };
        (key, rest)
    } else if path.is_empty() {
        // A syntax error: toml's own message, with its line and column, and
        // the line itself unless it may hold the M_Key.
        let why = match location {
            Some((line, col)) if may_hold_secret(text, line) => {
                let hint = if msg.contains("too large") {
                    "; above 9223372036854775807, write a 64-bit value as a string: \"0x...\""
                } else {
                    ""
                };
                format!(
                    "TOML parse error at line {line}, column {col}\n{msg}\n(the line is not shown: it may hold a key{hint})"
                )
            }
            _ => inner.to_string().trim_end().to_string(),
        };
        return ConfigError {
            key: String::new(),
            why,
            location,
        };
    } else {
        (path.clone(), msg)
    };
    ConfigError { key, why, location }
}

/// Whether line `line` (1-based) of `text` may hold `management.mkey`: it
/// names `mkey`, or it is in the `[management]` table (a lexical guess that
/// errs on the side of hiding).
fn may_hold_secret(text: &str, line: usize) -> bool {
    let mut in_management = false;
    for (n, l) in text.lines().enumerate() {
        let t = l.trim_start();
        if t.starts_with('[') {
            let name: String = t
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
                .collect();
            in_management = name == "management" || name == "hr.auth";
        }
        if n + 1 == line {
            return in_management || l.contains("mkey") || l.contains("secret");
        }
    }
    // Past the end (an error at end of file): the last table decides.
    in_management
}

/// `name` in "<prefix>`name`...".
fn backticked_after<'a>(msg: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = msg.strip_prefix(prefix)?.strip_prefix('`')?;
    rest.split_once('`').map(|(name, _)| name)
}

fn convert(raw: RawConfig, files: &dyn KeyFiles) -> Result<Config, Vec<ConfigError>> {
    let mut errs = Vec::new();
    let management = management(raw.management, files, &mut errs);
    let mut hrs = Vec::with_capacity(raw.hr.len());
    for (i, h) in raw.hr.into_iter().enumerate() {
        if let Some(hr) = convert_hr(i, h, files, &mut errs) {
            hrs.push(hr);
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Config {
        router: raw.router,
        dpdk: raw.dpdk,
        workers: raw.workers,
        timers: raw.timers,
        drain: raw.drain,
        limits: raw.limits,
        rates: raw.rates,
        admin: raw.admin,
        log: raw.log,
        management,
        hrs,
    })
}

fn convert_hr(
    i: usize,
    h: RawHr,
    files: &dyn KeyFiles,
    errs: &mut Vec<ConfigError>,
) -> Option<HrSection> {
    let n = errs.len();
    let port = convert_port(i, h.port, errs);
    let backend = port.as_ref().map(PortConfig::backend);
    let mut statics = Vec::with_capacity(h.statics.len());
    for (j, s) in h.statics.into_iter().enumerate() {
        let native = match backend {
            Some(b) => match NativeAddr::parse_on(b.link_kind(), &s.native) {
                Ok(n) => n,
                Err(why) => {
                    let san = if b.is_ethernet() {
                        format!("the SAN of a {b} port is Ethernet")
                    } else {
                        format!("the SAN of a {b} port")
                    };
                    errs.push(ConfigError::new(
                        format!("hr[{i}].static[{j}].native"),
                        format!("{why} ({san})"),
                    ));
                    continue;
                }
            },
            None => continue,
        };
        statics.push(StaticNode {
            address: Address(s.address),
            native,
            name: s.name.map(String::into_bytes),
            capabilities: s
                .capabilities
                .into_iter()
                .map(|c| Capability {
                    code: c.code,
                    params: c.params,
                })
                .collect(),
            groups: s.groups.into_iter().map(Address).collect(),
        });
    }
    let mut key_files = BTreeMap::new();
    let auth = h.auth.map(|a| {
        let mut keys = Vec::with_capacity(a.keys.len());
        for (j, k) in a.keys.into_iter().enumerate() {
            let key = |name: &str| format!("hr[{i}].auth.keys[{j}].{name}");
            let secret = match (&k.secret, &k.secret_file) {
                (Some(_), Some(_)) => Err(ConfigError::new(
                    key("secret_file"),
                    "give secret or secret_file, not both",
                )),
                (None, None) => Err(ConfigError::new(
                    key("secret"),
                    "missing (required: secret, or secret_file naming the file that holds it)",
                )),
                (Some(s), None) => {
                    secret_bytes(s).map_err(|why| ConfigError::new(key("secret"), why))
                }
                (None, Some(path)) => {
                    key_file::read(files, &key("secret_file"), path, secret_in_file)
                }
            };
            match secret {
                Ok(secret) => {
                    if let Some(path) = k.secret_file {
                        key_files.insert(k.id, path);
                    }
                    keys.push(AuthKey { id: k.id, secret });
                }
                Err(e) => errs.push(e),
            }
        }
        AuthConfig {
            keys,
            send_key: a.send_key,
            accept_unsigned: a.accept_unsigned,
        }
    });
    if errs.len() != n {
        return None;
    }
    Some(HrSection {
        auth,
        key_files,
        address: Address(h.address),
        san_id: Address(h.san_id),
        mtu: h.mtu,
        cost: h.cost,
        admin_state: h.admin_state,
        name: h.name,
        port: port?,
        statics,
    })
}

fn convert_port(i: usize, p: RawPort, errs: &mut Vec<ConfigError>) -> Option<PortConfig> {
    let key = |k: &str| format!("hr[{i}].port.{k}");
    let b = p.backend;
    let allowed = backend_keys(b);
    let present: [(&str, bool); 11] = [
        ("bind", p.bind.is_some()),
        ("members", p.members.is_some()),
        ("pool_size", p.pool_size.is_some()),
        ("socket_buf", p.socket_buf.is_some()),
        ("interface", p.interface.is_some()),
        ("rx_frames", p.rx_frames.is_some()),
        ("tx_frames", p.tx_frames.is_some()),
        ("device", p.device.is_some()),
        ("rx_ring", p.rx_ring.is_some()),
        ("tx_ring", p.tx_ring.is_some()),
        ("mac", p.mac.is_some()),
    ];
    let n = errs.len();
    for (k, is) in present {
        if is && !allowed.contains(&k) {
            errs.push(ConfigError::new(
                key(k),
                format!(
                    "not a key of backend \"{b}\" (its keys: backend, {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
    let mut required = |k: &str, is: bool| {
        if !is {
            errs.push(ConfigError::new(
                key(k),
                format!("missing (required for backend \"{b}\")"),
            ));
        }
    };
    match b {
        Backend::Udp => required("bind", p.bind.is_some()),
        Backend::AfPacket => required("interface", p.interface.is_some()),
        Backend::Dpdk => required("device", p.device.is_some()),
    }
    let mac = match p.mac.as_deref().map(|m| (m, parse_mac(m))) {
        Some((m, None)) if b == Backend::Dpdk => {
            errs.push(ConfigError::new(
                key("mac"),
                format!("{m:?} is not a MAC address like \"02:00:00:00:00:07\""),
            ));
            None
        }
        Some((_, mac)) => mac,
        None => None,
    };
    if errs.len() != n {
        return None;
    }
    Some(match b {
        Backend::Udp => {
            let mut u = UdpPortConfig::new(p.bind?);
            u.members = p.members.unwrap_or_default();
            u.pool_size = p.pool_size.unwrap_or(u.pool_size);
            u.socket_buf = p.socket_buf.unwrap_or(u.socket_buf);
            PortConfig::Udp(u)
        }
        Backend::AfPacket => {
            let mut a = AfPacketPortConfig::new(&p.interface?);
            a.rx_frames = p.rx_frames.unwrap_or(a.rx_frames);
            a.tx_frames = p.tx_frames.unwrap_or(a.tx_frames);
            a.pool_size = p.pool_size.unwrap_or(a.pool_size);
            a.socket_buf = p.socket_buf.unwrap_or(a.socket_buf);
            PortConfig::AfPacket(a)
        }
        Backend::Dpdk => {
            let mut d = DpdkPortConfig::new(&p.device?);
            d.rx_ring = p.rx_ring.unwrap_or(d.rx_ring);
            d.tx_ring = p.tx_ring.unwrap_or(d.tx_ring);
            d.mac = mac;
            PortConfig::Dpdk(d)
        }
    })
}
