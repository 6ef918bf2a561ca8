//! What `mwctl links` and `mwctl errors` share with discover: where the
//! walk starts ([`WalkArgs`]), the walk they start with, a node's title,
//! numbers by name as smpquery prints them, and how the result is printed
//! (docs/management.md "mwctl links", "mwctl errors").

use std::io::Write;

use admin::ClientError;
use rrp::Address;
use serde_json::Value;

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

/// Prints a walk's result: `json` (pretty) with `--json`, else `text`; then,
/// when the walk fell short, `shortfall` on stderr (the exit status says
/// it too).
pub fn print(
    out: &mut dyn Write,
    err: &mut dyn Write,
    json: Option<&Value>,
    text: impl FnOnce() -> String,
    shortfall: Option<String>,
) -> Result<(), ClientError> {
    let text = match json {
        Some(v) => format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default()),
        None => text(),
    };
    out.write_all(text.as_bytes())
        .map_err(|e| ClientError::Other(format!("writing the output: {e}")))?;
    if let Some(s) = shortfall {
        let _ = writeln!(err, "mwctl: {s}");
    }
    Ok(())
}
