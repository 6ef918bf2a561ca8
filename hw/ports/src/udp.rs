//! MessageWay over UDP (docs/architecture.md "Wire"; docs/backends.md "UDP").
//!
//! One MessageWay packet per datagram, IPv4 or IPv6, on UDP port
//! [`DEFAULT_PORT`] (34997 = 0x88B5, `rrp::encap::UDP_PORT`) unless configured
//! otherwise. Unprivileged: any user can open a [`UdpPort`].
//!
//! - NativeAddr addresses are IPv4 address + port (6 bytes) or IPv6 address +
//!   port (18 bytes), as [`NativeAddr::udp`] makes them. On a dual-stack IPv6
//!   socket, IPv4 senders (seen as `::ffff:a.b.c.d`) get 6-byte natives.
//! - A UDP SAN has no broadcast: an empty native (every member of the SAN)
//!   is sent as one datagram per configured member ([`UdpConfig::members`]).
//!   `encap` records the destination in the buffer; `tx_burst` expands an
//!   empty destination into one message per member.
//! - Batching: one `recvmmsg` per receive burst, one `sendmmsg` per
//!   transmit burst (more only after a per-destination error, or when a
//!   member fan-out exceeds the kernel's 1024 messages per call).
//! - Buffers come from the port's [`BufPool`], all allocated at open; the
//!   receive and transmit paths allocate nothing and take no lock.
//! - A datagram larger than the buffer is delivered truncated (counted in
//!   [`UdpStats::rx_truncated`], not flagged): the engine finds the packet's
//!   end from DL and drops it as truncated. UDP has no per-packet receive
//!   error flag (the kernel drops datagrams with bad checksums), so
//!   [`PacketBuf::rx_error`] is always false.
//! - The link's counters ([`Port::link_stats`]): the datagrams the kernel
//!   dropped for the socket before the port read them (its receive buffer
//!   full, a bad checksum) are the socket's drop count, which every
//!   datagram received carries once there have been drops (SO_RXQ_OVFL, a
//!   control message: no system call of its own) and which `link_stats`
//!   reads as it is now (SO_MEMINFO), so that drops after the last datagram
//!   read are counted too; bytes are the datagrams' as sent and received.

use core::ffi::{c_int, c_uint, c_void};
use core::fmt;
use core::mem::{size_of, zeroed};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use crate::heap::{BufPool, DEFAULT_BUF_SIZE, DEFAULT_HEADROOM, HeapBuf};
use crate::{BURST, Burst, PacketBuf, Port};
use rrp::NativeAddr;
use rrp::{LinkKind, LinkStats};

/// The default UDP port of MessageWay over UDP (`rrp::encap::UDP_PORT`).
pub const DEFAULT_PORT: u16 = rrp::encap::UDP_PORT;

/// The kernel's limit of messages per `sendmmsg`/`recvmmsg` call (UIO_MAXIOV).
const MAX_MMSG: usize = 1024;

/// How a [`UdpPort`] is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpConfig {
    /// The address and port to bind (port 0: an ephemeral port). An IPv6
    /// address gives an IPv6 socket, dual-stack when the address is `::`
    /// and [`UdpConfig::v6only`] is false.
    pub bind: SocketAddr,
    /// The SAN's members: where a packet for "every member" (an empty
    /// native) goes. The port's own address is left out.
    pub members: Vec<SocketAddr>,
    /// Buffers in the port's pool, all allocated at open.
    pub pool_size: usize,
    /// A pool shared with the other ports of the same worker (see
    /// [`BufPool`]); `None`: the port makes its own of `pool_size` buffers.
    pub pool: Option<BufPool>,
    /// Bytes per buffer, headroom included; longer datagrams are truncated.
    pub buf_size: usize,
    /// Headroom of each buffer.
    pub headroom: usize,
    /// SO_RCVBUF and SO_SNDBUF to ask for (the forced variants when
    /// privileged, else capped by net.core.rmem_max/wmem_max); 0 keeps the
    /// kernel's defaults.
    pub socket_buf: usize,
    /// For an IPv6 bind: refuse IPv4 traffic (IPV6_V6ONLY).
    pub v6only: bool,
}

impl UdpConfig {
    /// The defaults for binding `bind`: no members, 512 buffers of
    /// [`DEFAULT_BUF_SIZE`] bytes, 4 MiB socket buffers, dual-stack.
    pub fn new(bind: SocketAddr) -> UdpConfig {
        UdpConfig {
            bind,
            members: Vec::new(),
            pool_size: 512,
            pool: None,
            buf_size: DEFAULT_BUF_SIZE,
            headroom: DEFAULT_HEADROOM,
            socket_buf: 4 << 20,
            v6only: false,
        }
    }

    /// With these SAN members.
    pub fn members(mut self, members: impl IntoIterator<Item = SocketAddr>) -> UdpConfig {
        self.members = members.into_iter().collect();
        self
    }

    /// With a pool of `n` buffers.
    pub fn pool_size(mut self, n: usize) -> UdpConfig {
        self.pool_size = n;
        self
    }

    /// With buffers of `n` bytes (headroom included).
    pub fn buf_size(mut self, n: usize) -> UdpConfig {
        self.buf_size = n;
        self
    }
}

/// Counters of one [`UdpPort`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpStats {
    /// Datagrams received.
    pub rx_packets: u64,
    /// Bytes received (as delivered, after truncation).
    pub rx_bytes: u64,
    /// `recvmmsg` calls that returned datagrams.
    pub rx_calls: u64,
    /// Datagrams truncated by the buffer size (delivered anyway).
    pub rx_truncated: u64,
    /// `recvmmsg` errors other than "nothing to read" (e.g. a pending
    /// ICMP error reported on the socket).
    pub rx_errors: u64,
    /// Receive bursts that found fewer free buffers than free burst slots
    /// (pool exhausted: reception slows or stops until buffers come back).
    pub rx_nobuf: u64,
    /// Datagrams the kernel dropped for this socket before the port read
    /// them (receive buffer full, bad checksum), since the port was opened:
    /// the count the last datagram received carried (SO_RXQ_OVFL), or the
    /// socket's count when [`Port::link_stats`] last read it, whichever is
    /// later.
    pub rx_missed: u64,
    /// Datagrams sent (a packet for every member counts once per member).
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// `sendmmsg` calls.
    pub tx_calls: u64,
    /// Datagrams dropped on a per-destination error (unreachable, invalid
    /// or wrong-family destination, too large, ...): counted here, taken
    /// off the burst, and counted as sent by `tx_burst`.
    pub tx_errors: u64,
    /// Datagrams the kernel had no room for (EAGAIN, ENOBUFS): the packets
    /// stay in the burst (the caller drops them as tx-full), except copies
    /// of a member fan-out whose first copies went out.
    pub tx_full: u64,
}

/// Room for the control messages of one received datagram: one
/// SO_RXQ_OVFL (CMSG_SPACE(4) = 24 bytes on 64-bit Linux), aligned as a
/// `cmsghdr`.
type Control = [u64; 4];

/// Scratch space for one `recvmmsg`/`sendmmsg` call: message headers, I/O
/// vectors, socket addresses and (receive only) control buffers, allocated
/// at open and rewritten before every call.
struct Scratch {
    hdrs: Vec<libc::mmsghdr>,
    iov: Vec<libc::iovec>,
    names: Vec<libc::sockaddr_storage>,
    control: Vec<Control>,
}

// SAFETY: the raw pointers in `hdrs` and `iov` are scratch values: they are
// rewritten before every system call from data owned by the port at that
// moment and never dereferenced by Rust code, so moving the port (and this
// scratch) to another thread cannot create a dangling access.
unsafe impl Send for Scratch {}

impl Scratch {
    fn new(msgs: usize, iovs: usize, names: usize, control: usize) -> Scratch {
        Scratch {
            // SAFETY: mmsghdr, iovec and sockaddr_storage are plain C
            // structs for which all-zero bytes (null pointers, zero
            // lengths) are valid values.
            hdrs: (0..msgs).map(|_| unsafe { zeroed() }).collect(),
            // SAFETY: as above.
            iov: (0..iovs).map(|_| unsafe { zeroed() }).collect(),
            // SAFETY: as above.
            names: (0..names).map(|_| unsafe { zeroed() }).collect(),
            control: vec![[0; 4]; control],
        }
    }
}

/// A router port on a UDP SAN: one non-blocking UDP socket.
pub struct UdpPort {
    fd: OwnedFd,
    /// The socket is IPv6.
    v6: bool,
    /// The IPv6 socket also carries IPv4 (bound to `::`, not v6only).
    dual: bool,
    /// Scope of the bound IPv6 address (for link-local destinations).
    scope_id: u32,
    local: SocketAddr,
    addr: NativeAddr,
    /// Members in socket-address form, and their count.
    members: Vec<libc::sockaddr_storage>,
    member_addrs: Vec<SocketAddr>,
    namelen: libc::socklen_t,
    pool: BufPool,
    /// Buffers taken from the pool for the next `recvmmsg`, kept between
    /// bursts so that an idle poll costs no pool traffic.
    armed: Burst<HeapBuf>,
    rx: Scratch,
    tx: Scratch,
    /// Per transmit message: the burst index of its buffer.
    tx_owner: Vec<u8>,
    stats: UdpStats,
    /// The socket's drop count (a 32-bit kernel counter) as last read,
    /// from a datagram or from SO_MEMINFO; `stats.rx_missed` grows by the
    /// difference to a later reading.
    drops: u32,
}

impl fmt::Debug for UdpPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpPort")
            .field("fd", &self.fd.as_raw_fd())
            .field("local", &self.local)
            .field("members", &self.member_addrs)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

fn errno() -> c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn setsockopt_int(fd: &OwnedFd, level: c_int, name: c_int, val: c_int) -> io::Result<()> {
    // SAFETY: `fd` is an open socket; the option value is a live c_int of
    // the length passed.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&raw const val).cast::<c_void>(),
            size_of::<c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `sa` as a socket address for a socket of family `v6` (IPv4
/// addresses become IPv4-mapped on an IPv6 socket); `None` for an IPv6
/// address on an IPv4 socket.
fn write_sockaddr(
    sa: &SocketAddr,
    v6: bool,
    scope_id: u32,
    out: &mut libc::sockaddr_storage,
) -> Option<libc::socklen_t> {
    match (sa, v6) {
        (SocketAddr::V4(a), false) => {
            // SAFETY: sockaddr_storage is larger than and at least as aligned
            // as sockaddr_in; all-zero bytes are a valid sockaddr_in.
            let sin =
                unsafe { &mut *(out as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr = libc::in_addr {
                s_addr: u32::from_ne_bytes(a.ip().octets()),
            };
            sin.sin_zero = [0; 8];
            Some(size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        (SocketAddr::V6(_), false) => None,
        (_, true) => {
            let (ip, port, flow, scope) = match sa {
                SocketAddr::V4(a) => (a.ip().to_ipv6_mapped(), a.port(), 0, 0),
                SocketAddr::V6(a) => {
                    let scope = if a.scope_id() == 0 && a.ip().is_unicast_link_local() {
                        scope_id
                    } else {
                        a.scope_id()
                    };
                    (*a.ip(), a.port(), a.flowinfo(), scope)
                }
            };
            // SAFETY: sockaddr_storage is larger than and at least as aligned
            // as sockaddr_in6; all-zero bytes are a valid sockaddr_in6.
            let sin6 =
                unsafe { &mut *(out as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = port.to_be();
            sin6.sin6_flowinfo = flow;
            sin6.sin6_addr = libc::in6_addr {
                s6_addr: ip.octets(),
            };
            sin6.sin6_scope_id = scope;
            Some(size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// Reads a socket address filled in by the kernel; IPv4-mapped IPv6
/// addresses come back as IPv4.
fn read_sockaddr(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match ss.ss_family as c_int {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in, which
            // it is large and aligned enough for.
            let sin =
                unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            Some(SocketAddr::new(
                IpAddr::V4(Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes())),
                u16::from_be(sin.sin_port),
            ))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6, which
            // it is large and aligned enough for.
            let sin6 =
                unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            let port = u16::from_be(sin6.sin6_port);
            Some(match ip.to_ipv4_mapped() {
                Some(v4) => SocketAddr::new(IpAddr::V4(v4), port),
                None => SocketAddr::V6(SocketAddrV6::new(
                    ip,
                    port,
                    sin6.sin6_flowinfo,
                    sin6.sin6_scope_id,
                )),
            })
        }
        _ => None,
    }
}

/// The native form of a socket address (scope and flow dropped).
fn native_of(sa: SocketAddr) -> NativeAddr {
    NativeAddr::udp(sa)
}

impl UdpPort {
    /// Opens a non-blocking UDP socket bound to `cfg.bind`, with a pool of
    /// `cfg.pool_size` buffers allocated now.
    pub fn open(cfg: UdpConfig) -> io::Result<UdpPort> {
        let invalid = |m: &str| io::Error::new(io::ErrorKind::InvalidInput, m.to_string());
        if cfg.pool_size == 0 {
            return Err(invalid("pool_size must be at least 1"));
        }
        if cfg.headroom >= cfg.buf_size {
            return Err(invalid("buf_size must exceed the headroom"));
        }
        let v6 = cfg.bind.is_ipv6();
        let domain = if v6 { libc::AF_INET6 } else { libc::AF_INET };
        // SAFETY: plain socket(2) call; the result is checked below.
        let raw = unsafe {
            libc::socket(
                domain,
                libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                libc::IPPROTO_UDP,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a freshly created descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };

        let dual = v6 && !cfg.v6only && cfg.bind.ip().is_unspecified();
        if v6 {
            setsockopt_int(
                &fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_V6ONLY,
                cfg.v6only as c_int,
            )?;
        }
        if cfg.socket_buf > 0 {
            let n = cfg.socket_buf.min(c_int::MAX as usize) as c_int;
            // Best effort: the forced variants need CAP_NET_ADMIN; the plain
            // ones are capped by net.core.{r,w}mem_max.
            if setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, n).is_err() {
                let _ = setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, n);
            }
            if setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, n).is_err() {
                let _ = setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, n);
            }
        }
        // Every datagram carries the socket's drop count (since Linux 2.6.33).
        setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_RXQ_OVFL, 1)?;

        let scope_id = match cfg.bind {
            SocketAddr::V6(a) => a.scope_id(),
            SocketAddr::V4(_) => 0,
        };
        // SAFETY: all-zero bytes are a valid sockaddr_storage.
        let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
        let len = write_sockaddr(&cfg.bind, v6, scope_id, &mut ss).expect("family matches");
        // SAFETY: `ss` holds a socket address of `len` bytes for this family.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&raw const ss).cast::<libc::sockaddr>(),
                len,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: all-zero bytes are a valid sockaddr_storage.
        let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
        let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: `ss` is writable storage of `len` bytes.
        let r = unsafe {
            libc::getsockname(
                fd.as_raw_fd(),
                (&raw mut ss).cast::<libc::sockaddr>(),
                &mut len,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        let local = read_sockaddr(&ss).ok_or_else(|| invalid("unexpected local address"))?;

        let mut members = Vec::with_capacity(cfg.members.len());
        let mut member_addrs = Vec::with_capacity(cfg.members.len());
        for m in &cfg.members {
            if *m == local || member_addrs.contains(m) {
                continue;
            }
            if (m.is_ipv4() && v6 && !dual) || (m.is_ipv6() && !v6) {
                return Err(invalid(&format!(
                    "member {m} is not reachable from a socket bound to {}",
                    cfg.bind
                )));
            }
            // SAFETY: all-zero bytes are a valid sockaddr_storage.
            let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
            write_sockaddr(m, v6, scope_id, &mut ss).expect("family checked");
            members.push(ss);
            member_addrs.push(*m);
        }

        let fan = members.len().max(1);
        let namelen = if v6 {
            size_of::<libc::sockaddr_in6>()
        } else {
            size_of::<libc::sockaddr_in>()
        } as libc::socklen_t;
        Ok(UdpPort {
            fd,
            v6,
            dual,
            scope_id,
            local,
            addr: native_of(local),
            members,
            member_addrs,
            namelen,
            pool: cfg.pool.clone().unwrap_or_else(|| {
                BufPool::new(cfg.buf_size, cfg.headroom, cfg.pool_size, cfg.pool_size)
            }),
            armed: Burst::new(),
            rx: Scratch::new(BURST, BURST, BURST, BURST),
            tx: Scratch::new(BURST * fan, BURST, BURST, 0),
            tx_owner: vec![0; BURST * fan],
            stats: UdpStats::default(),
            drops: 0,
        })
    }

    /// The bound address (with the actual port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The SAN members a packet for every member goes to (own address excluded).
    pub fn members(&self) -> &[SocketAddr] {
        &self.member_addrs
    }

    /// The port's counters.
    pub fn stats(&self) -> UdpStats {
        self.stats
    }

    /// Buffers waiting in the pool.
    pub fn pool_available(&self) -> usize {
        self.pool.available()
    }

    /// Takes a reading of the socket's drop count: a later one (in 32-bit
    /// serial order) adds its difference to `rx_missed`, an earlier one (a
    /// datagram queued before the last SO_MEMINFO reading) changes nothing.
    fn saw_drops(&mut self, now: u32) {
        let d = now.wrapping_sub(self.drops);
        if d != 0 && d < 1 << 31 {
            self.drops = now;
            self.stats.rx_missed += u64::from(d);
        }
    }

    /// The socket's drop count now (SO_MEMINFO), if the kernel tells it.
    fn socket_drops(&self) -> Option<u32> {
        let mut mem = [0u32; libc::SK_MEMINFO_DROPS as usize + 1];
        let mut len = size_of_val(&mem) as libc::socklen_t;
        // SAFETY: `mem` is writable storage of `len` bytes; the kernel
        // writes at most that many.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_MEMINFO,
                mem.as_mut_ptr().cast::<c_void>(),
                &mut len,
            )
        };
        (r == 0 && len as usize == size_of_val(&mem)).then(|| mem[libc::SK_MEMINFO_DROPS as usize])
    }

    /// Whether this port can send to `dst` (a 6- or 18-byte native of a
    /// family the socket carries, or empty with at least one member).
    fn accepts(&self, dst: &NativeAddr) -> bool {
        match dst.len() {
            0 => !self.members.is_empty(),
            6 => !self.v6 || self.dual,
            18 => self.v6,
            _ => false,
        }
    }
}

impl Port for UdpPort {
    type Buf = HeapBuf;

    fn rx_burst(&mut self, out: &mut Burst<HeapBuf>) {
        let want = BURST - out.len();
        if want == 0 {
            return;
        }
        while self.armed.len() < want {
            match self.pool.get() {
                Some(b) => self.armed.push(b),
                None => break,
            }
        }
        let n = self.armed.len().min(want);
        if n < want {
            self.stats.rx_nobuf += 1;
        }
        if n == 0 {
            return;
        }
        let rx = &mut self.rx;
        for i in 0..n {
            let (mem, off) = self.armed[i].raw_mut();
            let room = &mut mem[off..];
            rx.iov[i] = libc::iovec {
                iov_base: room.as_mut_ptr().cast::<c_void>(),
                iov_len: room.len(),
            };
            let h = &mut rx.hdrs[i];
            h.msg_hdr.msg_name = (&raw mut rx.names[i]).cast::<c_void>();
            h.msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_hdr.msg_iov = &raw mut rx.iov[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = rx.control[i].as_mut_ptr().cast::<c_void>();
            h.msg_hdr.msg_controllen = size_of::<Control>();
            h.msg_hdr.msg_flags = 0;
            h.msg_len = 0;
        }
        let mut tries = 0;
        let got = loop {
            // SAFETY: the first `n` headers point at live iovecs, socket
            // address storage and control buffers in `rx`, and the iovecs at
            // the writable tails of `n` buffers owned by `self.armed`, none
            // of which move or are dropped during the call.
            let r = unsafe {
                libc::recvmmsg(
                    self.fd.as_raw_fd(),
                    rx.hdrs.as_mut_ptr(),
                    n as c_uint,
                    libc::MSG_DONTWAIT,
                    core::ptr::null_mut(),
                )
            };
            if r >= 0 {
                break r as usize;
            }
            match errno() {
                libc::EINTR => continue,
                libc::EAGAIN => return,
                _ => {
                    // A pending socket error (e.g. ECONNREFUSED from ICMP) is
                    // reported once and cleared: retry once.
                    self.stats.rx_errors += 1;
                    tries += 1;
                    if tries > 1 {
                        return;
                    }
                }
            }
        };
        if got == 0 {
            return;
        }
        self.stats.rx_calls += 1;
        self.stats.rx_packets += got as u64;
        let mut drops = None;
        for i in 0..got {
            let h = &rx.hdrs[i];
            let b = &mut self.armed[i];
            let cap = b.capacity() - b.headroom();
            let len = (h.msg_len as usize).min(cap);
            b.set_len(len);
            self.stats.rx_bytes += len as u64;
            if h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                self.stats.rx_truncated += 1;
            }
            let src = read_sockaddr(&rx.names[i]).map_or(NativeAddr::NONE, native_of);
            b.set_native_src(src);
            if h.msg_hdr.msg_controllen != 0 {
                drops = rxq_ovfl(&h.msg_hdr).or(drops);
            }
        }
        out.extend(self.armed.drain(..got));
        if let Some(d) = drops {
            self.saw_drops(d);
        }
    }

    fn tx_burst(&mut self, pkts: &mut Burst<HeapBuf>) -> usize {
        let nbuf = pkts.len();
        if nbuf == 0 {
            return 0;
        }
        // Build one message per unicast packet and one per member for a
        // packet to every member. `first[i]` is packet i's first message.
        let mut first = [0usize; BURST + 1];
        let mut total = 0usize;
        let UdpPort {
            tx,
            tx_owner,
            members,
            stats,
            namelen,
            v6,
            scope_id,
            ..
        } = self;
        for (i, b) in pkts.iter().enumerate() {
            first[i] = total;
            let data = b.data();
            tx.iov[i] = libc::iovec {
                iov_base: data.as_ptr().cast_mut().cast::<c_void>(),
                iov_len: data.len(),
            };
            let dst = b.native_dst();
            if dst.is_empty() {
                for m in members.iter() {
                    let h = &mut tx.hdrs[total];
                    h.msg_hdr.msg_name = (&raw const *m).cast_mut().cast::<c_void>();
                    h.msg_hdr.msg_namelen = *namelen;
                    h.msg_hdr.msg_iov = &raw mut tx.iov[i];
                    h.msg_hdr.msg_iovlen = 1;
                    h.msg_len = 0;
                    tx_owner[total] = i as u8;
                    total += 1;
                }
                if members.is_empty() {
                    stats.tx_errors += 1;
                }
                continue;
            }
            // An address of a family the socket does not carry fails here
            // (encap refuses it; this guards buffers that skipped encap).
            let ok = dst
                .as_udp()
                .and_then(|sa| write_sockaddr(&sa, *v6, *scope_id, &mut tx.names[i]))
                .is_some();
            if !ok {
                stats.tx_errors += 1;
                continue;
            }
            let h = &mut tx.hdrs[total];
            h.msg_hdr.msg_name = (&raw mut tx.names[i]).cast::<c_void>();
            h.msg_hdr.msg_namelen = *namelen;
            h.msg_hdr.msg_iov = &raw mut tx.iov[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_len = 0;
            tx_owner[total] = i as u8;
            total += 1;
        }
        first[nbuf] = total;

        // Send; skip a message that fails on its own (per-destination
        // error), stop when the kernel has no room.
        let mut k = 0usize;
        let mut full = false;
        while k < total {
            let vlen = (total - k).min(MAX_MMSG);
            self.stats.tx_calls += 1;
            // SAFETY: headers k..k+vlen point at live socket addresses (in
            // `self.tx.names` or `self.members`) and iovecs in `self.tx`,
            // whose bases point at the packet bytes of buffers owned by
            // `pkts`; the kernel only reads them (and writes msg_len).
            let r = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    self.tx.hdrs.as_mut_ptr().add(k),
                    vlen as c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if r == 0 {
                // Nothing taken and no error: treat as no room.
                full = true;
                break;
            }
            if r > 0 {
                let r = r as usize;
                for h in &self.tx.hdrs[k..k + r] {
                    self.stats.tx_bytes += u64::from(h.msg_len);
                }
                self.stats.tx_packets += r as u64;
                k += r;
                continue;
            }
            match errno() {
                libc::EINTR => {}
                libc::EAGAIN | libc::ENOBUFS => {
                    full = true;
                    break;
                }
                _ => {
                    // This destination failed: drop this datagram, go on.
                    self.stats.tx_errors += 1;
                    k += 1;
                }
            }
        }

        // Packets whose messages all went (or failed) leave the burst; a
        // fan-out cut short after its first copy leaves too, the copies not
        // sent counted as tx_full.
        let done = if k >= total {
            nbuf
        } else {
            let owner = self.tx_owner[k] as usize;
            let start = first[owner];
            if k > start {
                let end = first[owner + 1];
                self.stats.tx_full += (end - k) as u64;
                self.stats.tx_full += (total - end) as u64;
                owner + 1
            } else {
                self.stats.tx_full += (total - k) as u64;
                owner
            }
        };
        debug_assert!(full || done == nbuf);
        for b in pkts.drain(..done) {
            self.pool.put(b);
        }
        done
    }

    fn encap(&self, buf: &mut HeapBuf, dst: &NativeAddr) -> bool {
        if !self.accepts(dst) {
            return false;
        }
        buf.set_native_dst(*dst);
        true
    }

    fn alloc(&mut self) -> Option<HeapBuf> {
        self.pool.get().or_else(|| self.armed.pop())
    }

    fn recycle(&mut self, buf: HeapBuf) {
        self.pool.put(buf);
    }

    fn native_addr(&self) -> NativeAddr {
        self.addr
    }

    fn link_kind(&self) -> LinkKind {
        LinkKind::Udp
    }

    fn wait_fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.fd.as_fd())
    }

    /// Bytes: the datagrams' as received (after truncation) and as sent;
    /// `rx_missed`: the socket's drops ([`UdpStats::rx_missed`], read now
    /// with one `getsockopt`); `tx_link_errors`: datagrams the kernel or
    /// the port refused ([`UdpStats::tx_errors`]).
    fn link_stats(&mut self) -> LinkStats {
        if let Some(d) = self.socket_drops() {
            self.saw_drops(d);
        }
        LinkStats {
            rx_bytes: self.stats.rx_bytes,
            tx_bytes: self.stats.tx_bytes,
            rx_missed: self.stats.rx_missed,
            tx_link_errors: self.stats.tx_errors,
            ..LinkStats::default()
        }
    }
}

/// The socket's drop count a received message carries (SO_RXQ_OVFL), if
/// any: the kernel adds it once the socket has dropped datagrams.
fn rxq_ovfl(h: &libc::msghdr) -> Option<u32> {
    // SAFETY: CMSG_LEN is arithmetic on its argument.
    let need = unsafe { libc::CMSG_LEN(size_of::<u32>() as u32) } as usize;
    // SAFETY: `h` is a header the kernel filled in: its control buffer is
    // `msg_controllen` valid bytes holding whole cmsghdrs, which the CMSG
    // macros walk without reading past it; a data word is read only from a
    // header long enough to hold it.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET
                && (*c).cmsg_type == libc::SO_RXQ_OVFL
                && (*c).cmsg_len as usize >= need
            {
                return Some(libc::CMSG_DATA(c).cast::<u32>().read_unaligned());
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}

/// Finds `n` distinct free UDP ports on 127.0.0.1 for other processes (or
/// sockets opened later) to bind: a lab's routers and hosts, a test's
/// daemons.
///
/// The ports are released before their users bind them, so they come from
/// below the kernel's ephemeral range (`ip_local_port_range`): a port
/// released here cannot be handed to another program's `bind(0)` or
/// outgoing socket in the meantime (which made parallel labs and tests flaky
/// when the ports were themselves ephemeral). The search starts at a place
/// that differs per process and call, so that callers at the same moment do
/// not try the same ports first, and skips ports in use.
pub fn free_loopback_ports(n: usize) -> io::Result<Vec<u16>> {
    let (lo, hi) = reservable_range();
    let span = u32::from(hi - lo) + 1;
    let seed = std::process::id().wrapping_mul(2_654_435_761)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
    let start = seed % span;
    let mut held = Vec::with_capacity(n);
    for i in 0..span {
        if held.len() == n {
            break;
        }
        let port = lo + ((start + i) % span) as u16;
        if let Ok(s) = std::net::UdpSocket::bind(("127.0.0.1", port)) {
            held.push(s);
        }
    }
    if held.len() < n {
        return Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("fewer than {n} free in {lo}-{hi} (below the ephemeral range)"),
        ));
    }
    held.iter()
        .map(|s| s.local_addr().map(|a| a.port()))
        .collect()
}

/// The ports [`free_loopback_ports`] takes from: the 4096 below the
/// ephemeral range (Linux's `/proc/sys/net/ipv4/ip_local_port_range`, 32768
/// by default), or 20000-24095 where that range starts too low to leave
/// them.
pub fn reservable_range() -> (u16, u16) {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    if low >= 10000 + 4096 {
        (low - 4096, low - 1)
    } else {
        (20000, 24095)
    }
}
