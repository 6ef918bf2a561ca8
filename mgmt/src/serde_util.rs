//! Serde forms the derives of this crate need and `rrp` does not give:
//! native addresses as text (`"02:00:00:00:00:07"`, `"[::1]:34997"`, `"-"`,
//! as `rrp::NativeAddr` prints and parses them) and fixed byte arrays
//! longer than serde's 32 as sequences.

/// `#[serde(with = "crate::serde_util::native")]` for an `rrp::NativeAddr`.
pub(crate) mod native {
    use rrp::NativeAddr;
    use serde::{Deserialize, Deserializer, Serializer, de};

    pub(crate) fn serialize<S: Serializer>(n: &NativeAddr, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(n)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<NativeAddr, D::Error> {
        let s = String::deserialize(d)?;
        NativeAddr::parse(&s).map_err(de::Error::custom)
    }
}

/// `#[serde(with = "crate::serde_util::array")]` for a `[u8; N]`.
pub(crate) mod array {
    use serde::{Deserialize, Deserializer, Serializer, de};

    pub(crate) fn serialize<S: Serializer, const N: usize>(
        a: &[u8; N],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(a.iter())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<[u8; N], D::Error> {
        let v = Vec::<u8>::deserialize(d)?;
        let n = v.len();
        v.try_into()
            .map_err(|_| de::Error::invalid_length(n, &"the array's length"))
    }
}
