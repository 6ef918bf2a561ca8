//! A client of DPDK's telemetry socket (`dpdk_telemetry.v2`, a SOCK_SEQPACKET
//! UNIX socket in the EAL runtime directory of a process started with
//! `--file-prefix=P`: /var/run/dpdk/P as root, else $XDG_RUNTIME_DIR/dpdk/P
//! or /tmp/dpdk/P). One command per message (`/ethdev/stats,N`), one JSON
//! object per answer. Used to read the ethdev counters of DPDK's example
//! applications, which print none of their own.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::net::{
    AddressFamily, RecvFlags, SendFlags, SocketAddrUnix, SocketType, connect, recv, send, socket,
};
use serde_json::Value;

use super::Result;

/// The runtime directories EAL may use for `prefix`, most likely first.
pub fn runtime_dirs(prefix: &str) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if rustix::process::geteuid().is_root() {
        v.push(PathBuf::from("/var/run/dpdk").join(prefix));
    }
    if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR") {
        v.push(PathBuf::from(x).join("dpdk").join(prefix));
    }
    v.push(PathBuf::from("/tmp/dpdk").join(prefix));
    v
}

/// The telemetry socket of the process with `prefix`, if it exists.
pub fn socket_path(prefix: &str) -> Option<PathBuf> {
    runtime_dirs(prefix)
        .into_iter()
        .map(|d| d.join("dpdk_telemetry.v2"))
        .find(|p| p.exists())
}

/// One ethdev's counters (`/ethdev/stats,N`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EthStats {
    /// Frames received.
    pub ipackets: u64,
    /// Frames transmitted.
    pub opackets: u64,
    /// Frames the device dropped (rx queue full).
    pub imissed: u64,
    /// Receive errors.
    pub ierrors: u64,
    /// Transmit errors.
    pub oerrors: u64,
    /// Receive mbuf allocation failures.
    pub rx_nombuf: u64,
}

impl EthStats {
    /// `self - earlier`.
    pub fn delta(&self, e: &EthStats) -> EthStats {
        EthStats {
            ipackets: self.ipackets.saturating_sub(e.ipackets),
            opackets: self.opackets.saturating_sub(e.opackets),
            imissed: self.imissed.saturating_sub(e.imissed),
            ierrors: self.ierrors.saturating_sub(e.ierrors),
            oerrors: self.oerrors.saturating_sub(e.oerrors),
            rx_nombuf: self.rx_nombuf.saturating_sub(e.rx_nombuf),
        }
    }

    /// The JSON record.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "ipackets": self.ipackets,
            "opackets": self.opackets,
            "imissed": self.imissed,
            "ierrors": self.ierrors,
            "oerrors": self.oerrors,
            "rx_nombuf": self.rx_nombuf,
        })
    }
}

/// A connection to a telemetry socket.
#[derive(Debug)]
pub struct Telemetry {
    fd: OwnedFd,
    path: PathBuf,
}

impl Telemetry {
    /// Connects and reads the greeting (`{"version": ..., "pid": ...}`).
    pub fn connect(path: &Path) -> Result<Telemetry> {
        let err = |what: &str, e: rustix::io::Errno| format!("{what} {}: {e}", path.display());
        let fd = socket(AddressFamily::UNIX, SocketType::SEQPACKET, None)
            .map_err(|e| err("socket for", e))?;
        let addr = SocketAddrUnix::new(path).map_err(|e| err("address", e))?;
        connect(&fd, &addr).map_err(|e| err("cannot connect to", e))?;
        let t = Telemetry {
            fd,
            path: path.to_path_buf(),
        };
        t.read()?;
        Ok(t)
    }

    fn read(&self) -> Result<Value> {
        let mut buf = vec![0u8; 1 << 16];
        let (n, _) = recv(&self.fd, &mut buf[..], RecvFlags::empty())
            .map_err(|e| format!("reading {}: {e}", self.path.display()))?;
        serde_json::from_slice(&buf[..n]).map_err(|e| {
            format!(
                "{}: not JSON ({e}): {}",
                self.path.display(),
                String::from_utf8_lossy(&buf[..n.min(200)])
            )
        })
    }

    /// Sends `command` and returns the answer.
    pub fn query(&self, command: &str) -> Result<Value> {
        send(&self.fd, command.as_bytes(), SendFlags::empty())
            .map_err(|e| format!("writing to {}: {e}", self.path.display()))?;
        self.read()
    }

    /// The counters of ethdev `port`.
    pub fn stats(&self, port: u16) -> Result<EthStats> {
        let v = self.query(&format!("/ethdev/stats,{port}"))?;
        let s = v
            .get("/ethdev/stats")
            .filter(|s| s.is_object())
            .ok_or_else(|| format!("/ethdev/stats,{port}: no counters in {v}"))?;
        let n = |k: &str| s.get(k).and_then(Value::as_u64).unwrap_or(0);
        Ok(EthStats {
            ipackets: n("ipackets"),
            opackets: n("opackets"),
            imissed: n("imissed"),
            ierrors: n("ierrors"),
            oerrors: n("oerrors"),
            rx_nombuf: n("rx_nombuf"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_saturate() {
        let a = EthStats {
            ipackets: 10,
            opackets: 5,
            ..EthStats::default()
        };
        let b = EthStats {
            ipackets: 15,
            opackets: 4,
            ..EthStats::default()
        };
        let d = b.delta(&a);
        assert_eq!((d.ipackets, d.opackets), (5, 0));
    }

    #[test]
    fn runtime_dirs_end_with_the_prefix() {
        for d in runtime_dirs("mwx") {
            assert!(d.ends_with("dpdk/mwx"), "{}", d.display());
        }
    }
}
