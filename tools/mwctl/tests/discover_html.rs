//! `mwctl discover --html` in a real browser: the page of a discovery of
//! Appendix B's network (seven routers, SANs A-E; built here in the shape
//! the walk gives, with its ten hosts, ad's HR on SAN A down and a node
//! that did not answer) is loaded by headless Chromium, and the DOM it
//! builds holds every router, SAN and host. Skipped, visibly, where Chromium is not
//! installed (Debian's `chromium`; scripts/test.sh installs it).
//!
//! With `MWCTL_DISCOVER_SCREENSHOT=FILE` the test also saves Chromium's
//! screenshot of the page there (docs/images/discover-map.png was taken
//! the same way, of the page mwctl wrote in an mwlab of Appendix B).

use std::path::PathBuf;
use std::time::Duration;

use mgmt::attr::{PortCounters, PortInfo};
use mwctl::discover::{Discovery, Hr, HrInfo, Member, MemberSource, Reached, Router, Unanswered};
use rrp::Address;

/// Appendix B's routers: name, HRs (address, SAN).
const ROUTERS: [(&str, [(u16, u16); 2]); 7] = [
    ("ab", [(0x0115, 0x0201), (0x0116, 0x0202)]),
    ("ac", [(0x0117, 0x0201), (0x0118, 0x0203)]),
    ("ad", [(0x0119, 0x0201), (0x011a, 0x0204)]),
    ("bd1", [(0x011b, 0x0202), (0x011c, 0x0204)]),
    ("bd2", [(0x011d, 0x0202), (0x011e, 0x0204)]),
    ("cd", [(0x011f, 0x0203), (0x0120, 0x0204)]),
    ("de", [(0x0121, 0x0204), (0x0122, 0x0205)]),
];

/// Appendix B's hosts: name, address, SAN.
const HOSTS: [(&str, u16, u16); 10] = [
    ("H0", 0x0100, 0x0201),
    ("H1", 0x0101, 0x0201),
    ("H2", 0x0102, 0x0202),
    ("H3", 0x0103, 0x0202),
    ("H4", 0x0104, 0x0203),
    ("H5", 0x0105, 0x0203),
    ("H6", 0x0106, 0x0204),
    ("H7", 0x0107, 0x0204),
    ("H8", 0x0108, 0x0205),
    ("H9", 0x0109, 0x0205),
];

fn identity(i: usize) -> u64 {
    0x4d57_0000_0000_0000 | (0x100 + i as u64)
}

/// The walk from ab, as it finds Appendix B: each router read at its HR on
/// the SAN it was reached across; ad's HR on SAN A down (as
/// docs/management.md's `port_state=down` leaves it), a few errors, and
/// one address on SAN E that did not answer.
fn appendix_b() -> Discovery {
    let on = |san: u16| -> Vec<(u16, usize)> {
        ROUTERS
            .iter()
            .enumerate()
            .flat_map(|(i, (_, hrs))| {
                hrs.iter()
                    .filter(move |h| h.1 == san)
                    .map(move |h| (h.0, i))
            })
            .collect()
    };
    let errors = |hr: u16| -> u64 {
        match hr {
            0x011a => 3,
            0x0120 => 12,
            _ => 0,
        }
    };
    // (reached by router index, across which HR)
    let reached = [
        None,
        Some((0, 0x0115)),
        Some((0, 0x0115)),
        Some((0, 0x0116)),
        Some((0, 0x0116)),
        Some((1, 0x0118)),
        Some((2, 0x011a)),
    ];
    let routers = ROUTERS
        .iter()
        .enumerate()
        .map(|(i, (name, hrs))| {
            let hrs: Vec<Hr> = hrs
                .iter()
                .enumerate()
                .map(|(port, &(a, san))| {
                    let mut counters = vec![0u64; PortCounters::COUNT];
                    counters[0] = 5000 + u64::from(a);
                    counters[PortCounters::FIRST_DROP + 5] = errors(a);
                    Hr {
                        port: port as u8,
                        info: Some(HrInfo {
                            address: Address(a),
                            san: Address(san),
                            state: if a == 0x0119 {
                                PortInfo::DOWN
                            } else {
                                PortInfo::ACTIVE
                            },
                            mtu: 1500,
                            cost: 1,
                            manager: Address(0x0100),
                            buddies: 0,
                        }),
                        across: Some(
                            on(san)
                                .into_iter()
                                .filter(|&(x, _)| x != a)
                                .map(|(x, _)| Address(x))
                                .collect(),
                        ),
                        nodes: HOSTS
                            .iter()
                            .filter(|h| h.2 == san)
                            .map(|h| Address(h.1))
                            .collect(),
                        counters: Some(PortCounters {
                            port_select: port as u8,
                            counters,
                        }),
                    }
                })
                .collect();
            let (address, reached) = match reached[i] {
                None => (Address(0x0115), Reached::Start),
                Some((by, hr)) => {
                    let san = ROUTERS[by].1.iter().find(|h| h.0 == hr).unwrap().1;
                    let me = ROUTERS[i].1.iter().find(|h| h.1 == san).unwrap().0;
                    (
                        Address(me),
                        Reached::Lrt {
                            by: identity(by),
                            hr: Address(hr),
                        },
                    )
                }
            };
            Router {
                partitions: None,
                identity: identity(i),
                node_type: 3,
                level: 3,
                description: (*name).to_string(),
                described: true,
                address,
                reached,
                hrs,
            }
        })
        .collect();
    let mut d = Discovery {
        routers,
        unanswered: vec![Unanswered {
            address: Address(0x0123),
            reached: Reached::Lrt {
                by: identity(6),
                hr: Address(0x0122),
            },
            status: None,
        }],
        elapsed: Duration::from_millis(41),
        ..Discovery::default()
    };
    // The SANs, and their hosts as SAN A's manager H0 records them.
    d.sans = mwctl::discover_sans::sans_of_routers(&d);
    for san in &mut d.sans {
        san.manager = Some(Address(0x0100));
        san.members = HOSTS
            .iter()
            .filter(|h| h.2 == san.id.0)
            .map(|&(name, a, _)| Member {
                partitions: None,
                address: Address(a),
                identity: 0x4d57_0000_0001_0000 | u64::from(a),
                node_type: 1,
                level: 2,
                description: name.to_string(),
                described: true,
                source: MemberSource::Manager(Address(0x0100)),
            })
            .collect();
    }
    d
}

#[test]
fn chromium_reads_every_router_and_san_of_appendix_b() {
    let Some(bin) = testkit::chromium::find() else {
        testkit::skip(
            "mwctl::discover_html::chromium",
            "chromium is not installed (apt-get install chromium)",
        );
        return;
    };
    let d = appendix_b();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("discover.html");
    std::fs::write(
        &page,
        mwctl::discover_html::render_html(&d, "2026-11-27 21:30:00 UTC", Address(0x0115)),
    )
    .unwrap();
    let url = format!("file://{}", page.display());
    let profile = dir.path().join("profile");
    let dom = testkit::chromium::run(&bin, &profile, &["--dump-dom"], &url);
    assert!(dom.contains("<svg id=\"map\""), "{dom}");
    for (i, (name, hrs)) in ROUTERS.iter().enumerate() {
        let node = format!("id=\"r-{:#018x}\"", identity(i));
        let at = dom
            .find(&node)
            .unwrap_or_else(|| panic!("{name} not on the map"));
        assert!(
            dom[at..].contains(&format!(">{name}</text>")),
            "{name}'s description"
        );
        assert!(dom.contains(&format!("id=\"row-r-{:#018x}\"", identity(i))));
        for (a, san) in hrs {
            assert!(dom.contains(&format!("{} [", Address(*a))), "HR {a:#06x}");
            assert!(dom.contains(&format!("id=\"san-{}\"", Address(*san))));
            assert!(dom.contains(&format!(">SAN {}</text>", Address(*san))));
        }
    }
    for (name, a, _) in HOSTS {
        let node = format!("class=\"el node host\" id=\"h-{}\"", Address(a));
        let at = dom
            .find(&node)
            .unwrap_or_else(|| panic!("{name} not on the map"));
        assert!(
            dom[at..].contains(&format!(">{name} {}</text>", Address(a))),
            "{name}"
        );
    }
    assert!(dom.contains("class=\"el node silent\" id=\"u-0x0123\""));
    assert!(dom.contains("class=\"el edge down\""));
    assert!(dom.contains(">12</text>"));

    if let Some(shot) = std::env::var_os("MWCTL_DISCOVER_SCREENSHOT") {
        let shot = std::path::absolute(PathBuf::from(shot)).unwrap();
        testkit::chromium::run(
            &bin,
            &profile,
            &[
                &format!("--screenshot={}", shot.display()),
                "--window-size=1200,1000",
                "--run-all-compositor-stages-before-draw",
                "--virtual-time-budget=3000",
            ],
            &url,
        );
        assert!(shot.exists());
    }
}
