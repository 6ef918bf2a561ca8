//! Serde forms the derives of this crate need and `rrp` does not give:
//! native addresses as text (`"02:00:00:00:00:07"`, `"[::1]:34997"`, `"-"`,
//! as `rrp::NativeAddr` prints and parses them), refusal reasons by name,
//! and fixed byte arrays longer than serde's 32 as sequences.

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

/// `#[serde(with = "crate::serde_util::auth_refusal")]` for an
/// `Option<rrp::wire::auth::AuthRefusal>`: the reason's name, or null.
pub(crate) mod auth_refusal {
    use rrp::wire::auth::AuthRefusal;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        why: &Option<AuthRefusal>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        why.map(AuthRefusal::name).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<AuthRefusal>, D::Error> {
        let name = Option::<String>::deserialize(d)?;
        Ok(name.as_deref().and_then(AuthRefusal::from_name))
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
