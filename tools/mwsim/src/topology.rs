//! Topology files (TOML), shared by mwsim and mwlab: SANs, routers (boxes
//! with two or more HRs) and hosts. Also the random topology generator.
//!
//! ```toml
//! [[san]]
//! name = "A"
//! id = 0x0201        # SAN-ID
//! mtu = 1500         # bytes, 0 = unlimited
//! cost = 1
//!
//! [[router]]
//! name = "ab"
//! cost = 1           # router crossing cost (optional, default 1)
//! hrs = [ { san = "A", address = 0x0115 }, { san = "B", address = 0x0116 } ]
//!
//! [[host]]
//! name = "H0"
//! address = 0x0100
//! san = "A"
//! hr = 0x0115        # the HR it asks first (optional: the lowest HR on its SAN)
//! level = "C"        # A, B or C (optional, default C)
//! capabilities = [ { code = 7, params = [4, 8] } ]   # optional
//! node_name = "Super"   # the name it reports (optional, default `name`)
//!
//! [[partition]]      # (mwlab: its SAN managers' partitions file, docs/partitions.md)
//! name = "tenant_a"
//! key = 0x0010
//! full = ["H0", "H4"]        # hosts by name, or ALL, ALL_HOSTS, ALL_ROUTERS, SELF
//! limited = ["H8"]
//! ```

use std::collections::{BTreeMap, BTreeSet};

use mgmt::partition::{MAX_PARTITIONS, Member, Membership, Partition, PartitionKey, Partitions};
use rrp::Address;
use serde::{Deserialize, Serialize};

/// A SAN.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SanSpec {
    /// Its name.
    pub name: String,
    /// Its SAN-ID.
    pub id: u16,
    /// MTU in bytes (0 = unlimited).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Cost of crossing it.
    #[serde(default = "one")]
    pub cost: u16,
    /// The addresses its SAN manager gives nodes that start without one,
    /// first and last (mwlab, docs/manager.md); none: it gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<[u16; 2]>,
    /// The SAN's authentication key (hex, at least 16 bytes; mwlab,
    /// docs/configuration.md "Authentication"): its routers' HRs and its
    /// hosts sign and check every control packet with it (key ID 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// One HR of a router.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HrSpec {
    /// The SAN (by name).
    pub san: String,
    /// Its address.
    pub address: u16,
}

/// A router (one box).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouterSpec {
    /// Its name.
    pub name: String,
    /// Router crossing cost.
    #[serde(default = "one")]
    pub cost: u16,
    /// Its HRs, in port order.
    pub hrs: Vec<HrSpec>,
    /// The priority (0-15) of the SAN manager it runs on every HR (mwlab,
    /// docs/manager.md); none: no manager.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager_priority: Option<u8>,
}

/// A capability of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapSpec {
    /// Capability code (Appendix A5).
    pub code: u8,
    /// Parameter bytes.
    #[serde(default)]
    pub params: Vec<u8>,
}

/// A host (node).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSpec {
    /// Its name.
    pub name: String,
    /// Its address.
    pub address: u16,
    /// Its SAN (by name).
    pub san: String,
    /// The HR it asks first.
    #[serde(default)]
    pub hr: Option<u16>,
    /// Node level: "A", "B" or "C".
    #[serde(default = "level_c")]
    pub level: String,
    /// Capabilities.
    #[serde(default)]
    pub capabilities: Vec<CapSpec>,
    /// The name it reports in RRP#5 (default: `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// The priority (0-15) of the SAN manager it runs (mwlab); none: no
    /// manager.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager_priority: Option<u8>,
    /// It starts without an address and gets one from its SAN's manager
    /// (mwlab, docs/manager.md "Address assignment"); `address` is then the
    /// one mwsim gives it, and the one mwlab's plan names it by.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_address: bool,
}

/// A whole MessageWay.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// SANs.
    #[serde(default, rename = "san")]
    pub sans: Vec<SanSpec>,
    /// Routers.
    #[serde(default, rename = "router")]
    pub routers: Vec<RouterSpec>,
    /// Hosts.
    #[serde(default, rename = "host")]
    pub hosts: Vec<HostSpec>,
    /// Partitions (mwlab writes them as its SAN managers' partitions file).
    #[serde(default, rename = "partition", skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionSpec>,
}

/// A partition (docs/partitions.md): its key and its members, hosts by
/// name or the partitions file's keywords.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionSpec {
    /// Its name in the partitions file.
    pub name: String,
    /// Its key, 0x0001-0x7FFF.
    pub key: u16,
    /// Full members.
    #[serde(default)]
    pub full: Vec<String>,
    /// Limited members.
    #[serde(default)]
    pub limited: Vec<String>,
}

/// The partitions file's keywords a topology may name as members.
pub const PARTITION_KEYWORDS: [&str; 4] = ["ALL", "ALL_HOSTS", "ALL_ROUTERS", "SELF"];

fn one() -> u16 {
    1
}
fn default_mtu() -> u32 {
    1500
}
fn level_c() -> String {
    "C".to_string()
}

impl Topology {
    /// Parses and validates a topology file.
    pub fn from_toml(text: &str) -> Result<Topology, String> {
        let t: Topology = toml::from_str(text).map_err(|e| e.to_string())?;
        t.validate()?;
        Ok(t)
    }

    /// The topology as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("serialisable")
    }

    /// The index of SAN `name`.
    pub fn san_index(&self, name: &str) -> Option<usize> {
        self.sans.iter().position(|s| s.name == name)
    }

    /// Checks names, addresses and references; the message names the culprit.
    pub fn validate(&self) -> Result<(), String> {
        let mut addrs: BTreeSet<u16> = BTreeSet::new();
        let mut names: BTreeSet<&str> = BTreeSet::new();
        let mut ids: BTreeSet<u16> = BTreeSet::new();
        let mut claim = |a: u16, what: &str| -> Result<(), String> {
            if !Address(a).is_node() {
                return Err(format!("{what}: address 0x{a:04x} is not 0x0040-0x7FFF"));
            }
            if !addrs.insert(a) {
                return Err(format!("{what}: address 0x{a:04x} used twice"));
            }
            Ok(())
        };
        for s in &self.sans {
            if !names.insert(&s.name) {
                return Err(format!("san {}: name used twice", s.name));
            }
            if !ids.insert(s.id) || !Address(s.id).is_node() {
                return Err(format!(
                    "san {}: SAN-ID 0x{:04x} invalid or used twice",
                    s.name, s.id
                ));
            }
            if s.cost == 0 {
                return Err(format!("san {}: cost must be >= 1", s.name));
            }
            if let Some(k) = &s.key {
                let hex = k.trim_start_matches("0x");
                if hex.len() < 32
                    || hex.len() % 2 != 0
                    || !hex.bytes().all(|b| b.is_ascii_hexdigit())
                {
                    return Err(format!(
                        "san {}: key must be hex digits, at least 16 bytes (the value is not shown)",
                        s.name
                    ));
                }
            }
        }
        for s in &self.sans {
            claim(s.id, &format!("san {}", s.name))?;
        }
        let mut rnames = BTreeSet::new();
        for r in &self.routers {
            if !rnames.insert(&r.name) {
                return Err(format!("router {}: name used twice", r.name));
            }
            if r.hrs.len() < 2 {
                return Err(format!("router {}: needs two or more HRs", r.name));
            }
            if r.cost == 0 {
                return Err(format!("router {}: cost must be >= 1", r.name));
            }
            let mut on = BTreeSet::new();
            for h in &r.hrs {
                if self.san_index(&h.san).is_none() {
                    return Err(format!("router {}: unknown SAN {}", r.name, h.san));
                }
                if !on.insert(&h.san) {
                    return Err(format!("router {}: two HRs on SAN {}", r.name, h.san));
                }
                claim(h.address, &format!("router {}", r.name))?;
            }
        }
        for h in &self.hosts {
            if self.san_index(&h.san).is_none() {
                return Err(format!("host {}: unknown SAN {}", h.name, h.san));
            }
            if !matches!(h.level.as_str(), "A" | "B" | "C") {
                return Err(format!("host {}: level must be A, B or C", h.name));
            }
            claim(h.address, &format!("host {}", h.name))?;
            if h.manager_priority.is_some_and(|p| p > 15) {
                return Err(format!("host {}: manager_priority is 0-15", h.name));
            }
            if h.auto_address && h.level == "A" {
                return Err(format!(
                    "host {}: a host without an address must answer RRP#7 (level B or C)",
                    h.name
                ));
            }
        }
        for r in &self.routers {
            if r.manager_priority.is_some_and(|p| p > 15) {
                return Err(format!("router {}: manager_priority is 0-15", r.name));
            }
        }
        let mut keys = BTreeSet::new();
        for p in &self.partitions {
            if !(1..=0x7FFF).contains(&p.key) || !keys.insert(p.key) {
                return Err(format!(
                    "partition {}: key 0x{:04x} is not 0x0001-0x7FFF or used twice",
                    p.name, p.key
                ));
            }
            for m in p.full.iter().chain(&p.limited) {
                if !PARTITION_KEYWORDS.contains(&m.as_str())
                    && !self.hosts.iter().any(|h| h.name == *m)
                {
                    return Err(format!("partition {}: no host {m}", p.name));
                }
            }
        }
        let default = self
            .partitions
            .iter()
            .any(|p| p.key == PartitionKey::DEFAULT.get());
        if self.partitions.len() + usize::from(!default) > MAX_PARTITIONS {
            return Err(format!(
                "more than {MAX_PARTITIONS} partitions (the default one included)"
            ));
        }
        // Pools: node addresses, apart, and no address of the topology
        // inside but those of hosts that start without one.
        let fixed: BTreeSet<u16> = addrs
            .iter()
            .copied()
            .filter(|a| !self.hosts.iter().any(|h| h.auto_address && h.address == *a))
            .collect();
        let pools: Vec<(&str, [u16; 2])> = self
            .sans
            .iter()
            .filter_map(|s| s.pool.map(|p| (s.name.as_str(), p)))
            .collect();
        for (i, (san, [first, last])) in pools.iter().enumerate() {
            if !Address(*first).is_node() || !Address(*last).is_node() || first > last {
                return Err(format!(
                    "san {san}: pool 0x{first:04x}-0x{last:04x} is not node addresses first to last"
                ));
            }
            if let Some(a) = fixed.range(*first..=*last).next() {
                return Err(format!(
                    "san {san}: pool holds address 0x{a:04x} of the topology"
                ));
            }
            if pools[..i].iter().any(|(_, [f, l])| first <= l && f <= last) {
                return Err(format!("san {san}: pool overlaps another SAN's"));
            }
        }
        Ok(())
    }

    /// The partitions the topology declares, as its SANs' managers hold
    /// them (docs/partitions.md): hosts by `identity_of` (the identity
    /// their agents report), the keywords as the file's, the default
    /// partition added as OpenSM adds it when no `[[partition]]` has its
    /// key ([`Partitions::declared`]). `None` without `[[partition]]`s: no
    /// partitions file, every node a full member of the default partition.
    /// mwlab writes it as its managers' file; mwsim gives the routers the
    /// tables it makes.
    pub fn partitions_model(&self, identity_of: impl Fn(&HostSpec) -> u64) -> Option<Partitions> {
        if self.partitions.is_empty() {
            return None;
        }
        let member = |name: &str| -> Option<Member> {
            Some(match name {
                "ALL" => Member::All,
                "ALL_HOSTS" => Member::AllHosts,
                "ALL_ROUTERS" => Member::AllRouters,
                "SELF" => Member::Manager,
                _ => Member::Node(identity_of(self.hosts.iter().find(|h| h.name == name)?)),
            })
        };
        let list = self
            .partitions
            .iter()
            .filter_map(|p| {
                let members = p
                    .full
                    .iter()
                    .map(|m| (m, Membership::Full))
                    .chain(p.limited.iter().map(|m| (m, Membership::Limited)))
                    .filter_map(|(m, how)| Some((member(m)?, how)))
                    .collect();
                Some(Partition {
                    name: p.name.clone(),
                    key: PartitionKey::new(p.key)?,
                    members,
                })
            })
            .collect();
        Some(Partitions::declared(list))
    }

    /// HR addresses on each SAN, by SAN index.
    pub fn hrs_on(&self) -> Vec<Vec<u16>> {
        let mut v = vec![Vec::new(); self.sans.len()];
        for r in &self.routers {
            for h in &r.hrs {
                v[self.san_index(&h.san).expect("validated")].push(h.address);
            }
        }
        for l in &mut v {
            l.sort_unstable();
        }
        v
    }

    /// A random connected topology: `sans` SANs, `routers` routers of 2 to
    /// 4 ports, SAN costs 1 to 10, `hosts_per_san` hosts on each SAN.
    pub fn random(sans: usize, routers: usize, hosts_per_san: usize, seed: u64) -> Topology {
        assert!(
            sans >= 2 && routers >= sans - 1,
            "need at least SANS-1 routers to connect SANS SANs"
        );
        let mut rng = crate::rng::seeded(seed);
        let mut next = 0x0040u16;
        let mut alloc = || {
            let a = next;
            next += 1;
            a
        };
        let mut t = Topology::default();
        for i in 0..sans {
            t.sans.push(SanSpec {
                name: format!("S{i}"),
                id: alloc(),
                mtu: 1500,
                cost: 1 + rng.below(10) as u16,
                pool: None,
                key: None,
            });
        }
        // A spanning tree first (router i joins SAN i+1 to an earlier SAN),
        // then the remaining routers at random; extra ports at random.
        let mut ports: Vec<BTreeSet<usize>> = Vec::new();
        for i in 1..sans {
            let mut s = BTreeSet::new();
            s.insert(i);
            s.insert(rng.below(i as u64) as usize);
            ports.push(s);
        }
        while ports.len() < routers {
            let mut s = BTreeSet::new();
            s.insert(rng.below(sans as u64) as usize);
            while s.len() < 2 {
                s.insert(rng.below(sans as u64) as usize);
            }
            ports.push(s);
        }
        for s in &mut ports {
            let want = 2 + rng.below(3) as usize;
            let mut tries = 0;
            while s.len() < want.min(sans) && tries < 16 {
                s.insert(rng.below(sans as u64) as usize);
                tries += 1;
            }
        }
        for (i, s) in ports.into_iter().enumerate() {
            t.routers.push(RouterSpec {
                name: format!("R{i}"),
                cost: 1,
                hrs: s
                    .into_iter()
                    .map(|x| HrSpec {
                        san: format!("S{x}"),
                        address: alloc(),
                    })
                    .collect(),
                manager_priority: None,
            });
        }
        for i in 0..sans {
            for j in 0..hosts_per_san {
                t.hosts.push(HostSpec {
                    name: format!("H{i}.{j}"),
                    address: alloc(),
                    san: format!("S{i}"),
                    hr: None,
                    level: "C".into(),
                    capabilities: vec![CapSpec {
                        code: 1,
                        params: vec![],
                    }],
                    node_name: None,
                    manager_priority: None,
                    auto_address: false,
                });
            }
        }
        t
    }

    /// The hop diameter of the SAN graph (SANs joined by routers).
    pub fn diameter(&self) -> usize {
        let n = self.sans.len();
        let mut adj: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        for r in &self.routers {
            let s: Vec<usize> = r
                .hrs
                .iter()
                .map(|h| self.san_index(&h.san).expect("valid"))
                .collect();
            for a in &s {
                for b in &s {
                    if a != b {
                        adj[*a].insert(*b);
                    }
                }
            }
        }
        let mut best = 0;
        for s in 0..n {
            let mut dist: BTreeMap<usize, usize> = BTreeMap::new();
            dist.insert(s, 0);
            let mut q = std::collections::VecDeque::from([s]);
            while let Some(x) = q.pop_front() {
                let d = dist[&x];
                for y in &adj[x] {
                    if !dist.contains_key(y) {
                        dist.insert(*y, d + 1);
                        q.push_back(*y);
                    }
                }
            }
            best = best.max(dist.values().copied().max().unwrap_or(0));
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_is_valid_connected_and_deterministic() {
        let t = Topology::random(20, 40, 2, 7);
        t.validate().unwrap();
        assert_eq!(t, Topology::random(20, 40, 2, 7));
        assert!(t.diameter() >= 1);
        let back = Topology::from_toml(&t.to_toml()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn partitions_become_the_managers_model() {
        let mut t = Topology::random(2, 1, 2, 1);
        assert_eq!(
            t.partitions_model(|h| u64::from(h.address)),
            None,
            "no file"
        );
        t.partitions.push(PartitionSpec {
            name: "tenant".into(),
            key: 0x0010,
            full: vec!["H0.0".into(), "ALL_ROUTERS".into()],
            limited: vec!["H1.1".into(), "ALL_HOSTS".into()],
        });
        t.validate().unwrap();
        let p = t.partitions_model(|h| u64::from(h.address)).unwrap();
        let tenant = p.get(PartitionKey::new(0x0010).unwrap()).unwrap();
        let h00 = u64::from(t.hosts[0].address);
        assert_eq!(
            tenant.members,
            [
                (Member::Node(h00), Membership::Full),
                (Member::AllRouters, Membership::Full),
                (
                    Member::Node(u64::from(t.hosts[3].address)),
                    Membership::Limited
                ),
                (Member::AllHosts, Membership::Limited),
            ]
        );
        // No Default statement: the default partition as OpenSM adds it.
        assert_eq!(p, mgmt::partition::parse(&p.to_text()).unwrap());
        let d = p.get(PartitionKey::DEFAULT).unwrap();
        assert_eq!(d.members[0], (Member::All, Membership::Limited));
        t.partitions.push(PartitionSpec {
            name: "Default".into(),
            key: 0x7FFF,
            full: vec!["ALL".into()],
            limited: Vec::new(),
        });
        let p = t.partitions_model(|h| u64::from(h.address)).unwrap();
        assert_eq!(p.list.len(), 2, "the Default statement as written");
        assert_eq!(
            p.get(PartitionKey::DEFAULT).unwrap().members,
            [(Member::All, Membership::Full)]
        );
    }

    #[test]
    fn refuses_bad_files() {
        let e = Topology::from_toml("[[san]]\nname='A'\nid=0x10\n").unwrap_err();
        assert!(e.contains("SAN-ID"), "{e}");
        let e = Topology::from_toml(
            "[[san]]\nname='A'\nid=0x200\n[[router]]\nname='r'\nhrs=[{san='A',address=0x300},{san='B',address=0x301}]\n",
        )
        .unwrap_err();
        assert!(e.contains("unknown SAN B"), "{e}");
    }
}
