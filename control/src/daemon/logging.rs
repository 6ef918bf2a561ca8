//! Logs through `tracing`: to the journal with structured fields when
//! systemd connected standard error to it (`$JOURNAL_STREAM`), otherwise
//! human lines or JSON lines on stderr; the level changeable at run time
//! (`mwctl log level`, reload). docs/daemon.md "Logs".

use std::sync::Arc;

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::reload;
use tracing_subscriber::util::SubscriberInitExt;

use admin::LogLevel;

use crate::config::{LogFormat, LogSection};

/// Changes the level of the running logger.
#[derive(Clone)]
pub struct LogHandle {
    set: Arc<dyn Fn(LevelFilter) + Send + Sync>,
    level: Arc<std::sync::Mutex<LogLevel>>,
}

impl std::fmt::Debug for LogHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogHandle").finish_non_exhaustive()
    }
}

/// The tracing level filter of a configured level.
pub fn filter(l: LogLevel) -> LevelFilter {
    match l {
        LogLevel::Error => LevelFilter::ERROR,
        LogLevel::Warn => LevelFilter::WARN,
        LogLevel::Info => LevelFilter::INFO,
        LogLevel::Debug => LevelFilter::DEBUG,
        LogLevel::Trace => LevelFilter::TRACE,
    }
}

impl LogHandle {
    /// Sets the level.
    pub fn set_level(&self, l: LogLevel) {
        (self.set)(filter(l));
        *self.level.lock().unwrap_or_else(|e| e.into_inner()) = l;
    }

    /// The level in force.
    pub fn level(&self) -> LogLevel {
        *self.level.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether standard error is the journal's stream: systemd sets
/// `$JOURNAL_STREAM` to its `device:inode` (systemd.exec(5)), which a
/// redirection (`mwrouterd 2>file` from a unit's shell) no longer matches.
fn stderr_is_journal(var: Option<&str>) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let Some((dev, ino)) = var.and_then(parse_journal_stream) else {
        return false;
    };
    let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd)
        .metadata()
        .is_ok_and(|m| m.dev() == dev && m.ino() == ino)
}

/// `device:inode` of `$JOURNAL_STREAM`.
fn parse_journal_stream(s: &str) -> Option<(u64, u64)> {
    let (d, i) = s.trim().split_once(':')?;
    Some((d.parse().ok()?, i.parse().ok()?))
}

/// Installs the process's logger (once; later calls keep the first).
pub fn init(cfg: &LogSection) -> LogHandle {
    let (layer, handle) = reload::Layer::new(filter(cfg.level));
    let registry = tracing_subscriber::registry().with(layer);
    let journal = if stderr_is_journal(std::env::var("JOURNAL_STREAM").ok().as_deref()) {
        tracing_journald::layer().ok()
    } else {
        None
    };
    let _ = match (journal, cfg.format) {
        (Some(j), _) => registry
            .with(j.with_syslog_identifier("mwrouterd".into()))
            .try_init(),
        (None, format) => match format {
            LogFormat::Human => registry
                .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
                .try_init(),
            LogFormat::Json => registry
                .with(
                    tracing_subscriber::fmt::layer()
                        .json()
                        .with_writer(std::io::stderr),
                )
                .try_init(),
        },
    };
    LogHandle {
        set: Arc::new(move |f| {
            let _ = handle.modify(|l| *l = f);
        }),
        level: Arc::new(std::sync::Mutex::new(cfg.level)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_stream_is_device_and_inode() {
        assert_eq!(parse_journal_stream("8:12345"), Some((8, 12345)));
        assert_eq!(parse_journal_stream("8"), None);
        assert_eq!(parse_journal_stream("x:1"), None);
    }

    #[test]
    fn stderr_is_the_journal_only_when_the_stream_matches() {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        assert!(!stderr_is_journal(None));
        assert!(!stderr_is_journal(Some("0:0")));
        let fd = std::io::stderr().as_fd().try_clone_to_owned().unwrap();
        let m = std::fs::File::from(fd).metadata().unwrap();
        let me = format!("{}:{}", m.dev(), m.ino());
        assert!(stderr_is_journal(Some(&me)));
    }
}
