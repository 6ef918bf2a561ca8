//! The harness's mwrouterd configurations, built as mwrouterd's own
//! [`Config`] (docs/configuration.md) and written with [`Config::to_toml`]:
//! a key that mwrouterd renames or drops breaks the build of the harness,
//! not a run of it.
//!
//! Every harness router is a DPDK box: EAL arguments (`[dpdk]`), HRs on
//! DPDK devices with the MACs of the benchmark's wiring (MTU 1500) and
//! static LRT entries given by MAC, the admin socket in the run's scratch
//! directory.

use std::path::{Path, PathBuf};

use admin::LogLevel;
use control::config::{Config, DpdkPortConfig, DpdkSection, HrSection, PortConfig, WorkersSection};
use rrp::router::StaticNode;
use rrp::{Address, NativeAddr};

use super::Result;
use super::traffic::mac_bytes;

/// The SAN MTU of every harness HR.
pub const MTU: u32 = 1500;

/// A static LRT entry: node `address` at MAC `mac`, listening to `groups`.
pub fn static_node(address: u16, mac: &str, groups: &[u16]) -> StaticNode {
    StaticNode {
        address: Address(address),
        native: NativeAddr::mac(mac_bytes(mac)),
        name: None,
        capabilities: Vec::new(),
        groups: groups.iter().map(|&g| Address(g)).collect(),
    }
}

/// HR `address` on SAN `san`, port `device` (a vdev with its parameters)
/// with MAC `mac`, and `statics` in its LRT.
pub fn dpdk_hr(
    address: u16,
    san: u16,
    device: &str,
    mac: &str,
    statics: Vec<StaticNode>,
) -> HrSection {
    let mut port = DpdkPortConfig::new(device);
    port.mac = Some(mac_bytes(mac));
    let mut hr = HrSection::new(address, san, MTU, PortConfig::Dpdk(port));
    hr.statics = statics;
    hr
}

/// The `[workers]` of `count` busy-polling workers on `cores`.
pub fn busy_poll_workers(cores: &[usize]) -> WorkersSection {
    WorkersSection {
        count: cores.len(),
        cores: Some(cores.to_vec()),
        idle: control::config::IdleMode::BusyPoll,
        ..WorkersSection::default()
    }
}

/// `[workers]` lines (TOML keys without the section header, as the
/// operator writes them) as mwrouterd reads them.
pub fn workers_from_toml(lines: &str) -> Result<WorkersSection> {
    toml::from_str(lines).map_err(|e| format!("[workers] {lines:?}: {e}"))
}

/// Router `name`: EAL arguments `eal` (the main lcore's `-l` included),
/// `workers`, the admin socket `socket`, logging at `level`, and `hrs` in
/// port order; every other setting at mwrouterd's default.
pub fn dpdk_router(
    name: &str,
    eal: Vec<String>,
    workers: WorkersSection,
    socket: &Path,
    level: LogLevel,
    hrs: Vec<HrSection>,
) -> Config {
    let mut c = Config::new(name, hrs);
    c.dpdk = Some(DpdkSection { eal_args: eal });
    c.workers = workers;
    c.admin.socket = PathBuf::from(socket);
    c.log.level = level;
    // A benchmark's router stops when told (its traffic never goes quiet,
    // so a drain would run to its timeout) and has no buddies to hold off.
    c.drain.on_sigterm = false;
    c.drain.start_max_ms = 0;
    c
}

/// `eal` with the main lcore: `eal -l LCORE`.
pub fn eal_on(eal: &[String], lcore: u32) -> Vec<String> {
    let mut v = eal.to_vec();
    v.extend(["-l".to_string(), lcore.to_string()]);
    v
}

/// Checks `c` as mwrouterd does when it loads it: every problem at once,
/// each naming its key.
pub fn validate(c: &Config) -> Result<()> {
    c.validate().map_err(|errs| {
        errs.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// Writes `c` to `path` as TOML.
pub fn write(path: &Path, c: &Config) -> Result<()> {
    std::fs::write(path, c.to_toml()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dpdk_router_emits_and_parses_back_equal() {
        let c = dpdk_router(
            "t",
            eal_on(&["--in-memory".into()], 0),
            busy_poll_workers(&[1]),
            Path::new("/tmp/t.sock"),
            LogLevel::Warn,
            vec![
                dpdk_hr(
                    0x0101,
                    0x0201,
                    "net_null0,no-rx=1",
                    "02:00:00:00:01:01",
                    vec![static_node(0x0130, "02:00:00:00:01:30", &[0x8101])],
                ),
                dpdk_hr(0x0102, 0x0202, "net_null1", "02:00:00:00:01:02", Vec::new()),
            ],
        );
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(Config::from_toml(&c.to_toml()), Ok(c));
    }

    #[test]
    fn workers_lines_are_read_as_the_daemon_reads_them() {
        let w = workers_from_toml("count = 2\ncores = [1, 0]\nspread = \"ports\"").unwrap();
        assert_eq!((w.count, w.cores), (2, Some(vec![1, 0])));
        assert!(workers_from_toml("count = 2\nsprad = \"ports\"").is_err());
    }
}
