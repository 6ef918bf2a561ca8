//! Rates and durations as written on the command line, and the pacer that
//! spreads transmissions over time.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A transmit rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// As fast as the port takes packets.
    Max,
    /// Packets per second.
    Pps(f64),
    /// Bits per second of frames (the sizes of crate::profile).
    Bps(f64),
}

impl Rate {
    /// Packets per second for frames of `mean_frame` bytes on average;
    /// `None` for [`Rate::Max`].
    pub fn pps(&self, mean_frame: f64) -> Option<f64> {
        match *self {
            Rate::Max => None,
            Rate::Pps(p) => Some(p),
            Rate::Bps(b) => Some(b / (mean_frame.max(1.0) * 8.0)),
        }
    }
}

impl FromStr for Rate {
    type Err = String;

    /// `max`; `N`, `Npps`, `Nkpps`, `NMpps` (packets/s); `Nbps`, `Nkbps`,
    /// `NMbps`, `NGbps` (bits/s, also written `bit/s`). N may have a
    /// fraction: `1.5Mpps`.
    fn from_str(s: &str) -> Result<Rate, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("max") {
            return Ok(Rate::Max);
        }
        let (num, unit) = number_and_unit(t);
        let n: f64 = num
            .parse()
            .ok()
            .filter(|n: &f64| n.is_finite() && *n > 0.0)
            .ok_or_else(|| format!("--rate: {s:?}: expected max, 1000pps, 1.5Mpps or 1Gbps"))?;
        let unit = unit.trim().replace("bit/s", "bps");
        let (mult, bits) = match unit.as_str() {
            "" | "pps" => (1.0, false),
            "kpps" | "Kpps" => (1e3, false),
            "Mpps" | "mpps" => (1e6, false),
            "Gpps" => (1e9, false),
            "bps" => (1.0, true),
            "kbps" | "Kbps" => (1e3, true),
            "Mbps" => (1e6, true),
            "Gbps" => (1e9, true),
            _ => {
                return Err(format!(
                    "--rate: {s:?}: unknown unit {unit:?} (pps, kpps, Mpps, bps, kbps, Mbps, Gbps)"
                ));
            }
        };
        Ok(if bits {
            Rate::Bps(n * mult)
        } else {
            Rate::Pps(n * mult)
        })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rate::Max => f.write_str("max"),
            Rate::Pps(p) => write!(f, "{p:.0}pps"),
            Rate::Bps(b) => write!(f, "{b:.0}bps"),
        }
    }
}

/// Splits `10.5Mpps` into `10.5` and `Mpps`: the leading digits and dots,
/// and the rest.
fn number_and_unit(t: &str) -> (&str, &str) {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.split_at(split)
}

/// Parses a duration: `10s`, `500ms`, `250us`, `2m`, or plain seconds
/// (`1.5`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = number_and_unit(t);
    let n: f64 = num
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| format!("{s:?}: expected a duration such as 10s, 500ms or 2m"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1e3,
        "us" | "µs" => n / 1e6,
        "ns" => n / 1e9,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?} (ns, us, ms, s, m, h)"
            ));
        }
    };
    Duration::try_from_secs_f64(secs).map_err(|e| format!("{s:?}: {e}"))
}

/// Spreads transmissions evenly: at `t` ns after the start, `rate x t`
/// packets may have been attempted. A generator that falls behind (a full
/// port) catches up a burst at a time, never more.
#[derive(Debug, Clone, Copy)]
pub struct Pacer {
    pps: Option<f64>,
    start_ns: u64,
}

impl Pacer {
    /// A pacer at `pps` packets per second (`None`: unlimited) from `start_ns`.
    pub fn new(pps: Option<f64>, start_ns: u64) -> Pacer {
        Pacer { pps, start_ns }
    }

    /// How many more packets may be attempted at `now_ns`, when `attempted`
    /// already were; at most `cap`.
    #[inline]
    pub fn allowance(&self, now_ns: u64, attempted: u64, cap: usize) -> usize {
        match self.pps {
            None => cap,
            Some(r) => {
                let due = (now_ns.saturating_sub(self.start_ns) as f64 * r / 1e9) as u64 + 1;
                (due.saturating_sub(attempted) as usize).min(cap)
            }
        }
    }

    /// Nanoseconds from `now_ns` until the next packet is due (0 if it is).
    pub fn wait_ns(&self, now_ns: u64, attempted: u64) -> u64 {
        match self.pps {
            None => 0,
            Some(r) => {
                let at = self.start_ns + (attempted as f64 * 1e9 / r) as u64;
                at.saturating_sub(now_ns)
            }
        }
    }

    /// The rate, packets per second.
    pub fn pps(&self) -> Option<f64> {
        self.pps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!("max".parse::<Rate>().unwrap(), Rate::Max);
        assert_eq!("1000".parse::<Rate>().unwrap(), Rate::Pps(1000.0));
        assert_eq!("1.5Mpps".parse::<Rate>().unwrap(), Rate::Pps(1.5e6));
        assert_eq!("10Gbps".parse::<Rate>().unwrap(), Rate::Bps(1e10));
        assert_eq!("500Mbit/s".parse::<Rate>().unwrap(), Rate::Bps(5e8));
        for bad in ["", "0", "-5", "fast", "10 furlongs", "nan"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
        assert_eq!(Rate::Bps(64.0 * 8.0 * 1000.0).pps(64.0), Some(1000.0));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn pacing() {
        let p = Pacer::new(Some(1e6), 1000); // one packet per µs
        assert_eq!(p.allowance(1000, 0, 32), 1);
        assert_eq!(p.allowance(1000, 1, 32), 0);
        assert_eq!(p.allowance(11_000, 1, 32), 10);
        assert_eq!(p.allowance(1_000_000, 1, 32), 32);
        assert_eq!(p.wait_ns(1000, 1), 1000);
        assert_eq!(Pacer::new(None, 0).allowance(0, 1 << 40, 32), 32);
    }
}
