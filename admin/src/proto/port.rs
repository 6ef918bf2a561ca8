//! A port of the box as commands name it: its index or its HR's address.

use std::fmt;
use std::str::FromStr;

use rrp::{Address, PortId};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A port of the box: its index (`0`, `1`, ...; a JSON number) or its
/// HR's address (`"0x0101"`; a JSON string with `0x`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PortSpec {
    /// The port's index.
    Index(PortId),
    /// The address of the port's HR.
    Hr(Address),
}

impl fmt::Display for PortSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortSpec::Index(i) => write!(f, "{i}"),
            PortSpec::Hr(a) => write!(f, "{a}"),
        }
    }
}

impl FromStr for PortSpec {
    type Err = String;
    /// `3` is port 3; `0x0101` is the port whose HR has that address.
    fn from_str(s: &str) -> Result<PortSpec, String> {
        let t = s.trim();
        if t.starts_with("0x") || t.starts_with("0X") {
            t.parse::<Address>()
                .map(PortSpec::Hr)
                .map_err(|e| e.to_string())
        } else {
            t.parse::<u16>().map(|i| PortSpec::Index(PortId(i))).map_err(|_| {
                format!(
                    "not a port: {s:?} (a port index such as 0, or an HR address such as 0x0101)"
                )
            })
        }
    }
}

impl Serialize for PortSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PortSpec::Index(i) => i.serialize(s),
            PortSpec::Hr(a) => a.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PortSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PortSpec, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = PortSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a port index (0) or an HR address (\"0x0101\")")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PortSpec, E> {
                u16::try_from(v)
                    .map(|i| PortSpec::Index(PortId(i)))
                    .map_err(|_| E::custom(format!("port index {v} is too large")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PortSpec, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("port index {v} is negative")))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PortSpec, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn addresses_and_ports() {
        assert_eq!("0x0101".parse::<Address>(), Ok(Address(0x101)));
        assert_eq!("257".parse::<Address>(), Ok(Address(257)));
        assert!("0x10000".parse::<Address>().is_err());
        assert_eq!("3".parse::<PortSpec>(), Ok(PortSpec::Index(PortId(3))));
        assert_eq!(
            "0x0115".parse::<PortSpec>(),
            Ok(PortSpec::Hr(Address(0x115)))
        );
        assert!("eth0".parse::<PortSpec>().is_err());
        let v: Value = serde_json::to_value(PortSpec::Hr(Address(0x115))).unwrap();
        assert_eq!(v, Value::String("0x0115".into()));
    }
}
