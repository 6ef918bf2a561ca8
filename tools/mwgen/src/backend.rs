//! Port arguments (`--tx`, `--rx`) and opening them on each backend.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

use ports::impair::ImpairConfig;

use crate::rate::parse_duration;

/// A port as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortArg {
    /// `udp:ADDR:PORT`: a UDP socket bound there (unprivileged).
    Udp(SocketAddr),
    /// `af_packet:IFNAME`: an AF_PACKET socket on an interface (CAP_NET_RAW).
    AfPacket(String),
    /// `dpdk:DEVICE`: a DPDK ethdev: a vdev with its arguments
    /// (`net_memif0,role=client,socket=/tmp/a.sock`) or a PCI address.
    Dpdk(String),
    /// `mem`: an in-memory wire from the transmit end to the receive end,
    /// with the impairment of `--impair` (a self-test of the generator).
    Mem,
}

impl PortArg {
    /// The backend's name.
    pub fn backend(&self) -> &'static str {
        match self {
            PortArg::Udp(_) => "udp",
            PortArg::AfPacket(_) => "af_packet",
            PortArg::Dpdk(_) => "dpdk",
            PortArg::Mem => "mem",
        }
    }
}

impl FromStr for PortArg {
    type Err = String;

    fn from_str(s: &str) -> Result<PortArg, String> {
        let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
        match kind {
            "udp" => rest
                .parse()
                .map(PortArg::Udp)
                .map_err(|_| format!("{s:?}: expected udp:ADDRESS:PORT, e.g. udp:127.0.0.1:35130")),
            "af_packet" if !rest.is_empty() && rest.len() <= 15 => {
                Ok(PortArg::AfPacket(rest.to_string()))
            }
            "af_packet" => Err(format!(
                "{s:?}: expected af_packet:IFNAME (at most 15 bytes)"
            )),
            "dpdk" if !rest.is_empty() => Ok(PortArg::Dpdk(rest.to_string())),
            "dpdk" => Err(format!(
                "{s:?}: expected dpdk:DEVICE, e.g. dpdk:net_memif0,role=client,socket=/tmp/a.sock"
            )),
            "mem" if rest.is_empty() => Ok(PortArg::Mem),
            _ => Err(format!(
                "{s:?}: a port is udp:ADDR:PORT, af_packet:IFNAME, dpdk:DEVICE or mem"
            )),
        }
    }
}

impl fmt::Display for PortArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortArg::Udp(a) => write!(f, "udp:{a}"),
            PortArg::AfPacket(i) => write!(f, "af_packet:{i}"),
            PortArg::Dpdk(d) => write!(f, "dpdk:{d}"),
            PortArg::Mem => f.write_str("mem"),
        }
    }
}

/// Parses `--impair`: comma-separated `loss=P`, `dup=P`, `reorder=P`,
/// `corrupt=P` (probabilities 0-1), `delay=D`, `jitter=D` (durations),
/// `seed=N`.
pub fn parse_impair(s: &str) -> Result<ImpairConfig, String> {
    let mut c = ImpairConfig::seeded(1);
    for kv in s.split(',').filter(|t| !t.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--impair: {kv:?}: expected KEY=VALUE"))?;
        let prob = || {
            v.parse::<f64>()
                .ok()
                .filter(|p| (0.0..=1.0).contains(p))
                .ok_or_else(|| format!("--impair: {k}={v}: a probability is 0-1"))
        };
        match k {
            "loss" => c.loss = prob()?,
            "dup" | "duplicate" => c.duplicate = prob()?,
            "reorder" => c.reorder = prob()?,
            "corrupt" => c.corrupt = prob()?,
            "delay" => c.delay = parse_duration(v).map_err(|e| format!("--impair: delay: {e}"))?,
            "jitter" => {
                c.jitter = parse_duration(v).map_err(|e| format!("--impair: jitter: {e}"))?
            }
            "seed" => {
                c.seed = v
                    .parse()
                    .map_err(|_| format!("--impair: seed={v}: expected an integer"))?
            }
            _ => {
                return Err(format!(
                    "--impair: unknown key {k:?} (loss, dup, reorder, corrupt, delay, jitter, seed)"
                ));
            }
        }
    }
    Ok(c)
}

/// EAL arguments for DPDK ports: the user's `--eal` words, then `--vdev=` for
/// each vdev (a device whose name starts with `net_`) and `-a` for each PCI
/// address.
pub fn eal_args(eal: &str, devices: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = eal.split_whitespace().map(str::to_string).collect();
    for d in devices {
        if d.starts_with("net_") {
            v.push(format!("--vdev={d}"));
        } else {
            v.push("-a".into());
            v.push(d.to_string());
        }
    }
    v
}

/// The ethdev name of a device argument: the part before the first comma.
pub fn device_name(d: &str) -> &str {
    d.split(',').next().unwrap_or(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn port_args() {
        assert_eq!(
            "udp:127.0.0.1:5".parse::<PortArg>().unwrap(),
            PortArg::Udp("127.0.0.1:5".parse().unwrap())
        );
        assert_eq!(
            "af_packet:veth0".parse::<PortArg>().unwrap(),
            PortArg::AfPacket("veth0".into())
        );
        let d = "dpdk:net_memif0,role=client,socket=/tmp/a.sock";
        assert_eq!(d.parse::<PortArg>().unwrap().to_string(), d);
        assert_eq!("mem".parse::<PortArg>().unwrap(), PortArg::Mem);
        for bad in [
            "",
            "udp:",
            "udp:localhost",
            "tcp:1.2.3.4:5",
            "dpdk:",
            "af_packet:",
            "mem:x",
        ] {
            assert!(bad.parse::<PortArg>().is_err(), "{bad}");
        }
    }

    #[test]
    fn impair_args() {
        let c =
            parse_impair("loss=0.1,dup=0.01,reorder=0.02,delay=50us,jitter=1ms,seed=7").unwrap();
        assert_eq!(c.loss, 0.1);
        assert_eq!(c.duplicate, 0.01);
        assert_eq!(c.reorder, 0.02);
        assert_eq!(c.delay, Duration::from_micros(50));
        assert_eq!(c.jitter, Duration::from_millis(1));
        assert_eq!(c.seed, 7);
        for bad in ["loss=2", "loss", "speed=1", "delay=soon", "seed=x"] {
            assert!(parse_impair(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn eal() {
        assert_eq!(
            eal_args("--no-huge -m 512", &["net_null0,no-rx=1", "0000:3b:00.0"]),
            [
                "--no-huge",
                "-m",
                "512",
                "--vdev=net_null0,no-rx=1",
                "-a",
                "0000:3b:00.0"
            ]
        );
        assert_eq!(device_name("net_memif0,role=client"), "net_memif0");
    }
}
