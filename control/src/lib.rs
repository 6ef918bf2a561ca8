//! The mwrouter daemon's library (DESIGN.md "Workspace").
//!
//! Not built yet: configuration, the control-plane thread and the admin
//! socket arrive with the daemon issue. This crate holds nothing else so far.
