//! Router configuration as the sans-IO engine needs it (the daemon's TOML
//! maps onto this). Validation returns typed errors naming the field.
//!
//! [`Timers`] and [`Limits`] are declared here once: with the `serde`
//! feature they are also the daemon's `[timers]` and `[limits]` tables
//! (docs/configuration.md), each field a key with its default, and their
//! `validate` is what the engine and the daemon's configuration both check.
//! A new timer or limit is a field with its doc, its default in `Default`,
//! and its place in `validate` (which destructures the whole struct, so
//! that a field cannot be forgotten there).

use core::fmt;

use crate::address::Address;
use crate::limits::{MAX_PORTS, MAX_RCVF};
use crate::native::NativeAddr;
use crate::port::PerPort;
use crate::wire::record::Capability;

/// The longest timer interval in milliseconds (a day).
pub const MAX_TIMER_MS: u64 = 86_400_000;

/// Names each value by its variable: `[("sweep_ms", sweep_ms), ...]`.
macro_rules! named {
    ($($v:ident),* $(,)?) => {
        [$((stringify!($v), $v)),*]
    };
}

/// Timers in milliseconds (docs/architecture.md "Route tables and RRP");
/// the daemon's `[timers]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Timers {
    /// Broadcast RRP#7 sweep of each SAN.
    pub sweep_ms: u64,
    /// Unicast RRP#7 keepalive to each discovered node.
    pub keepalive_ms: u64,
    /// Keepalives a node may miss before it is removed (HR-DOWN for an HR).
    pub keepalive_misses: u32,
    /// Full re-advertisement of the current RTs to every buddy.
    pub refresh_ms: u64,
    /// An RT not refreshed within this time is deleted.
    pub hold_ms: u64,
    /// Changes are sent at most once per this interval (batched).
    pub advertise_ms: u64,
    /// FIBs are published at most once per this interval.
    pub fib_ms: u64,
    /// RTs crossing a downed HR are refused this long, so that late
    /// re-advertisements cannot resurrect them; the downed HR's buddies
    /// refuse them until it answers keepalives again (at most a hold time).
    pub tombstone_ms: u64,
    /// How long an HR that answered its last keepalive has to answer a
    /// probe before a third party's HR-DOWN about it is taken
    /// (docs/spec-notes.md 60); at most `keepalive_ms` of it is used.
    pub probe_ms: u64,
}

impl Default for Timers {
    fn default() -> Self {
        Timers {
            sweep_ms: 10_000,
            keepalive_ms: 1_000,
            keepalive_misses: 3,
            refresh_ms: 30_000,
            hold_ms: 90_000,
            advertise_ms: 200,
            fib_ms: 100,
            tombstone_ms: 5_000,
            probe_ms: 50,
        }
    }
}

impl Timers {
    /// Checks the timers, every problem at once, each error naming its key
    /// (`timers.hold_ms`): every interval is 1 ms to [`MAX_TIMER_MS`], a
    /// node may miss at least one keepalive, and an RT outlives its refresh.
    pub fn validate(&self) -> Result<(), Vec<ConfigError>> {
        let Timers {
            sweep_ms,
            keepalive_ms,
            keepalive_misses,
            refresh_ms,
            hold_ms,
            advertise_ms,
            fib_ms,
            tombstone_ms,
            probe_ms,
        } = *self;
        let mut errs = Vec::new();
        let mut err = |key: &str, why: String| {
            errs.push(ConfigError {
                field: format!("timers.{key}"),
                why,
            })
        };
        for (key, ms) in named![
            sweep_ms,
            keepalive_ms,
            refresh_ms,
            hold_ms,
            advertise_ms,
            fib_ms,
            tombstone_ms,
            probe_ms,
        ] {
            if ms == 0 {
                err(key, "intervals must be > 0".into());
            } else if ms > MAX_TIMER_MS {
                err(key, format!("at most {MAX_TIMER_MS} (a day)"));
            }
        }
        if keepalive_misses == 0 {
            err("keepalive_misses", "must be >= 1".into());
        }
        if hold_ms != 0 && hold_ms <= refresh_ms {
            err(
                "hold_ms",
                format!(
                    "must exceed timers.refresh_ms ({refresh_ms}): an RT must outlive its refresh"
                ),
            );
        }
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

/// Limits on what the engine accepts from the network; the daemon's
/// `[limits]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Limits {
    /// Node entries in one RT.
    pub max_nodes_per_rt: usize,
    /// RTs kept from one neighbour.
    pub max_rts_per_neighbour: usize,
    /// RTs kept on one HR, from all its neighbours: with `max_nodes_per_rt`
    /// and the HRs, the bound of the memory route state takes.
    pub max_rts_per_hr: usize,
    /// RCVF entries (the shared cap, [`MAX_RCVF`], or less).
    pub max_rcvf: usize,
    /// Entries of one LRT.
    pub max_lrt: usize,
    /// Requests (RRP#1, #4, #6, #7, #8) answered per second to one sender
    /// (0: none): a flood of requests is answered at a bounded rate, the
    /// rest counted (`requests_limited`).
    pub answers_per_source: u32,
    /// Requests answered per second in all (0: none).
    pub answers_global: u32,
    /// HR-DOWN and LINK-DOWN messages taken per second from one sender;
    /// the rest counted (`downs_limited`) and dropped.
    pub downs_per_source: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_nodes_per_rt: 4096,
            max_rts_per_neighbour: 16_384,
            max_rts_per_hr: 65_536,
            max_rcvf: MAX_RCVF,
            max_lrt: 4096,
            answers_per_source: 50,
            answers_global: 1000,
            downs_per_source: 10,
        }
    }
}

impl Limits {
    /// Checks the limits, every problem at once, each error naming its key
    /// (`limits.max_rcvf`): every count is at least 1 (keepalives are
    /// requests: a box that answers none is down to its buddies), and RCVFs
    /// are capped at [`MAX_RCVF`].
    pub fn validate(&self) -> Result<(), Vec<ConfigError>> {
        let Limits {
            max_nodes_per_rt,
            max_rts_per_neighbour,
            max_rts_per_hr,
            max_rcvf,
            max_lrt,
            answers_per_source,
            answers_global,
            downs_per_source,
        } = *self;
        let mut errs = Vec::new();
        let mut err = |key: &str, why: String| {
            errs.push(ConfigError {
                field: format!("limits.{key}"),
                why,
            })
        };
        for (key, n) in named![max_nodes_per_rt, max_rts_per_neighbour, max_rts_per_hr] {
            if n == 0 {
                err(key, "must be >= 1".into());
            }
        }
        if max_rcvf == 0 || max_rcvf > MAX_RCVF {
            err("max_rcvf", format!("must be 1..={MAX_RCVF}"));
        }
        if max_lrt == 0 {
            err("max_lrt", "must be >= 1".into());
        }
        for (key, n) in named![answers_per_source, answers_global, downs_per_source] {
            if n == 0 {
                err(key, "must be >= 1".into());
            }
        }
        if errs.is_empty() { Ok(()) } else { Err(errs) }
    }
}

/// Rate limits of error and redirect messages (ICMP manners, RFC 1122).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorRates {
    /// Per source address: messages per second.
    pub per_source: u32,
    /// In all: messages per second.
    pub global: u32,
}

impl Default for ErrorRates {
    fn default() -> Self {
        ErrorRates {
            per_source: 10,
            global: 200,
        }
    }
}

/// A node entered by configuration (Level-A/B style): exempt from keepalives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticNode {
    /// Its address.
    pub address: Address,
    /// Its native address on the HR's SAN.
    pub native: NativeAddr,
    /// Its name.
    pub name: Option<Vec<u8>>,
    /// Its capabilities.
    pub capabilities: Vec<Capability>,
    /// The groups (logical addresses) it listens to: its R4, for a node
    /// that does not answer RRP#7 (docs/multicast.md).
    pub groups: Vec<Address>,
}

/// One HR (one port) of the box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HrConfig {
    /// The HR's MessageWay address.
    pub address: Address,
    /// Its SAN's SAN-ID.
    pub san_id: Address,
    /// The SAN's MTU in bytes (0 = unlimited).
    pub mtu: u32,
    /// The cost of crossing the SAN (>= 1).
    pub cost: u16,
    /// The HR's own native address on its SAN.
    pub native: NativeAddr,
    /// Static LRT entries.
    pub static_nodes: Vec<StaticNode>,
    /// Keys of the SAN's authentication (docs/spec-notes.md 59): none, the
    /// HR signs nothing and asks for no signature.
    pub auth: Option<AuthConfig>,
}

pub use crate::auth::{AuthConfig, AuthKey, MAX_AUTH_KEYS, MIN_SECRET_LEN};

/// The box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouterConfig {
    /// The router's name (reported in RRP#5 with the HR's port).
    pub name: String,
    /// Its HRs, in port order.
    pub hrs: PerPort<HrConfig>,
    /// The cost of crossing the router between twins (>= 1).
    pub router_cost: u16,
    /// RTs kept per SAN.
    pub k: usize,
    /// Timers.
    pub timers: Timers,
    /// Limits.
    pub limits: Limits,
    /// Error rate limits.
    pub error_rates: ErrorRates,
    /// Seed of the first serial number (the daemon takes it from the clock
    /// so that a restarted HR is not ignored as stale).
    pub sn_seed: u16,
    /// The first sequence number of signed packets (the daemon takes it
    /// from the clock, docs/spec-notes.md 59, so that a restarted box's
    /// packets are not taken for replays).
    pub auth_seq_seed: u64,
    /// When a starting box takes transit (docs/spec-notes.md 74).
    pub leave: super::leave::LeaveConfig,
}

impl RouterConfig {
    /// A box with these HRs and the default timers, costs and limits.
    pub fn new(name: &str, hrs: Vec<HrConfig>) -> RouterConfig {
        RouterConfig {
            name: name.to_string(),
            hrs: hrs.into(),
            router_cost: 1,
            k: 4,
            timers: Timers::default(),
            limits: Limits::default(),
            error_rates: ErrorRates::default(),
            sn_seed: 1,
            auth_seq_seed: 0,
            leave: Default::default(),
        }
    }

    /// Checks the configuration; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |field: String, why: &str| {
            Err(ConfigError {
                field,
                why: why.to_string(),
            })
        };
        if self.hrs.is_empty() {
            return err("hrs".into(), "a router needs at least one HR");
        }
        self.leave.validate()?;
        if self.hrs.len() > MAX_PORTS {
            return err("hrs".into(), &format!("at most {MAX_PORTS} HRs per box"));
        }
        if self.router_cost == 0 {
            return err("router_cost".into(), "costs are >= 1");
        }
        if self.k == 0 {
            return err("k".into(), "must keep at least one RT per SAN");
        }
        // Every problem of a section is listed there; the engine needs the first.
        self.limits.validate().map_err(first)?;
        self.timers.validate().map_err(first)?;
        for (i, h) in self.hrs.iter().enumerate() {
            let f = |s: &str| format!("hrs[{i}].{s}");
            if !h.address.is_node() {
                return err(f("address"), "must be 0x0040-0x7FFF");
            }
            if !h.san_id.is_node() {
                return err(f("san_id"), "must be 0x0040-0x7FFF");
            }
            if h.cost == 0 {
                return err(f("cost"), "costs are >= 1");
            }
            if h.mtu != 0 && h.mtu < 64 {
                return err(f("mtu"), "must be 0 (unlimited) or at least 64 bytes");
            }
            for (j, o) in self.hrs.iter().enumerate().skip(i + 1) {
                if o.address == h.address {
                    return err(format!("hrs[{j}].address"), "two HRs with the same address");
                }
                if o.san_id == h.san_id {
                    return err(
                        format!("hrs[{j}].san_id"),
                        "two HRs of one box on the same SAN",
                    );
                }
            }
            if let Some(a) = &h.auth {
                a.validate(&f("auth"))?;
            }
            for (j, s) in h.static_nodes.iter().enumerate() {
                if !s.address.is_node() {
                    return err(
                        f(&format!("static_nodes[{j}].address")),
                        "must be 0x0040-0x7FFF",
                    );
                }
            }
        }
        Ok(())
    }
}

/// The first of a list of errors (never empty).
fn first(mut errs: Vec<ConfigError>) -> ConfigError {
    errs.swap_remove(0)
}

/// A configuration error: which field, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The field, e.g. `hrs[1].cost`.
    pub field: String,
    /// Why it is refused.
    pub why: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.why)
    }
}

impl std::error::Error for ConfigError {}
