//! Part scale: mwrouterd with two workers against one, on the same four
//! ports, side by side (`benches/e2e --part scale`).
//!
//! Two independent pcap -> null pairs: HR 0x0101 (`net_pcap0`, replaying
//! L3 frames from node 0x0130 to 0x0230) forwards to HR 0x0102
//! (`net_null0`, static entry 0x0230), and HR 0x0103 (`net_pcap1`, frames
//! from 0x0330 to 0x0430) to HR 0x0104 (`net_null1`, static entry 0x0430).
//! One worker polls all four ports; two workers each own one pair (worker
//! 0 the ports of HRs 0x0101 and 0x0102, worker 1 those of 0x0103 and
//! 0x0104), which mwrouterd's `[workers]` section must be able to say:
//! [`OWNED_PORTS_TOML`], or the lines given with `--scale-workers-toml`.
//! Before measuring, the two-worker configuration is checked with
//! `mwrouterd --check`; a daemon that refuses it cannot run the part (said
//! in the output and the JSON, with its message).
//!
//! The rate is the sum over the two null ports of (transmitted −
//! injected) between two publications of the counters; per round the two
//! configurations run in turn (the order reversed every other round), and
//! the reported ratio is the median of the rounds' (two workers / one).
//! With two CPUs the second worker shares core 0 with mwrouterd's control
//! thread and this harness: a figure for a machine with more cores, where
//! the workers get cores 1 and 2.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use admin::LogLevel;
use control::config::{Config, WorkersSection};
use rrp::wire::{HeaderRepr, PacketRepr};
use rrp::{Address, encap};
use serde_json::{Value, json};

use super::config;
use super::hugepages::Memory;
use super::process::{check_interrupt, command_line, shell_words};
use super::router::{self, Router};
use super::traffic::{mac_bytes, write_pcap};
use super::{Env, Options, PART1_WORKER_LCORE, Result, median, path_str, ratio};

/// The `[workers]` lines that give worker 0 the ports of HRs 0 and 1 and
/// worker 1 those of HRs 2 and 3 (in `[[hr]]` order): the syntax of the
/// daemon's port-ownership mode as it was being written (uncommitted) when
/// this part was: `spread = "ports"` (no flow rules, one worker receives
/// from each port) and `owners`, the receiving worker of each HR. Another
/// syntax can be given with `--scale-workers-toml`.
pub const OWNED_PORTS_TOML: &str = "spread = \"ports\"\nowners = [0, 0, 1, 1]";

/// Frame size (Ethernet, no FCS).
pub const FRAME: usize = 64;
/// Frames per pcap.
const FRAMES: usize = 1024;

/// One pair: ingress HR, its MAC, the source node and its MAC; egress HR,
/// its MAC, the destination node and its MAC.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    /// Ingress HR (on the pcap port).
    pub hr_in: u16,
    /// Egress HR (on the null port).
    pub hr_out: u16,
    /// The source node (on the ingress SAN).
    pub src: u16,
    /// The destination node (a static entry of the egress HR).
    pub dst: u16,
}

/// The two pairs.
pub const PAIRS: [Pair; 2] = [
    Pair {
        hr_in: 0x0101,
        hr_out: 0x0102,
        src: 0x0130,
        dst: 0x0230,
    },
    Pair {
        hr_in: 0x0103,
        hr_out: 0x0104,
        src: 0x0330,
        dst: 0x0430,
    },
];

/// The MAC of HR or node `a`: 02:00:00:00:HH:LL.
pub fn mac_of(a: u16) -> String {
    format!("02:00:00:00:{:02x}:{:02x}", a >> 8, a & 0xFF)
}

/// The SAN of HR `hr` (0x0101 -> 0x0201).
fn san_of(hr: u16) -> u16 {
    0x0200 | (hr & 0xFF)
}

/// A MessageWay L3 packet of `pair` in an Ethernet frame of `size` bytes
/// to the ingress HR's MAC, padded.
pub fn frame(pair: &Pair, size: usize, seq: usize) -> Vec<u8> {
    let eep = (size - encap::ETH_HEADER_LEN) & !7;
    let data_len = eep - rrp::wire::HEADER_LEN - rrp::wire::TRAILER_LEN;
    let p = PacketRepr {
        l2rhs: Vec::new(),
        header: HeaderRepr {
            dst: Address(pair.dst),
            src: Address(pair.src),
            packet_type: rrp::kind::PacketType(0x0100),
            ..HeaderRepr::default()
        },
        data: (0..data_len).map(|i| (i + seq) as u8).collect(),
        ei: 0,
    };
    let mut f = mac_bytes(&mac_of(pair.hr_in)).to_vec();
    f.extend_from_slice(&mac_bytes(&mac_of(pair.src)));
    f.extend_from_slice(&encap::ETHERTYPE.to_be_bytes());
    f.extend_from_slice(&p.to_bytes().expect("a valid packet"));
    f.resize(size, 0);
    f
}

/// The four devices in `[[hr]]` order: pcap 0, null 0, pcap 1, null 1.
/// Each worker may transmit on every port, and a pcap port has as many
/// transmit queues as `tx_pcap` arguments (one without, which drops): so
/// each pcap port has two, to /dev/null (nothing is routed to them), in
/// both configurations.
pub fn devices(pcaps: &[&Path; 2]) -> [String; 4] {
    let pcap = |i: usize| {
        format!(
            "net_pcap{i},rx_pcap={},infinite_rx=1,tx_pcap=/dev/null,tx_pcap=/dev/null",
            path_str(pcaps[i])
        )
    };
    [
        pcap(0),
        "net_null0,no-rx=1".to_string(),
        pcap(1),
        "net_null1,no-rx=1".to_string(),
    ]
}

/// mwrouterd's configuration: four HRs, `workers` its `[workers]`.
pub fn router_config(
    eal: &[String],
    devices: &[String; 4],
    workers: WorkersSection,
    socket: &Path,
) -> Config {
    let mut hrs = Vec::new();
    for (i, pair) in PAIRS.iter().enumerate() {
        for (hr, dev, stat) in [
            (pair.hr_in, &devices[2 * i], None),
            (pair.hr_out, &devices[2 * i + 1], Some(pair.dst)),
        ] {
            let statics = stat
                .map(|n| config::static_node(n, &mac_of(n), &[]))
                .into_iter()
                .collect();
            hrs.push(config::dpdk_hr(hr, san_of(hr), dev, &mac_of(hr), statics));
        }
    }
    config::dpdk_router(
        "e2e-scale",
        config::eal_on(eal, 0),
        workers,
        socket,
        LogLevel::Warn,
        hrs,
    )
}

/// The `[workers]` of one busy-polling worker on `core`.
pub fn one_worker(core: u32) -> WorkersSection {
    config::busy_poll_workers(&[core as usize])
}

/// The `[workers]` lines of two workers on `cores`, each owning a pair
/// (`owned`: [`OWNED_PORTS_TOML`] or the operator's lines).
pub fn two_workers(cores: (u32, u32), owned: &str) -> String {
    format!(
        "count = 2\ncores = [{}, {}]\nidle = \"busy-poll\"\n{owned}",
        cores.0, cores.1
    )
}

/// The workers' cores: `--scale-cores`, else 1 and 2, or 1 and 0 on a
/// machine of two CPUs.
pub fn cores(opts: &Options) -> (u32, u32) {
    opts.scale_cores.unwrap_or(if crate::sysinfo::cpus() > 2 {
        (PART1_WORKER_LCORE, PART1_WORKER_LCORE + 1)
    } else {
        (PART1_WORKER_LCORE, 0)
    })
}

/// One configuration in one round.
#[derive(Debug, Clone)]
pub struct Run {
    /// Workers (1 or 2).
    pub workers: u32,
    /// The round (from 0).
    pub round: u32,
    /// Forwarded packets per second out of both null ports, millions.
    pub mpps: f64,
    /// The JSON record.
    pub record: Value,
}

/// The part's results.
#[derive(Debug, Clone, Default)]
pub struct ScalePart {
    /// Every run.
    pub runs: Vec<Run>,
    /// The two-worker `[workers]` lines used.
    pub workers_toml: String,
    /// The cores of the two workers.
    pub cores: Option<(u32, u32)>,
    /// `mwrouterd --check` of the two-worker configuration: `None` before
    /// it ran, else whether the daemon accepted it.
    pub supported: Option<bool>,
    /// The daemon's message when it refused it.
    pub refused: Option<String>,
}

impl ScalePart {
    /// The rates with `workers` workers, round by round.
    pub fn rounds(&self, workers: u32) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.workers == workers)
            .map(|r| r.mpps)
            .collect()
    }

    /// Two workers / one, in each round that has both.
    pub fn round_ratios(&self) -> Vec<f64> {
        let of = |w: u32, k: u32| {
            self.runs
                .iter()
                .find(|r| r.workers == w && r.round == k)
                .map(|r| r.mpps)
        };
        let mut rounds: Vec<u32> = self.runs.iter().map(|r| r.round).collect();
        rounds.sort_unstable();
        rounds.dedup();
        rounds
            .into_iter()
            .filter_map(|k| of(2, k).zip(of(1, k)))
            .filter_map(|(a, b)| ratio(a, b))
            .collect()
    }

    /// The median of the rounds' ratios.
    pub fn ratio(&self) -> Option<f64> {
        median(self.round_ratios())
    }
}

/// `mwrouterd --check --config FILE`: `Ok(None)` when valid, `Ok(Some(why))`
/// when the daemon refuses it.
fn check_config(env: &Env, config: &Path) -> Result<Option<String>> {
    let mut cmd = Command::new(env.bin("mwrouterd"));
    cmd.arg("--check").arg("--config").arg(config);
    let words = command_line(&cmd);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", shell_words(&words)))?;
    if out.status.success() {
        return Ok(None);
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(Some(text.trim().to_string()))
}

/// Runs the part into `out`.
pub fn run(env: &Env, opts: &Options, mem: &Memory, out: &mut ScalePart) -> Result<()> {
    let cores = cores(opts);
    let owned = opts
        .scale_workers_toml
        .clone()
        .unwrap_or_else(|| OWNED_PORTS_TOML.to_string());
    out.cores = Some(cores);
    out.workers_toml = two_workers(cores, &owned);
    println!(
        "\nPart scale: mwrouterd, 2 workers (cores {} and {}, each owning a pcap -> null pair) \
         against 1 (core {}) on the same 4 ports, {FRAME} B L3; warm-up {:?}, interval {:?}, {} \
         round(s)",
        cores.0,
        cores.1,
        cores.0,
        opts.warmup(),
        opts.interval(),
        opts.rounds()
    );
    if crate::sysinfo::cpus() <= 2 {
        println!(
            "  (2 CPUs: the second worker shares core {} with mwrouterd's control thread and \
             this harness)",
            cores.1
        );
    }
    let mut paths = Vec::new();
    for (i, pair) in PAIRS.iter().enumerate() {
        let p = env.file(&format!("scale-{i}.pcap"));
        write_pcap(
            &p,
            &(0..FRAMES)
                .map(|k| frame(pair, FRAME, k))
                .collect::<Vec<_>>(),
        )?;
        paths.push(p);
    }
    let devs = devices(&[&paths[0], &paths[1]]);
    let eal = mem.eal_flags();

    let refused = |out: &mut ScalePart, why: String, by: &str| {
        out.supported = Some(false);
        out.refused = Some(why.clone());
        format!(
            "this mwrouterd cannot run two workers that each own whole ports: {by} refuses the \
             [workers] lines\n{}\n({why}); give the daemon's syntax with --scale-workers-toml \
             \"...\"",
            out.workers_toml
        )
    };
    let two = match config::workers_from_toml(&out.workers_toml) {
        Ok(w) => w,
        Err(why) => return Err(refused(out, why, "mwrouterd's configuration")),
    };
    let check = env.file("scale-check.toml");
    config::write(
        &check,
        &router_config(&eal, &devs, two.clone(), &env.file("scale-check.sock")),
    )?;
    if let Some(why) = check_config(env, &check)? {
        return Err(refused(out, why, "`mwrouterd --check`"));
    }
    out.supported = Some(true);

    for round in 0..opts.rounds() {
        let mut order = [1u32, 2];
        if round % 2 == 1 {
            order.reverse();
        }
        for workers in order {
            check_interrupt()?;
            let busy = super::wait_quiet(opts.patience())?;
            let section = if workers == 1 {
                one_worker(cores.0)
            } else {
                two.clone()
            };
            let mut r = run_router(env, opts, &eal, &devs, section, workers)?;
            r.round = round;
            r.record["round"] = json!(round);
            r.record["other_busy_cpus_before"] = json!(busy);
            println!(
                "    {} worker(s) {:>8.2} Mpps ({})",
                workers, r.mpps, r.record["per_pair_mpps"]
            );
            out.runs.push(r);
        }
    }
    Ok(())
}

fn run_router(
    env: &Env,
    opts: &Options,
    eal: &[String],
    devs: &[String; 4],
    section: WorkersSection,
    workers: u32,
) -> Result<Run> {
    let tag = format!("scale-{workers}w");
    let mut r = Router::start_with(env, &tag, |socket| {
        router_config(eal, devs, section, socket)
    })?;
    let command = r.command().to_vec();
    let config = std::fs::read_to_string(r.config()).unwrap_or_default();
    let m = router::measure(&mut r, opts.warmup(), opts.interval())?;
    let tail = r.log_tail(20);
    let exited_on_sigterm = r.stop(Duration::from_secs(3))?;
    let secs = m.interval.as_secs_f64().max(1e-9);
    let out_of = |i: usize| {
        m.delta
            .get(i)
            .map_or(0, |p| p.transmitted.saturating_sub(p.injected))
    };
    let per_pair: Vec<f64> = [1, 3]
        .iter()
        .map(|&i| out_of(i) as f64 / secs / 1e6)
        .collect();
    let total: f64 = per_pair.iter().sum();
    if per_pair.contains(&0.0) {
        return Err(format!(
            "mwrouterd with {workers} worker(s) forwarded nothing on a pair (Mpps per pair \
             {per_pair:?}; drops: {}, {}); its configuration: {}; the end of its output:\n{tail}",
            m.delta.first().map(router::drops_text).unwrap_or_default(),
            m.delta.get(2).map(router::drops_text).unwrap_or_default(),
            env.file(&format!("{tag}.toml")).display()
        ));
    }
    Ok(Run {
        workers,
        round: 0,
        mpps: total,
        record: json!({
            "workers": workers,
            "command": command,
            "config": config,
            "warmup_s": opts.warmup().as_secs_f64(),
            "duration_s": secs,
            "mpps": total,
            "per_pair_mpps": per_pair,
            "ports": m.delta.iter().enumerate().map(|(i, p)| (i.to_string(), json!({
                "vdev": devs.get(i),
                "delta": router::port_json(p),
            }))).collect::<serde_json::Map<_, _>>(),
            "exited_on_sigterm": exited_on_sigterm,
        }),
    })
}

/// The part's table.
pub fn table(p: &ScalePart) -> String {
    let opt = |v: Option<f64>| v.map_or_else(|| "-".into(), |x| format!("{x:.2}"));
    let mut s = format!(
        "Part scale: mwrouterd Mpps forwarded out of 2 null ports ({FRAME} B L3, 2 pcap -> null \
         pairs); medians, ratio within a round\n{:<10} {:>10} {:>10} {:>10} {:>24}\n",
        "", "1 worker", "2 workers", "2 / 1", "rounds' 2 / 1"
    );
    let rr: Vec<String> = p.round_ratios().iter().map(|r| format!("{r:.2}")).collect();
    s += &format!(
        "{:<10} {:>10} {:>10} {:>10} {:>24}\n",
        "L3 64 B",
        opt(median(p.rounds(1))),
        opt(median(p.rounds(2))),
        opt(p.ratio()),
        rr.join(", ")
    );
    if p.supported == Some(false) {
        s += &format!(
            "(not run: mwrouterd refused the two-worker configuration: {})\n",
            p.refused.as_deref().unwrap_or("")
        );
    }
    s
}

/// The part's JSON.
pub fn to_json(p: &ScalePart, opts: &Options) -> Value {
    json!({
        "warmup_s": opts.warmup().as_secs_f64(),
        "interval_s": opts.interval().as_secs_f64(),
        "rounds": opts.rounds(),
        "frame_bytes": FRAME,
        "cores": p.cores.map(|(a, b)| [a, b]),
        "two_workers_toml": p.workers_toml,
        "supported": p.supported,
        "refused": p.refused,
        "mpps": {
            "1": { "median": median(p.rounds(1)), "rounds": p.rounds(1) },
            "2": { "median": median(p.rounds(2)), "rounds": p.rounds(2) },
        },
        "ratio_2_vs_1": p.ratio(),
        "rounds_ratio_2_vs_1": p.round_ratios(),
        "runs": p.runs.iter().map(|r| r.record.clone()).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use control::config::{IdleMode, SpreadMode};
    use rrp::limits::MAX_L2RHS;
    use rrp::wire::{Header, locate};

    #[test]
    fn frames_go_to_their_ingress_hr_and_destination() {
        for pair in &PAIRS {
            let f = frame(pair, FRAME, 5);
            assert_eq!(f.len(), FRAME);
            assert_eq!(f[..6], mac_bytes(&mac_of(pair.hr_in)));
            let l = locate(&f[14..], MAX_L2RHS).unwrap();
            assert_eq!(l.l2rh_count, 0);
            let h = Header::new_unchecked(&f[14 + l.header_offset..]);
            assert_eq!((h.src().0, h.dst().0), (pair.src, pair.dst));
        }
        assert_eq!(mac_of(0x0103), "02:00:00:00:01:03");
    }

    #[test]
    fn the_configuration_pairs_pcap_and_null_ports() {
        let devs = devices(&[Path::new("/a.pcap"), Path::new("/b.pcap")]);
        let two = config::workers_from_toml(&two_workers((1, 0), OWNED_PORTS_TOML)).unwrap();
        let c = router_config(
            &["--in-memory".into()],
            &devs,
            two,
            Path::new("/tmp/s.sock"),
        );
        let t = c.to_toml();
        assert_eq!(t.matches("[[hr]]").count(), 4);
        // count = 2, cores = [1, 0], idle = "busy-poll", spread = "ports",
        // owners = [0, 0, 1, 1], as mwrouterd reads the file.
        let read = Config::from_toml(&t).unwrap();
        assert_eq!(
            read.workers,
            WorkersSection {
                count: 2,
                cores: Some(vec![1, 0]),
                idle: IdleMode::BusyPoll,
                spread: SpreadMode::Ports,
                owners: Some(vec![0, 0, 1, 1]),
                ..WorkersSection::default()
            }
        );
        // HR order: pcap0, null0, pcap1, null1; the static entries on the nulls.
        let order: Vec<usize> = ["net_pcap0", "net_null0", "net_pcap1", "net_null1"]
            .iter()
            .map(|d| t.find(d).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]));
        assert!(t.contains("address = 0x0430\nnative = \"02:00:00:00:04:30\""));
        assert!(t.contains("address = 0x0103\nsan_id = 0x0203"));
    }

    #[test]
    fn ratios_are_two_over_one_within_a_round() {
        let mut p = ScalePart::default();
        for (k, one, two) in [(0, 10.0, 18.0), (1, 12.0, 12.0), (2, 10.0, 20.0)] {
            for (w, x) in [(1, one), (2, two)] {
                p.runs.push(Run {
                    workers: w,
                    round: k,
                    mpps: x,
                    record: Value::Null,
                });
            }
        }
        assert_eq!(p.round_ratios(), vec![1.8, 1.0, 2.0]);
        assert_eq!(p.ratio(), Some(1.8));
    }
}
