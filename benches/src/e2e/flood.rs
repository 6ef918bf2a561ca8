//! The flood part (`benches/e2e --part flood`; docs/reliability.md "A
//! stranger's flood of packets for the box"): mwrouterd on DPDK forwarding
//! mwgen's probes while a stranger floods one of its HRs with packets for
//! the box, against the same run without the flood.
//!
//! The router is the soak's (`super::soak::configs::router`: HRs 0x0101
//! and 0x0102 on memif facing mwgen, HR 0x0103 on memif facing the buddy,
//! a second mwrouterd that keeps it alive with keepalives every 150 ms)
//! with a fourth HR, 0x0104 on SAN 0x0208, whose port is a `net_pcap`
//! vdev replaying a pcap without pause: the flood arrives as fast as the
//! router's one worker takes it, a burst of 32 on every pass over its
//! ports, the worst one core can be given. Rounds, each with the router
//! and the buddy started afresh: no flood (the pcap holds one harmless
//! packet), a flood of management datagrams (Subn Get NodeInfo), a flood
//! of RRP#7; each at two rates of mwgen's probes, fractions of the NDR
//! found without the flood. Per round: mwgen's probes sent and received
//! (the routed rate), the flood taken on port 3 and how its class counted
//! it, the buddy's keepalive answers punted in `routing`, and HR-DOWNs at
//! the router and the buddy (a lost keepalive exchange shows as one).

use std::path::Path;
use std::time::Duration;

use mgmt::attr::NodeInfo;
use mgmt::wire::{MadRepr, Method, MgmtClass, mad_packet};
use rrp::encap;
use rrp::wire::Message;
use rrp::{Address, PuntClass};
use serde_json::{Value, json};

use super::addr::GEN_B_MAC;
use super::config::dpdk_hr;
use super::hugepages::Memory;
use super::mwgen::{self, RunOutcome, SearchSpec, parse_run, parse_search, port_args, search_args};
use super::process::{Proc, pinned, sleep, wait_for_every};
use super::router::Router;
use super::soak::ask;
use super::soak::configs::{self, Sockets};
use super::traffic::{Kind, mac_bytes, profile_args, write_pcap};
use super::{Env, Result, path_str};

/// The flooded HR.
pub const HR_FLOOD: u16 = 0x0104;
/// Its SAN.
pub const SAN_FLOOD: u16 = 0x0208;
/// Its MAC.
pub const FLOOD_MAC: &str = "02:00:00:00:01:04";
/// The stranger's MAC.
pub const STRANGER_MAC: &str = "02:00:00:00:66:66";
/// The SA the stranger writes.
pub const STRANGER: u16 = 0x0150;

/// What a round floods the router with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flood {
    /// Nothing (one harmless packet, once).
    None,
    /// Management datagrams: Subn Get NodeInfo.
    Management,
    /// RRP#7 requests.
    Rrp7,
}

impl Flood {
    /// Every kind, in the order the rounds run.
    pub const ALL: [Flood; 3] = [Flood::None, Flood::Management, Flood::Rrp7];

    /// The name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Flood::None => "none",
            Flood::Management => "management",
            Flood::Rrp7 => "rrp#7",
        }
    }

    /// The punt class its packets fall in.
    pub fn class(self) -> Option<PuntClass> {
        match self {
            Flood::None => None,
            Flood::Management => Some(PuntClass::Management),
            Flood::Rrp7 => Some(PuntClass::Request),
        }
    }

    /// Its frame: from the stranger to the flooded HR.
    pub fn frame(self) -> Vec<u8> {
        let (to, from) = (Address(HR_FLOOD), Address(STRANGER));
        let packet = match self {
            Flood::None | Flood::Rrp7 => Message::WhoAreYou
                .to_packet(to, from)
                .and_then(|p| p.to_bytes())
                .expect("an RRP#7 packet"),
            Flood::Management => {
                let mad = MadRepr::new(MgmtClass::SUBN, Method::GET, 7, NodeInfo::ID, 0)
                    .to_bytes()
                    .expect("a MAD");
                mad_packet(to, from, &mad).expect("a management packet")
            }
        };
        let mut f = mac_bytes(FLOOD_MAC).to_vec();
        f.extend_from_slice(&mac_bytes(STRANGER_MAC));
        f.extend_from_slice(&encap::ETHERTYPE.to_be_bytes());
        f.extend_from_slice(&packet);
        f.resize(f.len().max(encap::ETH_MIN_FRAME), 0);
        f
    }

    /// The vdev of the flooded port replaying `pcap` (without pause,
    /// except for `None`'s one packet); what it would transmit is dropped.
    pub fn device(self, pcap: &Path) -> String {
        format!(
            "net_pcap3,rx_pcap={},infinite_rx={},tx_pcap=/dev/null",
            path_str(pcap),
            u8::from(self != Flood::None)
        )
    }
}

/// The part's options.
#[derive(Debug, Clone, PartialEq)]
pub struct FloodOptions {
    /// Each round's length.
    pub seconds: f64,
    /// The probes' rates, as fractions of the NDR without the flood.
    pub fractions: Vec<f64>,
    /// The probes' rate instead of a search (then one rate).
    pub rate_pps: Option<f64>,
    /// The router's worker's core.
    pub worker_core: u32,
    /// mwgen's core.
    pub gen_core: u32,
    /// The core of everything else (the router's other threads, the buddy).
    pub control_core: u32,
}

impl Default for FloodOptions {
    fn default() -> Self {
        FloodOptions {
            seconds: 10.0,
            fractions: vec![0.5, 0.9],
            rate_pps: None,
            worker_core: 0,
            gen_core: 1,
            control_core: 0,
        }
    }
}

/// One round.
#[derive(Debug, Clone)]
pub struct Round {
    /// The flood.
    pub flood: Flood,
    /// mwgen's probes offered, packets a second.
    pub rate_pps: f64,
    /// mwgen's run.
    pub run: RunOutcome,
    /// Packets the flooded port received.
    pub flood_received: u64,
    /// Of those, punted / dropped over the rate / over the source's share
    /// / with the ring full, in the flood's class.
    pub flood_class: [u64; 4],
    /// The buddy's packets punted in `routing` on the router's HR 0x0103.
    pub routing_punted: u64,
    /// HR-DOWNs handled: at the router, at the buddy.
    pub hr_downs: (u64, u64),
    /// RTs from the buddy at the router at the end, and when the round began.
    pub buddy_rts: (usize, usize),
}

impl Round {
    /// The routed rate: probes received a second.
    pub fn routed_pps(&self) -> f64 {
        self.run.rx_pps
    }
}

/// The router: the soak's three memif HRs and the flooded HR.
fn router_config(
    eal: &[String],
    o: &FloodOptions,
    memifs: &Sockets,
    flood: Flood,
    pcap: &Path,
    socket: &Path,
) -> control::config::Config {
    let mut c = configs::router(eal, o.worker_core, o.control_core, memifs, socket, false);
    c.router.name = "flood".into();
    c.hrs.push(dpdk_hr(
        HR_FLOOD,
        SAN_FLOOD,
        &flood.device(pcap),
        FLOOD_MAC,
        Vec::new(),
    ));
    c
}

fn rrp_u64(v: &Value, k: &str) -> u64 {
    v["rrp"][k].as_u64().unwrap_or(0)
}

/// Runs the part: every flood at every rate; rounds into `rounds`.
pub fn run(env: &Env, mem: &Memory, o: &FloodOptions, rounds: &mut Vec<Round>) -> Result<f64> {
    let mwctl = env.bin("mwctl");
    let eal = mem.eal_flags();
    let memifs = Sockets {
        a: env.file("a.sock"),
        b: env.file("b.sock"),
        c: env.file("c.sock"),
    };
    let pcaps: Vec<(Flood, std::path::PathBuf)> = Flood::ALL
        .iter()
        .map(|&f| {
            let p = env.file(&format!("flood-{}.pcap", f.name().replace('#', "")));
            write_pcap(&p, &[f.frame()]).map(|()| (f, p))
        })
        .collect::<Result<_>>()?;
    let mut cores = vec![o.worker_core, o.control_core];
    cores.sort_unstable();
    cores.dedup();
    let router_cpus = cores
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let gen_core = o.gen_core.to_string();
    let control = o.control_core.to_string();
    let spec = SearchSpec {
        eal: eal.clone(),
        lcore: o.gen_core,
        socket_a: memifs.a.clone(),
        socket_b: memifs.b.clone(),
        rx_mac: GEN_B_MAC,
        trials: 1,
        trial: Duration::from_secs(2),
        precision_pct: Some(5.0),
    };
    let profile = profile_args(Kind::L3, "64");

    // Starts the router (flood `f`) and the buddy; waits for the buddy's RTs.
    let start = |f: Flood, pcap: &Path, n: usize| -> Result<(Router, Router, usize)> {
        for s in [&memifs.a, &memifs.b, &memifs.c] {
            let _ = std::fs::remove_file(s);
        }
        let mut router = Router::spawn(
            env,
            "mwrouterd",
            &format!("router-{n}"),
            |s| router_config(&eal, o, &memifs, f, pcap, s),
            |bin| pinned(bin, Some(&router_cpus)),
        )?;
        router.wait_ready()?;
        let buddy = Router::spawn(
            env,
            "the buddy",
            &format!("buddy-{n}"),
            |s| configs::buddy(o.control_core, &memifs.c, s),
            |bin| pinned(bin, Some(&control)),
        )?;
        let rsock = router.socket().to_path_buf();
        wait_for_every(
            "the buddy's RTs at the router",
            Duration::from_secs(30),
            Duration::from_millis(100),
            || {
                router.check_running()?;
                Ok(ask::rts_from_buddies(&mwctl, &rsock) > 0)
            },
        )?;
        sleep(Duration::from_secs(1))?;
        let rts = ask::rts_from_buddies(&mwctl, &rsock);
        Ok((router, buddy, rts))
    };

    // The NDR without the flood.
    let ndr = match o.rate_pps {
        Some(r) => r,
        None => {
            let (f, pcap) = &pcaps[0];
            let (router, buddy, _) = start(*f, pcap, 0)?;
            let sj = env.file("search.json");
            let mut cmd = pinned(env.bin("mwgen"), Some(&gen_core));
            cmd.args(port_args(&spec, &profile))
                .args(search_args(&spec, &sj));
            println!("flood: NDR search without the flood (2 s trials, 5 % precision) ...");
            let (_, rep) = mwgen::run_to_end(cmd, &sj, &env.file("search.log"))?;
            let s = parse_search(&rep)?;
            let _ = router.terminate(Duration::from_secs(15));
            let _ = buddy.terminate(Duration::from_secs(10));
            println!("flood: NDR {:.3} Mpps", s.ndr_pps / 1e6);
            if s.ndr_pps <= 0.0 {
                return Err("the NDR search found no rate without loss".into());
            }
            s.ndr_pps
        }
    };
    let rates: Vec<f64> = match o.rate_pps {
        Some(r) => vec![r],
        None => o.fractions.iter().map(|f| f * ndr).collect(),
    };

    let mut n = 1;
    for &rate in &rates {
        for (flood, pcap) in &pcaps {
            let (mut router, buddy, rts_before) = start(*flood, pcap, n)?;
            n += 1;
            let rsock = router.socket().to_path_buf();
            let bsock = buddy.socket().to_path_buf();
            let before: Value = ask::mwctl(&mwctl, &rsock, &["stats"])?;
            let punt_before: Value = ask::mwctl(&mwctl, &rsock, &["show", "punt"])?;
            let rj = env.file(&format!("run-{n}.json"));
            let mut cmd = pinned(env.bin("mwgen"), Some(&gen_core));
            cmd.args(port_args(&spec, &profile)).args([
                "--rate".to_string(),
                format!("{rate:.0}pps"),
                "--duration".into(),
                format!("{}ms", (o.seconds * 1000.0) as u64),
                "--json".into(),
                path_str(&rj),
                "--quiet".into(),
            ]);
            let mut generator =
                Proc::spawn("mwgen", cmd, &env.file(&format!("mwgen-{n}.log")), false)?;
            while generator.try_status()?.is_none() {
                router
                    .check_running()
                    .map_err(|e| format!("mwrouterd exited during the round: {e}"))?;
                sleep(Duration::from_millis(100))?;
            }
            let run = parse_run(&mwgen::read_report(&rj)?)?;
            let after: Value = ask::mwctl(&mwctl, &rsock, &["stats"])?;
            let punt: Value = ask::mwctl(&mwctl, &rsock, &["show", "punt"])?;
            let buddy_stats: Value = ask::mwctl(&mwctl, &bsock, &["stats"])?;
            let rts_after = ask::rts_from_buddies(&mwctl, &rsock);
            let class_row = |v: &Value, port: u64, class: &str| -> [u64; 4] {
                let r = v["classes"]
                    .as_array()
                    .and_then(|rows| {
                        rows.iter()
                            .find(|r| r["port"] == port && r["class"] == class)
                            .cloned()
                    })
                    .unwrap_or(Value::Null);
                ["punted", "over_rate", "over_share", "ring_full"]
                    .map(|k| r[k].as_u64().unwrap_or(0))
            };
            let minus = |a: [u64; 4], b: [u64; 4]| -> [u64; 4] {
                [0, 1, 2, 3].map(|i| a[i].saturating_sub(b[i]))
            };
            let flood_class = match flood.class() {
                Some(c) => minus(
                    class_row(&punt, 3, c.name()),
                    class_row(&punt_before, 3, c.name()),
                ),
                None => [0; 4],
            };
            let routing = minus(
                class_row(&punt, 2, "routing"),
                class_row(&punt_before, 2, "routing"),
            );
            let port_received = |v: &Value| v["ports"][3]["received"].as_u64().unwrap_or(0);
            let round = Round {
                flood: *flood,
                rate_pps: rate,
                run,
                flood_received: port_received(&after).saturating_sub(port_received(&before)),
                flood_class,
                routing_punted: routing[0],
                hr_downs: (rrp_u64(&after, "hr_down"), rrp_u64(&buddy_stats, "hr_down")),
                buddy_rts: (rts_after, rts_before),
            };
            println!("{}", row_text(&round, o.seconds));
            rounds.push(round);
            let _ = router.terminate(Duration::from_secs(15));
            let _ = buddy.terminate(Duration::from_secs(10));
        }
    }
    Ok(ndr)
}

fn row_text(r: &Round, seconds: f64) -> String {
    format!(
        "{:<11} {:>8.3} {:>8.3} {:>9.4} {:>9.3} {:>10} {:>12} {:>8} {:>6} {:>7}",
        r.flood.name(),
        r.rate_pps / 1e6,
        r.routed_pps() / 1e6,
        r.run.loss_ratio,
        r.flood_received as f64 / seconds / 1e6,
        r.flood_class[0],
        r.flood_class[1] + r.flood_class[2] + r.flood_class[3],
        r.routing_punted,
        format!("{}/{}", r.hr_downs.0, r.hr_downs.1),
        format!("{}/{}", r.buddy_rts.0, r.buddy_rts.1),
    )
}

/// The part's table: per round, the routed rate against the same rate
/// without the flood.
pub fn table(ndr: f64, rounds: &[Round], seconds: f64) -> String {
    let mut s = format!(
        "Part flood: mwrouterd forwarding mwgen's L3 64 B probes (memif) while port 3 is flooded \
         (pcap, no pause); NDR without the flood {:.3} Mpps\n{:<11} {:>8} {:>8} {:>9} {:>9} {:>10} \
         {:>12} {:>8} {:>6} {:>7} {:>8}\n",
        ndr / 1e6,
        "flood",
        "offered",
        "routed",
        "loss",
        "flood",
        "punted",
        "dropped",
        "routing",
        "downs",
        "rts",
        "/ none"
    );
    for r in rounds {
        let base = rounds
            .iter()
            .find(|b| b.flood == Flood::None && b.rate_pps == r.rate_pps)
            .map(Round::routed_pps)
            .filter(|b| *b > 0.0);
        s += &format!(
            "{} {:>8}\n",
            row_text(r, seconds),
            base.map_or_else(|| "-".into(), |b| format!("{:.3}", r.routed_pps() / b))
        );
    }
    s += "(Mpps; loss: mwgen's probes; flood: packets a second taken on port 3; punted and dropped: \
          in the flood's class; routing: the buddy's packets punted on port 2; downs: HR-DOWNs at \
          the router/the buddy; rts: the buddy's RTs at the router at the end/at the start)\n";
    s
}

/// The part's JSON.
pub fn to_json(ndr: f64, rounds: &[Round], o: &FloodOptions) -> Value {
    json!({
        "ndr_pps": ndr,
        "seconds": o.seconds,
        "cores": {"worker": o.worker_core, "generator": o.gen_core, "control": o.control_core},
        "rounds": rounds.iter().map(|r| json!({
            "flood": r.flood.name(),
            "offered_pps": r.rate_pps,
            "routed_pps": r.routed_pps(),
            "sent": r.run.sent,
            "received": r.run.received,
            "lost": r.run.lost,
            "loss_ratio": r.run.loss_ratio,
            "flood_received": r.flood_received,
            "flood_punted": r.flood_class[0],
            "flood_over_rate": r.flood_class[1],
            "flood_over_share": r.flood_class[2],
            "flood_ring_full": r.flood_class[3],
            "routing_punted": r.routing_punted,
            "hr_downs_router": r.hr_downs.0,
            "hr_downs_buddy": r.hr_downs.1,
            "buddy_rts_end": r.buddy_rts.0,
            "buddy_rts_start": r.buddy_rts.1,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flood_frames_are_for_the_flooded_hr_from_the_stranger() {
        for f in Flood::ALL {
            let frame = f.frame();
            assert!(frame.len() >= encap::ETH_MIN_FRAME);
            assert_eq!(frame[..6], mac_bytes(FLOOD_MAC));
            let p = rrp::wire::PacketRepr::parse(&frame[encap::ETH_HEADER_LEN..]).unwrap();
            assert_eq!(p.header.dst, Address(HR_FLOOD));
            assert_eq!(p.header.src, Address(STRANGER));
            let want = match f.class() {
                Some(PuntClass::Management) => rrp::PacketType::MANAGEMENT,
                _ => rrp::PacketType::RRP,
            };
            assert_eq!(p.header.packet_type, want);
        }
        assert!(
            Flood::Management
                .device(Path::new("/x.pcap"))
                .contains("infinite_rx=1")
        );
        assert!(
            Flood::None
                .device(Path::new("/x.pcap"))
                .contains("infinite_rx=0")
        );
    }
}
