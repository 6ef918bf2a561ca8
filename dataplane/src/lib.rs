//! The mwrouter forwarding engine (DESIGN.md "Threads and data flow").
//!
//! Not built yet: the engine, its FIB and its worker loop arrive with the
//! dataplane issue. This crate holds nothing else so far.
