//! What `mwctl links` and `mwctl errors` share: their options (where the
//! walk starts, how each request is sent: `mwctl discover`'s), the walk
//! they start with, and a node's title, numbers by name as smpquery
//! prints them (docs/management.md "mwctl links", "mwctl
//! errors").

use admin::ClientError;
use clap::Args;
use rrp::Address;

use crate::Cli;
use crate::discover::{self, DiscoverArgs, Discovery, SocketAsk};

/// The options of a sweep: `mwctl discover`'s, without `--dot`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
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

impl SweepArgs {
    /// The same options as `mwctl discover`'s, for its [`SocketAsk`].
    pub fn discover_args(&self) -> DiscoverArgs {
        DiscoverArgs {
            addr: self.addr,
            mad_timeout: self.mad_timeout,
            retries: self.retries,
            mkey: self.mkey.clone(),
            dot: false,
            cache: None,
            diff: None,
            html: None,
        }
    }
}

/// Where the walk starts: ADDR, or the box's first HR.
pub fn start(cli: &Cli, args: &DiscoverArgs) -> Result<Address, ClientError> {
    match args.addr {
        Some(a) => Ok(a),
        None => discover::first_hr(cli),
    }
}

/// Walks the routers from `args`' start through the admin socket.
pub fn walk(cli: &Cli, args: &DiscoverArgs) -> Result<Discovery, ClientError> {
    discover::walk(&SocketAsk::new(cli, args), start(cli, args)?)
}

/// A node's first line's words: `router 0x... "name" level B`.
pub fn node_title(r: &discover::Router) -> String {
    format!(
        "{} {:#018x} \"{}\" level {}",
        discover::node_type_name(r.node_type),
        r.identity,
        r.description,
        discover::level_name(r.level)
    )
}
