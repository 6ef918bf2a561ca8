//! A host's link to its SAN: a UDP socket or an AF_PACKET port.

use std::io;
use std::net::UdpSocket;
use std::os::fd::OwnedFd;
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use ports::af_packet::{AfPacketConfig, AfPacketPort};
use ports::{Burst, PacketBuf, Port};
use rrp::limits::MAX_L2RHS;
use rrp::wire::locate;
use rrp::{LinkKind, NativeAddr};

use super::POLL;
use super::client::nothing_yet;
use super::format::format_native;
use super::spec::{HostLink, HostSpec};

/// How many times a send retries a full AF_PACKET transmit ring.
pub(super) const TX_RETRIES: u32 = 200;

/// A host's link to its SAN: a UDP socket or an AF_PACKET port (see the
/// host module's "Threads" for how the port is shared).
pub(super) enum Link {
    Udp(UdpSocket),
    AfPacket {
        /// The port: receive side for the receive loop, transmit side for
        /// every sender (boxed: a port is large, a socket small).
        port: Box<Mutex<AfPacketPort>>,
        /// A duplicate of the port's descriptor, polled by the receive loop
        /// without the lock.
        wait: OwnedFd,
        /// The interface's MAC.
        mac: [u8; 6],
    },
}

pub(super) fn lock_port(port: &Mutex<AfPacketPort>) -> MutexGuard<'_, AfPacketPort> {
    port.lock().unwrap_or_else(|p| p.into_inner())
}

impl Link {
    pub(super) fn open(spec: &HostSpec) -> Result<Link, String> {
        match &spec.link {
            HostLink::Udp { bind } => {
                let sock = UdpSocket::bind(bind)
                    .map_err(|e| format!("{}: bind {bind}: {e}", spec.name))?;
                sock.set_read_timeout(Some(POLL))
                    .map_err(|e| format!("{}: {e}", spec.name))?;
                Ok(Link::Udp(sock))
            }
            HostLink::AfPacket { interface } => {
                let mut cfg = AfPacketConfig::new(interface);
                // A host, not a router port: small rings.
                cfg.rx_frames = 256;
                cfg.tx_frames = 256;
                cfg.pool_size = 256;
                let port = AfPacketPort::open(cfg)
                    .map_err(|e| format!("{}: AF_PACKET on {interface}: {e}", spec.name))?;
                let wait = port
                    .wait_fd()
                    .ok_or("AF_PACKET port without a descriptor")?
                    .try_clone_to_owned()
                    .map_err(|e| format!("{}: {e}", spec.name))?;
                Ok(Link::AfPacket {
                    mac: port.mac(),
                    port: Box::new(Mutex::new(port)),
                    wait,
                })
            }
        }
    }

    pub(super) fn kind(&self) -> LinkKind {
        match self {
            Link::Udp(_) => LinkKind::Udp,
            Link::AfPacket { .. } => LinkKind::Ethernet,
        }
    }

    /// This host's own native address.
    pub(super) fn native(&self) -> NativeAddr {
        match self {
            Link::Udp(s) => s.local_addr().map_or(NativeAddr::NONE, NativeAddr::udp),
            Link::AfPacket { mac, .. } => NativeAddr::mac(*mac),
        }
    }

    /// A native address as text, for this link.
    pub(super) fn text(&self, n: &NativeAddr) -> String {
        format_native(n, self.kind())
    }

    /// Sends one MessageWay packet to native address `to` on the SAN.
    pub(super) fn send(&self, pkt: &[u8], to: &NativeAddr) -> io::Result<()> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        match self {
            Link::Udp(sock) => {
                let sa = to
                    .as_udp()
                    .ok_or_else(|| invalid(format!("{to}: not a UDP endpoint")))?;
                sock.send_to(pkt, sa).map(|_| ())
            }
            Link::AfPacket { port, .. } => {
                let mac = to
                    .as_mac()
                    .ok_or_else(|| invalid(format!("{to}: not a MAC")))?;
                let mut p = lock_port(port);
                let mut b = p
                    .alloc()
                    .ok_or_else(|| io::Error::other("buffer pool exhausted"))?;
                let fits = match b.append(pkt.len()) {
                    Some(tail) => {
                        tail.copy_from_slice(pkt);
                        true
                    }
                    None => false,
                };
                if !fits || !p.encap(&mut b, &NativeAddr::mac(mac)) {
                    p.recycle(b);
                    return Err(invalid(format!("{} bytes: too long", pkt.len())));
                }
                let mut burst = Burst::new();
                burst.push(b);
                for _ in 0..TX_RETRIES {
                    let errors = p.stats().tx_errors;
                    if p.tx_burst(&mut burst) > 0 {
                        return if p.stats().tx_errors == errors {
                            Ok(())
                        } else {
                            Err(invalid(format!(
                                "{} bytes: longer than the interface takes",
                                pkt.len()
                            )))
                        };
                    }
                    // The transmit ring is full: let the kernel drain it.
                    drop(p);
                    thread::sleep(Duration::from_micros(50));
                    p = lock_port(port);
                }
                p.recycle_burst(&mut burst);
                Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "transmit ring full",
                ))
            }
        }
    }

    /// Receives what arrives within about [`POLL`] and hands each packet
    /// with its native source to `f` (on Ethernet without its frame
    /// padding: cut at the end its DL gives). `Ok` also when nothing came.
    pub(super) fn receive(
        &self,
        buf: &mut [u8],
        mut f: impl FnMut(&[u8], NativeAddr),
    ) -> io::Result<()> {
        match self {
            Link::Udp(sock) => match sock.recv_from(buf) {
                Ok((n, from)) => {
                    f(&buf[..n], NativeAddr::udp(from));
                    Ok(())
                }
                Err(e) if nothing_yet(&e) => Ok(()),
                Err(e) => Err(e),
            },
            Link::AfPacket { port, wait, .. } => {
                use rustix::event::{PollFd, PollFlags, Timespec, poll};
                let mut fds = [PollFd::new(wait, PollFlags::IN)];
                let timeout = Timespec {
                    tv_sec: 0,
                    tv_nsec: POLL.as_nanos() as _,
                };
                match poll(&mut fds, Some(&timeout)) {
                    Ok(0) | Err(rustix::io::Errno::INTR) => return Ok(()),
                    Ok(_) => {}
                    Err(e) => return Err(e.into()),
                }
                let failed = fds[0]
                    .revents()
                    .intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL);
                let mut burst = Burst::new();
                lock_port(port).rx_burst(&mut burst);
                for b in &burst {
                    let d = b.data();
                    let d = match locate(d, MAX_L2RHS) {
                        Ok(l) => &d[..l.total_len().min(d.len())],
                        Err(_) => d,
                    };
                    f(d, b.native_src());
                }
                let got = !burst.is_empty();
                lock_port(port).recycle_burst(&mut burst);
                if failed && !got {
                    // E.g. the interface went away: do not spin.
                    thread::sleep(POLL);
                    return Err(io::Error::other("AF_PACKET socket error"));
                }
                Ok(())
            }
        }
    }
}
