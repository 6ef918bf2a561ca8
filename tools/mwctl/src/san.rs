//! `mwctl san`: the SAN managers this box runs and what their sweeps found
//! (docs/manager.md), from `show management`.

use std::fmt::Write as _;

use admin::view::{ManagementInfo, ManagerRow, PartitionsInfo};
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
    /// The partitions in force (key, name, members), where they come from,
    /// and the last refusal of the partitions file (docs/partitions.md).
    Partitions,
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
        SanCmd::Partitions => match &m.partitions {
            Some(p) => (
                serde_json::to_value(p).unwrap_or_default(),
                partitions_text(p),
            ),
            None => (
                Value::Null,
                "this daemon does not report partitions\n".to_string(),
            ),
        },
    }
}

/// `mwctl san partitions`: the partitions in force, where they come from,
/// and the last refusal of the file.
pub fn partitions_text(p: &PartitionsInfo) -> String {
    let mut out = String::new();
    let mut t = Table::new(&["key", "name", "members"]);
    for r in &p.partitions {
        t.row(vec![
            r.key.clone(),
            r.name.clone(),
            if r.members.is_empty() {
                "-".into()
            } else {
                r.members.join(", ")
            },
        ]);
    }
    out.push_str(&t.render());
    match (&p.loaded_from, &p.file) {
        (Some(f), _) => {
            let _ = writeln!(
                out,
                "from the partitions file {f}, read at {}",
                p.loaded_unix_s
                    .map_or("an unknown time".into(), crate::discover_html::utc_text)
            );
        }
        (None, Some(f)) => {
            let _ = writeln!(
                out,
                "the default (every node a full member of the default partition): the partitions file {f} has not been taken"
            );
        }
        (None, None) => out.push_str(
            "the default (every node a full member of the default partition): no partitions file ([management] partitions_file)\n",
        ),
    }
    for c in &p.copies {
        let _ = writeln!(
            out,
            "the SAN manager on port {} gives the partitions copied from the master {} at {} (version {}), {}",
            c.port,
            c.master,
            crate::discover_html::utc_text(c.at_unix_s),
            c.version,
            if c.same_as_own {
                "the same as the ones above"
            } else {
                "not the ones above (the copy stays until this box's partitions file is read again while its manager is master):"
            }
        );
        if !c.same_as_own {
            let mut t = Table::new(&["key", "name", "members"]);
            for r in &c.partitions {
                t.row(vec![
                    r.key.clone(),
                    r.name.clone(),
                    if r.members.is_empty() {
                        "-".into()
                    } else {
                        r.members.join(", ")
                    },
                ]);
            }
            for line in t.render().lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    if let Some(r) = &p.refused {
        let _ = writeln!(
            out,
            "partitions file {} refused at {}: {} error{}; the partitions in force did not change:",
            r.file,
            crate::discover_html::utc_text(r.at_unix_s),
            r.count,
            if r.count == 1 { "" } else { "s" }
        );
        for e in &r.errors {
            let _ = writeln!(out, "  {e}");
        }
        if r.count > r.errors.len() {
            let _ = writeln!(out, "  and {} more", r.count - r.errors.len());
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use admin::view::{PartitionRow, PartitionsCopyInfo, PartitionsRefusal};

    fn info(partitions: Option<PartitionsInfo>, managers: bool) -> ManagementInfo {
        ManagementInfo {
            identity: "0x0000000000000001".into(),
            description: "r".into(),
            manager: None,
            mkey_set: false,
            protect: 0,
            lease_s: 0,
            lease_left_ms: None,
            violations: 0,
            agent: Default::default(),
            client: Default::default(),
            notices: Vec::new(),
            addresses: vec![rrp::Address(0x0115)],
            managers: if managers {
                vec![ManagerRow {
                    port: rrp::PortId(0),
                    hr: rrp::Address(0x0115),
                    state: "master".into(),
                    priority: 7,
                    master: None,
                    act_count: 1,
                    peers: Vec::new(),
                    counters: Default::default(),
                    members: Vec::new(),
                    assigned: Vec::new(),
                    subscriptions: Vec::new(),
                }]
            } else {
                Vec::new()
            },
            subscribers: Vec::new(),
            partitions,
            port_partitions: Vec::new(),
        }
    }

    fn rows() -> Vec<PartitionRow> {
        vec![
            PartitionRow {
                key: "0x7fff".into(),
                name: "Default".into(),
                members: vec!["ALL_ROUTERS=full".into(), "SELF=full".into()],
            },
            PartitionRow {
                key: "0x0010".into(),
                name: "tenant_a".into(),
                members: vec![
                    "0x0000000000000104=full".into(),
                    "0x0000000000000105=limited".into(),
                ],
            },
            PartitionRow {
                key: "0x0020".into(),
                name: "empty".into(),
                members: Vec::new(),
            },
        ]
    }

    #[test]
    fn partitions_from_the_file() {
        let p = PartitionsInfo {
            file: Some("/etc/mwrouter/partitions.conf".into()),
            loaded_from: Some("/etc/mwrouter/partitions.conf".into()),
            loaded_unix_s: Some(1_795_826_400),
            refused: None,
            partitions: rows(),
            copies: Vec::new(),
        };
        let (json, text) = render(&SanCmd::Partitions, &info(Some(p.clone()), true));
        assert_eq!(json, serde_json::to_value(&p).unwrap());
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("key") && lines[0].contains("members"),
            "{text}"
        );
        assert!(
            lines[2].contains("tenant_a")
                && lines[2].contains("0x0000000000000104=full, 0x0000000000000105=limited"),
            "{text}"
        );
        assert!(
            lines[3].contains("empty") && lines[3].ends_with('-'),
            "{text}"
        );
        assert_eq!(
            lines[4],
            "from the partitions file /etc/mwrouter/partitions.conf, read at 2026-11-28 00:40:00 UTC"
        );
        assert!(!text.contains("refused"), "{text}");
    }

    #[test]
    fn a_refusal_is_said_with_its_errors() {
        let p = PartitionsInfo {
            file: Some("/x".into()),
            loaded_from: Some("/x".into()),
            loaded_unix_s: Some(0),
            refused: Some(PartitionsRefusal {
                file: "/x".into(),
                at_unix_s: 60,
                count: 3,
                errors: vec!["line 2: a".into(), "line 5: b".into()],
            }),
            partitions: rows(),
            copies: Vec::new(),
        };
        let (_, text) = render(&SanCmd::Partitions, &info(Some(p), true));
        assert!(
            text.ends_with(
                "partitions file /x refused at 1970-01-01 00:01:00 UTC: 3 errors; the partitions in force did not change:\n  line 2: a\n  line 5: b\n  and 1 more\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_copy_of_the_masters_partitions_is_said_with_where_it_comes_from() {
        let p = PartitionsInfo {
            partitions: vec![PartitionRow {
                key: "0x7fff".into(),
                name: "Default".into(),
                members: vec!["ALL=full".into()],
            }],
            copies: vec![
                PartitionsCopyInfo {
                    port: 1,
                    master: "0x0117".into(),
                    at_unix_s: 60,
                    version: "0x00000000000000ab".into(),
                    same_as_own: false,
                    partitions: rows(),
                },
                PartitionsCopyInfo {
                    port: 2,
                    master: "0x0217".into(),
                    at_unix_s: 120,
                    version: "0x00000000000000cd".into(),
                    same_as_own: true,
                    partitions: Vec::new(),
                },
            ],
            ..Default::default()
        };
        let (json, text) = render(&SanCmd::Partitions, &info(Some(p.clone()), true));
        assert_eq!(json["copies"][0]["master"], "0x0117");
        assert!(
            text.contains(
                "the SAN manager on port 1 gives the partitions copied from the master 0x0117 at 1970-01-01 00:01:00 UTC (version 0x00000000000000ab), not the ones above"
            ),
            "{text}"
        );
        assert!(text.contains("  0x0010"), "{text}");
        assert!(
            text.contains(
                "port 2 gives the partitions copied from the master 0x0217 at 1970-01-01 00:02:00 UTC (version 0x00000000000000cd), the same as the ones above\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_default_partition_says_why() {
        let open = vec![PartitionRow {
            key: "0x7fff".into(),
            name: "Default".into(),
            members: vec!["ALL=full".into()],
        }];
        let p = PartitionsInfo {
            partitions: open.clone(),
            ..Default::default()
        };
        let (_, text) = render(&SanCmd::Partitions, &info(Some(p), true));
        assert!(
            text.contains("no partitions file ([management] partitions_file)"),
            "{text}"
        );
        let p = PartitionsInfo {
            file: Some("/x".into()),
            refused: Some(PartitionsRefusal {
                file: "/x".into(),
                at_unix_s: 0,
                count: 1,
                errors: vec!["cannot read: No such file or directory (os error 2)".into()],
            }),
            partitions: open,
            ..Default::default()
        };
        let (_, text) = render(&SanCmd::Partitions, &info(Some(p), true));
        assert!(
            text.contains("the partitions file /x has not been taken"),
            "{text}"
        );
        assert!(
            text.contains("1 error; the partitions in force did not change:\n  cannot read"),
            "{text}"
        );
        // No manager: partitions belong to a SAN manager.
        let (json, text) = render(&SanCmd::Partitions, &info(None, false));
        assert!(
            text.starts_with("no SAN manager runs on this box"),
            "{text}"
        );
        assert_eq!(json, Value::Array(Vec::new()));
    }
}
