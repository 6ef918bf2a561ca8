//! The MAD wire format: classes, methods and status ([`class`]), the
//! 256-byte MAD's view and owned form ([`mad`]), the directed-route path
//! areas ([`path`]) and the EEP packet around a MAD ([`packet`])
//! (docs/management.md "The packet").

pub mod class;
pub mod mad;
pub mod packet;
pub mod path;

pub use class::{Method, MgmtClass, Status};
pub use mad::{BASE_HEADER_LEN, DrRoute, MAD_LEN, Mad, MadRepr};
pub use packet::{mad_in, mad_packet, routed_mad_packet};
pub use path::{PathHop, emit_path, parse_path, parse_written_path, path_capacity};
