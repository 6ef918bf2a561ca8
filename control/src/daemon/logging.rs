//! Logs through `tracing`: human lines or JSON lines on stderr, the level
//! changeable at run time (`mwctl log level`, reload).

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

/// Installs the process's logger (once; later calls keep the first).
pub fn init(cfg: &LogSection) -> LogHandle {
    let (layer, handle) = reload::Layer::new(filter(cfg.level));
    let registry = tracing_subscriber::registry().with(layer);
    let _ = match cfg.format {
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
    };
    LogHandle {
        set: Arc::new(move |f| {
            let _ = handle.modify(|l| *l = f);
        }),
        level: Arc::new(std::sync::Mutex::new(cfg.level)),
    }
}
