//! The lab's plan: from a topology file (the format mwsim reads,
//! `mwsim::topology`) to one mwrouterd configuration per router and one host
//! spec per node, wired one of two ways ([`Wiring`]):
//!
//! - **loopback UDP** (no privileges): a UDP SAN has no broadcast (docs/architecture.md
//!   "Route tables and RRP"), so each SAN is the set of its members' endpoints (127.0.0.1 and
//!   a port each), and every HR lists the others as `members`, where its
//!   sweeps and other packets "for every member" go;
//! - **network namespaces** (root): every router and host in its own
//!   namespace, each SAN a Linux bridge with a veth per member (an HR's is
//!   `hrN` in its router's namespace, a host's `eth0`), Ethernet frames on the
//!   AF_PACKET backend, MACs derived from the lab's run and the member's
//!   address ([`crate::netns`] builds and removes them).
//!
//! Level-A and Level-B hosts, which do not answer RRP#7, are static LRT
//! entries on every HR of their SAN (Part-2, "Node levels").

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use admin::LogLevel;
use control::config::{
    AddressPool, AfPacketPortConfig, Config, DpdkPortConfig, DpdkSection, HrSection, IdleMode,
    PortConfig, UdpPortConfig,
};
use mwsim::topology::{SanSpec, Topology};
use rrp::native::parse_mac;
use rrp::router::{StaticNode, Timers};
use rrp::{Address, NativeAddr};
use serde::{Deserialize, Serialize};

use crate::host::management::{HostManagement, identity_of};
use crate::host::{HostLink, HostSpec};

/// RRP timers of the lab: fast, so that a lab converges in about a second
/// and notices a dead router in under one (docs/configuration.md "[timers]");
/// the probe time is the daemon's default.
pub fn lab_timers() -> Timers {
    Timers {
        sweep_ms: 300,
        keepalive_ms: 150,
        keepalive_misses: 3,
        refresh_ms: 3000,
        hold_ms: 9000,
        advertise_ms: 50,
        fib_ms: 20,
        tombstone_ms: 1500,
        ..Timers::default()
    }
}

/// One router of the plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RouterPlan {
    /// Its name.
    pub name: String,
    /// Its configuration file.
    pub config: PathBuf,
    /// Its admin socket.
    pub socket: PathBuf,
    /// Its HRs: address and native address (a UDP endpoint or a MAC, as
    /// text), in port order.
    pub hrs: Vec<(u16, String)>,
    /// The SAN of each HR, by name.
    pub sans: Vec<String>,
    /// Its network namespace (netns wiring).
    #[serde(default)]
    pub netns: Option<String>,
}

/// One host of the plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostPlan {
    /// What the host process runs.
    pub spec: HostSpec,
    /// Its address in the topology: the lab's key for its native address
    /// (a host without an address, `auto_address`, starts with 0 in its
    /// spec and gets one from its SAN's manager).
    pub address: u16,
    /// Its SAN, by name.
    pub san: String,
    /// Where its spec is written.
    pub spec_file: PathBuf,
    /// Its network namespace (netns wiring).
    #[serde(default)]
    pub netns: Option<String>,
}

/// How the lab's SANs are made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wiring {
    /// Loopback UDP endpoints.
    Udp,
    /// Network namespaces, bridges and veths; `run` makes the names unique
    /// (at most 4 hex digits).
    Netns {
        /// The run's tag.
        run: String,
    },
}

/// The whole plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// The lab's directory (configurations, sockets, logs).
    pub dir: PathBuf,
    /// The topology.
    pub topology: Topology,
    /// Routers, in topology order.
    pub routers: Vec<RouterPlan>,
    /// Hosts, in topology order.
    pub hosts: Vec<HostPlan>,
    /// Every member: address -> (native address as text, owner name).
    pub endpoints: BTreeMap<u16, (String, String)>,
    /// The routers' RRP timers.
    pub timers: Timers,
    /// How the SANs are made.
    pub wiring: Wiring,
    /// The routers' port backend in a netns lab.
    #[serde(default)]
    pub backend: NetnsBackend,
    /// In-band management of the routers and hosts.
    #[serde(default)]
    pub management: LabManagement,
}

/// In-band management in a lab (docs/mwlab.md "Management"): every router
/// and host runs an agent; traps go to the manager host; every box has the
/// same management key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LabManagement {
    /// The M_Key of every router and host (0: none).
    pub mkey: u64,
    /// Its protect bits, 0-3.
    pub protect: u8,
    /// Its lease in seconds (0: never runs out).
    pub lease_s: u16,
    /// The host traps go to; none: the first host of the topology.
    pub manager: Option<String>,
    /// Routers and hosts whose path-tracer agent is off (docs/mwtrace.md).
    #[serde(default)]
    pub no_tracer: Vec<String>,
    /// Routers and hosts that run a SAN manager, with its priority
    /// (docs/manager.md): a router on each of its HRs.
    #[serde(default)]
    pub managers: Vec<(String, u8)>,
}

/// The routers' port backend in a netns lab.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetnsBackend {
    /// mwrouter's AF_PACKET backend.
    #[default]
    AfPacket,
    /// DPDK's af_packet vdev on the same interfaces (mwlab built with
    /// `--features dpdk`), EAL without hugepages, workers polling adaptively
    /// so that seven routers share two cores.
    Dpdk,
}

/// The MAC of member `address` in a netns lab tagged `run`: locally
/// administered, unicast, unique per run and address.
pub fn lab_mac(run: &str, address: u16) -> String {
    let r = u16::from_str_radix(run, 16).unwrap_or(0).to_be_bytes();
    let a = address.to_be_bytes();
    format!("02:4d:{:02x}:{:02x}:{:02x}:{:02x}", r[0], r[1], a[0], a[1])
}

/// The interface of HR `port` inside its router's namespace.
pub fn hr_iface(port: usize) -> String {
    format!("hr{port}")
}

/// The interface of a host inside its namespace.
pub const HOST_IFACE: &str = "eth0";

/// The largest MTU of a UDP port (its buffers, docs/configuration.md).
pub const UDP_MAX_MTU: u32 = 9216;

/// A SAN's MTU as the lab configures it: the topology's, capped at what a
/// UDP port carries (Appendix C's 16384-byte SANs run at 9216 in the lab;
/// 0, unlimited, stays).
pub fn lab_mtu(mtu: u32) -> u32 {
    if mtu == 0 { 0 } else { mtu.min(UDP_MAX_MTU) }
}

impl Plan {
    /// Plans `topo` in `dir`, wired as `wiring` says.
    pub fn new(topo: Topology, dir: &Path, timers: Timers, wiring: Wiring) -> Result<Plan, String> {
        topo.validate()?;
        let n = topo.routers.iter().map(|r| r.hrs.len()).sum::<usize>() + topo.hosts.len();
        let mut ports = match wiring {
            Wiring::Udp => ports::udp::free_loopback_ports(n)
                .map_err(|e| format!("cannot reserve {n} loopback UDP ports: {e}"))?,
            Wiring::Netns { .. } => Vec::new(),
        }
        .into_iter();
        let mut native = |address: u16| match &wiring {
            Wiring::Udp => {
                SocketAddr::from(([127, 0, 0, 1], ports.next().expect("one per member")))
                    .to_string()
            }
            Wiring::Netns { run } => lab_mac(run, address),
        };
        let ns = |name: &str| match &wiring {
            Wiring::Udp => None,
            Wiring::Netns { run } => Some(format!("mwlab-{run}-{name}")),
        };
        let mut endpoints = BTreeMap::new();
        let mut routers = Vec::new();
        for r in &topo.routers {
            let hrs: Vec<(u16, String)> = r
                .hrs
                .iter()
                .map(|h| (h.address, native(h.address)))
                .collect();
            for (a, e) in &hrs {
                endpoints.insert(*a, (e.clone(), r.name.clone()));
            }
            routers.push(RouterPlan {
                name: r.name.clone(),
                config: dir.join(format!("{}.toml", r.name)),
                socket: dir.join(format!("{}.sock", r.name)),
                hrs,
                sans: r.hrs.iter().map(|h| h.san.clone()).collect(),
                netns: ns(&r.name),
            });
        }
        let mut host_natives = Vec::new();
        for h in &topo.hosts {
            let e = native(h.address);
            endpoints.insert(h.address, (e.clone(), h.name.clone()));
            host_natives.push(e);
        }
        let hrs_of_san = |san: &str| -> Vec<(u16, rrp::NativeAddr)> {
            let mut v: Vec<(u16, rrp::NativeAddr)> = routers
                .iter()
                .flat_map(|r| r.sans.iter().zip(&r.hrs))
                .filter(|(s, _)| s.as_str() == san)
                .map(|(_, h)| (h.0, h.1.parse().expect("planned natives parse")))
                .collect();
            v.sort_by_key(|h| h.0);
            v
        };
        // Every member of each SAN other than a given host: where its group
        // packets and announcements go on UDP.
        let san_members = |san: &str, me: &str| -> Vec<rrp::NativeAddr> {
            if !matches!(wiring, Wiring::Udp) {
                return Vec::new();
            }
            let hrs = hrs_of_san(san).into_iter().map(|(_, n)| n);
            let others = topo
                .hosts
                .iter()
                .filter(|o| o.san == san && o.name != me)
                .filter_map(|o| endpoints.get(&o.address))
                .filter_map(|(e, _)| e.parse().ok());
            hrs.chain(others).collect()
        };
        let hosts = topo
            .hosts
            .iter()
            .zip(host_natives)
            .map(|(h, nat)| HostPlan {
                address: h.address,
                spec: HostSpec {
                    name: h.name.clone(),
                    address: if h.auto_address { 0 } else { h.address },
                    level: h.level.clone(),
                    link: match &wiring {
                        Wiring::Udp => HostLink::Udp {
                            bind: nat.parse().expect("an endpoint"),
                        },
                        Wiring::Netns { .. } => HostLink::AfPacket {
                            interface: HOST_IFACE.into(),
                        },
                    },
                    hrs: hrs_of_san(&h.san),
                    default_hr: h.hr,
                    control: dir.join(format!("{}.ctl", h.name)),
                    management: None,
                    members: san_members(&h.san, &h.name),
                    auth_key: topo
                        .sans
                        .iter()
                        .find(|s| s.name == h.san)
                        .and_then(|s| s.key.clone()),
                },
                san: h.san.clone(),
                spec_file: dir.join(format!("{}.host.json", h.name)),
                netns: ns(&h.name),
            })
            .collect();
        Ok(Plan {
            dir: dir.to_path_buf(),
            topology: topo,
            routers,
            hosts,
            endpoints,
            timers,
            wiring,
            backend: NetnsBackend::AfPacket,
            management: LabManagement::default(),
        }
        .with_management(LabManagement::default()))
    }

    /// The plan with management settings `m`: the hosts' specs and the
    /// routers' `[management]` follow them. Fails for a manager that is no
    /// host of the lab.
    pub fn set_management(&mut self, m: LabManagement) -> Result<(), String> {
        if let Some(name) = &m.manager
            && !self.hosts.iter().any(|h| &h.spec.name == name)
        {
            return Err(format!("--manager {name}: no host of that name in the lab"));
        }
        if m.protect > 3 {
            return Err(format!("--protect {}: 0 to 3", m.protect));
        }
        for (name, p) in &m.managers {
            let known = self.routers.iter().any(|r| &r.name == name)
                || self.hosts.iter().any(|h| &h.spec.name == name);
            if !known || *p > 15 {
                return Err(format!("--sm {name}={p}: a router or host, priority 0-15"));
            }
        }
        for name in &m.no_tracer {
            let known = self.routers.iter().any(|r| &r.name == name)
                || self.hosts.iter().any(|h| &h.spec.name == name);
            if !known {
                return Err(format!(
                    "--no-tracer {name}: no router or host of that name"
                ));
            }
        }
        self.apply_management(m);
        Ok(())
    }

    fn with_management(mut self, m: LabManagement) -> Plan {
        self.apply_management(m);
        self
    }

    fn apply_management(&mut self, m: LabManagement) {
        let manager = self.manager_address_of(&m);
        let sans = &self.topology.sans;
        let topo_hosts = &self.topology.hosts;
        for h in &mut self.hosts {
            let san = sans.iter().find(|x| x.name == h.san);
            let priority = m
                .managers
                .iter()
                .find(|(n, _)| *n == h.spec.name)
                .map(|(_, p)| *p)
                .or_else(|| {
                    topo_hosts
                        .iter()
                        .find(|t| t.name == h.spec.name)
                        .and_then(|t| t.manager_priority)
                });
            h.spec.management = Some(HostManagement {
                admin: self.dir.join(format!("{}.sock", h.spec.name)),
                identity: None,
                mkey: m.mkey,
                protect: m.protect,
                lease_s: m.lease_s,
                manager,
                san_id: san.map_or(0, |x| x.id),
                mtu: san.map_or(0, |x| lab_mtu(x.mtu)),
                tracer: !m.no_tracer.contains(&h.spec.name),
                manager_priority: priority,
                sm_key: 0,
                pool: san.and_then(|x| x.pool),
            });
        }
        self.management = m;
    }

    /// The address traps go to: the named host's, or the first host's.
    fn manager_address_of(&self, m: &LabManagement) -> Option<u16> {
        let host = match &m.manager {
            Some(name) => self.hosts.iter().find(|h| &h.spec.name == name),
            None => self.hosts.first(),
        };
        host.map(|h| h.spec.address).filter(|a| *a != 0)
    }

    /// The partitions file of the lab's SAN managers, from the topology's
    /// `[[partition]]`s (docs/partitions.md "The file"): the topology's
    /// model ([`Topology::partitions_model`]) with hosts by the node
    /// identity their agents report, as the file reads; none without
    /// partitions.
    pub fn partitions_file(&self) -> Option<String> {
        let identity = |t: &mwsim::topology::HostSpec| {
            self.hosts
                .iter()
                .find(|h| h.spec.name == t.name)
                .and_then(|h| h.spec.management.as_ref())
                .and_then(|m| m.identity)
                .unwrap_or_else(|| identity_of(&t.name, Address(t.address)))
        };
        let model = self.topology.partitions_model(identity)?;
        Some(format!(
            "# mwlab: the partitions of {}\n{}",
            self.dir.display(),
            model.to_text()
        ))
    }

    /// Where the lab writes [`Plan::partitions_file`].
    pub fn partitions_path(&self) -> PathBuf {
        self.dir.join("partitions.conf")
    }

    /// The host traps go to.
    pub fn manager(&self) -> Option<&HostPlan> {
        let a = self.manager_address_of(&self.management)?;
        self.hosts.iter().find(|h| h.spec.address == a)
    }

    /// The admin socket of the router or host named `name`.
    pub fn admin_socket(&self, name: &str) -> Option<&Path> {
        self.routers
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.socket.as_path())
            .or_else(|| {
                self.hosts
                    .iter()
                    .find(|h| h.spec.name == name)
                    .and_then(|h| h.spec.management.as_ref())
                    .map(|m| m.admin.as_path())
            })
    }

    /// The native addresses of every member of SAN `san` (HRs and hosts).
    pub fn members(&self, san: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .routers
            .iter()
            .flat_map(|r| r.sans.iter().zip(&r.hrs))
            .filter(|(s, _)| s.as_str() == san)
            .map(|(_, h)| h.1.clone())
            .chain(
                self.hosts
                    .iter()
                    .filter(|h| h.san == san)
                    .map(|h| self.endpoints[&h.address].0.clone()),
            )
            .collect();
        v.sort();
        v
    }

    /// Who owns native address `native` (as the routers print it): (owner
    /// name, MessageWay address).
    pub fn owner_of(&self, native: &str) -> Option<(&str, u16)> {
        self.endpoints
            .iter()
            .find(|(_, (x, _))| x == native)
            .map(|(a, (_, n))| (n.as_str(), *a))
    }

    /// Whether the routers use DPDK (a netns lab with [`NetnsBackend::Dpdk`]).
    pub fn dpdk_routers(&self) -> bool {
        matches!(self.wiring, Wiring::Netns { .. }) && self.backend == NetnsBackend::Dpdk
    }

    /// The priority of the SAN manager router `i` runs: `--sm`'s, else
    /// its topology's.
    pub fn router_manager(&self, i: usize) -> Option<u8> {
        let name = &self.routers[i].name;
        self.management
            .managers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
            .or(self.topology.routers[i].manager_priority)
    }

    /// The mwrouterd configuration of router `i`.
    pub fn daemon_config(&self, i: usize) -> Config {
        let r = &self.routers[i];
        let hrs = r
            .hrs
            .iter()
            .zip(&r.sans)
            .enumerate()
            .map(|(port, ((address, native), san))| self.daemon_hr(port, *address, native, san))
            .collect();
        let mut c = Config::new(&r.name, hrs);
        c.router.router_cost = self.topology.routers[i].cost;
        c.workers.count = 1;
        c.workers.idle = IdleMode::Adaptive;
        c.workers.idle_sleep_us = 2000;
        c.workers.spins = 16;
        c.timers = self.timers;
        c.admin.socket = r.socket.clone();
        c.admin.mode = 0o600;
        c.log.level = LogLevel::Info;
        let m = &mut c.management;
        m.mkey = self.management.mkey;
        m.protect = self.management.protect;
        m.lease_s = self.management.lease_s;
        m.tracer = !self.management.no_tracer.contains(&r.name);
        m.manager = self.manager_address_of(&self.management).map(Address);
        if let Some(priority) = self.router_manager(i) {
            m.manager_priority = Some(priority);
            if !self.topology.partitions.is_empty() {
                m.partitions_file = Some(self.partitions_path());
            }
            m.address_pools = r
                .hrs
                .iter()
                .zip(&r.sans)
                .filter_map(|((hr, _), san)| {
                    let [first, last] = self.san(san).pool?;
                    Some(AddressPool {
                        hr: Address(*hr),
                        first: Address(first),
                        last: Address(last),
                    })
                })
                .collect();
        }
        if self.dpdk_routers() {
            c.dpdk = Some(DpdkSection {
                eal_args: [
                    "--no-huge",
                    "-m",
                    "256",
                    "--no-pci",
                    "--no-shconf",
                    "--no-telemetry",
                    "--log-level=warning",
                ]
                .map(String::from)
                .to_vec(),
            });
        }
        c
    }

    /// The configuration file of router `i`: a comment naming the lab, then
    /// [`Plan::daemon_config`] as TOML.
    pub fn daemon_config_toml(&self, i: usize) -> String {
        format!(
            "# mwlab: router {} of {}\n\n{}",
            self.routers[i].name,
            self.dir.display(),
            self.daemon_config(i).to_toml()
        )
    }

    /// The topology's SAN named `name` (the plan was made from a validated
    /// topology: every HR's and host's SAN is one of it).
    fn san(&self, name: &str) -> &SanSpec {
        self.topology
            .sans
            .iter()
            .find(|x| x.name == name)
            .expect("validated")
    }

    /// The `[[hr]]` of a router's HR `address` on port `port`, with native
    /// address `native` on SAN `san`: its port as the wiring makes it, the
    /// SAN's key, and every Level-A and Level-B host of the SAN as a static
    /// entry.
    fn daemon_hr(&self, port: usize, address: u16, native: &str, san: &str) -> HrSection {
        let sp = self.san(san);
        let port = match self.wiring {
            Wiring::Udp => {
                let mut u = UdpPortConfig::new(native.parse().expect("a planned endpoint"));
                u.members = self
                    .members(san)
                    .iter()
                    .filter(|m| *m != native)
                    .map(|m| m.parse().expect("a planned endpoint"))
                    .collect();
                PortConfig::Udp(u)
            }
            Wiring::Netns { .. } if self.dpdk_routers() => {
                let mut d =
                    DpdkPortConfig::new(&format!("net_af_packet{port},iface={}", hr_iface(port)));
                d.mac = Some(parse_mac(native).expect("a planned MAC"));
                PortConfig::Dpdk(d)
            }
            Wiring::Netns { .. } => PortConfig::AfPacket(AfPacketPortConfig::new(&hr_iface(port))),
        };
        let link = port.backend().link_kind();
        let mut h = HrSection::new(address, sp.id, lab_mtu(sp.mtu), port);
        h.name = Some(san.to_string());
        h.cost = sp.cost;
        h.auth = sp
            .key
            .as_deref()
            .map(|k| crate::host::auth_config(k).expect("a key the topology validated"));
        h.statics = self
            .hosts
            .iter()
            .filter(|x| x.san == san && x.spec.level != "C" && x.spec.address != 0)
            .map(|x| StaticNode {
                address: Address(x.spec.address),
                native: NativeAddr::parse_on(link, &self.endpoints[&x.spec.address].0)
                    .expect("a planned native address"),
                name: Some(x.spec.name.clone().into_bytes()),
                capabilities: Vec::new(),
                groups: Vec::new(),
            })
            .collect();
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOPO: &str = include_str!("../../../examples/appendix-b.toml");

    #[test]
    fn management_settings_naming_no_one_are_refused() {
        let mut p = Plan::new(
            Topology::from_toml(TOPO).unwrap(),
            &std::env::temp_dir().join("mwlab-plan-test-mgmt"),
            lab_timers(),
            Wiring::Udp,
        )
        .unwrap();
        assert!(
            p.set_management(LabManagement {
                manager: Some("nobody".into()),
                ..LabManagement::default()
            })
            .is_err()
        );
        assert!(
            p.set_management(LabManagement {
                managers: vec![("ad".into(), 16)],
                ..LabManagement::default()
            })
            .is_err()
        );
        assert!(
            p.set_management(LabManagement {
                no_tracer: vec!["nobody".into()],
                ..LabManagement::default()
            })
            .is_err()
        );
        p.set_management(LabManagement {
            managers: vec![("ad".into(), 7), ("H0".into(), 3)],
            ..LabManagement::default()
        })
        .unwrap();
        assert!(p.daemon_config_toml(2).contains("manager_priority = 7"));
        assert_eq!(
            p.hosts[0]
                .spec
                .management
                .as_ref()
                .unwrap()
                .manager_priority,
            Some(3)
        );
    }

    #[test]
    fn a_topology_with_partitions_gives_its_managers_a_file_they_take() {
        let text = include_str!("../../../examples/appendix-b-partitions.toml");
        let mut p = Plan::new(
            Topology::from_toml(text).unwrap(),
            &std::env::temp_dir().join("mwlab-plan-partitions"),
            lab_timers(),
            Wiring::Udp,
        )
        .unwrap();
        p.set_management(LabManagement::default()).unwrap();
        let file = p.partitions_file().unwrap();
        let parts = mgmt::partition::parse(&file).unwrap();
        let a = parts
            .get(mgmt::partition::PartitionKey::new(0x10).unwrap())
            .unwrap();
        assert_eq!(a.members.len(), 3, "{file}");
        let h0 = identity_of("H0", Address(0x0100));
        let facts = mgmt::partition::NodeFacts {
            identity: h0,
            router: false,
            manager: false,
        };
        let t = parts.table_of(&facts);
        assert!(
            t.contains(&(a.key, mgmt::partition::Membership::Full)),
            "{t:?}"
        );
        assert!(
            p.daemon_config_toml(0)
                .contains(&p.partitions_path().display().to_string()),
            "a router with a manager reads the file"
        );
        let mut bad = Topology::from_toml(text).unwrap();
        bad.partitions[0].full.push("H99".into());
        assert!(bad.validate().unwrap_err().contains("no host H99"));
        bad.partitions[0].full.pop();
        bad.partitions[1].key = 0x10;
        assert!(bad.validate().unwrap_err().contains("used twice"));
    }

    #[test]
    fn appendix_b_plans_and_every_config_loads() {
        let dir = std::env::temp_dir().join("mwlab-plan-test");
        let p = Plan::new(
            Topology::from_toml(TOPO).unwrap(),
            &dir,
            lab_timers(),
            Wiring::Udp,
        )
        .unwrap();
        assert_eq!(p.routers.len(), 7);
        assert_eq!(p.hosts.len(), 10);
        assert_eq!(p.endpoints.len(), 14 + 10);
        // SAN D: five routers' HRs and its hosts.
        let d = p.members("D");
        assert!(d.len() >= 5);
        for i in 0..p.routers.len() {
            let text = p.daemon_config_toml(i);
            let cfg = control::config::Config::from_toml(&text)
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", p.routers[i].name));
            assert_eq!(cfg.hrs.len(), p.routers[i].hrs.len());
        }
        // A host knows the HRs of its SAN.
        let h0 = &p.hosts[0].spec;
        assert_eq!(h0.name, "H0");
        assert_eq!(
            h0.hrs.iter().map(|h| h.0).collect::<Vec<_>>(),
            [0x0115, 0x0117, 0x0119]
        );
        let HostLink::Udp { bind } = &h0.link else {
            panic!("a UDP host")
        };
        assert_eq!(p.owner_of(&bind.to_string()), Some(("H0", 0x0100)));
        // The same topology in namespaces: AF_PACKET ports, MACs as natives.
        let n = Plan::new(
            Topology::from_toml(TOPO).unwrap(),
            &dir,
            lab_timers(),
            Wiring::Netns { run: "1a2b".into() },
        )
        .unwrap();
        let text = n.daemon_config_toml(0);
        let cfg = control::config::Config::from_toml(&text).unwrap();
        assert_eq!(cfg.hrs.len(), 2);
        assert!(text.contains("interface = \"hr1\""), "{text}");
        assert_eq!(n.endpoints[&0x0115].0, "02:4d:1a:2b:01:15");
        assert_eq!(n.routers[0].netns.as_deref(), Some("mwlab-1a2b-ab"));
    }

    #[test]
    fn appendix_c_mtus_are_capped_for_udp() {
        let text = include_str!("../../../examples/appendix-c.toml");
        let dir = std::env::temp_dir().join("mwlab-plan-test-c");
        let p = Plan::new(
            Topology::from_toml(text).unwrap(),
            &dir,
            lab_timers(),
            Wiring::Udp,
        )
        .unwrap();
        for i in 0..p.routers.len() {
            let cfg = control::config::Config::from_toml(&p.daemon_config_toml(i)).unwrap();
            assert!(cfg.hrs.iter().all(|h| h.mtu <= UDP_MAX_MTU));
        }
        assert_eq!(lab_mtu(0), 0);
        assert_eq!(lab_mtu(1500), 1500);
    }
}
