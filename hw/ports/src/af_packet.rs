//! MessageWay over Ethernet through AF_PACKET with mmap'ed rings
//! (docs/architecture.md "Wire"; docs/backends.md "AF_PACKET").
//!
//! One packet socket per port, bound to one interface and to EtherType
//! 0x88B5 (`rrp::encap::ETHERTYPE`), so that the kernel hands it MessageWay
//! frames only. Needs CAP_NET_RAW.
//!
//! - Rings: a TPACKET_V2 receive ring (V2, not V3: V3 hands blocks over
//!   when full or when the block timer expires, which adds milliseconds of
//!   latency at low rates) and a TPACKET_V2 transmit ring, mapped with one
//!   `mmap` (receive ring first, as the kernel lays them out). Frames are a
//!   power of two (at least 2048 bytes, enough for the interface's MTU),
//!   blocks are one page or one frame, whichever is larger.
//! - Receive: frames with TP_STATUS_USER are copied (after the Ethernet
//!   header and an 802.1Q/802.1ad tag if one is still in the frame) into
//!   pooled [`HeapBuf`]s, with the source MAC as native source, and handed
//!   back to the kernel (TP_STATUS_KERNEL, release ordering). Padding of
//!   short frames is kept: the engine trims the packet from its DL.
//! - Transmit: each packet (Ethernet header prepended by `encap`) is copied
//!   into the next free transmit frame (padded to 60 bytes) and marked
//!   TP_STATUS_SEND_REQUEST; one `send(fd, NULL, 0, MSG_DONTWAIT)` per
//!   burst makes the kernel transmit them all. PACKET_QDISC_BYPASS is set
//!   when the kernel has it; PACKET_LOSS makes the kernel skip (not stall
//!   on) a frame it cannot send.
//! - No per-packet receive error flag: frames with bad FCS never reach a
//!   packet socket (unless the NIC is put in rx-all mode), and the
//!   TP_STATUS bits are about checksum offload of IP, VLAN, timestamps and
//!   socket-wide loss (TP_STATUS_LOSING, counted in [`AfPacketStats`]).
//!   A frame longer than the ring's frame is delivered truncated (counted,
//!   not flagged): the engine drops it as truncated from its DL.
//! - The link's counters ([`Port::link_stats`]): the frames the kernel
//!   dropped because the receive ring was full (PACKET_STATISTICS, read and
//!   accumulated there: one system call, never per burst), the bytes of the
//!   frames taken off the receive ring and queued on the transmit ring, and
//!   the packets the port could not send.

use core::ffi::{c_int, c_void};
use core::fmt;
use core::mem::{size_of, zeroed};
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use memmap2::{MmapOptions, MmapRaw};

use crate::heap::{BufPool, DEFAULT_BUF_SIZE, DEFAULT_HEADROOM, HeapBuf};
use crate::{Burst, PacketBuf, Port};
use rrp::NativeAddr;
use rrp::{LinkKind, LinkStats};

/// EtherType of MessageWay over Ethernet II.
pub const ETHERTYPE: u16 = rrp::encap::ETHERTYPE;
/// Ethernet II header length.
pub const ETH_HLEN: usize = rrp::encap::ETH_HEADER_LEN;
/// Shortest Ethernet frame (without FCS): shorter frames are padded.
pub const ETH_ZLEN: usize = rrp::encap::ETH_MIN_FRAME;
/// The broadcast MAC, the destination of a packet for every member.
pub const BROADCAST: [u8; 6] = [0xff; 6];

const ETH_P_8021Q: u16 = rrp::encap::ETHERTYPE_VLAN;
const ETH_P_8021AD: u16 = 0x88A8;
const VLAN_HLEN: usize = 4;
/// Where the kernel reads a V2 transmit frame's data (no PACKET_TX_HAS_OFF):
/// after the tpacket2_hdr, i.e. TPACKET2_HDRLEN - sizeof(sockaddr_ll).
const TX_DATA_OFF: usize = libc::TPACKET2_HDRLEN - size_of::<libc::sockaddr_ll>();
/// The largest offset of the MAC header in a V2 receive frame:
/// TPACKET_ALIGN(TPACKET2_HDRLEN + 16) (the kernel aligns the network header).
const RX_MAC_OFF_MAX: usize = (libc::TPACKET2_HDRLEN + 16 + 15) & !15;
/// Smallest frame size.
const MIN_FRAME: usize = 2048;

/// How an [`AfPacketPort`] is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfPacketConfig {
    /// The interface (e.g. `eth0`), in the calling thread's network namespace.
    pub ifname: String,
    /// Frames in the receive ring (rounded up to fill whole blocks).
    pub rx_frames: u32,
    /// Frames in the transmit ring (rounded up to fill whole blocks).
    pub tx_frames: u32,
    /// Frame size in bytes; 0 derives it from the interface's MTU. Rounded
    /// up to a power of two, at least 2048.
    pub frame_size: u32,
    /// Buffers in the port's pool, all allocated at open.
    pub pool_size: usize,
    /// A pool shared with the other ports of the same worker (see
    /// [`BufPool`]); `None`: the port makes its own of `pool_size` buffers.
    pub pool: Option<BufPool>,
    /// Bytes per buffer, headroom included; longer frames are truncated.
    pub buf_size: usize,
    /// Headroom of each buffer (at least 14 for the Ethernet header).
    pub headroom: usize,
    /// Ask for PACKET_QDISC_BYPASS (transmit straight to the driver;
    /// silently not used where the kernel lacks it).
    pub qdisc_bypass: bool,
    /// SO_SNDBUF/SO_RCVBUF to ask for (in-flight transmit frames are charged
    /// to the send buffer); 0 keeps the kernel's defaults.
    pub socket_buf: usize,
}

impl AfPacketConfig {
    /// The defaults for interface `ifname`: 1024 receive and 512 transmit
    /// frames sized from the MTU, 512 buffers of [`DEFAULT_BUF_SIZE`] bytes,
    /// qdisc bypass.
    pub fn new(ifname: &str) -> AfPacketConfig {
        AfPacketConfig {
            ifname: ifname.to_string(),
            rx_frames: 1024,
            tx_frames: 512,
            frame_size: 0,
            pool_size: 512,
            pool: None,
            buf_size: DEFAULT_BUF_SIZE,
            headroom: DEFAULT_HEADROOM,
            qdisc_bypass: true,
            socket_buf: 4 << 20,
        }
    }
}

/// Counters of one [`AfPacketPort`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AfPacketStats {
    /// Frames received and delivered.
    pub rx_packets: u64,
    /// Bytes delivered (after the Ethernet header, padding included).
    pub rx_bytes: u64,
    /// Bytes of every frame taken off the receive ring, the frames handed
    /// back undelivered included: their length on the wire (Ethernet
    /// header included, FCS not), also where the ring's frame cut them.
    pub rx_frame_bytes: u64,
    /// Frames cut by the ring's frame size (delivered anyway).
    pub rx_truncated: u64,
    /// Frames that were not MessageWay or too short for an Ethernet header
    /// (handed back, not delivered).
    pub rx_other: u64,
    /// MessageWay frames unicast to another MAC (a bridge or switch floods
    /// frames for a MAC it has not learned to every port): handed back, not
    /// delivered, as a NIC's MAC filter would.
    pub rx_not_for_us: u64,
    /// Frames that carried TP_STATUS_LOSING: the kernel dropped frames
    /// before them because the ring was full (see [`AfPacketPort::ring_drops`]).
    pub rx_losing: u64,
    /// Receive bursts cut short because the pool was empty (the frames wait
    /// in the ring).
    pub rx_nobuf: u64,
    /// Frames queued for transmission.
    pub tx_packets: u64,
    /// Bytes queued (frame lengths, padding included).
    pub tx_bytes: u64,
    /// `send` calls that kicked the transmit ring.
    pub tx_kicks: u64,
    /// Kicks that failed (retried on the next burst).
    pub tx_kick_errors: u64,
    /// Transmit bursts that found the ring full (packets left in the burst).
    pub tx_full: u64,
    /// Packets dropped because they cannot be sent (shorter than an Ethernet
    /// header, longer than the MTU or the frame): taken off the burst and
    /// counted as sent by `tx_burst`.
    pub tx_errors: u64,
}

/// A router port on an Ethernet SAN: a packet socket with mmap'ed rings on
/// one interface.
pub struct AfPacketPort {
    // Dropped before `fd`: unmap the rings, then close the socket.
    ring: MmapRaw,
    fd: OwnedFd,
    ifname: String,
    ifindex: i32,
    mac: [u8; 6],
    mtu: usize,
    frame_size: usize,
    rx_frames: usize,
    tx_frames: usize,
    /// Byte offset of the transmit ring in the mapping.
    tx_base: usize,
    rx_head: usize,
    tx_head: usize,
    /// A kick failed: frames may wait with TP_STATUS_SEND_REQUEST.
    kick_pending: bool,
    pool: BufPool,
    stats: AfPacketStats,
    ring_drops: u64,
}

impl fmt::Debug for AfPacketPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AfPacketPort")
            .field("ifname", &self.ifname)
            .field("ifindex", &self.ifindex)
            .field("mac", &NativeAddr::mac(self.mac))
            .field("frame_size", &self.frame_size)
            .field("rx_frames", &self.rx_frames)
            .field("tx_frames", &self.tx_frames)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

fn setsockopt<T>(fd: &OwnedFd, level: c_int, name: c_int, val: &T) -> io::Result<()> {
    // SAFETY: `fd` is an open socket; `val` is a live value of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (val as *const T).cast::<c_void>(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// An ifreq naming `ifname`.
fn ifreq(ifname: &str) -> io::Result<libc::ifreq> {
    // SAFETY: all-zero bytes are a valid ifreq (a name and a plain union).
    let mut ifr: libc::ifreq = unsafe { zeroed() };
    let name = ifname.as_bytes();
    if name.is_empty() || name.len() >= ifr.ifr_name.len() || name.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {ifname:?}"),
        ));
    }
    for (d, s) in ifr.ifr_name.iter_mut().zip(name) {
        *d = *s as libc::c_char;
    }
    Ok(ifr)
}

fn ioctl_ifreq(fd: &OwnedFd, req: libc::Ioctl, ifr: &mut libc::ifreq) -> io::Result<()> {
    // SAFETY: `ifr` is a valid, writable ifreq, which the SIOCGIF* requests
    // used here read the name from and write one union member into.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req, ifr as *mut libc::ifreq) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl AfPacketPort {
    /// Opens a packet socket on `cfg.ifname` for EtherType 0x88B5 with its
    /// receive and transmit rings. Needs CAP_NET_RAW; the interface must be
    /// an Ethernet interface.
    pub fn open(cfg: AfPacketConfig) -> io::Result<AfPacketPort> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        if cfg.pool_size == 0 {
            return Err(invalid("pool_size must be at least 1".into()));
        }
        if cfg.headroom < ETH_HLEN || cfg.headroom >= cfg.buf_size {
            return Err(invalid(
                "headroom must be at least 14 bytes and below buf_size".into(),
            ));
        }
        if cfg.rx_frames == 0 || cfg.tx_frames == 0 {
            return Err(invalid("ring sizes must be at least 1 frame".into()));
        }
        // Protocol 0 until bind: the socket sees no frames (of any
        // interface) before it is set up and bound to ours.
        // SAFETY: plain socket(2) call; the result is checked below.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a freshly created descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };

        let mut ifr = ifreq(&cfg.ifname)?;
        ioctl_ifreq(&fd, libc::SIOCGIFINDEX as libc::Ioctl, &mut ifr)?;
        // SAFETY: SIOCGIFINDEX wrote the ifindex member.
        let ifindex = unsafe { ifr.ifr_ifru.ifru_ifindex };
        let mut ifr = ifreq(&cfg.ifname)?;
        ioctl_ifreq(&fd, libc::SIOCGIFHWADDR as libc::Ioctl, &mut ifr)?;
        // SAFETY: SIOCGIFHWADDR wrote the hwaddr member.
        let hw = unsafe { ifr.ifr_ifru.ifru_hwaddr };
        if hw.sa_family != libc::ARPHRD_ETHER {
            return Err(invalid(format!(
                "{} is not an Ethernet interface (ARPHRD {})",
                cfg.ifname, hw.sa_family
            )));
        }
        let mut mac = [0u8; 6];
        for (d, s) in mac.iter_mut().zip(hw.sa_data.iter()) {
            *d = *s as u8;
        }
        let mut ifr = ifreq(&cfg.ifname)?;
        ioctl_ifreq(&fd, libc::SIOCGIFMTU as libc::Ioctl, &mut ifr)?;
        // SAFETY: SIOCGIFMTU wrote the mtu member.
        let mtu = unsafe { ifr.ifr_ifru.ifru_mtu }.max(0) as usize;

        // Ring geometry.
        let need = if cfg.frame_size > 0 {
            cfg.frame_size as usize
        } else {
            RX_MAC_OFF_MAX + ETH_HLEN + VLAN_HLEN + mtu
        };
        let frame_size = need.max(MIN_FRAME).next_power_of_two();
        // SAFETY: sysconf has no memory-safety preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let block_size = frame_size.max(page);
        let per_block = block_size / frame_size;
        let ring_req = |frames: u32| {
            let blocks = (frames as usize).div_ceil(per_block);
            libc::tpacket_req {
                tp_block_size: block_size as u32,
                tp_block_nr: blocks as u32,
                tp_frame_size: frame_size as u32,
                tp_frame_nr: (blocks * per_block) as u32,
            }
        };
        let rx_req = ring_req(cfg.rx_frames);
        let tx_req = ring_req(cfg.tx_frames);

        let version: c_int = libc::tpacket_versions::TPACKET_V2 as c_int;
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_VERSION, &version)?;
        // Skip (rather than stall on) a transmit frame the kernel refuses.
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_LOSS, &1 as &c_int)?;
        if cfg.qdisc_bypass {
            // Since Linux 3.14; best effort.
            let _ = setsockopt(
                &fd,
                libc::SOL_PACKET,
                libc::PACKET_QDISC_BYPASS,
                &1 as &c_int,
            );
        }
        // Since Linux 4.20; best effort (a protocol-bound socket does not
        // see its own frames through the taps anyway).
        let _ = setsockopt(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_IGNORE_OUTGOING,
            &1 as &c_int,
        );
        if cfg.socket_buf > 0 {
            let n = cfg.socket_buf.min(c_int::MAX as usize) as c_int;
            for (force, plain) in [
                (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
                (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
            ] {
                if setsockopt(&fd, libc::SOL_SOCKET, force, &n).is_err() {
                    let _ = setsockopt(&fd, libc::SOL_SOCKET, plain, &n);
                }
            }
        }
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &rx_req)?;
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_TX_RING, &tx_req)?;
        let rx_len = rx_req.tp_block_size as usize * rx_req.tp_block_nr as usize;
        let tx_len = tx_req.tp_block_size as usize * tx_req.tp_block_nr as usize;
        let ring = MmapOptions::new().len(rx_len + tx_len).map_raw(&fd)?;

        // SAFETY: all-zero bytes are a valid sockaddr_ll.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETHERTYPE.to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a valid sockaddr_ll of the length passed.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&raw const sll).cast::<libc::sockaddr>(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }

        Ok(AfPacketPort {
            ring,
            fd,
            ifname: cfg.ifname,
            ifindex,
            mac,
            mtu,
            frame_size,
            rx_frames: rx_req.tp_frame_nr as usize,
            tx_frames: tx_req.tp_frame_nr as usize,
            tx_base: rx_len,
            rx_head: 0,
            tx_head: 0,
            kick_pending: false,
            pool: cfg.pool.clone().unwrap_or_else(|| {
                BufPool::new(cfg.buf_size, cfg.headroom, cfg.pool_size, cfg.pool_size)
            }),
            stats: AfPacketStats::default(),
            ring_drops: 0,
        })
    }

    /// The interface's MAC address.
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// The interface name.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// The interface index.
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    /// The interface's MTU when the port was opened.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Ring geometry: frame size, receive frames, transmit frames.
    pub fn ring_geometry(&self) -> (usize, usize, usize) {
        (self.frame_size, self.rx_frames, self.tx_frames)
    }

    /// The port's counters.
    pub fn stats(&self) -> AfPacketStats {
        self.stats
    }

    /// Buffers waiting in the pool.
    pub fn pool_available(&self) -> usize {
        self.pool.available()
    }

    /// Frames the kernel dropped because the receive ring was full, since
    /// the port was opened (reads and accumulates PACKET_STATISTICS: one
    /// system call; not for the fast path).
    pub fn ring_drops(&mut self) -> u64 {
        let mut st = libc::tpacket_stats {
            tp_packets: 0,
            tp_drops: 0,
        };
        let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: `st` is writable storage of `len` bytes for this option.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&raw mut st).cast::<c_void>(),
                &mut len,
            )
        };
        if r == 0 {
            self.ring_drops += u64::from(st.tp_drops);
        }
        self.ring_drops
    }

    /// Pointer to receive frame `i`.
    #[inline]
    fn rx_frame(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.rx_frames);
        // SAFETY: frames are laid out back to back (blocks are a whole number
        // of frames): frame i < rx_frames lies inside the receive ring at the
        // start of the mapping.
        unsafe { self.ring.as_mut_ptr().add(i * self.frame_size) }
    }

    /// Pointer to transmit frame `i`.
    #[inline]
    fn tx_frame(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.tx_frames);
        // SAFETY: the transmit ring follows the receive ring in the mapping;
        // frame i < tx_frames lies inside it.
        unsafe {
            self.ring
                .as_mut_ptr()
                .add(self.tx_base + i * self.frame_size)
        }
    }

    /// The status word of the frame at `f`, shared with the kernel.
    #[inline]
    fn status<'a>(f: *mut u8) -> &'a AtomicU32 {
        // SAFETY: `f` is the start of a ring frame (16-byte aligned, inside
        // the mapping that lives as long as the port), whose first field,
        // tp_status, is a u32 the kernel and this port hand each other the
        // frame with; it is only accessed atomically from user space.
        unsafe { AtomicU32::from_ptr(f.cast::<u32>()) }
    }

    /// Hands receive frame `f` (the one at `rx_head`, `len` bytes on the
    /// wire) back to the kernel and moves on to the next.
    #[inline]
    fn release(&mut self, f: *mut u8, len: u32) {
        self.stats.rx_frame_bytes += u64::from(len);
        Self::status(f).store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.rx_head = (self.rx_head + 1) % self.rx_frames;
    }

    /// Asks the kernel to transmit the frames marked SEND_REQUEST.
    fn kick(&mut self) {
        self.stats.tx_kicks += 1;
        // SAFETY: send(2) with a null buffer of length 0 is how a
        // PACKET_TX_RING is flushed; no user memory is passed.
        let r = unsafe { libc::send(self.fd.as_raw_fd(), ptr::null(), 0, libc::MSG_DONTWAIT) };
        if r < 0 {
            // EAGAIN/ENOBUFS (send buffer full) or a driver error: the kernel
            // put the frame back to SEND_REQUEST; retry on the next burst.
            self.stats.tx_kick_errors += 1;
            self.kick_pending = true;
        } else {
            self.kick_pending = false;
        }
    }
}

impl Port for AfPacketPort {
    type Buf = HeapBuf;

    fn rx_burst(&mut self, out: &mut Burst<HeapBuf>) {
        if self.kick_pending {
            self.kick();
        }
        while !out.is_full() {
            let f = self.rx_frame(self.rx_head);
            let st = Self::status(f).load(Ordering::Acquire);
            if st & libc::TP_STATUS_USER == 0 {
                break;
            }
            // SAFETY: the frame is ours (TP_STATUS_USER, acquire-loaded, so
            // the kernel's writes to it are visible) and starts with a
            // tpacket2_hdr.
            let h = unsafe { ptr::read(f.cast::<libc::tpacket2_hdr>()) };
            let mac = h.tp_mac as usize;
            let snap = h.tp_snaplen as usize;
            if mac + snap > self.frame_size || snap < ETH_HLEN {
                self.stats.rx_other += 1;
                self.release(f, h.tp_len);
                continue;
            }
            // SAFETY: checked above: `snap` bytes at `mac` lie inside this
            // frame, which the kernel does not touch until handed back.
            let frame = unsafe { core::slice::from_raw_parts(f.add(mac).cast_const(), snap) };
            let mut off = ETH_HLEN;
            let mut et = u16::from_be_bytes([frame[12], frame[13]]);
            if (et == ETH_P_8021Q || et == ETH_P_8021AD) && snap >= ETH_HLEN + VLAN_HLEN {
                et = u16::from_be_bytes([frame[16], frame[17]]);
                off += VLAN_HLEN;
            }
            if et != ETHERTYPE {
                self.stats.rx_other += 1;
                self.release(f, h.tp_len);
                continue;
            }
            if frame[0] & 1 == 0 && frame[0..6] != self.mac {
                self.stats.rx_not_for_us += 1;
                self.release(f, h.tp_len);
                continue;
            }
            let Some(mut b) = self.pool.get() else {
                // Leave the frame to a later burst.
                self.stats.rx_nobuf += 1;
                break;
            };
            let payload = &frame[off..];
            let (mem, hr) = b.raw_mut();
            let n = payload.len().min(mem.len() - hr);
            mem[hr..hr + n].copy_from_slice(&payload[..n]);
            b.set_len(n);
            let src: [u8; 6] = frame[6..12].try_into().expect("6 bytes");
            b.set_native_src(NativeAddr::mac(src));
            if st & libc::TP_STATUS_LOSING != 0 {
                self.stats.rx_losing += 1;
            }
            if (h.tp_len as usize) > snap || n < payload.len() {
                self.stats.rx_truncated += 1;
            }
            // The copy is done: hand the frame back.
            self.release(f, h.tp_len);
            self.stats.rx_packets += 1;
            self.stats.rx_bytes += n as u64;
            out.push(b);
        }
    }

    fn tx_burst(&mut self, pkts: &mut Burst<HeapBuf>) -> usize {
        let cap = (self.frame_size - TX_DATA_OFF).min(self.mtu + ETH_HLEN);
        let mut queued = 0usize;
        let mut taken = 0usize;
        for b in pkts.iter() {
            let len = b.len();
            if !(ETH_HLEN..=cap).contains(&len) {
                // Cannot be sent on this interface: drop it, go on.
                self.stats.tx_errors += 1;
                taken += 1;
                continue;
            }
            let f = self.tx_frame(self.tx_head);
            let st = Self::status(f).load(Ordering::Acquire);
            if st & (libc::TP_STATUS_SEND_REQUEST | libc::TP_STATUS_SENDING) != 0 {
                self.stats.tx_full += 1;
                break;
            }
            // TP_STATUS_AVAILABLE (possibly with timestamp bits), or
            // TP_STATUS_WRONG_FORMAT (not with PACKET_LOSS): the frame is ours.
            let flen = len.max(ETH_ZLEN);
            // SAFETY: the frame is ours (not SEND_REQUEST/SENDING); its data
            // area holds frame_size - TX_DATA_OFF >= cap >= flen bytes, and
            // `b`'s bytes do not overlap the mapping.
            unsafe {
                let d = f.add(TX_DATA_OFF);
                ptr::copy_nonoverlapping(b.data().as_ptr(), d, len);
                ptr::write_bytes(d.add(len), 0, flen - len);
                let h = f.cast::<libc::tpacket2_hdr>();
                (&raw mut (*h).tp_len).write(flen as u32);
                (&raw mut (*h).tp_snaplen).write(flen as u32);
            }
            // Publish the frame after its contents.
            Self::status(f).store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
            self.tx_head = (self.tx_head + 1) % self.tx_frames;
            self.stats.tx_packets += 1;
            self.stats.tx_bytes += flen as u64;
            queued += 1;
            taken += 1;
        }
        if queued > 0 || self.kick_pending {
            self.kick();
        }
        for b in pkts.drain(..taken) {
            self.pool.put(b);
        }
        taken
    }

    fn encap(&self, buf: &mut HeapBuf, dst: &NativeAddr) -> bool {
        let d = match dst.len() {
            0 => BROADCAST,
            6 => dst.as_mac().expect("6 bytes"),
            _ => return false,
        };
        let Some(h) = buf.prepend(ETH_HLEN) else {
            return false;
        };
        h[..6].copy_from_slice(&d);
        h[6..12].copy_from_slice(&self.mac);
        h[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
        buf.set_native_dst(*dst);
        true
    }

    fn alloc(&mut self) -> Option<HeapBuf> {
        self.pool.get()
    }

    fn recycle(&mut self, buf: HeapBuf) {
        self.pool.put(buf);
    }

    fn native_addr(&self) -> NativeAddr {
        NativeAddr::mac(self.mac)
    }

    fn link_kind(&self) -> LinkKind {
        LinkKind::Ethernet
    }

    fn wait_fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.fd.as_fd())
    }

    /// Bytes: whole frames taken off the receive ring
    /// ([`AfPacketStats::rx_frame_bytes`]) and queued on the transmit ring
    /// (padded to 60 bytes); `rx_missed`: the frames the kernel dropped
    /// with the receive ring full ([`AfPacketPort::ring_drops`], one
    /// `getsockopt`); `tx_link_errors`: the packets the interface cannot
    /// carry ([`AfPacketStats::tx_errors`]). Frames with errors never
    /// reach a packet socket: the interface's own counters have them.
    fn link_stats(&mut self) -> LinkStats {
        LinkStats {
            rx_bytes: self.stats.rx_frame_bytes,
            tx_bytes: self.stats.tx_bytes,
            rx_missed: self.ring_drops(),
            tx_link_errors: self.stats.tx_errors,
            ..LinkStats::default()
        }
    }
}
