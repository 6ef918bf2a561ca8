//! Shared-memory segments, as VPP's stats segment is one: a file that one
//! process maps read-write and publishes into, and any number of processes
//! map read-only and read, with no system call per read and no lock
//! (docs/stats.md). A segment is a whole number of 64-bit words, accessed
//! only as [`AtomicU64`]s ([`Segment::words`]); [`seqlock`] makes a
//! publication of many words consistent for readers.
//!
//! This crate holds the `unsafe` that mapping a file needs (the project
//! keeps `unsafe` in `hw/`); what goes into the words (counter sets, as
//! `bytemuck::Pod` structs) is its users' business.

mod segment;
pub mod seqlock;

pub use segment::Segment;
#[doc(no_inline)]
pub use std::sync::atomic::AtomicU64;
