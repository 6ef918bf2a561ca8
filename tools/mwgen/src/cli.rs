//! The command line: arguments, checks, and running on the chosen backend.
//!
//! Exit codes: 0 done; 1 a port could not be opened or a file not written
//! (or a run failed); 2 bad arguments.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Parser;
use ports::Port;
use ports::clock::{Clock, MonotonicClock};
use rrp::{LinkKind, NativeAddr};

use crate::backend::{PortArg, parse_impair};
use crate::cores::{MAX_CORES, run_cores};
use crate::generator::Generator;
use crate::pcap::{self, PcapLink};
use crate::profile::{self, Profile, Sizes, Template, mean_frame};
use crate::rate::{Rate, parse_duration};
use crate::report::{self, ProfileInfo, Report};
use crate::run::{Idle, RunSpec, run};
use crate::search::{Event, MAX_TRIES, SearchSpec, search};

/// Probes per timed probe by default (`--latency-every`): at 1 Mpps still
/// 62,500 samples a second, a sixteenth of the histogram records.
pub const DEFAULT_LATENCY_EVERY: u64 = 16;

/// mwgen: sends MessageWay probe traffic through a router and measures what
/// comes back (loss, duplication, reordering, throughput, one-way latency),
/// or searches for the highest rate without loss (NDR/PDR).
#[derive(Debug, Parser)]
#[command(name = "mwgen", version, about, long_about = None)]
#[command(after_help = "Examples:\n  \
  mwgen --tx udp:127.0.0.1:35130 --rx udp:127.0.0.1:35230 --to 127.0.0.1:35101 --dst 0x0230 --rate 10kpps --duration 5s\n  \
  mwgen --eal '--no-huge -m 512 --no-pci --no-shconf -l 1' --tx dpdk:net_memif0,role=client,socket=/tmp/a.sock \\\n        \
  --rx dpdk:net_memif1,role=client,socket=/tmp/b.sock --rx-mac 02:00:00:00:02:30 --to 02:00:00:00:01:01 --search\n  \
  mwgen --write-pcap l3-64.pcap --to 02:00:00:00:01:01 --dst 0x0230 --size 64 --count 1024\n  \
  mwgen --tx mem --impair loss=0.01,reorder=0.001,delay=50us --count 100000\n\n\
Docs: docs/mwgen.md")]
pub struct Args {
    /// Port to send on: udp:ADDR:PORT, af_packet:IFNAME, dpdk:DEVICE or mem.
    #[arg(long, value_name = "PORT")]
    pub tx: Option<PortArg>,
    /// Port to receive on (same backend as --tx); default: the --tx port.
    #[arg(long, value_name = "PORT")]
    pub rx: Option<PortArg>,
    /// EAL arguments for dpdk ports, one string (the --vdev/-a of the ports are added).
    #[arg(
        long,
        value_name = "ARGS",
        allow_hyphen_values = true,
        default_value = "--no-huge -m 512 --no-pci --no-shconf --no-telemetry --log-level=warning"
    )]
    pub eal: String,
    /// MAC of the --tx port (dpdk; the source of written pcap frames).
    #[arg(long, value_name = "MAC")]
    pub mac: Option<String>,
    /// MAC of the --rx port (dpdk): what the router's static entry names.
    #[arg(long, value_name = "MAC")]
    pub rx_mac: Option<String>,
    /// Pin the generator to this core (with --cores: the first of its cores).
    #[arg(long, value_name = "N")]
    pub core: Option<usize>,
    /// Generator threads, each on its own core with its own queue of the ports (DPDK).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub cores: usize,
    /// NativeAddr address of the next hop on the transmit SAN (the router's HR): a MAC or ADDR:PORT; default: every member (broadcast).
    #[arg(long, value_name = "NATIVE")]
    pub to: Option<String>,
    /// Source MessageWay address.
    #[arg(long, default_value = "0x0130")]
    pub src: String,
    /// Destinations: 0x0230, 0x0230-0x023f, or a comma-separated list.
    #[arg(long, default_value = "0x0230")]
    pub dst: String,
    /// L2 source route: EGRESS@NATIVE hops separated by '/', first router first.
    #[arg(long, value_name = "ROUTE")]
    pub l2: Option<String>,
    /// Frame sizes (at the router's ingress, no FCS): 64, 64-1500, 64,512,1500 or imix.
    #[arg(long, default_value = "64")]
    pub size: String,
    /// Priority field of the EEP header.
    #[arg(long, default_value_t = 0)]
    pub priority: u8,
    /// Mark every packet with this partition (the Free field): KEY (a full member's mark) or KEY:limited; none: unmarked.
    #[arg(long, value_name = "KEY[:limited]", conflicts_with = "pcap")]
    pub partition: Option<String>,
    /// Rate: max, 1000pps, 1.5Mpps, 1Gbps.
    #[arg(long, default_value = "max")]
    pub rate: String,
    /// How long to send (10s, 500ms); default 10s unless --count is given.
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// How many packets to send.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Receive-only polling before sending; default 1s on dpdk, 100ms otherwise.
    #[arg(long, value_name = "D")]
    pub warmup: Option<String>,
    /// How long to wait for packets in flight after the last is sent.
    #[arg(long, value_name = "D", default_value = "500ms")]
    pub drain: String,
    /// Seed for drawn sizes and the stream tag.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Impairment of the mem port: loss=P,dup=P,reorder=P,corrupt=P,delay=D,jitter=D,seed=N.
    #[arg(long, value_name = "SPEC")]
    pub impair: Option<String>,
    /// Write the profile's packets to this pcap instead of sending (--count packets, default one cycle).
    #[arg(long, value_name = "FILE")]
    pub write_pcap: Option<PathBuf>,
    /// Link type of --write-pcap: ethernet or raw.
    #[arg(long, default_value = "ethernet")]
    pub link: String,
    /// Send the packets of this capture instead of building them.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["write_pcap", "l2"])]
    pub pcap: Option<PathBuf>,
    /// Search for the no-drop (NDR) and partial-drop (PDR) rates.
    #[arg(long)]
    pub search: bool,
    /// PDR's loss threshold in percent.
    #[arg(long, default_value_t = 0.5)]
    pub pdr_loss: f64,
    /// Searches to run (the result is the median).
    #[arg(long, default_value_t = 3)]
    pub trials: u32,
    /// Trials a rate of the search may take, 1 to 9: it passes at its first passing trial and fails once more than half of N failed.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub tries: u32,
    /// Duration of each trial.
    #[arg(long, default_value = "10s")]
    pub trial_duration: String,
    /// Stop searching when the interval is narrower than this percentage of the maximum.
    #[arg(long, default_value_t = 1.0)]
    pub precision: f64,
    /// Latency run after a search: this percentage of the NDR.
    #[arg(long, default_value_t = 50.0)]
    pub latency_at: f64,
    /// Time one probe in N (a power of two; 1: every probe): latency is a uniform sample.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LATENCY_EVERY)]
    pub latency_every: u64,
    /// Write the result as JSON to FILE ('-': standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the result as CSV to FILE ('-': standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// No progress line and no trial lines.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A failure, with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// 1 (runtime) or 2 (arguments).
    pub code: i32,
    /// The message.
    pub message: String,
}

fn usage(m: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: m.into(),
    }
}

fn runtime(m: impl Into<String>) -> Failure {
    Failure {
        code: 1,
        message: m.into(),
    }
}

/// What the arguments ask for, checked.
struct Plan {
    args: Args,
    profile: Profile,
    rate: Rate,
    duration: Option<Duration>,
    warmup: Option<Duration>,
    drain: Duration,
    trial: Duration,
    to: NativeAddr,
    tag: u16,
    /// The CPUs this process may use, as it started (before `--core` or
    /// EAL pinned the main thread to one): where `--cores` puts its threads.
    cpus: Vec<usize>,
}

fn duration_arg(name: &str, s: &str) -> Result<Duration, Failure> {
    parse_duration(s).map_err(|e| usage(format!("{name}: {e}")))
}

fn mac_arg(name: &str, s: &Option<String>) -> Result<Option<[u8; 6]>, Failure> {
    s.as_deref()
        .map(|m| {
            rrp::native::parse_mac(m)
                .ok_or_else(|| usage(format!("{name}: {m:?} is not a MAC (02:00:00:00:01:30)")))
        })
        .transpose()
}

fn plan(args: Args) -> Result<Plan, Failure> {
    let seed = args.seed.unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        t ^ u64::from(std::process::id()) << 32
    });
    let profile = Profile {
        src: profile::parse_address("--src", &args.src).map_err(|e| usage(e.to_string()))?,
        dsts: profile::parse_destinations(&args.dst).map_err(|e| usage(e.to_string()))?,
        sizes: args
            .size
            .parse::<Sizes>()
            .map_err(|e| usage(e.to_string()))?,
        priority: args.priority,
        l2: match &args.l2 {
            Some(r) => profile::parse_route(r).map_err(|e| usage(e.to_string()))?,
            None => Vec::new(),
        },
        partition: match &args.partition {
            Some(p) => profile::parse_partition(p).map_err(|e| usage(e.to_string()))?,
            None => None,
        },
        seed,
    };
    if !profile.src.is_valid_destination() {
        return Err(usage(format!(
            "--src: {} is not a node address",
            profile.src
        )));
    }
    let rate: Rate = args.rate.parse().map_err(usage)?;
    let duration = match (&args.duration, args.count) {
        (Some(d), _) => Some(duration_arg("--duration", d)?),
        (None, Some(_)) => None,
        (None, None) => Some(Duration::from_secs(10)),
    };
    if args.count == Some(0) {
        return Err(usage("--count: at least 1"));
    }
    let to = match &args.to {
        Some(t) => t
            .parse::<NativeAddr>()
            .map_err(|e| usage(format!("--to: {e}")))?,
        None => NativeAddr::NONE,
    };
    if !(0.0..100.0).contains(&args.pdr_loss) {
        return Err(usage("--pdr-loss: a percentage below 100"));
    }
    if !(args.precision > 0.0 && args.precision < 100.0) {
        return Err(usage("--precision: a percentage in (0, 100)"));
    }
    if !(args.latency_at > 0.0 && args.latency_at <= 100.0) {
        return Err(usage("--latency-at: a percentage in (0, 100]"));
    }
    if !(1..=MAX_CORES).contains(&args.cores) {
        return Err(usage(format!("--cores: 1 to {MAX_CORES}")));
    }
    if args.cores > 1 {
        if args.search {
            return Err(usage("--search runs on one core: drop --cores"));
        }
        if !matches!(args.tx, Some(PortArg::Dpdk(_))) {
            return Err(usage(
                "--cores needs DPDK ports (a queue of each port per core)",
            ));
        }
    }
    if !args.latency_every.is_power_of_two() {
        return Err(usage("--latency-every: a power of two (1, 2, 4, ...)"));
    }
    if !(1..=MAX_TRIES).contains(&args.tries) {
        return Err(usage(format!(
            "--tries: {} is not 1 to {MAX_TRIES} (the trials a rate may take)",
            args.tries
        )));
    }
    if args.search && args.count.is_some() {
        return Err(usage(
            "--search runs trials of --trial-duration: --count does not apply",
        ));
    }
    if args.write_pcap.is_none() && args.tx.is_none() {
        return Err(usage("--tx PORT is required (or --write-pcap FILE)"));
    }
    if let (Some(t), Some(r)) = (&args.tx, &args.rx) {
        if t.backend() != r.backend() {
            return Err(usage(format!(
                "--tx is {} and --rx is {}: both ports must use one backend",
                t.backend(),
                r.backend()
            )));
        }
        if t == r {
            return Err(usage(
                "--rx names the --tx port: leave --rx out to receive on it",
            ));
        }
    }
    if args.impair.is_some() && args.tx != Some(PortArg::Mem) {
        return Err(usage("--impair applies to the mem port only"));
    }
    if args.tx == Some(PortArg::Mem) && args.rx.is_some() {
        return Err(usage(
            "--tx mem is a wire with both ends in mwgen: leave --rx out",
        ));
    }
    mac_arg("--mac", &args.mac)?;
    mac_arg("--rx-mac", &args.rx_mac)?;
    Ok(Plan {
        cpus: core_affinity::get_core_ids()
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.id)
            .collect(),
        rate,
        duration,
        warmup: args
            .warmup
            .as_deref()
            .map(|w| duration_arg("--warmup", w))
            .transpose()?,
        drain: duration_arg("--drain", &args.drain)?,
        trial: duration_arg("--trial-duration", &args.trial_duration)?,
        to,
        tag: (seed >> 16) as u16,
        profile,
        args,
    })
}

/// Runs mwgen with `args`.
pub fn main_with(args: Args) -> Result<(), Failure> {
    let plan = plan(args)?;
    if let Some(core) = plan.args.core {
        let ok = core_affinity::get_core_ids()
            .and_then(|ids| ids.into_iter().find(|c| c.id == core))
            .is_some_and(core_affinity::set_for_current);
        if !ok {
            return Err(usage(format!("--core: cannot pin to core {core}")));
        }
    }
    if let Some(path) = &plan.args.write_pcap {
        return write_pcap(&plan, path);
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| runtime(format!("cannot catch signal {sig}: {e}")))?;
    }
    let tx = plan.args.tx.clone().expect("checked");
    let rx = plan.args.rx.clone();
    let open =
        |p: &PortArg, what: &str, e: String| runtime(format!("{what} {p}: cannot open: {e}"));
    match &tx {
        PortArg::Udp(a) => {
            let t = ports::udp::UdpPort::open(ports::udp::UdpConfig::new(*a))
                .map_err(|e| open(&tx, "--tx", e.to_string()))?;
            let r = match &rx {
                Some(p @ PortArg::Udp(b)) => Some(
                    ports::udp::UdpPort::open(ports::udp::UdpConfig::new(*b))
                        .map_err(|e| open(p, "--rx", e.to_string()))?,
                ),
                _ => None,
            };
            execute_socket(&plan, t, r, &stop)
        }
        PortArg::AfPacket(i) => {
            let t = ports::af_packet::AfPacketPort::open(ports::af_packet::AfPacketConfig::new(i))
                .map_err(|e| open(&tx, "--tx", e.to_string()))?;
            let r = match &rx {
                Some(p @ PortArg::AfPacket(j)) => Some(
                    ports::af_packet::AfPacketPort::open(ports::af_packet::AfPacketConfig::new(j))
                        .map_err(|e| open(p, "--rx", e.to_string()))?,
                ),
                _ => None,
            };
            execute_socket(&plan, t, r, &stop)
        }
        PortArg::Mem => {
            let cfg = match &plan.args.impair {
                Some(s) => parse_impair(s).map_err(usage)?,
                None => ports::impair::ImpairConfig::seeded(1),
            };
            let (a, b) = ports::memory::mem_link(
                4096,
                NativeAddr::mac([2, 0, 0, 0, 0, 1]),
                NativeAddr::mac([2, 0, 0, 0, 0, 2]),
            );
            let b = b.with_impairment(cfg, MonotonicClock::new());
            execute(
                &plan,
                vec![(a, Some(b))],
                Idle::Spin,
                &MonotonicClock::new(),
                &stop,
                &|| {},
            )
        }
        PortArg::Dpdk(_) => dpdk(&plan, &tx, rx.as_ref(), &stop),
    }
}

#[cfg(feature = "dpdk")]
fn dpdk(plan: &Plan, tx: &PortArg, rx: Option<&PortArg>, stop: &AtomicBool) -> Result<(), Failure> {
    use crate::backend::{device_name, eal_args};
    use ports::dpdk::{DeviceSpec, Eal, StartOptions};
    let dev = |p: &PortArg| match p {
        PortArg::Dpdk(d) => d.clone(),
        _ => unreachable!("checked: one backend"),
    };
    let mut devices = vec![dev(tx)];
    devices.extend(rx.map(dev));
    let names: Vec<&str> = devices.iter().map(String::as_str).collect();
    let args = eal_args(&plan.args.eal, &names);
    let eal = Eal::init(args.clone()).map_err(|e| {
        runtime(format!(
            "--eal: DPDK's EAL did not start with {args:?}: {e}"
        ))
    })?;
    let mut specs = vec![{
        let s = DeviceSpec::new(device_name(&devices[0])).promiscuous(true);
        match mac_arg("--mac", &plan.args.mac)? {
            Some(m) => s.mac(m),
            None => s,
        }
    }];
    if devices.len() > 1 {
        let s = DeviceSpec::new(device_name(&devices[1])).promiscuous(true);
        specs.push(match mac_arg("--rx-mac", &plan.args.rx_mac)? {
            Some(m) => s.mac(m),
            None => s,
        });
    }
    let n = plan.args.cores;
    let opts = StartOptions {
        queues: n as u16,
        extra_mbufs: 8192 * n as u32,
        ..StartOptions::default()
    };
    let devs = eal
        .start_ports(&specs, &opts)
        .map_err(|e| runtime(format!("--tx/--rx {devices:?}: cannot start: {e}")))?;
    // A queue pair of each device per core.
    let mut pairs = Vec::with_capacity(n);
    for q in 0..n as u16 {
        let t = devs[0]
            .port(q)
            .map_err(|e| runtime(format!("--tx {tx}: queue {q}: {e}")))?;
        let r = match devs.get(1) {
            Some(d) => Some(d.port(q).map_err(|e| {
                runtime(format!("--rx {}: queue {q}: {e}", rx.expect("two devices")))
            })?),
            None => None,
        };
        pairs.push((t, r));
    }
    // The TSC: a cheaper clock than clock_gettime, read once per burst.
    let clock = ports::dpdk::TscClock::new()
        .ok_or_else(|| runtime("DPDK's EAL did not measure the TSC frequency"))?;
    execute(
        plan,
        pairs,
        Idle::Spin,
        &clock,
        stop,
        &ports::dpdk::register_thread,
    )
}

#[cfg(not(feature = "dpdk"))]
fn dpdk(_: &Plan, tx: &PortArg, _: Option<&PortArg>, _: &AtomicBool) -> Result<(), Failure> {
    Err(usage(format!(
        "--tx {tx}: this mwgen was built without DPDK (cargo build --features dpdk -p mwgen)"
    )))
}

fn templates(plan: &Plan, link: LinkKind) -> Result<Vec<Template>, Failure> {
    match &plan.args.pcap {
        Some(p) => {
            let bytes =
                std::fs::read(p).map_err(|e| runtime(format!("--pcap {}: {e}", p.display())))?;
            pcap::read(&bytes, link).map_err(|e| usage(format!("--pcap {}: {e}", p.display())))
        }
        None => plan
            .profile
            .build(link, plan.tag)
            .map_err(|e| usage(e.to_string())),
    }
}

fn write_pcap(plan: &Plan, path: &PathBuf) -> Result<(), Failure> {
    let link = match plan.args.link.as_str() {
        "ethernet" | "eth" => {
            let dst = match plan.to.as_mac() {
                Some(m) => m,
                None if plan.to.is_empty() => [0xFF; 6],
                None => return Err(usage("--to: an Ethernet capture needs a MAC")),
            };
            PcapLink::Ethernet {
                dst,
                src: mac_arg("--mac", &plan.args.mac)?.unwrap_or([2, 0, 0, 0, 1, 0x30]),
            }
        }
        "raw" | "user0" => PcapLink::Raw,
        l => return Err(usage(format!("--link: {l:?}: ethernet or raw"))),
    };
    let kind = match link {
        PcapLink::Ethernet { .. } => LinkKind::Ethernet,
        PcapLink::Raw => LinkKind::Memory,
    };
    let t = templates(plan, kind)?;
    let count = plan.args.count.unwrap_or(t.len() as u64);
    let bytes = pcap::write(&t, count, link);
    std::fs::write(path, bytes)
        .map_err(|e| runtime(format!("--write-pcap {}: {e}", path.display())))?;
    if !plan.args.quiet {
        eprintln!(
            "mwgen: wrote {count} packets ({} distinct, mean frame {:.1} bytes) to {}",
            t.len(),
            mean_frame(&t),
            path.display()
        );
    }
    Ok(())
}

fn write_out(path: &PathBuf, text: &str) -> Result<(), Failure> {
    if path.as_os_str() == "-" {
        let mut o = std::io::stdout().lock();
        o.write_all(text.as_bytes())
            .and_then(|_| o.flush())
            .map_err(|e| runtime(format!("stdout: {e}")))
    } else {
        std::fs::write(path, text).map_err(|e| runtime(format!("{}: {e}", path.display())))
    }
}

/// The CPUs of `n` generator threads: of `ids` (the CPUs the process may
/// use), from `first` (default: the first) on, in the order listed,
/// wrapping; `None` each where the list cannot be read. One thread (no
/// `--cores`) stays on the main thread, pinned by `--core`.
fn core_list(ids: &[usize], first: Option<usize>, n: usize) -> Vec<Option<usize>> {
    if ids.is_empty() {
        return vec![None; n];
    }
    let at = first
        .and_then(|f| ids.iter().position(|&c| c == f))
        .unwrap_or(0);
    (0..n).map(|i| Some(ids[(at + i) % ids.len()])).collect()
}

/// Runs the plan on one pair of kernel-socket ports (UDP, AF_PACKET): the
/// machine's clock, sleeping when idle.
fn execute_socket<P>(plan: &Plan, tx: P, rx: Option<P>, stop: &AtomicBool) -> Result<(), Failure>
where
    P: Port,
    P::Buf: Send,
{
    execute(
        plan,
        vec![(tx, rx)],
        Idle::Sleep,
        &MonotonicClock::new(),
        stop,
        &|| {},
    )
}

/// Runs the plan on `pairs` of ports (transmit, receive): one pair, or a
/// queue pair per core (`--cores`, DPDK), whose threads call `on_start`
/// first.
fn execute<P>(
    plan: &Plan,
    pairs: Vec<(P, Option<P>)>,
    idle: Idle,
    clock: &dyn Clock,
    stop: &AtomicBool,
    on_start: &(dyn Fn() + Sync),
) -> Result<(), Failure>
where
    P: Port,
    P::Buf: Send,
{
    let link = pairs
        .first()
        .map(|(t, _)| t.link_kind())
        .ok_or_else(|| runtime("no port"))?;
    let t = templates(plan, link)?;
    let mean = mean_frame(&t);
    let pps = plan.rate.pps(mean);
    let cycle = t.len();
    let mut gens = Vec::with_capacity(pairs.len());
    for (tx, rx) in pairs {
        let mut g = Generator::new(tx, rx, plan.to, t.clone(), plan.tag)
            .map_err(|e| usage(format!("--to: {e}")))?;
        // Checked with the arguments: a power of two.
        g.set_latency_every(plan.args.latency_every);
        gens.push(g);
    }
    let cores = core_list(&plan.cpus, plan.args.core, gens.len());
    let warmup = plan.warmup.unwrap_or(
        if idle == Idle::Spin && matches!(plan.args.tx, Some(PortArg::Dpdk(_))) {
            Duration::from_secs(1)
        } else {
            Duration::from_millis(100)
        },
    );
    let base = RunSpec {
        pps,
        duration: plan.duration,
        count: plan.args.count,
        warmup,
        drain: plan.drain,
        idle,
        tag: plan.tag,
    };
    let quiet = plan.args.quiet;
    let live = !quiet && std::io::stderr().is_terminal();
    let mut progress = |p: &crate::run::Progress| {
        if live {
            eprint!("\r{}", report::progress_line(p));
        }
    };
    let to_stdout = |p: &Option<PathBuf>| p.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let table_out = !(to_stdout(&plan.args.json) || to_stdout(&plan.args.csv));
    let mut rep = Report {
        mode: if plan.args.search { "search" } else { "run" },
        command: std::env::args().collect(),
        ports: report::Ports {
            tx: plan
                .args
                .tx
                .as_ref()
                .map(|p| p.to_string())
                .unwrap_or_default(),
            rx: plan
                .args
                .rx
                .as_ref()
                .or(plan.args.tx.as_ref())
                .map(|p| p.to_string())
                .unwrap_or_default(),
            to: plan.to.to_string(),
        },
        profile: ProfileInfo {
            kind: if plan.profile.l2.is_empty() {
                "l3"
            } else {
                "l2"
            },
            src: plan.profile.src.to_string(),
            dst: plan.args.dst.clone(),
            size: plan
                .args
                .pcap
                .as_ref()
                .map_or(plan.args.size.clone(), |p| format!("pcap:{}", p.display())),
            mean_frame: mean,
            cycle,
            l2: plan.args.l2.clone(),
            priority: plan.profile.priority,
            partition: plan
                .profile
                .partition
                .map(|m| format!("{:#06x}{}", m.key(), if m.full() { "" } else { ":limited" })),
        },
        run: None,
        search: None,
        cores: Vec::new(),
    };
    if plan.args.search {
        // Checked with the arguments: a search runs on one core.
        let g = &mut gens[0];
        let spec = SearchSpec {
            trial: plan.trial,
            trials: plan.args.trials.max(1),
            tries: plan.args.tries,
            pdr_loss: plan.args.pdr_loss / 100.0,
            precision: plan.args.precision / 100.0,
            latency_at: plan.args.latency_at / 100.0,
            latency_duration: plan.trial,
            base: RunSpec {
                warmup: Duration::ZERO,
                ..base.clone()
            },
        };
        // Warm the ports up once, before the first trial.
        let _ = run(
            g,
            clock,
            &RunSpec {
                pps: Some(1.0),
                duration: Some(Duration::ZERO),
                count: Some(0),
                ..base.clone()
            },
            stop,
            &mut |_| {},
        );
        // A line per trial, and a rate's verdict where it took more than
        // one (the table at the end lists every rate).
        let mut report_step = |e: Event<'_>| {
            let line = match e {
                Event::Trial(t) => report::trial_line(t),
                Event::Rate(d) if d.tries.len() > 1 => report::rate_line(d),
                Event::Rate(_) => return,
            };
            if !quiet {
                if live {
                    eprint!("\r\x1b[2K");
                }
                eprintln!("{line}");
            }
        };
        let r = search(g, clock, &spec, mean, stop, &mut report_step, &mut progress);
        if live {
            eprint!("\r\x1b[2K");
        }
        if table_out {
            println!("mwgen search: {} -> {}", rep.ports.tx, rep.ports.rx);
            print!("{}", report::search_table(&r));
        }
        rep.search = Some(r);
    } else if gens.len() == 1 {
        let r = run(&mut gens[0], clock, &base, stop, &mut progress);
        if live {
            eprint!("\r\x1b[2K");
        }
        if table_out {
            println!("mwgen run: {} -> {}", rep.ports.tx, rep.ports.rx);
            print!("{}", report::run_table(&r));
        }
        rep.run = Some(r);
    } else {
        let (r, each) = run_cores(&mut gens, &cores, clock, &base, stop, on_start);
        if table_out {
            println!(
                "mwgen run on {} cores: {} -> {}",
                each.len(),
                rep.ports.tx,
                rep.ports.rx
            );
            print!("{}", report::run_table(&r));
            print!("{}", report::cores_table(&cores, &each));
        }
        rep.run = Some(r);
        rep.cores = each;
    }
    if let Some(p) = &plan.args.json {
        let mut s = serde_json::to_string_pretty(&rep).expect("plain data");
        s.push('\n');
        write_out(p, &s)?;
    }
    if let Some(p) = &plan.args.csv {
        write_out(p, &report::csv(&rep))?;
    }
    Ok(())
}

#[cfg(test)]
mod core_list_tests {
    #[test]
    fn cores_follow_the_allowed_cpus_from_the_first() {
        assert_eq!(
            super::core_list(&[0, 1, 2, 3], Some(2), 3),
            [Some(2), Some(3), Some(0)]
        );
        assert_eq!(super::core_list(&[4, 6], None, 2), [Some(4), Some(6)]);
        assert_eq!(super::core_list(&[4, 6], Some(5), 1), [Some(4)]);
        assert_eq!(super::core_list(&[], Some(1), 2), [None, None]);
    }
}
