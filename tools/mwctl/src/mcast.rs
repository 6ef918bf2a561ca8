//! `mwctl mcast`: multicast groups at a SAN's master manager
//! (docs/multicast.md "Groups"), by SubnAdm McGroupRecord and
//! McMemberRecord through the box's management client. Which manager: the
//! one given with `--manager`, else the master this box runs or follows
//! (`show management`).

use admin::mad::{MadAnswer, MadMethod, MadQuery};
use admin::proto::{Command, Show};
use admin::view::ManagementInfo;
use admin::{Client, ClientError};
use clap::Subcommand;
use mgmt::attr::mc_group_record::{self, McGroupRecord};
use mgmt::attr::mc_member_record::McMemberRecord;
use mgmt::wire::{MgmtClass, Status};
use rrp::Address;
use serde_json::Value;

use crate::table::{Table, cell};

/// What `mwctl mcast` does.
#[derive(Debug, Clone, Subcommand)]
pub enum McastCmd {
    /// Create a group at the SAN's manager: GROUP given (0x8000-0xFFFD), or
    /// chosen by the manager. Refused when the group has members elsewhere
    /// that --mtu does not fit.
    Create {
        /// The group's logical address (none: the manager chooses).
        group: Option<Address>,
        /// Its MTU in bytes (0 or none: what reaches the members it has
        /// elsewhere, else the SAN's).
        #[arg(long, default_value_t = 0)]
        mtu: u32,
        /// Its partition, 0x0001-0x7fff (none: the first join's;
        /// docs/multicast.md "Groups in partitions").
        #[arg(long, value_name = "KEY", value_parser = partition_key)]
        partition: Option<u16>,
        /// The master manager's address (default: the one this box knows).
        #[arg(long, value_name = "ADDR")]
        manager: Option<Address>,
    },
    /// Delete a group and its member records.
    Delete {
        /// The group.
        group: Address,
        /// The master manager's address.
        #[arg(long, value_name = "ADDR")]
        manager: Option<Address>,
    },
    /// The groups the manager keeps: MTU, partition, members.
    Groups {
        /// The master manager's address.
        #[arg(long, value_name = "ADDR")]
        manager: Option<Address>,
    },
    /// The member records of a group (or of every group).
    Members {
        /// The group (none: every group).
        group: Option<Address>,
        /// The master manager's address.
        #[arg(long, value_name = "ADDR")]
        manager: Option<Address>,
    },
}

impl McastCmd {
    fn manager(&self) -> Option<Address> {
        match self {
            McastCmd::Create { manager, .. }
            | McastCmd::Delete { manager, .. }
            | McastCmd::Groups { manager }
            | McastCmd::Members { manager, .. } => *manager,
        }
    }
}

/// A partition key on the command line: `0x0010` or `16`, 0x0001-0x7fff.
fn partition_key(s: &str) -> Result<u16, String> {
    let t = s.trim();
    let n = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u16::from_str_radix(h, 16),
        None => t.parse(),
    }
    .ok();
    n.and_then(mgmt::partition::PartitionKey::new)
        .map(mgmt::partition::PartitionKey::get)
        .ok_or_else(|| format!("{s:?} is not a partition key (0x0001-0x7fff)"))
}

/// A record's partition in a table: `0x0010`, `-` for 0.
fn partition_cell(v: &Value) -> String {
    match v.as_u64() {
        Some(0) | None => "-".into(),
        Some(k) => format!("{k:#06x}"),
    }
}

/// The master this box runs or follows, from `show management`.
pub(crate) fn known_master(c: &mut Client) -> Result<Address, ClientError> {
    let v = c.request(Command::Show(Show::Management {}))?;
    let m: ManagementInfo = serde_json::from_value(v)
        .map_err(|e| ClientError::Other(format!("malformed show management: {e}")))?;
    m.managers
        .iter()
        .find(|r| r.state == "master")
        .map(|r| r.hr)
        .or_else(|| m.managers.iter().find_map(|r| r.master))
        .or(m.manager)
        .ok_or_else(|| {
            ClientError::Other(
                "no SAN manager known on this box: give --manager ADDR (the master's address)"
                    .into(),
            )
        })
}

pub(crate) fn hex_area(
    emit: impl FnOnce(&mut [u8]) -> mgmt::Result<()>,
) -> Result<String, ClientError> {
    let mut a = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
    emit(&mut a).map_err(|e| ClientError::Other(e.to_string()))?;
    Ok(a.iter().map(|b| format!("{b:02x}")).collect())
}

pub(crate) fn ask(
    c: &mut Client,
    to: Address,
    method: MadMethod,
    attribute: u16,
    modifier: u32,
    data: String,
) -> Result<MadAnswer, ClientError> {
    let q = MadQuery {
        dst: Some(to),
        class: Some("subn_adm".into()),
        method,
        attribute: format!("{attribute:#06x}"),
        modifier,
        data: Some(data),
        ..MadQuery::default()
    };
    crate::mad::ask(c, &q).map(|(a, _)| a)
}

fn refused(a: &MadAnswer) -> ClientError {
    ClientError::Other(format!(
        "{} at {}: status {:#06x}: {}",
        a.attribute, a.from, a.status, a.status_text
    ))
}

/// Runs `mwctl mcast`: the JSON (`--json`) and the text.
pub fn run(c: &mut Client, cmd: &McastCmd) -> Result<(Value, String), ClientError> {
    let manager = match cmd.manager() {
        Some(m) => m,
        None => known_master(c)?,
    };
    let fields = |a: &MadAnswer| a.fields.clone().unwrap_or(Value::Null);
    match cmd {
        McastCmd::Create {
            group,
            mtu,
            partition,
            ..
        } => {
            let rec = McGroupRecord {
                group: group.unwrap_or(Address::UNSPECIFIED),
                mtu: *mtu,
                partition: partition.unwrap_or(0),
                ..McGroupRecord::default()
            };
            let a = ask(
                c,
                manager,
                MadMethod::Set,
                McGroupRecord::ID,
                0,
                hex_area(|x| rec.emit(x))?,
            )?;
            if !a.ok() {
                return Err(refused(&a));
            }
            let f = fields(&a);
            let text = format!(
                "group {} created at {manager}, MTU {}, partition {}\n",
                cell(&f["group"]),
                cell(&f["mtu"]),
                match partition_cell(&f["partition"]).as_str() {
                    "-" => "fixed by its first join".to_string(),
                    k => k.to_string(),
                }
            );
            Ok((f, text))
        }
        McastCmd::Delete { group, .. } => {
            let rec = McGroupRecord {
                group: *group,
                ..McGroupRecord::default()
            };
            let a = ask(
                c,
                manager,
                MadMethod::Delete,
                McGroupRecord::ID,
                0,
                hex_area(|x| rec.emit(x))?,
            )?;
            if !a.ok() {
                return Err(refused(&a));
            }
            let f = fields(&a);
            let text = format!(
                "group {group} deleted at {manager} ({} member records)\n",
                cell(&f["members"])
            );
            Ok((f, text))
        }
        McastCmd::Groups { .. } => {
            let mut rows = Vec::new();
            let mut t = Table::new(&["group", "mtu", "partition", "members", "full", "flags"]);
            let mut i = 0u32;
            loop {
                let a = ask(
                    c,
                    manager,
                    MadMethod::Get,
                    McGroupRecord::ID,
                    i,
                    hex_area(|x| McGroupRecord::default().emit(x))?,
                )?;
                if a.status == Status::SA_NO_RECORDS.0 {
                    break;
                }
                if !a.ok() {
                    return Err(refused(&a));
                }
                let f = fields(&a);
                let mut flags = Vec::new();
                let fl = f["flags"].as_u64().unwrap_or(0) as u8;
                if fl & mc_group_record::ALLOCATED != 0 {
                    flags.push("allocated");
                }
                if fl & mc_group_record::KNOWN_ELSEWHERE != 0 {
                    flags.push("elsewhere");
                }
                t.row(vec![
                    cell(&f["group"]),
                    cell(&f["mtu"]),
                    partition_cell(&f["partition"]),
                    cell(&f["members"]),
                    cell(&f["full_members"]),
                    if flags.is_empty() {
                        "-".into()
                    } else {
                        flags.join(",")
                    },
                ]);
                let total = f["total"].as_u64().unwrap_or(0);
                rows.push(f);
                i += 1;
                if u64::from(i) >= total || i > 65_535 {
                    break;
                }
            }
            let text = format!("{} groups at {manager}\n{}", rows.len(), t.render());
            Ok((Value::Array(rows), text))
        }
        McastCmd::Members { group, .. } => {
            let tmpl = McMemberRecord {
                group: group.unwrap_or(Address::UNSPECIFIED),
                ..McMemberRecord::default()
            };
            let mut rows = Vec::new();
            let mut t = Table::new(&[
                "group",
                "member",
                "join state",
                "partition",
                "mtu",
                "group mtu",
            ]);
            let mut i = 0u32;
            loop {
                let a = ask(
                    c,
                    manager,
                    MadMethod::Get,
                    McMemberRecord::ID,
                    i,
                    hex_area(|x| tmpl.emit(x))?,
                )?;
                if a.status == Status::SA_NO_RECORDS.0 {
                    break;
                }
                if !a.ok() {
                    return Err(refused(&a));
                }
                let f = fields(&a);
                let js = match f["join_state"].as_u64() {
                    Some(1) => "full".to_string(),
                    Some(4) => "send-only".to_string(),
                    _ => cell(&f["join_state"]),
                };
                t.row(vec![
                    cell(&f["group"]),
                    cell(&f["member"]),
                    js,
                    partition_cell(&f["partition"]),
                    cell(&f["mtu"]),
                    cell(&f["group_mtu"]),
                ]);
                let total = f["total"].as_u64().unwrap_or(0);
                rows.push(f);
                i += 1;
                if u64::from(i) >= total || i > 65_535 {
                    break;
                }
            }
            let text = format!("{} member records at {manager}\n{}", rows.len(), t.render());
            Ok((Value::Array(rows), text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_keys_on_the_command_line() {
        assert_eq!(partition_key("0x0010"), Ok(0x10));
        assert_eq!(partition_key("16"), Ok(0x10));
        assert_eq!(partition_key("0x7fff"), Ok(0x7FFF));
        assert!(partition_key("0").is_err());
        assert!(partition_key("0x8000").is_err());
        assert!(partition_key("tenant").is_err());
        assert_eq!(partition_cell(&serde_json::json!(16)), "0x0010");
        assert_eq!(partition_cell(&serde_json::json!(0)), "-");
    }
}
