//! The soak's mwrouterd configurations, as mwrouterd's own `Config`:
//!
//! - default mode: the router under test, three DPDK memif ports (servers):
//!   HRs 0x0101 and 0x0102 face mwgen as in `benches/e2e` Part 2 (static
//!   0x0130 and 0x0230), HR 0x0103 (SAN 0x0203) faces the buddy; and the
//!   buddy, HR 0x0301 on that SAN (memif client) and four HRs on null
//!   ports, each with a static node, that advertise SANs 0x0204-0x0207.
//!   Both with the lab's timers (`mwlab::plan::lab_timers`: a flap noticed
//!   within half a second, RTs back within one). Each reload toggles the
//!   router between two variants: a static entry on HR 0x0103 added, and
//!   `timers.refresh_ms` 3000 or 3300;
//! - lab mode: a router's configuration as mwlab wrote it, with or without
//!   one more static entry on its last HR.

use std::net::SocketAddr;
use std::path::Path;

use admin::LogLevel;
use control::config::{Config, IdleMode, WorkersSection};
use mwlab::plan::lab_timers;
use rrp::router::StaticNode;
use rrp::{Address, NativeAddr};

use crate::e2e::addr::*;
use crate::e2e::config::{self, dpdk_hr, static_node};
use crate::e2e::path_str;

/// The router's HR facing the buddy.
pub const HR_C: u16 = 0x0103;
/// Its SAN, shared with the buddy.
pub const SAN_C: u16 = 0x0203;
/// Its MAC.
pub const ROUTER_C_MAC: &str = "02:00:00:00:01:03";
/// The buddy's HR on SAN 0x0203.
pub const BUDDY_HR: u16 = 0x0301;
/// Its MAC.
pub const BUDDY_MAC: &str = "02:00:00:00:03:01";
/// The static entry the reloads add and remove on HR 0x0103's SAN.
pub const TOGGLED_NODE: u16 = 0x0331;
/// Its MAC.
pub const TOGGLED_MAC: &str = "02:00:00:00:03:31";
/// `timers.refresh_ms` of the toggled variant.
pub const TOGGLED_REFRESH_MS: u64 = 3300;
/// The buddy's HRs behind it: (HR, SAN, static node). HR 0xHH01 has MAC
/// 02:00:00:00:HH:01, its node 0xHH30 02:00:00:00:HH:30.
pub const BUDDY_FAR: [(u16, u16, u16); 4] = [
    (0x0401, 0x0204, 0x0430),
    (0x0501, 0x0205, 0x0530),
    (0x0601, 0x0206, 0x0630),
    (0x0701, 0x0207, 0x0730),
];
/// The native address of the static entry toggled in a lab router (a UDP
/// SAN: nothing listens there).
pub const LAB_TOGGLED_NATIVE: &str = "127.0.0.1:9";

/// A memif vdev `net_memif<n>` on the socket file `socket`, server or
/// client.
pub fn memif(n: u32, socket: &Path, server: bool) -> String {
    format!(
        "net_memif{n},role={},id=0,socket={},socket-abstract=no",
        if server { "server" } else { "client" },
        path_str(socket)
    )
}

/// Where the soak's memif sockets are: mwgen's A and B, and the buddy's C.
#[derive(Debug, Clone)]
pub struct Sockets {
    /// mwgen transmits, the router's port 0 receives.
    pub a: std::path::PathBuf,
    /// The router's port 1 transmits, mwgen receives.
    pub b: std::path::PathBuf,
    /// The router's port 2 and the buddy.
    pub c: std::path::PathBuf,
}

/// The router under test: EAL `eal` on the control core, one busy-polling
/// worker on `worker_core`, its other threads on `control_core`; `toggled`:
/// the variant with the static entry 0x0331 and `refresh_ms` 3300.
pub fn router(
    eal: &[String],
    worker_core: u32,
    control_core: u32,
    memifs: &Sockets,
    admin_socket: &Path,
    toggled: bool,
) -> Config {
    let toggled_static = toggled
        .then(|| static_node(TOGGLED_NODE, TOGGLED_MAC, &[]))
        .into_iter()
        .collect();
    let hrs = vec![
        dpdk_hr(
            HR_A,
            SAN_A,
            &memif(0, &memifs.a, true),
            ROUTER_A_MAC,
            vec![static_node(NODE_A, GEN_A_MAC, &[])],
        ),
        dpdk_hr(
            HR_B,
            SAN_B,
            &memif(1, &memifs.b, true),
            ROUTER_B_MAC,
            vec![static_node(NODE_B, GEN_B_MAC, &[])],
        ),
        dpdk_hr(
            HR_C,
            SAN_C,
            &memif(2, &memifs.c, true),
            ROUTER_C_MAC,
            toggled_static,
        ),
    ];
    let mut workers = config::busy_poll_workers(&[worker_core as usize]);
    workers.control_cores = Some(vec![control_core as usize]);
    let mut c = config::dpdk_router(
        "soak",
        config::eal_on(eal, worker_core),
        workers,
        admin_socket,
        LogLevel::Info,
        hrs,
    );
    c.timers = lab_timers();
    if toggled {
        c.timers.refresh_ms = TOGGLED_REFRESH_MS;
    }
    c
}

/// The buddy: without hugepages (`--no-huge -m 256`) on `lcore`, one
/// adaptive worker, HR 0x0301 on the router's SAN 0x0203 and the four far
/// HRs on null ports.
pub fn buddy(lcore: u32, memif_c: &Path, admin_socket: &Path) -> Config {
    let eal: Vec<String> = [
        "--no-huge",
        "-m",
        "256",
        "--no-shconf",
        "--no-pci",
        "--no-telemetry",
        "--log-level=warning",
    ]
    .map(String::from)
    .to_vec();
    let mut hrs = vec![dpdk_hr(
        BUDDY_HR,
        SAN_C,
        &memif(0, memif_c, false),
        BUDDY_MAC,
        Vec::new(),
    )];
    for (i, &(hr, san, node)) in BUDDY_FAR.iter().enumerate() {
        let h = hr >> 8;
        hrs.push(dpdk_hr(
            hr,
            san,
            &format!("net_null{i},no-rx=1"),
            &format!("02:00:00:00:{h:02x}:01"),
            vec![static_node(node, &format!("02:00:00:00:{h:02x}:30"), &[])],
        ));
    }
    let workers = WorkersSection {
        count: 1,
        idle: IdleMode::Adaptive,
        ..WorkersSection::default()
    };
    let mut c = config::dpdk_router(
        "buddy",
        config::eal_on(&eal, lcore),
        workers,
        admin_socket,
        LogLevel::Info,
        hrs,
    );
    c.timers = lab_timers();
    c
}

/// A lab router's configuration `base` with one more static entry, node
/// `node` at 127.0.0.1:9, on its last HR.
pub fn with_lab_static(base: &Config, node: u16) -> Config {
    let mut c = base.clone();
    if let Some(hr) = c.hrs.last_mut() {
        hr.statics.push(StaticNode {
            address: Address(node),
            native: NativeAddr::udp(
                LAB_TOGGLED_NATIVE
                    .parse::<SocketAddr>()
                    .expect("an endpoint"),
            ),
            name: None,
            capabilities: Vec::new(),
            groups: Vec::new(),
        });
    }
    c
}
