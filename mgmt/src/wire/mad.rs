//! The 256-byte management datagram (docs/management.md "The packet";
//! InfiniBand Tables 28-1/28-2).
//!
//! ```text
//!  0        1        2        3        4                 6        7
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! |BaseVers| Class  |ClassVer|R|Method| Status (DR: D | 15 bits)| HopPtr | HopCnt |
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! | TransactionID (8 bytes)                                               |
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! | AttributeID     | reserved        | AttributeModifier                 |
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! | M_Key (24-31) | reserved (32-63) | attribute (64-) | DR paths (128-255) |
//! ```
//!
//! Bytes 6-7 are HopPointer and HopCount in class 0x81 and zero otherwise;
//! the attribute area is 64 bytes in classes 0x01 and 0x81, 192 in the
//! others; only class 0x81 has the InitialPath (128-191) and ReturnPath
//! (192-255).

use crate::error::{Error, ErrorKind, Result};
use crate::wire::class::{Method, MgmtClass, Status};
use crate::wire::path::{MAX_HOPS, PathHop, emit_path, parse_path, parse_written_path};
use rrp::wire::bytes::{be16, be32, be64, put16, put32, put64};

/// Bytes of a MAD.
pub const MAD_LEN: usize = 256;
/// Bytes of the common header (BaseVersion to AttributeModifier).
pub const BASE_HEADER_LEN: usize = 24;
/// The only BaseVersion.
pub const BASE_VERSION: u8 = 1;
/// The ClassVersion of every class docs/management.md defines.
pub const CLASS_VERSION: u8 = 1;
/// Class 0x81: bit 15 of Status, D (0 outbound, 1 returning).
pub const DIRECTION_BIT: u16 = 0x8000;

/// Byte offsets of the MAD's fields.
pub mod field {
    use core::ops::Range;
    /// BaseVersion.
    pub const BASE_VERSION: usize = 0;
    /// MgmtClass.
    pub const CLASS: usize = 1;
    /// ClassVersion.
    pub const CLASS_VERSION: usize = 2;
    /// R (bit 7) and Method (bits 0-6).
    pub const METHOD: usize = 3;
    /// Status; class 0x81: D in bit 15.
    pub const STATUS: Range<usize> = 4..6;
    /// ClassSpecific.
    pub const CLASS_SPECIFIC: Range<usize> = 6..8;
    /// Class 0x81: HopPointer.
    pub const HOP_POINTER: usize = 6;
    /// Class 0x81: HopCount.
    pub const HOP_COUNT: usize = 7;
    /// TransactionID.
    pub const TID: Range<usize> = 8..16;
    /// AttributeID.
    pub const ATTRIBUTE: Range<usize> = 16..18;
    /// Reserved (zero).
    pub const RESERVED: Range<usize> = 18..20;
    /// AttributeModifier.
    pub const MODIFIER: Range<usize> = 20..24;
    /// M_Key.
    pub const MKEY: Range<usize> = 24..32;
    /// First byte of the attribute area.
    pub const ATTR_DATA: usize = 64;
    /// Class 0x81: InitialPath.
    pub const INITIAL_PATH: Range<usize> = 128..192;
    /// Class 0x81: ReturnPath.
    pub const RETURN_PATH: Range<usize> = 192..256;
    /// Bytes of each path area.
    pub const PATH_LEN: usize = 64;
}

/// Checks a MAD's length and BaseVersion.
fn check(b: &[u8]) -> Result<()> {
    if b.len() < MAD_LEN {
        return Err(Error::truncated("mad", 0, MAD_LEN, b.len()));
    }
    if b.len() > MAD_LEN {
        return Err(Error::new(ErrorKind::BadLength(b.len()), "mad", 0));
    }
    if b[field::BASE_VERSION] != BASE_VERSION {
        return Err(Error::new(
            ErrorKind::BadBaseVersion(b[field::BASE_VERSION]),
            "mad.base_version",
            field::BASE_VERSION,
        ));
    }
    Ok(())
}

/// A zero-copy view of a MAD.
#[derive(Debug, Clone, Copy)]
pub struct Mad<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Mad<T> {
    /// Wraps a buffer without checking it; accessors panic if it is shorter
    /// than [`MAD_LEN`]. For callers that checked already, and for building
    /// a MAD in a zeroed buffer ([`MadRepr::emit`] checks the length).
    pub const fn new_unchecked(buffer: T) -> Self {
        Mad { buffer }
    }

    /// Wraps a buffer of exactly [`MAD_LEN`] bytes whose BaseVersion is 1.
    pub fn new_checked(buffer: T) -> Result<Self> {
        check(buffer.as_ref())?;
        Ok(Mad { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The MAD's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// BaseVersion.
    pub fn base_version(&self) -> u8 {
        self.b()[field::BASE_VERSION]
    }
    /// MgmtClass.
    pub fn class(&self) -> MgmtClass {
        MgmtClass(self.b()[field::CLASS])
    }
    /// ClassVersion.
    pub fn class_version(&self) -> u8 {
        self.b()[field::CLASS_VERSION]
    }
    /// The R bit: a response.
    pub fn response(&self) -> bool {
        self.method().is_response()
    }
    /// The method byte, R bit included (GetResp = 0x81).
    pub fn method(&self) -> Method {
        Method(self.b()[field::METHOD])
    }
    /// Status; for class 0x81 without bit 15 (the direction).
    pub fn status(&self) -> Status {
        let s = be16(self.b(), field::STATUS.start);
        Status(if self.class().is_directed_route() {
            s & !DIRECTION_BIT
        } else {
            s
        })
    }
    /// Class 0x81: D, the MAD is returning (bit 15 of Status). False for
    /// other classes.
    pub fn direction_return(&self) -> bool {
        self.class().is_directed_route() && be16(self.b(), field::STATUS.start) & DIRECTION_BIT != 0
    }
    /// ClassSpecific (bytes 6-7) as one number.
    pub fn class_specific(&self) -> u16 {
        be16(self.b(), field::CLASS_SPECIFIC.start)
    }
    /// Class 0x81: HopPointer.
    pub fn hop_pointer(&self) -> u8 {
        self.b()[field::HOP_POINTER]
    }
    /// Class 0x81: HopCount.
    pub fn hop_count(&self) -> u8 {
        self.b()[field::HOP_COUNT]
    }
    /// TransactionID.
    pub fn tid(&self) -> u64 {
        be64(self.b(), field::TID.start)
    }
    /// AttributeID.
    pub fn attribute(&self) -> u16 {
        be16(self.b(), field::ATTRIBUTE.start)
    }
    /// AttributeModifier.
    pub fn modifier(&self) -> u32 {
        be32(self.b(), field::MODIFIER.start)
    }
    /// M_Key.
    pub fn mkey(&self) -> u64 {
        be64(self.b(), field::MKEY.start)
    }
    /// The attribute area: [`MgmtClass::attribute_len`] bytes from byte 64.
    pub fn attribute_data(&self) -> &[u8] {
        let n = self.class().attribute_len();
        &self.b()[field::ATTR_DATA..field::ATTR_DATA + n]
    }
    /// Bytes 128-191: class 0x81's InitialPath.
    pub fn initial_path(&self) -> &[u8] {
        &self.b()[field::INITIAL_PATH]
    }
    /// Bytes 192-255: class 0x81's ReturnPath.
    pub fn return_path(&self) -> &[u8] {
        &self.b()[field::RETURN_PATH]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Mad<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    /// Sets BaseVersion.
    pub fn set_base_version(&mut self, v: u8) {
        self.bm()[field::BASE_VERSION] = v
    }
    /// Sets MgmtClass.
    pub fn set_class(&mut self, c: MgmtClass) {
        self.bm()[field::CLASS] = c.0
    }
    /// Sets ClassVersion.
    pub fn set_class_version(&mut self, v: u8) {
        self.bm()[field::CLASS_VERSION] = v
    }
    /// Sets the method byte (R bit included).
    pub fn set_method(&mut self, m: Method) {
        self.bm()[field::METHOD] = m.0
    }
    /// Sets or clears the R bit, leaving the method's other bits.
    pub fn set_response(&mut self, r: bool) {
        let b = &mut self.bm()[field::METHOD];
        *b = (*b & !Method::RESPONSE_BIT) | if r { Method::RESPONSE_BIT } else { 0 };
    }
    /// Sets Status; for class 0x81 keeps D (bit 15) and takes bits 0-14 of `s`.
    pub fn set_status(&mut self, s: Status) {
        let v = if self.class().is_directed_route() {
            let d = be16(self.b(), field::STATUS.start) & DIRECTION_BIT;
            d | (s.0 & !DIRECTION_BIT)
        } else {
            s.0
        };
        put16(self.bm(), field::STATUS.start, v)
    }
    /// Sets or clears D, bit 15 of Status (meaningful in class 0x81 only).
    pub fn set_direction_return(&mut self, d: bool) {
        let s = be16(self.b(), field::STATUS.start) & !DIRECTION_BIT;
        put16(
            self.bm(),
            field::STATUS.start,
            s | if d { DIRECTION_BIT } else { 0 },
        )
    }
    /// Sets ClassSpecific (bytes 6-7).
    pub fn set_class_specific(&mut self, v: u16) {
        put16(self.bm(), field::CLASS_SPECIFIC.start, v)
    }
    /// Sets HopPointer.
    pub fn set_hop_pointer(&mut self, p: u8) {
        self.bm()[field::HOP_POINTER] = p
    }
    /// Sets HopCount.
    pub fn set_hop_count(&mut self, n: u8) {
        self.bm()[field::HOP_COUNT] = n
    }
    /// Sets the TransactionID.
    pub fn set_tid(&mut self, t: u64) {
        put64(self.bm(), field::TID.start, t)
    }
    /// Sets the AttributeID.
    pub fn set_attribute(&mut self, a: u16) {
        put16(self.bm(), field::ATTRIBUTE.start, a)
    }
    /// Sets the AttributeModifier.
    pub fn set_modifier(&mut self, m: u32) {
        put32(self.bm(), field::MODIFIER.start, m)
    }
    /// Sets the M_Key.
    pub fn set_mkey(&mut self, k: u64) {
        put64(self.bm(), field::MKEY.start, k)
    }
    /// The attribute area, to write an attribute into.
    pub fn attribute_data_mut(&mut self) -> &mut [u8] {
        let n = self.class().attribute_len();
        &mut self.bm()[field::ATTR_DATA..field::ATTR_DATA + n]
    }
    /// Bytes 128-191, the InitialPath.
    pub fn initial_path_mut(&mut self) -> &mut [u8] {
        &mut self.bm()[field::INITIAL_PATH]
    }
    /// Bytes 192-255, the ReturnPath.
    pub fn return_path_mut(&mut self) -> &mut [u8] {
        &mut self.bm()[field::RETURN_PATH]
    }
}

/// The directed-route part of a class-0x81 MAD: direction, hop pointer and
/// count, and the two paths.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DrRoute {
    /// D: the MAD is on its way back (bit 15 of Status).
    pub returning: bool,
    /// HopPointer: the position the MAD is sent to.
    pub hop_pointer: u8,
    /// HopCount: the target's position, at most 8.
    pub hop_count: u8,
    /// InitialPath: exactly `hop_count` entries.
    pub initial: Vec<PathHop>,
    /// ReturnPath: the entries written so far (at most `hop_count`).
    pub ret: Vec<PathHop>,
}

impl DrRoute {
    /// A new outbound route along `initial` as the requester (position 0)
    /// sends it: HopPointer 1, HopCount the number of hops, no ReturnPath.
    pub fn outbound(initial: Vec<PathHop>) -> DrRoute {
        DrRoute {
            returning: false,
            hop_pointer: 1,
            hop_count: initial.len().min(u8::MAX as usize) as u8,
            initial,
            ret: Vec::new(),
        }
    }
}

/// An owned MAD.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MadRepr {
    /// MgmtClass.
    pub class: MgmtClass,
    /// ClassVersion.
    pub class_version: u8,
    /// The R bit; must agree with bit 7 of `method`.
    pub response: bool,
    /// The method byte, R bit included.
    pub method: Method,
    /// Status (class 0x81: 15 bits, D is `dr.returning`).
    pub status: Status,
    /// TransactionID.
    pub tid: u64,
    /// AttributeID.
    pub attribute: u16,
    /// AttributeModifier.
    pub modifier: u32,
    /// M_Key.
    pub mkey: u64,
    /// The attribute area, exactly `class.attribute_len()` bytes.
    pub data: Vec<u8>,
    /// Class 0x81's directed route; `None` in every other class.
    pub dr: Option<DrRoute>,
}

impl MadRepr {
    /// A MAD of `class` with ClassVersion 1, status 0, M_Key 0, a zeroed
    /// attribute area and, for class 0x81, an empty directed route (to be
    /// filled with [`DrRoute::outbound`]).
    pub fn new(class: MgmtClass, method: Method, tid: u64, attribute: u16, modifier: u32) -> Self {
        MadRepr {
            class,
            class_version: CLASS_VERSION,
            response: method.is_response(),
            method,
            status: Status::OK,
            tid,
            attribute,
            modifier,
            mkey: 0,
            data: vec![0; class.attribute_len()],
            dr: class.is_directed_route().then(DrRoute::default),
        }
    }

    /// Reads a MAD view. Checks length and BaseVersion again (a view made
    /// with [`Mad::new_unchecked`] may be anything); for class 0x81 reads
    /// the paths: HopCount above 8 is [`ErrorKind::TooManyHops`], an
    /// InitialPath without HopCount entries or a ReturnPath entry that does
    /// not parse is [`ErrorKind::BadPath`]. The ReturnPath holds the
    /// entries up to where the rest of its area is zero, at most HopCount.
    /// Reserved bytes, ClassSpecific outside class 0x81 and bytes after the
    /// path entries are not kept. Offsets count from the MAD's first byte.
    pub fn parse<T: AsRef<[u8]>>(m: &Mad<T>) -> Result<MadRepr> {
        check(m.as_bytes())?;
        let class = m.class();
        let dr = if class.is_directed_route() {
            let hop_count = m.hop_count();
            if hop_count as usize > MAX_HOPS {
                return Err(Error::new(
                    ErrorKind::TooManyHops(hop_count),
                    "mad.hop_count",
                    field::HOP_COUNT,
                ));
            }
            let n = hop_count as usize;
            let initial = parse_path(
                m.initial_path(),
                n,
                "mad.initial_path",
                field::INITIAL_PATH.start,
            )?;
            let ret = parse_written_path(
                m.return_path(),
                n,
                "mad.return_path",
                field::RETURN_PATH.start,
            )?;
            Some(DrRoute {
                returning: m.direction_return(),
                hop_pointer: m.hop_pointer(),
                hop_count,
                initial,
                ret,
            })
        } else {
            None
        };
        Ok(MadRepr {
            class,
            class_version: m.class_version(),
            response: m.response(),
            method: m.method(),
            status: m.status(),
            tid: m.tid(),
            attribute: m.attribute(),
            modifier: m.modifier(),
            mkey: m.mkey(),
            data: m.attribute_data().to_vec(),
            dr,
        })
    }

    /// Checks what `emit` cannot write faithfully.
    fn validate(&self) -> Result<()> {
        if self.response != self.method.is_response() {
            return Err(Error::new(
                ErrorKind::BadValue("response and the method's R bit disagree"),
                "mad.method",
                field::METHOD,
            ));
        }
        if self.data.len() != self.class.attribute_len() {
            return Err(Error::new(
                ErrorKind::BadValue("attribute data is not the class's attribute length"),
                "mad.data",
                field::ATTR_DATA,
            ));
        }
        match (&self.dr, self.class.is_directed_route()) {
            (None, true) => Err(Error::new(
                ErrorKind::BadValue("class 0x81 without its directed route"),
                "mad.class",
                field::CLASS,
            )),
            (Some(_), false) => Err(Error::new(
                ErrorKind::BadValue("a directed route in a class other than 0x81"),
                "mad.class",
                field::CLASS,
            )),
            (None, false) => Ok(()),
            (Some(dr), true) => {
                if self.status.0 & DIRECTION_BIT != 0 {
                    return Err(Error::new(
                        ErrorKind::BadValue("status above 15 bits in class 0x81"),
                        "mad.status",
                        field::STATUS.start,
                    ));
                }
                if dr.hop_count as usize > MAX_HOPS {
                    return Err(Error::new(
                        ErrorKind::TooManyHops(dr.hop_count),
                        "mad.hop_count",
                        field::HOP_COUNT,
                    ));
                }
                if dr.initial.len() != dr.hop_count as usize {
                    return Err(Error::new(
                        ErrorKind::BadPath,
                        "mad.initial_path",
                        field::INITIAL_PATH.start,
                    ));
                }
                if dr.ret.len() > dr.hop_count as usize {
                    return Err(Error::new(
                        ErrorKind::BadPath,
                        "mad.return_path",
                        field::RETURN_PATH.start,
                    ));
                }
                Ok(())
            }
        }
    }

    /// Writes the whole MAD into `m` (every byte: reserved ones zero).
    /// Fails, naming the field, when the buffer is not [`MAD_LEN`] bytes,
    /// when `data` is not the class's attribute length, when `response`
    /// disagrees with the method's R bit, when `dr` is present in a class
    /// other than 0x81 or absent in 0x81, and in class 0x81 when the status
    /// needs bit 15, HopCount is above 8, the InitialPath has not HopCount
    /// entries, the ReturnPath has more, or a path does not fit its 64
    /// bytes.
    pub fn emit(&self, m: &mut Mad<&mut [u8]>) -> Result<()> {
        let len = m.as_bytes().len();
        if len < MAD_LEN {
            return Err(Error::truncated("mad", 0, MAD_LEN, len));
        }
        if len > MAD_LEN {
            return Err(Error::new(ErrorKind::BadLength(len), "mad", 0));
        }
        self.validate()?;
        m.bm().fill(0);
        m.set_base_version(BASE_VERSION);
        m.set_class(self.class);
        m.set_class_version(self.class_version);
        m.set_method(self.method);
        m.set_tid(self.tid);
        m.set_attribute(self.attribute);
        m.set_modifier(self.modifier);
        m.set_mkey(self.mkey);
        m.attribute_data_mut().copy_from_slice(&self.data);
        m.set_status(self.status);
        if let Some(dr) = &self.dr {
            m.set_direction_return(dr.returning);
            m.set_hop_pointer(dr.hop_pointer);
            m.set_hop_count(dr.hop_count);
            emit_path(&dr.initial, m.initial_path_mut()).map_err(|e| {
                Error::new(
                    e.kind,
                    "mad.initial_path",
                    field::INITIAL_PATH.start + e.offset,
                )
            })?;
            emit_path(&dr.ret, m.return_path_mut()).map_err(|e| {
                Error::new(
                    e.kind,
                    "mad.return_path",
                    field::RETURN_PATH.start + e.offset,
                )
            })?;
        }
        Ok(())
    }

    /// The MAD's bytes.
    pub fn to_bytes(&self) -> Result<[u8; MAD_LEN]> {
        let mut b = [0u8; MAD_LEN];
        self.emit(&mut Mad::new_unchecked(&mut b[..]))?;
        Ok(b)
    }

    /// The answer to this request: the same MAD with the R bit, the
    /// method that answers it ([`Method::response`]: GetResp, ReportResp
    /// for a Report, GetTableResp, DeleteResp; GetResp for anything else)
    /// and `status`. Everything else is copied, the directed route
    /// included: the agent turns that around.
    #[must_use]
    pub fn response(&self, status: Status) -> MadRepr {
        let method = self.method.response().unwrap_or(Method::GET_RESP);
        MadRepr {
            response: true,
            method,
            status,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::{Address, NativeAddr};

    fn get() -> MadRepr {
        let mut m = MadRepr::new(MgmtClass::SUBN, Method::GET, 0x1122, 0x0011, 0);
        m.mkey = 7;
        m
    }

    #[test]
    fn view_fields_at_their_offsets() {
        let b = get().to_bytes().unwrap();
        assert_eq!(&b[..8], &[1, 1, 1, 1, 0, 0, 0, 0]);
        assert_eq!(&b[8..16], &[0, 0, 0, 0, 0, 0, 0x11, 0x22]);
        assert_eq!(&b[16..24], &[0, 0x11, 0, 0, 0, 0, 0, 0]);
        assert_eq!(b[31], 7);
        let v = Mad::new_checked(&b[..]).unwrap();
        assert_eq!(v.tid(), 0x1122);
        assert_eq!(v.attribute_data().len(), 64);
        assert_eq!(MadRepr::parse(&v).unwrap(), get());
    }

    #[test]
    fn dr_status_keeps_the_direction() {
        let mut m = MadRepr::new(MgmtClass::SUBN_DR, Method::GET, 1, 0x15, 1);
        m.dr = Some(DrRoute::outbound(vec![PathHop::new(
            Address(0x0111),
            NativeAddr::mac([2, 0, 0, 0, 0, 9]),
        )]));
        let mut b = m.to_bytes().unwrap();
        let mut v = Mad::new_unchecked(&mut b[..]);
        v.set_direction_return(true);
        v.set_status(Status(0xFFFF));
        assert!(v.direction_return());
        assert_eq!(v.status(), Status(0x7FFF));
        v.set_response(true);
        assert_eq!(v.method(), Method::GET_RESP);
        v.set_direction_return(false);
        assert_eq!(v.status(), Status(0x7FFF));
        assert!(!v.direction_return());
    }

    #[test]
    fn response_helper() {
        let r = get().response(Status::INVALID_VALUE);
        assert!(r.response);
        assert_eq!(r.method, Method::GET_RESP);
        assert_eq!(r.status, Status::INVALID_VALUE);
        assert_eq!(r.tid, 0x1122);
        let mut rep = get();
        rep.method = Method::REPORT;
        assert_eq!(rep.response(Status::OK).method, Method::REPORT_RESP);
        rep.method = Method::GET_TABLE;
        assert_eq!(rep.response(Status::OK).method, Method::GET_TABLE_RESP);
        rep.method = Method::DELETE;
        assert_eq!(rep.response(Status::OK).method, Method::DELETE_RESP);
    }

    #[test]
    fn emit_refuses_what_it_cannot_write() {
        let mut m = get();
        m.response = true;
        assert_eq!(m.to_bytes().unwrap_err().field, "mad.method");
        let mut m = get();
        m.data.pop();
        assert_eq!(m.to_bytes().unwrap_err().offset, 64);
        let mut m = get();
        m.dr = Some(DrRoute::default());
        assert_eq!(m.to_bytes().unwrap_err().field, "mad.class");
        let mut m = MadRepr::new(MgmtClass::SUBN_DR, Method::GET, 1, 0x15, 1);
        m.status = Status(0x8000);
        assert_eq!(m.to_bytes().unwrap_err().field, "mad.status");
        m.status = Status::OK;
        m.dr.as_mut().unwrap().hop_count = 9;
        assert_eq!(m.to_bytes().unwrap_err().kind, ErrorKind::TooManyHops(9));
        m.dr.as_mut().unwrap().hop_count = 1;
        assert_eq!(m.to_bytes().unwrap_err().field, "mad.initial_path");
        let mut short = [0u8; 255];
        let e = get()
            .emit(&mut Mad::new_unchecked(&mut short[..]))
            .unwrap_err();
        assert_eq!(
            e.kind,
            ErrorKind::Truncated {
                needed: 256,
                available: 255
            }
        );
    }
}
