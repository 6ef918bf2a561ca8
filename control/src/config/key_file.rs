//! Secrets read from files (docs/configuration.md "Keys in files"): beside
//! each secret written in the configuration (`management.mkey`,
//! `management.sm_key`, the `secret` of an `[hr.auth]` key) a key of the same
//! name with `_file` (`mkey_file`, `sm_key_file`, `secret_file`) names a file
//! that holds the secret in the same text form, with a trailing newline
//! allowed. A secret is given one way or the other, never both.
//!
//! The file is read whenever the configuration is (at start-up and at every
//! reload), so that rotating a key is: write the new file, reload. The
//! [`Config`] keeps the file's name beside the secret read from it:
//! [`Config::to_toml`] writes the name, never the secret.
//!
//! [`OnDisk`] reads the files for the daemon and refuses one that is not a
//! regular file, is readable or writable by group or others, cannot be read,
//! is larger than [`MAX_KEY_FILE`] or is not text. Any other [`KeyFiles`]
//! (tests, the fuzz body) reads what it likes. No error shows what a file
//! holds: each names the key and the file, and says what is wrong.

use std::fs::{File, Metadata};
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use super::{Config, ConfigError};

/// The largest key file read, in bytes (a key is at most a few hundred).
pub const MAX_KEY_FILE: u64 = 4096;

/// Where the key files a configuration names are read from.
pub trait KeyFiles {
    /// The text of the key file at `path` (an absolute path), or why it is
    /// refused, without its content.
    fn read(&self, path: &Path) -> Result<String, String>;
}

impl<F: Fn(&Path) -> Result<String, String>> KeyFiles for F {
    fn read(&self, path: &Path) -> Result<String, String> {
        self(path)
    }
}

/// The daemon's key files: read from the file system, refused unless they
/// are regular files of mode 0600 or less (`mode & 0o077 == 0`), readable,
/// at most [`MAX_KEY_FILE`] bytes of UTF-8.
#[derive(Debug, Clone, Copy, Default)]
pub struct OnDisk;

/// Why a key file with this metadata is refused, if it is.
fn refusal(meta: &Metadata) -> Option<String> {
    if !meta.is_file() {
        return Some("not a regular file".into());
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Some(format!(
            "mode {mode:04o}: readable or writable by group or others; a key file is its owner's only (chmod 600)"
        ));
    }
    if meta.len() > MAX_KEY_FILE {
        return Some(format!(
            "{} bytes: a key file holds at most {MAX_KEY_FILE}",
            meta.len()
        ));
    }
    None
}

impl KeyFiles for OnDisk {
    fn read(&self, path: &Path) -> Result<String, String> {
        let cannot = |e: std::io::Error| format!("cannot read: {e}");
        // Checked before opening (opening a FIFO would wait for a writer),
        // and again on the file opened, which is the one read.
        let meta = std::fs::metadata(path).map_err(cannot)?;
        if let Some(why) = refusal(&meta) {
            return Err(why);
        }
        let mut f = File::open(path).map_err(cannot)?;
        if let Some(why) = refusal(&f.metadata().map_err(cannot)?) {
            return Err(why);
        }
        let mut bytes = Vec::new();
        f.by_ref()
            .take(MAX_KEY_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
        if bytes.len() as u64 > MAX_KEY_FILE {
            return Err(format!(
                "longer than {MAX_KEY_FILE} bytes: a key file holds at most that"
            ));
        }
        String::from_utf8(bytes).map_err(|_| "not UTF-8 text (the content is not shown)".into())
    }
}

/// Why `path` cannot name a key file: it must be absolute (the daemon's
/// working directory is not the configuration's) and UTF-8 (the emitted
/// configuration names it in a TOML string).
pub(super) fn path_problem(path: &Path) -> Option<&'static str> {
    if path.to_str().is_none() {
        Some("not UTF-8: a key file's path is written in a TOML string")
    } else if !path.is_absolute() {
        Some("not an absolute path")
    } else {
        None
    }
}

/// A key file's text without its trailing newline (`\n` or `\r\n`).
fn without_newline(text: &str) -> &str {
    match text.strip_suffix('\n') {
        Some(t) => t.strip_suffix('\r').unwrap_or(t),
        None => text,
    }
}

/// The secret in the key file `path` that `key` (a key path such as
/// `management.mkey_file`) names, read through `files` and made a value by
/// `parse` (whose error must not show the text). The error names `key` and
/// the file.
pub(super) fn read<T>(
    files: &dyn KeyFiles,
    key: &str,
    path: &Path,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, ConfigError> {
    let refused = |why: String| ConfigError::new(key, format!("{}: {why}", path.display()));
    if let Some(why) = path_problem(path) {
        return Err(refused(why.into()));
    }
    let text = files.read(path).map_err(refused)?;
    parse(without_newline(&text)).map_err(refused)
}

/// A secret of a configuration that was read from a file.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FileSecret<'a> {
    /// Which secret it is: the same in two configurations for the same
    /// secret (an auth key by its ID, not its place in the list).
    pub which: String,
    /// The key that names the file, e.g. `hr[0].auth.keys[1].secret_file`.
    pub key: String,
    /// The file.
    pub file: &'a Path,
    /// The secret's bytes (compared, never shown).
    pub secret: Vec<u8>,
}

/// The secrets of `c` read from files: a key rotated in its file changes
/// no key of the emitted text, so a reload compares these as well.
pub(super) fn file_secrets(c: &Config) -> Vec<FileSecret<'_>> {
    let m = &c.management;
    let mut out = Vec::new();
    for (name, file, value) in [
        ("management.mkey_file", &m.mkey_file, m.mkey),
        ("management.sm_key_file", &m.sm_key_file, m.sm_key),
    ] {
        if let Some(file) = file {
            out.push(FileSecret {
                which: name.to_string(),
                key: name.to_string(),
                file,
                secret: value.to_be_bytes().to_vec(),
            });
        }
    }
    for (i, h) in c.hrs.iter().enumerate() {
        let Some(auth) = &h.auth else { continue };
        for (j, k) in auth.keys.iter().enumerate() {
            if let Some(file) = h.key_files.get(&k.id) {
                out.push(FileSecret {
                    which: format!("hr[{i}].auth key {}", k.id),
                    key: format!("hr[{i}].auth.keys[{j}].secret_file"),
                    file,
                    secret: k.secret.clone(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_trailing_newline_is_not_the_key() {
        assert_eq!(without_newline("0x01\n"), "0x01");
        assert_eq!(without_newline("0x01\r\n"), "0x01");
        assert_eq!(without_newline("0x01"), "0x01");
        assert_eq!(without_newline("0x01\n\n"), "0x01\n");
        assert_eq!(without_newline("\n"), "");
    }

    #[test]
    fn paths_are_absolute() {
        assert_eq!(path_problem(Path::new("/etc/k")), None);
        assert!(path_problem(Path::new("k")).is_some());
        assert!(path_problem(Path::new("./k")).is_some());
    }

    #[test]
    fn read_names_the_key_and_the_file_and_never_the_text() {
        let files = |_: &Path| Ok("s3cret\n".to_string());
        let e = read(&files, "management.mkey_file", Path::new("/k/m"), |t| {
            assert_eq!(t, "s3cret");
            Err::<(), _>("malformed".to_string())
        })
        .unwrap_err();
        assert_eq!(e.key, "management.mkey_file");
        assert_eq!(e.why, "/k/m: malformed");
        let e = read(&files, "management.mkey_file", Path::new("k"), |_| Ok(())).unwrap_err();
        assert!(e.why.starts_with("k: not an absolute path"), "{e}");
    }
}
