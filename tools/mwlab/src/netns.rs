//! The network namespaces of a `--netns` lab (root): one namespace per
//! router and per host, one Linux bridge per SAN in the caller's namespace,
//! one veth pair per member (the inner end, `hrN` or `eth0`, in the member's
//! namespace with the planned MAC; the outer end on its SAN's bridge). Names
//! carry the lab's run tag, so that labs side by side never collide; every
//! name is recorded in the plan, so that `mwlab down` (or a failure half-way)
//! removes exactly what was made.

use std::process::Command;

use crate::plan::{HOST_IFACE, Plan, Wiring, hr_iface};

/// The kernel's limit on an interface name (IFNAMSIZ - 1).
pub const IFNAME_MAX: usize = 15;

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {}: {e} (is iproute2 installed?)", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// What a netns lab made, to be removed.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Made {
    /// Namespaces.
    pub namespaces: Vec<String>,
    /// Bridges.
    pub bridges: Vec<String>,
}

impl Made {
    /// Removes everything (a namespace takes its veths along); errors are
    /// ignored, so that a half-made lab is removed as far as it exists.
    pub fn remove(&self) {
        for n in &self.namespaces {
            let _ = ip(&["netns", "del", n]);
        }
        for b in &self.bridges {
            let _ = ip(&["link", "del", b]);
        }
    }
}

/// The bridge of SAN `i` in run `run`.
pub fn bridge_name(run: &str, i: usize) -> String {
    format!("mwb{run}s{i}")
}

/// The outer veth end of member `k` in run `run`.
pub fn outer_name(run: &str, k: usize) -> String {
    format!("mwv{run}m{k}")
}

/// What [`build`] will make for `plan` (names only).
pub fn planned(plan: &Plan) -> Made {
    let Wiring::Netns { run } = &plan.wiring else {
        return Made::default();
    };
    Made {
        namespaces: plan
            .routers
            .iter()
            .filter_map(|r| r.netns.clone())
            .chain(plan.hosts.iter().filter_map(|h| h.netns.clone()))
            .collect(),
        bridges: (0..plan.topology.sans.len())
            .map(|i| bridge_name(run, i))
            .collect(),
    }
}

fn veth(ns: &str, inner: &str, outer: &str, mac: &str, bridge: &str) -> Result<(), String> {
    ip(&[
        "link", "add", outer, "type", "veth", "peer", "name", inner, "netns", ns,
    ])?;
    ip(&["-n", ns, "link", "set", inner, "address", mac])?;
    ip(&["-n", ns, "link", "set", inner, "up"])?;
    ip(&["link", "set", outer, "master", bridge])?;
    ip(&["link", "set", outer, "up"])
}

/// Makes the namespaces, bridges and veths of `plan` (a netns plan). On
/// failure, removes what it made and says what failed.
pub fn build(plan: &Plan) -> Result<Made, String> {
    let Wiring::Netns { run } = &plan.wiring else {
        return Err("not a netns plan".into());
    };
    let all = planned(plan);
    for n in all.bridges.iter() {
        if n.len() > IFNAME_MAX {
            return Err(format!("bridge name {n} is too long"));
        }
    }
    let mut made = Made::default();
    let r = (|| {
        for (i, b) in all.bridges.iter().enumerate() {
            ip(&["link", "add", "name", b, "type", "bridge"])?;
            made.bridges.push(b.clone());
            ip(&["link", "set", b, "up"])?;
            let _ = i;
        }
        let bridge_of = |san: &str| -> String {
            let i = plan
                .topology
                .sans
                .iter()
                .position(|s| s.name == san)
                .expect("validated");
            bridge_name(run, i)
        };
        let mut k = 0;
        for r in &plan.routers {
            let ns = r.netns.as_deref().expect("a netns plan");
            ip(&["netns", "add", ns])?;
            made.namespaces.push(ns.to_string());
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            for (p, ((_, mac), san)) in r.hrs.iter().zip(&r.sans).enumerate() {
                veth(ns, &hr_iface(p), &outer_name(run, k), mac, &bridge_of(san))?;
                k += 1;
            }
        }
        for h in &plan.hosts {
            let ns = h.netns.as_deref().expect("a netns plan");
            ip(&["netns", "add", ns])?;
            made.namespaces.push(ns.to_string());
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            let mac = &plan.endpoints[&h.address].0;
            veth(ns, HOST_IFACE, &outer_name(run, k), mac, &bridge_of(&h.san))?;
            k += 1;
        }
        Ok::<(), String>(())
    })();
    match r {
        Ok(()) => Ok(made),
        Err(e) => {
            made.remove();
            Err(e)
        }
    }
}

/// Whether this process can make namespaces: root and a working `ip netns`.
pub fn available() -> bool {
    rustix::process::geteuid().is_root()
        && Command::new("ip")
            .args(["netns", "list"])
            .output()
            .is_ok_and(|o| o.status.success())
}

/// A run tag: 4 hex digits from the process id and the time.
pub fn run_tag() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{:04x}", (std::process::id() ^ t) & 0xFFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_kernel_limit() {
        assert!(bridge_name("ffff", 99).len() <= IFNAME_MAX);
        assert!(outer_name("ffff", 999).len() <= IFNAME_MAX);
        assert_eq!(run_tag().len(), 4);
    }
}
