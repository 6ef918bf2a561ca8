//! What mwdump reports about each frame. These types are the JSON output
//! (one [`Report`] per line, field names as here, see docs/mwdump.md) and
//! the text output is rendered from them, so the two cannot disagree.
//!
//! Every `offset` is a byte offset from the start of the frame (the bytes
//! given with `--hex`, the raw file, or the captured frame), not from the
//! start of the MessageWay packet; `packet_offset` says where that starts.

use serde::Serialize;

use crate::capture::Timestamp;
use crate::link::Encap;

/// The report on one frame: a decoded packet, a skipped frame or an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Report {
    /// A MessageWay packet, decoded.
    Packet(Box<PacketReport>),
    /// A frame that does not carry MessageWay (captures only).
    Skipped(Box<SkippedReport>),
    /// A frame that could not be decoded.
    Error(Box<ErrorReport>),
}

impl Report {
    /// The 1-based frame number.
    pub fn index(&self) -> u64 {
        match self {
            Report::Packet(p) => p.index,
            Report::Skipped(s) => s.index,
            Report::Error(e) => e.index,
        }
    }
}

/// A capture timestamp.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimeInfo {
    /// Seconds since the Unix epoch.
    pub sec: i64,
    /// Nanoseconds.
    pub nsec: u32,
    /// The same instant as UTC text, `2024-01-01T00:00:00.000100000Z`.
    pub utc: String,
}

impl From<Timestamp> for TimeInfo {
    fn from(t: Timestamp) -> Self {
        TimeInfo {
            sec: t.sec,
            nsec: t.nsec,
            utc: t.utc(),
        }
    }
}

/// A decoded MessageWay packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PacketReport {
    /// 1-based frame number (as tshark numbers frames); 1 for `--hex` and raw input.
    pub index: u64,
    /// Capture timestamp; `null` for `--hex`, raw input and pcapng simple packets.
    pub timestamp: Option<TimeInfo>,
    /// The capture's link type; `null` for `--hex` and raw input.
    pub linktype: Option<u32>,
    /// How the frame was read: `"raw"`, `"eth"` or `"udp"`.
    pub link: &'static str,
    /// Bytes of the frame as given or captured.
    pub frame_len: usize,
    /// Length on the wire from the capture; `null` for `--hex` and raw input.
    pub orig_len: Option<usize>,
    /// The headers in front of the packet.
    pub encap: Encap,
    /// Offset of the packet (its first L2RH or its EEP header) in the frame.
    pub packet_offset: usize,
    /// Bytes of the packet: L2RHs, header, data block, trailer.
    pub packet_len: usize,
    /// Bytes of the frame after the packet's trailer (Ethernet padding, or
    /// anything after it in the datagram); never part of the packet.
    pub padding_len: usize,
    /// `"RRP#1"`..`"RRP#9"`, `"ERR UNK"`, `"ERR HRDOWN"`, `"ERR LINKDOWN"`,
    /// `"ERR GENERAL"`; for other packets the packet class (`"USER"`,
    /// `"EMBEDDED"`, `"MEMORY-READ"`, `"MEMORY-WRITE"`, `"MANAGEMENT"`,
    /// `"ETHERTYPE"`, `"RESERVED"`).
    pub kind: String,
    /// The leading L2RHs, first to last (empty for an L3 packet).
    pub l2rhs: Vec<L2rhInfo>,
    /// The EEP header.
    pub header: HeaderInfo,
    /// Net bytes of the data block (8*DL - PL).
    pub data_len: usize,
    /// The first 64 bytes of the data block in hex, for packets that are
    /// not ERR or RRP; `null` for ERR/RRP.
    pub data_hex: Option<String>,
    /// Whether `data_hex` holds only the first 64 of more bytes.
    pub data_truncated: bool,
    /// The trailer's Error Indication.
    pub ei: u64,
    /// The same as 16 hex digits, `"0x0000000000000002"`.
    pub ei_hex: String,
    /// The ERR or RRP message; `null` for other packets.
    pub message: Option<MessageInfo>,
    /// The management datagram of a management packet (PT 0x0006); `null`
    /// for other packets.
    pub mad: Option<MadInfo>,
}

/// One L2-Routing Header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct L2rhInfo {
    /// Offset of its length field in the frame.
    pub offset: usize,
    /// The length field L: content bytes.
    pub len: usize,
    /// Eight-byte words it occupies, (L+9)/8.
    pub words: usize,
    /// The L content bytes in hex.
    pub content_hex: String,
    /// The content read as mwrouter's router hop, where it has that shape.
    pub hop: Option<HopInfo>,
}

/// An L2RH content in mwrouter's router-hop layout (`rrp::wire::RouterHop`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HopInfo {
    /// The egress HR (0: native hop only).
    pub egress: u16,
    /// Bytes of the native address: 0, 6 or 18.
    pub native_len: usize,
    /// The native address in hex.
    pub native_hex: String,
    /// A 6-byte native address read as a MAC; `null` otherwise.
    pub mac: Option<String>,
    /// A 6-byte native address read as IPv4:port, an 18-byte one as
    /// `[IPv6]:port`; `null` for an empty one.
    pub udp: Option<String>,
    /// Egress 0x0000: native hop only.
    pub native_only: bool,
    /// No native part: deliver to the egress HR itself.
    pub egress_only: bool,
}

/// The EEP header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderInfo {
    /// Offset of the header in the frame.
    pub offset: usize,
    /// Destination Address.
    pub dst: u16,
    /// Its class: `illegal`, `l2rh-marker`, `node`, `logical`, `hey-you`, `broadcast`.
    pub dst_class: String,
    /// Priority.
    pub priority: u8,
    /// Version (5).
    pub version: u8,
    /// Packet Type.
    pub packet_type: u16,
    /// Its class: `ERR`, `RRP`, `EMBEDDED`, `MEMORY-READ`, `MEMORY-WRITE`,
    /// `MANAGEMENT`, `USER`, `ETHERTYPE`, `RESERVED`.
    pub packet_class: String,
    /// Type Extension.
    pub type_ext: u16,
    /// TE named: `"RRP#4"` for RRP, the code name (`"UNK"`, `"HRDOWN"`,
    /// `"LINKDOWN"`, `"GENERAL"`) for ERR; `null` otherwise or when unassigned.
    pub type_name: Option<String>,
    /// The 4-bit E field.
    pub e: u8,
    /// E's first bit: the data block is little endian.
    pub little_endian: bool,
    /// Width of the byte swapping E asks for, in bits: 8 (no swapping), 16,
    /// 32, 64, 128; `null` for the reserved codes 5-7.
    pub swap_bits: Option<u32>,
    /// Pad Length.
    pub pad_len: u8,
    /// Data Length in 8-byte words.
    pub data_words: u32,
    /// Source Address (0: not specified).
    pub src: u16,
    /// Its class, as for `dst_class`.
    pub src_class: String,
    /// Free.
    pub free: u16,
}

/// An ERR or RRP message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageInfo {
    /// `"RRP#1"`..`"RRP#9"` or `"ERR UNK"`, `"ERR HRDOWN"`, `"ERR LINKDOWN"`, `"ERR GENERAL"`.
    pub kind: String,
    /// What the message says, in the draft's words.
    pub description: String,
    /// Its records in wire order (empty for RRP#7, RRP#8 and ERR GENERAL).
    pub records: Vec<RecordInfo>,
    /// RRP#9 only: the part marker in Free (`rrp::wire::RtPart`); `null` for other messages.
    pub rt_part: Option<RtPartInfo>,
    /// ERR GENERAL only: the enclosed bytes; `null` for other messages.
    pub enclosed: Option<EnclosedInfo>,
}

/// The part marker of an RRP#9.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RtPartInfo {
    /// Part number, 1-based (1 when Free is 0: a whole RT).
    pub index: u8,
    /// Number of parts (1 when Free is 0).
    pub count: u8,
    /// Whether Free is a valid marker (0, or 1 <= index <= count); when not,
    /// index and count are Free's high and low bytes.
    pub valid: bool,
}

/// One RRP record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordInfo {
    /// Offset of the record in the frame.
    pub offset: usize,
    /// RTyp, 1..=8.
    pub rtyp: u8,
    /// `"R1"`..`"R8"`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The record's PL.
    pub pl: u8,
    /// The record's RL (8-byte words, header included).
    pub rl: u16,
    /// What the record is in its message: `dst`, `via`, `route`, `query`,
    /// `addr`, `hr`, `a`, `b`, `rt_header`, `csr`, `rcvf`, and for node
    /// entries `address`, `name`, `capability`, `logical`, `route`.
    pub role: String,
    /// The node entry (0-based) this record belongs to in RRP#5/RRP#9; `null` otherwise.
    pub node: Option<usize>,
    /// The record's contents; the fields depend on the type.
    #[serde(flatten)]
    pub body: RecordBody,
}

/// Contents of a record, by type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RecordBody {
    /// R1.
    Address {
        /// The address.
        address: u16,
        /// Its class.
        address_class: String,
    },
    /// R2.
    Name {
        /// The name as text when it is printable ASCII; `null` otherwise.
        name: Option<String>,
        /// The name's bytes in hex.
        name_hex: String,
    },
    /// R3.
    Capability {
        /// Capability code CC.
        code: u8,
        /// Its name (`rrp::CapabilityCode`), `null` when unassigned.
        code_name: Option<String>,
        /// Parameter bytes.
        params: Vec<u8>,
    },
    /// R4 (logical addresses) and R7 (RCVF).
    Addresses {
        /// The addresses.
        addresses: Vec<u16>,
    },
    /// R5.
    SourceRoute {
        /// Quality.
        q: u16,
        /// The route's L2RHs, first to last.
        l2rhs: Vec<L2rhInfo>,
        /// The nested R6, if any.
        mtu: Option<MtuInfo>,
    },
    /// R6 standing alone.
    Mtu {
        /// The MTU.
        mtu: MtuInfo,
    },
    /// R8.
    RtHeader {
        /// SAN-ID of the SAN the RT describes.
        san_id: u16,
        /// Serial number.
        sn: u16,
    },
}

/// An MTU as R6 carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MtuInfo {
    /// The value in 8-byte words.
    pub words: u32,
    /// 8 * words; `null` when unlimited.
    pub bytes: Option<u64>,
    /// Whether the value is 0 (no limit).
    pub unlimited: bool,
}

/// The bytes an ERR GENERAL encloses, read as far as they go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnclosedInfo {
    /// Offset of the enclosed bytes in the frame.
    pub offset: usize,
    /// Number of enclosed bytes.
    pub len: usize,
    /// The first 64 of them in hex.
    pub hex: String,
    /// Whether `hex` holds only the first 64 of more bytes.
    pub hex_truncated: bool,
    /// Whether a whole packet (trailer included) is enclosed.
    pub complete: bool,
    /// Its leading L2RHs, as far as enclosed.
    pub l2rhs: Vec<L2rhInfo>,
    /// Its EEP header, when all 16 bytes are enclosed.
    pub header: Option<HeaderInfo>,
    /// Its kind, as the packet's `kind`, when the header is enclosed.
    pub kind: Option<String>,
    /// Why the enclosed packet could not be read in full (truncation or a
    /// malformed part); `null` when it could.
    pub note: Option<String>,
}

/// A management datagram (docs/management.md "The packet").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MadInfo {
    /// Offset of the MAD (the data block) in the frame.
    pub offset: usize,
    /// BaseVersion (1).
    pub base_version: u8,
    /// MgmtClass.
    pub class: u8,
    /// `"Subn"`, `"SubnDR"`, `"SubnAdm"`, `"Perf"`, `"VendorTrace"`; `null` when unassigned.
    pub class_name: Option<String>,
    /// ClassVersion.
    pub class_version: u8,
    /// The R bit: a response.
    pub response: bool,
    /// The method byte, R bit included (GetResp = 129).
    pub method: u8,
    /// `"Get"`, `"Set"`, `"Send"`, `"Trap"`, `"Report"`, `"TrapRepress"`,
    /// `"GetResp"`, `"ReportResp"`; `null` when unassigned.
    pub method_name: Option<String>,
    /// Status (for class 0x81 without bit 15, the direction).
    pub status: u16,
    /// The status in words, e.g. `"ok"`, `"invalid value"`.
    pub status_text: String,
    /// TransactionID.
    pub tid: u64,
    /// The same as `"0x"` and 16 hex digits.
    pub tid_hex: String,
    /// AttributeID.
    pub attribute: u16,
    /// The attribute's name in its class (`mgmt::attr::name`); `null` when unknown.
    pub attribute_name: Option<String>,
    /// AttributeModifier.
    pub modifier: u32,
    /// M_Key.
    pub mkey: u64,
    /// The same as `"0x"` and 16 hex digits.
    pub mkey_hex: String,
    /// Class 0x81's directed route; `null` for other classes.
    pub dr: Option<DrInfo>,
    /// The attribute's fields, named as in docs/management.md (snake_case);
    /// `null` for a Get (whose attribute area carries nothing) and when
    /// mwdump does not know the attribute in this class.
    pub fields: Option<Fields>,
    /// The attribute area in hex when `fields` is `null`, except for a Get
    /// whose area is all zero; `null` otherwise.
    pub attribute_hex: Option<String>,
}

/// The directed route of a class-0x81 MAD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DrInfo {
    /// D: the MAD is on its way back.
    pub returning: bool,
    /// HopPointer.
    pub hop_pointer: u8,
    /// HopCount.
    pub hop_count: u8,
    /// The InitialPath's HopCount entries.
    pub initial_path: Vec<PathHopInfo>,
    /// The ReturnPath's entries written so far.
    pub return_path: Vec<PathHopInfo>,
}

/// One entry of a directed-route path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathHopInfo {
    /// Offset of the entry in the frame.
    pub offset: usize,
    /// The HR (0: the sender's only port).
    pub hr: u16,
    /// Bytes of the native address.
    pub native_len: usize,
    /// The native address in hex.
    pub native_hex: String,
    /// A 6-byte native address as a MAC; `null` otherwise.
    pub mac: Option<String>,
    /// A 6-byte native address as IPv4:port, an 18-byte one as `[IPv6]:port`; `null` otherwise.
    pub udp: Option<String>,
}

/// An attribute's fields, in layout order: a JSON object whose keys are the
/// field names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fields(pub Vec<Field>);

/// One field of an attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The JSON key: the field's name in docs/management.md, snake_case.
    pub name: &'static str,
    /// The JSON value.
    pub value: FieldValue,
    /// How the text view shows it; `None` for JSON-only companions (the
    /// `_hex` forms of 64-bit values).
    pub text: Option<String>,
}

/// A field's value in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum FieldValue {
    /// A number.
    Num(u64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Text(String),
    /// `null`.
    Null,
    /// Nested fields (an object).
    Object(Fields),
    /// A list of objects.
    List(Vec<Fields>),
    /// A list of numbers.
    Nums(Vec<u64>),
}

impl Serialize for Fields {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for f in &self.0 {
            m.serialize_entry(f.name, &f.value)?;
        }
        m.end()
    }
}

/// A frame without MessageWay in a capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedReport {
    /// 1-based frame number.
    pub index: u64,
    /// Capture timestamp.
    pub timestamp: Option<TimeInfo>,
    /// The capture's link type.
    pub linktype: Option<u32>,
    /// How the frame was read.
    pub link: &'static str,
    /// Bytes of the frame.
    pub frame_len: usize,
    /// Length on the wire.
    pub orig_len: Option<usize>,
    /// The headers read.
    pub encap: Encap,
    /// Why it was skipped.
    pub skipped: SkipInfo,
}

/// Why a frame was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkipInfo {
    /// The header field that decided, e.g. `"eth.type"`.
    pub field: String,
    /// Its offset in the frame.
    pub offset: usize,
    /// What was found.
    pub reason: String,
}

/// A frame that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorReport {
    /// 1-based frame number (for a damaged capture file, the number the
    /// next frame would have had).
    pub index: u64,
    /// Capture timestamp.
    pub timestamp: Option<TimeInfo>,
    /// Bytes of the frame (0 for damage in the capture file itself).
    pub frame_len: usize,
    /// What went wrong.
    pub error: ErrorInfo,
}

/// What went wrong, where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorInfo {
    /// The field, e.g. `"eep.version"`, `"l2rh.len"`, `"r5.l2rh"`,
    /// `"eth.type"`, `"udp.len"`, `"pcap.record.incl_len"`.
    pub field: String,
    /// Byte offset from the start of the frame; for `pcap.*`/`pcapng.*`
    /// fields, from the start of the file.
    pub offset: usize,
    /// Offset of the MessageWay packet in the frame, when the error is
    /// inside it; `offset - packet_offset` is the offset in the packet.
    pub packet_offset: Option<usize>,
    /// A snake_case class: rrp's error kinds (`truncated`, `bad_version`,
    /// `bad_l2rh_length`, `bad_record_type`, ...) or `malformed`,
    /// `not_messageway`, `unsupported`, `unsupported_link`, `capture`.
    pub kind: String,
    /// What is wrong, one line.
    pub message: String,
}
