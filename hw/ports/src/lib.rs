//! Port backends behind one burst receive/transmit trait (DESIGN.md "Workspace").
//!
//! Not built yet: the trait and the DPDK, AF_PACKET, UDP and in-memory
//! backends arrive with the dataplane issue. This crate holds nothing else so far.
