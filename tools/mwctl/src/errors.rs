//! `mwctl errors`: InfiniBand's ibqueryerrors for MessageWay
//! (docs/management.md "mwctl errors", docs/spec-notes.md 69). The walk of
//! `mwctl discover`, then PortCounters and PortCountersExtended (class
//! Perf) of every port of every router, [`MAX_OUTSTANDING`](crate::discover::MAX_OUTSTANDING) ports at a
//! time; a port is reported when a counter [`Thresholds`] checks is over
//! its limit. Every node is reported, clean ones too, and the nodes and
//! ports that did not answer, so that the summary says how many were
//! checked. With `--clear`, each port's counters are cleared after they
//! are read (a PortCounters Set, as `perfquery -R`).

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use admin::ClientError;
use admin::mad::MadMethod;
use clap::Args;
use mgmt::attr::{PortCounters, PortCountersExtended};
use rrp::Address;
use serde_json::{Map, Value, json};

use crate::Cli;
use crate::discover::{
    Ask, Class, Discovery, Got, Router, SocketAsk, in_parallel, level_name, state_name,
};
use crate::sweep::node_title;
use crate::thresholds::{Attr, Thresholds};
use crate::walk_args::WalkArgs;

/// `mwctl errors`.
#[derive(Debug, Clone, Args)]
#[command(after_help = "\
Walks the routers in band as `mwctl discover` does, then reads PortCounters
and PortCountersExtended of every port of every router, 16 at a time, and
reports the ports whose error counters (drops by reason, rx errors, the
kernel's and the device's drops) are over their thresholds, as
ibqueryerrors does. Every node is reported, clean ones too.

Exit status: 0 every node and port answered and no counter is over its
threshold; 1 a counter is over its threshold, or a node or port did not
answer (both listed); 2 bad arguments or thresholds file; 3 mwrouterd
cannot be reached.

Examples:
  mwctl errors
  mwctl errors --thresholds /etc/mwrouter/thresholds.toml
  mwctl errors --clear -k 0x1122334455667788
  mwctl --json errors")]
pub struct ErrorsArgs {
    /// Where the walk starts and how each request is sent.
    #[command(flatten)]
    pub walk: WalkArgs,
    /// A TOML file of counter name -> limit (`"dropped.no-route" = 100`);
    /// the counters it does not name keep the default limit, 0.
    #[arg(long, value_name = "FILE")]
    pub thresholds: Option<PathBuf>,
    /// Clear each port's counters after reading them (a PortCounters Set;
    /// needs the M_Key at a protected box).
    #[arg(long)]
    pub clear: bool,
}

/// The seam of the sweep: [`Ask`]'s Gets, and the Set that clears a
/// port's counters.
pub trait Clear: Ask {
    /// A PortCounters Set to port `port` of the node at `dst`: clears the
    /// port's counters (docs/management.md "PortCounters").
    fn clear(&self, dst: Address, port: u8) -> Result<Got, ClientError>;
}

impl Clear for SocketAsk<'_> {
    fn clear(&self, dst: Address, port: u8) -> Result<Got, ClientError> {
        let mut q = self.query(dst, PortCounters::ID, u32::from(port));
        q.class = Some(Class::Perf.name().to_string());
        q.method = MadMethod::Set;
        // A PortCounters Set clears whatever its data.
        q.data = Some("00".into());
        self.send(&q)
    }
}

/// What one request brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer<T> {
    /// Status 0, with what it carried.
    Ok(T),
    /// Another status.
    Status(u16),
    /// No answer after every try.
    NoAnswer,
}

impl<T> Answer<T> {
    fn of(g: Got, f: impl FnOnce(Value) -> T) -> Self {
        match g {
            Got::Fields(v) => Answer::Ok(f(v)),
            Got::Status(s) => Answer::Status(s),
            Got::NoAnswer => Answer::NoAnswer,
        }
    }
}

/// A counter over its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Over {
    /// The counter's name.
    pub name: &'static str,
    /// What it reads.
    pub value: u64,
    /// Its limit.
    pub limit: u64,
}

/// One port of a router, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortCheck {
    /// The port.
    pub port: u8,
    /// Its HR and PortState, when the walk read its PortInfo.
    pub hr: Option<(Address, u8)>,
    /// PortCounters' counters.
    pub counters: Answer<Vec<u64>>,
    /// PortCountersExtended's counters (a status when the node does not
    /// count its links).
    pub link: Answer<Vec<u64>>,
    /// The counters over their limits.
    pub over: Vec<Over>,
    /// The clear's answer, with `--clear` (after the counters were read).
    pub cleared: Option<Answer<()>>,
}

impl PortCheck {
    /// Whether every request of the port was answered (PortCountersExtended
    /// with any status: a node that does not count its links answers
    /// 0x000C).
    pub fn answered(&self) -> bool {
        matches!(self.counters, Answer::Ok(_))
            && self.link != Answer::NoAnswer
            && self.cleared.as_ref().is_none_or(|c| *c == Answer::Ok(()))
    }
}

/// What `mwctl errors` found.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The walk.
    pub discovery: Discovery,
    /// The ports of each router of the walk, in its order.
    pub ports: Vec<Vec<PortCheck>>,
    /// The limits checked against.
    pub thresholds: Thresholds,
    /// How long the walk and the reads took.
    pub elapsed: Duration,
}

/// The counters of `v` (an answer's fields: `counters`, a list).
fn values(v: Value) -> Vec<u64> {
    v["counters"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// The counters over their limits, in the thresholds' order.
fn over(t: &Thresholds, counters: &Answer<Vec<u64>>, link: &Answer<Vec<u64>>) -> Vec<Over> {
    t.iter()
        .filter_map(|(name, attr, limit)| {
            let value = match (attr, counters, link) {
                (Attr::Counters(i), Answer::Ok(c), _) => c.get(i).copied(),
                (Attr::Link(i), _, Answer::Ok(l)) => l.get(i).copied(),
                _ => None,
            }?;
            (value > limit).then_some(Over { name, value, limit })
        })
        .collect()
}

/// Reads (and with `clear`, clears) port `port` of the router `r`.
fn check_port<A: Clear>(
    ask: &A,
    r: &Router,
    port: u8,
    t: &Thresholds,
    clear: bool,
) -> Result<PortCheck, ClientError> {
    let hr = r
        .hrs
        .iter()
        .find(|h| h.port == port)
        .and_then(|h| h.info.as_ref())
        .map(|i| (i.address, i.state));
    let counters = Answer::of(
        ask.get(Class::Perf, r.address, PortCounters::ID, u32::from(port))?,
        values,
    );
    let link = Answer::of(
        ask.get(
            Class::Perf,
            r.address,
            PortCountersExtended::ID,
            u32::from(port),
        )?,
        values,
    );
    let over = over(t, &counters, &link);
    let cleared = if clear && matches!(counters, Answer::Ok(_)) {
        Some(Answer::of(ask.clear(r.address, port)?, |_| ()))
    } else {
        None
    };
    Ok(PortCheck {
        port,
        hr,
        counters,
        link,
        over,
        cleared,
    })
}

/// Reads every port of every router of `d`, [`MAX_OUTSTANDING`](crate::discover::MAX_OUTSTANDING) at a
/// time, and checks its counters against `t`; with `clear`, clears each
/// port read.
pub fn check<A: Clear>(
    ask: &A,
    d: Discovery,
    t: Thresholds,
    clear: bool,
) -> Result<Sweep, ClientError> {
    let began = Instant::now();
    let jobs: Vec<(usize, u8)> = d
        .routers
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.hrs.iter().map(move |h| (i, h.port)))
        .collect();
    let checked = in_parallel(jobs, |(i, port)| {
        check_port(ask, &d.routers[i], port, &t, clear).map(|c| (i, c))
    })?;
    let mut ports: Vec<Vec<PortCheck>> = vec![Vec::new(); d.routers.len()];
    for (i, c) in checked {
        ports[i].push(c);
    }
    let elapsed = d.elapsed + began.elapsed();
    Ok(Sweep {
        discovery: d,
        ports,
        thresholds: t,
        elapsed,
    })
}

/// The walk from `start`, then [`check`].
pub fn sweep<A: Clear>(
    ask: &A,
    start: Address,
    t: Thresholds,
    clear: bool,
) -> Result<Sweep, ClientError> {
    let d = crate::discover::walk(ask, start)?;
    check(ask, d, t, clear)
}

impl Sweep {
    fn all_ports(&self) -> impl Iterator<Item = &PortCheck> {
        self.ports.iter().flatten()
    }

    /// Nodes checked: the routers read and the nodes that did not answer.
    pub fn nodes(&self) -> usize {
        self.discovery.routers.len() + self.discovery.unanswered.len()
    }

    /// Routers with a port over a threshold.
    pub fn bad_nodes(&self) -> usize {
        self.ports
            .iter()
            .filter(|p| p.iter().any(|c| !c.over.is_empty()))
            .count()
    }

    /// Ports read.
    pub fn port_count(&self) -> usize {
        self.all_ports().count()
    }

    /// Ports with a counter over its threshold.
    pub fn bad_ports(&self) -> usize {
        self.all_ports().filter(|c| !c.over.is_empty()).count()
    }

    /// Ports with a request that went unanswered.
    pub fn unanswered_ports(&self) -> usize {
        self.all_ports().filter(|c| !c.answered()).count()
    }

    /// Ports cleared.
    pub fn cleared(&self) -> usize {
        self.all_ports()
            .filter(|c| c.cleared == Some(Answer::Ok(())))
            .count()
    }

    /// Whether every node and port answered and no counter is over its
    /// limit.
    pub fn clean(&self) -> bool {
        self.bad_ports() == 0 && self.unanswered_ports() == 0 && self.discovery.complete()
    }

    /// The exit status: 0 when clean, 1 otherwise (a counter over its
    /// threshold, or a node or port that did not answer).
    pub fn exit_code(&self) -> i32 {
        if self.clean() {
            crate::EXIT_OK
        } else {
            crate::EXIT_FAILED
        }
    }
}

/// `active`, `down`, or the port's HR unknown.
fn port_head(c: &PortCheck) -> String {
    match c.hr {
        Some((a, s)) => format!("  [{}] {} {}", c.port, a, state_name(s)),
        None => format!("  [{}] (PortInfo not answered)", c.port),
    }
}

/// Why a request of the port went unanswered, or None.
fn trouble(c: &PortCheck) -> Option<String> {
    let what = |name: &str, a: &Answer<Vec<u64>>| match a {
        Answer::Ok(_) => None,
        Answer::Status(s) => Some(format!("{name} status {s:#06x}")),
        Answer::NoAnswer => Some(format!("{name} not answered")),
    };
    let mut t = Vec::new();
    t.extend(what("PortCounters", &c.counters));
    if c.link == Answer::NoAnswer {
        t.extend(what("PortCountersExtended", &c.link));
    }
    match &c.cleared {
        Some(Answer::Status(s)) => t.push(format!("clear status {s:#06x}")),
        Some(Answer::NoAnswer) => t.push("clear not answered".into()),
        _ => {}
    }
    (!t.is_empty()).then(|| t.join(", "))
}

/// The text, as ibqueryerrors reports: a line per node (clean, or how
/// many ports are over a threshold or did not answer), a line per such
/// port with the counters over their limits, the nodes that did not
/// answer, then the summary and the thresholds.
pub fn render_text(s: &Sweep) -> String {
    let mut out = String::new();
    for (r, ports) in s.discovery.routers.iter().zip(&s.ports) {
        let bad = ports.iter().filter(|c| !c.over.is_empty()).count();
        let silent = ports.iter().filter(|c| !c.answered()).count();
        let mut state = Vec::new();
        if bad > 0 {
            state.push(format!("{bad} over a threshold"));
        }
        if silent > 0 {
            state.push(format!("{silent} not answered"));
        }
        if r.incomplete() {
            state.push("PortInfo or LRT not answered".into());
        }
        let _ = writeln!(
            out,
            "{} (read at {}): {} ports, {}",
            node_title(r),
            r.address,
            ports.len(),
            if state.is_empty() {
                "clean".to_string()
            } else {
                state.join(", ")
            }
        );
        for c in ports {
            let mut parts = Vec::new();
            for o in &c.over {
                parts.push(format!("[{} == {} > {}]", o.name, o.value, o.limit));
            }
            parts.extend(trouble(c));
            if !parts.is_empty() {
                let _ = writeln!(out, "{}: {}", port_head(c), parts.join(" "));
            }
        }
    }
    for u in &s.discovery.unanswered {
        let _ = write!(
            out,
            "no answer from {} (reached by {})",
            u.address,
            u.reached.text()
        );
        if let Some(st) = u.status {
            let _ = write!(out, ": status {st:#06x}");
        }
        out.push('\n');
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{} nodes checked, {} bad nodes found, {} did not answer",
        s.nodes(),
        s.bad_nodes(),
        s.discovery.unanswered.len()
    );
    let _ = writeln!(
        out,
        "{} ports checked, {} ports have counters beyond threshold, {} did not answer",
        s.port_count(),
        s.bad_ports(),
        s.unanswered_ports()
    );
    if s.all_ports().any(|c| c.cleared.is_some()) {
        let _ = writeln!(out, "{} ports cleared", s.cleared());
    }
    let _ = writeln!(out, "thresholds: {}", s.thresholds.summary());
    let _ = writeln!(out, "({} ms)", s.elapsed.as_millis());
    out
}

/// Named counters: `{name: value}` in the attribute's order.
fn named(a: &Answer<Vec<u64>>, name: fn(usize) -> Option<&'static str>) -> Value {
    match a {
        Answer::Ok(v) => Value::Object(
            v.iter()
                .enumerate()
                .map(|(i, c)| {
                    (
                        name(i).map_or_else(|| format!("counter{i}"), str::to_string),
                        Value::from(*c),
                    )
                })
                .collect::<Map<_, _>>(),
        ),
        _ => Value::Null,
    }
}

fn status(a: &Answer<Vec<u64>>) -> Value {
    match a {
        Answer::Ok(_) => json!(0),
        Answer::Status(s) => json!(s),
        Answer::NoAnswer => Value::Null,
    }
}

/// The `--json` object: `nodes` (the routers, each with its `ports`, then
/// the nodes that did not answer), `thresholds`, `counts` and
/// `elapsed_ms`. Numbers are kept beside their names.
pub fn to_json(s: &Sweep) -> Value {
    let mut nodes: Vec<Value> = s
        .discovery
        .routers
        .iter()
        .zip(&s.ports)
        .map(|(r, ports)| {
            let ports: Vec<Value> = ports
                .iter()
                .map(|c| {
                    let over: Vec<Value> = c
                        .over
                        .iter()
                        .map(|o| json!({"counter": o.name, "value": o.value, "limit": o.limit}))
                        .collect();
                    json!({
                        "port": c.port,
                        "address": c.hr.map(|h| h.0),
                        "state": c.hr.map(|h| h.1),
                        "state_name": c.hr.map(|h| state_name(h.1)),
                        "answered": c.answered(),
                        "status": status(&c.counters),
                        "counters": named(&c.counters, PortCounters::name),
                        "link_status": status(&c.link),
                        "link_counters": named(&c.link, PortCountersExtended::name),
                        "over": over,
                        "cleared": c.cleared.as_ref().map(|a| *a == Answer::Ok(())),
                    })
                })
                .collect();
            json!({
                "answered": true,
                "identity": format!("{:#018x}", r.identity),
                "node_type": r.node_type,
                "node_type_name": crate::discover::node_type_name(r.node_type),
                "level": r.level,
                "level_name": level_name(r.level),
                "description": r.description,
                "address": r.address,
                "reached": r.reached.json(),
                "bad": ports.iter().any(|p| p["over"].as_array().is_some_and(|o| !o.is_empty())),
                "complete": !r.incomplete() && ports.iter().all(|p| p["answered"] == true),
                "ports": ports,
            })
        })
        .collect();
    nodes.extend(s.discovery.unanswered.iter().map(|u| {
        json!({
            "answered": false,
            "address": u.address,
            "reached": u.reached.json(),
            "status": u.status,
        })
    }));
    let thresholds: Map<String, Value> = s
        .thresholds
        .iter()
        .map(|(n, _, l)| (n.to_string(), Value::from(l)))
        .collect();
    json!({
        "nodes": nodes,
        "thresholds": thresholds,
        "counts": {
            "nodes": s.nodes(),
            "bad_nodes": s.bad_nodes(),
            "unanswered": s.discovery.unanswered.len(),
            "ports": s.port_count(),
            "bad_ports": s.bad_ports(),
            "ports_unanswered": s.unanswered_ports(),
            "cleared": s.cleared(),
        },
        "elapsed_ms": u64::try_from(s.elapsed.as_millis()).unwrap_or(u64::MAX),
    })
}

/// Runs `mwctl errors`; returns the exit status.
pub fn run(
    cli: &Cli,
    args: &ErrorsArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, ClientError> {
    let t = match &args.thresholds {
        None => Thresholds::default(),
        Some(p) => match Thresholds::read(p) {
            Ok(t) => t,
            Err(e) => {
                let _ = writeln!(err, "mwctl: --thresholds {e}");
                return Ok(crate::EXIT_USAGE);
            }
        },
    };
    let start = crate::sweep::start(cli, &args.walk)?;
    let s = sweep(&SocketAsk::new(cli, &args.walk), start, t, args.clear)?;
    let json = cli.json.then(|| to_json(&s));
    let shortfall = (!s.clean()).then(|| {
        format!(
            "{} ports over a threshold, {} nodes and {} ports did not answer",
            s.bad_ports(),
            s.discovery.unanswered.len(),
            s.unanswered_ports()
        )
    });
    crate::sweep::print(out, err, json.as_ref(), || render_text(&s), shortfall)?;
    Ok(s.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::{MAX_OUTSTANDING, Unanswered};
    use mgmt::attr::{LrtBlock, NodeDescription, NodeInfo, PortInfo, lrt_block};
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    /// Two routers across SAN 0x0601 (a: 0x0111, 0x0112; b: 0x0121),
    /// with counters per (router HR, port); b's port 0 has dropped
    /// truncated packets and a kernel drop; `silent` routers answer
    /// nothing, `protected` ones answer no Set.
    struct Fabric {
        counters: Mutex<BTreeMap<(u16, u8), Vec<u64>>>,
        silent: Vec<u16>,
        protected: bool,
        cleared: Mutex<Vec<(Address, u8)>>,
    }

    const A: [u16; 2] = [0x0111, 0x0112];
    const B: [u16; 1] = [0x0121];

    fn fabric() -> Fabric {
        let mut c = BTreeMap::new();
        for p in 0..2 {
            c.insert((0x0111, p), vec![0; PortCounters::COUNT]);
        }
        let mut b = vec![0; PortCounters::COUNT];
        b[0] = 9; // received
        b[PortCounters::FIRST_DROP] = 4; // dropped.truncated
        c.insert((0x0121, 0), b);
        Fabric {
            counters: Mutex::new(c),
            silent: vec![],
            protected: false,
            cleared: Mutex::new(vec![]),
        }
    }

    impl Fabric {
        fn node(a: Address) -> Option<(u16, &'static [u16])> {
            if A.contains(&a.0) {
                Some((0x0111, &A))
            } else if B.contains(&a.0) {
                Some((0x0121, &B))
            } else {
                None
            }
        }
    }

    impl Ask for Fabric {
        fn get(
            &self,
            class: Class,
            dst: Address,
            attribute: u16,
            modifier: u32,
        ) -> Result<Got, ClientError> {
            let Some((id, hrs)) = Fabric::node(dst) else {
                return Ok(Got::NoAnswer);
            };
            if self.silent.contains(&id) {
                return Ok(Got::NoAnswer);
            }
            let port = (if attribute == LrtBlock::ID {
                modifier >> 16
            } else {
                modifier
            }) as usize;
            let perf = matches!(attribute, PortCounters::ID | PortCountersExtended::ID);
            if class != if perf { Class::Perf } else { Class::Subn } {
                return Ok(Got::Status(0x000c));
            }
            Ok(match attribute {
                NodeInfo::ID => Got::Fields(json!({
                    "node_type": 3, "num_ports": hrs.len(), "node_identity": id,
                    "implementation_level": 2,
                })),
                NodeDescription::ID => Got::Fields(json!(if id == 0x0111 { "a" } else { "b" })),
                PortInfo::ID => Got::Fields(json!({
                    "address": Address(hrs[port]), "san_id": Address(0x0601 + port as u16),
                    "port_state": 4, "mtu": 1500, "cost": 1, "buddies": 1,
                })),
                LrtBlock::ID => {
                    let across: Vec<u16> = match (id, port) {
                        (0x0111, 0) => vec![0x0121, 0x0131],
                        (0x0121, 0) => vec![0x0111],
                        _ => vec![],
                    };
                    let entries: Vec<Value> = across
                        .iter()
                        .take(lrt_block::ENTRIES)
                        .map(|&a| json!({"address": Address(a), "flags": 1}))
                        .collect();
                    Got::Fields(json!({"total": across.len(), "entries": entries}))
                }
                PortCounters::ID => {
                    let c = self.counters.lock().unwrap();
                    match c.get(&(id, port as u8)) {
                        Some(v) => Got::Fields(json!({"port_select": port, "counters": v})),
                        None => Got::Status(0x001c),
                    }
                }
                PortCountersExtended::ID => {
                    let mut l = vec![0; PortCountersExtended::COUNT];
                    if id == 0x0121 {
                        l[2] = 1; // rx_missed
                    }
                    Got::Fields(json!({"port_select": port, "counters": l}))
                }
                _ => Got::Status(0x000c),
            })
        }
    }

    impl Clear for Fabric {
        fn clear(&self, dst: Address, port: u8) -> Result<Got, ClientError> {
            if self.protected {
                return Ok(Got::NoAnswer);
            }
            let (id, _) = Fabric::node(dst).unwrap();
            self.cleared.lock().unwrap().push((dst, port));
            if let Some(v) = self.counters.lock().unwrap().get_mut(&(id, port)) {
                v.iter_mut().for_each(|c| *c = 0);
            }
            Ok(Got::Fields(Value::Null))
        }
    }

    #[test]
    fn a_port_over_a_threshold_is_listed_and_clean_nodes_too() {
        let f = fabric();
        let s = sweep(&f, Address(0x0111), Thresholds::default(), false).unwrap();
        // a, b read; 0x0131, named by a's LRT, did not answer.
        assert_eq!(s.nodes(), 3);
        assert_eq!(s.port_count(), 3);
        assert_eq!(s.bad_ports(), 1);
        assert_eq!(s.bad_nodes(), 1);
        assert_eq!(
            s.ports[1][0].over,
            [
                Over {
                    name: "dropped.truncated",
                    value: 4,
                    limit: 0
                },
                Over {
                    name: "rx_missed",
                    value: 1,
                    limit: 0
                }
            ]
        );
        assert_eq!(s.exit_code(), 1);
        let text = render_text(&s);
        assert!(
            text.contains(
                "router 0x0000000000000111 \"a\" level B (read at 0x0111): 2 ports, clean\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\"b\" level B (read at 0x0121): 1 ports, 1 over a threshold\n  [0] 0x0121 active: [dropped.truncated == 4 > 0] [rx_missed == 1 > 0]\n"),
            "{text}"
        );
        assert!(
            text.contains("no answer from 0x0131 (reached by LRT of 0x0111"),
            "{text}"
        );
        assert!(
            text.contains("3 nodes checked, 1 bad nodes found, 1 did not answer\n3 ports checked, 1 ports have counters beyond threshold, 0 did not answer\n"),
            "{text}"
        );
        assert!(
            text.contains("thresholds: every counter > 0 (19 counters checked)\n"),
            "{text}"
        );
        let v = to_json(&s);
        assert_eq!(v["counts"]["bad_ports"], 1);
        assert_eq!(v["nodes"][0]["bad"], false);
        assert_eq!(v["nodes"][0]["level"], 2);
        assert_eq!(v["nodes"][0]["level_name"], "B");
        assert_eq!(v["nodes"][0]["node_type_name"], "router");
        let p = &v["nodes"][1]["ports"][0];
        assert_eq!(p["state"], 4);
        assert_eq!(p["state_name"], "active");
        assert_eq!(p["counters"]["dropped.truncated"], 4);
        assert_eq!(p["counters"]["received"], 9);
        assert_eq!(p["link_counters"]["rx_missed"], 1);
        assert_eq!(p["over"][0]["counter"], "dropped.truncated");
        assert_eq!(p["cleared"], Value::Null);
        assert_eq!(v["nodes"][2]["answered"], false);
        assert_eq!(v["nodes"][2]["address"], "0x0131");
        assert_eq!(v["thresholds"]["dropped.no-route"], 0);
    }

    #[test]
    fn a_raised_threshold_makes_a_port_clean() {
        let f = fabric();
        let t = Thresholds::parse("dropped.truncated = 4\nrx_missed = 10").unwrap();
        let s = sweep(&f, Address(0x0121), t, false).unwrap();
        assert_eq!(s.bad_ports(), 0);
        // 0x0131 still does not answer: exit 1 all the same.
        assert_eq!(s.discovery.unanswered.len(), 1);
        assert_eq!(s.exit_code(), 1);
        let mut s = s;
        s.discovery.unanswered.clear();
        assert_eq!(s.exit_code(), 0);
        assert!(render_text(&s).contains("\"b\" level B (read at 0x0121): 1 ports, clean"));
    }

    #[test]
    fn clear_resets_every_port_read_after_reading_it() {
        let f = fabric();
        let s = sweep(&f, Address(0x0111), Thresholds::default(), true).unwrap();
        // The counters as they were read, then cleared.
        assert_eq!(s.bad_ports(), 1);
        assert_eq!(s.cleared(), 3);
        assert_eq!(f.cleared.lock().unwrap().len(), 3);
        assert!(render_text(&s).contains("\n3 ports cleared\n"));
        assert_eq!(to_json(&s)["nodes"][1]["ports"][0]["cleared"], true);
        let again = sweep(&f, Address(0x0111), Thresholds::default(), false).unwrap();
        let b = &again.ports[1][0];
        assert_eq!(b.counters, Answer::Ok(vec![0; PortCounters::COUNT]));
        // The fake's link counters are not cleared: rx_missed stays.
        assert_eq!(b.over.len(), 1);
    }

    #[test]
    fn a_clear_not_answered_is_a_port_not_answered() {
        let mut f = fabric();
        f.protected = true;
        let s = sweep(&f, Address(0x0111), Thresholds::default(), true).unwrap();
        assert_eq!(s.cleared(), 0);
        assert_eq!(s.unanswered_ports(), 3);
        let text = render_text(&s);
        assert!(text.contains("clear not answered"), "{text}");
        assert_eq!(s.exit_code(), 1);
    }

    #[test]
    fn a_port_without_counters_and_a_silent_router_are_reported() {
        let f = fabric();
        // No counters for a's port 1: status 0x001c.
        f.counters.lock().unwrap().remove(&(0x0111, 1));
        let s = sweep(&f, Address(0x0111), Thresholds::default(), false).unwrap();
        assert_eq!(s.unanswered_ports(), 1);
        let text = render_text(&s);
        assert!(
            text.contains(
                "2 ports, 1 not answered\n  [1] 0x0112 active: PortCounters status 0x001c\n"
            ),
            "{text}"
        );
        let mut f = fabric();
        f.silent = vec![0x0121];
        let s = sweep(&f, Address(0x0111), Thresholds::default(), false).unwrap();
        assert_eq!(s.discovery.routers.len(), 1);
        assert_eq!(
            s.discovery.unanswered,
            [
                Unanswered {
                    address: Address(0x0121),
                    reached: crate::discover::Reached::Lrt {
                        by: 0x0111,
                        hr: Address(0x0111)
                    },
                    status: None
                },
                Unanswered {
                    address: Address(0x0131),
                    reached: crate::discover::Reached::Lrt {
                        by: 0x0111,
                        hr: Address(0x0111)
                    },
                    status: None
                }
            ]
        );
        assert_eq!(s.nodes(), 3);
        assert_eq!(s.exit_code(), 1);
        assert_eq!(to_json(&s)["counts"]["unanswered"], 2);
    }

    #[test]
    fn many_ports_are_read_in_parallel_and_kept_in_order() {
        // More ports than MAX_OUTSTANDING: each router's in port order.
        let f = fabric();
        let d = crate::discover::walk(&f, Address(0x0111)).unwrap();
        let mut big = d.clone();
        for _ in 0..MAX_OUTSTANDING {
            big.routers.push(d.routers[0].clone());
        }
        let s = check(&f, big, Thresholds::default(), false).unwrap();
        assert_eq!(s.ports.len(), 2 + MAX_OUTSTANDING);
        for p in &s.ports[2..] {
            let ports: Vec<u8> = p.iter().map(|c| c.port).collect();
            assert_eq!(ports, [0, 1]);
        }
    }
}
