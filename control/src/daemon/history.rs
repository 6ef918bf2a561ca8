//! The applied configurations the daemon keeps for `mwctl history` and
//! `mwctl rollback` (docs/daemon.md "Changing the configuration safely"):
//! the running one first, then up to `admin.config_history` before it; and,
//! with `admin.history_file`, the same list on disk, so that a restart (an
//! upgrade, a reboot) can still roll back to what ran before it.
//!
//! The file is JSON, `{"format": 1, "kept": [{"entry": …, "config": TOML}]}`,
//! newest first, written whole through a temporary file and a rename, mode
//! 0600 (the configurations hold their keys). A file that cannot be read or
//! parsed is reported and set aside; the daemon starts with a new history.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use admin::proto::HistoryEntry;
use serde::{Deserialize, Serialize};

use crate::config::Config;

/// The history file's format.
pub const FORMAT: u32 = 1;

/// The largest history file read (100 configurations of a large box).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// One kept configuration.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The configuration as applied (without run-time changes).
    pub cfg: Config,
    /// When, how and by whom.
    pub entry: HistoryEntry,
}

/// A reload waiting for `commit`.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    /// The generation that waits.
    pub generation: u64,
    /// When it is undone.
    pub deadline: Instant,
}

/// The kept configurations, newest (running) first, and the confirmation
/// a reload waits for.
#[derive(Debug)]
pub struct History {
    /// Newest first.
    pub kept: VecDeque<Kept>,
    /// How many are kept before the running one.
    pub limit: usize,
    /// The generation of the next configuration applied.
    pub next_generation: u64,
    /// The reload that waits for `commit`.
    pub pending: Option<Pending>,
}

impl History {
    /// An empty history keeping `limit` before the running configuration.
    pub fn new(limit: usize) -> History {
        History {
            kept: VecDeque::new(),
            limit,
            next_generation: 0,
            pending: None,
        }
    }

    /// A history that goes on from `kept` (newest first, as read from the
    /// file): generations continue after the newest.
    pub fn resumed(limit: usize, mut kept: Vec<Kept>) -> History {
        kept.truncate(limit.max(1) + 1);
        let next_generation = kept
            .iter()
            .map(|k| k.entry.generation + 1)
            .max()
            .unwrap_or(0);
        for k in &mut kept {
            k.entry.pending = false;
        }
        History {
            kept: kept.into(),
            limit,
            next_generation,
            pending: None,
        }
    }

    /// Keeps `cfg` as the running configuration: the one before it and
    /// older ones are kept up to `limit` (the oldest goes first).
    pub fn push(&mut self, cfg: Config, entry: HistoryEntry) {
        self.kept.push_front(Kept { cfg, entry });
        self.kept.truncate(self.limit.max(1) + 1);
    }

    /// The history file's text.
    pub fn to_json(&self) -> String {
        let file = File {
            format: FORMAT,
            kept: self
                .kept
                .iter()
                .map(|k| FileEntry {
                    entry: k.entry.clone(),
                    config: k.cfg.to_toml(),
                })
                .collect(),
        };
        serde_json::to_string_pretty(&file).unwrap_or_default()
    }

    /// Writes the history to `path` (whole, through a temporary file and a
    /// rename; mode 0600).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".{}.tmp", std::process::id()));
        let tmp = std::path::PathBuf::from(tmp);
        let written = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(self.to_json().as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// Why a history file was not taken.
#[derive(Debug)]
pub enum HistoryError {
    /// It could not be read.
    Io(std::io::Error),
    /// Larger than [`MAX_FILE_BYTES`].
    TooLarge(u64),
    /// Not the JSON of a history file.
    Json(serde_json::Error),
    /// Another format.
    Format(u32),
    /// A kept configuration that is not valid (any more: another version
    /// of the daemon wrote it).
    Config {
        /// Its generation.
        generation: u64,
        /// What is wrong with it.
        why: String,
    },
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryError::Io(e) => write!(f, "cannot read it: {e}"),
            HistoryError::TooLarge(n) => {
                write!(f, "{n} bytes, more than the {MAX_FILE_BYTES} read")
            }
            HistoryError::Json(e) => write!(f, "not a history file: {e}"),
            HistoryError::Format(v) => {
                write!(f, "format {v}, this daemon reads format {FORMAT}")
            }
            HistoryError::Config { generation, why } => write!(f, "generation {generation}: {why}"),
        }
    }
}

impl std::error::Error for HistoryError {}

impl From<std::io::Error> for HistoryError {
    fn from(e: std::io::Error) -> Self {
        HistoryError::Io(e)
    }
}

impl From<serde_json::Error> for HistoryError {
    fn from(e: serde_json::Error) -> Self {
        HistoryError::Json(e)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: u32,
    kept: Vec<FileEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEntry {
    entry: HistoryEntry,
    config: String,
}

/// The kept configurations of a history file's text, newest first.
pub fn parse(text: &str) -> Result<Vec<Kept>, HistoryError> {
    let file: File = serde_json::from_str(text)?;
    if file.format != FORMAT {
        return Err(HistoryError::Format(file.format));
    }
    file.kept
        .into_iter()
        .map(|e| {
            let cfg = Config::from_toml(&e.config).map_err(|err| HistoryError::Config {
                generation: e.entry.generation,
                why: err.to_string(),
            })?;
            Ok(Kept {
                cfg,
                entry: e.entry,
            })
        })
        .collect()
}

/// The kept configurations in the file at `path`, newest first; none when
/// there is no file yet.
pub fn load(path: &Path) -> Result<Vec<Kept>, HistoryError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(HistoryError::TooLarge(meta.len()));
    }
    parse(&std::fs::read_to_string(path)?)
}

/// The fuzz body of the cargo-fuzz target `history_file` (under `fuzz/`),
/// shared with the test that replays its corpus
/// (`control/tests/history_corpus.rs`): arbitrary bytes, read as a history
/// file's text (invalid UTF-8 replaced), never panic; a file that parses
/// writes back ([`History::to_json`]) a text that parses to the same
/// entries and configurations.
pub fn fuzz(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(kept) = parse(&text) else {
        return;
    };
    let n = kept.len();
    let h = History::resumed(usize::MAX - 1, kept);
    let again = parse(&h.to_json()).expect("a written history parses");
    assert_eq!(again.len(), n);
    for (a, b) in h.kept.iter().zip(&again) {
        assert_eq!(a.entry, b.entry);
        assert_eq!(a.cfg, b.cfg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(generation: u64) -> HistoryEntry {
        HistoryEntry {
            generation,
            how: "reload".into(),
            ..HistoryEntry::default()
        }
    }

    #[test]
    fn history_keeps_the_running_one_and_limit_before_it() {
        let cfg = Config::new("h", Vec::new());
        let mut h = History::new(3);
        for g in 0..10 {
            h.push(cfg.clone(), entry(g));
        }
        let gens: Vec<u64> = h.kept.iter().map(|k| k.entry.generation).collect();
        assert_eq!(gens, [9, 8, 7, 6], "newest first, 1 running + 3 kept");
    }

    #[test]
    fn a_saved_history_is_read_back_and_goes_on_after_its_newest() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("history.json");
        assert!(load(&f).unwrap().is_empty(), "no file yet");
        let mut h = History::new(5);
        for (g, name) in ["a", "b", "c"].iter().enumerate() {
            let mut e = entry(g as u64);
            e.pending = g == 2;
            let hr = crate::config::HrSection::new(
                0x0100,
                0x0200,
                1500,
                crate::config::PortConfig::Udp(crate::config::UdpPortConfig::new(
                    "127.0.0.1:7000".parse().unwrap(),
                )),
            );
            h.push(Config::new(name, vec![hr]), e);
        }
        h.save(&f).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the configurations hold keys");
        let back = History::resumed(1, load(&f).unwrap());
        let names: Vec<&str> = back
            .kept
            .iter()
            .map(|k| k.cfg.router.name.as_str())
            .collect();
        assert_eq!(names, ["c", "b"], "newest first, cut to the limit");
        assert_eq!(back.next_generation, 3);
        assert!(back.kept.iter().all(|k| !k.entry.pending));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_bad_file_is_a_typed_error() {
        assert!(matches!(parse("{"), Err(HistoryError::Json(_))));
        assert!(matches!(
            parse(r#"{"format": 2, "kept": []}"#),
            Err(HistoryError::Format(2))
        ));
        let bad = r#"{"format": 1, "kept": [{"entry": {"generation": 4, "back": 0,
            "applied_unix_s": 0, "how": "start", "by": {}, "changes": []},
            "config": "not = [toml"}]}"#;
        assert!(matches!(
            parse(bad),
            Err(HistoryError::Config { generation: 4, .. })
        ));
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(load(dir.path()), Err(HistoryError::Io(_))));
    }
}
