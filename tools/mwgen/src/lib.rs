//! mwgen, the MessageWay packet generator: sends numbered, timestamped probe
//! packets through a router on any port backend (DPDK for benchmarks; UDP,
//! AF_PACKET and in-memory wires for tests) and measures what comes back:
//! loss, duplication, reordering, throughput and one-way latency; or
//! searches for the highest rate without loss (RFC 2544 NDR/PDR).
//!
//! - [`probe`]: how a probe carries its stream, number and time.
//! - [`profile`]: what to send (L3 or L2, destinations, sizes), built once
//!   into templates.
//! - [`generator`]: the engine over a transmit and a receive port, driven by
//!   the time it is given.
//! - [`receiver`]: sequence and latency accounting.
//! - [`rate`], [`run`], [`search`]: pacing, one timed run, the NDR/PDR search.
//! - [`pcap`]: `--write-pcap` and `--pcap`.
//! - [`backend`], [`cli`], [`report`]: the command line and its output.
//!
//! docs/mwgen.md is the user's guide.

pub mod backend;
pub mod cli;
pub mod cores;
pub mod cycle;
pub mod generator;
pub mod pcap;
pub mod probe;
pub mod profile;
pub mod rate;
pub mod receiver;
pub mod report;
pub mod run;
pub mod search;

pub use generator::{GenError, Generator, TxCounts};
pub use profile::{Profile, Sizes, Template};
pub use rate::Rate;
pub use receiver::{Latency, Receiver, RxCounts};
pub use run::{Idle, RunResult, RunSpec};
pub use search::{SearchResult, SearchSpec};
