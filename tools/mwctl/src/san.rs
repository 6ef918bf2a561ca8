//! `mwctl san`: the SAN managers this box runs and what their sweeps found
//! (docs/manager.md), from `show management`.

use std::fmt::Write as _;

use admin::view::{ManagementInfo, ManagerRow};
use clap::Subcommand;
use serde_json::Value;

use crate::table::Table;

/// What `mwctl san` shows.
#[derive(Debug, Clone, Subcommand)]
pub enum SanCmd {
    /// Each managed SAN: its HR, the manager's state, the master, members.
    Show,
    /// The SAN's members, from the database of this box's master managers.
    Members,
    /// The managers: state, priority, master, ActCount, the managers heard of.
    Managers,
}

/// The JSON (`--json`) and the text of `mwctl san`.
pub fn render(cmd: &SanCmd, m: &ManagementInfo) -> (Value, String) {
    let mut out = String::new();
    if m.managers.is_empty() {
        out.push_str("no SAN manager runs on this box ([management] manager_priority)\n");
        return (Value::Array(Vec::new()), out);
    }
    match cmd {
        SanCmd::Show => {
            let mut t = Table::new(&[
                "port",
                "hr",
                "state",
                "master",
                "members",
                "act_count",
                "subscriptions",
            ]);
            for r in &m.managers {
                let master = match (r.state.as_str(), r.master) {
                    ("master", _) => format!("{} (this box)", r.hr),
                    (_, Some(a)) => a.to_string(),
                    _ => "-".into(),
                };
                t.row(vec![
                    r.port.to_string(),
                    r.hr.to_string(),
                    r.state.clone(),
                    master,
                    if r.state == "master" {
                        r.members.len().to_string()
                    } else {
                        "-".into()
                    },
                    r.act_count.to_string(),
                    r.subscriptions.len().to_string(),
                ]);
            }
            out.push_str(&t.render());
            for r in &m.managers {
                for x in &r.subscriptions {
                    let _ = writeln!(
                        out,
                        "SAN of {}: {} subscribed to {} ({} s left)",
                        r.hr,
                        x.subscriber,
                        x.trap.map_or("every trap".into(), |t| format!("trap {t}")),
                        x.lease_left_s
                    );
                }
            }
            (serde_json::to_value(&m.managers).unwrap_or_default(), out)
        }
        SanCmd::Members => {
            let mut rows = Vec::new();
            for r in &m.managers {
                if r.state != "master" {
                    let _ = writeln!(
                        out,
                        "SAN of {}: {} here; the master ({}) holds the members",
                        r.hr,
                        r.state,
                        r.master.map_or("not known yet".into(), |a| a.to_string())
                    );
                    continue;
                }
                let mut t = Table::new(&[
                    "address", "name", "type", "identity", "level", "ports", "manager",
                ]);
                for d in &r.members {
                    t.row(vec![
                        d.address.to_string(),
                        d.name.clone(),
                        d.node_type.clone(),
                        d.identity.clone(),
                        d.level.to_string(),
                        d.num_ports.to_string(),
                        d.manager.clone().unwrap_or_else(|| "-".into()),
                    ]);
                }
                let _ = writeln!(out, "SAN of {}: {} members", r.hr, r.members.len());
                out.push_str(&t.render());
                rows.push(serde_json::json!({"hr": r.hr, "members": r.members}));
            }
            (Value::Array(rows), out)
        }
        SanCmd::Managers => {
            out.push_str(&managers_table(&m.managers));
            (serde_json::to_value(&m.managers).unwrap_or_default(), out)
        }
    }
}

/// The managers as a table: port, HR, state, priority, master, ActCount,
/// the managers heard of (also in `show management`).
pub fn managers_table(rows: &[ManagerRow]) -> String {
    let mut t = Table::new(&[
        "port",
        "hr",
        "state",
        "priority",
        "master",
        "act_count",
        "peers",
    ]);
    for r in rows {
        let peers: Vec<String> = r
            .peers
            .iter()
            .map(|(a, s, p)| format!("{a} {s} {p}"))
            .collect();
        t.row(vec![
            r.port.to_string(),
            r.hr.to_string(),
            r.state.clone(),
            r.priority.to_string(),
            r.master.map_or("-".into(), |a| a.to_string()),
            r.act_count.to_string(),
            if peers.is_empty() {
                "-".into()
            } else {
                peers.join(", ")
            },
        ]);
    }
    t.render()
}
