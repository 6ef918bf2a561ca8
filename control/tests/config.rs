//! The daemon's configuration: the shipped examples, every validation error
//! (by key), the TOML round trip, the conversions and the reload diff.

use rrp::PortId;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use admin::LogLevel;
use control::config::{
    AfPacketPortConfig, Backend, Config, ConfigError, DpdkPortConfig, DpdkSection, HrSection,
    IdleMode, LogFormat, ManagementSection, PortConfig, SnSeed, SpreadMode, UdpPortConfig,
};
use dataplane::IdlePolicy;
use proptest::prelude::*;
use rrp::Address;
use rrp::NativeAddr;
use rrp::router::{Router, StaticNode, Timers};
use rrp::wire::record::Capability;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

fn load(name: &str) -> Config {
    Config::load(&example(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn round_trip(c: &Config) {
    let text = c.to_toml();
    let back = Config::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n---\n{text}"));
    assert_eq!(&back, c, "round trip changed the configuration:\n{text}");
    // And printing again gives the same text.
    assert_eq!(back.to_toml(), text);
}

// ---------------------------------------------------------------- examples

#[test]
fn example_udp() {
    let c = load("router-udp.toml");
    round_trip(&c);
    assert_eq!(c.router.name, "rt-udp");
    assert_eq!(c.backend(), Some(Backend::Udp));
    assert_eq!(c.hrs.len(), 2);
    assert_eq!(c.hrs[0].address, Address(0x0101));
    assert_eq!(c.hrs[1].cost, 2);
    assert_eq!(c.timers.sweep_ms, 5000);
    assert_eq!(c.timers.hold_ms, Timers::default().hold_ms);

    let u0 = c.udp_config(0).expect("a udp port");
    assert_eq!(u0.bind, "127.0.0.1:35101".parse::<SocketAddr>().unwrap());
    assert_eq!(u0.members.len(), 3);
    assert_eq!(u0.pool_size, 512);
    let u1 = c.udp_config(1).expect("a udp port");
    assert!(u1.bind.is_ipv6());
    assert!(c.udp_config(2).is_none());
    assert!(c.af_packet_config(0).is_none());
    assert!(c.eal_args().is_empty());

    // The engine takes it, natives from the bind addresses.
    let rc = c.router_config(77);
    assert_eq!(rc.sn_seed, 77);
    assert_eq!(rc.hrs[PortId(0)].native, NativeAddr::udp(u0.bind));
    assert_eq!(rc.hrs[PortId(0)].static_nodes.len(), 1);
    assert_eq!(
        rc.hrs[PortId(0)].static_nodes[0].native,
        NativeAddr::udp("127.0.0.1:35103".parse().unwrap())
    );
    assert_eq!(
        rc.hrs[PortId(0)].static_nodes[0].capabilities,
        vec![Capability {
            code: 9,
            params: vec![]
        }]
    );
    Router::new(rc, 0).expect("the engine accepts the example");

    let ec = c.engine_config();
    assert_eq!(ec.hrs, vec![Address(0x0101), Address(0x0102)]);
    assert_eq!(ec.mtus, vec![1500, 9000]);
    assert_eq!(
        c.admin.prometheus_listen,
        Some("127.0.0.1:9461".parse().unwrap())
    );
}

#[test]
fn example_af_packet() {
    let c = load("router-af-packet.toml");
    round_trip(&c);
    assert_eq!(c.backend(), Some(Backend::AfPacket));
    let a = c.af_packet_config(0).expect("an af_packet port");
    assert_eq!(a.ifname, "mw-a0");
    assert_eq!(a.rx_frames, 1024);
    assert_eq!(a.tx_frames, 512);
    assert_eq!(c.af_packet_config(1).unwrap().ifname, "mw-b0");
    assert!(c.udp_config(0).is_none());
    assert_eq!(c.worker_cores(), vec![Some(1)]);
    assert_eq!(c.log.format, LogFormat::Json);
    assert_eq!(c.admin.readonly_group.as_deref(), Some("mwview"));
    // The MACs are known when the ports open.
    assert_eq!(c.hrs[0].configured_native(), None);
    let natives = [
        NativeAddr::mac([2, 0, 0, 0, 0xa, 1]),
        NativeAddr::mac([2, 0, 0, 0, 0xb, 1]),
    ];
    let rc = c.router_config_with_natives(&natives, 5);
    assert_eq!(rc.hrs[PortId(1)].native, natives[1]);
    assert_eq!(
        rc.hrs[PortId(0)].static_nodes[0].native,
        NativeAddr::mac([2, 0, 0, 0, 0x0a, 0x20])
    );
    assert_eq!(
        rc.hrs[PortId(0)].static_nodes[0].name.as_deref(),
        Some(&b"plc-7"[..])
    );
    Router::new(rc, 0).expect("the engine accepts the example");
}

#[test]
fn example_dpdk() {
    let c = load("router-dpdk.toml");
    round_trip(&c);
    assert_eq!(c.backend(), Some(Backend::Dpdk));
    assert_eq!(c.idle_policy(), IdlePolicy::BusyPoll);
    let d = c.dpdk_port(0).expect("a dpdk port");
    assert_eq!(d.name(), "net_memif0");
    assert!(!d.is_pci());
    assert_eq!(d.mac, Some([2, 0, 0, 0, 1, 1]));
    let args = c.eal_args();
    for a in ["--no-huge", "-m", "512", "--no-pci", "--no-shconf"] {
        assert!(args.iter().any(|x| x == a), "{a} in {args:?}");
    }
    assert_eq!(
        &args[args.len() - 2..],
        &[
            "--vdev=net_memif0,role=server,id=0,socket=/run/mwrouter/memif-a.sock".to_string(),
            "--vdev=net_memif1,role=server,id=0,socket=/run/mwrouter/memif-b.sock".to_string(),
        ]
    );
    // Configured MACs are the natives.
    let rc = c.router_config(1);
    assert_eq!(
        rc.hrs[PortId(0)].native,
        NativeAddr::mac([2, 0, 0, 0, 1, 1])
    );
    Router::new(rc, 0).expect("the engine accepts the example");
}

#[test]
fn eal_args_add_pci_devices() {
    let mut c = load("router-dpdk.toml");
    c.dpdk = Some(DpdkSection {
        eal_args: vec!["-l".into(), "0".into(), "--in-memory".into()],
    });
    c.hrs[0].port = PortConfig::Dpdk(DpdkPortConfig::new("0000:3b:00.0"));
    c.validate().unwrap();
    assert_eq!(
        c.eal_args()[3..5],
        ["-a".to_string(), "0000:3b:00.0".to_string()]
    );
    assert!(c.dpdk_port(0).unwrap().is_pci());
}

// ---------------------------------------------------------------- defaults

const BASE: &str = r#"[router]
name = "t"

[[hr]]
address = 0x0101
san_id = 0x0201
mtu = 1500

[hr.port]
backend = "udp"
bind = "127.0.0.1:35101"
members = ["127.0.0.1:35102"]

[[hr]]
address = 0x0102
san_id = 0x0202
mtu = 1500

[hr.port]
backend = "udp"
bind = "127.0.0.1:35201"
"#;

#[test]
fn defaults() {
    let c = Config::from_toml(BASE).unwrap();
    assert_eq!(c.router.router_cost, 1);
    assert_eq!(c.router.k, 4);
    assert_eq!(c.router.sn_seed, SnSeed::Clock);
    assert_eq!(c.dpdk, None);
    assert_eq!(c.workers.count, 1);
    assert_eq!(c.workers.cores, None);
    assert_eq!(c.workers.idle, IdleMode::Adaptive);
    assert_eq!(c.timers, rrp::router::Timers::default());
    assert_eq!(c.limits, rrp::router::Limits::default());
    let ch = c.channel_config();
    let dch = dataplane::ChannelConfig::default();
    assert_eq!(ch.punt_budgets, dch.punt_budgets);
    assert_eq!(ch.punt_budgets, rrp::PuntBudgets::default());
    assert_eq!(ch.notice_rate, dch.notice_rate);
    assert_eq!(ch.punt_slots, dch.punt_slots);
    assert_eq!(c.rates.error_rates(), rrp::router::ErrorRates::default());
    assert_eq!(
        c.admin.socket,
        PathBuf::from("/run/mwrouter/mwrouterd.sock")
    );
    assert_eq!(c.admin.mode, 0o660);
    assert_eq!(c.admin.admin_group, "mwadmin");
    assert_eq!(c.admin.readonly_group, None);
    assert!(!c.admin.readonly_everyone);
    assert_eq!(c.admin.prometheus_listen, None);
    assert_eq!(c.log.level, LogLevel::Info);
    assert_eq!(c.log.format, LogFormat::Human);
    assert_eq!(c.hrs[0].cost, 1);
    let u = c.udp_config(0).unwrap();
    let d = ports::udp::UdpConfig::new(u.bind);
    assert_eq!((u.pool_size, u.socket_buf), (d.pool_size, d.socket_buf));
    assert_eq!(
        c.hrs[1].configured_native().unwrap().as_udp(),
        Some(
            u.bind
                .to_string()
                .replace("35101", "35201")
                .parse()
                .unwrap()
        )
    );
    assert_eq!(
        c.idle_policy(),
        IdlePolicy::Adaptive {
            spins: 64,
            sleep: Duration::from_millis(1)
        }
    );
    assert_eq!(c.worker_cores(), vec![None]);
    assert_eq!(c.management, ManagementSection::default());
    // Defaults as Config::new makes them, for configurations built in code.
    let mut built = Config::new("t", c.hrs.clone());
    built.hrs = c.hrs.clone();
    assert_eq!(built, c);
    round_trip(&c);
}

#[test]
fn sn_seed_fixed_and_clock() {
    let c =
        Config::from_toml(&BASE.replace("name = \"t\"", "name = \"t\"\nsn_seed = 4242")).unwrap();
    assert_eq!(c.router.sn_seed, SnSeed::Fixed(4242));
    assert_eq!(c.router_config(7).sn_seed, 4242);
    round_trip(&c);
    let c = Config::from_toml(BASE).unwrap();
    assert_eq!(c.router_config(7).sn_seed, 7);
}

#[test]
fn to_toml_is_readable() {
    let c = load("router-udp.toml");
    let t = c.to_toml();
    assert!(t.contains("address = 0x0101\n"), "{t}");
    assert!(t.contains("mode = 0o660\n"), "{t}");
    assert!(t.contains("[hr.port]\nbackend = \"udp\"\n"), "{t}");
    assert!(
        t.contains("[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:35103\"\n"),
        "{t}"
    );
    assert!(
        t.contains("capabilities = [{ code = 9, params = [] }]"),
        "{t}"
    );
}

// ---------------------------------------------------------------- errors

fn err(text: &str) -> ConfigError {
    match Config::from_toml(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// `BASE` with `from` replaced by `to` (which must be there).
fn rep(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from:?} not in BASE");
    BASE.replacen(from, to, 1)
}

/// `extra` (whole tables) before `BASE`.
fn pre(extra: &str) -> String {
    format!("{extra}\n{BASE}")
}

/// `extra` (lines of the second HR's port, tables after it) after `BASE`.
fn post(extra: &str) -> String {
    format!("{BASE}{extra}\n")
}

#[track_caller]
fn check(text: &str, key: &str, why: &str) -> ConfigError {
    let e = err(text);
    assert_eq!(e.key, key, "wrong key in {e}");
    assert!(e.why.contains(why), "{e:?} does not say {why:?}");
    assert!(e.to_string().starts_with(&format!("{key}: ")), "{e}");
    e
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in text")
        + 1
}

#[test]
fn syntax_errors_keep_line_and_column() {
    let text = rep("mtu = 1500", "mtu = = 1500");
    let e = err(&text);
    assert_eq!(e.key, "");
    assert!(e.why.contains("line 7"), "{e}");
    assert!(e.why.contains("column"), "{e}");
    assert_eq!(e.location.map(|l| l.0), Some(7));
    // Duplicate keys are syntax errors too.
    let e = err(&rep("mtu = 1500", "mtu = 1500\nmtu = 1500"));
    assert_eq!(e.key, "");
    assert!(e.why.contains("duplicate"), "{e}");
}

#[test]
fn unknown_keys_are_errors() {
    let text = rep("bind = \"127.0.0.1:35101\"", "bnd = \"127.0.0.1:35101\"");
    let e = check(&text, "hr[0].port.bnd", "unknown key");
    assert!(e.why.contains("`bind`"), "{e}");
    assert_eq!(e.location.map(|l| l.0), Some(line_of(&text, "bnd =")));
    assert!(
        e.to_string()
            .contains(&format!("(line {}", line_of(&text, "bnd ="))),
        "{e}"
    );

    check(&pre("[routr]\nname = \"x\""), "routr", "unknown key");
    check(&pre("[timers]\nhold = 5"), "timers.hold", "unknown key");
    check(&pre("[workers]\ncuont = 2"), "workers.cuont", "unknown key");
    check(&pre("[rates]\npnut = 2"), "rates.pnut", "unknown key");
    // The single punt budget of earlier versions is a table per class now.
    let e = check(
        &pre("[rates]\npunt_per_s = 2"),
        "rates.punt_per_s",
        "unknown key",
    );
    assert!(e.why.contains("`punt`"), "{e}");
    check(&pre("[admin]\nsock = \"/x\""), "admin.sock", "unknown key");
    check(&pre("[log]\nlvl = \"info\""), "log.lvl", "unknown key");
    check(&pre("[limits]\nmax = 1"), "limits.max", "unknown key");
    check(&pre("[dpdk]\neal = []"), "dpdk.eal", "unknown key");
    check(
        &rep("mtu = 1500", "mtu = 1500\nmut = 1"),
        "hr[0].mut",
        "unknown key",
    );
    check(
        &post("[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:1\"\nnmae = \"x\""),
        "hr[1].static[0].nmae",
        "unknown key",
    );
    check(
        &post(
            "[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:1\"\ncapabilities = [{ code = 1, param = [] }]",
        ),
        "hr[1].static[0].capabilities[0].param",
        "unknown key",
    );
}

#[test]
fn type_and_range_errors() {
    let text = rep("mtu = 1500", "mtu = \"1500\"");
    let e = check(&text, "hr[0].mtu", "invalid type");
    assert_eq!(
        e.location.map(|l| l.0),
        Some(line_of(&text, "mtu = \"1500\""))
    );
    check(
        &rep("address = 0x0101", "address = 70000"),
        "hr[0].address",
        "70000",
    );
    check(
        &rep("address = 0x0101", "address = -1"),
        "hr[0].address",
        "-1",
    );
    check(
        &rep("bind = \"127.0.0.1:35101\"", "bind = \"localhost\""),
        "hr[0].port.bind",
        "",
    );
    check(
        &rep(
            "members = [\"127.0.0.1:35102\"]",
            "members = [\"127.0.0.1:35102\", 7]",
        ),
        "hr[0].port.members[1]",
        "invalid type",
    );
    check(
        &rep("name = \"t\"", "name = \"t\"\nsn_seed = \"random\""),
        "router.sn_seed",
        "\"clock\" or an integer",
    );
    check(
        &rep("name = \"t\"", "name = \"t\"\nsn_seed = 65536"),
        "router.sn_seed",
        "\"clock\" or an integer",
    );
    check(
        &pre("[workers]\nidle = \"busy\""),
        "workers.idle",
        "busy-poll",
    );
    check(
        &pre("[log]\nlevel = \"verbose\""),
        "log.level",
        "unknown variant",
    );
    check(
        &pre("[log]\nformat = \"xml\""),
        "log.format",
        "unknown variant",
    );
    check(
        &rep("backend = \"udp\"", "backend = \"tap\""),
        "hr[0].port.backend",
        "af_packet",
    );
    check(
        &pre("[admin]\nprometheus_listen = \"localhost:9100\""),
        "admin.prometheus_listen",
        "",
    );
    check(
        &pre("[admin]\nmode = \"0660\""),
        "admin.mode",
        "invalid type",
    );
    check(&pre("[workers]\ncores = [-1]"), "workers.cores[0]", "");
}

#[test]
fn missing_keys() {
    check(&rep("name = \"t\"", ""), "router.name", "missing");
    check(
        &BASE.replace("[router]\nname = \"t\"\n", ""),
        "router",
        "missing",
    );
    check(&rep("mtu = 1500", ""), "hr[0].mtu", "missing");
    check(&rep("san_id = 0x0201", ""), "hr[0].san_id", "missing");
    check(
        &rep("backend = \"udp\"\n", ""),
        "hr[0].port.backend",
        "missing",
    );
    check(
        &rep("bind = \"127.0.0.1:35101\"", ""),
        "hr[0].port.bind",
        "required for backend \"udp\"",
    );
    check(&pre("[dpdk]"), "dpdk.eal_args", "missing");
    check(
        &post("[[hr.static]]\naddress = 0x0110"),
        "hr[1].static[0].native",
        "missing",
    );
    check("[router]\nname = \"t\"\n", "hr", "at least one [[hr]]");
}

#[test]
fn backend_keys() {
    check(
        &rep(
            "bind = \"127.0.0.1:35101\"",
            "bind = \"127.0.0.1:35101\"\ninterface = \"eth0\"",
        ),
        "hr[0].port.interface",
        "not a key of backend \"udp\"",
    );
    check(
        &rep(
            "bind = \"127.0.0.1:35101\"",
            "bind = \"127.0.0.1:35101\"\nrx_ring = 64",
        ),
        "hr[0].port.rx_ring",
        "not a key of backend \"udp\"",
    );
    let af = "[router]\nname = \"t\"\n[[hr]]\naddress = 0x0101\nsan_id = 0x0201\nmtu = 1500\n[hr.port]\nbackend = \"af_packet\"\n";
    check(
        af,
        "hr[0].port.interface",
        "required for backend \"af_packet\"",
    );
    check(
        &format!("{af}interface = \"eth0\"\nmembers = []\n"),
        "hr[0].port.members",
        "not a key of backend \"af_packet\"",
    );
    let dp = "[router]\nname = \"t\"\n[dpdk]\neal_args = []\n[[hr]]\naddress = 0x0101\nsan_id = 0x0201\nmtu = 1500\n[hr.port]\nbackend = \"dpdk\"\n";
    check(dp, "hr[0].port.device", "required for backend \"dpdk\"");
    check(
        &format!("{dp}device = \"net_null0\"\nmac = \"02:00:00:00:00\"\n"),
        "hr[0].port.mac",
        "not a MAC address",
    );
    check(
        &format!("{dp}device = \"net_null0\"\nmac = \"03:00:00:00:00:01\"\n"),
        "hr[0].port.mac",
        "unicast",
    );
    check(
        &format!("{dp}device = \"net_null0\"\nbind = \"127.0.0.1:1\"\n"),
        "hr[0].port.bind",
        "not a key of backend \"dpdk\"",
    );
    // One backend per box.
    check(
        &post(
            "[[hr]]\naddress = 0x0103\nsan_id = 0x0203\nmtu = 1500\n[hr.port]\nbackend = \"af_packet\"\ninterface = \"eth0\"",
        ),
        "hr[2].port.backend",
        "all ports of a box use one backend",
    );
}

#[test]
fn router_errors() {
    check(&rep("name = \"t\"", "name = \"\""), "router.name", "empty");
    check(&rep("name = \"t\"", "name = \"a/b\""), "router.name", "'/'");
    check(
        &rep("name = \"t\"", "name = \"a b\""),
        "router.name",
        "spaces",
    );
    check(
        &rep("name = \"t\"", &format!("name = \"{}\"", "x".repeat(65))),
        "router.name",
        "longer",
    );
    check(
        &rep("name = \"t\"", "name = \"t\"\nrouter_cost = 0"),
        "router.router_cost",
        ">= 1",
    );
    check(
        &rep("name = \"t\"", "name = \"t\"\nk = 0"),
        "router.k",
        "at least one",
    );
}

#[test]
fn dpdk_errors() {
    let dp = |eal: &str, dev: &str| {
        format!(
            "[router]\nname = \"t\"\n{eal}\n[[hr]]\naddress = 0x0101\nsan_id = 0x0201\nmtu = 1500\n[hr.port]\nbackend = \"dpdk\"\ndevice = \"{dev}\"\n"
        )
    };
    check(
        &dp("", "net_null0"),
        "dpdk.eal_args",
        "required when the ports use backend \"dpdk\"",
    );
    check(
        &dp("[dpdk]\neal_args = [\"--no-pci\", \"\"]", "net_null0"),
        "dpdk.eal_args[1]",
        "empty",
    );
    check(
        &dp(
            "[dpdk]\neal_args = [\"--no-huge\", \"--vdev=net_null0\"]",
            "net_null0",
        ),
        "dpdk.eal_args[1]",
        "list it once",
    );
    check(
        &dp(
            "[dpdk]\neal_args = [\"-a\", \"0000:3b:00.0\"]",
            "0000:3b:00.0",
        ),
        "dpdk.eal_args[0]",
        "list it once",
    );
    check(
        &dp("[dpdk]\neal_args = [\"--no-pci\"]", "0000:3b:00.0"),
        "hr[0].port.device",
        "--no-pci",
    );
    check(
        &dp("[dpdk]\neal_args = []", "memif0"),
        "hr[0].port.device",
        "neither a PCI address",
    );
    check(
        &dp("[dpdk]\neal_args = []", "net_memif0,role"),
        "hr[0].port.device",
        "key=value",
    );
    check(
        &dp("[dpdk]\neal_args = []", "0000:3b:00.0,x=1"),
        "hr[0].port.device",
        "PCI",
    );
    check(
        &dp("[dpdk]\neal_args = []", "net_null0 x"),
        "hr[0].port.device",
        "spaces",
    );
    let two = format!(
        "{}[[hr]]\naddress = 0x0102\nsan_id = 0x0202\nmtu = 1500\n[hr.port]\nbackend = \"dpdk\"\ndevice = \"net_null0\"\nrx_ring = 8\n",
        dp("[dpdk]\neal_args = []", "net_null0")
    );
    let errs = Config::check_toml(&two).unwrap_err();
    let keys: Vec<&str> = errs.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        ["hr[1].port.device", "hr[1].port.rx_ring"],
        "{errs:?}"
    );
    check(
        &dp("[dpdk]\neal_args = []", "net_null0").replace("mtu = 1500", "mtu = 70000"),
        "hr[0].mtu",
        "at most 65535",
    );
    // [dpdk] with other backends: allowed, unused.
    let c = Config::from_toml(&pre("[dpdk]\neal_args = [\"--no-huge\"]")).unwrap();
    assert!(c.eal_args().is_empty());
    round_trip(&c);
}

#[test]
fn workers_errors() {
    check(&pre("[workers]\ncount = 0"), "workers.count", "1..=128");
    check(&pre("[workers]\ncount = 129"), "workers.count", "1..=128");
    check(
        &pre("[workers]\ncount = 2\ncores = [1]"),
        "workers.cores",
        "1 cores for 2 workers",
    );
    check(
        &pre("[workers]\ncount = 2\ncores = [1, 1]"),
        "workers.cores[1]",
        "one worker per core",
    );
    check(
        &pre("[workers]\ncores = [4096]"),
        "workers.cores[0]",
        "below 1024",
    );
    check(
        &pre("[workers]\nidle_sleep_us = 0"),
        "workers.idle_sleep_us",
        "1..=1000000",
    );
    // Busy polling does not sleep: the pause does not matter.
    let c = Config::from_toml(&pre(
        "[workers]\nidle = \"busy-poll\"\nidle_sleep_us = 0\ncount = 2\ncores = [2, 3]",
    ))
    .unwrap();
    assert_eq!(c.idle_policy(), IdlePolicy::BusyPoll);
    assert_eq!(c.worker_cores(), vec![Some(2), Some(3)]);
    round_trip(&c);

    // Several workers: who receives from which port, where the others run.
    check(
        &pre("[workers]
count = 2
owners = [0]"),
        "workers.owners",
        "1 owners for 2 HRs",
    );
    check(
        &pre("[workers]
count = 2
owners = [0, 2]"),
        "workers.owners[1]",
        "worker 2 of 2",
    );
    check(
        &pre("[workers]
control_cores = []"),
        "workers.control_cores",
        "at least one core",
    );
    check(
        &pre("[workers]
control_cores = [2048]"),
        "workers.control_cores[0]",
        "below 1024",
    );
    check(
        &pre("[workers]
spread = \"rss\""),
        "workers.spread",
        "",
    );
    let c = Config::from_toml(&pre("[workers]
count = 2
spread = \"flows\"
owners = [1, 1]
control_cores = [0]"))
    .unwrap();
    assert_eq!(c.workers.spread, SpreadMode::Flows);
    assert_eq!((c.port_owner(0), c.port_owner(1)), (1, 1));
    round_trip(&c);
    let c = Config::from_toml(&pre("[workers]
count = 2"))
    .unwrap();
    assert_eq!(c.workers.spread, SpreadMode::Auto);
    assert_eq!((c.port_owner(0), c.port_owner(1)), (0, 1));
}

#[test]
fn timer_errors() {
    for k in [
        "sweep_ms",
        "keepalive_ms",
        "refresh_ms",
        "advertise_ms",
        "fib_ms",
        "tombstone_ms",
    ] {
        check(
            &pre(&format!("[timers]\n{k} = 0")),
            &format!("timers.{k}"),
            "> 0",
        );
    }
    check(
        &pre("[timers]\nkeepalive_misses = 0"),
        "timers.keepalive_misses",
        ">= 1",
    );
    check(
        &pre("[timers]\nhold_ms = 30000"),
        "timers.hold_ms",
        "must exceed timers.refresh_ms (30000)",
    );
    check(
        &pre("[timers]\nrefresh_ms = 100000"),
        "timers.hold_ms",
        "must exceed timers.refresh_ms",
    );
    let c = Config::from_toml(&pre("[timers]\nrefresh_ms = 1000\nhold_ms = 3000")).unwrap();
    assert_eq!((c.timers.refresh_ms, c.timers.hold_ms), (1000, 3000));
    assert_eq!(c.router_config(1).timers, c.timers);
}

#[test]
fn limit_and_rate_errors() {
    check(&pre("[limits]\nmax_rcvf = 33"), "limits.max_rcvf", "1..=32");
    let mut c = Config::from_toml(BASE).unwrap();
    c.rates.punt.request.per_s = u64::MAX;
    c.timers.hold_ms = u64::MAX;
    let errs = c.validate().unwrap_err();
    let keys: Vec<&str> = errs.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        ["timers.hold_ms", "rates.punt.request.per_s"],
        "{errs:?}"
    );
    check(&pre("[limits]\nmax_rcvf = 0"), "limits.max_rcvf", "1..=32");
    check(&pre("[limits]\nmax_lrt = 0"), "limits.max_lrt", ">= 1");
    check(
        &pre("[limits]\nmax_nodes_per_rt = 0"),
        "limits.max_nodes_per_rt",
        ">= 1",
    );
    check(
        &pre("[limits]\nmax_rts_per_neighbour = 0"),
        "limits.max_rts_per_neighbour",
        ">= 1",
    );
    check(
        &pre("[rates.punt]\nlocal = { per_s = 10, burst = 0 }"),
        "rates.punt.local.burst",
        ">= 1",
    );
    check(
        &pre("[rates.punt]\nlocal = { per_s = 10 }"),
        "rates.punt.local.burst",
        "missing",
    );
    check(
        &pre("[rates.punt]\nbuddies = { per_s = 10, burst = 1 }"),
        "rates.punt.buddies",
        "unknown key",
    );
    check(
        &pre("[rates]\nnotice_burst = 0"),
        "rates.notice_burst",
        ">= 1",
    );
    let c = Config::from_toml(&pre(
        "[rates]\nerrors_global = 0\nerrors_per_source = 3\n[rates.punt]\nmanagement = { per_s = 0, burst = 64 }",
    ))
    .unwrap();
    let b = c.channel_config().punt_budgets;
    assert_eq!(b.management, rrp::PuntBudget::new(0, 64));
    assert_eq!(
        b.routing,
        rrp::PuntBudgets::default().routing,
        "the others as they were"
    );
    assert_eq!(c.router_config(1).error_rates.per_source, 3);
    assert_eq!(c.router_config(1).error_rates.global, 0);
}

#[test]
fn admin_errors() {
    check(&pre("[admin]\nmode = 0o1777"), "admin.mode", "0o1777");
    check(
        &pre("[admin]\nreadonly_everyone = true"),
        "admin.readonly_everyone",
        "0o660",
    );
    Config::from_toml(&pre("[admin]\nreadonly_everyone = true\nmode = 0o666")).unwrap();
    check(
        &pre("[admin]\nprometheus_listen = \"0.0.0.0:9100\""),
        "admin.prometheus_listen",
        "loopback",
    );
    check(
        &pre("[admin]\nprometheus_listen = \"[2001:db8::1]:9100\""),
        "admin.prometheus_listen",
        "loopback",
    );
    check(
        &pre("[admin]\nprometheus_listen = \"127.0.0.1:0\""),
        "admin.prometheus_listen",
        "port",
    );
    Config::from_toml(&pre("[admin]\nprometheus_listen = \"[::1]:9100\"")).unwrap();
    check(
        &pre("[admin]\nreadonly_group = \"mwadmin\""),
        "admin.readonly_group",
        "admin_group",
    );
    check(
        &pre("[admin]\nadmin_group = \"\""),
        "admin.admin_group",
        "empty",
    );
    check(
        &pre("[admin]\nadmin_group = \"a b\""),
        "admin.admin_group",
        "not a group name",
    );
    check(&pre("[admin]\nsocket = \"\""), "admin.socket", "empty");
    check(
        &pre(&format!("[admin]\nsocket = \"/{}\"", "s".repeat(120))),
        "admin.socket",
        "107",
    );
    check(
        &pre("[admin]\nsocket = \"/run/\""),
        "admin.socket",
        "name a file",
    );
}

#[test]
fn hr_errors() {
    check(
        &rep("address = 0x0101", "address = 0x0020"),
        "hr[0].address",
        "0x0040-0x7FFF",
    );
    check(
        &rep("address = 0x0101", "address = 0x8001"),
        "hr[0].address",
        "0x0040-0x7FFF",
    );
    check(
        &rep("san_id = 0x0201", "san_id = 0xffff"),
        "hr[0].san_id",
        "0x0040-0x7FFF",
    );
    check(
        &rep("address = 0x0102", "address = 0x0101"),
        "hr[1].address",
        "is also hr[0].address",
    );
    check(
        &rep("san_id = 0x0202", "san_id = 0x0201"),
        "hr[1].san_id",
        "two HRs of one box on the same SAN",
    );
    check(
        &rep("san_id = 0x0202", "san_id = 0x0101"),
        "hr[1].san_id",
        "is also hr[0].address",
    );
    check(&rep("mtu = 1500", "mtu = 63"), "hr[0].mtu", "at least 64");
    check(
        &rep("mtu = 1500", "mtu = 9217"),
        "hr[0].mtu",
        "at most 9216",
    );
    Config::from_toml(&rep("mtu = 1500", "mtu = 0")).unwrap();
    Config::from_toml(&rep("mtu = 1500", "mtu = 9216")).unwrap();
    check(
        &rep("mtu = 1500", "mtu = 1500\ncost = 0"),
        "hr[0].cost",
        ">= 1",
    );
    check(
        &rep("mtu = 1500", "mtu = 1500\nname = \"a b\""),
        "hr[0].name",
        "spaces",
    );
    check(
        &BASE.replace("mtu = 1500", "mtu = 1500\nname = \"x\""),
        "hr[1].name",
        "is also hr[0].name",
    );
    let too_many: String = (0..17)
        .map(|i| {
            format!("[[hr]]\naddress = {}\nsan_id = {}\nmtu = 1500\n[hr.port]\nbackend = \"udp\"\nbind = \"127.0.0.1:{}\"\n", 0x100 + i, 0x200 + i, 36000 + i)
        })
        .collect();
    check(
        &format!("[router]\nname = \"t\"\n{too_many}"),
        "hr",
        "at most 16 ports",
    );
}

#[test]
fn udp_errors() {
    let b0 = "bind = \"127.0.0.1:35101\"";
    check(
        &rep(b0, "bind = \"0.0.0.0:35101\""),
        "hr[0].port.bind",
        "specific address",
    );
    check(
        &rep(b0, "bind = \"[::]:35101\""),
        "hr[0].port.bind",
        "specific address",
    );
    check(
        &rep(b0, "bind = \"224.0.0.1:35101\""),
        "hr[0].port.bind",
        "unicast",
    );
    check(
        &rep("bind = \"127.0.0.1:35201\"", "bind = \"127.0.0.1:35101\""),
        "hr[1].port.bind",
        "is also hr[0].port.bind",
    );
    // Port 0 (ephemeral) may repeat: the sockets differ.
    let c = Config::from_toml(&BASE.replace("35101\"", "0\"").replace("35201\"", "0\"")).unwrap();
    assert_eq!(c.hrs[0].configured_native(), None);
    let m = "members = [\"127.0.0.1:35102\"]";
    check(
        &rep(m, "members = [\"[::1]:35102\"]"),
        "hr[0].port.members[0]",
        "cannot reach it",
    );
    check(
        &rep(m, "members = [\"127.0.0.1:0\"]"),
        "hr[0].port.members[0]",
        "port 0",
    );
    check(
        &rep(m, "members = [\"0.0.0.0:1\"]"),
        "hr[0].port.members[0]",
        "unicast",
    );
    check(
        &rep(m, "members = [\"127.0.0.1:1\", \"127.0.0.1:1\"]"),
        "hr[0].port.members[1]",
        "is also members[0]",
    );
    check(
        &rep(m, "pool_size = 8"),
        "hr[0].port.pool_size",
        "one burst",
    );
    check(
        &rep(m, "socket_buf = 4294967296"),
        "hr[0].port.socket_buf",
        "2^31",
    );
    let v6 = rep(b0, "bind = \"[::1]:35101\"");
    check(&v6, "hr[0].port.members[0]", "IPv4 but the port binds IPv6");
}

#[test]
fn af_packet_errors() {
    let af = |i0: &str, i1: &str, extra: &str| {
        format!(
            "[router]\nname = \"t\"\n[[hr]]\naddress = 0x0101\nsan_id = 0x0201\nmtu = 1500\n[hr.port]\nbackend = \"af_packet\"\ninterface = \"{i0}\"\n{extra}\n[[hr]]\naddress = 0x0102\nsan_id = 0x0202\nmtu = 1500\n[hr.port]\nbackend = \"af_packet\"\ninterface = \"{i1}\"\n"
        )
    };
    Config::from_toml(&af("eth0", "eth1", "")).unwrap();
    check(
        &af("eth0", "eth0", ""),
        "hr[1].port.interface",
        "one port per interface",
    );
    check(
        &af("a-very-long-ifname", "eth1", ""),
        "hr[0].port.interface",
        "1-15 bytes",
    );
    check(
        &af("eth0:1", "eth1", ""),
        "hr[0].port.interface",
        "not an interface name",
    );
    check(
        &af("", "eth1", ""),
        "hr[0].port.interface",
        "not an interface name",
    );
    check(
        &af("eth0", "eth1", "rx_frames = 4"),
        "hr[0].port.rx_frames",
        "one burst",
    );
    check(
        &af("eth0", "eth1", "tx_frames = 0"),
        "hr[0].port.tx_frames",
        "one burst",
    );
    check(
        &af("eth0", "eth1", "pool_size = 0"),
        "hr[0].port.pool_size",
        "one burst",
    );
    check(
        &af("eth0", "eth1", "").replacen("mtu = 1500", "mtu = 9300", 1),
        "hr[0].mtu",
        "af_packet port carries at most 9216",
    );
    // Static natives on an Ethernet SAN are MACs.
    check(
        &format!(
            "{}[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:1\"\n",
            af("eth0", "eth1", "")
        ),
        "hr[1].static[0].native",
        "not a MAC address",
    );
    check(
        &format!(
            "{}[[hr.static]]\naddress = 0x0110\nnative = \"01:00:5e:00:00:01\"\n",
            af("eth0", "eth1", "")
        ),
        "hr[1].static[0].native",
        "unicast",
    );
}

#[test]
fn static_errors() {
    let st = |addr: &str, native: &str| {
        post(&format!(
            "[[hr.static]]\naddress = {addr}\nnative = \"{native}\""
        ))
    };
    Config::from_toml(&st("0x0110", "127.0.0.1:40000")).unwrap();
    check(
        &st("0x0110", "02:00:00:00:00:07"),
        "hr[1].static[0].native",
        "not a UDP endpoint",
    );
    check(
        &st("0x0110", "[::1]:40000"),
        "hr[1].static[0].native",
        "cannot reach it",
    );
    check(
        &st("0x0110", "127.0.0.1:35201"),
        "hr[1].static[0].native",
        "the HR's own native address",
    );
    check(
        &st("0x0010", "127.0.0.1:40000"),
        "hr[1].static[0].address",
        "0x0040-0x7FFF",
    );
    check(
        &st("0x0101", "127.0.0.1:40000"),
        "hr[1].static[0].address",
        "is hr[0].address",
    );
    check(
        &st("0x0201", "127.0.0.1:40000"),
        "hr[1].static[0].address",
        "is hr[0].san_id",
    );
    let two = format!(
        "{}\n[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:40000\"\n",
        st("0x0111", "127.0.0.1:40000")
    );
    check(
        &two,
        "hr[1].static[1].native",
        "is also hr[1].static[0].native",
    );
    let text = BASE.replacen(
        "members = [\"127.0.0.1:35102\"]",
        "members = [\"127.0.0.1:35102\"]\n\n[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:40000\"",
        1,
    ) + "[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:40001\"\n";
    check(
        &text,
        "hr[1].static[0].address",
        "is also hr[0].static[0].address",
    );
    check(
        &post("[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:40000\"\nname = \"\""),
        "hr[1].static[0].name",
        "empty",
    );
    let e = check(
        &pre("[limits]\nmax_lrt = 1")
            .replace("bind = \"127.0.0.1:35201\"", "bind = \"127.0.0.1:35201\"\n[[hr.static]]\naddress = 0x0110\nnative = \"127.0.0.1:40000\""),
        "hr[1].static",
        "limits.max_lrt = 1",
    );
    assert!(e.location.is_some());
}

#[test]
fn check_toml_lists_every_error_in_file_order() {
    let text =
        pre("[timers]\nsweep_ms = 0\n[admin]\nmode = 0o7777").replace("mtu = 1500", "mtu = 10");
    let errs = Config::check_toml(&text).unwrap_err();
    let keys: Vec<&str> = errs.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        ["timers.sweep_ms", "admin.mode", "hr[0].mtu", "hr[1].mtu"],
        "{errs:?}"
    );
    for e in &errs {
        assert!(e.location.is_some(), "{e}");
    }
    assert_eq!(errs[2].location.unwrap().0, line_of(&text, "mtu = 10"));
    assert_eq!(Config::from_toml(&text).unwrap_err(), errs[0]);
}

#[test]
fn load_reports_unreadable_files() {
    let e = Config::load(&example("no-such-file.toml")).unwrap_err();
    assert!(e.to_string().contains("no-such-file.toml"), "{e}");
}

// ---------------------------------------------------------------- round trip

#[test]
fn round_trip_variants() {
    let mut c = Config::from_toml(BASE).unwrap();
    round_trip(&c);
    c.router.name = "odd\nname".into(); // not valid, but the text must carry it
    let back = Config::from_toml(&c.to_toml()).unwrap_err();
    assert_eq!(back.key, "router.name");
    c.router.name = "r".into();
    c.hrs[0].statics.push(StaticNode {
        groups: Vec::new(),
        address: Address(0x0400),
        native: NativeAddr::udp("127.0.0.1:4000".parse().unwrap()),
        name: Some("quote \" backslash \\ tab \t newline \n del \u{7f} é ☃".into()),
        capabilities: vec![
            Capability {
                code: 2,
                params: vec![0x02, 0x01],
            },
            Capability {
                code: 255,
                params: vec![],
            },
        ],
    });
    c.hrs[1].name = Some("port-b".into());
    c.admin.readonly_group = Some("mwview".into());
    c.admin.prometheus_listen = Some("[::1]:9100".parse().unwrap());
    c.admin.socket = PathBuf::from("/tmp/dir with space/mw.sock");
    c.workers.cores = Some(vec![3]);
    c.router.sn_seed = SnSeed::Fixed(0);
    c.log.level = LogLevel::Trace;
    c.dpdk = Some(DpdkSection { eal_args: vec![] });
    round_trip(&c);
    c.management = ManagementSection {
        identity: Some(u64::MAX),
        description: Some("quote \" é ☃ \u{7f}".into()),
        mkey: u64::MAX,
        mkey_file: None,
        protect: 3,
        lease_s: u16::MAX,
        manager: Some(Address(0x7fff)),
        drop_threshold: i64::MAX as u64,
        traps_per_s: u32::MAX,
        tracer: false,
        answers_per_source: u32::MAX,
        answers_global: 1,
        manager_priority: None,
        manager_hrs: Vec::new(),
        address_pools: Vec::new(),
        sm_key: 0,
        sm_key_file: None,
        manager_timers: mgmt::manager::ManagerTimers {
            poll_ms: 600_000,
            poll_misses: 1,
            sweep_ms: 10,
            discover_ms: 77,
            timeout_ms: 1,
            retries: 10,
            heavy_every: 1,
            max_subscriptions: 1_000,
            lease_default_s: 1,
            lease_max_s: 86_400,
            report_retry_ms: 60_000,
            report_retries: 0,
        },
        perf_manager: mgmt::perfmgr::PerfConfig {
            enabled: true,
            interval_ms: 3_600_000,
            outstanding: 1,
            timeout_ms: 1,
            retries: 0,
            forget_sweeps: 100_000,
        },
        partitions_file: Some("/etc/mwrouter/partitions \" é.conf".into()),
        static_partitions: Vec::new(),
    };
    round_trip(&c);
}

fn arb_config() -> impl Strategy<Value = Config> {
    let backend = prop_oneof![
        Just(Backend::Udp),
        Just(Backend::AfPacket),
        Just(Backend::Dpdk)
    ];
    let hr = (
        prop_oneof![Just(0u32), 64u32..=9216],
        1u16..=u16::MAX,
        proptest::option::of("[a-z][a-z0-9_.-]{0,10}"),
        32usize..4096,
        0usize..(1 << 24),
        proptest::collection::vec(
            (
                proptest::option::of("\\PC{0,12}"),
                any::<u8>(),
                proptest::collection::vec(any::<u8>(), 0..4),
            ),
            0..3,
        ),
        proptest::collection::vec(1u16..1000, 0..4),
        any::<bool>(),
    );
    let globals = (
        "[a-z][a-z0-9-]{0,15}",
        (
            1u16..=u16::MAX,
            1usize..64,
            proptest::option::of(any::<u16>()),
        ),
        (
            1usize..8,
            any::<bool>(),
            prop_oneof![Just(IdleMode::Adaptive), Just(IdleMode::BusyPoll)],
            1u64..=1_000_000,
            any::<u32>(),
        ),
        (
            1u64..1_000_000,
            1u64..1_000_000,
            1u32..10,
            1u64..1_000_000,
            1u64..1_000_000,
            1u64..1000,
            1u64..1000,
            1u64..100_000,
        ),
        (
            1usize..100_000,
            1usize..100_000,
            1usize..=32,
            10usize..100_000,
        ),
        (
            0..=i64::MAX as u64,
            1u64..100_000,
            0..=i64::MAX as u64,
            1u64..100_000,
            any::<u32>(),
            any::<u32>(),
        ),
        (
            0u32..=0o777,
            any::<bool>(),
            proptest::option::of(1u16..u16::MAX),
        ),
        (0usize..5, 0usize..2),
        (
            proptest::option::of(1..=u64::MAX),
            proptest::option::of("\\PC{1,16}"),
            any::<u64>(),
            0u8..=3,
            any::<u16>(),
            proptest::option::of(0x0040u16..=0x7fff),
            0..=i64::MAX as u64,
            1..=u32::MAX,
        ),
    );
    (backend, proptest::collection::vec(hr, 1..5), globals).prop_map(
        |(backend, hrs, (name, router, workers, t, l, r, admin, log, m))| {
            let n = hrs.len();
            let hrs: Vec<HrSection> = hrs
                .into_iter()
                .enumerate()
                .map(
                    |(i, (mtu, cost, hname, pool, sockbuf, statics, members, mac))| {
                        let port = match backend {
                            Backend::Udp => {
                                let mut u = UdpPortConfig::new(
                                    format!("127.0.0.{}:{}", i + 1, 35000 + i).parse().unwrap(),
                                );
                                let mut ms: Vec<u16> = members;
                                ms.sort_unstable();
                                ms.dedup();
                                u.members = ms
                                    .iter()
                                    .map(|p| format!("127.0.1.1:{p}").parse().unwrap())
                                    .collect();
                                u.pool_size = pool;
                                u.socket_buf = sockbuf;
                                PortConfig::Udp(u)
                            }
                            Backend::AfPacket => {
                                let mut a = AfPacketPortConfig::new(&format!("eth{i}"));
                                a.pool_size = pool;
                                a.socket_buf = sockbuf;
                                a.rx_frames = 32 + pool as u32;
                                PortConfig::AfPacket(a)
                            }
                            Backend::Dpdk => {
                                let dev = if mac {
                                    format!("net_memif{i},role=server,socket=/tmp/m{i}.sock")
                                } else {
                                    format!("0000:3b:00.{i}")
                                };
                                let mut d = DpdkPortConfig::new(&dev);
                                d.mac = mac.then_some([2, 0, 0, 0, 0, i as u8]);
                                d.rx_ring = 32 + (pool as u16 % 1000);
                                PortConfig::Dpdk(d)
                            }
                        };
                        let statics = statics
                            .into_iter()
                            .enumerate()
                            .map(|(j, (sname, code, params))| StaticNode {
                                groups: Vec::new(),
                                address: Address(0x1000 + (i * 16 + j) as u16),
                                native: if backend == Backend::Udp {
                                    NativeAddr::udp(
                                        format!("127.0.2.1:{}", 40000 + j).parse().unwrap(),
                                    )
                                } else {
                                    NativeAddr::mac([2, 1, 0, 0, i as u8, j as u8])
                                },
                                name: sname.filter(|s| !s.is_empty()).map(String::into_bytes),
                                capabilities: vec![Capability { code, params }],
                            })
                            .collect();
                        let mut h = HrSection::new(0x0100 + i as u16, 0x0200 + i as u16, mtu, port);
                        h.cost = cost;
                        // Every other HR down: both states go through emit and parse.
                        if (usize::from(cost) + i).is_multiple_of(2) {
                            h.admin_state = admin::PortState::Down;
                        }
                        h.name = hname.map(|s| format!("{s}{i}"));
                        h.statics = statics;
                        h
                    },
                )
                .collect();
            let mut c = Config::new(&name, hrs);
            c.router.router_cost = router.0;
            c.router.k = router.1;
            c.router.sn_seed = router.2.map_or(SnSeed::Clock, SnSeed::Fixed);
            c.workers.count = workers.0;
            c.workers.cores = workers.1.then(|| (0..workers.0).map(|x| x * 2).collect());
            c.workers.idle = workers.2;
            c.workers.idle_sleep_us = workers.3;
            c.workers.spins = workers.4;
            c.workers.spread =
                [SpreadMode::Auto, SpreadMode::Ports, SpreadMode::Flows][workers.4 as usize % 3];
            c.workers.owners =
                (workers.4 % 2 == 0).then(|| (0..c.hrs.len()).map(|i| i % workers.0).collect());
            c.workers.control_cores = workers.1.then(|| vec![1]);
            c.timers = Timers {
                sweep_ms: t.0,
                keepalive_ms: t.1,
                keepalive_misses: t.2,
                refresh_ms: t.3,
                hold_ms: t.3 + t.4,
                advertise_ms: t.5,
                fib_ms: t.6,
                tombstone_ms: t.7,
                probe_ms: 1 + t.1 / 2,
            };
            c.limits = rrp::router::Limits {
                max_nodes_per_rt: l.0,
                max_rts_per_neighbour: l.1,
                max_rts_per_hr: l.1 + l.0,
                max_rcvf: l.2,
                max_lrt: l.3,
                answers_per_source: 1 + (l.0 % 100) as u32,
                answers_global: 1 + (l.1 % 5000) as u32,
                downs_per_source: 1 + (l.2 % 50) as u32,
            };
            c.rates.punt.management = rrp::PuntBudget::new(r.0, r.1);
            c.rates.punt.local = rrp::PuntBudget::new(r.1, r.0.max(1));
            c.rates.notice_per_s = r.2;
            c.rates.notice_burst = r.3;
            c.rates.errors_per_source = r.4;
            c.rates.errors_global = r.5;
            c.admin.mode = admin.0;
            c.admin.readonly_everyone = admin.1 && admin.0 & 0o006 == 0o006;
            c.admin.prometheus_listen = admin.2.map(|p| SocketAddr::from(([127, 0, 0, 1], p)));
            c.log.level = [
                LogLevel::Error,
                LogLevel::Warn,
                LogLevel::Info,
                LogLevel::Debug,
                LogLevel::Trace,
            ][log.0];
            c.log.format = [LogFormat::Human, LogFormat::Json][log.1];
            if backend == Backend::Dpdk {
                c.dpdk = Some(DpdkSection {
                    eal_args: vec!["--no-huge".into(), "-m".into(), "512".into()],
                });
            }
            c.management = ManagementSection {
                identity: m.0,
                description: m.1,
                mkey: m.2,
                mkey_file: None,
                protect: m.3,
                lease_s: m.4,
                manager: m.5.map(Address),
                drop_threshold: m.6,
                traps_per_s: m.7,
                tracer: m.2 % 2 == 0,
                answers_per_source: m.7,
                answers_global: 1 + (m.2 % 10_000) as u32,
                manager_priority: (m.2 % 3 == 0).then_some((m.2 % 16) as u8),
                manager_hrs: Vec::new(),
                address_pools: Vec::new(),
                sm_key: m.2 ^ 0x55,
                sm_key_file: None,
                manager_timers: mgmt::manager::ManagerTimers {
                    poll_ms: 10 + m.2 % 1000,
                    ..Default::default()
                },
                perf_manager: mgmt::perfmgr::PerfConfig {
                    enabled: m.2 % 2 == 0,
                    outstanding: 1 + (m.2 % 1000) as u32,
                    ..Default::default()
                },
                partitions_file: (m.2 % 5 == 0).then(|| "/etc/mwrouter/partitions.conf".into()),
                static_partitions: Vec::new(),
            };
            let _ = n;
            c
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn round_trip_generated(c in arb_config()) {
        prop_assert!(c.validate().is_ok(), "generated an invalid config: {:?}", c.validate());
        let text = c.to_toml();
        let back = Config::from_toml(&text);
        prop_assert!(back.is_ok(), "{:?}\n{}", back, text);
        prop_assert_eq!(back.unwrap(), c);
    }
}

// ---------------------------------------------------------------- management

/// A distinctive M_Key: no error message may show it, in any spelling.
const MKEY: u64 = 0x5ec1_2e7c_0ffe_e123;

#[track_caller]
fn no_mkey(what: &str) {
    let l = what.to_ascii_lowercase();
    for spelling in [
        format!("{MKEY:x}"),
        MKEY.to_string(),
        "5ec1_2e7c".into(),
        "0ffe_e123".into(),
        "dec12e7c0ffee123".into(),
        u64::from_str_radix("dec12e7c0ffee123", 16)
            .unwrap()
            .to_string(),
    ] {
        assert!(
            !l.contains(&spelling),
            "the M_Key ({spelling}) shows in:\n{what}"
        );
    }
}

#[test]
fn management_every_key() {
    let text = pre(r#"[management]
identity = "0x0123456789abcdef"
description = "rab"
mkey = "0x1122334455667788"
protect = 2
lease_s = 60
manager = 0x0120
drop_threshold = 1000
traps_per_s = 5
answers_per_source = 20
answers_global = 300"#);
    let c = Config::from_toml(&text).unwrap();
    assert_eq!(
        c.management,
        ManagementSection {
            identity: Some(0x0123_4567_89ab_cdef),
            description: Some("rab".into()),
            mkey: 0x1122_3344_5566_7788,
            mkey_file: None,
            protect: 2,
            lease_s: 60,
            manager: Some(Address(0x0120)),
            drop_threshold: 1000,
            traps_per_s: 5,
            tracer: true,
            answers_per_source: 20,
            answers_global: 300,
            manager_priority: None,
            manager_hrs: Vec::new(),
            address_pools: Vec::new(),
            sm_key: 0,
            sm_key_file: None,
            manager_timers: Default::default(),
            perf_manager: Default::default(),
            partitions_file: None,
            static_partitions: Vec::new(),
        }
    );
    assert_eq!(c.node_identity(), 0x0123_4567_89ab_cdef);
    assert_eq!(c.node_description(), "rab");
    round_trip(&c);
    // The emitted text holds the key (the file does), as a hex string.
    let t = c.to_toml();
    assert!(
        t.contains(
            "[management]\nidentity = \"0x0123456789abcdef\"\ndescription = \"rab\"\nmkey = \"0x1122334455667788\"\nprotect = 2\nlease_s = 60\nmanager = 0x0120\n"
        ),
        "{t}"
    );
    // Dotted keys and an inline table are the same section.
    let dotted = pre("management.mkey = 7\nmanagement.protect = 1");
    let c = Config::from_toml(&dotted).unwrap();
    assert_eq!((c.management.mkey, c.management.protect), (7, 1));
    let inline = pre("management = { mkey = \"0x7\", protect = 1 }");
    assert_eq!(Config::from_toml(&inline).unwrap().management, c.management);
}

#[test]
fn example_udp_management_uncommented() {
    // The example's [management] is commented out; uncommented, it loads.
    let text = std::fs::read_to_string(example("router-udp.toml")).unwrap();
    assert_eq!(
        load("router-udp.toml").management,
        ManagementSection::default()
    );
    let start = text
        .find("# [management]\n")
        .expect("the commented section");
    let mut out = text[..start].to_string();
    let mut lines = text[start..].lines();
    for l in lines.by_ref() {
        let Some(l) = l.strip_prefix("# ") else {
            out.push('\n');
            break;
        };
        out.push_str(l);
        out.push('\n');
    }
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    let c = Config::from_toml(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(c.management.mkey, 0x1122_3344_5566_7788);
    assert_eq!(c.management.manager, Some(Address(0x0120)));
    assert_eq!(c.node_identity(), 0x0123_4567_89ab_cdef);
    round_trip(&c);
}

#[test]
fn management_defaults() {
    let d = ManagementSection::default();
    assert_eq!(d.identity, None);
    assert_eq!(d.description, None);
    assert_eq!(d.mkey, 0);
    assert_eq!(d.protect, 0);
    assert_eq!(d.lease_s, 0);
    assert_eq!(d.manager, None);
    assert_eq!(d.drop_threshold, 0);
    assert_eq!(d.traps_per_s, 10);
    assert_eq!((d.answers_per_source, d.answers_global), (1_000, 4_000));
    let c = Config::from_toml(BASE).unwrap();
    assert_eq!(c.management, d);
    assert_eq!(c.node_description(), "t");
    // An empty section is the defaults too; so is one key.
    assert_eq!(Config::from_toml(&pre("[management]")).unwrap(), c);
    let c = Config::from_toml(&pre("[management]\nlease_s = 30")).unwrap();
    assert_eq!(
        c.management,
        ManagementSection {
            lease_s: 30,
            ..ManagementSection::default()
        }
    );
    round_trip(&c);
    assert!(c.to_toml().contains("mkey = \"0x0000000000000000\"\n"));
}

#[test]
fn management_hex_and_integer_forms() {
    let value = |key: &str, v: &str| {
        let c = Config::from_toml(&pre(&format!("[management]\n{key} = {v}")))
            .unwrap_or_else(|e| panic!("{key} = {v}: {e}"));
        match key {
            "identity" => c.management.identity.unwrap(),
            _ => c.management.mkey,
        }
    };
    for key in ["identity", "mkey"] {
        assert_eq!(value(key, "\"0x0123456789abcdef\""), 0x0123_4567_89ab_cdef);
        assert_eq!(value(key, "\"0X0123456789ABCDEF\""), 0x0123_4567_89ab_cdef);
        assert_eq!(
            value(key, "\"0x0123_4567_89ab_cdef\""),
            0x0123_4567_89ab_cdef
        );
        assert_eq!(value(key, "\"81985529216486895\""), 0x0123_4567_89ab_cdef);
        assert_eq!(value(key, "81985529216486895"), 0x0123_4567_89ab_cdef);
        assert_eq!(value(key, "0x0123456789abcdef"), 0x0123_4567_89ab_cdef);
        assert_eq!(value(key, "0o17"), 15);
        assert_eq!(value(key, "9223372036854775807"), i64::MAX as u64);
        // Beyond a TOML integer: as a string.
        assert_eq!(value(key, "\"0xffffffffffffffff\""), u64::MAX);
        assert_eq!(value(key, "\"18446744073709551615\""), u64::MAX);
        assert_eq!(value(key, "\"0x1\""), 1);
    }
    assert_eq!(value("mkey", "0"), 0);
    assert_eq!(value("mkey", "\"0x0\""), 0);
    // An integer manager as well as hex.
    let c = Config::from_toml(&pre("[management]\nmanager = 288")).unwrap();
    assert_eq!(c.management.manager, Some(Address(0x0120)));
}

#[test]
fn management_errors() {
    #[track_caller]
    fn at(text: &str, key: &str, why: &str, needle: &str) {
        let e = check(text, key, why);
        assert_eq!(e.location.map(|l| l.0), Some(line_of(text, needle)), "{e}");
        assert!(
            e.to_string()
                .contains(&format!("(line {}", line_of(text, needle))),
            "{e}"
        );
    }
    let m = |body: &str| pre(&format!("[management]\nlease_s = 1\n{body}"));

    at(&m("protect = 4"), "management.protect", "0-3", "protect =");
    at(&m("protect = 256"), "management.protect", "u8", "protect =");
    at(
        &m("manager = 0x0020"),
        "management.manager",
        "not a node address",
        "manager =",
    );
    at(
        &m("manager = 0x8000"),
        "management.manager",
        "not a node address",
        "manager =",
    );
    at(
        &m("manager = 0"),
        "management.manager",
        "leave manager out",
        "manager =",
    );
    at(
        &m("manager = 70000"),
        "management.manager",
        "u16",
        "manager =",
    );
    at(
        &m(&format!("description = \"{}\"", "é".repeat(33))),
        "management.description",
        "longer than 64 bytes",
        "description =",
    );
    Config::from_toml(&m(&format!("description = \"{}\"", "é".repeat(32)))).unwrap();
    at(
        &m("description = \"\""),
        "management.description",
        "empty",
        "description =",
    );
    at(
        &m("description = \"a\\u0000b\""),
        "management.description",
        "NUL",
        "description =",
    );
    // Address pools: on an HR that runs a manager, node addresses first
    // to last, no HR inside, apart.
    let pool = |p: &str| m(&format!("manager_priority = 5\naddress_pools = [{p}]"));
    Config::from_toml(&pool("{ hr = 0x0101, first = 0x0180, last = 0x018f }")).unwrap();
    at(
        &m("address_pools = [{ hr = 0x0101, first = 0x0180, last = 0x018f }]"),
        "management.address_pools",
        "no SAN manager runs",
        "address_pools =",
    );
    at(
        &pool("{ hr = 0x0101, first = 0x0190, last = 0x0180 }"),
        "management.address_pools",
        "first to last",
        "address_pools =",
    );
    at(
        &pool("{ hr = 0x0101, first = 0x0100, last = 0x010f }"),
        "management.address_pools",
        "holds HR 0x0101",
        "address_pools =",
    );
    at(
        &pool(
            "{ hr = 0x0101, first = 0x0180, last = 0x018f }, { hr = 0x0102, first = 0x0188, last = 0x0198 }",
        ),
        "management.address_pools",
        "overlaps",
        "address_pools =",
    );
    at(
        &pool("{ hr = 0x0101, first = 0x0180 }"),
        "management.address_pools[0].last",
        "missing",
        "address_pools =",
    );
    // Manager timers: within bounds, and applied to every manager.
    let timers = |t: &str| m(&format!("manager_priority = 5\nmanager_timers = {{ {t} }}"));
    let c = Config::from_toml(&timers("poll_ms = 300, poll_misses = 2, heavy_every = 3")).unwrap();
    let mc = control::management::manager_configs(&c);
    assert!(!mc.is_empty());
    for (_, x) in &mc {
        assert_eq!(
            (x.timers.poll_ms, x.timers.poll_misses, x.timers.heavy_every),
            (300, 2, 3)
        );
        assert_eq!(
            x.timers.sweep_ms,
            mgmt::manager::ManagerConfig::new(0, 0).timers.sweep_ms
        );
    }
    at(
        &timers("poll_ms = 0"),
        "management.manager_timers.poll_ms",
        "outside 10..=600000",
        "manager_timers =",
    );
    at(
        &timers("retries = 11"),
        "management.manager_timers.retries",
        "outside",
        "manager_timers =",
    );
    at(
        &timers("sweep = 5"),
        "management.manager_timers.sweep",
        "unknown key",
        "manager_timers =",
    );
    // The performance manager: within bounds, its wait within its interval.
    let perf = |t: &str| m(&format!("perf_manager = {{ {t} }}"));
    let c = Config::from_toml(&perf("enabled = true, interval_ms = 500")).unwrap();
    assert!(c.management.perf_manager.enabled);
    assert_eq!(c.management.perf_manager.interval_ms, 500);
    assert_eq!(c.management.perf_manager.outstanding, 16);
    at(
        &perf("outstanding = 0"),
        "management.perf_manager.outstanding",
        "outside 1..=1024",
        "perf_manager =",
    );
    at(
        &perf("interval_ms = 1000, timeout_ms = 500, retries = 1"),
        "management.perf_manager.timeout_ms",
        "not less than interval_ms",
        "perf_manager =",
    );
    at(
        &perf("every = 5"),
        "management.perf_manager.every",
        "unknown key",
        "perf_manager =",
    );
    at(
        &m("traps_per_s = 0"),
        "management.traps_per_s",
        ">= 1",
        "traps_per_s =",
    );
    at(
        &m("answers_per_source = 0"),
        "management.answers_per_source",
        ">= 1",
        "answers_per_source =",
    );
    at(
        &m("answers_global = 0"),
        "management.answers_global",
        ">= 1",
        "answers_global =",
    );
    at(
        &m("identity = 0"),
        "management.identity",
        "0 is not",
        "identity =",
    );
    at(
        &m("identity = \"0x0000\""),
        "management.identity",
        "0 is not",
        "identity =",
    );
    at(
        &m("identity = -1"),
        "management.identity",
        "negative",
        "identity =",
    );
    at(
        &m("identity = \"0xabcg\""),
        "management.identity",
        "not a 64-bit value",
        "identity =",
    );
    at(&m("mkey = -5"), "management.mkey", "negative", "mkey =");
    at(
        &m("mkey = \"\""),
        "management.mkey",
        "not a 64-bit value",
        "mkey =",
    );
    at(
        &m("mkey = \"0x\""),
        "management.mkey",
        "not a 64-bit value",
        "mkey =",
    );
    at(
        &m("mkey = \"0x_1\""),
        "management.mkey",
        "not a 64-bit value",
        "mkey =",
    );
    at(
        &m("mkey = \" 0x1\""),
        "management.mkey",
        "not a 64-bit value",
        "mkey =",
    );
    at(
        &m("mkey = \"0x1_0000_0000_0000_0000\""),
        "management.mkey",
        "larger than 64 bits",
        "mkey =",
    );
    at(
        &m("mkey = \"18446744073709551616\""),
        "management.mkey",
        "larger than 64 bits",
        "mkey =",
    );
    at(
        &m("mkey = true"),
        "management.mkey",
        "invalid type",
        "mkey =",
    );
    at(
        &m("mkey = 1.5"),
        "management.mkey",
        "invalid type",
        "mkey =",
    );
    at(
        &m("mkey = [1]"),
        "management.mkey",
        "invalid type",
        "mkey =",
    );
    at(
        &pre("[management]\nlease_s = 65536"),
        "management.lease_s",
        "u16",
        "lease_s = 65536",
    );
    at(
        &m("drop_threshold = -1"),
        "management.drop_threshold",
        "-1",
        "drop_threshold =",
    );
    at(&m("mkye = 1"), "management.mkye", "unknown key", "mkye =");
    let e = check(&m("mkye = 1"), "management.mkye", "unknown key");
    assert!(e.why.contains("`mkey`"), "{e}");
    // Built in code: a count beyond a TOML integer.
    let mut c = Config::from_toml(BASE).unwrap();
    c.management.drop_threshold = u64::MAX;
    let errs = c.validate().unwrap_err();
    assert_eq!(errs[0].key, "management.drop_threshold", "{errs:?}");
    // Every management error at once, in file order, each with its line.
    let text = m("protect = 7\nmanager = 0x0001\ntraps_per_s = 0\nidentity = 0");
    let errs = Config::check_toml(&text).unwrap_err();
    let keys: Vec<&str> = errs.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "management.identity",
            "management.protect",
            "management.manager",
            "management.traps_per_s"
        ],
        "{errs:?}"
    );
    for e in &errs {
        assert!(e.location.is_some(), "{e}");
    }
}

#[test]
fn management_key_never_in_errors() {
    let hex = format!("\"0x{MKEY:016x}\"");
    // A valid key in a broken configuration: every error, both renderings.
    let text = pre(&format!(
        "[timers]\nsweep_ms = 0\n[management]\nmkey = {hex}\nprotect = 9\nmanager = 1"
    ));
    let errs = Config::check_toml(&text).unwrap_err();
    assert_eq!(errs.len(), 3, "{errs:?}");
    for e in &errs {
        no_mkey(&e.to_string());
        no_mkey(&format!("{e:?}"));
    }
    // A key that does not parse, in every way it can fail.
    let broken = [
        format!("mkey = \"0x{MKEY:016x}zz\""),
        format!("mkey = \"0x{MKEY:016x}0\""),
        format!("mkey = \"{MKEY}z\""),
        format!("mkey = \"{MKEY}0\""),
        "mkey = \"0x5ec1_2e7c__0ffe_e123\"".to_string(),
        format!("mkey = -{MKEY}"),
        format!("mkey = {MKEY}.5"),
        format!("mkey = [{MKEY}]"),
        format!("mkey = {{ v = {MKEY} }}"),
        // TOML syntax errors on the key's line: the line is not quoted.
        "mkey = 0xdec12e7c0ffee123".to_string(),
        format!(
            "mkey = {}",
            u64::from_str_radix("dec12e7c0ffee123", 16).unwrap()
        ),
        format!("mkey = \"0x{MKEY:016x}"),
        format!("mkey = 0x{MKEY:016x}zz"),
        format!("mkey = {hex}\nmkey = {hex}"),
        format!("mkey = {hex} protect = 1"),
        format!("mkey = '0x{MKEY:016x}\nprotect = 1"),
    ];
    for b in &broken {
        for text in [
            pre(&format!("[management]\n{b}")),
            pre(&format!("[management]\nprotect = 1\n{b}\nlease_s = 5")),
            post(&format!("[management]\n{b}")),
        ] {
            let e = err(&text);
            assert!(e.key == "management.mkey" || e.key.is_empty(), "{b}: {e}");
            assert!(e.location.is_some(), "{b}: {e}");
            no_mkey(&e.to_string());
            no_mkey(&format!("{e:?}"));
            if e.key.is_empty() {
                // A syntax error still says where.
                let line = line_of(&text, "mkey =");
                assert!(e.why.contains("TOML parse error at line"), "{e}");
                assert!(e.location.unwrap().0 >= line, "{b}: {e}");
            }
        }
    }
    // The likely one, a 64-bit key as a TOML integer, says how to write it.
    let e = err(&pre("[management]\nmkey = 0xdec12e7c0ffee123"));
    assert!(e.why.contains("too large"), "{e}");
    assert!(e.why.contains("as a string"), "{e}");
    assert_eq!(e.location.map(|l| l.0), Some(2));
    // The inline and dotted forms.
    for text in [
        pre("management = { mkey = 0xdec12e7c0ffee123 }"),
        pre("management.mkey = 0xdec12e7c0ffee123"),
        pre(&format!("management = {{ mkey = {hex}, protect = 9 }}")),
    ] {
        let e = err(&text);
        no_mkey(&e.to_string());
    }
    // A syntax error elsewhere keeps quoting its line.
    let e = err(&rep("mtu = 1500", "mtu = = 1500"));
    assert!(e.why.contains("mtu = = 1500"), "{e}");

    // Nor does Debug, nor a reload line.
    let mut c = Config::from_toml(BASE).unwrap();
    c.management.mkey = MKEY;
    no_mkey(&format!("{c:?}"));
    no_mkey(&format!("{:?}", c.management));
    let old = Config::from_toml(BASE).unwrap();
    let plan = old.diff_for_reload(&c).unwrap();
    no_mkey(&format!("{plan:?}"));
    no_mkey(&plan.changes.join("\n"));
    let plan = c.diff_for_reload(&old).unwrap();
    no_mkey(&plan.changes.join("\n"));
    // Only the emitted configuration holds it, so that it loads again.
    assert!(c.to_toml().contains(&hex), "{}", c.to_toml());
    round_trip(&c);
}

#[test]
fn node_identity_is_stable() {
    let c = Config::from_toml(BASE).unwrap();
    // Pinned: a change in the derivation changes every box's identity.
    assert_eq!(c.node_identity(), 0x0696_6b77_368d_0e60);
    assert_eq!(c.node_identity(), c.node_identity());
    assert_eq!(c.clone().node_identity(), c.node_identity());
    let again = Config::from_toml(&c.to_toml()).unwrap();
    assert_eq!(again.node_identity(), c.node_identity());
    // What does not name the box leaves it alone.
    let mut t = c.clone();
    t.timers.sweep_ms = 1234;
    t.management.mkey = 9;
    t.hrs[0].mtu = 9000;
    assert_eq!(t.node_identity(), c.node_identity());
    // Another name, other addresses or another port order: another identity.
    let mut u = c.clone();
    u.router.name = "u".into();
    assert_eq!(u.node_identity(), 0x2090_3bc8_3059_543c);
    let mut v = c.clone();
    v.hrs.swap(0, 1);
    assert_eq!(v.node_identity(), 0xfbec_b323_2833_a22d);
    let mut w = c.clone();
    w.hrs[1].address = Address(0x0103);
    let ids = [
        c.node_identity(),
        u.node_identity(),
        v.node_identity(),
        w.node_identity(),
    ];
    for (i, a) in ids.iter().enumerate() {
        assert_ne!(*a, 0);
        for b in &ids[i + 1..] {
            assert_ne!(a, b, "{ids:x?}");
        }
    }
    assert_eq!(
        load("router-udp.toml").node_identity(),
        0x103f_fedb_72b6_6538
    );
    // A configured identity wins.
    let c = Config::from_toml(&pre("[management]\nidentity = 42")).unwrap();
    assert_eq!(c.node_identity(), 42);
    // The description: configured, else the router's name.
    let c = Config::from_toml(&pre("[management]\ndescription = \"Rack 4, ☃\"")).unwrap();
    assert_eq!(c.node_description(), "Rack 4, ☃");
}

// ---------------------------------------------------------------- reload

#[test]
fn reload_nothing_changed() {
    let c = load("router-udp.toml");
    let plan = c.diff_for_reload(&c.clone()).unwrap();
    assert!(plan.is_empty());
    assert_eq!(plan, Default::default());
    // The same configuration written differently is no change either.
    let again = Config::from_toml(&c.to_toml()).unwrap();
    assert!(c.diff_for_reload(&again).unwrap().is_empty());
}

#[test]
fn reload_live_changes() {
    let old = load("router-udp.toml");
    let mut new = old.clone();
    new.timers.hold_ms = 120_000;
    new.timers.sweep_ms = 7000;
    new.limits.max_lrt = 100;
    new.rates.errors_global = 50;
    new.rates.punt.request = rrp::PuntBudget::new(2000, 64);
    new.log.level = LogLevel::Debug;
    new.hrs[0].statics.push(StaticNode {
        groups: Vec::new(),
        address: Address(0x0111),
        native: NativeAddr::udp("127.0.0.1:35102".parse().unwrap()),
        name: None,
        capabilities: vec![],
    });
    new.hrs[0].statics[0].name = Some(b"renamed".to_vec());
    new.hrs[1].statics.push(StaticNode {
        groups: Vec::new(),
        address: Address(0x0112),
        native: NativeAddr::udp("[::1]:35203".parse().unwrap()),
        name: None,
        capabilities: vec![],
    });
    let plan = old.diff_for_reload(&new).unwrap();
    assert_eq!(plan.timers, Some(new.timers));
    assert_eq!(plan.limits, Some(new.limits));
    assert_eq!(plan.rates, Some(new.rates));
    assert_eq!(plan.log, Some(new.log));
    assert_eq!(
        plan.statics,
        vec![
            (PortId(0), new.hrs[0].statics.clone()),
            (PortId(1), new.hrs[1].statics.clone())
        ]
    );
    assert_eq!(
        plan.changes,
        [
            "timers.sweep_ms: 5000 -> 7000",
            "timers.hold_ms: 90000 -> 120000",
            "limits.max_lrt: 4096 -> 100",
            "rates.errors_global: 200 -> 50",
            "rates.punt.request: { per_s = 10000, burst = 256 } -> { per_s = 2000, burst = 64 }",
            "log.level: \"info\" -> \"debug\"",
            "hr[0].static: added 0x0111; changed 0x0110",
            "hr[1].static: added 0x0112",
        ]
    );

    // Only what changed is in the plan.
    let mut t = old.clone();
    t.hrs[0].statics.clear();
    let plan = old.diff_for_reload(&t).unwrap();
    assert_eq!(plan.timers, None);
    assert_eq!(plan.log, None);
    assert_eq!(plan.statics, vec![(PortId(0), vec![])]);
    assert_eq!(plan.changes, ["hr[0].static: removed 0x0110"]);
}

#[test]
fn reload_refuses_what_cannot_change_live() {
    let old = load("router-udp.toml");
    let refused = |f: &dyn Fn(&mut Config)| {
        let mut new = old.clone();
        f(&mut new);
        old.diff_for_reload(&new).unwrap_err()
    };
    let msg = |k: &str| format!("{k}: cannot change while running; restart mwrouterd");

    assert_eq!(
        refused(&|c| c.udp_port_mut(0).bind = "127.0.0.1:35109".parse().unwrap()),
        [msg("hr[0].port.bind")]
    );
    assert_eq!(
        refused(&|c| c.udp_port_mut(1).members.clear()),
        [msg("hr[1].port.members")]
    );
    assert_eq!(refused(&|c| c.hrs[0].mtu = 1400), [msg("hr[0].mtu")]);
    assert_eq!(
        refused(&|c| c.hrs[1].address = Address(0x0109)),
        [msg("hr[1].address")]
    );
    assert_eq!(refused(&|c| c.workers.count = 2), [msg("workers.count")]);
    assert_eq!(refused(&|c| c.router.k = 2), [msg("router.k")]);
    assert_eq!(
        refused(&|c| c.admin.socket = "/tmp/x.sock".into()),
        [msg("admin.socket")]
    );
    assert_eq!(
        refused(&|c| c.dpdk = Some(DpdkSection {
            eal_args: vec!["--no-huge".into()]
        })),
        [msg("dpdk.eal_args")]
    );
    // Backend change: every key of the port that differs.
    let r = refused(&|c| c.hrs[1].port = PortConfig::AfPacket(AfPacketPortConfig::new("eth1")));
    assert_eq!(r[0], msg("hr[1].port.backend"));
    assert!(r.contains(&msg("hr[1].port.bind")), "{r:?}");
    assert!(r.contains(&msg("hr[1].port.interface")), "{r:?}");
    // The HR set.
    let r = refused(&|c| {
        c.hrs.pop();
    });
    assert_eq!(
        r,
        ["hr: the set of HRs cannot change while running (2 -> 1 HRs); restart mwrouterd"]
    );
    // Live and refused together: refused, naming only the refused keys.
    let r = refused(&|c| {
        c.timers.hold_ms = 100_000;
        c.hrs[0].cost = 3;
        c.hrs[0].name = None;
    });
    assert_eq!(r, [msg("hr[0].name"), msg("hr[0].cost")]);
}

#[test]
fn reload_management_is_live() {
    let old = load("router-udp.toml");
    let mut new = old.clone();
    new.management.mkey = 0x1122_3344_5566_7788;
    new.management.manager = Some(Address(0x0120));
    let plan = old.diff_for_reload(&new).unwrap();
    assert_eq!(plan.management, Some(new.management.clone()));
    assert_eq!(plan.timers, None);
    assert_eq!(plan.log, None);
    assert_eq!(
        plan.changes,
        [
            "management.mkey: changed (the value is not shown)",
            "management.manager: (unset) -> 0x0120",
        ]
    );
    // Every key, both ways, one line each, nothing refused.
    let mut all = old.clone();
    all.management = ManagementSection {
        identity: Some(7),
        description: Some("box".into()),
        mkey: 1,
        mkey_file: None,
        protect: 1,
        lease_s: 60,
        manager: Some(Address(0x0120)),
        drop_threshold: 100,
        traps_per_s: 2,
        tracer: true,
        answers_per_source: 50,
        answers_global: 500,
        manager_priority: None,
        manager_hrs: Vec::new(),
        address_pools: Vec::new(),
        sm_key: 0,
        sm_key_file: None,
        manager_timers: mgmt::manager::ManagerTimers {
            poll_ms: 600_000,
            poll_misses: 1,
            sweep_ms: 10,
            discover_ms: 77,
            timeout_ms: 1,
            retries: 10,
            heavy_every: 1,
            max_subscriptions: 1_000,
            lease_default_s: 1,
            lease_max_s: 86_400,
            report_retry_ms: 60_000,
            report_retries: 0,
        },
        perf_manager: mgmt::perfmgr::PerfConfig {
            enabled: true,
            ..Default::default()
        },
        partitions_file: Some("/etc/mwrouter/partitions.conf".into()),
        static_partitions: Vec::new(),
    };
    let plan = old.diff_for_reload(&all).unwrap();
    assert_eq!(plan.management, Some(all.management.clone()));
    assert_eq!(
        plan.changes,
        [
            "management.mkey: changed (the value is not shown)",
            "management.protect: 0 -> 1",
            "management.lease_s: 0 -> 60",
            "management.drop_threshold: 0 -> 100",
            "management.traps_per_s: 10 -> 2",
            "management.answers_per_source: 1000 -> 50",
            "management.answers_global: 4000 -> 500",
            "management.manager_timers: { poll_ms = 1000, poll_misses = 3, sweep_ms = 1000, discover_ms = 200, timeout_ms = 100, retries = 2, heavy_every = 10, max_subscriptions = 16, lease_default_s = 60, lease_max_s = 3600, report_retry_ms = 500, report_retries = 3 } -> { poll_ms = 600000, poll_misses = 1, sweep_ms = 10, discover_ms = 77, timeout_ms = 1, retries = 10, heavy_every = 1, max_subscriptions = 1000, lease_default_s = 1, lease_max_s = 86400, report_retry_ms = 60000, report_retries = 0 }",
            "management.perf_manager: { enabled = false, interval_ms = 10000, outstanding = 16, timeout_ms = 200, retries = 1, forget_sweeps = 30 } -> { enabled = true, interval_ms = 10000, outstanding = 16, timeout_ms = 200, retries = 1, forget_sweeps = 30 }",
            "management.identity: (unset) -> \"0x0000000000000007\"",
            "management.description: (unset) -> \"box\"",
            "management.manager: (unset) -> 0x0120",
            "management.partitions_file: (unset) -> \"/etc/mwrouter/partitions.conf\"",
        ]
    );
    let back = all.diff_for_reload(&old).unwrap();
    assert_eq!(back.management, Some(old.management.clone()));
    assert_eq!(back.changes.len(), 13, "{:?}", back.changes);
    // With a change that is refused, the whole reload is.
    let mut r = new.clone();
    r.workers.count = 2;
    assert_eq!(
        old.diff_for_reload(&r).unwrap_err(),
        ["workers.count: cannot change while running; restart mwrouterd"]
    );
    // The same key again: no change.
    assert!(new.diff_for_reload(&new.clone()).unwrap().is_empty());
}

#[test]
fn reload_dpdk_eal_args() {
    let old = load("router-dpdk.toml");
    let mut new = old.clone();
    new.dpdk
        .as_mut()
        .unwrap()
        .eal_args
        .push("--in-memory".into());
    new.timers.fib_ms = 10;
    assert_eq!(
        old.diff_for_reload(&new).unwrap_err(),
        ["dpdk.eal_args: cannot change while running; restart mwrouterd"]
    );
}

trait UdpMut {
    fn udp_port_mut(&mut self, i: usize) -> &mut UdpPortConfig;
}

impl UdpMut for Config {
    fn udp_port_mut(&mut self, i: usize) -> &mut UdpPortConfig {
        match &mut self.hrs[i].port {
            PortConfig::Udp(u) => u,
            _ => panic!("not udp"),
        }
    }
}

// ---------------------------------------------------------------- authentication

const SECRET1: &str = "00112233445566778899aabbccddeeff";
const SECRET2: &str = "ffeeddccbbaa99887766554433221100";

/// BASE with `[hr.auth]` on the second HR.
fn keyed(auth: &str) -> String {
    post(&format!("\n[hr.auth]\n{auth}"))
}

#[test]
fn auth_keys_load_round_trip_and_are_redacted() {
    let c = Config::from_toml(&keyed(&format!(
        "send_key = 2\nkeys = [{{ id = 1, secret = \"{SECRET1}\" }}, {{ id = 2, secret = \"0x{SECRET2}\" }}]"
    )))
    .unwrap();
    let a = c.hrs[1].auth.as_ref().unwrap();
    assert_eq!(a.send_key, 2);
    assert!(!a.accept_unsigned);
    assert_eq!(a.keys[1].secret[0], 0xff);
    assert_eq!(c.hrs[0].auth, None);
    round_trip(&c);
    assert!(
        c.to_toml().contains(SECRET2),
        "the file form holds the keys"
    );
    let r = c.to_toml_redacted();
    assert!(!r.contains(SECRET1) && !r.contains(SECRET2), "{r}");
    assert!(r.contains("send_key = 2"), "{r}");
    assert!(!format!("{c:?}").contains("ffeedd"), "Debug hides secrets");
    // The engine gets them.
    let rc = c.router_config(1);
    assert_eq!(rc.hrs[rrp::PortId(1)].auth.as_ref().unwrap().keys.len(), 2);
}

#[test]
fn auth_errors_name_the_key_and_never_the_secret() {
    let e = check(
        &keyed("send_key = 1\nkeys = [{ id = 1, secret = \"0011zz\" }]"),
        "hr[1].auth.keys[0].secret",
        "hex",
    );
    assert!(!e.to_string().contains("0011zz"), "{e}");
    check(
        &keyed("send_key = 1\nkeys = [{ id = 1, secret = \"0011\" }]"),
        "hr[1].auth.keys[0].secret",
        "at least 16 bytes",
    );
    check(
        &keyed(&format!(
            "send_key = 3\nkeys = [{{ id = 1, secret = \"{SECRET1}\" }}]"
        )),
        "hr[1].auth.send_key",
        "names no key",
    );
    check(
        &keyed(&format!(
            "send_key = 1\nkeys = [{{ id = 1, secret = \"{SECRET1}\" }}, {{ id = 1, secret = \"{SECRET2}\" }}]"
        )),
        "hr[1].auth.keys[1].id",
        "two keys",
    );
    check(
        &keyed("send_key = 1\nkeys = []"),
        "hr[1].auth.keys",
        "1 to 4 keys",
    );
    // A syntax error on a line with a secret does not quote the line.
    let text = keyed(&format!(
        "send_key = 1\nkeys = [{{ id = 1, secret = \"{SECRET1}\" }}"
    ));
    let e = err(&text);
    assert!(!e.to_string().contains(SECRET1), "{e}");
}

#[test]
fn auth_changes_apply_on_reload_without_showing_secrets() {
    let one = Config::from_toml(&keyed(&format!(
        "send_key = 1\nkeys = [{{ id = 1, secret = \"{SECRET1}\" }}]"
    )))
    .unwrap();
    let two = Config::from_toml(&keyed(&format!(
        "send_key = 2\naccept_unsigned = true\nkeys = [{{ id = 1, secret = \"{SECRET1}\" }}, {{ id = 2, secret = \"{SECRET2}\" }}]"
    )))
    .unwrap();
    let plan = one.diff_for_reload(&two).unwrap();
    assert_eq!(plan.auth.len(), 1);
    assert_eq!(plan.auth[0].0, rrp::PortId(1));
    let text = plan.changes.join("\n");
    assert!(
        text.contains("hr[1].auth.keys: IDs 1 -> 1, 2 (the secrets are not shown)"),
        "{text}"
    );
    assert!(text.contains("hr[1].auth.send_key: 1 -> 2"), "{text}");
    assert!(
        text.contains("hr[1].auth.accept_unsigned: false -> true"),
        "{text}"
    );
    assert!(!text.contains(SECRET2), "{text}");
    // Keys added to an HR that had none, and taken away: live too.
    let none = Config::from_toml(BASE).unwrap();
    let plan = none.diff_for_reload(&one).unwrap();
    assert_eq!(plan.auth, vec![(rrp::PortId(1), one.hrs[1].auth.clone())]);
    let plan = one.diff_for_reload(&none).unwrap();
    assert_eq!(plan.auth, vec![(rrp::PortId(1), None)]);
}

// ---------------------------------------------------------------- keys in files

/// Another M_Key, for a rotation.
const MKEY2: u64 = 0x0bad_cafe_1234_5678;

/// A key file `name` in `dir` holding `text`, with permissions `mode`.
fn key_file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

/// `[management]` with `mkey_file` and `sm_key_file`, and on the second HR
/// key 1 inline and key 2 in `secret` (key 2 signs).
fn with_key_files(mkey: &Path, sm_key: &Path, secret: &Path) -> String {
    format!(
        "[management]\nmkey_file = \"{}\"\nsm_key_file = \"{}\"\n\n{}",
        mkey.display(),
        sm_key.display(),
        keyed(&format!(
            "send_key = 2\nkeys = [{{ id = 1, secret = \"{SECRET1}\" }}, {{ id = 2, secret_file = \"{}\" }}]",
            secret.display()
        ))
    )
}

/// The three key files of [`with_key_files`], mode 0600: the M_Key, SM key
/// 4660 in decimal, key 2's secret `SECRET2`.
fn three_key_files(dir: &Path) -> [PathBuf; 3] {
    [
        key_file(dir, "mkey", &format!("0x{MKEY:016x}\n"), 0o600),
        key_file(dir, "sm.key", "4660", 0o400),
        key_file(dir, "san-b.key", &format!("{SECRET2}\r\n"), 0o600),
    ]
}

#[test]
fn key_files_load_round_trip_and_keep_the_secrets_out_of_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let [mkey, sm, san] = three_key_files(dir.path());
    let c = Config::from_toml(&with_key_files(&mkey, &sm, &san)).unwrap();
    assert_eq!(c.management.mkey, MKEY);
    assert_eq!(c.management.mkey_file.as_deref(), Some(mkey.as_path()));
    assert_eq!(c.management.sm_key, 4660);
    assert_eq!(c.management.sm_key_file.as_deref(), Some(sm.as_path()));
    let a = c.hrs[1].auth.as_ref().unwrap();
    assert_eq!(a.keys[1].secret[..2], [0xff, 0xee]);
    assert_eq!(a.keys[1].secret.len(), 16);
    assert_eq!(c.hrs[1].key_files.len(), 1);
    assert_eq!(c.hrs[1].key_files[&2], san);
    assert!(c.hrs[0].key_files.is_empty());
    // The engine and the agent get the secrets.
    let rc = c.router_config(1);
    let keys = &rc.hrs[PortId(1)].auth.as_ref().unwrap().keys;
    assert_eq!(keys[1].secret, a.keys[1].secret);

    // The emitted text names the files, never what they hold, and loads
    // again to the same configuration.
    let t = c.to_toml();
    assert!(
        t.contains(&format!("mkey_file = \"{}\"", mkey.display())),
        "{t}"
    );
    assert!(
        t.contains(&format!("sm_key_file = \"{}\"", sm.display())),
        "{t}"
    );
    assert!(
        t.contains(&format!(
            "keys = [{{ id = 1, secret = \"{SECRET1}\" }}, {{ id = 2, secret_file = \"{}\" }}]",
            san.display()
        )),
        "{t}"
    );
    assert!(!t.lines().any(|l| l.starts_with("mkey =")), "{t}");
    assert!(!t.lines().any(|l| l.starts_with("sm_key =")), "{t}");
    assert!(!t.contains(SECRET2), "{t}");
    no_mkey(&t);
    round_trip(&c);

    // Redacted: no secret at all; the files' names stay.
    let r = c.to_toml_redacted();
    no_mkey(&r);
    assert!(!r.contains(SECRET1) && !r.contains(SECRET2), "{r}");
    assert!(r.contains("mkey_file = "), "{r}");
    assert!(r.contains("# management.mkey: set"), "{r}");
    // Debug neither.
    let d = format!("{c:?}");
    no_mkey(&d);
    assert!(!d.contains("ffeedd") && !d.contains("ff, ee"), "{d}");
    assert!(d.contains("mkey_file: Some("), "{d}");
}

#[test]
fn key_files_are_read_through_the_reader_given() {
    let text = with_key_files(
        Path::new("/k/mkey"),
        Path::new("/k/sm"),
        Path::new("/k/san"),
    );
    let files = |p: &Path| -> Result<String, String> {
        Ok(match p.to_str().unwrap() {
            "/k/mkey" => format!("{MKEY}\n"),
            "/k/sm" => "0x01".into(),
            "/k/san" => SECRET2.into(),
            other => panic!("{other} read"),
        })
    };
    let c = Config::from_toml_with(&text, &files).unwrap();
    assert_eq!((c.management.mkey, c.management.sm_key), (MKEY, 1));
    assert_eq!(Config::from_toml_with(&c.to_toml(), &files), Ok(c));
    // The daemon's reader finds no such file.
    check(&text, "management.mkey_file", "/k/mkey: cannot read");
}

#[test]
fn key_files_refused_name_the_key_and_the_file_never_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let [mkey, sm, san] = three_key_files(dir.path());
    let text = with_key_files(&mkey, &sm, &san);
    let mkey_line = line_of(&text, "mkey_file");
    let san_line = line_of(&text, "secret_file");
    let set_mode = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };

    // Readable or writable by group or others, the M_Key's file or a SAN
    // key's; mode 0400 and 0700 are the owner's only.
    for mode in [
        0o644,
        0o640,
        0o604,
        0o620,
        0o602,
        0o610,
        0o660,
        0o4600 | 0o020,
    ] {
        set_mode(&mkey, mode);
        let e = check(
            &text,
            "management.mkey_file",
            "readable or writable by group or others",
        );
        assert!(e.why.contains(&mkey.display().to_string()), "{e}");
        assert!(e.why.contains(&format!("mode {:04o}", mode)), "{e}");
        assert_eq!(e.location.map(|l| l.0), Some(mkey_line), "{e}");
        no_mkey(&e.to_string());
    }
    for mode in [0o400, 0o700] {
        set_mode(&mkey, mode);
        assert_eq!(Config::from_toml(&text).unwrap().management.mkey, MKEY);
    }
    set_mode(&san, 0o640);
    let e = check(&text, "hr[1].auth.keys[1].secret_file", "group or others");
    assert!(e.why.contains(&san.display().to_string()), "{e}");
    assert_eq!(e.location.map(|l| l.0), Some(san_line), "{e}");
    // check_toml lists every refused file.
    set_mode(&mkey, 0o644);
    let errs = Config::check_toml(&text).unwrap_err();
    let keys: Vec<&str> = errs.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        ["management.mkey_file", "hr[1].auth.keys[1].secret_file"]
    );
    set_mode(&mkey, 0o600);
    set_mode(&san, 0o600);
    Config::from_toml(&text).unwrap();

    // Not a regular file, missing, unreadable, relative.
    let with_mkey_file = |path: &str| text.replace(&mkey.display().to_string(), path);
    check(
        &with_mkey_file(&dir.path().display().to_string()),
        "management.mkey_file",
        "not a regular file",
    );
    check(
        &with_mkey_file("/dev/null"),
        "management.mkey_file",
        "/dev/null: not a regular file",
    );
    let missing = dir.path().join("missing.key");
    let e = check(
        &with_mkey_file(&missing.display().to_string()),
        "management.mkey_file",
        "cannot read",
    );
    assert!(e.why.starts_with(&missing.display().to_string()), "{e}");
    check(
        &with_mkey_file("keys/mkey"),
        "management.mkey_file",
        "keys/mkey: not an absolute path",
    );
    if !testkit::is_root() {
        set_mode(&mkey, 0o000);
        check(&text, "management.mkey_file", "cannot read");
        set_mode(&mkey, 0o600);
    }

    // Malformed: the errors say what is wrong, never what the file holds.
    let bad_mkey = [
        format!("0x{MKEY:016x}zz"),
        format!("0x{MKEY:016x}0"),
        format!("0x{MKEY:016x}\n\n"),
        format!(" 0x{MKEY:016x}"),
        format!("\"0x{MKEY:016x}\""),
        format!("mkey = \"0x{MKEY:016x}\""),
        String::new(),
    ];
    for b in &bad_mkey {
        std::fs::write(&mkey, b).unwrap();
        let e = err(&text);
        assert_eq!(e.key, "management.mkey_file", "{b:?}: {e}");
        assert!(e.why.contains(&mkey.display().to_string()), "{e}");
        no_mkey(&e.to_string());
        no_mkey(&format!("{e:?}"));
    }
    std::fs::write(&mkey, format!("0x{MKEY:016x}zz")).unwrap();
    check(&text, "management.mkey_file", "holds no 64-bit value");
    std::fs::write(&mkey, [0xff, 0xfe, b'0']).unwrap();
    check(&text, "management.mkey_file", "not UTF-8");
    std::fs::write(&mkey, "0".repeat(5000)).unwrap();
    check(&text, "management.mkey_file", "at most 4096");
    std::fs::write(&mkey, format!("0x{MKEY:016x}")).unwrap();

    std::fs::write(&san, format!("{SECRET2}zz")).unwrap();
    let e = check(&text, "hr[1].auth.keys[1].secret_file", "hex digits");
    assert!(!e.to_string().contains(SECRET2), "{e}");
    std::fs::write(&san, "0011\n").unwrap();
    check(
        &text,
        "hr[1].auth.keys[1].secret_file",
        "fewer than 16 bytes",
    );
    std::fs::write(&san, "").unwrap();
    check(
        &text,
        "hr[1].auth.keys[1].secret_file",
        "fewer than 16 bytes",
    );
    std::fs::write(&san, SECRET2).unwrap();

    // One of inline and file per secret.
    check(
        &text.replace("mkey_file", "mkey = 1\nmkey_file"),
        "management.mkey_file",
        "give mkey or mkey_file, not both",
    );
    check(
        &text.replace("sm_key_file", "sm_key = \"0x01\"\nsm_key_file"),
        "management.sm_key_file",
        "give sm_key or sm_key_file, not both",
    );
    check(
        &text.replace(
            "id = 2, secret_file",
            &format!("id = 2, secret = \"{SECRET1}\", secret_file"),
        ),
        "hr[1].auth.keys[1].secret_file",
        "give secret or secret_file, not both",
    );
    let e = check(
        &text.replace(&format!("id = 1, secret = \"{SECRET1}\""), "id = 1"),
        "hr[1].auth.keys[0].secret",
        "missing",
    );
    assert!(e.why.contains("secret_file"), "{e}");
}

#[test]
fn a_key_is_rotated_by_writing_its_file_and_reloading() {
    let dir = tempfile::tempdir().unwrap();
    let [mkey, sm, san] = three_key_files(dir.path());
    let text = with_key_files(&mkey, &sm, &san);
    let running = Config::from_toml(&text).unwrap();
    // The same files: nothing changes.
    let plan = running
        .diff_for_reload(&Config::from_toml(&text).unwrap())
        .unwrap();
    assert!(plan.is_empty(), "{plan:?}");

    // New keys in the same files, the same configuration text.
    std::fs::write(&mkey, format!("0x{MKEY2:016x}\n")).unwrap();
    std::fs::write(&san, format!("{SECRET1}\n")).unwrap();
    let new = Config::from_toml(&text).unwrap();
    assert_eq!(new.to_toml(), running.to_toml(), "the text names the files");
    let plan = running.diff_for_reload(&new).unwrap();
    assert_eq!(
        plan.changes,
        [
            format!(
                "management.mkey_file: {} holds a new key (the value is not shown)",
                mkey.display()
            ),
            format!(
                "hr[1].auth.keys[1].secret_file: {} holds a new key (the value is not shown)",
                san.display()
            ),
        ]
    );
    let m = plan
        .management
        .as_ref()
        .expect("the agent gets the new M_Key");
    assert_eq!(m.mkey, MKEY2);
    assert_eq!(plan.auth, vec![(PortId(1), new.hrs[1].auth.clone())]);
    assert_eq!(
        plan.auth[0].1.as_ref().unwrap().keys[1].secret,
        new.hrs[1].auth.as_ref().unwrap().keys[0].secret
    );
    let shown = format!("{}\n{plan:?}", plan.changes.join("\n"));
    no_mkey(&shown);
    assert!(!shown.contains(&format!("{MKEY2:x}")), "{shown}");
    assert!(
        !shown.contains(SECRET1) && !shown.contains(SECRET2),
        "{shown}"
    );

    // From the key in the text to the same key in a file: the text changes.
    let inline = Config::from_toml(&text.replace(
        &format!("mkey_file = \"{}\"", mkey.display()),
        &format!("mkey = \"0x{MKEY2:016x}\""),
    ))
    .unwrap();
    let plan = inline.diff_for_reload(&new).unwrap();
    assert_eq!(
        plan.changes,
        [
            "management.mkey: changed (the value is not shown)".to_string(),
            format!("management.mkey_file: (unset) -> \"{}\"", mkey.display()),
        ]
    );

    // A rotation into a file the daemon refuses is refused whole.
    std::fs::set_permissions(&san, std::fs::Permissions::from_mode(0o644)).unwrap();
    check(&text, "hr[1].auth.keys[1].secret_file", "group or others");
}

#[test]
fn key_files_of_a_configuration_built_in_code() {
    let mut c = Config::from_toml(&keyed(&format!(
        "send_key = 1\nkeys = [{{ id = 1, secret = \"{SECRET1}\" }}]"
    )))
    .unwrap();
    c.hrs[1].key_files.insert(7, PathBuf::from("/k/7"));
    let errs = c.validate().unwrap_err();
    assert_eq!(errs[0].key, "hr[1].auth", "{errs:?}");
    assert!(errs[0].why.contains("key ID 7"), "{errs:?}");
    c.hrs[1].key_files.clear();
    c.hrs[1].key_files.insert(1, PathBuf::from("k/1"));
    c.management.mkey_file = Some(PathBuf::from("mkey"));
    let errs = c.validate().unwrap_err();
    let keys: Vec<&str> = errs.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        ["management.mkey_file", "hr[1].auth.keys[0].secret_file"]
    );
    assert!(errs[0].why.contains("not an absolute path"), "{errs:?}");

    // Written as the files, read back through them.
    let dir = tempfile::tempdir().unwrap();
    let mkey = key_file(dir.path(), "m", &MKEY.to_string(), 0o600);
    let san = key_file(dir.path(), "s", SECRET1, 0o600);
    c.management.mkey = MKEY;
    c.management.mkey_file = Some(mkey);
    c.hrs[1].key_files.insert(1, san);
    assert_eq!(c.validate(), Ok(()));
    no_mkey(&c.to_toml());
    round_trip(&c);
}

fn static_node(a: u16, port: u16) -> StaticNode {
    StaticNode {
        groups: Vec::new(),
        address: Address(a),
        native: NativeAddr::udp(format!("127.0.0.1:{port}").parse().unwrap()),
        name: None,
        capabilities: vec![],
    }
}

/// The plan of a reload: what changes live, what needs a restart, which
/// run-time changes the new file drops (docs/daemon.md "Changing the
/// configuration safely").
#[test]
fn reload_plan_live_restart_and_dropped() {
    let applied = load("router-udp.toml");
    // Nothing changed, nothing at run time: an empty plan.
    let p = control::config::reload_plan(&applied, &applied, &applied);
    assert!(p.is_empty() && p.restart.is_empty() && p.dropped.is_empty());
    assert!(p.refusal(false).is_empty());

    // A route added at run time that the file does not have is dropped,
    // and refused unless forced; the plan's static entries undo it.
    let mut running = applied.clone();
    running.hrs[0].statics.push(static_node(0x0120, 35999));
    let p = control::config::reload_plan(&applied, &running, &applied);
    assert_eq!(
        p.dropped,
        ["hr[0].static 0x0120: added at run time; the new configuration drops it"]
    );
    assert_eq!(p.refusal(false).len(), 1);
    assert!(p.refusal(false)[0].contains("--force"));
    assert!(p.refusal(true).is_empty());
    assert_eq!(p.statics, [(PortId(0), applied.hrs[0].statics.clone())]);
    // The file that has it drops nothing and changes no entry.
    let p = control::config::reload_plan(&applied, &running, &running);
    assert!(p.dropped.is_empty() && p.statics.is_empty(), "{p:?}");
    assert_eq!(
        control::config::runtime_changes(&applied, &running),
        ["hr[0].static 0x0120: added"]
    );

    // A route removed at run time that the file still has comes back.
    let mut removed = applied.clone();
    let gone = removed.hrs[0].statics.remove(0);
    let p = control::config::reload_plan(&applied, &removed, &applied);
    assert_eq!(
        p.dropped,
        [format!(
            "hr[0].static {}: removed at run time; the new configuration adds it back",
            gone.address
        )]
    );

    // A live change and one that needs a restart: refused, forced or not.
    let mut new = applied.clone();
    new.timers.hold_ms = 120_000;
    new.hrs[0].mtu = 1400;
    let p = control::config::reload_plan(&applied, &applied, &new);
    assert!(
        p.restart.iter().any(|r| r.starts_with("hr[0].mtu:")),
        "{p:?}"
    );
    assert!(!p.refusal(true).is_empty());
}

#[test]
fn config_history_is_bounded() {
    let mut c = load("router-udp.toml");
    assert_eq!(
        c.admin.config_history,
        control::config::DEFAULT_CONFIG_HISTORY
    );
    c.admin.config_history = 0;
    let errs = Config::check_toml(&c.to_toml()).unwrap_err();
    assert!(
        errs.iter()
            .any(|e| e.to_string().contains("admin.config_history")),
        "{errs:?}"
    );
    c.admin.config_history = 3;
    let back = Config::check_toml(&c.to_toml()).unwrap();
    assert_eq!(back.admin.config_history, 3);
}

#[test]
fn partitions_file_is_an_absolute_file_name_and_round_trips() {
    let mut c = load("router-udp.toml");
    for (bad, why) in [
        ("partitions.conf", "not an absolute path"),
        ("etc/mwrouter/partitions.conf", "not an absolute path"),
        ("/etc/mwrouter/", "must name a file"),
    ] {
        c.management.partitions_file = Some(bad.into());
        let errs = Config::check_toml(&c.to_toml()).unwrap_err();
        assert!(
            errs.iter().any(|e| {
                let e = e.to_string();
                e.contains("management.partitions_file") && e.contains(why)
            }),
            "{bad}: {errs:?}"
        );
    }
    c.management.partitions_file = Some("/etc/mwrouter/partitions.conf".into());
    let text = c.to_toml();
    assert!(
        text.contains("partitions_file = \"/etc/mwrouter/partitions.conf\""),
        "{text}"
    );
    let back = Config::check_toml(&text).unwrap();
    assert_eq!(
        back.management.partitions_file,
        c.management.partitions_file
    );
    // Not a secret: no file is read to load the configuration (the path
    // does not exist), and it is written as it is.
    assert_eq!(back, c);
    c.management.partitions_file = None;
    assert!(!c.to_toml().contains("partitions_file"));
}

#[test]
fn history_file_names_a_file_and_round_trips() {
    let mut c = load("router-udp.toml");
    c.admin.history_file = Some("/var/lib/mwrouter/".into());
    let errs = Config::check_toml(&c.to_toml()).unwrap_err();
    assert!(
        errs.iter()
            .any(|e| e.to_string().contains("admin.history_file")),
        "{errs:?}"
    );
    c.admin.history_file = Some("/var/lib/mwrouter/config-history.json".into());
    let back = Config::check_toml(&c.to_toml()).unwrap();
    assert_eq!(back.admin.history_file, c.admin.history_file);
}

#[test]
fn the_drain_keys_reload_live_and_the_start_hold_needs_a_restart() {
    let old = load("router-udp.toml");
    let mut new = old.clone();
    new.drain.timeout_ms = 20_000;
    new.drain.on_sigterm = false;
    let plan = old.diff_for_reload(&new).unwrap();
    assert!(
        plan.changes
            .iter()
            .any(|c| c.starts_with("drain.timeout_ms: 10000 -> 20000")),
        "{plan:?}"
    );
    new.drain.start_max_ms = 0;
    let refused = old.diff_for_reload(&new).unwrap_err();
    assert!(
        refused.iter().any(|r| r.starts_with("drain.start_max_ms")),
        "{refused:?}"
    );
}

#[test]
fn static_partitions_are_checked_and_round_trip() {
    let base = load("router-udp.toml");
    let hr = base.hrs[0].address.0;
    let with = |entry: &str| {
        let text = base.to_toml().replacen(
            "[management]\n",
            &format!("[management]\nstatic_partitions = [{entry}]\n"),
            1,
        );
        Config::check_toml(&text)
    };
    let good = with(&format!(
        "{{ hr = {hr:#06x}, node = 0x0501, table = [\"0x0010=full\", \"0x7fff=limited\"] }}"
    ))
    .unwrap();
    let s = &good.management.static_partitions[0];
    assert_eq!(s.node.0, 0x0501);
    assert_eq!(s.table.len(), 2);
    assert_eq!(
        Config::check_toml(&good.to_toml()).unwrap(),
        good,
        "round trip"
    );
    for (entry, key, why) in [
        (
            format!("{{ hr = {hr:#06x}, node = 0x0501, table = [\"0x0010=sometimes\"] }}"),
            "table[0]",
            "full or limited",
        ),
        (
            format!("{{ hr = {hr:#06x}, node = 0x0501, table = [\"0x8000=full\"] }}"),
            "table[0]",
            "not a partition key",
        ),
        (
            format!(
                "{{ hr = {hr:#06x}, node = 0x0501, table = [\"0x10=full\", \"0x10=limited\"] }}"
            ),
            "table",
            "a key twice",
        ),
        (
            "{ hr = 0x0fff, node = 0x0501, table = [\"0x10=full\"] }".to_string(),
            "hr",
            "not an HR of this box",
        ),
        (
            format!("{{ hr = {hr:#06x}, node = 0x8001, table = [\"0x10=full\"] }}"),
            "node",
            "not a node address",
        ),
    ] {
        let errs = with(&entry).unwrap_err();
        assert!(
            errs.iter().any(|e| {
                let e = e.to_string();
                e.contains(&format!("management.static_partitions[0].{key}")) && e.contains(why)
            }),
            "{entry}: {errs:?}"
        );
    }
}
