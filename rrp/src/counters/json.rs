//! The JSON form of a counter set (`mwctl stats --json`, the admin
//! protocol; docs/stats.md "JSON"): an object with each field by its name,
//! a `u64` as a number and a [`Counts`](super::Counts) array as an object of
//! its label values (every value, zeros included). Use as
//! `#[serde(with = "rrp::counters::json")]`; reading, a missing field or
//! label value is 0 and unknown ones are ignored (a newer daemon's).

use core::fmt;
use core::marker::PhantomData;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserializer, Serializer};

use super::{CounterSet, Field};

/// Writes `v` with its fields by name.
pub fn serialize<T: CounterSet, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    write(v, s, true)
}

/// Reads a set written by [`serialize`].
pub fn deserialize<'de, T: CounterSet, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(SetVisitor::<T>(PhantomData, true))
}

/// The same for the single `u64` fields alone (an answer that writes the
/// arrays in its own way, as `show counters` does its drops).
pub mod scalars {
    use super::*;

    /// Writes the `u64` fields of `v` by name.
    pub fn serialize<T: CounterSet, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        write(v, s, false)
    }

    /// Reads the `u64` fields; the arrays stay 0.
    pub fn deserialize<'de, T: CounterSet, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        d.deserialize_map(SetVisitor::<T>(PhantomData, false))
    }
}

/// One labelled field as a map of its values.
struct Labelled<'a>(&'a Field, &'a [u64]);

impl serde::Serialize for Labelled<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let values = self.0.labels.map_or(&[][..], |l| l.values);
        let mut m = s.serialize_map(Some(values.len()))?;
        for (k, v) in values.iter().zip(self.1) {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

fn write<T: CounterSet, S: Serializer>(v: &T, s: S, arrays: bool) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(None)?;
    let slots = v.slots();
    let mut at = 0;
    for f in T::FIELDS {
        let n = f.slots();
        match f.labels {
            None => m.serialize_entry(f.name, &slots[at])?,
            Some(_) if arrays => m.serialize_entry(f.name, &Labelled(f, &slots[at..at + n]))?,
            Some(_) => {}
        }
        at += n;
    }
    m.end()
}

struct SetVisitor<T>(PhantomData<fn() -> T>, bool);

/// The values of one labelled field, by label value.
struct LabelValues(Vec<(String, u64)>);

impl<'de> serde::Deserialize<'de> for LabelValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LabelValues, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LabelValues;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of counters")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LabelValues, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, u64>()? {
                    out.push((k, v));
                }
                Ok(LabelValues(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de, T: CounterSet> Visitor<'de> for SetVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of counters")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<T, A::Error> {
        let mut out = T::default();
        while let Some(key) = a.next_key::<String>()? {
            let mut at = 0;
            let mut found = None;
            for f in T::FIELDS {
                if f.name == key {
                    found = Some((f, at));
                    break;
                }
                at += f.slots();
            }
            match found {
                Some((f, at)) if f.labels.is_none() => out.slots_mut()[at] = a.next_value()?,
                Some((f, at)) if self.1 => {
                    let values = f.labels.map_or(&[][..], |l| l.values);
                    for (k, v) in a.next_value::<LabelValues>()?.0 {
                        if let Some(i) = values.iter().position(|x| *x == k) {
                            out.slots_mut()[at + i] = v;
                        }
                    }
                }
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::DropReason;
    use crate::counters::PortStats;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Wrapped {
        port: u16,
        #[serde(flatten, with = "super")]
        stats: PortStats,
    }

    #[test]
    fn names_and_round_trip() {
        let mut p = PortStats {
            received: 10,
            strangers: 2,
            ..PortStats::default()
        };
        p.dropped[DropReason::NoRoute] = 3;
        let w = Wrapped { port: 1, stats: p };
        let v = serde_json::to_value(&w).unwrap();
        assert_eq!(v["port"], 1);
        assert_eq!(v["received"], 10);
        assert_eq!(v["strangers"], 2);
        assert_eq!(v["dropped"]["no-route"], 3);
        assert_eq!(v["dropped"]["mtu"], 0);
        let back: Wrapped = serde_json::from_value(v).unwrap();
        assert_eq!(back, w);
    }

    #[test]
    fn missing_is_zero_and_unknown_is_ignored() {
        let w: Wrapped = serde_json::from_str(
            r#"{"port": 2, "received": 5, "future": 1, "dropped": {"mtu": 1, "new-reason": 9}}"#,
        )
        .unwrap();
        assert_eq!(w.stats.received, 5);
        assert_eq!(w.stats.dropped[DropReason::Mtu], 1);
        assert_eq!(w.stats.dropped.total(), 1);
    }
}
