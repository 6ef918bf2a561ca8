//! The options of every command that walks the network in band (`mwctl
//! discover`, `links`, `errors`; docs/management.md "mwctl discover"):
//! where the walk starts and how each request is sent. Declared once and
//! flattened into each command's arguments.

use clap::Args;
use rrp::Address;

/// Where a walk starts and how each of its requests is sent.
#[derive(Debug, Clone, Default, Args)]
pub struct WalkArgs {
    /// Start at this address instead of this box's first HR.
    #[arg(value_name = "ADDR", value_parser = crate::ping::parse_target)]
    pub addr: Option<Address>,
    /// The wait for each try of a request, in ms.
    #[arg(short = 't', long = "mad-timeout", value_name = "MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=admin::mad::MAX_TIMEOUT_MS))]
    pub mad_timeout: u64,
    /// Tries after the first for each request.
    #[arg(short = 'r', long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(admin::mad::MAX_RETRIES)))]
    pub retries: u32,
    /// The M_Key to give (hex with 0x, or decimal).
    #[arg(short = 'k', long, value_name = "KEY")]
    pub mkey: Option<String>,
}
