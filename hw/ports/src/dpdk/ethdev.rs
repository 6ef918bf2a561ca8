//! Ethdevs: configuration and start-up (docs/backends.md "DPDK"). Their
//! queues are MessageWay ports (port.rs) or raw queues of whole frames
//! (queue.rs).

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char};
use std::ops::Range;
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use dpdk_sys as sys;

use super::eal::{DpdkError, Eal, rc_error};
use super::flow::{self, RxSpread, Spread};
use super::mbuf::Pool;
use super::replication::{
    CHAIN_FROM_LEN, CHAIN_MIN_LEN, ChainPools, Replication, TX_OFFLOAD_MULTI_SEGS,
};
use super::stats::QueueCounters;
use crate::BURST;

/// MessageWay's EtherType (`rrp::encap`, draft section 4.1 over Ethernet).
pub const ETHERTYPE_MW: u16 = rrp::encap::ETHERTYPE;
/// The EtherType of an IEEE 802.1Q tag (`rrp::encap`).
pub const ETHERTYPE_VLAN: u16 = rrp::encap::ETHERTYPE_VLAN;
/// Bytes of an Ethernet II header (`rrp::encap`).
pub const ETH_HLEN: usize = rrp::encap::ETH_HEADER_LEN;
/// The shortest Ethernet frame without FCS: shorter ones are padded
/// (`rrp::encap`).
pub const MIN_FRAME: usize = rrp::encap::ETH_MIN_FRAME;

pub(super) const BROADCAST: [u8; 6] = [0xFF; 6];

/// One ethdev to configure and start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceSpec {
    /// The ethdev's name: a PCI address for a NIC (`0000:3b:00.0`, as bound
    /// to vfio-pci and allowed by EAL's `-a`), the vdev name for a virtual
    /// device (`net_memif0`, `net_af_packet0`, a [`ring_pair`](super::ring_pair)
    /// end).
    pub device: String,
    /// Receive descriptors per queue (adjusted to the device's limits).
    pub rx_ring: u16,
    /// Transmit descriptors per queue (adjusted to the device's limits).
    pub tx_ring: u16,
    /// A MAC address to use instead of the device's: programmed into the
    /// device (`rte_eth_dev_default_mac_addr_set`) and used as the source of
    /// transmitted frames. Where the driver cannot set it (e.g. the ring
    /// PMD), the port uses it in software and turns promiscuous mode on.
    pub mac: Option<[u8; 6]>,
    /// Promiscuous mode; `None`: on for devices that are not PCI NICs
    /// (vdevs), and wherever `mac` could not be programmed.
    pub promiscuous: Option<bool>,
    /// The Ethernet MTU (payload bytes); `None`: the device's default (1500).
    pub mtu: Option<u16>,
}

impl DeviceSpec {
    /// The device `device` with 1024 descriptors per ring and its own MAC.
    pub fn new(device: impl Into<String>) -> DeviceSpec {
        DeviceSpec {
            device: device.into(),
            rx_ring: 1024,
            tx_ring: 1024,
            mac: None,
            promiscuous: None,
            mtu: None,
        }
    }

    /// Sets the ring sizes.
    pub fn rings(mut self, rx: u16, tx: u16) -> DeviceSpec {
        self.rx_ring = rx;
        self.tx_ring = tx;
        self
    }

    /// Sets the MAC address.
    pub fn mac(mut self, mac: [u8; 6]) -> DeviceSpec {
        self.mac = Some(mac);
        self
    }

    /// Sets promiscuous mode.
    pub fn promiscuous(mut self, on: bool) -> DeviceSpec {
        self.promiscuous = Some(on);
        self
    }

    /// Sets the MTU.
    pub fn mtu(mut self, mtu: u16) -> DeviceSpec {
        self.mtu = Some(mtu);
        self
    }
}

/// How [`Eal::start_ports`] sets up queues and pools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartOptions {
    /// Workers: each gets a transmit queue of every port, and a receive
    /// queue of every port that flow rules spread ([`Spread`]).
    pub queues: u16,
    /// How each device's frames are spread over the workers' receive
    /// queues (docs/backends.md "More than one worker").
    pub spread: Spread,
    /// Per-lcore mempool cache size (at most 512).
    pub cache: u32,
    /// Mbufs added to each pool beyond what the rings, bursts and caches
    /// hold (packets queued in software, injections, test traffic).
    pub extra_mbufs: u32,
    /// Replicate group packets as mbuf chains (zero copy) on the devices
    /// that transmit chains ([`Replication`]); `false`: copies everywhere.
    pub chains: bool,
    /// On chaining devices, packets shorter than this are still copied
    /// (never less than [`CHAIN_MIN_LEN`], which padding needs): a small
    /// copy costs less than the two mbufs and the reference counting of a
    /// chain (docs/performance.md "Multicast replication"). Default
    /// [`CHAIN_FROM_LEN`].
    pub chain_min_len: usize,
}

impl Default for StartOptions {
    fn default() -> StartOptions {
        StartOptions {
            queues: 1,
            spread: Spread::Auto,
            cache: 256,
            extra_mbufs: 1024,
            chains: true,
            chain_min_len: CHAIN_FROM_LEN,
        }
    }
}

/// What the queues of one ethdev share.
#[derive(Debug)]
pub(super) struct Inner {
    pub(super) port_id: u16,
    pub(super) name: String,
    pub(super) socket: i32,
    pub(super) mac: [u8; 6],
    pub(super) pool: Pool,
    pub(super) driver: String,
    pub(super) replication: Replication,
    pub(super) chain: Option<ChainPools>,
    pub(super) chain_min: usize,
    pub(super) rx_queues: u16,
    pub(super) tx_queues: u16,
    pub(super) spread: RxSpread,
    pub(super) rx_taken: Box<[AtomicBool]>,
    pub(super) tx_taken: Box<[AtomicBool]>,
    /// Per transmit queue (one writer each: the port that owns it).
    pub(super) counters: Box<[QueueCounters]>,
    pub(super) started: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // SAFETY: no queue of the port is in use any more (every DpdkPort and
        // RawQueue holds an Arc of this); the port id is ours.
        unsafe {
            if self.spread.is_flows() {
                flow::flush(self.port_id);
            }
            if self.started {
                sys::rte_eth_dev_stop(self.port_id);
            }
            sys::rte_eth_dev_close(self.port_id);
        }
    }
}

/// A configured and started ethdev. A cheap handle (shared with its queues):
/// the device is stopped and closed when the last handle and the last of its
/// queues are gone.
#[derive(Debug, Clone)]
pub struct Ethdev(pub(super) Arc<Inner>);

/// Whether `name` is a PCI address (`DDDD:BB:DD.F` or `BB:DD.F`): ethdevs of
/// PCI NICs are named so, vdevs are not.
fn is_pci_name(name: &str) -> bool {
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    let parts: Vec<&str> = name.split(':').collect();
    let (bus, devfn) = match parts.as_slice() {
        [dom, bus, devfn] if hex(dom, 4) => (*bus, *devfn),
        [bus, devfn] => (*bus, *devfn),
        _ => return false,
    };
    match devfn.split_once('.') {
        Some((dev, f)) => hex(bus, 2) && hex(dev, 2) && f.len() == 1 && hex(f, 1),
        None => false,
    }
}

fn port_by_name(name: &str) -> Result<u16, DpdkError> {
    let c = CString::new(name).map_err(|_| DpdkError::BadArgument(name.into()))?;
    let mut id = 0u16;
    // SAFETY: EAL is initialised (callers hold an &Eal); `c` is a valid C
    // string and `id` a valid out-pointer.
    let rc = unsafe { sys::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) };
    if rc != 0 {
        return Err(DpdkError::NoSuchDevice(name.into()));
    }
    Ok(id)
}

/// The largest frame a port of this MTU receives: Ethernet header, one VLAN
/// tag, FCS.
fn max_frame(mtu: Option<u16>) -> u32 {
    u32::from(mtu.unwrap_or(1500)) + ETH_HLEN as u32 + 4 + 4
}

/// Pools are named `mw<seq>s<socket>`.
static POOL_SEQ: AtomicU32 = AtomicU32::new(0);

impl Eal {
    /// Configures and starts the ethdevs of `specs`, each with
    /// `opts.queues` transmit queues (one per worker) and one receive queue,
    /// or `opts.queues` receive queues fed by flow rules where `opts.spread`
    /// asks for them and the device takes them ([`RxSpread`]), after
    /// creating one pktmbuf pool per NUMA socket they are on (pools of
    /// earlier calls are not reused).
    ///
    /// Pool size per socket: for each port on it, `rx queues × (rx_ring +
    /// BURST) + queues × (tx_ring + BURST)` (descriptor rings full, a
    /// receive burst and a staged transmit burst per queue), plus `1.5 ×
    /// cache` for each lcore
    /// that may hold a cache (EAL's lcores, one registered thread per queue,
    /// two more), plus `opts.extra_mbufs`, rounded up to `2^k - 1`. Data room:
    /// `RTE_PKTMBUF_HEADROOM` + the largest frame of the ports' MTUs (header,
    /// one VLAN tag and FCS included), at least DPDK's default 2048.
    ///
    /// Ports that replicate group packets as chains ([`Replication`]) share
    /// one more pool per socket, of header mbufs: `queues × (tx_ring + 2 ×
    /// BURST)` per such port plus the same cache and extra allowance (a
    /// replica holds one until its driver frees it).
    pub fn start_ports(
        &self,
        specs: &[DeviceSpec],
        opts: &StartOptions,
    ) -> Result<Vec<Ethdev>, DpdkError> {
        if opts.queues == 0 {
            return Err(DpdkError::Config("at least one queue per port".into()));
        }
        let mut ids = Vec::with_capacity(specs.len());
        for s in specs {
            let id = port_by_name(&s.device)?;
            if ids.contains(&id) {
                return Err(DpdkError::Config(format!(
                    "ethdev {:?} is listed twice",
                    s.device
                )));
            }
            ids.push(id);
        }
        // SAFETY: EAL is initialised; the ids are valid ports.
        let sockets: Vec<i32> = ids
            .iter()
            .map(|&id| unsafe { sys::rte_eth_dev_socket_id(id) }.max(sys::SOCKET_ID_ANY))
            .collect();
        let infos = specs
            .iter()
            .zip(&ids)
            .map(|(s, &id)| dev_info(id, &s.device))
            .collect::<Result<Vec<_>, _>>()?;
        let modes: Vec<Replication> = infos
            .iter()
            .map(|i| Replication::for_driver(&i.driver, i.tx_offload_capa, opts.chains))
            .collect();
        // Receive queues: one per worker where the device has them (where
        // no rules spread the frames, one worker polls them all: a NIC
        // without rules delivers to queue 0, and the ring and memif PMDs
        // deliver what a peer sends on its transmit queue q to receive
        // queue q).
        let mut rxq = Vec::with_capacity(specs.len());
        for (s, i) in specs.iter().zip(&infos) {
            let (max_rx, max_tx) = (i.info.max_rx_queues, i.info.max_tx_queues);
            if opts.queues > max_tx {
                return Err(DpdkError::Config(format!(
                    "{}: {} workers need {} transmit queues (one each), the device has {max_tx}",
                    s.device, opts.queues, opts.queues
                )));
            }
            if opts.spread == Spread::Flows && opts.queues > max_rx {
                return Err(DpdkError::Config(format!(
                    "{}: spread = flows: {} workers need {} receive queues, the device has {max_rx}",
                    s.device, opts.queues, opts.queues
                )));
            }
            rxq.push(opts.queues.min(max_rx).max(1));
        }

        // One pool per socket in use (and chain pools where ports chain).
        let mut need: BTreeMap<i32, u64> = BTreeMap::new();
        let mut need_chain: BTreeMap<i32, u64> = BTreeMap::new();
        for (((s, &sock), mode), &nrx) in specs.iter().zip(&sockets).zip(&modes).zip(&rxq) {
            *need.entry(sock).or_default() += u64::from(nrx)
                * (u64::from(s.rx_ring) + BURST as u64)
                + u64::from(opts.queues) * (u64::from(s.tx_ring) + BURST as u64);
            if mode.chains() {
                let per_queue = u64::from(s.tx_ring) + 2 * BURST as u64;
                *need_chain.entry(sock).or_default() += u64::from(opts.queues) * per_queue;
            }
        }
        let cachers = u64::from(self.lcore_count()) + u64::from(opts.queues) + 2;
        let frame = specs.iter().map(|s| max_frame(s.mtu)).max().unwrap_or(0);
        let data_room = frame.max(sys::RTE_MBUF_DEFAULT_DATAROOM) + sys::RTE_PKTMBUF_HEADROOM;
        let data_room = u16::try_from(data_room).map_err(|_| {
            DpdkError::Config(format!("frames of {frame} bytes do not fit an mbuf"))
        })?;
        let size = |n: u64| {
            let n = n + cachers * u64::from(opts.cache) * 3 / 2 + u64::from(opts.extra_mbufs);
            u32::try_from((n + 1).next_power_of_two() - 1)
                .map_err(|_| DpdkError::Config(format!("a pool of {n} mbufs is too large")))
        };
        let mut pools = BTreeMap::new();
        for (&sock, &n) in &need {
            let seq = POOL_SEQ.fetch_add(1, Ordering::Relaxed);
            let name = format!("mw{seq}s{}", sock.max(-1));
            let pool = Pool::create(self, &name, size(n)?, opts.cache, data_room, sock)?;
            pools.insert(sock, pool);
        }
        let mut chain_pools = BTreeMap::new();
        for (&sock, &n) in &need_chain {
            let seq = POOL_SEQ.fetch_add(1, Ordering::Relaxed);
            let hdr_room = 2 * sys::RTE_PKTMBUF_HEADROOM as u16;
            let headers = Pool::create(
                self,
                &format!("mw{seq}h{}", sock.max(-1)),
                size(n)?,
                opts.cache,
                hdr_room,
                sock,
            )?;
            chain_pools.insert(sock, ChainPools { headers });
        }

        let mut out = Vec::with_capacity(specs.len());
        for (i, ((s, &id), &sock)) in specs.iter().zip(&ids).zip(&sockets).enumerate() {
            let mode = modes[i];
            let chain = if mode.chains() {
                chain_pools.get(&sock).copied()
            } else {
                None
            };
            out.push(Ethdev::start(
                s,
                id,
                sock,
                pools[&sock],
                Queues {
                    rx: rxq[i],
                    tx: opts.queues,
                    spread: opts.spread,
                },
                &infos[i],
                mode,
                chain,
                opts.chain_min_len.max(CHAIN_MIN_LEN),
            )?);
        }
        Ok(out)
    }
}

/// What [`Eal::start_ports`] reads of a device before configuring it.
#[derive(Debug, Clone)]
struct DevInfo {
    info: sys::rte_eth_dev_info,
    driver: String,
    tx_offload_capa: u64,
}

fn dev_info(id: u16, dev: &str) -> Result<DevInfo, DpdkError> {
    let mut info = sys::rte_eth_dev_info::default();
    // SAFETY: valid port id; `info` is a valid out-pointer.
    let rc = unsafe { sys::rte_eth_dev_info_get(id, &mut info) };
    if rc != 0 {
        return Err(rc_error("rte_eth_dev_info_get", dev, rc));
    }
    let driver = if info.driver_name.is_null() {
        String::new()
    } else {
        // SAFETY: a non-null driver name is a NUL-terminated string of the
        // driver, which lives as long as the process.
        unsafe { CStr::from_ptr(info.driver_name) }
            .to_string_lossy()
            .into_owned()
    };
    Ok(DevInfo {
        tx_offload_capa: info.tx_offload_capa,
        info,
        driver,
    })
}

/// The queues [`Ethdev::start`] sets up.
#[derive(Debug, Clone, Copy)]
struct Queues {
    /// Receive queues: as many as `tx` where the device has them, else
    /// what it has.
    rx: u16,
    /// Transmit queues (one per worker).
    tx: u16,
    /// What was asked.
    spread: Spread,
}

impl Ethdev {
    #[allow(clippy::too_many_arguments)]
    fn start(
        spec: &DeviceSpec,
        id: u16,
        socket: i32,
        pool: Pool,
        queues: Queues,
        dev_info: &DevInfo,
        replication: Replication,
        chain: Option<ChainPools>,
        chain_min: usize,
    ) -> Result<Ethdev, DpdkError> {
        let dev = spec.device.as_str();
        let info = &dev_info.info;
        let ntxq = queues.tx;
        if queues.rx > info.max_rx_queues || ntxq > info.max_tx_queues {
            return Err(DpdkError::Config(format!(
                "{dev}: {} rx / {ntxq} tx queues asked, the device has {} rx / {} tx",
                queues.rx, info.max_rx_queues, info.max_tx_queues
            )));
        }
        let mut conf = sys::rte_eth_conf::default();
        conf.rxmode.mtu = spec.mtu.map_or(0, u32::from);
        if replication == Replication::ChainOffload {
            conf.txmode.offloads |= TX_OFFLOAD_MULTI_SEGS;
        }
        // SAFETY: valid port id, stopped (never started, or closed and
        // re-probed); `conf` lives across the call.
        let rc = unsafe { sys::rte_eth_dev_configure(id, queues.rx, ntxq, &conf) };
        if rc != 0 {
            return Err(rc_error("rte_eth_dev_configure", dev, rc));
        }
        // From here on the device is closed on error (Inner's drop).
        let mut inner = Inner {
            port_id: id,
            name: spec.device.clone(),
            socket,
            mac: [0; 6],
            pool,
            driver: dev_info.driver.clone(),
            replication,
            chain,
            chain_min,
            rx_queues: queues.rx,
            tx_queues: ntxq,
            spread: RxSpread::Single {
                why: match queues.spread {
                    _ if ntxq == 1 => "one worker".into(),
                    Spread::Ports => "spread = ports".into(),
                    _ => format!("{} receive queues for {ntxq} workers", info.max_rx_queues),
                },
            },
            rx_taken: (0..queues.rx).map(|_| AtomicBool::new(false)).collect(),
            tx_taken: (0..ntxq).map(|_| AtomicBool::new(false)).collect(),
            counters: (0..ntxq).map(|_| QueueCounters::default()).collect(),
            started: false,
        };

        let (mut nrx, mut ntx) = (spec.rx_ring, spec.tx_ring);
        // SAFETY: valid, configured port; valid out-pointers.
        let rc = unsafe { sys::rte_eth_dev_adjust_nb_rx_tx_desc(id, &mut nrx, &mut ntx) };
        if rc != 0 {
            return Err(rc_error("rte_eth_dev_adjust_nb_rx_tx_desc", dev, rc));
        }

        let mut mac_in_hw = true;
        if let Some(mac) = spec.mac {
            let mut a = sys::rte_ether_addr { addr_bytes: mac };
            // SAFETY: valid, configured port; `a` lives across the call.
            let rc = unsafe { sys::rte_eth_dev_default_mac_addr_set(id, &mut a) };
            if rc == -(libc::ENOTSUP) {
                mac_in_hw = false;
            } else if rc != 0 {
                return Err(rc_error("rte_eth_dev_default_mac_addr_set", dev, rc));
            }
            inner.mac = mac;
        } else {
            let mut a = sys::rte_ether_addr::default();
            // SAFETY: valid port; `a` is a valid out-pointer.
            let rc = unsafe { sys::rte_eth_macaddr_get(id, &mut a) };
            if rc != 0 {
                return Err(rc_error("rte_eth_macaddr_get", dev, rc));
            }
            inner.mac = a.addr_bytes;
        }

        // Queue memory on the device's socket (SOCKET_ID_ANY as unsigned is
        // what the C API takes for "any").
        let qsock = socket as u32;
        for q in 0..queues.rx {
            // SAFETY: valid, configured port; q < configured rx queues; null
            // queue configuration = the driver's defaults; `pool` is a live
            // pktmbuf pool.
            let rc = unsafe {
                sys::rte_eth_rx_queue_setup(id, q, nrx, qsock, ptr::null(), pool.as_ptr())
            };
            if rc != 0 {
                let at = format!("{dev} rx q{q}");
                return Err(rc_error("rte_eth_rx_queue_setup", at, rc));
            }
        }
        for q in 0..ntxq {
            // SAFETY: as above, q < configured tx queues.
            let rc = unsafe { sys::rte_eth_tx_queue_setup(id, q, ntx, qsock, ptr::null()) };
            if rc != 0 {
                let at = format!("{dev} tx q{q}");
                return Err(rc_error("rte_eth_tx_queue_setup", at, rc));
            }
        }
        // Rules are validated before the start and created after it (as
        // drivers expect).
        let mut flows = false;
        if ntxq > 1 && queues.rx == ntxq && queues.spread != Spread::Ports {
            match flow::validate(id, queues.rx) {
                Ok(()) => flows = true,
                Err(why) if queues.spread == Spread::Flows => {
                    return Err(DpdkError::Config(format!(
                        "{dev}: spread = flows: the driver {} refuses the rules: {why}",
                        dev_info.driver
                    )));
                }
                Err(why) => inner.spread = RxSpread::Single { why },
            }
        }

        let promisc = spec
            .promiscuous
            .unwrap_or(!is_pci_name(&device_name(id).unwrap_or_default()) || !mac_in_hw);
        // SAFETY: valid, configured port.
        let rc = unsafe {
            if promisc {
                sys::rte_eth_promiscuous_enable(id)
            } else {
                sys::rte_eth_promiscuous_disable(id)
            }
        };
        if rc != 0 && rc != -(libc::ENOTSUP) {
            return Err(rc_error("rte_eth_promiscuous_enable/disable", dev, rc));
        }

        // SAFETY: valid port with every queue set up.
        let rc = unsafe { sys::rte_eth_dev_start(id) };
        if rc != 0 {
            return Err(rc_error("rte_eth_dev_start", dev, rc));
        }
        inner.started = true;
        if flows {
            match flow::install(id, queues.rx) {
                Ok(rules) => inner.spread = RxSpread::Flows { rules },
                // Validated, then refused: the frames all reach queue 0.
                Err(why) if queues.spread == Spread::Flows => {
                    return Err(DpdkError::Config(format!("{dev}: spread = flows: {why}")));
                }
                Err(why) => inner.spread = RxSpread::Single { why },
            }
        }
        Ok(Ethdev(Arc::new(inner)))
    }

    /// The ethdev port id.
    pub fn port_id(&self) -> u16 {
        self.0.port_id
    }

    /// The device name it was opened by.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Whether the link is up now (`rte_eth_link_get_nowait`: a memif port
    /// is up while its peer is connected); false when the driver fails the
    /// read.
    pub fn link_up(&self) -> bool {
        let mut link = sys::rte_eth_link::default();
        // SAFETY: the port id is a started port of ours; `link` is a valid
        // out-parameter for the duration of the call.
        let rc = unsafe { sys::rte_eth_link_get_nowait(self.0.port_id, &mut link) };
        rc == 0 && link.link_status() != 0
    }

    /// Its MAC address (the configured one, or the device's).
    pub fn mac(&self) -> [u8; 6] {
        self.0.mac
    }

    /// Its NUMA socket (`-1`: any).
    pub fn socket(&self) -> i32 {
        self.0.socket
    }

    /// The pool its receive queues fill mbufs from.
    pub fn pool(&self) -> Pool {
        self.0.pool
    }

    /// Transmit queues (one per worker).
    pub fn queues(&self) -> u16 {
        self.0.tx_queues
    }

    /// Receive queues: one, or one per worker where flow rules spread the
    /// frames ([`Ethdev::spread`]).
    pub fn rx_queues(&self) -> u16 {
        self.0.rx_queues
    }

    /// How the device's frames reach the workers.
    pub fn spread(&self) -> &RxSpread {
        &self.0.spread
    }

    /// The device's driver (`rte_eth_dev_info.driver_name`: `net_null`,
    /// `net_ice`, ...).
    pub fn driver(&self) -> &str {
        &self.0.driver
    }

    /// How its ports make multicast replicas.
    pub fn replication(&self) -> Replication {
        self.0.replication
    }

    fn take_one(&self, taken: &[AtomicBool], queue: u16, what: &str) -> Result<(), DpdkError> {
        let port = self.0.port_id;
        let t = taken.get(queue as usize).ok_or_else(|| {
            DpdkError::Config(format!(
                "ethdev {} has {} {what} queues, not {}",
                self.0.name,
                taken.len(),
                queue + 1
            ))
        })?;
        t.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|_| DpdkError::QueueTaken { port, queue })
    }

    /// Takes the receive queues `rx` and transmit queue `tx`, or none.
    pub(super) fn take(&self, rx: Range<u16>, tx: u16) -> Result<(), DpdkError> {
        for q in rx.clone() {
            if let Err(e) = self.take_one(&self.0.rx_taken, q, "receive") {
                self.release(rx.start..q, None);
                return Err(e);
            }
        }
        if let Err(e) = self.take_one(&self.0.tx_taken, tx, "transmit") {
            self.release(rx, None);
            return Err(e);
        }
        Ok(())
    }

    pub(super) fn release(&self, rx: Range<u16>, tx: Option<u16>) {
        for q in rx {
            self.0.rx_taken[q as usize].store(false, Ordering::Release);
        }
        if let Some(q) = tx {
            self.0.tx_taken[q as usize].store(false, Ordering::Release);
        }
    }
}

/// The ethdev's name as DPDK knows it.
pub(crate) fn device_name(id: u16) -> Option<String> {
    let mut buf = [0 as c_char; sys::RTE_ETH_NAME_MAX_LEN as usize];
    // SAFETY: valid port id; `buf` has RTE_ETH_NAME_MAX_LEN bytes, as the
    // call requires.
    let rc = unsafe { sys::rte_eth_dev_get_name_by_port(id, buf.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: on success the name is NUL-terminated within `buf`.
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_names() {
        assert!(is_pci_name("0000:3b:00.0"));
        assert!(is_pci_name("3b:00.1"));
        assert!(!is_pci_name("net_ring0"));
        assert!(!is_pci_name("net_memif0"));
        assert!(!is_pci_name("0000:3b:00"));
        assert!(!is_pci_name("0000:3b:00.10"));
    }

    #[test]
    fn frame_sizes() {
        assert_eq!(max_frame(None), 1522);
        assert_eq!(max_frame(Some(9000)), 9022);
    }
}
