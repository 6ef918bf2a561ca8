//! `mwctl links`: InfiniBand's iblinkinfo for MessageWay (docs/management.md
//! "mwctl links", docs/spec-notes.md 69). Every HR of every router the
//! walk of `mwctl discover` finds, a line each: its state, SAN, MTU, cost
//! and buddies, and the routers across its SAN (the routers its LRT lists,
//! by their HR on that SAN, with the router and port that HR is when the
//! walk read it). Nodes that did not answer are listed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

use admin::ClientError;
use clap::Args;
use rrp::Address;
use serde_json::{Value, json};

use crate::Cli;
use crate::discover::{Discovery, Router, hr_json, router_json, state_name, unanswered_json};
use crate::sweep::node_title;
use crate::walk_args::WalkArgs;

/// `mwctl links`.
#[derive(Debug, Clone, Args)]
#[command(after_help = "\
Walks the routers in band as `mwctl discover` does and prints a line per HR,
as iblinkinfo prints a line per port: state, SAN, MTU, cost, buddies, and the
routers across its SAN (their HR there, router and port).

Exit status: 0 every router answered, 1 some did not (listed as such),
2 bad arguments, 3 mwrouterd cannot be reached.

Examples:
  mwctl links
  mwctl links 0x0119 -t 500
  mwctl --json links")]
pub struct LinksArgs {
    /// Where the walk starts and how each request is sent.
    #[command(flatten)]
    pub walk: WalkArgs,
}

/// An HR as the walk read it: the router it is an HR of, and its port.
struct Known<'a> {
    router: &'a Router,
    port: u8,
}

/// Every HR address the walk read, to the router and port it is.
fn known(d: &Discovery) -> BTreeMap<Address, Known<'_>> {
    d.routers
        .iter()
        .flat_map(|r| {
            r.hrs.iter().filter_map(move |h| {
                h.info.as_ref().map(|i| {
                    (
                        i.address,
                        Known {
                            router: r,
                            port: h.port,
                        },
                    )
                })
            })
        })
        .collect()
}

/// The text: a block per router (`router ID "NAME" level B (read at
/// ADDR)`), a line per HR, then the nodes that did not answer and the
/// summary.
pub fn render_text(d: &Discovery) -> String {
    let known = known(d);
    let mut out = String::new();
    for r in &d.routers {
        let _ = writeln!(
            out,
            "{} ({} HRs, read at {})",
            node_title(r),
            r.hrs.len(),
            r.address
        );
        for h in &r.hrs {
            let mut line = match &h.info {
                Some(i) => format!(
                    "  [{}] {} {} san {} mtu {} cost {} buddies {}",
                    h.port,
                    i.address,
                    state_name(i.state),
                    i.san,
                    i.mtu,
                    i.cost,
                    i.buddies
                ),
                None => format!("  [{}] PortInfo not answered", h.port),
            };
            line.push_str(" ==> ");
            match &h.across {
                None => line.push_str("(LRT not answered)"),
                Some(a) if a.is_empty() => line.push_str("(no router across)"),
                Some(a) => {
                    let across: Vec<String> = a
                        .iter()
                        .map(|x| match known.get(x) {
                            Some(k) => format!("{x} [{}] \"{}\"", k.port, k.router.description),
                            None => format!("{x} (not read)"),
                        })
                        .collect();
                    line.push_str(&across.join(", "));
                }
            }
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    for u in &d.unanswered {
        let _ = write!(
            out,
            "no answer from {} (reached by {})",
            u.address,
            u.reached.text()
        );
        if let Some(s) = u.status {
            let _ = write!(out, ": status {s:#06x}");
        }
        out.push('\n');
    }
    if !d.unanswered.is_empty() {
        out.push('\n');
    }
    out.push_str(&summary(d));
    out.push('\n');
    out
}

/// `N routers, K HRs (A active), L links across, U did not answer (T ms)`:
/// a link is an HR and a router across it, counted from each end.
fn summary(d: &Discovery) -> String {
    let infos = d.routers.iter().flat_map(|r| r.hrs.iter());
    let active = infos
        .clone()
        .filter_map(|h| h.info.as_ref())
        .filter(|i| i.state == mgmt::attr::PortInfo::ACTIVE)
        .count();
    let links: usize = infos.filter_map(|h| h.across.as_ref()).map(Vec::len).sum();
    format!(
        "{} routers, {} HRs ({} active), {} links across, {} did not answer ({} ms)",
        d.routers.len(),
        d.hr_count(),
        active,
        links,
        d.unanswered.len(),
        d.elapsed.as_millis()
    )
}

/// The `--json` object: `routers` (each with its `hrs` and, for each, the
/// routers `across`), `unanswered`, `counts` and `elapsed_ms`. Numbers are
/// kept beside their names (`node_type` and `node_type_name`, `level` and
/// `level_name`, `state` and `state_name`).
pub fn to_json(d: &Discovery) -> Value {
    let known = known(d);
    let routers: Vec<Value> = d
        .routers
        .iter()
        .map(|r| {
            let hrs: Vec<Value> = r
                .hrs
                .iter()
                .map(|h| {
                    let mut v = hr_json(h);
                    if let Some(i) = &h.info {
                        v["buddies"] = json!(i.buddies);
                    }
                    v["across"] = match &h.across {
                        None => Value::Null,
                        Some(a) => a
                            .iter()
                            .map(|x| match known.get(x) {
                                Some(k) => json!({
                                    "address": x,
                                    "router": format!("{:#018x}", k.router.identity),
                                    "description": k.router.description,
                                    "port": k.port,
                                }),
                                None => json!({"address": x, "router": null}),
                            })
                            .collect(),
                    };
                    v
                })
                .collect();
            router_json(r, hrs)
        })
        .collect();
    let unanswered = unanswered_json(d);
    let links: usize = d
        .routers
        .iter()
        .flat_map(|r| r.hrs.iter())
        .filter_map(|h| h.across.as_ref())
        .map(Vec::len)
        .sum();
    json!({
        "routers": routers,
        "unanswered": unanswered,
        "counts": {
            "routers": d.routers.len(),
            "hrs": d.hr_count(),
            "links": links,
            "unanswered": d.unanswered.len(),
        },
        "elapsed_ms": u64::try_from(d.elapsed.as_millis()).unwrap_or(u64::MAX),
    })
}

/// Runs `mwctl links`; returns the exit status (as `mwctl discover`'s).
pub fn run(
    cli: &Cli,
    args: &LinksArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, ClientError> {
    let d = crate::sweep::walk(cli, &args.walk)?;
    let json = cli.json.then(|| to_json(&d));
    crate::sweep::print(out, err, json.as_ref(), || render_text(&d), d.shortfall())?;
    Ok(d.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::{Hr, HrInfo, Reached, Unanswered};
    use mgmt::attr::PortInfo;
    use std::time::Duration;

    fn hr(port: u8, address: u16, san: u16, state: u8, across: Option<Vec<u16>>) -> Hr {
        Hr {
            port,
            info: Some(HrInfo {
                address: Address(address),
                san: Address(san),
                state,
                mtu: 1500,
                cost: 1,
                manager: Address(0),
                buddies: across.as_ref().map_or(0, |a| a.len() as u64),
            }),
            across: across.map(|a| a.into_iter().map(Address).collect()),
            nodes: vec![],
            counters: None,
        }
    }

    /// a and b share SAN 0x0601; b's second HR is down and names c, which
    /// did not answer; a's second HR's LRT was not answered.
    fn fabric() -> Discovery {
        Discovery {
            routers: vec![
                Router {
                    partitions: None,
                    identity: 0xa,
                    node_type: 3,
                    level: 2,
                    description: "a".into(),
                    described: true,
                    address: Address(0x0511),
                    reached: Reached::Start,
                    hrs: vec![
                        hr(0, 0x0511, 0x0601, PortInfo::ACTIVE, Some(vec![0x0521])),
                        hr(1, 0x0512, 0x0602, PortInfo::ACTIVE, None),
                    ],
                },
                Router {
                    partitions: None,
                    identity: 0xb,
                    node_type: 3,
                    level: 3,
                    description: "b".into(),
                    described: true,
                    address: Address(0x0521),
                    reached: Reached::Lrt {
                        by: 0xa,
                        hr: Address(0x0511),
                    },
                    hrs: vec![
                        hr(0, 0x0521, 0x0601, PortInfo::ACTIVE, Some(vec![0x0511])),
                        hr(1, 0x0522, 0x0603, PortInfo::DOWN, Some(vec![0x0531])),
                        Hr {
                            port: 2,
                            info: None,
                            across: Some(vec![]),
                            nodes: vec![],
                            counters: None,
                        },
                    ],
                },
            ],
            unanswered: vec![Unanswered {
                address: Address(0x0531),
                reached: Reached::Lrt {
                    by: 0xb,
                    hr: Address(0x0522),
                },
                status: None,
            }],
            elapsed: Duration::from_millis(7),
            ..Discovery::default()
        }
    }

    #[test]
    fn every_hr_and_the_router_across_it() {
        let d = fabric();
        let text = render_text(&d);
        assert!(
            text.contains("router 0x000000000000000b \"b\" level C (3 HRs, read at 0x0521)"),
            "{text}"
        );
        assert!(
            text.contains(
                "  [0] 0x0511 active san 0x0601 mtu 1500 cost 1 buddies 1 ==> 0x0521 [0] \"b\"\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  [1] 0x0512 active san 0x0602 mtu 1500 cost 1 buddies 0 ==> (LRT not answered)"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  [1] 0x0522 down san 0x0603 mtu 1500 cost 1 buddies 1 ==> 0x0531 (not read)"
            ),
            "{text}"
        );
        assert!(
            text.contains("  [2] PortInfo not answered ==> (no router across)"),
            "{text}"
        );
        assert!(
            text.contains("no answer from 0x0531 (reached by LRT of 0x0522"),
            "{text}"
        );
        assert!(
            text.contains("2 routers, 5 HRs (3 active), 3 links across, 1 did not answer (7 ms)"),
            "{text}"
        );
        assert_eq!(d.exit_code(), 1);
    }

    #[test]
    fn json_keeps_numbers_beside_names() {
        let v = to_json(&fabric());
        let b = &v["routers"][1];
        assert_eq!(b["node_type"], 3);
        assert_eq!(b["node_type_name"], "router");
        assert_eq!(b["level"], 3);
        assert_eq!(b["level_name"], "C");
        assert_eq!(b["hrs"][1]["state"], PortInfo::DOWN);
        assert_eq!(b["hrs"][1]["state_name"], "down");
        assert_eq!(b["hrs"][1]["across"][0]["router"], Value::Null);
        assert_eq!(b["hrs"][0]["across"][0]["address"], "0x0511");
        assert_eq!(b["hrs"][0]["across"][0]["description"], "a");
        assert_eq!(b["hrs"][0]["across"][0]["port"], 0);
        assert_eq!(v["routers"][0]["hrs"][1]["across"], Value::Null);
        assert_eq!(v["unanswered"][0]["address"], "0x0531");
        assert_eq!(v["counts"]["links"], 3);
        assert_eq!(v["counts"]["unanswered"], 1);
    }
}
