//! The checks of a [`Config`], in file order, each naming its TOML key.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};

use rrp::limits::MAX_PORTS;
use rrp::{Address, NativeAddr};

use super::{
    Backend, Config, ConfigError, DpdkPortConfig, HrSection, IdleMode, MAX_BUFFERED_MTU,
    MAX_DESCRIPTION, MAX_NAME, MAX_PROTECT, MAX_WORKERS, MIN_BUFFERS, MIN_MTU, PortConfig,
    key_file, literal,
};

struct Errs(Vec<ConfigError>);

/// TOML integers are 64-bit signed: larger values cannot be written.
fn too_big(e: &mut Errs, key: &str, v: u64) {
    if v > i64::MAX as u64 {
        e.push(key, format!("at most {} (a TOML integer)", i64::MAX));
    }
}

impl Errs {
    fn push(&mut self, key: impl Into<String>, why: impl Into<String>) {
        self.0.push(ConfigError::new(key, why));
    }

    /// The errors of a check of `rrp::router`, under the TOML's keys.
    fn engine(&mut self, checked: Result<(), Vec<rrp::router::ConfigError>>) {
        for err in checked.err().into_iter().flatten() {
            self.push(engine_key(&err.field), err.why);
        }
    }
}

pub(super) fn validate(c: &Config) -> Result<(), Vec<ConfigError>> {
    let mut e = Errs(Vec::new());
    router(c, &mut e);
    dpdk(c, &mut e);
    workers(c, &mut e);
    timers(c, &mut e);
    for (k, why) in c.drain.validate() {
        e.push(k, why);
    }
    limits(c, &mut e);
    rates(c, &mut e);
    admin(c, &mut e);
    management(c, &mut e);
    hrs(c, &mut e);
    if e.0.is_empty() {
        // What the engine checks, as a safety net (everything it refuses
        // should have been refused above, under the TOML's key).
        let natives = vec![NativeAddr::none(); c.hrs.len()];
        let checked = c.router_config_with_natives(&natives, 1).validate();
        e.engine(checked.map_err(|err| vec![err]));
    }
    if e.0.is_empty() { Ok(()) } else { Err(e.0) }
}

/// The TOML key of a field of `rrp::router::RouterConfig`.
pub(super) fn engine_key(field: &str) -> String {
    let f = field
        .replace("hrs[", "hr[")
        .replace("static_nodes[", "static[");
    match f.as_str() {
        "hrs" => "hr".to_string(),
        "router_cost" | "k" | "name" | "sn_seed" => format!("router.{f}"),
        "error_rates.per_source" => "rates.errors_per_source".to_string(),
        "error_rates.global" => "rates.errors_global".to_string(),
        _ => f,
    }
}

/// A name for messages and RRP#5: printable ASCII, no spaces, no `/`.
fn name_problem(s: &str, max: usize) -> Option<String> {
    if s.is_empty() {
        return Some("must not be empty".into());
    }
    if s.len() > max {
        return Some(format!("longer than {max} bytes"));
    }
    if !s.bytes().all(|b| b.is_ascii_graphic() && b != b'/') {
        return Some("printable ASCII without spaces or '/' only".into());
    }
    None
}

fn router(c: &Config, e: &mut Errs) {
    let r = &c.router;
    if let Some(p) = name_problem(&r.name, MAX_NAME) {
        e.push(
            "router.name",
            format!("{p} (HRs answer RRP#7 as <name>/<port>)"),
        );
    }
    if r.router_cost == 0 {
        e.push("router.router_cost", "costs are >= 1");
    }
    if r.k == 0 {
        e.push("router.k", "must keep at least one RT per SAN");
    }
    too_big(e, "router.k", r.k as u64);
}

/// One device named in the EAL arguments: (index of the word, its kind, the value).
fn eal_devices(args: &[String]) -> Vec<(usize, &'static str, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let next = || args.get(i + 1).cloned().unwrap_or_default();
        match a {
            "-a" | "--allow" | "-w" | "--pci-whitelist" => {
                out.push((i, "-a", next()));
                i += 1;
            }
            "--vdev" => {
                out.push((i, "--vdev", next()));
                i += 1;
            }
            _ => {
                if let Some(v) = a
                    .strip_prefix("--allow=")
                    .or_else(|| a.strip_prefix("--pci-whitelist="))
                {
                    out.push((i, "-a", v.to_string()));
                } else if let Some(v) = a.strip_prefix("--vdev=") {
                    out.push((i, "--vdev", v.to_string()));
                } else if let Some(v) = a.strip_prefix("-a").filter(|v| !v.is_empty()) {
                    out.push((i, "-a", v.to_string()));
                }
            }
        }
        i += 1;
    }
    out
}

fn dpdk(c: &Config, e: &mut Errs) {
    let uses_dpdk = c.backend() == Some(Backend::Dpdk);
    let Some(d) = &c.dpdk else {
        if uses_dpdk {
            e.push(
                "dpdk.eal_args",
                "missing (required when the ports use backend \"dpdk\"; e.g. [\"-l\", \"0\", \"--in-memory\"])",
            );
        }
        return;
    };
    for (i, a) in d.eal_args.iter().enumerate() {
        if a.is_empty() {
            e.push(format!("dpdk.eal_args[{i}]"), "an empty argument");
        }
    }
    if !uses_dpdk {
        return;
    }
    // The ports' devices are given once, in [hr.port]: the daemon adds
    // `-a`/`--vdev` for them.
    let devices = eal_devices(&d.eal_args);
    for (j, h) in c.hrs.iter().enumerate() {
        let PortConfig::Dpdk(p) = &h.port else {
            continue;
        };
        for (i, kind, v) in &devices {
            if v.split(',').next() == Some(p.name()) {
                e.push(
                    format!("dpdk.eal_args[{i}]"),
                    format!(
                        "{kind} {} is hr[{j}].port.device: the daemon adds it from there; list it once",
                        p.name()
                    ),
                );
            }
        }
    }
}

fn workers(c: &Config, e: &mut Errs) {
    let w = &c.workers;
    if w.count == 0 || w.count > MAX_WORKERS {
        e.push("workers.count", format!("must be 1..={MAX_WORKERS}"));
    }
    if let Some(cores) = &w.cores {
        if cores.len() != w.count {
            e.push(
                "workers.cores",
                format!(
                    "{} cores for {} workers: give one core per worker (or leave cores out: not pinned)",
                    cores.len(),
                    w.count
                ),
            );
        }
        let mut seen = HashMap::new();
        for (i, &core) in cores.iter().enumerate() {
            if core >= 1024 {
                e.push(format!("workers.cores[{i}]"), "core ids are below 1024");
            }
            if let Some(first) = seen.insert(core, i) {
                e.push(
                    format!("workers.cores[{i}]"),
                    format!("core {core} is also workers.cores[{first}]: one worker per core"),
                );
            }
        }
    }
    if let Some(owners) = &w.owners {
        if owners.len() != c.hrs.len() {
            e.push(
                "workers.owners",
                format!(
                    "{} owners for {} HRs: give the worker of each HR's port, in HR order",
                    owners.len(),
                    c.hrs.len()
                ),
            );
        }
        for (i, &o) in owners.iter().enumerate() {
            if o >= w.count {
                e.push(
                    format!("workers.owners[{i}]"),
                    format!("worker {o} of {} (workers are 0..{})", w.count, w.count),
                );
            }
        }
    }
    if let Some(cores) = &w.control_cores {
        if cores.is_empty() {
            e.push(
                "workers.control_cores",
                "give at least one core (or leave control_cores out)",
            );
        }
        for (i, &core) in cores.iter().enumerate() {
            if core >= 1024 {
                e.push(
                    format!("workers.control_cores[{i}]"),
                    "core ids are below 1024",
                );
            }
        }
    }
    if w.idle == IdleMode::Adaptive && !(1..=1_000_000).contains(&w.idle_sleep_us) {
        e.push(
            "workers.idle_sleep_us",
            "must be 1..=1000000 (at most a second) for idle = \"adaptive\"",
        );
    }
}

/// `[timers]`: what `rrp::router::Timers::validate` refuses (its errors
/// name the TOML keys).
fn timers(c: &Config, e: &mut Errs) {
    e.engine(c.timers.validate());
}

/// `[limits]`: what `rrp::router::Limits::validate` refuses, and values a
/// TOML integer cannot hold.
fn limits(c: &Config, e: &mut Errs) {
    e.engine(c.limits.validate());
    for (k, v) in literal::fields(&c.limits) {
        if let Ok(n) = v.parse::<u64>() {
            too_big(e, &format!("limits.{k}"), n);
        }
    }
}

fn rates(c: &Config, e: &mut Errs) {
    let r = &c.rates;
    for (k, v) in [
        ("notice_per_s", r.notice_per_s),
        ("notice_burst", r.notice_burst),
    ] {
        too_big(e, &format!("rates.{k}"), v);
    }
    e.engine(r.punt.validate());
    for class in rrp::PuntClass::ALL {
        let b = r.punt.of(class);
        too_big(e, &format!("rates.punt.{class}.per_s"), b.per_s);
        too_big(e, &format!("rates.punt.{class}.burst"), b.burst);
    }
    if r.notice_burst == 0 {
        e.push("rates.notice_burst", "must be >= 1");
    }
}

/// A group name as the system takes it.
fn group_problem(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        Some("must not be empty")
    } else if s.len() > 32 {
        Some("longer than 32 bytes")
    } else if !s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        || s.starts_with('-')
    {
        Some("not a group name (letters, digits, '_', '-', '.')")
    } else {
        None
    }
}

fn admin(c: &Config, e: &mut Errs) {
    let a = &c.admin;
    let sock = a.socket.as_os_str();
    if sock.is_empty() {
        e.push("admin.socket", "must not be empty");
    } else if sock.len() > 107 {
        e.push(
            "admin.socket",
            "longer than 107 bytes (the limit of a UNIX socket path)",
        );
    } else if a.socket.file_name().is_none() || sock.as_encoded_bytes().ends_with(b"/") {
        e.push("admin.socket", "must name a file, not a directory");
    }
    if !(1..=super::MAX_CONFIG_HISTORY).contains(&a.config_history) {
        e.push(
            "admin.config_history",
            format!(
                "{} is out of range (1-{})",
                a.config_history,
                super::MAX_CONFIG_HISTORY
            ),
        );
    }
    if let Some(f) = &a.history_file
        && (f.file_name().is_none() || f.as_os_str().as_encoded_bytes().ends_with(b"/"))
    {
        e.push("admin.history_file", "must name a file, not a directory");
    }
    if a.mode > 0o777 {
        e.push(
            "admin.mode",
            format!("0o{:o} is not a permission mode (0o000-0o777)", a.mode),
        );
    }
    if let Some(p) = group_problem(&a.admin_group) {
        e.push("admin.admin_group", p);
    }
    if let Some(g) = &a.readonly_group {
        if let Some(p) = group_problem(g) {
            e.push("admin.readonly_group", p);
        } else if *g == a.admin_group {
            e.push(
                "admin.readonly_group",
                "is admin.admin_group: its members may already do everything",
            );
        }
    }
    if a.readonly_everyone && a.mode & 0o006 != 0o006 {
        e.push(
            "admin.readonly_everyone",
            format!(
                "needs admin.mode to let others read and write the socket (e.g. 0o666; it is 0o{:o})",
                a.mode
            ),
        );
    }
    if let Some(addr) = a.prometheus_listen {
        if !addr.ip().is_loopback() {
            e.push(
                "admin.prometheus_listen",
                format!(
                    "{addr} is not a loopback address (127.0.0.0/8 or ::1): metrics are not served off the box"
                ),
            );
        }
        if addr.port() == 0 {
            e.push("admin.prometheus_listen", "needs a port (not 0)");
        }
    }
}

/// `[management]`. No message shows `mkey` (every value is a valid key).
fn management(c: &Config, e: &mut Errs) {
    let m = &c.management;
    if m.identity == Some(0) {
        e.push(
            "management.identity",
            "0 is not a node identity (leave identity out to derive one)",
        );
    }
    if let Some(d) = &m.description {
        if d.is_empty() {
            e.push(
                "management.description",
                "must not be empty (leave it out: router.name)",
            );
        } else if d.len() > MAX_DESCRIPTION {
            e.push(
                "management.description",
                format!(
                    "{} bytes: longer than {MAX_DESCRIPTION} bytes (NodeDescription)",
                    d.len()
                ),
            );
        }
        if d.contains('\0') {
            e.push(
                "management.description",
                "must not contain NUL (NodeDescription is zero-padded)",
            );
        }
    }
    for (key, file) in [
        ("management.mkey_file", &m.mkey_file),
        ("management.sm_key_file", &m.sm_key_file),
    ] {
        if let Some(f) = file
            && let Some(why) = key_file::path_problem(f)
        {
            e.push(key, format!("{}: {why}", f.display()));
        }
    }
    if let Some(f) = &m.partitions_file {
        if f.to_str().is_none() {
            e.push(
                "management.partitions_file",
                "not UTF-8: the path is written in a TOML string",
            );
        } else if !f.is_absolute() {
            e.push(
                "management.partitions_file",
                format!("{}: not an absolute path", f.display()),
            );
        } else if f.file_name().is_none() || f.as_os_str().as_encoded_bytes().ends_with(b"/") {
            e.push(
                "management.partitions_file",
                format!("{}: must name a file, not a directory", f.display()),
            );
        }
    }
    if m.protect > MAX_PROTECT {
        e.push(
            "management.protect",
            format!("{} is not a protect level (0-{MAX_PROTECT})", m.protect),
        );
    }
    if let Some(a) = m.manager
        && !a.is_node()
    {
        e.push(
            "management.manager",
            format!("{a} is not a node address (0x0040-0x7FFF; leave manager out for no traps)"),
        );
    }
    too_big(e, "management.drop_threshold", m.drop_threshold);
    if m.traps_per_s == 0 {
        e.push(
            "management.traps_per_s",
            "must be >= 1 (leave manager out for no traps)",
        );
    }
    for (key, n) in [
        ("management.answers_per_source", m.answers_per_source),
        ("management.answers_global", m.answers_global),
    ] {
        if n == 0 {
            e.push(key, "must be >= 1 (the SAN manager's sweeps are requests)");
        }
    }
    if let Some(p) = m.manager_priority
        && p > 15
    {
        e.push(
            "management.manager_priority",
            format!("{p} is not a manager priority (0-15)"),
        );
    }
    for err in m.perf_manager.validate().err().into_iter().flatten() {
        e.push(format!("management.perf_manager.{}", err.field), err.why);
    }
    for err in m.manager_timers.validate().err().into_iter().flatten() {
        e.push(format!("management.manager_timers.{}", err.field), err.why);
    }
    for a in &m.manager_hrs {
        if !c.hrs.iter().any(|h| h.address == *a) {
            e.push(
                "management.manager_hrs",
                format!("{a} is not an HR of this box"),
            );
        }
    }
    for (i, p) in m.address_pools.iter().enumerate() {
        let runs = m.manager_priority.is_some()
            && c.hrs.iter().any(|h| h.address == p.hr)
            && (m.manager_hrs.is_empty() || m.manager_hrs.contains(&p.hr));
        if !runs {
            e.push(
                "management.address_pools",
                format!("{}: no SAN manager runs on that HR of this box", p.hr),
            );
        }
        if !p.first.is_node() || !p.last.is_node() || p.first > p.last {
            e.push(
                "management.address_pools",
                format!(
                    "{}-{}: not node addresses first to last (0x0040-0x7FFF)",
                    p.first, p.last
                ),
            );
        }
        if let Some(h) = c
            .hrs
            .iter()
            .find(|h| (p.first..=p.last).contains(&h.address))
        {
            e.push(
                "management.address_pools",
                format!("{}-{} holds HR {}", p.first, p.last, h.address),
            );
        }
        if m.address_pools[..i]
            .iter()
            .any(|q| q.hr == p.hr || (p.first <= q.last && q.first <= p.last))
        {
            e.push(
                "management.address_pools",
                format!(
                    "{}: a second pool for the HR, or one that overlaps another",
                    p.hr
                ),
            );
        }
    }
    static_partitions(c, e);
}

/// `management.static_partitions`: each table on an HR of this box, for a
/// node address, with at most [`MAX_PARTITIONS`] entries and no key twice;
/// a node once per HR, and at most [`MAX_SAN_TABLES`] an HR.
fn static_partitions(c: &Config, e: &mut Errs) {
    use mgmt::partition::{MAX_PARTITIONS, MAX_SAN_TABLES};
    let list = &c.management.static_partitions;
    for (j, s) in list.iter().enumerate() {
        let key = format!("management.static_partitions[{j}]");
        if !c.hrs.iter().any(|h| h.address == s.hr) {
            e.push(
                format!("{key}.hr"),
                format!("{}: not an HR of this box", s.hr),
            );
        }
        if !s.node.is_node() {
            e.push(
                format!("{key}.node"),
                format!("{}: not a node address (0x0040-0x7FFF)", s.node),
            );
        }
        if s.table.len() > MAX_PARTITIONS {
            e.push(
                format!("{key}.table"),
                format!("{} entries: at most {MAX_PARTITIONS}", s.table.len()),
            );
        }
        if s.table
            .iter()
            .enumerate()
            .any(|(i, (k, _))| s.table[..i].iter().any(|(q, _)| q == k))
        {
            e.push(
                format!("{key}.table"),
                "a key twice: one membership a partition",
            );
        }
        if list[..j].iter().any(|o| o.hr == s.hr && o.node == s.node) {
            e.push(
                format!("{key}.node"),
                format!("{}: a second table for the node on HR {}", s.node, s.hr),
            );
        }
    }
    for h in &c.hrs {
        let n = list.iter().filter(|s| s.hr == h.address).count();
        if n > MAX_SAN_TABLES {
            e.push(
                "management.static_partitions",
                format!("HR {}: {n} tables, at most {MAX_SAN_TABLES}", h.address),
            );
        }
    }
}

pub(super) fn is_pci_address(s: &str) -> bool {
    // [DDDD:]BB:DD.F, hexadecimal.
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let (bdf, domain_ok) = match s.matches(':').count() {
        2 => {
            let (d, rest) = s.split_once(':').expect("two colons");
            (rest, hex(d, 4))
        }
        1 => (s, true),
        _ => return false,
    };
    let Some((bus, rest)) = bdf.split_once(':') else {
        return false;
    };
    let Some((dev, func)) = rest.split_once('.') else {
        return false;
    };
    domain_ok
        && hex(bus, 2)
        && hex(dev, 2)
        && func.len() == 1
        && matches!(func.as_bytes()[0], b'0'..=b'7')
}

fn dpdk_device_problem(d: &DpdkPortConfig) -> Option<String> {
    let name = d.name();
    if d.device.is_empty() {
        return Some("must not be empty".into());
    }
    if d.device.chars().any(char::is_whitespace) {
        return Some("must not contain spaces".into());
    }
    if is_pci_address(name) {
        if d.device.contains(',') {
            return Some(
                "device arguments of a PCI NIC go in dpdk.eal_args (-a ADDRESS,ARGS), not here"
                    .into(),
            );
        }
        return None;
    }
    let ok_name = name.starts_with("net_")
        && name.len() > 4
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !ok_name {
        return Some(format!(
            "{name:?} is neither a PCI address (0000:3b:00.0) nor a vdev (net_memif0,role=server,...)"
        ));
    }
    if d.device
        .split(',')
        .skip(1)
        .any(|kv| kv.split_once('=').is_none_or(|(k, _)| k.is_empty()))
    {
        return Some("vdev parameters are key=value pairs separated by ','".into());
    }
    None
}

fn is_unicast_mac(m: &[u8; 6]) -> bool {
    m[0] & 1 == 0 && *m != [0; 6]
}

fn udp_endpoint_problem(bind: &SocketAddr, a: &SocketAddr) -> Option<String> {
    if a.port() == 0 {
        return Some(format!("{a} has port 0"));
    }
    if a.ip().is_unspecified() || a.ip().is_multicast() {
        return Some(format!("{a} is not a unicast address"));
    }
    if a.is_ipv4() != bind.is_ipv4() {
        let fam = |s: &SocketAddr| if s.is_ipv4() { "IPv4" } else { "IPv6" };
        return Some(format!(
            "{a} is {} but the port binds {} ({bind}): the socket cannot reach it",
            fam(a),
            fam(bind)
        ));
    }
    None
}

fn hrs(c: &Config, e: &mut Errs) {
    if c.hrs.is_empty() {
        e.push("hr", "a router needs at least one [[hr]]");
        return;
    }
    if c.hrs.len() > MAX_PORTS {
        e.push(
            "hr",
            format!("{} HRs: a box has at most {MAX_PORTS} ports", c.hrs.len()),
        );
    }
    let backend = c.hrs[0].port.backend();
    // Addresses of the box (HRs and SAN-IDs) and of static nodes, for uniqueness.
    let mut box_addrs: BTreeMap<Address, String> = BTreeMap::new();
    let mut node_addrs: BTreeMap<Address, String> = BTreeMap::new();
    let mut names: HashMap<&str, usize> = HashMap::new();
    let mut binds: HashMap<SocketAddr, usize> = HashMap::new();
    let mut ifaces: HashMap<&str, usize> = HashMap::new();
    let mut devices: HashMap<&str, usize> = HashMap::new();
    let no_pci = c
        .dpdk
        .as_ref()
        .is_some_and(|d| d.eal_args.iter().any(|a| a == "--no-pci"));

    for (i, h) in c.hrs.iter().enumerate() {
        let k = |s: &str| format!("hr[{i}].{s}");
        for (key, a) in [("address", h.address), ("san_id", h.san_id)] {
            if !a.is_node() {
                e.push(k(key), format!("{a} is not in 0x0040-0x7FFF"));
            } else if let Some(other) = box_addrs.get(&a) {
                let why = if key == "san_id" && other.ends_with(".san_id") {
                    format!("{a} is also {other}: two HRs of one box on the same SAN")
                } else {
                    format!("{a} is also {other}")
                };
                e.push(k(key), why);
            } else {
                box_addrs.insert(a, k(key));
            }
        }
        if h.mtu != 0 && h.mtu < MIN_MTU {
            e.push(
                k("mtu"),
                format!("must be 0 (unlimited) or at least {MIN_MTU} bytes"),
            );
        }
        let max_mtu = match h.port.backend() {
            Backend::Udp | Backend::AfPacket => MAX_BUFFERED_MTU,
            Backend::Dpdk => u32::from(u16::MAX),
        };
        if h.mtu > max_mtu {
            e.push(
                k("mtu"),
                format!(
                    "{} bytes: a {} port carries at most {max_mtu}",
                    h.mtu,
                    h.port.backend()
                ),
            );
        }
        if h.cost == 0 {
            e.push(k("cost"), "costs are >= 1");
        }
        if let Some(n) = &h.name {
            if let Some(p) = name_problem(n, MAX_NAME) {
                e.push(k("name"), p);
            } else if let Some(j) = names.insert(n.as_str(), i) {
                e.push(k("name"), format!("{n:?} is also hr[{j}].name"));
            }
        }
        if h.port.backend() != backend {
            e.push(
                k("port.backend"),
                format!(
                    "\"{}\" but hr[0] uses \"{backend}\": all ports of a box use one backend (a worker polls its ports through one backend type)",
                    h.port.backend()
                ),
            );
        }
        port(i, h, no_pci, e, &mut binds, &mut ifaces, &mut devices);
        key_files(i, h, e);
        statics(c, i, h, e, &mut node_addrs);
    }
    // A static node's address must not be one of the box's.
    for (a, where_) in &node_addrs {
        if let Some(other) = box_addrs.get(a) {
            e.push(where_.clone(), format!("{a} is {other}"));
        }
    }
}

fn port<'a>(
    i: usize,
    h: &'a HrSection,
    no_pci: bool,
    e: &mut Errs,
    binds: &mut HashMap<SocketAddr, usize>,
    ifaces: &mut HashMap<&'a str, usize>,
    devices: &mut HashMap<&'a str, usize>,
) {
    let k = |s: &str| format!("hr[{i}].port.{s}");
    let pool = |e: &mut Errs, n: usize| {
        if n < MIN_BUFFERS {
            e.push(
                k("pool_size"),
                format!("must hold at least one burst ({MIN_BUFFERS} buffers)"),
            );
        }
    };
    let sockbuf = |e: &mut Errs, n: usize| {
        if n > i32::MAX as usize {
            e.push(k("socket_buf"), "larger than the kernel takes (2^31 - 1)");
        }
    };
    match &h.port {
        PortConfig::Udp(u) => {
            let ip = u.bind.ip();
            if ip.is_unspecified() {
                e.push(
                    k("bind"),
                    format!(
                        "{}: the bound address is the HR's native address on its SAN; give a specific address, not {ip}",
                        u.bind
                    ),
                );
            } else if ip.is_multicast() || ip == IpAddr::from([255, 255, 255, 255]) {
                e.push(k("bind"), format!("{} is not a unicast address", u.bind));
            } else if u.bind.port() != 0
                && let Some(j) = binds.insert(u.bind, i)
            {
                e.push(
                    k("bind"),
                    format!("{} is also hr[{j}].port.bind: one socket per HR", u.bind),
                );
            }
            let mut seen = HashMap::new();
            for (m, a) in u.members.iter().enumerate() {
                let km = format!("hr[{i}].port.members[{m}]");
                if let Some(p) = udp_endpoint_problem(&u.bind, a) {
                    e.push(km, p);
                } else if let Some(first) = seen.insert(*a, m) {
                    e.push(km, format!("{a} is also members[{first}]"));
                }
            }
            pool(e, u.pool_size);
            sockbuf(e, u.socket_buf);
        }
        PortConfig::AfPacket(a) => {
            let n = &a.interface;
            if n.is_empty()
                || n.len() > 15
                || n == "."
                || n == ".."
                || n.chars()
                    .any(|ch| ch == '/' || ch == ':' || ch.is_whitespace())
            {
                e.push(
                    k("interface"),
                    format!("{n:?} is not an interface name (1-15 bytes, no '/', ':' or spaces)"),
                );
            } else if let Some(j) = ifaces.insert(n.as_str(), i) {
                e.push(
                    k("interface"),
                    format!("{n:?} is also hr[{j}].port.interface: one port per interface"),
                );
            }
            for (key, v) in [("rx_frames", a.rx_frames), ("tx_frames", a.tx_frames)] {
                if (v as usize) < MIN_BUFFERS {
                    e.push(
                        k(key),
                        format!("must hold at least one burst ({MIN_BUFFERS} frames)"),
                    );
                }
            }
            pool(e, a.pool_size);
            sockbuf(e, a.socket_buf);
        }
        PortConfig::Dpdk(d) => {
            if let Some(p) = dpdk_device_problem(d) {
                e.push(k("device"), p);
            } else {
                if let Some(j) = devices.insert(d.name(), i) {
                    e.push(
                        k("device"),
                        format!("{} is also hr[{j}].port.device", d.name()),
                    );
                }
                if d.is_pci() && no_pci {
                    e.push(
                        k("device"),
                        format!(
                            "{} is a PCI device but dpdk.eal_args has --no-pci",
                            d.name()
                        ),
                    );
                }
            }
            for (key, v) in [("rx_ring", d.rx_ring), ("tx_ring", d.tx_ring)] {
                if (v as usize) < MIN_BUFFERS {
                    e.push(
                        k(key),
                        format!("must hold at least one burst ({MIN_BUFFERS} descriptors)"),
                    );
                }
            }
            if let Some(m) = d.mac
                && !is_unicast_mac(&m)
            {
                e.push(
                    k("mac"),
                    format!("{} is not a unicast MAC address", NativeAddr::mac(m)),
                );
            }
        }
    }
}

/// The files of an HR's auth keys: each for a key of `[hr.auth]`, at an
/// absolute path (the keys themselves are the engine's to check).
fn key_files(i: usize, h: &HrSection, e: &mut Errs) {
    for (id, f) in &h.key_files {
        let place = h
            .auth
            .as_ref()
            .and_then(|a| a.keys.iter().position(|k| k.id == *id));
        match place {
            None => e.push(
                format!("hr[{i}].auth"),
                format!(
                    "{}: a key file for key ID {id}, which is not a key of the HR",
                    f.display()
                ),
            ),
            Some(j) => {
                if let Some(why) = key_file::path_problem(f) {
                    e.push(
                        format!("hr[{i}].auth.keys[{j}].secret_file"),
                        format!("{}: {why}", f.display()),
                    );
                }
            }
        }
    }
}

fn statics(
    c: &Config,
    i: usize,
    h: &HrSection,
    e: &mut Errs,
    node_addrs: &mut BTreeMap<Address, String>,
) {
    if h.statics.len() >= c.limits.max_lrt {
        e.push(
            format!("hr[{i}].static"),
            format!(
                "{} entries, but an LRT holds at most limits.max_lrt = {} (the HR itself included)",
                h.statics.len(),
                c.limits.max_lrt
            ),
        );
    }
    let own = h.configured_native();
    let mut natives: HashMap<&[u8], usize> = HashMap::new();
    for (j, s) in h.statics.iter().enumerate() {
        let k = |f: &str| format!("hr[{i}].static[{j}].{f}");
        if !s.address.is_node() {
            e.push(
                k("address"),
                format!("{} is not in 0x0040-0x7FFF", s.address),
            );
        } else if let Some(other) = node_addrs.get(&s.address) {
            e.push(
                k("address"),
                format!("{} is also {other}: addresses are unique", s.address),
            );
        } else {
            node_addrs.insert(s.address, k("address"));
        }
        let native_problem = match &h.port {
            PortConfig::Udp(u) => match s.native.as_udp() {
                Some(a) => udp_endpoint_problem(&u.bind, &a),
                None => Some("not a UDP endpoint".to_string()),
            },
            _ => match s.native.as_mac() {
                Some(m) if is_unicast_mac(&m) => None,
                Some(m) => Some(format!(
                    "{} is not a unicast MAC address",
                    NativeAddr::mac(m)
                )),
                None => Some("not a MAC address".to_string()),
            },
        };
        if let Some(p) = native_problem {
            e.push(k("native"), p);
        } else if own.as_ref() == Some(&s.native) {
            e.push(k("native"), "is the HR's own native address");
        } else if let Some(first) = natives.insert(s.native.as_bytes(), j) {
            e.push(
                k("native"),
                format!("is also hr[{i}].static[{first}].native"),
            );
        }
        if let Some(n) = &s.name {
            if n.is_empty() {
                e.push(k("name"), "must not be empty (leave it out)");
            } else if n.len() > MAX_NAME {
                e.push(k("name"), format!("longer than {MAX_NAME} bytes"));
            }
        }
        for g in s.groups.iter().filter(|g| !g.is_logical()) {
            e.push(
                k("groups"),
                format!("{g} is not a logical address (0x8000-0xFFFD)"),
            );
        }
        if s.groups.len() > rrp::node::MAX_GROUPS {
            e.push(
                k("groups"),
                format!("more than {} groups", rrp::node::MAX_GROUPS),
            );
        }
        for (ci, cap) in s.capabilities.iter().enumerate() {
            if cap.params.len() > 255 {
                e.push(
                    format!("hr[{i}].static[{j}].capabilities[{ci}].params"),
                    "more than 255 bytes",
                );
            }
        }
    }
}
