//! The command line: `mwlab up | status | down | demo`, and the roles the lab
//! starts from this same binary (`mwlab router`, `mwlab host`).
//!
//! Exit codes: 0 done; 1 a step failed (the demo's checks, a process that
//! would not start); 2 bad arguments or files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use mwsim::topology::Topology;
use serde_json::{Value, json};

use crate::checks;
use crate::lab::{self, Binaries, Lab, alive, load_state};
use crate::plan::{LabManagement, NetnsBackend, Plan, Wiring, lab_timers};

/// mwlab: a whole MessageWay on one machine — mwrouterd and host processes
/// on loopback UDP, wired as a topology file says (the format mwsim reads).
#[derive(Debug, Parser)]
#[command(name = "mwlab", version, about, long_about = None)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Start a lab and leave it running.
    Up {
        /// The topology file (TOML, as mwsim reads; examples/appendix-b.toml).
        topology: PathBuf,
        /// The lab's directory (configurations, sockets, logs, state).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Wait until RRP has converged.
        #[arg(long)]
        wait: bool,
        /// Each router and host in its own network namespace, each SAN a
        /// Linux bridge, Ethernet frames on AF_PACKET (root).
        #[arg(long)]
        netns: bool,
        /// With --netns: the routers on DPDK's af_packet vdev (mwlab built
        /// with --features dpdk).
        #[arg(long, requires = "netns")]
        dpdk: bool,
        /// In-band management: keys, protection and the manager.
        #[command(flatten)]
        management: ManagementArgs,
    },
    /// Run mwctl against a router or host of a running lab: a router's
    /// admin socket, or a host's (which answers `mad`, `query` and `show
    /// management`: in-band management from that host).
    Mwctl {
        /// The lab's directory.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The router or host (its name in the topology: ad, H0).
        name: String,
        /// mwctl's arguments (`query 0x0110 nodeinfo`, `show routes`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },
    /// Show a running lab: processes, routes, host counters.
    Status {
        /// The lab's directory.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Stop a lab and remove everything it made.
    Down {
        /// The lab's directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// The whole tour: Appendix B up, converge, traffic, kill a router,
    /// reroute and HR-DOWN, down.
    Demo {
        /// The topology (default: examples/appendix-b.toml's content, built in).
        topology: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// The router to kill (default: a transit router of the first pair's path).
        #[arg(long)]
        kill: Option<String>,
        /// Each router and host in its own network namespace, each SAN a
        /// Linux bridge, Ethernet frames on AF_PACKET (root).
        #[arg(long)]
        netns: bool,
        /// With --netns: the routers on DPDK's af_packet vdev (mwlab built
        /// with --features dpdk).
        #[arg(long, requires = "netns")]
        dpdk: bool,
    },
    /// (internal) Run the router role: mwrouterd with this configuration.
    #[command(hide = true)]
    Router {
        /// mwrouterd's configuration.
        #[arg(long)]
        config: PathBuf,
    },
    /// (internal) Run a host of a lab.
    #[command(hide = true)]
    Host {
        /// The host's spec (JSON, written by `mwlab up`).
        #[arg(long)]
        spec: PathBuf,
    },
}

/// `mwlab up`'s management settings (docs/mwlab.md "Management").
#[derive(Debug, Clone, clap::Args)]
pub struct ManagementArgs {
    /// The M_Key of every router and host (hex with 0x, or decimal).
    #[arg(long, value_name = "KEY", value_parser = parse_key, default_value = "0")]
    pub mkey: u64,
    /// The M_Key protect bits, 0-3.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub protect: u8,
    /// The M_Key lease in seconds (0: never runs out).
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub lease: u16,
    /// The host traps go to (default: the topology's first host).
    #[arg(long, value_name = "HOST")]
    pub manager: Option<String>,
    /// A router or host whose path-tracer agent is off (repeat for more).
    #[arg(long, value_name = "NAME")]
    pub no_tracer: Vec<String>,
    /// A router or host that runs a SAN manager, with its priority 0-15
    /// (repeat for more; a router runs one on each HR).
    #[arg(long = "sm", value_name = "NAME=PRIORITY", value_parser = parse_sm)]
    pub managers: Vec<(String, u8)>,
}

fn parse_sm(s: &str) -> Result<(String, u8), String> {
    let (n, p) = s.split_once('=').ok_or("NAME=PRIORITY (H0=7)")?;
    let p: u8 = p.parse().map_err(|e| format!("priority {p:?}: {e}"))?;
    Ok((n.to_string(), p))
}

fn parse_key(s: &str) -> Result<u64, String> {
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.map_err(|e| format!("{s:?}: {e}"))
}

impl ManagementArgs {
    fn settings(&self) -> LabManagement {
        LabManagement {
            mkey: self.mkey,
            protect: self.protect,
            lease_s: self.lease,
            manager: self.manager.clone(),
            no_tracer: self.no_tracer.clone(),
            managers: self.managers.clone(),
        }
    }
}

/// The Appendix B topology, built in so that `mwlab demo` needs no file.
pub const APPENDIX_B: &str = include_str!("../../../examples/appendix-b.toml");

fn default_dir() -> PathBuf {
    let uid = rustix::process::getuid().as_raw();
    std::env::temp_dir().join(format!("mwlab-{uid}"))
}

fn read_topology(p: &Path) -> Result<Topology, (i32, String)> {
    let text = std::fs::read_to_string(p).map_err(|e| (2, format!("{}: {e}", p.display())))?;
    Topology::from_toml(&text).map_err(|e| (2, format!("{}: {e}", p.display())))
}

/// Runs mwlab; the exit code.
pub fn main_with(args: Args) -> i32 {
    match run(args) {
        Ok(()) => 0,
        Err((code, m)) => {
            eprintln!("mwlab: {m}");
            code
        }
    }
}

fn run(args: Args) -> Result<(), (i32, String)> {
    match args.cmd {
        Cmd::Router { config } => {
            let code = control::daemon::main_with(&control::daemon::Args {
                config,
                check: false,
                against: None,
            });
            std::process::exit(code);
        }
        Cmd::Host { spec } => crate::host::main_from_spec_file(&spec).map_err(|e| (1, e)),
        Cmd::Up {
            topology,
            dir,
            wait,
            netns,
            dpdk,
            management,
        } => {
            let topo = read_topology(&topology)?;
            let dir = dir.unwrap_or_else(default_dir);
            if dir.join(lab::STATE_FILE).exists() {
                return Err((
                    2,
                    format!(
                        "a lab is already up in {} (mwlab down first)",
                        dir.display()
                    ),
                ));
            }
            let mut plan =
                Plan::new(topo, &dir, lab_timers(), wiring(netns)?).map_err(|e| (2, e))?;
            plan.backend = backend(dpdk)?;
            plan.set_management(management.settings())
                .map_err(|e| (2, e))?;
            let bins = Binaries::current().map_err(|e| (1, e))?;
            let mut lab = Lab::up(plan, &bins).map_err(|e| (1, e))?;
            lab.stop_on_drop = false;
            println!(
                "mwlab: {} routers and {} hosts up in {}",
                lab.plan.routers.len(),
                lab.plan.hosts.len(),
                dir.display()
            );
            if wait {
                let (_, t) = checks::converge(
                    &lab.plan,
                    &[],
                    Duration::from_millis(500),
                    Duration::from_secs(30),
                    &mut |_, _| {},
                )
                .map_err(|e| (1, e))?;
                println!("mwlab: converged in {:.1} s", t.as_secs_f64());
            }
            Ok(())
        }
        Cmd::Status { dir, json } => {
            let dir = dir.unwrap_or_else(default_dir);
            let st = load_state(&dir).map_err(|e| (2, e))?;
            let f = lab::fibs(&st.plan, &[]);
            let (have, want) = checks::complete(&st.plan, &f, &[]);
            let procs: Vec<Value> = st
                .procs
                .iter()
                .map(|p| {
                    let routes = f.keys().filter(|k| k.0 == p.name).count();
                    json!({"role": p.role, "name": p.name, "pid": p.pid,
                           "alive": alive(p.pid), "fib_entries": routes, "log": p.log})
                })
                .collect();
            if json {
                let v = json!({"dir": dir, "processes": procs,
                               "fib_complete": [have, want]});
                println!("{}", serde_json::to_string_pretty(&v).expect("plain"));
            } else {
                println!("lab in {}: FIBs {have}/{want} host routes", dir.display());
                for p in &procs {
                    println!(
                        "  {:<6} {:<6} pid {:<8} {}{}",
                        p["role"].as_str().unwrap_or(""),
                        p["name"].as_str().unwrap_or(""),
                        p["pid"],
                        if p["alive"] == true { "up" } else { "DOWN" },
                        if p["role"] == "router" {
                            format!("  {} FIB entries", p["fib_entries"])
                        } else {
                            String::new()
                        }
                    );
                }
            }
            Ok(())
        }
        Cmd::Mwctl { dir, name, args } => {
            let dir = dir.unwrap_or_else(default_dir);
            let st = load_state(&dir).map_err(|e| (2, e))?;
            let sock = st.plan.admin_socket(&name).ok_or_else(|| {
                (
                    2,
                    format!(
                        "{name}: no router or host of that name in the lab in {}",
                        dir.display()
                    ),
                )
            })?;
            let mut all = vec![
                "mwctl".to_string(),
                "--socket".into(),
                sock.display().to_string(),
            ];
            all.extend(args);
            let code = mwctl::main_with(all, &mut std::io::stdout(), &mut std::io::stderr());
            match code {
                0 => Ok(()),
                c => std::process::exit(c),
            }
        }
        Cmd::Down { dir } => {
            let dir = dir.unwrap_or_else(default_dir);
            let n = lab::down_dir(&dir).map_err(|e| (2, e))?;
            println!("mwlab: stopped {n} processes, removed {}", dir.display());
            Ok(())
        }
        Cmd::Demo {
            topology,
            json,
            kill,
            netns,
            dpdk,
        } => {
            let topo = match topology {
                Some(p) => read_topology(&p)?,
                None => Topology::from_toml(APPENDIX_B).map_err(|e| (2, e))?,
            };
            let report = crate::tour::run(topo, kill, !json, wiring(netns)?, backend(dpdk)?);
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report.json).expect("plain")
                );
            }
            if report.ok {
                Ok(())
            } else {
                Err((1, format!("demo failed: {}", report.failed.join("; "))))
            }
        }
    }
}

/// The wiring `--netns` asks for, if this process can make it.
fn wiring(netns: bool) -> Result<Wiring, (i32, String)> {
    if !netns {
        return Ok(Wiring::Udp);
    }
    if !crate::netns::available() {
        return Err((
            2,
            "--netns needs root and iproute2 (ip netns); without it, leave --netns out".into(),
        ));
    }
    Ok(Wiring::Netns {
        run: crate::netns::run_tag(),
    })
}

/// The routers' backend `--dpdk` asks for, if this mwlab has DPDK.
fn backend(dpdk: bool) -> Result<NetnsBackend, (i32, String)> {
    if !dpdk {
        return Ok(NetnsBackend::AfPacket);
    }
    if !cfg!(feature = "dpdk") {
        return Err((
            2,
            "--dpdk: this mwlab was built without DPDK (cargo build --features dpdk -p mwlab)"
                .into(),
        ));
    }
    Ok(NetnsBackend::Dpdk)
}

/// Seconds since `t0`, for progress lines.
pub fn secs(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64()
}

/// A stop flag set by SIGINT and SIGTERM.
pub fn stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&stop));
    }
    stop
}
