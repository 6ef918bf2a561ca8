//! The topology `mwctl discover --cache FILE` saves and `--diff FILE`
//! reads back (docs/management.md "mwctl discover"), as ibnetdiscover's
//! `--cache` keeps a fabric to compare with later. A [`Snapshot`] is what
//! is compared: the routers by identity with their HRs, the SANs with their
//! cost, MTU and nodes, each node's partitions, and the addresses that did
//! not answer; nothing that
//! changes from one walk to the next (timing, how a node was reached).
//! The file is JSON, written whole to a temporary file and renamed over.

use std::path::Path;

use rrp::Address;
use serde::{Deserialize, Serialize};

use crate::discover::Discovery;
use crate::discover_partitions::Table;

/// The version of the file's layout; a file of another version is refused.
pub const FORMAT: u32 = 1;

/// One HR of a saved router.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedHr {
    /// The port.
    pub port: u8,
    /// Its address.
    pub address: Address,
    /// Its SAN.
    pub san: Address,
    /// PortState.
    pub state: u8,
    /// MTU in bytes.
    pub mtu: u64,
    /// Cost.
    pub cost: u64,
}

/// A saved router.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedRouter {
    /// NodeIdentity, as `0x` and 16 hex digits.
    pub identity: String,
    /// NodeDescription.
    pub description: String,
    /// The HRs whose PortInfo was answered.
    pub hrs: Vec<SavedHr>,
    /// Its own partitions, when they were answered (absent from older
    /// files: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Table>,
}

/// A saved node of a SAN.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedNode {
    /// NodeIdentity, as `0x` and 16 hex digits.
    pub identity: String,
    /// Its address.
    pub address: Address,
    /// NodeDescription.
    pub description: String,
    /// Its own partitions, when they were answered (absent from older
    /// files: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Table>,
}

/// A saved SAN.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSan {
    /// SAN-ID.
    pub id: Address,
    /// Cost.
    pub cost: u64,
    /// MTU in bytes.
    pub mtu: u64,
    /// Its nodes.
    pub nodes: Vec<SavedNode>,
}

/// The topology as saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// [`FORMAT`].
    pub format: u32,
    /// When it was taken, seconds since the Unix epoch.
    pub taken_unix_s: u64,
    /// The routers, in the order found.
    pub routers: Vec<SavedRouter>,
    /// The SANs, by SAN-ID.
    pub sans: Vec<SavedSan>,
    /// The addresses tried that did not answer.
    pub unanswered: Vec<Address>,
}

/// A cache file that cannot be used.
#[derive(Debug)]
pub struct CacheError(pub String);

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An identity as saved.
pub fn identity_text(identity: u64) -> String {
    format!("{identity:#018x}")
}

impl Snapshot {
    /// What `d` found, taken at `taken_unix_s`.
    pub fn of(d: &Discovery, taken_unix_s: u64) -> Snapshot {
        Snapshot {
            format: FORMAT,
            taken_unix_s,
            routers: d
                .routers
                .iter()
                .map(|r| SavedRouter {
                    identity: identity_text(r.identity),
                    description: r.description.clone(),
                    hrs: r
                        .hrs
                        .iter()
                        .filter_map(|h| {
                            h.info.as_ref().map(|i| SavedHr {
                                port: h.port,
                                address: i.address,
                                san: i.san,
                                state: i.state,
                                mtu: i.mtu,
                                cost: i.cost,
                            })
                        })
                        .collect(),
                    partitions: r.partitions.clone(),
                })
                .collect(),
            sans: d
                .sans
                .iter()
                .map(|s| SavedSan {
                    id: s.id,
                    cost: s.cost,
                    mtu: s.mtu,
                    nodes: s
                        .members
                        .iter()
                        .map(|m| SavedNode {
                            identity: identity_text(m.identity),
                            address: m.address,
                            description: m.description.clone(),
                            partitions: m.partitions.clone(),
                        })
                        .collect(),
                })
                .collect(),
            unanswered: d.unanswered.iter().map(|u| u.address).collect(),
        }
    }

    /// Writes the snapshot to `path`: a temporary file beside it, renamed
    /// over it, so that a reader never sees half a file.
    pub fn save(&self, path: &Path) -> Result<(), CacheError> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| CacheError(format!("encoding the cache: {e}")))?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = std::path::PathBuf::from(tmp);
        std::fs::write(&tmp, text + "\n")
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| CacheError(format!("writing the cache {}: {e}", path.display())))
    }

    /// Reads a snapshot saved by [`Snapshot::save`].
    pub fn load(path: &Path) -> Result<Snapshot, CacheError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CacheError(format!("reading the cache {}: {e}", path.display())))?;
        let s: Snapshot = serde_json::from_str(&text).map_err(|e| {
            CacheError(format!(
                "{} is not a cache mwctl discover wrote: {e}",
                path.display()
            ))
        })?;
        if s.format != FORMAT {
            return Err(CacheError(format!(
                "{} has format {}, this mwctl reads {FORMAT}",
                path.display(),
                s.format
            )));
        }
        Ok(s)
    }
}
