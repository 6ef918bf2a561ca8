//! Partitions in a trace (docs/mwtrace.md "Partitions", docs/partitions.md
//! "What is checked"): whether the routers would let the traced packet
//! through in a partition, decided with their own rule
//! ([`mgmt::partition::source_check`] and
//! [`mgmt::partition::destination_check`]) from the tables the trace reads
//! with PartitionTable: the source's own, the first router's copy of the
//! source's, and the destination's own.

use std::fmt;
use std::str::FromStr;

use mgmt::partition::{
    Membership, PartitionKey, Refusal, destination_check, membership_of, source_check,
};
use rrp::Address;
use serde::Serialize;

/// A node's table of partitions: each key with its membership.
pub type Table = Vec<(PartitionKey, Membership)>;

/// `--partition KEY[:full|:limited]`: the partition the traced packet is
/// sent in, and the membership it claims (without one, the source's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionArg {
    /// The key.
    pub key: PartitionKey,
    /// The membership claimed; `None`: the source's, full when it has none.
    pub membership: Option<Membership>,
}

impl FromStr for PartitionArg {
    type Err = String;

    fn from_str(s: &str) -> Result<PartitionArg, String> {
        let (k, m) = match s.trim().split_once(':') {
            Some((k, m)) => (k.trim(), Some(m.trim())),
            None => (s.trim(), None),
        };
        let v = match k.strip_prefix("0x").or_else(|| k.strip_prefix("0X")) {
            Some(h) => u16::from_str_radix(h, 16).ok(),
            None => k.parse::<u16>().ok(),
        };
        let key = v
            .and_then(PartitionKey::new)
            .ok_or_else(|| format!("{k:?} is not a partition key (0x0001-0x7fff)"))?;
        let membership = match m.map(str::to_ascii_lowercase).as_deref() {
            None => None,
            Some("full") => Some(Membership::Full),
            Some("limited") => Some(Membership::Limited),
            Some(o) => return Err(format!("{o:?}: full or limited")),
        };
        Ok(PartitionArg { key, membership })
    }
}

/// A table as the trace read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Read {
    /// Its entries (none: the node keeps no table there).
    Entries(Table),
    /// Not read: why (no answer, a node that does not serve the attribute).
    Unknown(String),
}

impl Read {
    /// The entries, when read.
    pub fn entries(&self) -> Option<&Table> {
        match self {
            Read::Entries(t) => Some(t),
            Read::Unknown(_) => None,
        }
    }
}

/// Whether `t` is the default table: a full member of the default
/// partition and of nothing else, as every node is where no partitions are
/// in force.
pub fn is_open(t: &[(PartitionKey, Membership)]) -> bool {
    t == [(PartitionKey::DEFAULT, Membership::Full)]
}

/// A node's side of a decision, in words: `full`, `limited`, `not a
/// member`, `open` (the default table), `unknown`.
fn side(t: Option<&Table>, key: PartitionKey) -> &'static str {
    match t {
        None => "unknown",
        Some(t) if is_open(t) => "open",
        Some(t) => membership_of(t, key).map_or("not a member", Membership::name),
    }
}

/// How the routers would take the traced packet in one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Both checks pass.
    Admitted,
    /// A check fails: the routers drop it with the reason `partition`.
    Refused,
    /// A table could not be read, and what was read refuses nothing.
    Unknown,
}

/// One partition's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// The partition.
    pub key: PartitionKey,
    /// The membership the packet claims.
    pub membership: Membership,
    /// The verdict.
    pub verdict: Verdict,
    /// The source's membership as judged (`full`, `limited`, `not a
    /// member`, `open`, `unknown`).
    pub source: &'static str,
    /// The destination's.
    pub destination: &'static str,
    /// Why it is refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// Where: the router that refuses it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_at: Option<String>,
    /// The line `mwtrace` prints.
    pub text: String,
}

/// The routers of the path, as a refusal names them: the first (the
/// source check) and the last (the destination check), each its name and
/// the HR the packet arrives on; `None` where the path has no router.
#[derive(Debug, Clone, Default)]
pub struct Checkers {
    /// The router where the packet leaves the source's SAN.
    pub first: Option<(String, Address)>,
    /// The router where it enters the destination's SAN.
    pub last: Option<(String, Address)>,
}

/// Everything the trace knows of partitions.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionReport {
    /// The source's own table.
    pub source_table: Read,
    /// The first router's HR the copy of the source's table was asked of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_router: Option<Address>,
    /// The source's table as the first router keeps it for its checks (no
    /// entries: it keeps none; it then checks against its own SAN
    /// manager's, or the HR is open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_router_table: Option<Read>,
    /// Which table the source was judged by: `first_router` or `source`.
    pub source_judged_by: &'static str,
    /// The destination's own table.
    pub destination_table: Read,
    /// One per partition traced: the one `--partition` names, else each of
    /// the source's table.
    pub decisions: Vec<Decision>,
    /// Whether `--partition` named it.
    #[serde(skip)]
    pub asked: bool,
    /// The first router's name, for `-v`.
    #[serde(skip)]
    pub first_router_node: Option<String>,
}

impl PartitionReport {
    /// Decides the traced packet's partitions from the tables read: the
    /// source judged by the first router's copy when it keeps one, else by
    /// its own table; `asked` the partition of `--partition`, else every
    /// partition of the source's table with its membership (the default
    /// partition, full, when no table was read: an unmarked packet).
    pub fn decide(
        asked: Option<PartitionArg>,
        source_table: Read,
        first_router: Option<(Address, Read)>,
        destination_table: Read,
        at: &Checkers,
    ) -> PartitionReport {
        let router_copy = first_router
            .as_ref()
            .and_then(|(_, r)| r.entries())
            .filter(|t| !t.is_empty());
        let (source, judged_by) = match router_copy {
            Some(t) => (Some(t), "first_router"),
            None => (source_table.entries(), "source"),
        };
        let tried: Vec<(PartitionKey, Membership)> = match asked {
            Some(a) => vec![(
                a.key,
                a.membership
                    .or_else(|| source.and_then(|t| membership_of(t, a.key)))
                    .unwrap_or(Membership::Full),
            )],
            None => match source {
                Some(t) if !t.is_empty() => t.clone(),
                _ => vec![(PartitionKey::DEFAULT, Membership::Full)],
            },
        };
        let destination = destination_table.entries();
        let decisions = tried
            .into_iter()
            .map(|(key, claimed)| decide_one(key, claimed, source, destination, at))
            .collect();
        let (first_router, first_router_table) = match first_router {
            Some((a, r)) => (Some(a), Some(r)),
            None => (None, None),
        };
        PartitionReport {
            source_table,
            first_router,
            first_router_table,
            source_judged_by: judged_by,
            destination_table,
            decisions,
            asked: asked.is_some(),
            first_router_node: at.first.as_ref().map(|(name, _)| name.clone()),
        }
    }

    /// Whether `mwtrace` prints its lines: `--partition` was given, or a
    /// table read is not the default one (partitions are in force).
    pub fn shown(&self) -> bool {
        let in_force = |r: &Read| r.entries().is_some_and(|t| !t.is_empty() && !is_open(t));
        self.asked
            || in_force(&self.source_table)
            || self.first_router_table.as_ref().is_some_and(in_force)
            || in_force(&self.destination_table)
    }

    /// Whether the packet is refused: in the partition `--partition`
    /// names, or in every partition of the source's table.
    pub fn refused(&self) -> bool {
        !self.decisions.is_empty() && self.decisions.iter().all(|d| d.verdict == Verdict::Refused)
    }

    /// The tables read, for `-v`: one line each.
    pub fn tables_text(&self) -> Vec<String> {
        let mut v = vec![format!(
            "partitions of the source: {}",
            TableText(&self.source_table)
        )];
        if let (Some(a), Some(r)) = (self.first_router, &self.first_router_table) {
            v.push(format!(
                "partitions of the source at the first router {}({a}): {}",
                self.first_router_node
                    .as_ref()
                    .map_or(String::new(), |n| format!("{n} ")),
                match r {
                    Read::Entries(t) if t.is_empty() => "none kept".to_string(),
                    r => TableText(r).to_string(),
                }
            ));
        }
        v.push(format!(
            "partitions of the destination: {}",
            TableText(&self.destination_table)
        ));
        v
    }
}

/// A table in words: `0x0010 full, 0x7fff limited`, `open`, `unknown
/// (why)`.
struct TableText<'a>(&'a Read);

impl fmt::Display for TableText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Read::Unknown(why) => write!(f, "unknown ({why})"),
            Read::Entries(t) if is_open(t) => f.write_str("open (0x7fff full only)"),
            Read::Entries(t) if t.is_empty() => f.write_str("none"),
            Read::Entries(t) => {
                for (i, (k, m)) in t.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} {}", m.name())?;
                }
                Ok(())
            }
        }
    }
}

/// One partition's decision: the source check where it leaves the source's
/// SAN, the destination check where it enters the destination's; what is
/// not known refuses nothing.
fn decide_one(
    key: PartitionKey,
    claimed: Membership,
    source: Option<&Table>,
    destination: Option<&Table>,
    at: &Checkers,
) -> Decision {
    let src = source.map(|t| source_check(key, claimed, membership_of(t, key)));
    let dst = destination.map(|t| destination_check(key, claimed, membership_of(t, key)));
    let refusal: Option<Refusal> = match (src, dst) {
        (Some(Err(r)), _) | (_, Some(Err(r))) => Some(r),
        _ => None,
    };
    let verdict = match (refusal, src, dst) {
        (Some(_), _, _) => Verdict::Refused,
        (None, Some(_), Some(_)) => Verdict::Admitted,
        _ => Verdict::Unknown,
    };
    let (source_side, destination_side) = (side(source, key), side(destination, key));
    // The router that refuses it; with none on the path, the node itself
    // (a host checks what it sends and receives against its table).
    let refuser = refusal.map(|r| {
        let (which, router) = if r.at_source() {
            ("first", &at.first)
        } else {
            ("last", &at.last)
        };
        // One router on the path makes both checks.
        let which = if at.first == at.last { "" } else { which };
        match router {
            Some((name, hr)) if which.is_empty() => (format!("the router {name} ({hr})"), true),
            Some((name, hr)) => (format!("the {which} router {name} ({hr})"), true),
            None if r.at_source() => ("the source".to_string(), false),
            None => ("the destination".to_string(), false),
        }
    });
    let head = format!("partition {key} {}", claimed.name());
    let text = match (verdict, refusal, &refuser) {
        (Verdict::Refused, Some(r), Some((at, by_router))) => format!(
            "{head}: refused at {at} ({}): {}",
            r.reason(),
            if *by_router {
                "the packet is dropped with reason partition"
            } else {
                "no router on the path, the node's own check drops it"
            }
        ),
        (Verdict::Admitted, _, _) => {
            format!("{head}: admitted (source {source_side}, destination {destination_side})")
        }
        _ => format!(
            "{head}: unknown (source {source_side}, destination {destination_side}: a table \
             could not be read)"
        ),
    };
    Decision {
        key,
        membership: claimed,
        verdict,
        source: source_side,
        destination: destination_side,
        reason: refusal.map(Refusal::reason),
        refused_at: refuser.map(|(at, _)| at),
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: u16) -> PartitionKey {
        PartitionKey::new(k).unwrap()
    }

    const F: Membership = Membership::Full;
    const L: Membership = Membership::Limited;

    fn checkers() -> Checkers {
        Checkers {
            first: Some(("ad".into(), Address(0x0119))),
            last: Some(("de".into(), Address(0x0121))),
        }
    }

    fn arg(s: &str) -> Option<PartitionArg> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn partition_arguments_parse() {
        assert_eq!(
            "0x0010".parse::<PartitionArg>(),
            Ok(PartitionArg {
                key: key(0x10),
                membership: None
            })
        );
        assert_eq!(
            "16:limited".parse::<PartitionArg>().unwrap().membership,
            Some(L)
        );
        assert_eq!(
            "0x7FFF:FULL".parse::<PartitionArg>().unwrap().key,
            key(0x7fff)
        );
        for bad in ["0", "0x8000", "x", "0x10:both", ""] {
            assert!(bad.parse::<PartitionArg>().is_err(), "{bad}");
        }
    }

    #[test]
    fn admitted_and_refused_in_words() {
        let src = Read::Entries(vec![(key(0x10), F), (PartitionKey::DEFAULT, L)]);
        let dst = Read::Entries(vec![(key(0x10), L), (PartitionKey::DEFAULT, L)]);
        let r = PartitionReport::decide(arg("0x0010"), src.clone(), None, dst.clone(), &checkers());
        assert_eq!(
            r.decisions[0].text,
            "partition 0x0010 full: admitted (source full, destination limited)"
        );
        assert!(!r.refused() && r.shown());
        assert_eq!(
            r.tables_text(),
            [
                "partitions of the source: 0x0010 full, 0x7fff limited",
                "partitions of the destination: 0x0010 limited, 0x7fff limited"
            ]
        );
        // The default partition: both limited, refused where it enters the
        // destination's SAN.
        let r = PartitionReport::decide(arg("0x7fff"), src.clone(), None, dst, &checkers());
        assert_eq!(
            r.decisions[0].text,
            "partition 0x7fff limited: refused at the last router de (0x0121) (a limited sender \
             to a limited destination): the packet is dropped with reason partition"
        );
        assert!(r.refused());
        // Not a member of the destination's partition.
        let other = Read::Entries(vec![(key(0x20), F)]);
        let r = PartitionReport::decide(arg("0x0010"), src.clone(), None, other, &checkers());
        assert_eq!(r.decisions[0].reason, Some("destination not a member"));
        assert_eq!(r.decisions[0].destination, "not a member");
        // Claiming full as a limited member: refused at the first router.
        let r = PartitionReport::decide(
            arg("0x7fff:full"),
            src,
            None,
            Read::Entries(vec![(PartitionKey::DEFAULT, F)]),
            &checkers(),
        );
        assert_eq!(
            r.decisions[0].refused_at.as_deref(),
            Some("the first router ad (0x0119)")
        );
        assert_eq!(
            r.decisions[0].reason,
            Some("source a limited member, the packet claiming full")
        );
    }

    #[test]
    fn without_a_partition_every_one_of_the_source_is_tried() {
        let src = Read::Entries(vec![(key(0x10), F), (PartitionKey::DEFAULT, L)]);
        let dst = Read::Entries(vec![(key(0x10), F), (PartitionKey::DEFAULT, L)]);
        let r = PartitionReport::decide(None, src.clone(), None, dst, &checkers());
        let v: Vec<_> = r.decisions.iter().map(|d| d.verdict).collect();
        assert_eq!(v, [Verdict::Admitted, Verdict::Refused]);
        assert!(!r.refused(), "one partition lets it through");
        let none = Read::Entries(vec![(key(0x30), F)]);
        let r = PartitionReport::decide(None, src, None, none, &checkers());
        assert!(r.refused(), "none does");
    }

    #[test]
    fn the_first_routers_copy_judges_the_source_when_it_keeps_one() {
        let own = Read::Entries(vec![(key(0x10), F)]);
        let dst = Read::Entries(vec![(key(0x10), F)]);
        let copy = Read::Entries(vec![(key(0x20), F)]);
        let r = PartitionReport::decide(
            arg("0x0010"),
            own.clone(),
            Some((Address(0x0119), copy)),
            dst.clone(),
            &checkers(),
        );
        assert_eq!(r.source_judged_by, "first_router");
        assert_eq!(r.decisions[0].reason, Some("source not a member"));
        // It keeps none (its own SAN manager is the master, or the HR is
        // open): the source's own table.
        let r = PartitionReport::decide(
            arg("0x0010"),
            own,
            Some((Address(0x0119), Read::Entries(Vec::new()))),
            dst,
            &checkers(),
        );
        assert_eq!(r.source_judged_by, "source");
        assert_eq!(r.decisions[0].verdict, Verdict::Admitted);
        assert_eq!(
            r.tables_text()[1],
            "partitions of the source at the first router ad (0x0119): none kept"
        );
    }

    #[test]
    fn open_and_unknown_tables_refuse_nothing_they_do_not_know() {
        let open = Read::Entries(vec![(PartitionKey::DEFAULT, F)]);
        let unknown = Read::Unknown("no answer".into());
        let r = PartitionReport::decide(None, open.clone(), None, open.clone(), &checkers());
        assert_eq!(
            r.decisions[0].text,
            "partition 0x7fff full: admitted (source open, destination open)"
        );
        assert!(!r.shown(), "no partitions in force: nothing printed");
        let r = PartitionReport::decide(None, open.clone(), None, unknown.clone(), &checkers());
        assert_eq!(r.decisions[0].verdict, Verdict::Unknown);
        assert!(r.decisions[0].text.contains("destination unknown"), "{r:?}");
        assert!(!r.refused());
        // A known refusal stands whatever is unknown.
        let r = PartitionReport::decide(arg("0x0010"), open, None, unknown, &checkers());
        assert_eq!(r.decisions[0].verdict, Verdict::Refused);
        assert_eq!(r.decisions[0].source, "open");
        let r = PartitionReport::decide(
            None,
            Read::Unknown("no answer".into()),
            None,
            Read::Unknown("no answer".into()),
            &checkers(),
        );
        assert_eq!(
            (r.decisions[0].key, r.decisions[0].verdict),
            (PartitionKey::DEFAULT, Verdict::Unknown)
        );
    }

    #[test]
    fn json_names_the_tables_and_the_verdicts() {
        let r = PartitionReport::decide(
            arg("0x0010"),
            Read::Entries(vec![(key(0x10), F)]),
            Some((Address(0x0119), Read::Unknown("status 0x001c".into()))),
            Read::Entries(vec![(key(0x10), L)]),
            &checkers(),
        );
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["source_table"]["entries"][0][0], "0x0010");
        assert_eq!(v["first_router"], "0x0119");
        assert_eq!(v["first_router_table"]["unknown"], "status 0x001c");
        assert_eq!(v["decisions"][0]["verdict"], "admitted");
        assert_eq!(v["decisions"][0]["membership"], "full");
        assert!(v.get("asked").is_none());
    }
}
