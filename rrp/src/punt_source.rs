//! [`PuntSource`]: one of the heaviest senders of a punt class now
//! (docs/dataplane.md "Punt classes", docs/stats.md "Heaviest sources"):
//! what a worker measures in its per-source buckets, the stats area
//! carries as words, and `mwctl show punt` and Prometheus show, so that an
//! operator sees who floods the box while it happens.

use crate::encap::LinkKind;
use crate::native::{MAX_NATIVE_LEN, NativeAddr};
use crate::port::PortId;
use crate::punt_class::PuntClass;

/// Sources kept per class in a report (each worker's, and the box's).
pub const HEAVIEST_PER_CLASS: usize = 4;

/// Most sources in a report: [`HEAVIEST_PER_CLASS`] per class.
pub const HEAVIEST: usize = HEAVIEST_PER_CLASS * PuntClass::COUNT;

/// A sender of packets for the box and how much it sends now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PuntSource {
    /// The class its packets are punted under.
    pub class: PuntClass,
    /// The port they arrive on (the last seen).
    pub port: PortId,
    /// The kind of that port's SAN: how its native address reads.
    pub link: LinkKind,
    /// Its native address (the last seen in its bucket: sources that hash
    /// alike share a bucket and show as one).
    pub native: NativeAddr,
    /// Its packets for the box in the last full second (or in this one,
    /// when more).
    pub offered_per_s: u64,
    /// Of those, the ones dropped (over its share, the class's rate, or
    /// with the class's ring full).
    pub dropped_per_s: u64,
}

impl PuntSource {
    /// 64-bit words of one source as the stats area holds it.
    pub const WORDS: usize = 6;

    /// The source as words: the class + 1 (0 marks an empty entry) in the
    /// high half of the first word, the link kind's place in
    /// [`LinkKind::ALL`] in bits 16-23 and the port in the low 16 bits; the
    /// native address's length and bytes (three words, big-endian); the
    /// packets offered and dropped a second.
    pub fn to_words(&self) -> [u64; Self::WORDS] {
        let mut bytes = [0u8; 24];
        bytes[0] = self.native.len() as u8;
        bytes[1..1 + self.native.len()].copy_from_slice(self.native.as_bytes());
        let w = |i: usize| u64::from_be_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        [
            ((self.class as u64 + 1) << 32) | (link_code(self.link) << 16) | u64::from(self.port.0),
            w(0),
            w(1),
            w(2),
            self.offered_per_s,
            self.dropped_per_s,
        ]
    }

    /// The source from [`PuntSource::to_words`]; `None` for an empty entry
    /// or words no source gives.
    pub fn from_words(w: &[u64]) -> Option<PuntSource> {
        let w: &[u64; Self::WORDS] = w.try_into().ok()?;
        let class = PuntClass::ALL.get(((w[0] >> 32) as usize).checked_sub(1)?)?;
        if w[0] & 0xFF00_0000 != 0 {
            return None;
        }
        let link = *LinkKind::ALL.get(((w[0] >> 16) & 0xFF) as usize)?;
        let port = (w[0] & 0xFFFF) as u16;
        let mut bytes = [0u8; 24];
        for (i, word) in w[1..4].iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&word.to_be_bytes());
        }
        let len = bytes[0] as usize;
        if len > MAX_NATIVE_LEN {
            return None;
        }
        Some(PuntSource {
            class: *class,
            port: PortId(port),
            link,
            native: NativeAddr::from_bytes(&bytes[1..1 + len])?,
            offered_per_s: w[4],
            dropped_per_s: w[5],
        })
    }

    /// The source's native address as its SAN writes it (an endpoint on
    /// UDP, a MAC on Ethernet).
    pub fn source(&self) -> String {
        if self.native.is_empty() {
            return "-".into();
        }
        self.native.on(self.link).to_string()
    }

    /// Merges the reports of several workers into the box's: per class, the
    /// [`HEAVIEST_PER_CLASS`] sources that offer most (a source seen by
    /// several workers counts once per worker: its packets are spread over
    /// them), in class order, heaviest first.
    pub fn heaviest(sources: impl IntoIterator<Item = PuntSource>) -> Vec<PuntSource> {
        let mut all: Vec<PuntSource> = Vec::new();
        for s in sources {
            match all
                .iter_mut()
                .find(|o| o.class == s.class && o.native == s.native)
            {
                Some(o) => {
                    o.offered_per_s += s.offered_per_s;
                    o.dropped_per_s += s.dropped_per_s;
                }
                None => all.push(s),
            }
        }
        all.sort_by(|a, b| {
            (a.class, b.offered_per_s, a.native.as_bytes()).cmp(&(
                b.class,
                a.offered_per_s,
                b.native.as_bytes(),
            ))
        });
        let mut out = Vec::new();
        for c in PuntClass::ALL {
            out.extend(all.iter().filter(|s| s.class == c).take(HEAVIEST_PER_CLASS));
        }
        out
    }
}

/// The place of `k` in [`LinkKind::ALL`].
fn link_code(k: LinkKind) -> u64 {
    LinkKind::ALL.iter().position(|x| *x == k).unwrap_or(0) as u64
}

/// A source in JSON (`mwctl stats --json`, `mwctl show punt --json`):
/// the class by name, the source as its SAN writes it.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    class: String,
    port: PortId,
    link: String,
    source: String,
    offered_per_s: u64,
    dropped_per_s: u64,
}

#[cfg(feature = "serde")]
impl serde::Serialize for PuntSource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Row {
            class: self.class.name().into(),
            port: self.port,
            link: self.link.name().into(),
            source: self.source(),
            offered_per_s: self.offered_per_s,
            dropped_per_s: self.dropped_per_s,
        }
        .serialize(s)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for PuntSource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PuntSource, D::Error> {
        use serde::de::Error;
        let r = Row::deserialize(d)?;
        let class = PuntClass::from_name(&r.class)
            .ok_or_else(|| D::Error::custom(format!("unknown punt class {:?}", r.class)))?;
        let link = LinkKind::from_name(&r.link)
            .ok_or_else(|| D::Error::custom(format!("unknown link kind {:?}", r.link)))?;
        let native = NativeAddr::parse_on(link, &r.source)
            .or_else(|_| NativeAddr::parse(&r.source))
            .map_err(D::Error::custom)?;
        Ok(PuntSource {
            class,
            port: r.port,
            link,
            native,
            offered_per_s: r.offered_per_s,
            dropped_per_s: r.dropped_per_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(class: PuntClass, n: u8, offered: u64) -> PuntSource {
        PuntSource {
            class,
            port: PortId(3),
            link: LinkKind::Ethernet,
            native: NativeAddr::mac([2, 0, 0, 0, 0, n]),
            offered_per_s: offered,
            dropped_per_s: offered / 2,
        }
    }

    #[test]
    fn words_round_trip() {
        let udp6 = NativeAddr::udp("[2001:db8::1]:34997".parse().unwrap());
        for s in [
            src(PuntClass::Management, 9, 180_000),
            PuntSource {
                native: udp6,
                link: LinkKind::Udp,
                ..src(PuntClass::Local, 0, 1)
            },
            PuntSource {
                native: NativeAddr::udp("127.0.0.1:35001".parse().unwrap()),
                link: LinkKind::Udp,
                port: PortId(15),
                ..src(PuntClass::Request, 0, 7)
            },
            PuntSource {
                native: NativeAddr::NONE,
                ..src(PuntClass::Routing, 0, 0)
            },
        ] {
            assert_eq!(PuntSource::from_words(&s.to_words()), Some(s));
        }
        assert_eq!(PuntSource::from_words(&[0; PuntSource::WORDS]), None);
        assert_eq!(PuntSource::from_words(&[9 << 32, 0, 0, 0, 0, 0]), None);
        assert_eq!(PuntSource::from_words(&[1 << 32; 3]), None);
        assert_eq!(
            PuntSource::from_words(&[(1 << 32) | (7 << 16), 0, 0, 0, 0, 0]),
            None,
            "no such link kind"
        );
        let mut bad = src(PuntClass::Local, 1, 1).to_words();
        bad[1] = 0xFF << 56;
        assert_eq!(PuntSource::from_words(&bad), None, "native too long");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_names_the_class_and_writes_the_source_as_its_san_does() {
        let s = PuntSource {
            native: NativeAddr::udp("127.0.0.1:35001".parse().unwrap()),
            link: LinkKind::Udp,
            ..src(PuntClass::Management, 0, 180_000)
        };
        let j = serde_json::to_value(s).unwrap();
        assert_eq!(j["class"], "management");
        assert_eq!(j["source"], "127.0.0.1:35001");
        assert_eq!(j["link"], "udp");
        assert_eq!(serde_json::from_value::<PuntSource>(j).unwrap(), s);
        let mac = src(PuntClass::Local, 9, 1);
        let j = serde_json::to_value(mac).unwrap();
        assert_eq!(j["source"], "02:00:00:00:00:09");
        assert_eq!(serde_json::from_value::<PuntSource>(j).unwrap(), mac);
        let none = PuntSource {
            native: NativeAddr::NONE,
            ..mac
        };
        let j = serde_json::to_value(none).unwrap();
        assert_eq!(j["source"], "-");
        assert_eq!(serde_json::from_value::<PuntSource>(j).unwrap(), none);
    }

    #[test]
    fn the_heaviest_of_each_class_merged_over_workers() {
        let mut v: Vec<PuntSource> = (1..=6)
            .map(|i| src(PuntClass::Management, i, u64::from(i) * 10))
            .collect();
        v.push(src(PuntClass::Management, 1, 100)); // the same source on another worker
        v.push(src(PuntClass::Request, 7, 5));
        let h = PuntSource::heaviest(v);
        let got: Vec<(PuntClass, u64)> = h.iter().map(|s| (s.class, s.offered_per_s)).collect();
        assert_eq!(
            got,
            [
                (PuntClass::Request, 5),
                (PuntClass::Management, 110),
                (PuntClass::Management, 60),
                (PuntClass::Management, 50),
                (PuntClass::Management, 40),
            ]
        );
    }
}
