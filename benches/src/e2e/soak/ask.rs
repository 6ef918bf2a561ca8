//! What the soak asks a router over its admin socket, as an operator does
//! with `mwctl --json` (docs/admin-protocol.md), the answers read into
//! admin's own view types: counters, the RTs learned from buddies, a port
//! down or up, a reload.

use std::path::Path;

use admin::view::{CounterRow, RtRow};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::accounting::{PortRows, by_port};
use crate::e2e::Result;
use crate::e2e::router::mwctl_at;

/// `mwctl --socket SOCKET --json ARGS`, its answer read as `T`.
pub fn mwctl<T: DeserializeOwned>(mwctl: &Path, socket: &Path, args: &[&str]) -> Result<T> {
    let mut all = vec!["--json".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    let out = mwctl_at(mwctl, socket, &all)?;
    serde_json::from_str(&out).map_err(|e| {
        format!(
            "mwctl --json {}: unexpected answer ({e}): {out}",
            args.join(" ")
        )
    })
}

/// `show counters`, by port.
pub fn counters(mwctl_bin: &Path, socket: &Path) -> Result<PortRows> {
    mwctl::<Vec<CounterRow>>(mwctl_bin, socket, &["show", "counters"]).map(by_port)
}

/// The RTs the router keeps that a buddy advertised (`show rts`, origin
/// `buddy ...`); 0 when it does not answer.
pub fn rts_from_buddies(mwctl_bin: &Path, socket: &Path) -> usize {
    mwctl::<Vec<RtRow>>(mwctl_bin, socket, &["show", "rts"])
        .map(|rows| {
            rows.iter()
                .filter(|r| r.origin.starts_with("buddy"))
                .count()
        })
        .unwrap_or(0)
}

/// `port P up` or `port P down`.
pub fn set_port(mwctl_bin: &Path, socket: &Path, port: u16, up: bool) -> Result<()> {
    let p = port.to_string();
    mwctl::<Value>(
        mwctl_bin,
        socket,
        &["port", &p, if up { "up" } else { "down" }],
    )
    .map(drop)
}

/// `reload`: the number of changes when the router applied the file, an
/// error (with its answer) when it did not.
pub fn reload(mwctl_bin: &Path, socket: &Path) -> Result<usize> {
    let a: Value = mwctl(mwctl_bin, socket, &["reload"])?;
    if a.get("applied").and_then(Value::as_bool) == Some(true) {
        Ok(a.get("changes")
            .and_then(Value::as_array)
            .map_or(0, Vec::len))
    } else {
        Err(format!("not reloaded: {a}"))
    }
}
