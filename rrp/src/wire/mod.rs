//! Wire formats: zero-copy views over byte slices for the fast path (the
//! `Header`, `L2rh`, `Packet` and `Record` views) and owned representations
//! with `parse` and `emit` for everything (`*Repr`, `Message`).

pub mod auth;
pub mod bytes;
pub mod header;
pub mod hop;
pub mod l2rh;
pub mod message;
pub mod packet;
pub mod record;

pub use header::{HEADER_LEN, Header, HeaderRepr, VERSION};
pub use hop::RouterHop;
pub use l2rh::{L2rh, L2rhRepr};
pub use message::{InfoQuery, Message, NodeInfo, RouteTable, RtNode, RtPart};
pub use packet::{Layout, Packet, PacketRepr, TRAILER_LEN, locate, shift_ei};
pub use record::{Capability, Mtu, Record, RecordRepr, RecordType, SourceRoute};
