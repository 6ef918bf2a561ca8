//! `mwctl discover --diff FILE`: the live network against a saved one
//! (docs/management.md "mwctl discover"), as ibnetdiscover's `--diff`.
//! Routers are matched by identity, their HRs by port, SANs by SAN-ID and
//! their nodes by identity. What is reported: routers and nodes gone or
//! new, HRs gone, new, or no longer active, and an HR's or node's address,
//! an HR's SAN, costs and MTUs, and a router's or node's partitions
//! changed (when both walks read them). A router gone that an address
//! of it did not answer says so; a SAN gone brings its nodes with it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rrp::Address;
use serde_json::{Value, json};

use crate::discover::state_name;
use crate::discover_cache::{SavedHr, SavedRouter, SavedSan, Snapshot};
use crate::discover_partitions::{Table, text};

/// One difference between the saved network and the live one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A saved router is not in the live network.
    RouterGone {
        /// Its identity and description.
        router: (String, String),
        /// Its HR addresses.
        hrs: Vec<Address>,
        /// An HR address that was tried and did not answer.
        no_answer: Option<Address>,
    },
    /// A router that was not saved.
    RouterNew {
        /// Its identity and description.
        router: (String, String),
        /// Its HR addresses.
        hrs: Vec<Address>,
    },
    /// An HR of a router in both is in one only.
    Hr {
        /// The router's identity and description.
        router: (String, String),
        /// The port.
        port: u8,
        /// Its address.
        address: Address,
        /// Whether it is new (else gone).
        new: bool,
    },
    /// A field of an HR in both changed.
    HrField {
        /// The router's identity and description.
        router: (String, String),
        /// The port.
        port: u8,
        /// The HR's address now.
        address: Address,
        /// `state`, `address`, `san`, `cost` or `mtu`.
        field: &'static str,
        /// Before.
        from: String,
        /// Now.
        to: String,
    },
    /// A saved SAN no HR is on any more, or a new one.
    San {
        /// SAN-ID.
        id: Address,
        /// Whether it is new (else gone).
        new: bool,
    },
    /// A SAN's cost or MTU changed.
    SanField {
        /// SAN-ID.
        id: Address,
        /// `cost` or `mtu`.
        field: &'static str,
        /// Before.
        from: u64,
        /// Now.
        to: u64,
    },
    /// A node of a SAN in one only.
    Node {
        /// The SAN.
        san: Address,
        /// Its identity and description.
        node: (String, String),
        /// Its address.
        address: Address,
        /// Whether it is new (else gone).
        new: bool,
    },
    /// A node's address changed.
    NodeAddress {
        /// The SAN.
        san: Address,
        /// Its identity and description.
        node: (String, String),
        /// Before.
        from: Address,
        /// Now.
        to: Address,
    },
    /// A router's or node's own partitions changed.
    Partitions {
        /// The node's SAN; `None` for a router.
        san: Option<Address>,
        /// Its identity and description.
        node: (String, String),
        /// Before, as text (`0x0010 0x7fff(limited)`).
        from: String,
        /// Now.
        to: String,
    },
}

/// The change of the partitions of `node` (on `san`, or a router), when
/// both walks read them and they differ.
fn partitions(
    san: Option<Address>,
    node: (String, String),
    was: &Option<Table>,
    is: &Option<Table>,
    out: &mut Vec<Change>,
) {
    if let (Some(was), Some(is)) = (was, is)
        && was != is
    {
        out.push(Change::Partitions {
            san,
            node,
            from: text(Some(was)),
            to: text(Some(is)),
        });
    }
}

fn named(r: &SavedRouter) -> (String, String) {
    (r.identity.clone(), r.description.clone())
}

fn hr_fields(router: &SavedRouter, was: &SavedHr, is: &SavedHr, out: &mut Vec<Change>) {
    let mut field = |field: &'static str, from: String, to: String| {
        if from != to {
            out.push(Change::HrField {
                router: named(router),
                port: is.port,
                address: is.address,
                field,
                from,
                to,
            });
        }
    };
    field(
        "state",
        state_name(was.state).into(),
        state_name(is.state).into(),
    );
    field("address", was.address.to_string(), is.address.to_string());
    field("san", was.san.to_string(), is.san.to_string());
    field("cost", was.cost.to_string(), is.cost.to_string());
    field("mtu", was.mtu.to_string(), is.mtu.to_string());
}

fn san_fields(was: &SavedSan, is: &SavedSan, out: &mut Vec<Change>) {
    for (field, from, to) in [("cost", was.cost, is.cost), ("mtu", was.mtu, is.mtu)] {
        if from != to {
            out.push(Change::SanField {
                id: is.id,
                field,
                from,
                to,
            });
        }
    }
    let before: BTreeMap<&str, _> = was.nodes.iter().map(|n| (n.identity.as_str(), n)).collect();
    let now: BTreeMap<&str, _> = is.nodes.iter().map(|n| (n.identity.as_str(), n)).collect();
    for (id, n) in &before {
        match now.get(id) {
            None => out.push(Change::Node {
                san: is.id,
                node: (n.identity.clone(), n.description.clone()),
                address: n.address,
                new: false,
            }),
            Some(m) => {
                if m.address != n.address {
                    out.push(Change::NodeAddress {
                        san: is.id,
                        node: (n.identity.clone(), m.description.clone()),
                        from: n.address,
                        to: m.address,
                    });
                }
                partitions(
                    Some(is.id),
                    (n.identity.clone(), m.description.clone()),
                    &n.partitions,
                    &m.partitions,
                    out,
                );
            }
        }
    }
    for (id, n) in &now {
        if !before.contains_key(id) {
            out.push(Change::Node {
                san: is.id,
                node: (n.identity.clone(), n.description.clone()),
                address: n.address,
                new: true,
            });
        }
    }
}

/// The differences from `was` (the saved network) to `is` (the live one).
pub fn diff(was: &Snapshot, is: &Snapshot) -> Vec<Change> {
    let mut out = Vec::new();
    let now: BTreeMap<&str, &SavedRouter> = is
        .routers
        .iter()
        .map(|r| (r.identity.as_str(), r))
        .collect();
    let before: BTreeMap<&str, &SavedRouter> = was
        .routers
        .iter()
        .map(|r| (r.identity.as_str(), r))
        .collect();
    for r in &was.routers {
        let Some(n) = now.get(r.identity.as_str()) else {
            let hrs: Vec<Address> = r.hrs.iter().map(|h| h.address).collect();
            out.push(Change::RouterGone {
                router: named(r),
                no_answer: hrs.iter().copied().find(|a| is.unanswered.contains(a)),
                hrs,
            });
            continue;
        };
        partitions(None, named(n), &r.partitions, &n.partitions, &mut out);
        for h in &r.hrs {
            match n.hrs.iter().find(|x| x.port == h.port) {
                Some(x) => hr_fields(n, h, x, &mut out),
                None => out.push(Change::Hr {
                    router: named(n),
                    port: h.port,
                    address: h.address,
                    new: false,
                }),
            }
        }
        for x in n
            .hrs
            .iter()
            .filter(|x| !r.hrs.iter().any(|h| h.port == x.port))
        {
            out.push(Change::Hr {
                router: named(n),
                port: x.port,
                address: x.address,
                new: true,
            });
        }
    }
    for r in is
        .routers
        .iter()
        .filter(|r| !before.contains_key(r.identity.as_str()))
    {
        out.push(Change::RouterNew {
            router: named(r),
            hrs: r.hrs.iter().map(|h| h.address).collect(),
        });
    }
    for s in &was.sans {
        match is.sans.iter().find(|x| x.id == s.id) {
            Some(x) => san_fields(s, x, &mut out),
            None => {
                out.push(Change::San {
                    id: s.id,
                    new: false,
                });
                out.extend(s.nodes.iter().map(|n| Change::Node {
                    san: s.id,
                    node: (n.identity.clone(), n.description.clone()),
                    address: n.address,
                    new: false,
                }));
            }
        }
    }
    for s in is
        .sans
        .iter()
        .filter(|s| !was.sans.iter().any(|x| x.id == s.id))
    {
        out.push(Change::San {
            id: s.id,
            new: true,
        });
    }
    out
}

fn router_text((id, desc): &(String, String)) -> String {
    format!("router {id} \"{desc}\"")
}

fn addresses(a: &[Address]) -> String {
    a.iter()
        .map(Address::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per change: `-` gone, `+` new, `~` changed.
pub fn render_text(changes: &[Change]) -> String {
    let mut out = String::new();
    for c in changes {
        let _ = match c {
            Change::RouterGone {
                router,
                hrs,
                no_answer,
            } => {
                let why = no_answer.map_or(String::new(), |a| format!(", no answer at {a}"));
                writeln!(
                    out,
                    "- {} gone (HRs {}){why}",
                    router_text(router),
                    addresses(hrs)
                )
            }
            Change::RouterNew { router, hrs } => writeln!(
                out,
                "+ {} new (HRs {})",
                router_text(router),
                addresses(hrs)
            ),
            Change::Hr {
                router,
                port,
                address,
                new,
            } => writeln!(
                out,
                "{} {} [{port}] {address} {}",
                if *new { '+' } else { '-' },
                router_text(router),
                if *new { "new" } else { "gone" }
            ),
            Change::HrField {
                router,
                port,
                address,
                field,
                from,
                to,
            } => writeln!(
                out,
                "~ {} [{port}] {address} {field} {from} -> {to}",
                router_text(router)
            ),
            Change::San { id, new } => writeln!(
                out,
                "{} san {id} {}",
                if *new { '+' } else { '-' },
                if *new { "new" } else { "gone" }
            ),
            Change::SanField {
                id,
                field,
                from,
                to,
            } => writeln!(out, "~ san {id} {field} {from} -> {to}"),
            Change::Node {
                san,
                node: (id, desc),
                address,
                new,
            } => writeln!(
                out,
                "{} node {id} \"{desc}\" {address} on san {san} {}",
                if *new { '+' } else { '-' },
                if *new { "new" } else { "gone" }
            ),
            Change::NodeAddress {
                san,
                node: (id, desc),
                from,
                to,
            } => writeln!(
                out,
                "~ node {id} \"{desc}\" on san {san} address {from} -> {to}"
            ),
            Change::Partitions {
                san: None,
                node,
                from,
                to,
            } => writeln!(out, "~ {} partitions {from} -> {to}", router_text(node)),
            Change::Partitions {
                san: Some(san),
                node: (id, desc),
                from,
                to,
            } => writeln!(
                out,
                "~ node {id} \"{desc}\" on san {san} partitions {from} -> {to}"
            ),
        };
    }
    out
}

/// The changes as `--json` gives them: each an object with `change`
/// (`gone`, `new`, `changed`), `what` (`router`, `hr`, `san`, `node`) and
/// its fields.
pub fn to_json(changes: &[Change]) -> Value {
    let router = |(id, desc): &(String, String)| json!({"identity": id, "description": desc});
    let kind = |new: bool| if new { "new" } else { "gone" };
    Value::Array(
        changes
            .iter()
            .map(|c| match c {
                Change::RouterGone {
                    router: r,
                    hrs,
                    no_answer,
                } => json!({"change": "gone", "what": "router", "router": router(r),
                            "hrs": hrs, "no_answer_at": no_answer}),
                Change::RouterNew { router: r, hrs } => {
                    json!({"change": "new", "what": "router", "router": router(r), "hrs": hrs})
                }
                Change::Hr {
                    router: r,
                    port,
                    address,
                    new,
                } => json!({"change": kind(*new), "what": "hr", "router": router(r),
                            "port": port, "address": address}),
                Change::HrField {
                    router: r,
                    port,
                    address,
                    field,
                    from,
                    to,
                } => json!({"change": "changed", "what": "hr", "router": router(r),
                            "port": port, "address": address, "field": field,
                            "from": from, "to": to}),
                Change::San { id, new } => json!({"change": kind(*new), "what": "san", "id": id}),
                Change::SanField {
                    id,
                    field,
                    from,
                    to,
                } => json!({"change": "changed", "what": "san", "id": id, "field": field,
                            "from": from, "to": to}),
                Change::Node {
                    san,
                    node,
                    address,
                    new,
                } => json!({"change": kind(*new), "what": "node", "san": san,
                            "node": router(node), "address": address}),
                Change::NodeAddress {
                    san,
                    node,
                    from,
                    to,
                } => {
                    json!({"change": "changed", "what": "node", "san": san, "node": router(node),
                           "field": "address", "from": from, "to": to})
                }
                Change::Partitions {
                    san: None,
                    node,
                    from,
                    to,
                } => json!({"change": "changed", "what": "router", "router": router(node),
                            "field": "partitions", "from": from, "to": to}),
                Change::Partitions {
                    san: Some(san),
                    node,
                    from,
                    to,
                } => json!({"change": "changed", "what": "node", "san": san, "node": router(node),
                            "field": "partitions", "from": from, "to": to}),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover_cache::{FORMAT, SavedNode};
    use mgmt::attr::PortInfo;

    fn hr(port: u8, address: u16, san: u16) -> SavedHr {
        SavedHr {
            port,
            address: Address(address),
            san: Address(san),
            state: PortInfo::ACTIVE,
            mtu: 1500,
            cost: 1,
        }
    }

    fn router(id: u64, name: &str, hrs: Vec<SavedHr>) -> SavedRouter {
        SavedRouter {
            partitions: None,
            identity: crate::discover_cache::identity_text(id),
            description: name.into(),
            hrs,
        }
    }

    fn san(id: u16, nodes: Vec<(u64, u16, &str)>) -> SavedSan {
        SavedSan {
            id: Address(id),
            cost: 1,
            mtu: 1500,
            nodes: nodes
                .into_iter()
                .map(|(i, a, d)| SavedNode {
                    partitions: None,
                    identity: crate::discover_cache::identity_text(i),
                    address: Address(a),
                    description: d.into(),
                })
                .collect(),
        }
    }

    fn yesterday() -> Snapshot {
        Snapshot {
            format: FORMAT,
            taken_unix_s: 0,
            routers: vec![
                router(1, "ab", vec![hr(0, 0x0115, 0x0201), hr(1, 0x0116, 0x0202)]),
                router(2, "de", vec![hr(0, 0x0121, 0x0204), hr(1, 0x0122, 0x0205)]),
            ],
            sans: vec![
                san(0x0201, vec![(0x10, 0x0100, "H0")]),
                san(0x0202, vec![]),
                san(0x0204, vec![]),
                san(0x0205, vec![(0x18, 0x0108, "H8"), (0x19, 0x0109, "H9")]),
            ],
            unanswered: vec![],
        }
    }

    #[test]
    fn the_same_network_has_no_difference() {
        assert!(diff(&yesterday(), &yesterday()).is_empty());
    }

    #[test]
    fn a_router_gone_names_its_hrs_and_what_went_with_it() {
        let mut today = yesterday();
        today.routers.remove(1);
        today.sans.retain(|s| s.id != Address(0x0205));
        today.unanswered = vec![Address(0x0121)];
        let c = diff(&yesterday(), &today);
        let text = render_text(&c);
        assert_eq!(
            text,
            "- router 0x0000000000000002 \"de\" gone (HRs 0x0121, 0x0122), no answer at 0x0121\n\
             - san 0x0205 gone\n\
             - node 0x0000000000000018 \"H8\" 0x0108 on san 0x0205 gone\n\
             - node 0x0000000000000019 \"H9\" 0x0109 on san 0x0205 gone\n"
        );
        let v = to_json(&c);
        assert_eq!(v[0]["what"], "router");
        assert_eq!(v[0]["change"], "gone");
        assert_eq!(v[0]["hrs"], json!(["0x0121", "0x0122"]));
    }

    #[test]
    fn hrs_down_addresses_costs_and_nodes_changed_are_each_a_line() {
        let mut today = yesterday();
        today.routers[0].hrs[1].state = PortInfo::DOWN;
        today.routers[0].hrs[1].cost = 5;
        today.routers[1].hrs.push(hr(2, 0x0123, 0x0206));
        today
            .routers
            .push(router(3, "ef", vec![hr(0, 0x0124, 0x0206)]));
        today.sans.push(san(0x0206, vec![]));
        today.sans[0].mtu = 9000;
        today.sans[3].nodes[0].address = Address(0x010a);
        today.sans[3].nodes.remove(1);
        today.sans[1].nodes.push(SavedNode {
            partitions: None,
            identity: crate::discover_cache::identity_text(0x20),
            address: Address(0x0102),
            description: "H2".into(),
        });
        let text = render_text(&diff(&yesterday(), &today));
        for want in [
            "~ router 0x0000000000000001 \"ab\" [1] 0x0116 state active -> down\n",
            "~ router 0x0000000000000001 \"ab\" [1] 0x0116 cost 1 -> 5\n",
            "+ router 0x0000000000000002 \"de\" [2] 0x0123 new\n",
            "+ router 0x0000000000000003 \"ef\" new (HRs 0x0124)\n",
            "~ san 0x0201 mtu 1500 -> 9000\n",
            "+ node 0x0000000000000020 \"H2\" 0x0102 on san 0x0202 new\n",
            "~ node 0x0000000000000018 \"H8\" on san 0x0205 address 0x0108 -> 0x010a\n",
            "- node 0x0000000000000019 \"H9\" 0x0109 on san 0x0205 gone\n",
            "+ san 0x0206 new\n",
        ] {
            assert!(text.contains(want), "missing {want}in:\n{text}");
        }
        assert_eq!(text.lines().count(), 9, "{text}");
    }

    #[test]
    fn partitions_changed_are_a_line_and_unknown_ones_no_difference() {
        use mgmt::partition::{Membership, PartitionKey};
        let key = |k| PartitionKey::new(k).unwrap();
        let mut was = yesterday();
        was.routers[0].partitions = Some(vec![(key(0x7fff), Membership::Full)]);
        was.sans[3].nodes[0].partitions = Some(vec![(key(0x7fff), Membership::Full)]);
        let mut is = was.clone();
        is.routers[0].partitions = Some(vec![
            (key(0x10), Membership::Limited),
            (key(0x7fff), Membership::Full),
        ]);
        is.sans[3].nodes[0].partitions = Some(vec![(key(0x10), Membership::Full)]);
        let changes = diff(&was, &is);
        let text = render_text(&changes);
        assert_eq!(
            text,
            "~ router 0x0000000000000001 \"ab\" partitions 0x7fff -> 0x0010(limited) 0x7fff\n\
             ~ node 0x0000000000000018 \"H8\" on san 0x0205 partitions 0x7fff -> 0x0010\n"
        );
        assert_eq!(to_json(&changes)[1]["field"], "partitions");
        // A walk (or an older cache) without them: nothing to compare.
        let mut unknown = is.clone();
        unknown.routers[0].partitions = None;
        unknown.sans[3].nodes[0].partitions = None;
        assert_eq!(diff(&was, &unknown), []);
        assert_eq!(diff(&unknown, &is), []);
    }

    #[test]
    fn a_snapshot_is_saved_and_read_back_and_a_foreign_file_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("net.json");
        yesterday().save(&p).unwrap();
        assert_eq!(Snapshot::load(&p).unwrap(), yesterday());
        std::fs::write(&p, "{\"format\": 9}").unwrap();
        assert!(Snapshot::load(&p).unwrap_err().0.contains("not a cache"));
        let mut other = yesterday();
        other.format = 2;
        other.save(&p).unwrap();
        assert!(Snapshot::load(&p).unwrap_err().0.contains("format 2"));
        assert!(Snapshot::load(&dir.path().join("none")).is_err());
    }
}
