//! SIGHUP: what a new configuration changes, and whether it can apply while
//! running (docs/configuration.md "Reload").

use std::collections::{BTreeMap, HashMap};

use rrp::PortId;
use rrp::router::{AuthConfig, Limits, StaticNode, Timers};

use admin::PortState;

use super::{Config, LogSection, ManagementSection, RatesSection, emit, key_file};

/// The key whose value a change line never shows.
const SECRET_KEYS: [&str; 2] = ["management.mkey", "management.sm_key"];

/// The plan of a reload (docs/daemon.md "Changing the configuration
/// safely"): what applies live (each field is `Some`, or listed, only when it
/// changed), what would need a restart, and which run-time changes the new
/// configuration would drop. One value, computed by [`plan`], serves
/// `mwctl reload --dry-run`, `mwrouterd --check --against` and the reload
/// itself: a plan with `restart` entries is refused; one with `dropped`
/// entries applies only when forced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReloadPlan {
    /// New `[timers]`.
    pub timers: Option<Timers>,
    /// New `[limits]`.
    pub limits: Option<Limits>,
    /// New `[rates]` (engine error rates and the workers' punt/notice rates).
    pub rates: Option<RatesSection>,
    /// New `[log]` level and format.
    pub log: Option<LogSection>,
    /// New `[management]` (the management agent's settings), when any of its
    /// keys changed.
    pub management: Option<ManagementSection>,
    /// HRs (port index) whose static entries changed, with the new entries.
    pub statics: Vec<(PortId, Vec<StaticNode>)>,
    /// HRs (port index) whose administrative state changes, with the new
    /// state (`mwctl port`, `hr.admin_state`).
    pub ports: Vec<(PortId, PortState)>,
    /// HRs (port index) whose authentication changed (a key rollover), with
    /// the new keys.
    pub auth: Vec<(PortId, Option<AuthConfig>)>,
    /// One line per change, for the log and the admin's answer
    /// (`timers.hold_ms: 90000 -> 120000`; `management.mkey: changed (the
    /// value is not shown)`; `management.mkey_file: /etc/mwrouter/mkey
    /// holds a new key (the value is not shown)`).
    pub changes: Vec<String>,
    /// One line per key that cannot change while running (`hr[0].mtu:
    /// cannot change while running; restart mwrouterd`): the reload is
    /// refused while any is listed.
    pub restart: Vec<String>,
    /// One line per run-time change (`mwctl route add`/`del`) the new
    /// configuration would undo (`hr[0].static 0x0110: added at run time;
    /// the new configuration drops it`): the reload needs `--force`.
    pub dropped: Vec<String>,
}

impl ReloadPlan {
    /// Whether the new configuration changes nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Why the plan cannot apply (`force`: dropping run-time changes is
    /// allowed): one line per reason, empty when it can.
    pub fn refusal(&self, force: bool) -> Vec<String> {
        let mut why = self.restart.clone();
        if !force {
            why.extend(
                self.dropped
                    .iter()
                    .map(|d| format!("{d} (use --force to drop it)")),
            );
        }
        why
    }
}

/// The plan of a reload from `applied` (the configuration the box last
/// applied) to `new`, where `running` is `applied` with the run-time changes
/// (static entries added or removed by `mwctl route`, costs and MTUs set by
/// management) the box has now.
pub fn plan(applied: &Config, running: &Config, new: &Config) -> ReloadPlan {
    let mut p = match diff(applied, new) {
        Ok(p) => p,
        Err(restart) => ReloadPlan {
            restart,
            ..ReloadPlan::default()
        },
    };
    p.dropped = dropped(applied, running, new);
    if p.restart.is_empty() {
        // The static entries go from what runs (run-time changes included)
        // to the file's: a forced reload undoes what it said it drops.
        p.statics.clear();
        p.changes
            .retain(|c| !(hr_index(c).is_some() && c.contains("].static: ")));
        for (i, (r, n)) in running.hrs.iter().zip(&new.hrs).enumerate() {
            if r.statics != n.statics {
                p.changes.push(statics_change(i, &r.statics, &n.statics));
                p.statics.push((PortId::new(i), n.statics.clone()));
            }
        }
        // The same for the ports' administrative state.
        p.ports.clear();
        p.changes
            .retain(|c| !(hr_index(c).is_some() && c.contains("].admin_state: ")));
        for (i, (r, n)) in running.hrs.iter().zip(&new.hrs).enumerate() {
            if r.admin_state != n.admin_state {
                p.changes.push(format!(
                    "hr[{i}].admin_state: {} -> {}",
                    r.admin_state.as_str(),
                    n.admin_state.as_str()
                ));
                p.ports.push((PortId::new(i), n.admin_state));
            }
        }
    }
    p
}

/// The run-time changes of static entries and of ports' administrative
/// state (`running` against `applied`) that `new` undoes. Costs and MTUs
/// changed at run time are not undone by a reload (they cannot change by
/// one), so they are not listed.
fn dropped(applied: &Config, running: &Config, new: &Config) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (a, r)) in applied.hrs.iter().zip(&running.hrs).enumerate() {
        let Some(n) = new.hrs.get(i) else { continue };
        if a.admin_state != r.admin_state && n.admin_state != r.admin_state {
            out.push(format!(
                "hr[{i}].admin_state: {} at run time; the new configuration makes it {}",
                r.admin_state.as_str(),
                n.admin_state.as_str()
            ));
        }
        let find =
            |v: &[StaticNode], s: &StaticNode| v.iter().find(|x| x.address == s.address).cloned();
        for s in &r.statics {
            if find(&a.statics, s).as_ref() == Some(s) {
                continue; // not a run-time change
            }
            if find(&n.statics, s).as_ref() != Some(s) {
                out.push(format!(
                    "hr[{i}].static {}: added at run time; the new configuration drops it",
                    s.address
                ));
            }
        }
        for s in &a.statics {
            if find(&r.statics, s).is_none() && find(&n.statics, s).is_some() {
                out.push(format!(
                    "hr[{i}].static {}: removed at run time; the new configuration adds it back",
                    s.address
                ));
            }
        }
    }
    out
}

/// The run-time changes: what `running` has that `applied` has not, one
/// line each (`hr[0].static 0x0110: added`, `hr[1].cost: 1 -> 5`).
pub fn runtime_changes(applied: &Config, running: &Config) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (a, r)) in applied.hrs.iter().zip(&running.hrs).enumerate() {
        for s in &r.statics {
            match a.statics.iter().find(|x| x.address == s.address) {
                None => out.push(format!("hr[{i}].static {}: added", s.address)),
                Some(x) if x != s => out.push(format!("hr[{i}].static {}: changed", s.address)),
                Some(_) => {}
            }
        }
        for s in &a.statics {
            if !r.statics.iter().any(|x| x.address == s.address) {
                out.push(format!("hr[{i}].static {}: removed", s.address));
            }
        }
        if a.cost != r.cost {
            out.push(format!("hr[{i}].cost: {} -> {}", a.cost, r.cost));
        }
        if a.mtu != r.mtu {
            out.push(format!("hr[{i}].mtu: {} -> {}", a.mtu, r.mtu));
        }
        if a.admin_state != r.admin_state {
            out.push(format!(
                "hr[{i}].admin_state: {} -> {}",
                a.admin_state.as_str(),
                r.admin_state.as_str()
            ));
        }
    }
    out
}

/// The HR index a key path starts with (`hr[3].…` → 3).
fn hr_index(key: &str) -> Option<usize> {
    key.strip_prefix("hr[")?.split_once(']')?.0.parse().ok()
}

fn is_static_key(key: &str) -> bool {
    hr_index(key).is_some() && key.contains("].static[")
}

fn is_auth_key(key: &str) -> bool {
    hr_index(key).is_some() && key.contains("].auth.")
}

fn is_live(key: &str) -> bool {
    ["timers.", "limits.", "rates.", "log.", "management."]
        .iter()
        .any(|p| key.starts_with(p))
        || is_static_key(key)
        || is_auth_key(key)
        || (hr_index(key).is_some() && key.ends_with("].admin_state"))
        // Read when a drain begins; the start hold's keys act at a start.
        || (key.starts_with("drain.") && !key.starts_with("drain.start_"))
}

pub(super) fn diff(old: &Config, new: &Config) -> Result<ReloadPlan, Vec<String>> {
    let mut refused = Vec::new();
    let mut plan = ReloadPlan::default();
    let shared = old.hrs.len().min(new.hrs.len());
    if old.hrs.len() != new.hrs.len() {
        refused.push(format!(
            "hr: the set of HRs cannot change while running ({} -> {} HRs); restart mwrouterd",
            old.hrs.len(),
            new.hrs.len()
        ));
    }

    let of = emit::flat(old);
    let nf = emit::flat(new);
    let old_map: HashMap<&str, &str> = of.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let new_map: HashMap<&str, &str> = nf.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    // Keys in file order: the old file's, then those only the new one has.
    let keys = of.iter().map(|(k, _)| k.as_str()).chain(
        nf.iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| !old_map.contains_key(k)),
    );
    for key in keys {
        if hr_index(key).is_some_and(|i| i >= shared) {
            continue; // covered by the message about the HR set
        }
        let (ov, nv) = (old_map.get(key), new_map.get(key));
        if ov == nv {
            continue;
        }
        if !is_live(key) {
            refused.push(format!(
                "{key}: cannot change while running; restart mwrouterd"
            ));
        } else if is_auth_key(key) && key.ends_with(".keys") {
            let i = hr_index(key).unwrap_or(0);
            let ids = |c: &Config| -> String {
                match &c.hrs[i].auth {
                    Some(a) => a
                        .keys
                        .iter()
                        .map(|k| k.id.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    None => "none".into(),
                }
            };
            plan.changes.push(format!(
                "{key}: IDs {} -> {} (the secrets are not shown)",
                ids(old),
                ids(new)
            ));
        } else if SECRET_KEYS.contains(&key) {
            plan.changes
                .push(format!("{key}: changed (the value is not shown)"));
        } else if !is_static_key(key) {
            plan.changes.push(format!(
                "{key}: {} -> {}",
                ov.unwrap_or(&"(unset)"),
                nv.unwrap_or(&"(unset)")
            ));
        }
    }
    // A key file that holds a new key: the emitted texts are the same.
    let before = key_file::file_secrets(old);
    for s in key_file::file_secrets(new) {
        if before
            .iter()
            .any(|b| b.which == s.which && b.file == s.file && b.secret != s.secret)
        {
            plan.changes.push(format!(
                "{}: {} holds a new key (the value is not shown)",
                s.key,
                s.file.display()
            ));
        }
    }
    if !refused.is_empty() {
        return Err(refused);
    }

    if old.timers != new.timers {
        plan.timers = Some(new.timers);
    }
    if old.limits != new.limits {
        plan.limits = Some(new.limits);
    }
    if old.rates != new.rates {
        plan.rates = Some(new.rates);
    }
    if old.log != new.log {
        plan.log = Some(new.log);
    }
    if old.management != new.management {
        plan.management = Some(new.management.clone());
    }
    for (i, (o, n)) in old.hrs.iter().zip(&new.hrs).enumerate() {
        if o.statics != n.statics {
            plan.changes.push(statics_change(i, &o.statics, &n.statics));
            plan.statics.push((PortId::new(i), n.statics.clone()));
        }
        if o.auth != n.auth {
            plan.auth.push((PortId::new(i), n.auth.clone()));
        }
        if o.admin_state != n.admin_state {
            plan.ports.push((PortId::new(i), n.admin_state));
        }
    }
    Ok(plan)
}

/// `hr[0].static: added 0x0110; removed 0x0111; changed 0x0112`.
fn statics_change(i: usize, old: &[StaticNode], new: &[StaticNode]) -> String {
    let o: BTreeMap<_, _> = old.iter().map(|s| (s.address, s)).collect();
    let n: BTreeMap<_, _> = new.iter().map(|s| (s.address, s)).collect();
    let join = |v: Vec<String>| v.join(", ");
    let added: Vec<String> = n
        .keys()
        .filter(|a| !o.contains_key(a))
        .map(|a| a.to_string())
        .collect();
    let removed: Vec<String> = o
        .keys()
        .filter(|a| !n.contains_key(a))
        .map(|a| a.to_string())
        .collect();
    let changed: Vec<String> = n
        .iter()
        .filter(|(a, s)| o.get(a).is_some_and(|x| x != *s))
        .map(|(a, _)| a.to_string())
        .collect();
    let mut parts = Vec::new();
    if !added.is_empty() {
        parts.push(format!("added {}", join(added)));
    }
    if !removed.is_empty() {
        parts.push(format!("removed {}", join(removed)));
    }
    if !changed.is_empty() {
        parts.push(format!("changed {}", join(changed)));
    }
    if parts.is_empty() {
        parts.push("reordered".to_string());
    }
    format!("hr[{i}].static: {}", parts.join("; "))
}
