//! A lab host's partitions (docs/partitions.md "At the hosts"): the table
//! its SAN's master set in its agent, the mark it puts in the Free field of
//! what it sends, and the check of what it receives, as an InfiniBand
//! port checks the P_Key of every packet against its P_KeyTable.

use mgmt::partition::{Membership, PartitionKey};
use rrp::PartitionMark;
use rrp::partition_mark::DEFAULT_KEY;
use serde_json::Value;

/// The host's table: (key, full member), sorted by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HostPartitions {
    table: Vec<(u16, bool)>,
}

impl Default for HostPartitions {
    /// A full member of the default partition, as every agent starts.
    fn default() -> Self {
        HostPartitions {
            table: vec![(DEFAULT_KEY, true)],
        }
    }
}

impl HostPartitions {
    /// The table the agent holds.
    pub(super) fn of(table: &[(PartitionKey, Membership)]) -> HostPartitions {
        let mut table: Vec<(u16, bool)> = table
            .iter()
            .map(|(k, m)| (k.get(), *m == Membership::Full))
            .collect();
        table.sort_unstable();
        HostPartitions { table }
    }

    /// Its membership of `key`: `Some(full)`, or `None`.
    fn membership(&self, key: u16) -> Option<bool> {
        self.table.iter().find(|(k, _)| *k == key).map(|(_, f)| *f)
    }

    /// The Free field of a packet it sends in partition `named` (a
    /// request's `partition`), or, when none is named, in the first
    /// partition it is a full member of (the default one first, sent
    /// unmarked: Free 0), else the first of its table. A partition it is
    /// not a member of is refused, as an InfiniBand port refuses a P_Key
    /// that is not in its table.
    pub(super) fn free_for(&self, named: Option<u16>) -> Result<u16, String> {
        let mark = match named {
            Some(k) => match self.membership(k) {
                Some(full) => PartitionMark::new(k, full),
                None => return Err(format!("partition {k:#06x}: this host is not a member")),
            },
            None => {
                let (k, full) = if self.membership(DEFAULT_KEY) == Some(true) {
                    (DEFAULT_KEY, true)
                } else {
                    self.table
                        .iter()
                        .find(|(_, f)| *f)
                        .or(self.table.first())
                        .copied()
                        .ok_or("this host is a member of no partition")?
                };
                PartitionMark::new(k, full)
            }
        };
        Ok(if mark == PartitionMark::UNMARKED {
            0
        } else {
            mark.to_free()
        })
    }

    /// Whether a data packet whose Free field is `free` may be taken: the
    /// host is a member of its partition, and not both it and the sender
    /// limited members.
    pub(super) fn admits(&self, free: u16) -> bool {
        let m = PartitionMark::from_free(free);
        self.membership(m.key())
            .is_some_and(|full| full || m.full())
    }

    /// The table as `stats` shows it: key -> "full" | "limited".
    pub(super) fn json(&self) -> Value {
        self.table
            .iter()
            .map(|(k, f)| {
                (
                    format!("{k:#06x}"),
                    Value::from(if *f { "full" } else { "limited" }),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}

/// A request's `partition`: a key as a number or `"0x0010"`; none: null
/// or absent.
pub(super) fn partition_arg(req: &Value) -> Result<Option<u16>, String> {
    let bad = |v: &Value| format!("partition: {v} is not a partition key (0x0001-0x7fff)");
    let k = match req.get("partition") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => {
            let s = s.trim();
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => s.parse().ok(),
            }
        }
        Some(_) => None,
    };
    k.and_then(|k| u16::try_from(k).ok())
        .and_then(PartitionKey::new)
        .map(|k| Some(k.get()))
        .ok_or_else(|| bad(req.get("partition").unwrap_or(&Value::Null)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tenant_limited() -> HostPartitions {
        HostPartitions::of(&[
            (PartitionKey::DEFAULT, Membership::Limited),
            (PartitionKey::new(0x10).unwrap(), Membership::Limited),
            (PartitionKey::new(0x20).unwrap(), Membership::Full),
        ])
    }

    #[test]
    fn a_full_default_member_sends_unmarked() {
        let p = HostPartitions::default();
        assert_eq!(p.free_for(None), Ok(0));
        assert!(p.admits(0));
        assert!(!p.admits(0x8010), "not a member of 0x0010");
    }

    #[test]
    fn otherwise_the_first_full_partition_or_the_named_one() {
        let p = tenant_limited();
        assert_eq!(p.free_for(None), Ok(0x8020));
        assert_eq!(p.free_for(Some(0x10)), Ok(0x0010));
        assert!(p.free_for(Some(0x30)).is_err());
        let only_limited = HostPartitions::of(&[(PartitionKey::DEFAULT, Membership::Limited)]);
        assert_eq!(only_limited.free_for(None), Ok(0x7FFF));
    }

    #[test]
    fn two_limited_members_do_not_talk() {
        let p = tenant_limited();
        assert!(p.admits(0x8010));
        assert!(!p.admits(0x0010));
        assert!(p.admits(0x0020));
        assert!(
            p.admits(0),
            "unmarked is the default partition, full: a limited member takes it"
        );
    }

    #[test]
    fn partition_arguments() {
        assert_eq!(partition_arg(&json!({})), Ok(None));
        assert_eq!(
            partition_arg(&json!({"partition": "0x0010"})),
            Ok(Some(0x10))
        );
        assert_eq!(partition_arg(&json!({"partition": 32})), Ok(Some(0x20)));
        assert!(partition_arg(&json!({"partition": 0})).is_err());
        assert!(partition_arg(&json!({"partition": "0x8000"})).is_err());
        assert!(partition_arg(&json!({"partition": true})).is_err());
    }
}
