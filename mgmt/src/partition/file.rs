//! The partitions file a SAN's master reads (docs/partitions.md "The
//! file"): OpenSM's partitions.conf syntax, with MessageWay's members.
//!
//! ```text
//! # comment
//! Default=0x7fff : ALL=full ;
//! tenant_a=0x0010, defmember=full : 0x0000000000000108, ALL_ROUTERS ;
//! tenant_b=0x0020 : 0x0000000000000109=full, 0x000000000000010a=limited ;
//! ```
//!
//! A statement is `[Name][=Key][,defmember=full|limited|both] : [Member[=full|limited|both], …] ;`.
//! A member is a node identity (NodeInfo's NodeIdentity: OpenSM's
//! PortGUID), `ALL`, `ALL_HOSTS` (or OpenSM's `ALL_CAS`), `ALL_ROUTERS`, or
//! `SELF` (the SAN manager's node). A member without a membership takes the
//! statement's `defmember`, limited by default (as OpenSM); `both` counts
//! as full. Statements with the same key are merged, the first name kept.
//! Without a statement for the default partition (0x7FFF), every node is
//! a limited member of it and the SAN manager a full one (as OpenSM: then
//! only the partitions the file declares connect hosts).
//!
//! Unlike OpenSM, nothing is guessed: a key is required (none is made up),
//! a membership or flag that is not one of the above, an InfiniBand-only
//! flag (`ipoib`, `indx0`, multicast groups), a key out of 1-0x7FFF or more
//! than [`super::MAX_PARTITIONS`] partitions is an error naming its line,
//! and a file with any error is refused whole (its master keeps the
//! partitions it had).

use std::collections::BTreeMap;
use std::fmt;

use super::{MAX_MEMBERS, MAX_PARTITIONS, Member, Membership, Partition, PartitionKey, Partitions};

/// The largest partitions file read.
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// One thing wrong with a partitions file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionFileError {
    /// The line (from 1) it is on.
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

impl fmt::Display for PartitionFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

impl std::error::Error for PartitionFileError {}

/// The text with comments blanked (same offsets), and the start of each
/// line.
struct Source {
    text: String,
    lines: Vec<usize>,
}

impl Source {
    fn new(raw: &str) -> Source {
        let mut text = String::with_capacity(raw.len());
        let mut lines = vec![0];
        let mut comment = false;
        for (i, c) in raw.char_indices() {
            match c {
                '\n' => {
                    comment = false;
                    lines.push(i + 1);
                    text.push('\n');
                }
                '#' => {
                    comment = true;
                    text.push(' ');
                }
                // Blanked byte for byte, so offsets stay the file's.
                _ if comment => text.extend(std::iter::repeat_n(' ', c.len_utf8())),
                _ => text.push(c),
            }
        }
        Source { text, lines }
    }

    /// The line (from 1) of byte offset `at`.
    fn line(&self, at: usize) -> usize {
        self.lines.partition_point(|&s| s <= at)
    }
}

/// A piece of the text and where it starts.
#[derive(Clone, Copy)]
struct Piece<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Piece<'a> {
    fn trim(self) -> Piece<'a> {
        let start = self.s.len() - self.s.trim_start().len();
        Piece {
            s: self.s.trim(),
            at: self.at + start,
        }
    }

    fn split(self, c: char) -> impl Iterator<Item = Piece<'a>> {
        let mut at = self.at;
        self.s.split(c).map(move |s| {
            let p = Piece { s, at };
            at += s.len() + c.len_utf8();
            p
        })
    }

    fn split_once(self, c: char) -> Option<(Piece<'a>, Piece<'a>)> {
        let (a, b) = self.s.split_once(c)?;
        Some((
            Piece { s: a, at: self.at },
            Piece {
                s: b,
                at: self.at + a.len() + c.len_utf8(),
            },
        ))
    }
}

fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) if !h.is_empty() => u64::from_str_radix(h, 16).ok(),
        Some(_) => None,
        None => s.parse().ok(),
    }
}

fn membership(s: &str) -> Option<Membership> {
    match s {
        "full" | "both" => Some(Membership::Full),
        "limited" => Some(Membership::Limited),
        _ => None,
    }
}

fn member(s: &str) -> Result<Member, String> {
    match s {
        "ALL" => Ok(Member::All),
        "ALL_HOSTS" | "ALL_CAS" => Ok(Member::AllHosts),
        "ALL_ROUTERS" => Ok(Member::AllRouters),
        "SELF" => Ok(Member::Manager),
        "ALL_SWITCHES" => {
            Err("ALL_SWITCHES: a MessageWay SAN has no switches among its nodes".into())
        }
        _ => match number(s) {
            Some(i) if i != 0 => Ok(Member::Node(i)),
            _ => Err(format!(
                "{s:?} is not a member: a node identity (0x…), ALL, ALL_HOSTS, ALL_ROUTERS or SELF"
            )),
        },
    }
}

fn valid_name(s: &str) -> bool {
    s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The partitions of a file's text, the default partition always among
/// them; every error, each with its line, when the text is refused.
pub fn parse(raw: &str) -> Result<Partitions, Vec<PartitionFileError>> {
    let mut errs = Vec::new();
    if raw.len() > MAX_FILE_BYTES {
        return Err(vec![PartitionFileError {
            line: 1,
            why: format!("{} bytes, more than the {MAX_FILE_BYTES} read", raw.len()),
        }]);
    }
    let src = Source::new(raw);
    let mut by_key: BTreeMap<PartitionKey, usize> = BTreeMap::new();
    let mut list: Vec<Partition> = Vec::new();
    let whole = Piece {
        s: &src.text,
        at: 0,
    };
    let statements: Vec<Piece> = whole.split(';').collect();
    let last = statements.len() - 1;
    for (n, st) in statements.into_iter().enumerate() {
        let st = st.trim();
        if st.s.is_empty() {
            continue;
        }
        let mut err = |at: usize, why: String| {
            errs.push(PartitionFileError {
                line: src.line(at),
                why,
            })
        };
        if n == last {
            err(st.at, "a statement without its closing ';'".into());
            continue;
        }
        let Some((def, props)) = st.split_once(':') else {
            err(
                st.at,
                "a statement needs ':' between the partition and its members".into(),
            );
            continue;
        };
        // The definition: [Name][=Key], then flags.
        let mut parts = def.split(',');
        let head = parts.next().expect("split gives one").trim();
        let (name, key) = match head.split_once('=') {
            Some((n, k)) => (n.trim(), Some(k.trim())),
            None => (head, None),
        };
        if !valid_name(name.s) {
            err(
                name.at,
                format!(
                    "{:?}: a partition name is letters, digits, '_', '-', '.'",
                    name.s
                ),
            );
        }
        let key = match key {
            None => {
                err(
                    head.at,
                    format!("partition {:?} has no key: write {}=0x…", name.s, name.s),
                );
                None
            }
            Some(k) => {
                let v = number(k.s).and_then(|v| u16::try_from(v).ok());
                match v.and_then(PartitionKey::new) {
                    Some(k) => Some(k),
                    None => {
                        err(
                            k.at,
                            format!("{:?} is not a partition key (0x0001-0x7fff)", k.s),
                        );
                        None
                    }
                }
            }
        };
        let mut defmember = Membership::Limited;
        for flag in parts {
            let flag = flag.trim();
            match flag.s.split_once('=').map(|(a, b)| (a.trim(), b.trim())) {
                Some(("defmember", v)) => match membership(v) {
                    Some(m) => defmember = m,
                    None => err(flag.at, format!("defmember={v}: full, limited or both")),
                },
                _ if flag.s == "ipoib" || flag.s == "indx0" => err(
                    flag.at,
                    format!(
                        "{}: an InfiniBand flag with no meaning in MessageWay",
                        flag.s
                    ),
                ),
                _ => err(
                    flag.at,
                    format!("{:?} is not a partition flag (defmember=…)", flag.s),
                ),
            }
        }
        // The members.
        let mut members = Vec::new();
        let props = props.trim();
        if !props.s.is_empty() {
            for m in props.split(',') {
                let m = m.trim();
                if m.s.starts_with("mgid") {
                    err(
                        m.at,
                        "mgid: multicast groups are not declared in the partitions file \
                         (docs/multicast.md)"
                            .into(),
                    );
                    continue;
                }
                let (who, how) = match m.split_once('=') {
                    Some((w, h)) => (w.trim(), Some(h.trim())),
                    None => (m, None),
                };
                if who.s.is_empty() {
                    err(m.at, "an empty member".into());
                    continue;
                }
                let how = match how {
                    None => Some(defmember),
                    Some(h) => {
                        let got = membership(h.s);
                        if got.is_none() {
                            err(h.at, format!("{:?}: full, limited or both", h.s));
                        }
                        got
                    }
                };
                match (member(who.s), how) {
                    (Ok(w), Some(h)) => members.push((w, h)),
                    (Err(why), _) => err(who.at, why),
                    _ => {}
                }
            }
        }
        let Some(key) = key else { continue };
        match by_key.get(&key) {
            Some(&i) => list[i].members.extend(members),
            None => {
                if list.len() >= MAX_PARTITIONS {
                    err(st.at, format!("more than {MAX_PARTITIONS} partitions"));
                    continue;
                }
                by_key.insert(key, list.len());
                list.push(Partition {
                    name: name.s.to_string(),
                    key,
                    members,
                });
            }
        }
    }
    for p in &list {
        if p.members.len() > MAX_MEMBERS {
            errs.push(PartitionFileError {
                line: 1,
                why: format!(
                    "partition {} ({}) lists {} members, more than {MAX_MEMBERS}",
                    p.name,
                    p.key,
                    p.members.len()
                ),
            });
        }
    }
    if !by_key.contains_key(&PartitionKey::DEFAULT) && list.len() >= MAX_PARTITIONS {
        errs.push(PartitionFileError {
            line: 1,
            why: format!("more than {MAX_PARTITIONS} partitions with the default one"),
        });
    }
    if errs.is_empty() {
        Ok(Partitions::declared(list))
    } else {
        errs.sort_by_key(|e| e.line);
        Err(errs)
    }
}

impl Partitions {
    /// The partitions a file declares, `list` (by first appearance, their
    /// statements with the same key merged), with the default partition
    /// OpenSM adds when none of them is it: every node a limited member of
    /// it, the SAN manager a full one. [`parse`] reads a file so; a file
    /// written from another description (mwlab's topologies) is built so.
    pub fn declared(mut list: Vec<Partition>) -> Partitions {
        if !list.iter().any(|p| p.key == PartitionKey::DEFAULT) {
            list.push(Partition {
                name: "Default".into(),
                key: PartitionKey::DEFAULT,
                members: vec![
                    (Member::All, Membership::Limited),
                    (Member::Manager, Membership::Full),
                ],
            });
        }
        Partitions { list }
    }

    /// The partitions as a file that [`parse`] reads back the same:
    /// `mwctl san partitions` prints it, a standby writes its copy so.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for p in &self.list {
            let members: Vec<String> = p
                .members
                .iter()
                .map(|(w, h)| format!("{w}={}", h.name()))
                .collect();
            out.push_str(&format!(
                "{}={} : {} ;\n",
                p.name,
                p.key,
                members.join(", ")
            ));
        }
        out
    }

    /// The version of the partitions: a hash (64-bit FNV-1a) of
    /// [`Partitions::to_text`]. Equal partitions have the same version on
    /// every box; a standby whose copy has the master's version holds the
    /// master's partitions (docs/partitions.md "Standbys").
    pub fn version(&self) -> u64 {
        text_version(self.to_text().as_bytes())
    }
}

/// The version of a partitions text (64-bit FNV-1a of its bytes): what
/// [`Partitions::version`] gives for the partitions it writes.
pub fn text_version(text: &[u8]) -> u64 {
    text.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opensm_examples_read_as_an_opensm_operator_expects() {
        let p = parse(
            "# two tenants\n\
             Default=0x7fff : ALL, SELF=full ;\n\
             ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;\n\
             ShareIO = 0x80 : 0x123453=limited,\n   0x123455=full;  # merged\n\
             Empty=0x81 : ;\n",
        )
        .unwrap();
        assert_eq!(p.list.len(), 3);
        let d = p.get(PartitionKey::DEFAULT).unwrap();
        assert_eq!(
            d.members,
            [
                (Member::All, Membership::Limited),
                (Member::Manager, Membership::Full)
            ]
        );
        let s = p.get(PartitionKey::new(0x80).unwrap()).unwrap();
        assert_eq!(s.name, "ShareIO");
        assert_eq!(
            s.members,
            [
                (Member::Node(0x123451), Membership::Full),
                (Member::Node(0x123452), Membership::Full),
                (Member::Node(0x123453), Membership::Limited),
                (Member::Node(0x123455), Membership::Full),
            ]
        );
        assert!(
            p.get(PartitionKey::new(0x81).unwrap())
                .unwrap()
                .members
                .is_empty()
        );
    }

    #[test]
    fn without_a_default_rule_everyone_is_a_limited_member_of_it() {
        let p = parse("t=0x10 : ALL_HOSTS=full ;").unwrap();
        let d = p.get(PartitionKey::DEFAULT).unwrap();
        assert_eq!(d.members[0], (Member::All, Membership::Limited));
        assert_eq!(parse("").unwrap().list.len(), 1, "an empty file");
    }

    #[test]
    fn every_error_is_named_with_its_line_and_nothing_is_guessed() {
        let errs = parse(
            "ok=0x10 : ALL ;\n\
             nokey : ALL ;\n\
             big=0x8000 : ALL ;\n\
             t=0x11, ipoib : ALL ;\n\
             u=0x12 : 0x5=sometimes, ALL_SWITCHES ;\n\
             v=0x13 : mgid=ff12::1 ;\n\
             w=0x14 ALL ;\n\
             x=0x15 : ALL",
        )
        .unwrap_err();
        let lines: Vec<usize> = errs.iter().map(|e| e.line).collect();
        assert_eq!(lines, [2, 3, 4, 5, 5, 6, 7, 8], "{errs:?}");
        let text: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert!(text[0].contains("no key"), "{text:?}");
        assert!(text[1].contains("0x0001-0x7fff"), "{text:?}");
        assert!(text[2].contains("InfiniBand flag"), "{text:?}");
        assert!(text[7].contains("closing ';'"), "{text:?}");
    }

    #[test]
    fn too_many_partitions_are_refused() {
        let text: String = (1..=MAX_PARTITIONS)
            .map(|k| format!("p{k}={k:#x} : ALL ;\n"))
            .collect();
        let errs = parse(&text).unwrap_err();
        assert!(
            errs.iter().any(|e| e.why.contains("default one")),
            "{errs:?}"
        );
        let text: String = (1..=MAX_PARTITIONS + 1)
            .map(|k| format!("p{k}={k:#x} : ALL ;\n"))
            .collect();
        assert!(parse(&text).is_err());
    }

    #[test]
    fn the_text_form_reads_back_the_same() {
        let p = parse(
            "Default=0x7fff : ALL=full ;\n\
             a=0x10, defmember=full : 0x108, ALL_ROUTERS=limited, SELF ;\n",
        )
        .unwrap();
        assert_eq!(parse(&p.to_text()).unwrap(), p);
    }
}
