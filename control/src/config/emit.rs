//! A [`Config`] as TOML, every key spelled out: the tables and their
//! entries ([`tables`]), rendered as text ([`render`]) or flattened into key
//! paths for the reload diff ([`flat`]). A section whose type is declared
//! in a lower crate (`[timers]`, `[limits]`, `management.manager_timers`)
//! is written field by field through its `Serialize` ([`super::literal`]).
//!
//! The text holds `management.mkey` (the file holds it too, and it must load
//! again to the same configuration); the reload diff does not show it. A
//! secret read from a file is written as the file's name (`mkey_file`,
//! `sm_key_file`, `secret_file`), so that the text loads again to the same
//! configuration while the file holds the same key.

use std::fmt::Write as _;

use rrp::NativeAddr;

use super::{Config, PortConfig, SnSeed, literal};

/// One table of the file: its header, its key path and its entries (key,
/// TOML literal).
pub(super) struct Table {
    pub header: String,
    pub path: String,
    pub entries: Vec<(&'static str, String)>,
}

impl Table {
    fn new(header: &str, path: String) -> Table {
        Table {
            header: header.to_string(),
            path,
            entries: Vec::new(),
        }
    }

    fn put(&mut self, key: &'static str, value: String) {
        self.entries.push((key, value));
    }

    /// Every field of `section`, in declaration order.
    fn put_fields<T: serde::Serialize>(&mut self, section: &T) {
        self.entries.extend(literal::fields(section));
    }
}

/// A TOML basic string.
pub(super) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn hex16(a: rrp::Address) -> String {
    format!("0x{:04x}", a.0)
}

/// A 64-bit value as the string `"0x"` and 16 hex digits (any value fits,
/// unlike a TOML integer).
fn hex64(v: u64) -> String {
    quote(&format!("0x{v:016x}"))
}

fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    let parts: Vec<String> = items.iter().map(f).collect();
    format!("[{}]", parts.join(", "))
}

/// The tables of `c`, in file order.
pub(super) fn tables(c: &Config) -> Vec<Table> {
    let mut out = Vec::new();

    let mut t = Table::new("[router]", "router".into());
    t.put("name", quote(&c.router.name));
    t.put("router_cost", c.router.router_cost.to_string());
    t.put("k", c.router.k.to_string());
    t.put(
        "sn_seed",
        match c.router.sn_seed {
            SnSeed::Clock => quote("clock"),
            SnSeed::Fixed(s) => s.to_string(),
        },
    );
    out.push(t);

    if let Some(d) = &c.dpdk {
        let mut t = Table::new("[dpdk]", "dpdk".into());
        t.put("eal_args", list(&d.eal_args, |a| quote(a)));
        out.push(t);
    }

    let w = &c.workers;
    let mut t = Table::new("[workers]", "workers".into());
    t.put("count", w.count.to_string());
    if let Some(cores) = &w.cores {
        t.put("cores", list(cores, |c| c.to_string()));
    }
    t.put("spread", quote(w.spread.as_str()));
    if let Some(owners) = &w.owners {
        t.put("owners", list(owners, |c| c.to_string()));
    }
    if let Some(cores) = &w.control_cores {
        t.put("control_cores", list(cores, |c| c.to_string()));
    }
    t.put("idle", quote(w.idle.as_str()));
    t.put("idle_sleep_us", w.idle_sleep_us.to_string());
    t.put("spins", w.spins.to_string());
    out.push(t);

    let mut t = Table::new("[timers]", "timers".into());
    t.put_fields(&c.timers);
    out.push(t);

    let mut t = Table::new("[drain]", "drain".into());
    t.put_fields(&c.drain);
    out.push(t);

    let mut t = Table::new("[limits]", "limits".into());
    t.put_fields(&c.limits);
    out.push(t);

    let r = &c.rates;
    let mut t = Table::new("[rates]", "rates".into());
    t.put("notice_per_s", r.notice_per_s.to_string());
    t.put("notice_burst", r.notice_burst.to_string());
    t.put("errors_per_source", r.errors_per_source.to_string());
    t.put("errors_global", r.errors_global.to_string());
    out.push(t);
    let mut t = Table::new("[rates.punt]", "rates.punt".into());
    t.put_fields(&r.punt);
    out.push(t);

    let a = &c.admin;
    let mut t = Table::new("[admin]", "admin".into());
    t.put("socket", quote(&a.socket.to_string_lossy()));
    t.put("mode", format!("0o{:03o}", a.mode));
    t.put("admin_group", quote(&a.admin_group));
    if let Some(g) = &a.readonly_group {
        t.put("readonly_group", quote(g));
    }
    t.put("readonly_everyone", a.readonly_everyone.to_string());
    if let Some(p) = &a.prometheus_listen {
        t.put("prometheus_listen", quote(&p.to_string()));
    }
    if a.config_history != super::DEFAULT_CONFIG_HISTORY {
        t.put("config_history", a.config_history.to_string());
    }
    if let Some(f) = &a.history_file {
        t.put("history_file", quote(&f.to_string_lossy()));
    }
    out.push(t);

    let mut t = Table::new("[log]", "log".into());
    t.put("level", quote(c.log.level.name()));
    t.put("format", quote(c.log.format.as_str()));
    out.push(t);

    let m = &c.management;
    let mut t = Table::new("[management]", "management".into());
    if let Some(id) = m.identity {
        t.put("identity", hex64(id));
    }
    if let Some(d) = &m.description {
        t.put("description", quote(d));
    }
    match &m.mkey_file {
        Some(f) => t.put("mkey_file", quote(&f.to_string_lossy())),
        None => t.put("mkey", hex64(m.mkey)),
    }
    t.put("protect", m.protect.to_string());
    t.put("lease_s", m.lease_s.to_string());
    if let Some(a) = m.manager {
        t.put("manager", hex16(a));
    }
    t.put("drop_threshold", m.drop_threshold.to_string());
    t.put("traps_per_s", m.traps_per_s.to_string());
    t.put("tracer", m.tracer.to_string());
    t.put("answers_per_source", m.answers_per_source.to_string());
    t.put("answers_global", m.answers_global.to_string());
    if let Some(p) = m.manager_priority {
        t.put("manager_priority", p.to_string());
    }
    let hrs: Vec<String> = m.manager_hrs.iter().map(|a| hex16(*a)).collect();
    t.put("manager_hrs", format!("[{}]", hrs.join(", ")));
    match &m.sm_key_file {
        Some(f) => t.put("sm_key_file", quote(&f.to_string_lossy())),
        None => t.put("sm_key", hex64(m.sm_key)),
    }
    let pools: Vec<String> = m
        .address_pools
        .iter()
        .map(|p| {
            format!(
                "{{ hr = {}, first = {}, last = {} }}",
                hex16(p.hr),
                hex16(p.first),
                hex16(p.last)
            )
        })
        .collect();
    t.put("address_pools", format!("[{}]", pools.join(", ")));
    t.put("manager_timers", literal::value(&m.manager_timers));
    t.put("perf_manager", literal::value(&m.perf_manager));
    if let Some(f) = &m.partitions_file {
        t.put("partitions_file", quote(&f.to_string_lossy()));
    }
    if !m.static_partitions.is_empty() {
        let tables: Vec<String> = m
            .static_partitions
            .iter()
            .map(|s| {
                let entries: Vec<String> = s
                    .table
                    .iter()
                    .map(|(k, m)| quote(&format!("{k}={}", m.name())))
                    .collect();
                format!(
                    "{{ hr = {}, node = {}, table = [{}] }}",
                    hex16(s.hr),
                    hex16(s.node),
                    entries.join(", ")
                )
            })
            .collect();
        t.put("static_partitions", format!("[{}]", tables.join(", ")));
    }
    out.push(t);

    for (i, h) in c.hrs.iter().enumerate() {
        let mut t = Table::new("[[hr]]", format!("hr[{i}]"));
        if let Some(n) = &h.name {
            t.put("name", quote(n));
        }
        t.put("address", hex16(h.address));
        t.put("san_id", hex16(h.san_id));
        t.put("mtu", h.mtu.to_string());
        t.put("cost", h.cost.to_string());
        t.put("admin_state", quote(h.admin_state.as_str()));
        out.push(t);

        let mut t = Table::new("[hr.port]", format!("hr[{i}].port"));
        t.put("backend", quote(h.port.backend().as_str()));
        match &h.port {
            PortConfig::Udp(u) => {
                t.put("bind", quote(&u.bind.to_string()));
                t.put("members", list(&u.members, |m| quote(&m.to_string())));
                t.put("pool_size", u.pool_size.to_string());
                t.put("socket_buf", u.socket_buf.to_string());
            }
            PortConfig::AfPacket(p) => {
                t.put("interface", quote(&p.interface));
                t.put("rx_frames", p.rx_frames.to_string());
                t.put("tx_frames", p.tx_frames.to_string());
                t.put("pool_size", p.pool_size.to_string());
                t.put("socket_buf", p.socket_buf.to_string());
            }
            PortConfig::Dpdk(d) => {
                t.put("device", quote(&d.device));
                t.put("rx_ring", d.rx_ring.to_string());
                t.put("tx_ring", d.tx_ring.to_string());
                if let Some(m) = &d.mac {
                    t.put("mac", quote(&NativeAddr::mac(*m).to_string()));
                }
            }
        }
        out.push(t);

        if let Some(a) = &h.auth {
            let mut t = Table::new("[hr.auth]", format!("hr[{i}].auth"));
            t.put("send_key", a.send_key.to_string());
            t.put("accept_unsigned", a.accept_unsigned.to_string());
            t.put(
                "keys",
                list(&a.keys, |k| match h.key_files.get(&k.id) {
                    Some(f) => format!(
                        "{{ id = {}, secret_file = {} }}",
                        k.id,
                        quote(&f.to_string_lossy())
                    ),
                    None => {
                        let hex: String = k.secret.iter().map(|b| format!("{b:02x}")).collect();
                        format!("{{ id = {}, secret = {} }}", k.id, quote(&hex))
                    }
                }),
            );
            out.push(t);
        }

        let backend = h.port.backend();
        for (j, s) in h.statics.iter().enumerate() {
            let mut t = Table::new("[[hr.static]]", format!("hr[{i}].static[{j}]"));
            t.put("address", hex16(s.address));
            t.put(
                "native",
                quote(&s.native.on(backend.link_kind()).to_string()),
            );
            if let Some(n) = &s.name {
                t.put("name", quote(&String::from_utf8_lossy(n)));
            }
            if !s.capabilities.is_empty() {
                t.put(
                    "capabilities",
                    list(&s.capabilities, |cap| {
                        format!(
                            "{{ code = {}, params = {} }}",
                            cap.code,
                            list(&cap.params, |p| p.to_string())
                        )
                    }),
                );
            }
            if !s.groups.is_empty() {
                t.put("groups", list(&s.groups, |g| hex16(*g)));
            }
            out.push(t);
        }
    }
    out
}

/// The tables as TOML text.
pub(super) fn render(tables: &[Table]) -> String {
    let mut s = String::new();
    for (n, t) in tables.iter().enumerate() {
        if n > 0 {
            s.push('\n');
        }
        s.push_str(&t.header);
        s.push('\n');
        for (k, v) in &t.entries {
            let _ = writeln!(s, "{k} = {v}");
        }
    }
    s
}

/// Every key of `c` as (key path, TOML literal), in file order.
pub(super) fn flat(c: &Config) -> Vec<(String, String)> {
    tables(c)
        .into_iter()
        .flat_map(|t| {
            let path = t.path;
            t.entries
                .into_iter()
                .map(move |(k, v)| (format!("{path}.{k}"), v))
        })
        .collect()
}
