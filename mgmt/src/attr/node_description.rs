//! NodeDescription (0x0010, Subn): the router's or host's name, 64 bytes of
//! UTF-8, zero-padded (docs/management.md "NodeDescription").

use crate::attr::{need, prepare};
use crate::error::{Error, ErrorKind, Result};

/// NodeDescription: the text without its zero padding.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct NodeDescription(pub String);

impl NodeDescription {
    /// AttributeID.
    pub const ID: u16 = 0x0010;
    /// Bytes of the layout, and the longest text.
    pub const LEN: usize = 64;

    /// Reads the 64 bytes, trailing zero bytes trimmed; text that is not
    /// UTF-8 is [`ErrorKind::BadText`] at the first bad byte.
    pub fn parse(area: &[u8]) -> Result<Self> {
        need(area, Self::LEN, "node_description")?;
        let b = &area[..Self::LEN];
        let end = b.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
        match core::str::from_utf8(&b[..end]) {
            Ok(s) => Ok(NodeDescription(s.to_string())),
            Err(e) => Err(Error::new(
                ErrorKind::BadText,
                "node_description",
                e.valid_up_to(),
            )),
        }
    }

    /// Writes the text zero-padded to 64 bytes; longer text is refused
    /// ([`ErrorKind::BadValue`] at byte 64), and so is text ending in a zero
    /// byte, which would not read back.
    pub fn emit(&self, area: &mut [u8]) -> Result<()> {
        let t = self.0.as_bytes();
        if t.len() > Self::LEN {
            return Err(Error::new(
                ErrorKind::BadValue("text longer than 64 bytes"),
                "node_description",
                Self::LEN,
            ));
        }
        if t.last() == Some(&0) {
            return Err(Error::new(
                ErrorKind::BadValue("text ends in a zero byte"),
                "node_description",
                t.len() - 1,
            ));
        }
        prepare(area, Self::LEN, "node_description")?;
        area[..t.len()].copy_from_slice(t);
        Ok(())
    }
}
