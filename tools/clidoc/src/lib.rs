//! The man pages and shell completions of the installed tools, generated
//! from their clap commands (docs/daemon.md "Debian package"). debian/rules
//! runs `mwrouter-clidoc OUTDIR` (this crate's binary, which is not
//! installed) and installs what it writes:
//!
//! ```text
//! OUTDIR/man/<tool>.<section>   man page (clap_mangen)
//! OUTDIR/bash/<tool>            bash completion (clap_complete)
//! OUTDIR/zsh/_<tool>            zsh completion (clap_complete)
//! ```
//!
//! The rendering is `mwctl::clidoc`'s, the same as `mwctl man` and `mwctl
//! completions`.

pub mod tools;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap_complete::Shell;
use mwctl::clidoc;

pub use tools::{TOOLS, Tool};

/// The shells completions are written for: each one's directory under
/// OUTDIR and the prefix of its files' names (zsh finds a command's
/// completion function in the file `_<command>`).
pub const SHELLS: &[(Shell, &str, &str)] = &[(Shell::Bash, "bash", ""), (Shell::Zsh, "zsh", "_")];

/// A file that could not be written.
#[derive(Debug)]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: io::Error,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The path of `tool`'s man page under `outdir`.
pub fn man_path(outdir: &Path, tool: &Tool) -> PathBuf {
    outdir
        .join("man")
        .join(format!("{}.{}", tool.name, tool.section))
}

/// The path of `tool`'s completion for `shell` under `outdir` (`None` for
/// a shell not in [`SHELLS`]).
pub fn completion_path(outdir: &Path, tool: &Tool, shell: Shell) -> Option<PathBuf> {
    let (_, dir, prefix) = SHELLS.iter().find(|(s, _, _)| *s == shell)?;
    Some(outdir.join(dir).join(format!("{prefix}{}", tool.name)))
}

/// Writes one file, creating its directory.
fn write_file(
    path: PathBuf,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<PathBuf, WriteError> {
    let written = (|| {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut out = BufWriter::new(File::create(&path)?);
        fill(&mut out)?;
        out.flush()
    })();
    match written {
        Ok(()) => Ok(path),
        Err(source) => Err(WriteError { path, source }),
    }
}

/// Writes the man page and the completions of every tool in [`TOOLS`]
/// under `outdir` (made if missing; files already there are replaced);
/// returns the files written.
pub fn write_all(outdir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let mut written = Vec::new();
    for tool in TOOLS {
        written.push(write_file(man_path(outdir, tool), |out| {
            clidoc::man((tool.command)(), tool.section, out)
        })?);
        for (shell, _, _) in SHELLS {
            let path = completion_path(outdir, tool, *shell).expect("a shell of SHELLS");
            written.push(write_file(path, |out| {
                clidoc::completions(*shell, (tool.command)(), out);
                Ok(())
            })?);
        }
    }
    Ok(written)
}
