//! The configuration commands' requests and answers (docs/admin-protocol.md
//! "Configuration changes"; docs/daemon.md "Changing the configuration
//! safely"): a reload's plan, a confirmed reload, the kept configurations,
//! and who asked for each change.

use serde::{Deserialize, Serialize};

use super::is_false;

/// Who asked for a configuration change: the admin peer's credentials
/// (`SO_PEERCRED`), or nobody for a change the daemon makes itself (SIGHUP,
/// a confirmation that lapsed, the start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Requester {
    /// The peer's effective uid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// The peer's process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

impl std::fmt::Display for Requester {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.uid, self.pid) {
            (None, _) => f.write_str("the daemon"),
            (Some(u), None) => write!(f, "uid {u}"),
            (Some(u), Some(p)) => write!(f, "uid {u} pid {p}"),
        }
    }
}

/// The options of `reload`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReloadRequest {
    /// Only compute the plan; apply nothing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dry_run: bool,
    /// Apply even though run-time changes would be dropped.
    #[serde(default, skip_serializing_if = "is_false")]
    pub force: bool,
    /// Return to the previous configuration unless `commit` comes within
    /// this many seconds (1 to [`MAX_CONFIRM_S`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm_s: Option<u64>,
}

/// The longest confirmation time a reload may ask for (one hour).
pub const MAX_CONFIRM_S: u64 = 3600;

/// The answer to `reload`, `rollback` and `commit`: the plan and what was
/// done with it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReloadAnswer {
    /// Whether the configuration was applied (false for a dry run).
    pub applied: bool,
    /// What changes live, one line each.
    pub changes: Vec<String>,
    /// What cannot change without a restart (a plan with any is refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restart: Vec<String>,
    /// The run-time changes the new configuration drops (refused unless
    /// forced).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// The generation now running (see [`HistoryEntry::generation`]).
    pub generation: u64,
    /// Seconds left before an unconfirmed reload is undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm_within_s: Option<u64>,
    /// What the reload does not take although it applies (a partitions
    /// file refused: the partitions in force stay), one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One kept configuration (`history`), newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// Counts the configurations applied since the start (the start is 0).
    pub generation: u64,
    /// `rollback N` returns to the entry with this `back` (0: running).
    pub back: u32,
    /// When it was applied (seconds since the UNIX epoch).
    pub applied_unix_s: u64,
    /// How: `start`, `reload`, `reload (confirmed)`, `rollback`,
    /// `reverted (not confirmed in time)`.
    pub how: String,
    /// Who asked.
    pub by: Requester,
    /// What it changed, one line each.
    pub changes: Vec<String>,
    /// Whether it waits for `commit`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pending: bool,
}

/// The answer to `write`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WriteAnswer {
    /// The file written.
    pub file: String,
    /// The previous file, kept beside it (`FILE.bak`), if there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<String>,
    /// The run-time changes the file now holds.
    pub runtime: Vec<String>,
}
