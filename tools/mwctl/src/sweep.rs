//! What `mwctl links` and `mwctl errors` share with discover: where the
//! walk starts ([`WalkArgs`]), the walk they start with, and a node's title, numbers by name as smpquery
//! prints them (docs/management.md "mwctl links", "mwctl
//! errors").

use admin::ClientError;
use rrp::Address;

use crate::Cli;
use crate::discover::{self, Discovery, SocketAsk};
use crate::walk_args::WalkArgs;

/// Where the walk starts: ADDR, or the box's first HR.
pub fn start(cli: &Cli, args: &WalkArgs) -> Result<Address, ClientError> {
    match args.addr {
        Some(a) => Ok(a),
        None => discover::first_hr(cli),
    }
}

/// Walks the routers from `args`' start through the admin socket.
pub fn walk(cli: &Cli, args: &WalkArgs) -> Result<Discovery, ClientError> {
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
