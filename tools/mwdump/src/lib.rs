//! mwdump: decodes MessageWay packets for people and for scripts.
//!
//! Input is hex text, a file holding one raw frame, or a pcap/pcapng
//! capture ([`capture`]); each frame's link layer ([`link`]) is taken apart
//! to find the MessageWay packet, which is decoded with the `rrp` crate
//! ([`decode`]), a management datagram with the `mgmt` crate ([`mad`]),
//! into a [`model::Report`]. Reports are printed as text
//! ([`text`]) or as one JSON object per line (the model's serde form). The
//! binary is a thin wrapper around [`cli::run`]; docs/mwdump.md describes
//! the command line, the exit codes and every JSON field.

pub mod capture;
pub mod cli;
pub mod decode;
pub mod fuzzing;
pub mod hex;
pub mod link;
pub mod mad;
pub mod model;
pub mod sample;
pub mod text;
