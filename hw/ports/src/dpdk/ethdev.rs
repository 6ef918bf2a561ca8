//! Ethdevs: configuration and start-up, and their queues as ports.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char};
use std::ops::Range;
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use dpdk_sys as sys;

use super::eal::{DpdkError, Eal, rc_error};
use super::flow::{self, RxSpread, Spread};
use super::mbuf::{Mbuf, Pool, set_frame_start_raw};
use crate::{BURST, Burst, PacketBuf, Port};
use rrp::LinkKind;
use rrp::NativeAddr;

/// MessageWay's EtherType.
pub const ETHERTYPE_MW: u16 = 0x88B5;
/// The EtherType of an IEEE 802.1Q tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// Bytes of an Ethernet II header.
pub const ETH_HLEN: usize = 14;
/// The shortest Ethernet frame without FCS: shorter ones are padded.
pub const MIN_FRAME: usize = 60;

const BROADCAST: [u8; 6] = [0xFF; 6];

/// One ethdev to configure and start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortSpec {
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

impl PortSpec {
    /// The device `device` with 1024 descriptors per ring and its own MAC.
    pub fn new(device: impl Into<String>) -> PortSpec {
        PortSpec {
            device: device.into(),
            rx_ring: 1024,
            tx_ring: 1024,
            mac: None,
            promiscuous: None,
            mtu: None,
        }
    }

    /// Sets the ring sizes.
    pub fn rings(mut self, rx: u16, tx: u16) -> PortSpec {
        self.rx_ring = rx;
        self.tx_ring = tx;
        self
    }

    /// Sets the MAC address.
    pub fn mac(mut self, mac: [u8; 6]) -> PortSpec {
        self.mac = Some(mac);
        self
    }

    /// Sets promiscuous mode.
    pub fn promiscuous(mut self, on: bool) -> PortSpec {
        self.promiscuous = Some(on);
        self
    }

    /// Sets the MTU.
    pub fn mtu(mut self, mtu: u16) -> PortSpec {
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

/// `RTE_ETH_TX_OFFLOAD_MULTI_SEGS` (a function-like macro in C, so not in
/// the bindings): the driver transmits mbuf chains.
pub const TX_OFFLOAD_MULTI_SEGS: u64 = 1 << 15;

/// Drivers of DPDK 22.11 that transmit mbuf chains correctly without
/// advertising [`TX_OFFLOAD_MULTI_SEGS`] (checked in their 22.11 sources and
/// by tests/dpdk_replicate.rs):
///
/// - `net_null`: `eth_null_tx` counts `pkt_len` and frees each chain with
///   `rte_pktmbuf_free` (its `copy=1` mode copies `size` bytes from the first
///   segment into a dummy buffer: wrong bytes, but inside the header mbuf's
///   buffer, and the PMD is a sink);
/// - `net_pcap`: its transmit paths read each chain with `rte_pktmbuf_read`
///   (into a snap-length buffer) before writing or sending it, and the
///   rx-only variant (`eth_tx_drop`) frees chains.
///
/// `net_ring`, `net_memif`, `net_af_packet` and `net_tap` advertise the flag
/// in 22.11; `net_af_xdp` neither advertises it nor copies more than the
/// first segment: copies there, as for every other driver without the flag.
pub const CHAINING_DRIVERS: [&str; 2] = ["net_null", "net_pcap"];

/// How a [`DpdkPort`] makes the copies of a group packet
/// ([`Port::replicate`]): decided per device when it is started, from its
/// driver's transmit capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replication {
    /// Chains, a header mbuf then the packet's own (shared) mbuf (no copy of
    /// the payload); the driver advertises [`TX_OFFLOAD_MULTI_SEGS`], which
    /// is enabled on the device.
    ChainOffload,
    /// Chains, on a driver that transmits them without advertising it
    /// ([`CHAINING_DRIVERS`]).
    ChainDriver,
    /// A copy of the packet in one mbuf: the driver may not transmit
    /// chains, or [`StartOptions::chains`] is off.
    Copy,
}

impl Replication {
    /// The mode for a device of `driver` with transmit capabilities
    /// `tx_offload_capa`, when chains are wanted (`chains`).
    pub fn for_driver(driver: &str, tx_offload_capa: u64, chains: bool) -> Replication {
        if !chains {
            Replication::Copy
        } else if tx_offload_capa & TX_OFFLOAD_MULTI_SEGS != 0 {
            Replication::ChainOffload
        } else if CHAINING_DRIVERS.contains(&driver) {
            Replication::ChainDriver
        } else {
            Replication::Copy
        }
    }

    /// Whether replicas are chains.
    pub fn chains(self) -> bool {
        self != Replication::Copy
    }

    /// For logs: "chain (MULTI_SEGS offload)", ...
    pub fn describe(self) -> &'static str {
        match self {
            Replication::ChainOffload => "chain (tx offload MULTI_SEGS)",
            Replication::ChainDriver => "chain (driver transmits chains)",
            Replication::Copy => "copy",
        }
    }
}

impl std::fmt::Display for Replication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// Group packets shorter than this (the MessageWay packet, without its
/// Ethernet header) are replicated by copy even on chaining ports: their
/// frame needs padding after the packet, which a replica sharing the
/// packet's buffer cannot write.
pub const CHAIN_MIN_LEN: usize = MIN_FRAME - ETH_HLEN;

/// The default [`StartOptions::chain_min_len`]: below this a copy was
/// measured faster than a chain (engine-bench's DPDK multicast variants,
/// docs/performance.md "Multicast replication").
pub const CHAIN_FROM_LEN: usize = 256;

/// The pool a chaining port's replica headers come from: header mbufs (data
/// room `2 × RTE_PKTMBUF_HEADROOM`, as DPDK's `ipv4_multicast`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ChainPools {
    headers: Pool,
}

/// Per-queue software counters of a [`DpdkPort`]: frames the port dropped
/// before they became packets (they never reach the engine's counters).
#[derive(Debug, Default)]
#[repr(align(64))]
struct QueueCounters {
    not_mw: AtomicU64,
    runt: AtomicU64,
    multiseg: AtomicU64,
    not_for_us: AtomicU64,
    linearized: AtomicU64,
    unshared: AtomicU64,
    replicas_chained: AtomicU64,
    replicas_copied: AtomicU64,
}

#[inline(always)]
fn bump(c: &AtomicU64, n: u64) {
    if n != 0 {
        // One writer per queue: a plain load and store, no locked RMW.
        c.store(c.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }
}

/// Port statistics: the ethdev's (`rte_eth_stats_get`) and the frames the
/// backend dropped on receive (summed over queues).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames received by the device.
    pub ipackets: u64,
    /// Frames transmitted by the device.
    pub opackets: u64,
    /// Bytes received.
    pub ibytes: u64,
    /// Bytes transmitted.
    pub obytes: u64,
    /// Frames the device dropped because the rx queues were full.
    pub imissed: u64,
    /// Erroneous frames received (e.g. bad FCS), dropped by the device.
    pub ierrors: u64,
    /// Failed transmissions.
    pub oerrors: u64,
    /// Receive mbuf allocation failures.
    pub rx_nombuf: u64,
    /// Frames dropped by the backend: EtherType not 0x88B5 (after at most one
    /// 802.1Q tag).
    pub rx_not_mw: u64,
    /// Frames dropped by the backend: shorter than their Ethernet header.
    pub rx_runt: u64,
    /// Frames dropped by the backend: spread over several segments (or
    /// sharing their buffer) and too long for one mbuf of the port's pool,
    /// or no mbuf was free to copy them into.
    pub rx_multiseg: u64,
    /// Frames dropped by the backend: unicast to another MAC (seen in
    /// promiscuous mode).
    pub rx_not_for_us: u64,
    /// Chains received (e.g. another port's multicast replicas over an
    /// in-process ring, or memif) and made one segment before the engine
    /// saw them: in place (`rte_pktmbuf_linearize`) when the first segment
    /// had the room, else copied into a new mbuf.
    pub rx_linearized: u64,
    /// Single-segment frames whose buffer was shared (an mbuf with
    /// references from clones, or an indirect one: the original of a
    /// replicated packet passed by pointer), copied before the engine writes
    /// into them.
    pub rx_unshared: u64,
    /// Multicast replicas made as chains (zero copy), see [`Replication`].
    pub replicas_chained: u64,
    /// Multicast replicas made as copies (copying ports, packets shorter
    /// than [`CHAIN_MIN_LEN`], or a chain pool ran empty).
    pub replicas_copied: u64,
}

/// What the queues of one ethdev share.
#[derive(Debug)]
struct Inner {
    port_id: u16,
    name: String,
    socket: i32,
    mac: [u8; 6],
    pool: Pool,
    driver: String,
    replication: Replication,
    chain: Option<ChainPools>,
    chain_min: usize,
    rx_queues: u16,
    tx_queues: u16,
    spread: RxSpread,
    rx_taken: Box<[AtomicBool]>,
    tx_taken: Box<[AtomicBool]>,
    /// Per transmit queue (one writer each: the port that owns it).
    counters: Box<[QueueCounters]>,
    started: bool,
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
pub struct Ethdev(Arc<Inner>);

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
        specs: &[PortSpec],
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
        spec: &PortSpec,
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
    fn take(&self, rx: Range<u16>, tx: u16) -> Result<(), DpdkError> {
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

    fn release(&self, rx: Range<u16>, tx: Option<u16>) {
        for q in rx {
            self.0.rx_taken[q as usize].store(false, Ordering::Release);
        }
        if let Some(q) = tx {
            self.0.tx_taken[q as usize].store(false, Ordering::Release);
        }
    }

    /// Queue pair `queue` (receive and transmit queue `queue`) as a
    /// MessageWay port.
    pub fn port(&self, queue: u16) -> Result<DpdkPort, DpdkError> {
        self.port_with(queue..queue + 1, queue)
    }

    /// A MessageWay port of transmit queue `tx` and the receive queues `rx`
    /// (polled in turn; empty: this port receives nothing). A worker
    /// transmits on every port but receives from its own queue of a port
    /// that flow rules spread, and from every queue of a port it owns
    /// otherwise (docs/backends.md "More than one worker").
    pub fn port_with(&self, rx: Range<u16>, tx: u16) -> Result<DpdkPort, DpdkError> {
        self.take(rx.clone(), tx)?;
        Ok(DpdkPort {
            port_id: self.0.port_id,
            rx_first: rx.start,
            rx_count: rx.end.saturating_sub(rx.start),
            rx_next: 0,
            queue: tx,
            mac: self.0.mac,
            own: mac_word(self.0.mac),
            eth_tail: eth_tail(self.0.mac),
            pool: self.0.pool,
            chain: self.0.chain,
            chain_min: self.0.chain_min,
            spare: Spares::default(),
            dev: self.clone(),
        })
    }

    /// Every queue pair as a MessageWay port, in queue order.
    pub fn ports(&self) -> Result<Vec<DpdkPort>, DpdkError> {
        (0..self.0.rx_queues.min(self.0.tx_queues))
            .map(|q| self.port(q))
            .collect()
    }

    /// Queue pair `queue` for whole frames, without MessageWay
    /// encapsulation (tests, packet generators).
    pub fn raw_queue(&self, queue: u16) -> Result<RawQueue, DpdkError> {
        self.take(queue..queue + 1, queue)?;
        Ok(RawQueue {
            port_id: self.0.port_id,
            queue,
            pool: self.0.pool,
            dev: self.clone(),
        })
    }

    /// The statistics now (readable from any thread).
    pub fn stats(&self) -> Result<PortStats, DpdkError> {
        let mut s = sys::rte_eth_stats::default();
        // SAFETY: valid port; `s` is a valid out-pointer.
        let rc = unsafe { sys::rte_eth_stats_get(self.0.port_id, &mut s) };
        if rc != 0 {
            return Err(rc_error("rte_eth_stats_get", self.0.name.as_str(), rc));
        }
        let mut st = PortStats {
            ipackets: s.ipackets,
            opackets: s.opackets,
            ibytes: s.ibytes,
            obytes: s.obytes,
            imissed: s.imissed,
            ierrors: s.ierrors,
            oerrors: s.oerrors,
            rx_nombuf: s.rx_nombuf,
            ..PortStats::default()
        };
        for c in self.0.counters.iter() {
            st.rx_not_mw += c.not_mw.load(Ordering::Relaxed);
            st.rx_runt += c.runt.load(Ordering::Relaxed);
            st.rx_multiseg += c.multiseg.load(Ordering::Relaxed);
            st.rx_not_for_us += c.not_for_us.load(Ordering::Relaxed);
            st.rx_linearized += c.linearized.load(Ordering::Relaxed);
            st.rx_unshared += c.unshared.load(Ordering::Relaxed);
            st.replicas_chained += c.replicas_chained.load(Ordering::Relaxed);
            st.replicas_copied += c.replicas_copied.load(Ordering::Relaxed);
        }
        Ok(st)
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

/// Receives up to the free room of `out` from (port, queue) with one
/// How many packets ahead of the one being checked [`rx_into`] prefetches.
const PREFETCH_AHEAD: usize = 4;

/// Asks for the first cache line of a received mbuf's data (the Ethernet
/// and EEP headers), as DPDK's l3fwd does (`rte_prefetch0`).
#[inline(always)]
fn prefetch_data(m: *mut sys::rte_mbuf) {
    // SAFETY: `m` is a valid mbuf the driver just handed over: its fields
    // are readable. A prefetch never faults, whatever the address.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        let p = (*m).buf_addr.cast::<i8>().add((*m).data_off as usize);
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = m;
}

/// `rte_eth_rx_burst` written straight into `out`'s spare capacity; each
/// new mbuf is passed to `keep`, which returns the mbuf to keep (itself or
/// a replacement) or `None` when it disposed of it (freed it). The kept ones
/// stay in order.
#[inline(always)]
fn rx_into(
    port: u16,
    queue: u16,
    out: &mut Burst<Mbuf>,
    mut keep: impl FnMut(*mut sys::rte_mbuf) -> Option<*mut sys::rte_mbuf>,
) -> usize {
    let have = out.len();
    let room = BURST - have;
    if room == 0 {
        return 0;
    }
    // `Mbuf` is a transparent NonNull<rte_mbuf>: the spare capacity of
    // `out` is an array of `room` rte_mbuf pointer slots.
    // SAFETY: have <= BURST, so the pointer stays within (or one past) the
    // ArrayVec's buffer.
    let base = unsafe { out.as_mut_ptr().add(have) }.cast::<*mut sys::rte_mbuf>();
    // SAFETY: (port, queue) is a started queue that this thread owns (the
    // queue was taken by exactly one DpdkPort/RawQueue); `base` has room for
    // `room` pointers.
    let n = unsafe { sys::mw_eth_rx_burst(port, queue, base, room as u16) } as usize;
    // The first packets' data is asked for before the first is looked at;
    // then, while packet i is checked, that of packet i + PREFETCH_AHEAD
    // (the misses overlap instead of coming one packet at a time).
    for i in 0..n.min(PREFETCH_AHEAD) {
        // SAFETY: the driver wrote n valid mbuf pointers at base[..n].
        prefetch_data(unsafe { *base.add(i) });
    }
    let mut kept = 0;
    for i in 0..n {
        if i + PREFETCH_AHEAD < n {
            // SAFETY: as above, i + PREFETCH_AHEAD < n.
            prefetch_data(unsafe { *base.add(i + PREFETCH_AHEAD) });
        }
        // SAFETY: the driver wrote n valid mbuf pointers at base[..n].
        let m = unsafe { *base.add(i) };
        if let Some(m) = keep(m) {
            // SAFETY: kept <= i < n <= room: inside the spare capacity.
            unsafe { *base.add(kept) = m };
            kept += 1;
        }
    }
    // SAFETY: slots have..have + kept hold owned, non-null mbuf pointers,
    // i.e. valid `Mbuf`s (repr(transparent)).
    unsafe { out.set_len(have + kept) };
    kept
}

/// Transmits the front of `pkts` with one `rte_eth_tx_burst` over its
/// pointers, then removes the sent ones (now the driver's) without dropping
/// them, keeping the unsent in order.
#[inline(always)]
fn tx_from(port: u16, queue: u16, pkts: &mut Burst<Mbuf>) -> usize {
    let len = pkts.len();
    if len == 0 {
        return 0;
    }
    let p = pkts.as_mut_ptr().cast::<*mut sys::rte_mbuf>();
    // SAFETY: (port, queue) is a started queue owned by this thread; `p`
    // points to `len` owned mbuf pointers (repr(transparent)).
    let sent = unsafe { sys::mw_eth_tx_burst(port, queue, p, len as u16) } as usize;
    if sent > 0 {
        // SAFETY: the first `sent` mbufs belong to the driver now: the
        // unsent ones move to the front (overlapping copy) and the length
        // shrinks, so no Mbuf is dropped or duplicated. Nothing between the
        // burst and set_len can panic.
        unsafe {
            ptr::copy(p.add(sent), p, len - sent);
            pkts.set_len(len - sent);
        }
    }
    sent
}

/// One queue pair of an ethdev as a MessageWay port on an Ethernet SAN:
/// Ethernet II frames of EtherType 0x88B5, at most one 802.1Q tag on
/// receive, none on transmit. Owned by one worker thread (which should have
/// called [`register_thread`](super::register_thread)).
#[derive(Debug)]
pub struct DpdkPort {
    port_id: u16,
    /// The first receive queue this port polls.
    rx_first: u16,
    /// How many (0: another worker receives from this port).
    rx_count: u16,
    /// The queue (from `rx_first`) polled first next time: a full burst
    /// from one queue must not starve the others.
    rx_next: u16,
    /// The transmit queue (this worker's), which also indexes the counters.
    queue: u16,
    mac: [u8; 6],
    /// `mac` as [`decap`] compares it.
    own: u64,
    /// What follows the destination MAC in every header this port writes:
    /// its MAC and EtherType 0x88B5.
    eth_tail: [u8; 8],
    pool: Pool,
    /// Where chained replicas come from (`None`: this port copies).
    chain: Option<ChainPools>,
    /// Packets shorter than this are copied ([`StartOptions::chain_min_len`]).
    chain_min: usize,
    /// Empty mbufs for replicas, allocated a burst at a time: of the
    /// port's pool (copies), and of the header pool (chains).
    spare: Spares,
    dev: Ethdev,
}

impl Drop for DpdkPort {
    fn drop(&mut self) {
        self.dev.release(
            self.rx_first..self.rx_first + self.rx_count,
            Some(self.queue),
        );
    }
}

/// Empty mbufs a port keeps for its replicas, taken from their pools a
/// burst at a time (`rte_pktmbuf_alloc_bulk`: one pool access and one FFI
/// call per 32 instead of per mbuf), freed with the port: of the port's
/// pool for copies, of the header pool for chains (used by `encap`, which
/// takes `&self`, too: a `RefCell`, the port being one thread's).
#[derive(Debug, Default)]
struct Spares {
    copies: Burst<Mbuf>,
    headers: RefCell<Burst<Mbuf>>,
}

/// One empty mbuf of `pool`, from `spare` (refilled with a burst when
/// empty; one at a time when the pool has less than a burst left).
#[inline(always)]
fn take(spare: &mut Burst<Mbuf>, pool: Pool) -> Option<Mbuf> {
    if let Some(m) = spare.pop() {
        return Some(m);
    }
    refill(spare, pool)
}

#[cold]
#[inline(never)]
fn refill(spare: &mut Burst<Mbuf>, pool: Pool) -> Option<Mbuf> {
    if pool.alloc_burst(spare, BURST) == 0 {
        return pool.alloc();
    }
    spare.pop()
}

/// Where a copied replica's data starts in its buffer: 64 + 14 bytes in,
/// so that the Ethernet header (64..78) and the first 50 bytes of the
/// packet share one cache line, a whole 64-byte frame one line (mbuf
/// buffers are cache-line aligned), instead of the header's 14 bytes in the
/// line before the default headroom's. Leaves 78 bytes of headroom, more
/// than the header needs.
const COPY_DATA_START: u16 = 64 + ETH_HLEN as u16;

/// Why [`decap`] (or [`private_copy`]) refused a frame.
enum Refused {
    NotMw,
    Runt,
    Multiseg,
    NotForUs,
}

/// Whether the engine may not take `m` as it is: a chain, or a buffer that
/// others share (a reference count above 1, or an indirect mbuf), into
/// which the engine's EI update would write. Never true of what a NIC
/// delivers; true of multicast replicas passed by pointer (in-process
/// rings) or of chains from memif.
#[inline(always)]
fn shared_or_chained(m: &sys::rte_mbuf) -> bool {
    m.nb_segs != 1 || m.refcnt != 1 || m.ol_flags & sys::RTE_MBUF_F_INDIRECT != 0
}

/// What [`private_copy`] did.
enum Private {
    Linearized,
    Unshared,
}

/// Makes a received chain or shared mbuf one private segment: a chain whose
/// first segment is its own (direct, one reference) and has the tailroom is
/// linearized in place (`rte_pktmbuf_linearize`: the later segments are
/// copied after the first and freed); anything else is copied into a new
/// mbuf of `pool` with its receive flags, and freed. On failure `m` is
/// freed and the frame refused (counted as multi-segment).
#[cold]
#[inline(never)]
fn private_copy(
    m: *mut sys::rte_mbuf,
    pool: Pool,
) -> Result<(*mut sys::rte_mbuf, Private), Refused> {
    // SAFETY: `m` is a valid mbuf (chain) just received, owned by the
    // caller, which gives it to this function.
    let own = unsafe { Mbuf::from_raw(ptr::NonNull::new_unchecked(m)) };
    let chain = own.nb_segs() != 1;
    let how = if chain {
        Private::Linearized
    } else {
        Private::Unshared
    };
    if chain && own.refcnt() == 1 && own.ol_flags() & NOT_OWN_BUFFER == 0 {
        // SAFETY: a chain whose first segment's buffer is this mbuf's alone:
        // the copy goes into that buffer's tailroom (checked by the call,
        // which changes nothing when it is too small).
        if unsafe { sys::mw_pktmbuf_linearize(own.as_ptr()) } == 0 {
            return Ok((own.into_raw().as_ptr(), how));
        }
    }
    match own.copy_into(pool) {
        // `own` is dropped: the chain (or the reference) is freed.
        Some(n) => Ok((n.into_raw().as_ptr(), how)),
        None => Err(Refused::Multiseg),
    }
}

/// `ol_flags` of an mbuf whose data buffer is not its own.
const NOT_OWN_BUFFER: u64 = sys::RTE_MBUF_F_INDIRECT | sys::RTE_MBUF_F_EXTERNAL;

/// Strips the Ethernet header (and one 802.1Q tag) of a received frame and
/// records where the frame started (the source MAC stays there, in the
/// headroom: [`Mbuf::native_src`](ports::PacketBuf::native_src)), or says
/// why the frame is refused. `own` is the port's MAC as the low 48 bits of a
/// little-endian u64 (the first 8 bytes of a frame, masked).
#[inline(always)]
fn decap(m: *mut sys::rte_mbuf, own: u64) -> Result<(), Refused> {
    // SAFETY: `m` is a valid mbuf just received and owned by the caller;
    // nothing else borrows it while `mb` lives.
    let mb = unsafe { &mut *m };
    debug_assert_eq!(mb.nb_segs, 1, "chains are made contiguous first");
    let len = mb.data_len as usize;
    if len < ETH_HLEN {
        return Err(Refused::Runt);
    }
    let start = mb.data_off;
    // SAFETY: a single-segment mbuf's data is data_len >= 14 bytes at
    // buf_addr + data_off: the 8-byte read at 0 and the 2-byte one at 12
    // stay inside it.
    let (head, et) = unsafe {
        let p = mb.buf_addr.cast::<u8>().add(start as usize);
        (
            u64::from_le_bytes(p.cast::<[u8; 8]>().read_unaligned()),
            u16::from_be_bytes(p.add(12).cast::<[u8; 2]>().read_unaligned()),
        )
    };
    // The group bit is the low bit of the first byte.
    let dst = head & 0xFFFF_FFFF_FFFF;
    if dst & 1 == 0 && dst != own {
        return Err(Refused::NotForUs);
    }
    let mut hl = ETH_HLEN as u16;
    let mut et = et;
    if et == ETHERTYPE_VLAN {
        if len < ETH_HLEN + 4 {
            return Err(Refused::Runt);
        }
        hl += 4;
        // SAFETY: data_len >= 18, so bytes 16..18 are inside the data.
        et = u16::from_be_bytes(unsafe {
            mb.buf_addr
                .cast::<u8>()
                .add(start as usize + 16)
                .cast::<[u8; 2]>()
                .read_unaligned()
        });
    }
    if et != ETHERTYPE_MW {
        return Err(Refused::NotMw);
    }
    // rte_pktmbuf_adj on the single segment, without a call per packet
    // (hl <= data_len).
    mb.data_off += hl;
    mb.data_len -= hl;
    mb.pkt_len -= u32::from(hl);
    set_frame_start_raw(m, Some(start));
    Ok(())
}

/// The source MAC and EtherType 0x88B5 of the headers a port with `mac`
/// writes.
fn eth_tail(mac: [u8; 6]) -> [u8; 8] {
    let mut t = [0u8; 8];
    t[..6].copy_from_slice(&mac);
    t[6..].copy_from_slice(&ETHERTYPE_MW.to_be_bytes());
    t
}

/// A MAC as the low 48 bits of a little-endian u64 (see [`decap`]).
fn mac_word(mac: [u8; 6]) -> u64 {
    let mut w = [0u8; 8];
    w[..6].copy_from_slice(&mac);
    u64::from_le_bytes(w)
}

impl DpdkPort {
    /// The ethdev port id.
    pub fn port_id(&self) -> u16 {
        self.port_id
    }

    /// The transmit queue.
    pub fn queue(&self) -> u16 {
        self.queue
    }

    /// The receive queues it polls (empty: another worker receives from
    /// this port).
    pub fn rx_queues(&self) -> Range<u16> {
        self.rx_first..self.rx_first + self.rx_count
    }

    /// The ethdev this queue belongs to (for statistics).
    pub fn ethdev(&self) -> &Ethdev {
        &self.dev
    }

    /// The pool this port allocates from.
    pub fn pool(&self) -> Pool {
        self.pool
    }

    /// The port's statistics now.
    pub fn stats(&self) -> Result<PortStats, DpdkError> {
        self.dev.stats()
    }

    /// How this port makes multicast replicas.
    pub fn replication(&self) -> Replication {
        self.dev.0.replication
    }

    /// Packets shorter than this are replicated by copy even when the port
    /// chains ([`StartOptions::chain_min_len`], at least [`CHAIN_MIN_LEN`]).
    pub fn chain_min_len(&self) -> usize {
        self.chain_min
    }

    /// The header pool of a chaining port (statistics, tests).
    pub fn header_pool(&self) -> Option<Pool> {
        self.chain.map(|c| c.headers)
    }

    /// Gives the spare mbufs this port keeps for replicas (at most 32 per
    /// pool, taken a burst at a time) back to their pools: for accounts of
    /// the pools (tests); the port takes new ones when it needs them.
    pub fn release_spares(&mut self) {
        super::mbuf::free_burst(&mut self.spare.copies);
        super::mbuf::free_burst(&mut self.spare.headers.borrow_mut());
    }

    /// `encap` of a packet whose mbuf replicas share
    /// ([`Mbuf::share_chain`]): its fields may not change, so on a chaining
    /// port the Ethernet header goes into a header mbuf put in front of it
    /// (which takes over the caller's reference), and on a copying port the
    /// packet is copied first.
    #[inline(never)]
    fn encap_shared(&self, buf: &mut Mbuf, dmac: &[u8; 6]) -> bool {
        match self.chain {
            Some(c) => {
                let h = take(&mut self.spare.headers.borrow_mut(), c.headers);
                let Some(h) = h else {
                    return false;
                };
                let orig = std::mem::replace(buf, h);
                buf.chain_after(orig);
                buf.push_eth(dmac, self.eth_tail)
            }
            None => {
                let Some(copy) = buf.copy_into(self.pool) else {
                    return false;
                };
                // The caller's reference to the shared packet is dropped.
                *buf = copy;
                let short = buf.pkt_len() + ETH_HLEN < MIN_FRAME;
                if short && !buf.pad_to(MIN_FRAME - ETH_HLEN) {
                    return false;
                }
                buf.push_eth(dmac, self.eth_tail)
            }
        }
    }

    /// A replica of `buf` as a copy in one mbuf of this port's pool (the
    /// packet's bytes only: `encap` clears the receive flags anyway), its
    /// frame aligned on a cache line ([`COPY_DATA_START`]).
    #[inline]
    fn replicate_copy(&mut self, buf: &Mbuf) -> Option<Mbuf> {
        let r = if buf.nb_segs() == 1 {
            let mut r = take(&mut self.spare.copies, self.pool)?;
            r.set_data_start(COPY_DATA_START);
            r.append(buf.len())?.copy_from_slice(buf.data());
            r
        } else {
            buf.copy_into(self.pool)?
        };
        let q = &self.dev.0.counters[self.queue as usize];
        bump(&q.replicas_copied, 1);
        Some(r)
    }
}

impl DpdkPort {
    /// One `rte_eth_rx_burst` of receive queue `queue` into the free slots
    /// of `out`, each frame checked and decapsulated ([`Port::rx_burst`]).
    #[inline(always)]
    fn rx_queue(&mut self, queue: u16, out: &mut Burst<Mbuf>) {
        let (mut not_mw, mut runt, mut multiseg, mut not_for_us) = (0, 0, 0, 0);
        let (mut linearized, mut unshared) = (0, 0);
        let own = self.own;
        let pool = self.pool;
        rx_into(self.port_id, queue, out, |m| {
            // SAFETY: `m` is a valid mbuf just received; only read here.
            let m = if shared_or_chained(unsafe { &*m }) {
                match private_copy(m, pool) {
                    Ok((p, Private::Linearized)) => {
                        linearized += 1;
                        p
                    }
                    Ok((p, Private::Unshared)) => {
                        unshared += 1;
                        p
                    }
                    Err(_) => {
                        multiseg += 1;
                        return None;
                    }
                }
            } else {
                m
            };
            match decap(m, own) {
                Ok(()) => Some(m),
                Err(r) => {
                    match r {
                        Refused::NotMw => not_mw += 1,
                        Refused::Runt => runt += 1,
                        Refused::Multiseg => multiseg += 1,
                        Refused::NotForUs => not_for_us += 1,
                    }
                    // SAFETY: the driver (or private_copy) handed us this
                    // mbuf; nobody else has it.
                    unsafe { sys::mw_pktmbuf_free(m) };
                    None
                }
            }
        });
        if not_mw + runt + multiseg + not_for_us + linearized + unshared != 0 {
            let c = &self.dev.0.counters[self.queue as usize];
            bump(&c.not_mw, not_mw);
            bump(&c.runt, runt);
            bump(&c.multiseg, multiseg);
            bump(&c.not_for_us, not_for_us);
            bump(&c.linearized, linearized);
            bump(&c.unshared, unshared);
        }
    }
}

impl Port for DpdkPort {
    type Buf = Mbuf;

    /// One `rte_eth_rx_burst` into the free slots of `out` (per receive
    /// queue the port polls, until `out` is full); then each frame is
    /// checked and its Ethernet header stripped (see [`PortStats`] for the
    /// frames refused, which are freed and counted here).
    #[inline]
    fn rx_burst(&mut self, out: &mut Burst<Mbuf>) {
        match self.rx_count {
            0 => {}
            1 => self.rx_queue(self.rx_first, out),
            n => {
                // Every queue in turn, from a different one each time,
                // until the burst is full.
                let first = self.rx_next;
                self.rx_next = (first + 1) % n;
                for i in 0..n {
                    if out.len() == BURST {
                        break;
                    }
                    self.rx_queue(self.rx_first + (first + i) % n, out);
                }
            }
        }
    }

    #[inline]
    fn tx_burst(&mut self, pkts: &mut Burst<Mbuf>) -> usize {
        tx_from(self.port_id, self.queue, pkts)
    }

    /// Prepends destination MAC (`dst`: 6 bytes; empty: broadcast), own MAC
    /// and EtherType 0x88B5; pads frames shorter than 60 bytes with zeros.
    /// Clears the receive-error flags ([`RX_ERROR_FLAGS`]).
    #[inline(always)]
    fn encap(&self, buf: &mut Mbuf, dst: &NativeAddr) -> bool {
        let dmac = match dst.mac_ref() {
            Some(m) => m,
            None if dst.is_empty() => &BROADCAST,
            None => return false,
        };
        self.encap_mac(buf, dmac)
    }

    /// [`Port::encap`] to the MAC `dmac`.
    #[inline(always)]
    fn encap_mac(&self, buf: &mut Mbuf, dmac: &[u8; 6]) -> bool {
        // Shared by replicas (never by what a NIC delivers): a header in
        // front, or a copy.
        if buf.refcnt() != 1 && buf.nb_segs() == 1 {
            return self.encap_shared(buf, dmac);
        }
        // The whole packet's length: a replica's first segment is an empty
        // header mbuf (the packet is in the next one).
        let short = buf.pkt_len() + ETH_HLEN < MIN_FRAME;
        if short && (buf.headroom() < ETH_HLEN || !buf.pad_to(MIN_FRAME - ETH_HLEN)) {
            return false;
        }
        buf.push_eth(dmac, self.eth_tail)
    }

    /// A replica of `buf` for this port: on a chaining port
    /// ([`Replication`]) a header mbuf chained to `buf`'s own mbuf, whose
    /// reference count goes up (no payload copy; [`Mbuf::share_chain`],
    /// what DPDK's `ipv4_multicast` does for more than two ports), else,
    /// and for packets shorter than [`StartOptions::chain_min_len`] or when
    /// the header pool is empty, a copy in one mbuf of this port's pool.
    /// Counted in [`PortStats::replicas_chained`] /
    /// [`PortStats::replicas_copied`]. Once shared, `buf` may only be
    /// encapsulated (which then puts its header in front of it, see
    /// [`Port::encap`]) or dropped.
    #[inline]
    fn replicate(&mut self, buf: &Mbuf) -> Option<Mbuf> {
        if let Some(c) = self.chain
            && buf.pkt_len() >= self.chain_min
        {
            let headers = self.spare.headers.get_mut();
            if let Some(h) = take(headers, c.headers) {
                match buf.share_chain(h) {
                    Ok(r) => {
                        let q = &self.dev.0.counters[self.queue as usize];
                        bump(&q.replicas_chained, 1);
                        return Some(r);
                    }
                    Err(h) => headers.push(h),
                }
            }
        }
        self.replicate_copy(buf)
    }

    #[inline]
    fn alloc(&mut self) -> Option<Mbuf> {
        self.pool.alloc()
    }

    #[inline]
    fn alloc_burst(&mut self, out: &mut Burst<Mbuf>, n: usize) -> usize {
        self.pool.alloc_burst(out, n)
    }

    #[inline]
    fn recycle_burst(&mut self, bufs: &mut Burst<Mbuf>) {
        super::mbuf::free_burst(bufs);
    }

    fn native_addr(&self) -> NativeAddr {
        NativeAddr::mac(self.mac)
    }

    fn link_kind(&self) -> LinkKind {
        LinkKind::Ethernet
    }
}

/// One queue pair of an ethdev for whole frames: no decap, no filter, no
/// encap. For tests (the "host" end of a [`ring_pair`](super::ring_pair))
/// and packet generators. Owned by one thread at a time.
#[derive(Debug)]
pub struct RawQueue {
    port_id: u16,
    queue: u16,
    pool: Pool,
    dev: Ethdev,
}

impl Drop for RawQueue {
    fn drop(&mut self) {
        self.dev
            .release(self.queue..self.queue + 1, Some(self.queue));
    }
}

impl RawQueue {
    /// Receives up to the free room of `out` (one `rte_eth_rx_burst`);
    /// returns how many. The mbufs carry no native source.
    pub fn rx_burst(&mut self, out: &mut Burst<Mbuf>) -> usize {
        rx_into(self.port_id, self.queue, out, |m| {
            set_frame_start_raw(m, None);
            Some(m)
        })
    }

    /// Transmits from the front of `pkts` (one `rte_eth_tx_burst`); the sent
    /// ones are removed, the unsent stay. Returns how many were sent.
    pub fn tx_burst(&mut self, pkts: &mut Burst<Mbuf>) -> usize {
        tx_from(self.port_id, self.queue, pkts)
    }

    /// Sends one frame (a copy of `frame`); false when no mbuf was free or
    /// the queue was full.
    pub fn send_frame(&mut self, frame: &[u8]) -> bool {
        let Some(m) = self.pool.mbuf_from(frame) else {
            return false;
        };
        self.send(m).is_ok()
    }

    /// Sends one mbuf; gives it back when the queue was full.
    pub fn send(&mut self, m: Mbuf) -> Result<(), Mbuf> {
        let mut b = Burst::new();
        b.push(m);
        if self.tx_burst(&mut b) == 1 {
            Ok(())
        } else {
            Err(b.pop().expect("unsent mbuf"))
        }
    }

    /// An empty mbuf from the ethdev's pool.
    pub fn alloc(&mut self) -> Option<Mbuf> {
        self.pool.alloc()
    }

    /// The ethdev's MAC address.
    pub fn mac(&self) -> [u8; 6] {
        self.dev.0.mac
    }

    /// The pool of the ethdev.
    pub fn pool(&self) -> Pool {
        self.pool
    }

    /// The ethdev this queue belongs to.
    pub fn ethdev(&self) -> &Ethdev {
        &self.dev
    }
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
