//! Changing the running configuration (docs/daemon.md "Changing the
//! configuration safely"): a reload's plan ([`crate::config::reload_plan`]),
//! applying it, a reload that is undone unless confirmed in time, the last
//! `admin.config_history` applied configurations and `rollback` to one, and
//! `write` of the running configuration with its run-time changes. Every
//! change is logged with who asked (the admin peer's uid and pid).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use admin::proto::{
    AdminError, HistoryEntry, MAX_CONFIRM_S, ReloadAnswer, ReloadRequest, Requester, WriteAnswer,
};
use rrp::Address;

use crate::config::{Config, ReloadPlan, reload_plan, runtime_changes};
use crate::daemon::history::{self, History, Pending};
use crate::daemon::logging::LogHandle;
use crate::plane::PlaneHandle;

/// How long a change may wait for the control thread.
const CALL: Duration = Duration::from_secs(2);

/// The configuration side of the daemon: shared by the admin backend, the
/// SIGHUP handler and the timer that undoes an unconfirmed reload.
#[derive(Clone)]
pub(crate) struct Changer {
    /// The configuration last applied (without run-time changes).
    pub cfg: Arc<Mutex<Config>>,
    path: PathBuf,
    plane: Arc<PlaneHandle>,
    log: LogHandle,
    history: Arc<Mutex<History>>,
    /// `admin.history_file` (a restart changes it).
    history_file: Option<PathBuf>,
}

fn now_unix_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Changer {
    /// The changer of a daemon started with `cfg` read from `path`.
    /// With `admin.history_file`, the history goes on from the file (one
    /// that cannot be read is logged and set aside as `FILE.bad`).
    pub fn new(cfg: Config, path: PathBuf, plane: Arc<PlaneHandle>, log: LogHandle) -> Changer {
        let limit = cfg.admin.config_history;
        let mut h = match &cfg.admin.history_file {
            None => History::new(limit),
            Some(f) => match history::load(f) {
                Ok(kept) => History::resumed(limit, kept),
                Err(e) => {
                    let mut bad = f.as_os_str().to_owned();
                    bad.push(".bad");
                    let moved = std::fs::rename(f, &bad).is_ok();
                    tracing::warn!(
                        file = %f.display(),
                        set_aside = moved,
                        "configuration history not taken, a new one begins: {e}"
                    );
                    History::new(limit)
                }
            },
        };
        let generation = h.next_generation;
        h.next_generation += 1;
        h.push(
            cfg.clone(),
            HistoryEntry {
                generation,
                back: 0,
                applied_unix_s: now_unix_s(),
                how: "start".into(),
                by: Requester::default(),
                changes: Vec::new(),
                pending: false,
            },
        );
        let me = Changer {
            history_file: cfg.admin.history_file.clone(),
            cfg: Arc::new(Mutex::new(cfg)),
            path,
            plane,
            log,
            history: Arc::new(Mutex::new(h)),
        };
        me.save(&lock(&me.history));
        me
    }

    /// Writes the history to `admin.history_file`, if set; a failure is
    /// logged (the history stays in memory).
    fn save(&self, h: &History) {
        let Some(f) = &self.history_file else {
            return;
        };
        if let Err(e) = h.save(f) {
            tracing::warn!(file = %f.display(), "configuration history not saved: {e}");
        }
    }

    /// The running configuration: `applied` with the engine's static
    /// entries, costs and MTUs (what `mwctl route`, management and the
    /// like changed since).
    fn running(&self, applied: &Config) -> Result<Config, AdminError> {
        let hrs = self
            .plane
            .call(CALL, |cp| {
                cp.engine()
                    .config()
                    .hrs
                    .iter()
                    .enumerate()
                    .map(|(p, h)| {
                        let up = cp.engine().port_is_up(rrp::PortId::new(p));
                        (h.static_nodes.clone(), h.cost, h.mtu, up)
                    })
                    .collect::<Vec<_>>()
            })
            .map_err(|e| AdminError::failed(e.to_string()))?;
        let mut running = applied.clone();
        for (h, (statics, cost, mtu, up)) in running.hrs.iter_mut().zip(hrs) {
            // Kept in the file's order; entries added at run time after.
            let mut s: Vec<_> = h
                .statics
                .iter()
                .filter_map(|a| statics.iter().find(|n| n.address == a.address).cloned())
                .collect();
            s.extend(
                statics
                    .into_iter()
                    .filter(|n| !h.statics.iter().any(|a| a.address == n.address)),
            );
            h.statics = s;
            h.cost = cost;
            h.mtu = mtu;
            h.admin_state = admin::PortState::of(up);
        }
        Ok(running)
    }

    /// The running configuration as TOML (`show config`).
    pub fn running_toml(&self, secrets: bool) -> String {
        let applied = lock(&self.cfg).clone();
        let running = self.running(&applied).unwrap_or(applied);
        if secrets {
            running.to_toml()
        } else {
            running.to_toml_redacted()
        }
    }

    fn read_file(&self) -> Result<Config, AdminError> {
        let text = std::fs::read_to_string(&self.path)
            .map_err(|e| AdminError::failed(format!("{}: {e}", self.path.display())))?;
        Config::check_toml(&text).map_err(|errs| {
            AdminError::failed(
                errs.iter()
                    .map(|e| format!("{}: {e}", self.path.display()))
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })
    }

    /// `reload`: the configuration file's plan, applied unless a dry run.
    pub fn reload(&self, req: &ReloadRequest, by: Requester) -> Result<ReloadAnswer, AdminError> {
        if let Some(s) = req.confirm_s
            && !(1..=MAX_CONFIRM_S).contains(&s)
        {
            return Err(AdminError::bad_request(format!(
                "confirm_s {s} is out of range (1-{MAX_CONFIRM_S})"
            )));
        }
        let new = self.read_file()?;
        let how = if req.confirm_s.is_some() {
            "reload (to confirm)"
        } else {
            "reload"
        };
        self.change(new, req, how, by)
    }

    /// `rollback N`: the `n`th previous kept configuration, through the
    /// same path as a reload.
    pub fn rollback(&self, n: u32, force: bool, by: Requester) -> Result<ReloadAnswer, AdminError> {
        let (cfg, generation) = {
            let h = lock(&self.history);
            let len = h.kept.len();
            let k = h.kept.get(n as usize).filter(|_| n > 0).ok_or_else(|| {
                AdminError::bad_request(format!(
                    "no configuration {n} back (1-{} are kept)",
                    len.saturating_sub(1)
                ))
            })?;
            (k.cfg.clone(), k.entry.generation)
        };
        let req = ReloadRequest {
            force,
            ..ReloadRequest::default()
        };
        self.change(
            cfg,
            &req,
            &format!("rollback to generation {generation}"),
            by,
        )
    }

    /// `commit`: confirms the reload that waits for it.
    pub fn commit(&self, by: Requester) -> Result<ReloadAnswer, AdminError> {
        let mut h = lock(&self.history);
        let Some(p) = h.pending.take() else {
            return Err(AdminError::failed("no reload waits for a commit"));
        };
        let front = h.kept.front_mut().expect("the running entry");
        front.entry.pending = false;
        front.entry.how = "reload (confirmed)".into();
        self.save(&h);
        tracing::info!(by = %by, generation = p.generation, "configuration committed");
        Ok(ReloadAnswer {
            applied: true,
            generation: p.generation,
            ..ReloadAnswer::default()
        })
    }

    /// The kept configurations, newest first.
    pub fn history(&self) -> Vec<HistoryEntry> {
        let h = lock(&self.history);
        h.kept
            .iter()
            .enumerate()
            .map(|(i, k)| HistoryEntry {
                back: i as u32,
                ..k.entry.clone()
            })
            .collect()
    }

    /// The plan from the running configuration to `new`, applied unless
    /// `req.dry_run` (refused while it needs a restart, or drops run-time
    /// changes and is not forced, or another reload waits for a commit).
    fn change(
        &self,
        new: Config,
        req: &ReloadRequest,
        how: &str,
        by: Requester,
    ) -> Result<ReloadAnswer, AdminError> {
        let mut cfg = lock(&self.cfg);
        let running = self.running(&cfg)?;
        let plan = reload_plan(&cfg, &running, &new);
        let generation = lock(&self.history).next_generation;
        // Read at every reload, even one that changes nothing else (the
        // file's content may have changed), and for a dry run; its
        // refusal refuses nothing else (docs/partitions.md).
        let parts = crate::partitions::read(new.management.partitions_file.as_deref());
        let warnings = match (&parts.path, &parts.result) {
            (Some(f), Err(errs)) => std::iter::once(format!(
                "management.partitions_file: {} refused ({} errors); the partitions in force stay",
                f.display(),
                errs.len()
            ))
            .chain(errs.iter().map(|e| format!("  {e}")))
            .collect(),
            _ => Vec::new(),
        };
        let mut answer = ReloadAnswer {
            applied: false,
            changes: plan.changes.clone(),
            restart: plan.restart.clone(),
            dropped: plan.dropped.clone(),
            generation: generation - 1,
            confirm_within_s: None,
            warnings,
        };
        if req.dry_run {
            return Ok(answer);
        }
        let rollback = how.starts_with("rollback");
        if !rollback && let Some(p) = &lock(&self.history).pending {
            return Err(AdminError::failed(format!(
                "generation {} waits for `mwctl commit` ({} s left); commit or roll back first",
                p.generation,
                p.deadline
                    .saturating_duration_since(Instant::now())
                    .as_secs()
            )));
        }
        let why = plan.refusal(req.force);
        if !why.is_empty() {
            tracing::warn!(by = %by, "{how} refused: {}", why.join("; "));
            return Err(AdminError::failed(why.join("; ")));
        }
        self.apply(&plan, &new, parts)?;
        *cfg = new.clone();
        drop(cfg);
        answer.applied = true;
        answer.generation = generation;
        let mut h = lock(&self.history);
        h.next_generation += 1;
        let pending = req.confirm_s.map(|s| Pending {
            generation,
            deadline: Instant::now() + Duration::from_secs(s),
        });
        answer.confirm_within_s = req.confirm_s;
        h.pending = None;
        for k in &mut h.kept {
            k.entry.pending = false;
        }
        h.push(
            new,
            HistoryEntry {
                generation,
                back: 0,
                applied_unix_s: now_unix_s(),
                how: how.into(),
                by,
                changes: plan.changes.clone(),
                pending: pending.is_some(),
            },
        );
        if let Some(p) = pending {
            h.pending = Some(p);
            self.undo_unless_confirmed(generation, Duration::from_secs(req.confirm_s.unwrap_or(0)));
        }
        self.save(&h);
        drop(h);
        tracing::info!(
            by = %by,
            generation,
            confirm_s = req.confirm_s,
            changes = ?plan.changes,
            dropped = ?plan.dropped,
            "configuration reloaded ({how})"
        );
        Ok(answer)
    }

    /// Starts the timer that returns to the previous configuration when
    /// `generation` is not committed within `after`.
    fn undo_unless_confirmed(&self, generation: u64, after: Duration) {
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("mwconfirm".into())
            .spawn(move || {
                std::thread::sleep(after);
                let previous = {
                    let mut h = lock(&me.history);
                    if h.pending.as_ref().map(|p| p.generation) != Some(generation) {
                        return; // committed, rolled back or replaced
                    }
                    h.pending = None;
                    if let Some(k) = h.kept.front_mut() {
                        k.entry.how = "reload (not confirmed in time)".into();
                    }
                    h.kept.get(1).map(|k| k.cfg.clone())
                };
                let Some(previous) = previous else { return };
                let req = ReloadRequest {
                    force: true,
                    ..ReloadRequest::default()
                };
                match me.change(
                    previous,
                    &req,
                    "reverted (not confirmed in time)",
                    Requester::default(),
                ) {
                    Ok(a) => tracing::warn!(
                        generation,
                        now = a.generation,
                        "configuration not committed in time: returned to the previous one"
                    ),
                    Err(e) => tracing::error!(
                        generation,
                        "configuration not committed in time, and the previous one could not return: {}",
                        e.message
                    ),
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the confirmation timer: {e}");
        }
    }

    /// Carries `plan` (to `new`) out on the control thread.
    fn apply(
        &self,
        plan: &ReloadPlan,
        new: &Config,
        parts: crate::partitions::Reading,
    ) -> Result<(), AdminError> {
        let timers = plan.timers.unwrap_or(new.timers);
        let limits = plan.limits.unwrap_or(new.limits);
        let rates = new.rates.error_rates();
        let chan = new.rates.channel_config();
        let statics = plan.statics.clone();
        let static_partitions = new.management.static_partitions.clone();
        let auth = plan.auth.clone();
        let ports = plan.ports.clone();
        let agent = plan.management.is_some().then(|| {
            (
                crate::management::agent_config(new),
                crate::management::manager_configs(new),
                new.management.perf_manager,
            )
        });
        let refused = self
            .plane
            .call(CALL, move |cp| -> Result<Vec<String>, String> {
                if let Some((a, managers, perf)) = agent {
                    if let Some(m) = cp.management_mut() {
                        m.agent_mut().reconfigure(a);
                    }
                    cp.set_managers(managers);
                    cp.set_perf_manager(perf);
                }
                cp.engine_mut()
                    .set_tunables(timers, limits, rates)
                    .map_err(|e| e.to_string())?;
                cp.set_rates(chan.punt_budgets, chan.notice_rate);
                for (port, a) in auth {
                    cp.engine_mut()
                        .set_auth(port, a)
                        .map_err(|e| e.to_string())?;
                }
                let now = cp.now();
                for (port, state) in ports {
                    match state {
                        admin::PortState::Up => cp.engine_mut().port_up(now, port),
                        admin::PortState::Down => cp.engine_mut().port_down(now, port),
                    }
                }
                let mut refused = Vec::new();
                for (port, nodes) in statics {
                    let old: Vec<Address> = cp
                        .engine()
                        .config()
                        .hrs
                        .get(port)
                        .map(|h| h.static_nodes.iter().map(|n| n.address).collect())
                        .unwrap_or_default();
                    for a in old {
                        if !nodes.iter().any(|n| n.address == a) {
                            cp.engine_mut().remove_static(port, a);
                        }
                    }
                    for n in nodes {
                        // The file was checked against the same bounds;
                        // what is left is an LRT that learned nodes filled.
                        let a = n.address;
                        if let Err(why) = cp.engine_mut().add_static(port, n) {
                            refused
                                .push(format!("static entry {a} on port {port} not added: {why}"));
                        }
                    }
                }
                if let Some(m) = cp.management_mut() {
                    m.set_static_partitions(static_partitions);
                    m.take_partitions(parts);
                }
                Ok(refused)
            })
            .map_err(|e| AdminError::failed(e.to_string()))?
            .map_err(AdminError::failed)?;
        for r in &refused {
            tracing::warn!("{r}");
        }
        if let Some(l) = plan.log {
            self.log.set_level(l.level);
        }
        Ok(())
    }

    /// `write [FILE]`: the running configuration, run-time changes
    /// included, through the emitter to the configuration file (or `file`):
    /// written to a temporary file beside it and renamed over it, the
    /// previous file kept as `FILE.bak`; refused when the file cannot be
    /// written. Written to the daemon's own file, it becomes the applied
    /// configuration (a reload from it drops nothing).
    pub fn write(&self, file: Option<&str>, by: Requester) -> Result<WriteAnswer, AdminError> {
        let target = file.map_or_else(|| self.path.clone(), PathBuf::from);
        if file.is_some() && !beside(&target, &self.path) {
            // The daemon may run with more rights than an admin peer: it
            // writes only where its configuration is.
            return Err(AdminError::bad_request(format!(
                "{}: the daemon writes configurations only in the directory of {}",
                target.display(),
                self.path.display()
            )));
        }
        let mut cfg = lock(&self.cfg);
        let running = self.running(&cfg)?;
        let runtime = runtime_changes(&cfg, &running);
        let backup = write_atomically(&target, &running.to_toml())
            .map_err(|e| AdminError::failed(format!("{}: {e}", target.display())))?;
        let own = target == self.path;
        if own {
            *cfg = running.clone();
            let mut h = lock(&self.history);
            if let Some(k) = h.kept.front_mut() {
                k.cfg = running;
            }
            self.save(&h);
        }
        tracing::info!(by = %by, file = %target.display(), runtime = ?runtime, "running configuration written");
        Ok(WriteAnswer {
            file: target.display().to_string(),
            backup: backup.map(|b| b.display().to_string()),
            runtime,
        })
    }
}

/// Whether `file` is in the directory of `config` (both as the file system
/// resolves them).
fn beside(file: &Path, config: &Path) -> bool {
    let dir = |p: &Path| -> Option<PathBuf> {
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::canonicalize(parent).ok()
    };
    file.file_name().is_some() && dir(file).is_some() && dir(file) == dir(config)
}

/// Writes `text` to `path` through a temporary file in the same directory
/// and a rename, keeping the previous file as `path.bak` (returned) with
/// its permissions; refused when `path` exists and cannot be opened for
/// writing.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<Option<PathBuf>> {
    use std::os::unix::fs::PermissionsExt;
    let old = std::fs::metadata(path).ok();
    if old.is_some() {
        std::fs::OpenOptions::new().append(true).open(path)?;
    }
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        let mode = old
            .as_ref()
            .map_or(0o600, |m| m.permissions().mode() & 0o777);
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let mut backup = None;
    if old.is_some() {
        let mut b = path.as_os_str().to_owned();
        b.push(".bak");
        let b = PathBuf::from(b);
        if let Err(e) = std::fs::copy(path, &b) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        backup = Some(b);
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(backup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_the_old_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("r.toml");
        assert_eq!(write_atomically(&f, "a = 1\n").unwrap(), None);
        let bak = write_atomically(&f, "a = 2\n").unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "a = 2\n");
        assert_eq!(std::fs::read_to_string(bak).unwrap(), "a = 1\n");
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        assert!(write_atomically(&dir.path().join("no/such/dir.toml"), "").is_err());
        assert!(beside(&dir.path().join("other.toml"), &f));
        assert!(!beside(Path::new("/etc/passwd"), &f));
    }
}
