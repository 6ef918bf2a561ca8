//! `mwrouterd --check --config NEW --against RUNNING`: the plan of a reload
//! from the running configuration to NEW, applying nothing (docs/daemon.md
//! "Changing the configuration safely"). RUNNING is the running daemon's
//! admin socket (its `show config`, the secrets included for an admin
//! peer) or a configuration file.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::Duration;

use admin::proto::{Command, Show};

use super::DaemonError;
use crate::config::{Config, reload_plan};

/// The running configuration at `running` (a socket or a file).
fn running(running: &Path) -> Result<Config, DaemonError> {
    let what = running.display();
    let is_socket = std::fs::metadata(running)
        .map(|m| m.file_type().is_socket())
        .unwrap_or(false);
    let text = if is_socket {
        let mut c = admin::Client::connect(running, Some(Duration::from_secs(10)))
            .map_err(|e| DaemonError::Run(format!("--against {what}: {e}")))?;
        let v = c
            .request(Command::Show(Show::Config {}))
            .map_err(|e| DaemonError::Run(format!("--against {what}: {e}")))?;
        v["toml"].as_str().unwrap_or_default().to_string()
    } else {
        std::fs::read_to_string(running)
            .map_err(|e| DaemonError::Run(format!("--against {what}: {e}")))?
    };
    Config::check_toml(&text).map_err(|errs| {
        DaemonError::Run(format!(
            "--against {what}: {}",
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        ))
    })
}

/// The plan as text (what `mwctl reload --dry-run` shows), or the reasons
/// a reload would be refused (exit code 1).
pub(crate) fn check_against(new: &Config, against: &Path) -> Result<String, DaemonError> {
    let run = running(against)?;
    let plan = reload_plan(&run, &run, new);
    let mut s = String::from("plan (nothing applied):\n");
    if plan.changes.is_empty() {
        s.push_str("changes live: none\n");
    } else {
        s.push_str("changes live:\n");
        for c in &plan.changes {
            s.push_str(&format!("  {c}\n"));
        }
    }
    if !plan.restart.is_empty() {
        s.push_str("needs a restart (refused):\n");
        for c in &plan.restart {
            s.push_str(&format!("  {c}\n"));
        }
        return Err(DaemonError::Run(s));
    }
    Ok(s)
}
