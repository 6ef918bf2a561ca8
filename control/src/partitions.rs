//! The partitions file of the box's SAN managers (docs/partitions.md,
//! `management.partitions_file`): read at start and at every reload, the
//! last good one kept. A file that cannot be read or has any error is
//! refused whole (docs/spec-notes.md 75): the partitions in force do not
//! change, the refusal is logged in one line and kept for `mwctl san
//! partitions`. Without a file, every node is a full member of the
//! default partition ([`Partitions::open`]).
//!
//! The file is not a secret: it is read here, not as a key file.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use admin::view::{PartitionRow, PartitionsCopyInfo, PartitionsInfo, PartitionsRefusal};
use mgmt::partition::Partitions;
use mgmt::partition::file::MAX_FILE_BYTES;

/// How many of a refusal's errors the log line names.
const LOGGED_ERRORS: usize = 3;

/// One read of the partitions file, made off the control thread and
/// taken by [`PartitionsSource::take`] on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The file configured; none: no partitions file.
    pub path: Option<PathBuf>,
    /// Its partitions, or every error (`line N: ...`, or why it could not
    /// be read).
    pub result: Result<Partitions, Vec<String>>,
    /// When it was read (Unix seconds).
    pub at_unix_s: u64,
}

/// The text of the partitions file at `path`: a regular file of at most
/// [`MAX_FILE_BYTES`] bytes of UTF-8 (a FIFO or a device is not opened).
pub fn read_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("cannot read: not a regular file".into());
    }
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(format!("more than the {MAX_FILE_BYTES} bytes read"));
    }
    String::from_utf8(bytes)
        .map_err(|e| format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()))
}

/// Reads the partitions file `path` (none: no file) now.
pub fn read(path: Option<&Path>) -> Reading {
    let at_unix_s = unix_now_s();
    let result = match path {
        None => Ok(Partitions::open()),
        Some(p) => read_text(p).map_err(|e| vec![e]).and_then(|text| {
            mgmt::partition::parse(&text)
                .map_err(|errs| errs.iter().map(|e| e.to_string()).collect())
        }),
    };
    Reading {
        path: path.map(Path::to_path_buf),
        result,
        at_unix_s,
    }
}

/// The partitions in force and where they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionsSource {
    /// The file configured (`management.partitions_file`).
    path: Option<PathBuf>,
    /// The partitions in force.
    in_force: Partitions,
    /// The file they were read from; none: the default.
    from_file: Option<PathBuf>,
    /// When they were read.
    loaded_unix_s: Option<u64>,
    /// The last read, when it was refused.
    refused: Option<PartitionsRefusal>,
}

impl Default for PartitionsSource {
    /// No file read yet: every node a full member of the default partition.
    fn default() -> Self {
        PartitionsSource {
            path: None,
            in_force: Partitions::open(),
            from_file: None,
            loaded_unix_s: None,
            refused: None,
        }
    }
}

impl PartitionsSource {
    /// Reads `path` (none: no file) and takes what it holds.
    pub fn load(&mut self, path: Option<&Path>) {
        self.take(read(path));
    }

    /// Takes a reading: its partitions when it has them; a refusal leaves
    /// the partitions in force as they are, and is logged and kept.
    pub fn take(&mut self, r: Reading) {
        self.path = r.path.clone();
        match (r.path, r.result) {
            (None, _) => {
                if let Some(f) = &self.from_file {
                    tracing::info!(
                        was = %f.display(),
                        "no partitions file: every node a full member of the default partition"
                    );
                }
                self.in_force = Partitions::open();
                self.from_file = None;
                self.loaded_unix_s = None;
                self.refused = None;
            }
            (Some(p), Ok(parts)) => {
                tracing::info!(
                    file = %p.display(),
                    partitions = parts.list.len(),
                    "partitions file read"
                );
                self.in_force = parts;
                self.from_file = Some(p);
                self.loaded_unix_s = Some(r.at_unix_s);
                self.refused = None;
            }
            (Some(p), Err(errs)) => {
                let mut first = errs
                    .iter()
                    .take(LOGGED_ERRORS)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ");
                if errs.len() > LOGGED_ERRORS {
                    first.push_str(&format!("; and {} more", errs.len() - LOGGED_ERRORS));
                }
                tracing::warn!(
                    file = %p.display(),
                    errors = errs.len(),
                    "partitions file refused, the partitions in force do not change: {first}"
                );
                self.refused = Some(PartitionsRefusal {
                    file: p.display().to_string(),
                    at_unix_s: r.at_unix_s,
                    count: errs.len(),
                    errors: errs
                        .into_iter()
                        .take(PartitionsRefusal::MAX_SHOWN)
                        .collect(),
                });
            }
        }
    }

    /// The partitions in force.
    pub fn in_force(&self) -> &Partitions {
        &self.in_force
    }

    /// Whether the partitions in force were read from a file (not the
    /// default).
    pub fn from_file(&self) -> bool {
        self.from_file.is_some()
    }

    /// The last refusal, when the last read was refused.
    pub fn refused(&self) -> Option<&PartitionsRefusal> {
        self.refused.as_ref()
    }

    /// What `show management` shows of them.
    pub fn info(&self) -> PartitionsInfo {
        PartitionsInfo {
            file: self.path.as_ref().map(|p| p.display().to_string()),
            loaded_from: self.from_file.as_ref().map(|p| p.display().to_string()),
            loaded_unix_s: self.loaded_unix_s,
            refused: self.refused.clone(),
            partitions: self.in_force.list.iter().map(PartitionRow::of).collect(),
            copies: Vec::new(),
        }
    }
}

/// What `mwctl san partitions` shows of the copy of its master's
/// partitions that the manager on `port` holds, taken `age_ms` ago (at
/// `now_unix_s`): the partitions only when they differ from the box's own
/// `own`.
pub fn copy_info(
    port: usize,
    copy: &mgmt::manager::PartitionsCopy,
    own: &Partitions,
    age_ms: u64,
    now_unix_s: u64,
) -> PartitionsCopyInfo {
    let same_as_own = copy.partitions.to_text() == own.to_text();
    PartitionsCopyInfo {
        port,
        master: copy.master.to_string(),
        at_unix_s: now_unix_s.saturating_sub(age_ms / 1000),
        version: format!("{:#018x}", copy.version),
        same_as_own,
        partitions: if same_as_own {
            Vec::new()
        } else {
            copy.partitions.list.iter().map(PartitionRow::of).collect()
        },
    }
}

/// The time now, in Unix seconds.
pub fn unix_now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mgmt::partition::PartitionKey;

    const GOOD: &str = "Default=0x7fff : ALL=full ;\ntenant_a=0x0010 : 0x104=full, 0x105 ;\n";
    const OTHER: &str = "tenant_b=0x0020, defmember=full : 0x106 ;\n";
    const BROKEN: &str = "tenant_a=0x0010 : 0x104=full ;\nnokey : 0x105 ;\nx=0x8000 : ALL ;\n";

    fn file(dir: &tempfile::TempDir, text: &str) -> PathBuf {
        let p = dir.path().join("partitions.conf");
        std::fs::write(&p, text).unwrap();
        p
    }

    fn keys(s: &PartitionsSource) -> Vec<u16> {
        s.in_force().list.iter().map(|p| p.key.get()).collect()
    }

    #[test]
    fn a_good_file_is_in_force() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(&dir, GOOD);
        let mut s = PartitionsSource::default();
        s.load(Some(&p));
        assert!(s.from_file());
        assert_eq!(keys(&s), [0x7fff, 0x0010]);
        let i = s.info();
        assert_eq!(i.file.as_deref(), i.loaded_from.as_deref());
        assert!(i.loaded_unix_s.is_some() && i.refused.is_none());
        assert_eq!(i.partitions[1].key, "0x0010");
        assert_eq!(
            i.partitions[1].members,
            ["0x0000000000000104=full", "0x0000000000000105=limited"]
        );
    }

    #[test]
    fn a_refused_file_keeps_the_previous_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(&dir, GOOD);
        let mut s = PartitionsSource::default();
        s.load(Some(&p));
        let before = s.in_force().clone();
        std::fs::write(&p, BROKEN).unwrap();
        s.load(Some(&p));
        assert_eq!(s.in_force(), &before);
        assert!(s.from_file());
        let r = s.refused().expect("refused");
        assert_eq!(r.count, 2);
        assert!(r.errors[0].starts_with("line 2: "), "{:?}", r.errors);
        assert!(r.errors[1].starts_with("line 3: "), "{:?}", r.errors);
        // Fixed, the new file is in force and the refusal is gone.
        std::fs::write(&p, OTHER).unwrap();
        s.load(Some(&p));
        assert!(s.refused().is_none());
        assert!(s.in_force().get(PartitionKey::new(0x20).unwrap()).is_some());
        assert!(s.in_force().get(PartitionKey::new(0x10).unwrap()).is_none());
    }

    #[test]
    fn refused_at_start_gives_the_default_partition() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(&dir, BROKEN);
        let mut s = PartitionsSource::default();
        s.load(Some(&p));
        assert_eq!(s.in_force(), &Partitions::open());
        assert!(!s.from_file());
        let i = s.info();
        assert_eq!(i.file, Some(p.display().to_string()));
        assert_eq!(i.loaded_from, None);
        assert_eq!(i.refused.unwrap().count, 2);
        assert_eq!(i.partitions.len(), 1);
        assert_eq!(i.partitions[0].members, ["ALL=full"]);
    }

    #[test]
    fn a_missing_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(&dir, GOOD);
        let mut s = PartitionsSource::default();
        s.load(Some(&p));
        let gone = dir.path().join("gone.conf");
        s.load(Some(&gone));
        assert_eq!(keys(&s), [0x7fff, 0x0010], "the last good one stays");
        let r = s.refused().unwrap();
        assert_eq!(r.file, gone.display().to_string());
        assert!(r.errors[0].starts_with("cannot read: "), "{:?}", r.errors);
        // A directory is not read either.
        s.load(Some(dir.path()));
        assert!(s.refused().unwrap().errors[0].contains("not a regular file"));
    }

    #[test]
    fn a_file_too_large_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let mut big = String::from(GOOD);
        while big.len() <= MAX_FILE_BYTES {
            big.push_str("# padding padding padding padding padding padding padding\n");
        }
        let p = file(&dir, &big);
        let mut s = PartitionsSource::default();
        s.load(Some(&p));
        assert!(!s.from_file());
        let r = s.refused().unwrap();
        assert!(r.errors[0].contains("more than the"), "{:?}", r.errors);
        // Not UTF-8.
        std::fs::write(&p, b"Default=0x7fff : ALL=full ;\n\xff\n").unwrap();
        s.load(Some(&p));
        assert!(s.refused().unwrap().errors[0].contains("not UTF-8"));
    }

    #[test]
    fn no_file_is_the_default_partition() {
        let dir = tempfile::tempdir().unwrap();
        let p = file(&dir, GOOD);
        let mut s = PartitionsSource::default();
        s.load(Some(&p));
        s.load(None);
        assert_eq!(s.in_force(), &Partitions::open());
        assert!(!s.from_file());
        let i = s.info();
        assert_eq!(i.file, None);
        assert_eq!(i.refused, None);
    }

    #[test]
    fn a_refusal_keeps_a_bounded_number_of_errors() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..500).map(|i| format!("p{i} : ALL ;\n")).collect();
        let p = file(&dir, &text);
        let mut s = PartitionsSource::default();
        s.load(Some(&p));
        let r = s.refused().unwrap();
        assert!(r.count >= 500, "{}", r.count);
        assert_eq!(r.errors.len(), PartitionsRefusal::MAX_SHOWN);
    }

    #[test]
    fn a_copy_is_shown_with_its_partitions_when_they_differ_from_the_boxs_own() {
        let copied = mgmt::partition::parse(GOOD).unwrap();
        let copy = mgmt::manager::PartitionsCopy {
            master: rrp::Address(0x0117),
            version: copied.version(),
            at: 5_000,
            partitions: copied.clone(),
        };
        let i = copy_info(1, &copy, &Partitions::open(), 3_000, 1_000);
        assert_eq!(i.master, "0x0117");
        assert_eq!((i.port, i.at_unix_s), (1, 997));
        assert_eq!(i.version, format!("{:#018x}", copied.version()));
        assert!(!i.same_as_own);
        assert_eq!(i.partitions.len(), 2);
        let same = copy_info(0, &copy, &copied, 0, 1_000);
        assert!(same.same_as_own && same.partitions.is_empty());
    }
}
