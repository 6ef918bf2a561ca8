//! `mwctl discover --dot`: the network as a Graphviz graph
//! (docs/management.md "mwctl discover"). SANs are ellipses and routers
//! are boxes; each HR is an edge from its router to its SAN, labelled with
//! its address and port, and drawn red and dashed unless it is active. A
//! node that did not answer is a red dashed box, joined by a dotted edge to
//! the router whose LRT named it. `dot -Tsvg` or `neato -Tsvg` draws it.

use std::fmt::Write;

use crate::discover::{Discovery, Reached, node_type_name, state_name};

/// `s` with its backslashes and double quotes escaped, for a Graphviz
/// string.
fn escaped(s: &str) -> String {
    let mut q = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q
}

/// `s` as a Graphviz string.
fn quoted(s: &str) -> String {
    format!("\"{}\"", escaped(s))
}

/// The graph of `d` in the DOT language.
pub fn render_dot(d: &Discovery) -> String {
    let mut out = String::from(
        "graph messageway {\n  graph [overlap=false, splines=true, fontname=\"Helvetica\"];\n  \
         node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n",
    );
    for san in &d.sans {
        let id = san.id;
        let _ = writeln!(
            out,
            "  \"san-{id}\" [shape=ellipse, style=filled, fillcolor=\"#e0f2fe\", \
             label=\"SAN {id}\\ncost {} mtu {}\"];",
            san.cost, san.mtu
        );
        for m in &san.members {
            let a = m.address;
            let _ = writeln!(
                out,
                "  \"member-{a}\" [shape=ellipse, fontsize=8, label=\"{}\\n{} {a}\"];\n  \
                 \"member-{a}\" -- \"san-{id}\" [color=\"#94a3b8\"];",
                escaped(&m.description),
                node_type_name(m.node_type),
            );
        }
    }
    for r in &d.routers {
        let fill = if r.incomplete() { "#fde68a" } else { "#dcfce7" };
        // Two lines: the description, then type and identity.
        let label = format!(
            "\"{}\\n{} {:#018x}\"",
            escaped(&r.description),
            node_type_name(r.node_type),
            r.identity
        );
        let _ = writeln!(
            out,
            "  \"node-{:#018x}\" [shape=box, style=\"rounded,filled\", fillcolor=\"{fill}\", label={label}];",
            r.identity,
        );
        for h in &r.hrs {
            let Some(i) = &h.info else {
                continue;
            };
            let state = state_name(i.state);
            let look = if state == "active" {
                "color=\"#15803d\""
            } else {
                "color=\"#dc2626\", style=dashed"
            };
            let _ = writeln!(
                out,
                "  \"node-{:#018x}\" -- \"san-{}\" [{look}, label={}];",
                r.identity,
                i.san,
                quoted(&format!("{} [{}] {state}", i.address, h.port))
            );
        }
    }
    for u in &d.unanswered {
        let _ = writeln!(
            out,
            "  \"none-{}\" [shape=box, style=dashed, color=\"#dc2626\", label={}];",
            u.address,
            quoted(&format!("{} no answer", u.address))
        );
        if let Reached::Lrt { by, hr } = u.reached {
            let _ = writeln!(
                out,
                "  \"node-{by:#018x}\" -- \"none-{}\" [style=dotted, color=\"#dc2626\", label={}];",
                u.address,
                quoted(&format!("LRT of {hr}"))
            );
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::{Hr, HrInfo, Router, Unanswered};
    use rrp::Address;
    use std::time::Duration;

    fn hr(port: u8, address: u16, san: u16, state: u8) -> Hr {
        Hr {
            port,
            info: Some(HrInfo {
                address: Address(address),
                san: Address(san),
                state,
                mtu: 1500,
                cost: 1,
                manager: Address(0),
                buddies: 0,
            }),
            across: Some(vec![]),
            nodes: vec![],
            counters: None,
        }
    }

    #[test]
    fn routers_sans_hrs_and_the_silent() {
        let active = mgmt::attr::PortInfo::ACTIVE;
        let down = mgmt::attr::PortInfo::DOWN;
        let d = Discovery {
            routers: vec![
                Router {
                    partitions: None,
                    identity: 1,
                    node_type: 3,
                    level: 4,
                    described: true,
                    description: "ab \"edge\"".into(),
                    address: Address(0x0119),
                    reached: Reached::Start,
                    hrs: vec![hr(1, 0x0119, 0x0100, active), hr(2, 0x0219, 0x0200, down)],
                },
                Router {
                    partitions: None,
                    identity: 2,
                    node_type: 3,
                    level: 4,
                    described: true,
                    description: "bc".into(),
                    address: Address(0x0221),
                    reached: Reached::Lrt {
                        by: 1,
                        hr: Address(0x0219),
                    },
                    hrs: vec![hr(1, 0x0221, 0x0200, active)],
                },
            ],
            unanswered: vec![Unanswered {
                address: Address(0x0231),
                reached: Reached::Lrt {
                    by: 2,
                    hr: Address(0x0221),
                },
                status: None,
            }],
            sans: vec![],
            start_host: None,
            elapsed: Duration::from_millis(3),
        };
        let mut d = d;
        d.sans = crate::discover_sans::sans_of_routers(&d);
        d.sans[0].members.push(crate::discover::Member {
            partitions: None,
            address: Address(0x0100),
            identity: 0x100,
            node_type: 1,
            level: 2,
            description: "H0".into(),
            described: true,
            source: crate::discover::MemberSource::Manager(Address(0x0100)),
        });
        let g = render_dot(&d);
        assert!(g.starts_with("graph messageway {"), "{g}");
        assert!(g.trim_end().ends_with('}'));
        for want in [
            "\"san-0x0100\" [shape=ellipse",
            "\"san-0x0200\" [shape=ellipse",
            "\"node-0x0000000000000001\" [shape=box",
            "ab \\\"edge\\\"\\nrouter 0x0000000000000001",
            "\"node-0x0000000000000001\" -- \"san-0x0100\" [color=\"#15803d\", label=\"0x0119 [1] active\"]",
            "\"node-0x0000000000000001\" -- \"san-0x0200\" [color=\"#dc2626\", style=dashed, label=\"0x0219 [2] down\"]",
            "\"node-0x0000000000000002\" -- \"san-0x0200\"",
            "\"none-0x0231\" [shape=box, style=dashed",
            "\"member-0x0100\" [shape=ellipse, fontsize=8, label=\"H0\\nhost 0x0100\"]",
            "\"member-0x0100\" -- \"san-0x0100\"",
            "\"node-0x0000000000000002\" -- \"none-0x0231\" [style=dotted",
        ] {
            assert!(g.contains(want), "missing {want}:\n{g}");
        }
        // Each SAN once, each HR once, each member once.
        assert_eq!(g.matches("[shape=ellipse, style=filled").count(), 2);
        assert_eq!(
            g.matches(" -- \"san-").count(),
            3 + 1,
            "three HRs and the member"
        );
    }
}
