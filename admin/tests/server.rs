//! The admin socket server against the sample handler: every command,
//! every kind of bad request, timeouts, concurrency, privileges, streams.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use admin::policy::Peer;
use admin::proto::{
    AdminErrorCode, CaptureEvent, CaptureSummary, Clear, Command, Direction, LogLevel, PortSpec,
    PortState, Privilege, Request, Response, RouteOp, Show, StatsFormat, TraceEvent, TraceKind,
    TraceSummary, TracedLookup,
};
use admin::sample::SampleBox;
use admin::server::{Handler, ServerConfig, ServerHandle, StreamOut, serve};
use admin::view::{
    CounterRow, FibRow, HrRow, LrtRow, NeighborRow, PortRow, PrometheusText, RouteLookup, RouteRow,
    RouterInfo, RtRow, Stats, VersionInfo,
};
use admin::{AdminError, Backend as _, Policy};
use rrp::{Address, PortId};
use serde_json::{Value, json};

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    server: Option<ServerHandle>,
}

fn fixture_with(f: impl FnOnce(&mut ServerConfig), handler: Arc<dyn Handler>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run").join("mw.sock");
    let mut cfg = ServerConfig::new(&path);
    f(&mut cfg);
    let server = serve(cfg, handler).unwrap();
    Fixture {
        _dir: dir,
        path,
        server: Some(server),
    }
}

fn fixture() -> Fixture {
    fixture_with(|_| {}, SampleBox::handler())
}

struct Client {
    w: UnixStream,
    r: BufReader<UnixStream>,
}

impl Client {
    fn connect(path: &Path) -> Client {
        let w = UnixStream::connect(path).unwrap();
        w.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
        Client { w, r }
    }

    fn send_raw(&mut self, line: &[u8]) {
        self.w.write_all(line).unwrap();
    }

    fn read(&mut self) -> Option<Response> {
        let mut s = String::new();
        if self.r.read_line(&mut s).unwrap() == 0 {
            return None;
        }
        assert!(s.ends_with('\n'), "{s:?}");
        Some(Response::parse(s.as_bytes()).unwrap_or_else(|e| panic!("{e}: {s}")))
    }

    fn raw(&mut self, line: &str) -> Response {
        self.send_raw(format!("{line}\n").as_bytes());
        self.read().expect("an answer")
    }

    fn call(&mut self, id: u64, cmd: Command) -> Response {
        self.send_raw(Request::new(Some(id), cmd).to_line().as_bytes());
        let r = self.read().expect("an answer");
        assert_eq!(r.id, Some(id));
        assert_eq!(r.v, 1);
        r
    }

    fn ok(&mut self, cmd: Command) -> Value {
        let r = self.call(1, cmd.clone());
        assert!(r.ok, "{cmd:?}: {r:?}");
        assert!(!r.more);
        r.result.unwrap_or(Value::Null)
    }

    fn err(&mut self, line: &str) -> (Option<u64>, AdminErrorCode) {
        let r = self.raw(line);
        assert!(!r.ok, "{line}: {r:?}");
        assert!(r.result.is_none());
        let e = r.error.unwrap();
        assert!(!e.message.is_empty());
        (r.id, e.code)
    }

    fn eof(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.r.read(&mut b), Ok(0) | Err(_))
    }
}

fn every_command() -> Vec<Command> {
    let p0 = Some(PortSpec::Index(PortId(0)));
    let hr1 = PortSpec::Hr(Address(0x0116));
    vec![
        Command::Show(Show::Router {}),
        Command::Show(Show::Hrs {}),
        Command::Show(Show::Ports {}),
        Command::Show(Show::Lrt { port: None }),
        Command::Show(Show::Lrt { port: p0 }),
        Command::Show(Show::Rts {
            port: None,
            san: Some(Address(0x0202)),
        }),
        Command::Show(Show::Routes { port: Some(hr1) }),
        Command::Show(Show::Fib { port: None }),
        Command::Show(Show::Neighbors { port: None }),
        Command::Show(Show::Counters { port: p0 }),
        Command::Show(Show::Route {
            dst: Address(0x0102),
            port: None,
        }),
        Command::Port {
            port: hr1,
            state: PortState::Down,
        },
        Command::Port {
            port: PortSpec::Index(PortId(1)),
            state: PortState::Up,
        },
        Command::Route(RouteOp::Add {
            groups: Vec::new(),
            port: PortSpec::Index(PortId(1)),
            dst: Address(0x0103),
            native: "02:00:00:00:01:03".into(),
            name: Some("h3".into()),
            router: false,
        }),
        Command::Route(RouteOp::Del {
            port: PortSpec::Index(PortId(1)),
            dst: Address(0x0103),
        }),
        Command::Clear(Clear::Counters { port: None }),
        Command::LogLevel {
            level: LogLevel::Debug,
        },
        Command::Reload(Default::default()),
        Command::Commit {},
        Command::Rollback {
            n: Some(2),
            force: false,
        },
        Command::History {},
        Command::Write { file: None },
        Command::Drain {
            timeout_ms: Some(5_000),
        },
        Command::Capture {
            port: PortSpec::Index(PortId(0)),
            count: Some(2),
            drops: true,
            transmitted: false,
            snaplen: Some(64),
        },
        Command::TracePackets {
            port: Some(PortSpec::Hr(Address(0x0116))),
            count: 3,
            dst: Some(Address(0x0102)),
            only: None,
            timeout_ms: Some(5000),
        },
        Command::Stats {
            format: StatsFormat::Json,
        },
        Command::Stats {
            format: StatsFormat::Prometheus,
        },
        Command::Version {},
        Command::Show(Show::Management {}),
        Command::Mad(admin::mad::MadQuery {
            dst: Some(Address(0x0116)),
            attribute: "port_info".into(),
            modifier: 1,
            mkey: Some("0x1234".into()),
            ..Default::default()
        }),
        Command::Mad(admin::mad::MadQuery {
            dst: Some(Address(0x0115)),
            method: admin::mad::MadMethod::Set,
            attribute: "port_info".into(),
            set: [("cost".to_string(), serde_json::json!(5))].into(),
            timeout_ms: Some(200),
            retries: Some(1),
            ..Default::default()
        }),
    ]
}

#[test]
fn every_command_round_trips_through_json() {
    let mut names = std::collections::BTreeSet::new();
    for (i, cmd) in every_command().into_iter().enumerate() {
        let req = Request::new(Some(i as u64), cmd.clone());
        let line = req.to_line();
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["v"], 1);
        assert_eq!(v["cmd"], cmd.name());
        assert_eq!(Request::parse(line.trim_end().as_bytes()), Ok(req.clone()));
        let back: Request = serde_json::from_value(v).unwrap();
        assert_eq!(back, req);
        names.insert(cmd.name());
    }
    assert_eq!(
        names.len(),
        Command::NAMES.len(),
        "every command is covered"
    );
}

#[test]
fn a_directed_route_query_round_trips() {
    let cmd = Command::Mad(admin::mad::MadQuery {
        dr: vec![admin::mad::DrHop {
            hr: Address(0x0101),
            native: "02:00:00:00:00:02".into(),
        }],
        method: admin::mad::MadMethod::Set,
        attribute: "port_info".into(),
        set: [("cost".to_string(), serde_json::json!(5))].into(),
        timeout_ms: Some(200),
        retries: Some(1),
        ..Default::default()
    });
    let req = Request::new(Some(1), cmd);
    assert_eq!(Request::parse(req.to_line().trim_end().as_bytes()), Ok(req));
}

#[test]
fn documented_request_shapes() {
    let cases = [
        (
            r#"{"v":1,"cmd":"show","what":"lrt","port":0}"#,
            Command::Show(Show::Lrt {
                port: Some(PortSpec::Index(PortId(0))),
            }),
        ),
        (
            r#"{"v":1,"cmd":"show","what":"route","dst":"0x0123","port":"0x0115"}"#,
            Command::Show(Show::Route {
                dst: Address(0x123),
                port: Some(PortSpec::Hr(Address(0x115))),
            }),
        ),
        (
            r#"{"v":1,"cmd":"show","what":"route","dst":291}"#,
            Command::Show(Show::Route {
                dst: Address(0x123),
                port: None,
            }),
        ),
        (
            r#"{"v":1,"cmd":"port","port":1,"state":"down"}"#,
            Command::Port {
                port: PortSpec::Index(PortId(1)),
                state: PortState::Down,
            },
        ),
        (
            r#"{"v":1,"cmd":"clear","what":"counters"}"#,
            Command::Clear(Clear::Counters { port: None }),
        ),
        (
            r#"{"v":1,"cmd":"stats"}"#,
            Command::Stats {
                format: StatsFormat::Json,
            },
        ),
        (
            r#"{"v":1,"cmd":"log_level","level":"trace"}"#,
            Command::LogLevel {
                level: LogLevel::Trace,
            },
        ),
    ];
    for (line, cmd) in cases {
        assert_eq!(
            Request::parse(line.as_bytes()).map(|r| r.cmd),
            Ok(cmd),
            "{line}"
        );
    }
}

#[test]
fn privileges_of_commands() {
    for cmd in every_command() {
        let admin = matches!(
            cmd,
            Command::Port { .. }
                | Command::Route(_)
                | Command::Clear(_)
                | Command::LogLevel { .. }
                | Command::Reload(_)
                | Command::Commit {}
                | Command::Rollback { .. }
                | Command::Write { .. }
                | Command::Drain { .. }
                | Command::Capture { .. }
                | Command::TracePackets { .. }
                | Command::Mad(_)
        );
        assert_eq!(cmd.needs_admin(), admin, "{cmd:?}");
        assert_eq!(
            cmd.privilege(),
            if admin {
                Privilege::Admin
            } else {
                Privilege::ReadOnly
            }
        );
    }
}

#[test]
fn every_command_is_served() {
    let fx = fixture();
    let mut c = Client::connect(&fx.path);
    for (i, cmd) in every_command().into_iter().enumerate() {
        let id = 100 + i as u64;
        let r = c.call(id, cmd.clone());
        if let Command::TracePackets { .. } = cmd {
            // A trace: its start, a record per packet, then the summary.
            assert!(r.ok && r.more, "{r:?}");
            let start: TraceEvent = serde_json::from_value(r.result.unwrap()).unwrap();
            assert_eq!(
                start,
                TraceEvent::Start {
                    count: 3,
                    port: Some(PortId(1)),
                    hr: Some(Address(0x0116)),
                    dst: Some(Address(0x0102)),
                    only: None,
                    timeout_ms: Some(5000),
                }
            );
            let mut packets = Vec::new();
            loop {
                let r = c.read().unwrap();
                assert_eq!(r.id, Some(id));
                assert!(r.ok);
                if !r.more {
                    let s: TraceSummary = serde_json::from_value(r.result.unwrap()).unwrap();
                    assert_eq!((s.recorded, s.requested, s.lost), (3, 3, 0));
                    assert_eq!(s.ended, "count");
                    break;
                }
                let TraceEvent::Packet(p) = serde_json::from_value(r.result.unwrap()).unwrap()
                else {
                    panic!("a packet")
                };
                packets.push(p);
            }
            assert_eq!(packets.len(), 3);
            assert!(packets.iter().all(|p| p.port == PortId(1)
                && p.hr == Address(0x0116)
                && p.dst == Some(Address(0x0102))));
            continue;
        }
        if cmd.streams() {
            // A capture: items with "more", then the summary.
            assert!(r.ok && r.more, "{r:?}");
            let start: CaptureEvent = serde_json::from_value(r.result.unwrap()).unwrap();
            assert!(matches!(
                start,
                CaptureEvent::Start {
                    port: PortId(0),
                    linktype: 147,
                    snaplen: 64,
                    ..
                }
            ));
            let mut packets = 0;
            loop {
                let r = c.read().unwrap();
                assert_eq!(r.id, Some(id));
                assert!(r.ok);
                if !r.more {
                    let s: CaptureSummary = serde_json::from_value(r.result.unwrap()).unwrap();
                    assert_eq!(s.captured, 2);
                    assert_eq!(s.drops.get("no-route"), Some(&1));
                    break;
                }
                let CaptureEvent::Packet(p) = serde_json::from_value(r.result.unwrap()).unwrap()
                else {
                    panic!("a packet")
                };
                assert_eq!(p.bytes().unwrap().len(), 32);
                rrp::wire::packet::PacketRepr::parse(&p.bytes().unwrap()).unwrap();
                packets += 1;
            }
            assert_eq!(packets, 2);
            continue;
        }
        if matches!(
            cmd,
            Command::Commit {}
                | Command::Rollback { .. }
                | Command::History {}
                | Command::Write { .. }
        ) {
            // The sample box keeps no configurations and has no file.
            assert_eq!(
                r.error.map(|e| e.code),
                Some(AdminErrorCode::Unsupported),
                "{cmd:?}"
            );
            continue;
        }
        assert!(r.ok, "{cmd:?}: {r:?}");
        assert!(!r.more);
        let v = r.result.unwrap();
        // Every answer has its documented shape.
        let typed = match &cmd {
            Command::Show(Show::Router {}) => serde_json::from_value::<RouterInfo>(v).map(drop),
            Command::Show(Show::Hrs {}) => serde_json::from_value::<Vec<HrRow>>(v).map(drop),
            Command::Show(Show::Ports {}) => serde_json::from_value::<Vec<PortRow>>(v).map(drop),
            Command::Show(Show::Lrt { .. }) => serde_json::from_value::<Vec<LrtRow>>(v).map(drop),
            Command::Show(Show::Rts { .. }) => serde_json::from_value::<Vec<RtRow>>(v).map(drop),
            Command::Show(Show::Routes { .. }) => {
                serde_json::from_value::<Vec<RouteRow>>(v).map(drop)
            }
            Command::Show(Show::Fib { .. }) => serde_json::from_value::<Vec<FibRow>>(v).map(drop),
            Command::Show(Show::Neighbors { .. }) => {
                serde_json::from_value::<Vec<NeighborRow>>(v).map(drop)
            }
            Command::Show(Show::Counters { .. }) => {
                serde_json::from_value::<Vec<CounterRow>>(v).map(drop)
            }
            Command::Show(Show::Route { .. }) => serde_json::from_value::<RouteLookup>(v).map(drop),
            Command::Stats {
                format: StatsFormat::Json,
            } => serde_json::from_value::<Stats>(v).map(drop),
            Command::Stats {
                format: StatsFormat::Prometheus,
            } => serde_json::from_value::<PrometheusText>(v).map(drop),
            Command::Version {} => serde_json::from_value::<VersionInfo>(v).map(drop),
            Command::Show(Show::Management {}) => {
                serde_json::from_value::<admin::view::ManagementInfo>(v).map(drop)
            }
            Command::Mad(q) => serde_json::from_value::<admin::mad::MadAnswer>(v).map(|a| {
                assert!(a.ok(), "{a:?}");
                let f = a.fields.expect("PortInfo's fields");
                assert_eq!(f["local_port_num"], q.modifier);
                if !q.set.is_empty() {
                    assert_eq!(f["cost"], 5, "the Set is applied and read back");
                }
            }),
            _ => Ok(()),
        };
        typed.unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    }
}

#[test]
fn sample_answers_make_sense() {
    let fx = fixture();
    let mut c = Client::connect(&fx.path);
    let lrt: Vec<LrtRow> = serde_json::from_value(c.ok(Command::Show(Show::Lrt {
        port: Some(PortSpec::Index(PortId(0))),
    })))
    .unwrap();
    let addrs: Vec<u16> = lrt.iter().map(|r| r.address.0).collect();
    assert!(
        addrs.contains(&0x0101) && addrs.contains(&0x0117),
        "{lrt:?}"
    );
    let n: Vec<NeighborRow> =
        serde_json::from_value(c.ok(Command::Show(Show::Neighbors { port: None }))).unwrap();
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].address, Address(0x0117));
    // h2 is behind HR 0x0116: from port 0 it is forwarded out of port 1.
    let l: RouteLookup = serde_json::from_value(c.ok(Command::Show(Show::Route {
        dst: Address(0x0102),
        port: Some(PortSpec::Index(PortId(0))),
    })))
    .unwrap();
    assert_eq!(l.lookups.len(), 1);
    assert_eq!(l.lookups[0].result, "forward", "{l:?}");
    assert_eq!(l.lookups[0].egress, Some(PortId(1)));
    assert_eq!(l.lookups[0].next_hop, "02:00:00:00:01:02");
    let l: RouteLookup = serde_json::from_value(c.ok(Command::Show(Show::Route {
        dst: Address(0x0999),
        port: None,
    })))
    .unwrap();
    assert!(l.lookups.iter().all(|l| l.result == "no_route"), "{l:?}");
    // Unknown port and unknown entry.
    let r = c.call(
        5,
        Command::Show(Show::Lrt {
            port: Some(PortSpec::Index(PortId(9))),
        }),
    );
    assert_eq!(r.error.unwrap().code, AdminErrorCode::NotFound);
    let r = c.call(
        6,
        Command::Route(RouteOp::Del {
            port: PortSpec::Index(PortId(0)),
            dst: Address(0x0999),
        }),
    );
    assert_eq!(r.error.unwrap().code, AdminErrorCode::NotFound);
    // Clearing counters clears them.
    c.ok(Command::Clear(Clear::Counters {
        port: Some(PortSpec::Index(PortId(0))),
    }));
    let rows: Vec<CounterRow> =
        serde_json::from_value(c.ok(Command::Show(Show::Counters { port: None }))).unwrap();
    assert_eq!(rows[0].received, 0);
    assert_eq!(rows[1].received, 900);
}

#[test]
fn malformed_json_gets_an_error_and_the_connection_goes_on() {
    let fx = fixture();
    let mut c = Client::connect(&fx.path);
    assert_eq!(c.err("{not json"), (None, AdminErrorCode::BadJson));
    assert_eq!(c.err(""), (None, AdminErrorCode::BadJson));
    c.send_raw(b"\xff\xfe{}\n");
    assert_eq!(
        c.read().unwrap().error.unwrap().code,
        AdminErrorCode::BadJson
    );
    assert_eq!(c.err("[1,2,3]").1, AdminErrorCode::BadRequest);
    assert_eq!(c.err("42").1, AdminErrorCode::BadRequest);
    // Still served.
    let v = c.ok(Command::Version {});
    assert_eq!(v["protocol"], 1);
    // A trailing \r is tolerated.
    let r = c.raw("{\"v\":1,\"id\":3,\"cmd\":\"version\"}\r");
    assert!(r.ok);
}

#[test]
fn unknown_commands_and_wrong_types() {
    let fx = fixture();
    let mut c = Client::connect(&fx.path);
    assert_eq!(
        c.err(r#"{"v":1,"id":4,"cmd":"reboot"}"#),
        (Some(4), AdminErrorCode::UnknownCommand)
    );
    let cases = [
        r#"{"v":1,"id":5,"cmd":"show","what":"everything"}"#,
        r#"{"v":1,"id":5,"cmd":"show","what":5}"#,
        r#"{"v":1,"id":5,"cmd":"show"}"#,
        r#"{"v":1,"id":5,"cmd":"show","what":"lrt","port":"eth0"}"#,
        r#"{"v":1,"id":5,"cmd":"show","what":"lrt","port":-1}"#,
        r#"{"v":1,"id":5,"cmd":"show","what":"lrt","port":70000}"#,
        r#"{"v":1,"id":5,"cmd":"show","what":"lrt","prot":0}"#,
        r#"{"v":1,"id":5,"cmd":"show","what":"route"}"#,
        r#"{"v":1,"id":5,"cmd":"show","what":"route","dst":"0x10000"}"#,
        r#"{"v":1,"id":5,"cmd":"port","port":0,"state":"sideways"}"#,
        r#"{"v":1,"id":5,"cmd":"port","port":0}"#,
        r#"{"v":1,"id":5,"cmd":"port","port":0,"state":1}"#,
        r#"{"v":1,"id":5,"cmd":"route","op":1,"port":0,"dst":"0x0103"}"#,
        r#"{"v":1,"id":5,"cmd":"log_level","level":2}"#,
        r#"{"v":1,"id":5,"cmd":"stats","format":1}"#,
        r#"{"v":1,"id":5,"cmd":"capture","port":0,"count":"many"}"#,
        r#"{"v":1,"id":5,"cmd":"capture","port":0,"drops":1}"#,
        r#"{"v":1,"id":5,"cmd":"log_level","level":"loud"}"#,
        r#"{"v":1,"id":5,"cmd":"route","op":"add","port":0,"dst":"0x0103"}"#,
        r#"{"v":1,"id":5,"cmd":"reload","now":true}"#,
        r#"{"v":1,"id":5,"cmd":7}"#,
        r#"{"v":1,"id":5}"#,
        r#"{"v":"1","id":5,"cmd":"version"}"#,
    ];
    for line in cases {
        let (id, code) = c.err(line);
        assert_eq!(code, AdminErrorCode::BadRequest, "{line}");
        assert_eq!(id, Some(5), "{line}");
    }
    assert_eq!(
        c.err(r#"{"v":2,"id":6,"cmd":"version"}"#),
        (Some(6), AdminErrorCode::BadVersion)
    );
    assert_eq!(
        c.err(r#"{"id":-1,"v":1,"cmd":"version"}"#),
        (None, AdminErrorCode::BadRequest)
    );
    assert_eq!(
        c.err(r#"{"id":7,"cmd":"version"}"#),
        (Some(7), AdminErrorCode::BadRequest)
    );
    // The answer to a bad argument names it.
    let r = c.raw(r#"{"v":1,"cmd":"show","what":"lrt","port":"eth0"}"#);
    assert!(r.error.unwrap().message.contains("eth0"));
    assert!(c.ok(Command::Version {}).is_object());
}

/// `route add` cannot make the box hold without bound: a name, the groups
/// and the LRT's entries are bounded as a SAN's nodes are (a name of at
/// most 64 bytes, 64 groups, `limits.max_lrt` entries per LRT); what is
/// over is refused with `bad_request` and kept nowhere.
#[test]
fn route_add_is_bounded() {
    let handler = SampleBox::handler();
    let sample = handler.backend().clone();
    let fx = fixture_with(|_| {}, handler);
    let mut c = Client::connect(&fx.path);
    let lrt = |c: &mut Client| -> Vec<LrtRow> {
        serde_json::from_value(c.ok(Command::Show(Show::Lrt {
            port: Some(PortSpec::Index(PortId(0))),
        })))
        .unwrap()
    };
    let add = |dst: u16, name: Option<String>, groups: Vec<Address>| {
        Command::Route(RouteOp::Add {
            port: PortSpec::Index(PortId(0)),
            dst: Address(dst),
            native: format!("02:00:00:00:{:02x}:{:02x}", dst >> 8, dst & 0xff),
            name,
            router: false,
            groups,
        })
    };
    let refused = |c: &mut Client, cmd: Command, why: &str| {
        let r = c.call(9, cmd);
        let e = r.error.expect("refused");
        assert_eq!(e.code, AdminErrorCode::BadRequest, "{e:?}");
        assert!(e.message.contains(why), "{e:?}");
    };
    let before = lrt(&mut c).len();

    // What a line of 64 KiB can carry: a name of 60,000 bytes, 6,000
    // groups (an entry of them was kept twice, for each node address).
    refused(
        &mut c,
        add(0x0300, Some("n".repeat(60_000)), Vec::new()),
        "longer than 64",
    );
    let many: Vec<Address> = (0..6_000).map(|i| Address(0x8000 + i)).collect();
    refused(
        &mut c,
        add(0x0300, None, many.clone()),
        "6000 groups, more than the 64",
    );
    refused(
        &mut c,
        add(0x0300, None, vec![Address(0x8001), Address(0x0102)]),
        "not a logical address",
    );
    assert_eq!(lrt(&mut c).len(), before, "nothing of them kept");
    // At the bounds: taken.
    c.ok(add(0x0300, Some("n".repeat(64)), many[..64].to_vec()));
    let row = lrt(&mut c)
        .into_iter()
        .find(|r| r.address == Address(0x0300))
        .unwrap();
    assert_eq!((row.name.len(), row.logical.len()), (64, 64));

    // The LRT's entries: limits.max_lrt, as for learned nodes.
    let max = before + 3;
    sample
        .with_engine(move |r, _| {
            let mut limits = r.config().limits;
            limits.max_lrt = max;
            r.set_tunables(r.config().timers, limits, r.config().error_rates)
        })
        .unwrap()
        .unwrap();
    c.ok(add(0x0301, None, Vec::new()));
    c.ok(add(0x0302, None, Vec::new()));
    refused(
        &mut c,
        add(0x0303, None, Vec::new()),
        &format!("the LRT holds limits.max_lrt = {max} entries already"),
    );
    // An entry replaced in a full LRT, and one removed to make room.
    let v = c.ok(add(0x0302, Some("again".into()), Vec::new()));
    assert_eq!(v["replaced"], true);
    c.ok(Command::Route(RouteOp::Del {
        port: PortSpec::Index(PortId(0)),
        dst: Address(0x0301),
    }));
    c.ok(add(0x0303, None, Vec::new()));
    assert_eq!(lrt(&mut c).len(), max);
}

#[test]
fn oversized_line_is_refused_and_closed() {
    let fx = fixture();
    let mut c = Client::connect(&fx.path);
    let mut big = br#"{"v":1,"cmd":"version","pad":""#.to_vec();
    big.resize(200_000, b'x');
    // The server may close before it has read everything: ignore EPIPE.
    let _ = c.w.write_all(&big);
    let r = c.read().unwrap();
    assert_eq!(r.error.unwrap().code, AdminErrorCode::TooLong);
    assert!(c.eof());
    // A line just under the limit is read (and refused for its field).
    let mut c = Client::connect(&fx.path);
    let mut line = br#"{"v":1,"id":9,"cmd":"version","pad":""#.to_vec();
    line.resize(admin::proto::MAX_LINE - 3, b'x');
    line.extend_from_slice(b"\"}\n");
    assert_eq!(line.len(), admin::proto::MAX_LINE);
    c.send_raw(&line);
    let r = c.read().unwrap();
    assert_eq!(r.id, Some(9));
    assert_eq!(r.error.unwrap().code, AdminErrorCode::BadRequest);
    // Others are served.
    let mut d = Client::connect(&fx.path);
    assert!(d.ok(Command::Version {}).is_object());
}

#[test]
fn silent_client_times_out_while_others_are_served() {
    let fx = fixture_with(
        |c| c.idle_timeout = Duration::from_millis(1000),
        SampleBox::handler(),
    );
    let t0 = Instant::now();
    let mut silent = Client::connect(&fx.path);
    // A half-sent request is no better than none.
    let mut slow = Client::connect(&fx.path);
    slow.send_raw(br#"{"v":1,"cmd":"#);
    let mut busy = Client::connect(&fx.path);
    for _ in 0..5 {
        assert!(busy.ok(Command::Show(Show::Hrs {})).is_array());
    }
    assert!(t0.elapsed() < Duration::from_millis(1000), "served at once");
    for c in [&mut silent, &mut slow] {
        let r = c.read().unwrap();
        assert_eq!(r.error.unwrap().code, AdminErrorCode::Timeout);
        assert!(c.eof());
    }
    assert!(t0.elapsed() >= Duration::from_millis(1000));
    let timeouts = fx
        .server
        .as_ref()
        .unwrap()
        .stats()
        .timeouts
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(timeouts >= 2, "{timeouts}");
    // The server goes on.
    assert!(
        Client::connect(&fx.path)
            .ok(Command::Version {})
            .is_object()
    );
}

#[test]
fn fifty_concurrent_clients() {
    let fx = fixture();
    let path = fx.path.clone();
    let threads: Vec<_> = (0..50)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut c = Client::connect(&path);
                for j in 0..5u64 {
                    let id = i * 100 + j;
                    let r = c.call(
                        id,
                        Command::Show(Show::Counters {
                            port: Some(PortSpec::Index(PortId((j % 2) as u16))),
                        }),
                    );
                    assert!(r.ok, "{r:?}");
                    let rows: Vec<CounterRow> = serde_json::from_value(r.result.unwrap()).unwrap();
                    assert_eq!(rows.len(), 1);
                    assert_eq!(rows[0].port, PortId((j % 2) as u16));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = fx.server.as_ref().unwrap().stats();
    assert_eq!(s.requests.load(std::sync::atomic::Ordering::Relaxed), 250);
    assert_eq!(s.busy.load(std::sync::atomic::Ordering::Relaxed), 0);
}

#[test]
fn clients_beyond_the_limit_are_told_busy() {
    let fx = fixture_with(|c| c.max_clients = 2, SampleBox::handler());
    let mut a = Client::connect(&fx.path);
    let mut b = Client::connect(&fx.path);
    assert!(a.ok(Command::Version {}).is_object());
    assert!(b.ok(Command::Version {}).is_object());
    let mut c = Client::connect(&fx.path);
    let r = c.read().unwrap();
    assert_eq!(r.error.unwrap().code, AdminErrorCode::Busy);
    assert!(c.eof());
    drop(a);
    // The slot frees up.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut d = Client::connect(&fx.path);
        // A busy server may have closed before the request is written.
        let _ = d.w.write_all(b"{\"v\":1,\"id\":1,\"cmd\":\"version\"}\n");
        let r = d.read().expect("an answer");
        if r.ok {
            break;
        }
        assert_eq!(r.error.unwrap().code, AdminErrorCode::Busy);
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn as_peer(uid: u32, gid: u32, groups: &[u32]) -> admin::server::PeerLookup {
    let groups = groups.to_vec();
    Arc::new(move |_s: &UnixStream| {
        Ok(Peer {
            pid: None,
            uid,
            gid,
            groups: groups.clone(),
        })
    })
}

fn policy() -> Policy {
    Policy {
        admin_group: Some(900),
        readonly_group: Some(901),
        readonly_everyone: false,
    }
}

#[test]
fn read_only_peer_may_read_but_not_change() {
    let handler = SampleBox::handler();
    let fx = fixture_with(
        |c| {
            c.policy = policy();
            c.peer_lookup = Some(as_peer(4242, 100, &[901]));
        },
        handler.clone(),
    );
    let mut c = Client::connect(&fx.path);
    assert!(c.ok(Command::Show(Show::Fib { port: None })).is_array());
    assert!(
        c.ok(Command::Stats {
            format: StatsFormat::Json
        })
        .is_object()
    );
    for cmd in every_command().into_iter().filter(Command::needs_admin) {
        let r = c.call(3, cmd.clone());
        assert!(!r.ok, "{cmd:?}");
        let e = r.error.unwrap();
        assert_eq!(e.code, AdminErrorCode::Forbidden, "{cmd:?}");
        assert!(e.message.contains(cmd.name()), "{}", e.message);
    }
    // Nothing changed, and the connection is still open.
    assert_eq!(handler.backend().log_level(), LogLevel::Info);
    assert_eq!(handler.backend().reloads(), 0);
    assert!(c.ok(Command::Version {}).is_object());
}

#[test]
fn admin_group_member_may_change() {
    let handler = SampleBox::handler();
    let fx = fixture_with(
        |c| {
            c.policy = policy();
            c.peer_lookup = Some(as_peer(4242, 100, &[5, 900]));
        },
        handler.clone(),
    );
    let mut c = Client::connect(&fx.path);
    c.ok(Command::LogLevel {
        level: LogLevel::Trace,
    });
    c.ok(Command::Reload(Default::default()));
    assert_eq!(handler.backend().log_level(), LogLevel::Trace);
    assert_eq!(handler.backend().reloads(), 1);
}

#[test]
fn others_are_refused_and_closed() {
    let fx = fixture_with(
        |c| {
            c.policy = policy();
            c.peer_lookup = Some(as_peer(4242, 100, &[5]));
        },
        SampleBox::handler(),
    );
    let mut c = Client::connect(&fx.path);
    let r = c.call(8, Command::Version {});
    let e = r.error.unwrap();
    assert_eq!(e.code, AdminErrorCode::Forbidden);
    assert!(e.message.contains("4242"), "{}", e.message);
    assert!(c.eof());
    // With readonly_everyone they may read.
    let fx = fixture_with(
        |c| {
            c.policy = Policy {
                readonly_everyone: true,
                ..policy()
            };
            c.peer_lookup = Some(as_peer(4242, 100, &[5]));
        },
        SampleBox::handler(),
    );
    let mut c = Client::connect(&fx.path);
    assert!(c.ok(Command::Version {}).is_object());
    assert_eq!(
        c.call(9, Command::Reload(Default::default()))
            .error
            .unwrap()
            .code,
        AdminErrorCode::Forbidden
    );
    let mode = std::fs::metadata(&fx.path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666);
}

#[test]
fn real_credentials_of_this_process_are_admin() {
    // This test process is the daemon's own uid (and maybe root): admin.
    let handler = SampleBox::handler();
    let fx = fixture_with(|_| {}, handler.clone());
    let mut c = Client::connect(&fx.path);
    c.ok(Command::LogLevel {
        level: LogLevel::Warn,
    });
    assert_eq!(handler.backend().log_level(), LogLevel::Warn);
}

struct Panicky;

impl Handler for Panicky {
    fn handle(&self, cmd: &Command, _p: Privilege) -> Result<Value, AdminError> {
        match cmd {
            Command::Reload(_) => panic!("handler bug"),
            Command::Version {} => Ok(json!({"daemon": "panicky", "protocol": 1})),
            _ => Err(AdminError::unsupported("not here")),
        }
    }

    fn handle_stream(
        &self,
        _cmd: &Command,
        _p: Privilege,
        out: &mut dyn StreamOut,
    ) -> Result<Value, AdminError> {
        // Streams until the client leaves.
        let mut n = 0u64;
        let deadline = Instant::now() + Duration::from_secs(20);
        while !out.closed() && Instant::now() < deadline {
            if out.send(json!({"kind": "tick", "n": n})).is_err() {
                break;
            }
            n += 1;
            std::thread::sleep(Duration::from_millis(5));
        }
        STREAM_ENDED.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(json!({"captured": n}))
    }
}

static STREAM_ENDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[test]
fn handler_panics_and_errors_do_not_disturb_the_server() {
    let fx = fixture_with(|_| {}, Arc::new(Panicky));
    let mut c = Client::connect(&fx.path);
    let r = c.call(1, Command::Reload(Default::default()));
    assert_eq!(r.error.unwrap().code, AdminErrorCode::Failed);
    let r = c.call(2, Command::Show(Show::Hrs {}));
    assert_eq!(r.error.unwrap().code, AdminErrorCode::Unsupported);
    assert_eq!(c.ok(Command::Version {})["daemon"], "panicky");
    // A stream ends when its client leaves.
    let mut s = Client::connect(&fx.path);
    let r = s.call(
        3,
        Command::Capture {
            port: PortSpec::Index(PortId(0)),
            count: None,
            drops: false,
            transmitted: false,
            snaplen: None,
        },
    );
    assert!(r.more);
    assert!(s.read().unwrap().more);
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !STREAM_ENDED.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the stream did not notice");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(c.ok(Command::Version {})["protocol"], 1);
}

#[test]
fn socket_file_lifecycle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("mw.sock");
    // Parent directories are created; the default mode is 0660.
    let h = serve(ServerConfig::new(&path), SampleBox::handler()).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o660);
    // A second server on a live socket is refused.
    let e = serve(ServerConfig::new(&path), SampleBox::handler()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse);
    // Stopping closes clients and removes the socket.
    let mut c = Client::connect(&path);
    assert!(c.ok(Command::Version {}).is_object());
    drop(h);
    assert!(!path.exists());
    assert!(c.eof());
    // A stale socket (nothing listening) is replaced.
    let l = UnixListener::bind(&path).unwrap();
    drop(l);
    assert!(path.exists());
    let h = serve(ServerConfig::new(&path), SampleBox::handler()).unwrap();
    assert!(Client::connect(&path).ok(Command::Version {}).is_object());
    drop(h);
    // A file that is not a socket is left alone.
    std::fs::write(&path, b"precious").unwrap();
    let e = serve(ServerConfig::new(&path), SampleBox::handler()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    // No temporary files are left behind.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn socket_group_follows_the_policy() {
    use std::os::unix::fs::MetadataExt;
    if admin::policy::own_uid() != 0 {
        return; // chown to another group needs root
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mw.sock");
    let mut cfg = ServerConfig::new(&path);
    cfg.policy = policy();
    let _h = serve(cfg, SampleBox::handler()).unwrap();
    let m = std::fs::metadata(&path).unwrap();
    assert_eq!(m.gid(), 901);
    assert_eq!(m.mode() & 0o777, 0o660);
}

#[test]
fn trace_requests_are_checked_before_streaming() {
    let fx = fixture();
    let mut c = Client::connect(&fx.path);
    let trace = |port: Option<u16>, count: u64, dst: Option<u16>| Command::TracePackets {
        port: port.map(|p| PortSpec::Index(PortId(p))),
        count,
        dst: dst.map(Address),
        only: None,
        timeout_ms: None,
    };
    let max = u64::from(admin::proto::TRACE_MAX_COUNT);
    for (cmd, code, says) in [
        (
            trace(None, 0, None),
            AdminErrorCode::BadRequest,
            "count must be",
        ),
        (
            trace(None, max + 1, None),
            AdminErrorCode::BadRequest,
            "count must be",
        ),
        (
            trace(None, u64::MAX, None),
            AdminErrorCode::BadRequest,
            "count must be",
        ),
        (
            trace(None, 1, Some(0x0010)),
            AdminErrorCode::BadRequest,
            "not a destination",
        ),
        (trace(Some(9), 1, None), AdminErrorCode::NotFound, "9"),
    ] {
        // Refused before any item is streamed: one error line, no `more`.
        let r = c.call(1, cmd.clone());
        assert!(!r.ok && !r.more, "{cmd:?}: {r:?}");
        let e = r.error.unwrap();
        assert_eq!(e.code, code, "{cmd:?}: {e:?}");
        assert!(e.message.contains(says), "{}", e.message);
    }
    // A malformed address or kind is refused as the request is read.
    for line in [
        r#"{"v":1,"id":2,"cmd":"trace_packets","count":1,"dst":"0xZZ"}"#,
        r#"{"v":1,"id":2,"cmd":"trace_packets","count":1,"only":"l4"}"#,
        r#"{"v":1,"id":2,"cmd":"trace_packets","count":-1}"#,
        r#"{"v":1,"id":2,"cmd":"trace_packets"}"#,
    ] {
        let r = c.raw(line);
        assert!(!r.ok, "{line}: {r:?}");
        assert_eq!(r.error.unwrap().code, AdminErrorCode::BadRequest, "{line}");
    }
    // Still served: the largest count and timeout, L2 only, every record
    // so.
    let r = c.call(
        3,
        Command::TracePackets {
            port: None,
            count: max,
            dst: None,
            only: Some(TraceKind::L2),
            timeout_ms: Some(u64::MAX),
        },
    );
    assert!(r.ok && r.more, "{r:?}");
    let mut n = 0;
    loop {
        let r = c.read().unwrap();
        assert!(r.ok, "{r:?}");
        if !r.more {
            break;
        }
        let TraceEvent::Packet(p) = serde_json::from_value(r.result.unwrap()).unwrap() else {
            panic!("a packet")
        };
        assert!(matches!(p.lookup, TracedLookup::L2 { .. }), "{p:?}");
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn capture_requests_are_checked_before_streaming_and_say_their_direction() {
    let fx = fixture();
    let mut c = Client::connect(&fx.path);
    let capture = |drops, transmitted| Command::Capture {
        port: PortSpec::Index(PortId(0)),
        count: Some(2),
        drops,
        transmitted,
        snaplen: None,
    };
    // Refused before any item is streamed: one error line, no `more`.
    let r = c.call(1, capture(true, true));
    assert!(!r.ok && !r.more, "{r:?}");
    let e = r.error.unwrap();
    assert_eq!(e.code, AdminErrorCode::BadRequest);
    assert!(e.message.contains("exclude each other"), "{}", e.message);
    // Still served; received packets are `rx`, transmitted ones `tx`.
    for (transmitted, dir) in [(false, Direction::Rx), (true, Direction::Tx)] {
        let r = c.call(2, capture(false, transmitted));
        assert!(r.ok && r.more, "{r:?}");
        let mut packets = 0;
        loop {
            let r = c.read().unwrap();
            assert!(r.ok, "{r:?}");
            if !r.more {
                break;
            }
            let CaptureEvent::Packet(p) = serde_json::from_value(r.result.unwrap()).unwrap() else {
                panic!("a packet")
            };
            assert_eq!(p.dir, dir);
            packets += 1;
        }
        assert_eq!(packets, 2);
    }
}
