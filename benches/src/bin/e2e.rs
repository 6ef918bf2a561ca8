//! e2e: the end-to-end benchmark (docs/performance.md "End to end, against
//! dpdk-testpmd"). Run it through the wrapper, which builds what it needs:
//!
//! ```text
//! benches/e2e [--quick] [--json FILE] [--part 1|2|mcast|scale|flood|all[,...]] [--rounds N] [--no-huge] [--hugepages N] [--pcap-dir DIR] [--no-l3fwd]
//! benches/e2e --part soak|soak-lab [--minutes M] [--json FILE] [soak options]
//! ```
//!
//! Part 1: forwarding throughput on one core, dpdk-testpmd (io, macswap)
//! and DPDK's L3 forwarders (l3fwd LPM and EM, l3fwd-graph) against
//! mwrouterd, pcap replay in, null out. Part 2: mwgen over memif through
//! dpdk-testpmd io (the ceiling) and through mwrouterd, NDR/PDR search and
//! latency. Part mcast (only when asked for): multicast replication to four
//! null ports, mwrouterd against DPDK's ipv4_multicast example. Part scale
//! (only when asked for): mwrouterd with two workers against one on four
//! ports. Part flood (only when asked for): mwrouterd forwarding mwgen's
//! probes while a port is flooded with packets for the box, against the
//! same run without the flood. Parts soak and soak-lab (alone): the soak, mwrouterd under
//! traffic and churn and every packet accounted for (docs/reliability.md
//! "Soak"; exit 0 every check passed, 1 a check failed, 2 the run could
//! not be made). The modules are under `benches::e2e`.

use std::path::PathBuf;
use std::process::exit;

use benches::e2e::flood::{self, FloodOptions};
use benches::e2e::hugepages;
use benches::e2e::mcast::{self, McastPart};
use benches::e2e::ndr_with_mwgen::{self, Part2};
use benches::e2e::prereq;
use benches::e2e::process::{install_interrupt_handler, interrupted};
use benches::e2e::report;
use benches::e2e::scale::{self, ScalePart};
use benches::e2e::single_core_throughput::{self, Part1};
use benches::e2e::soak::{self, Mode, SoakOptions};
use benches::e2e::{Env, Options, Result};

const USAGE: &str = "usage: e2e [--quick] [--json FILE] [--part 1|2|mcast|scale|flood|all[,...]] [--rounds N] [--no-huge] [--hugepages N] [--pcap-dir DIR] [--no-l3fwd] [--scale-cores A,B] [--scale-workers-toml LINES] [--flood-seconds S] [--flood-rate-pps N]
       e2e --part soak|soak-lab [--minutes M] [--json FILE] [--no-huge] [--hugepages N] [--keep] [soak options]
  --quick         short intervals (Part 1: 1 s warm-up, 2 s measured, 1 round; Part 2: 1 s trials)
  --rounds N      Part 1, mcast and scale: measure each traffic N times with the forwarders in turn;
                  figures are medians, ratios the median of the rounds' (default 3, 1 with --quick)
  --json FILE     write the JSON report to FILE
  --part P        1, 2, mcast, scale or all, or several separated by commas (default all: 1 and 2;
                  mcast, multicast against DPDK's ipv4_multicast example, needs Debian's dpdk-doc;
                  scale, mwrouterd with 2 workers against 1 on 4 ports; flood, mwrouterd forwarding
                  mwgen's probes at 50 % and 90 % of the NDR while a port is flooded with management
                  datagrams, then RRP#7, against no flood; these run only when asked for);
                  or soak (mwrouterd, its buddy and mwgen on DPDK memif ports) or soak-lab (mwlab's
                  Appendix B lab with impaired hosts), alone
  --no-l3fwd      Part 1 without DPDK's L3 forwarders (l3fwd LPM and EM, l3fwd-graph; they need
                  Debian's dpdk-doc, and are skipped with a warning without it)
  --no-huge       do not reserve hugepages (EAL --no-huge -m 512)
  --hugepages N   2 MB hugepages to reserve as root (default 512; put back at the end)
  --pcap-dir DIR  Part 1: replay DIR/{l3-64,l2-64,imix,l3-1500}.pcap instead of writing them with mwgen
  --scale-cores A,B        scale: the two workers' cores (default 1,2; 1,0 on a 2-CPU machine)
  --scale-workers-toml L   scale: the [workers] lines, after count, cores and idle, that give each of
                  the two workers whole ports (\\n between lines; default: spread = \"ports\",
                  owners = [0, 0, 1, 1], the receiving worker of each HR)
  --flood-seconds S        flood: each round's length (default 10; 3 with --quick)
  --flood-rate-pps N       flood: the probes' rate instead of the NDR search (one rate)
  --keep          keep the scratch directory (configurations, logs, pcaps)
The builds of DPDK's examples are cached in target/release/e2e-examples (delete it to rebuild).
{SOAK}";

fn usage() -> String {
    USAGE.replace("{SOAK}", soak::options::USAGE)
}

fn parse_args() -> Result<(Options, bool)> {
    let mut o = Options {
        quick: false,
        json: None,
        part1: true,
        part2: true,
        mcast: false,
        scale: false,
        l3fwd: true,
        scale_cores: None,
        scale_workers_toml: None,
        pcap_dir: None,
        hugepages: 512,
        no_huge: false,
        rounds: None,
        soak: SoakOptions::default(),
        flood: None,
    };
    let mut flood_opts = FloodOptions::default();
    let mut keep = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value\n{}", usage()))
        };
        match a.as_str() {
            "--quick" => o.quick = true,
            "--json" => o.json = Some(PathBuf::from(value("--json")?)),
            "--part" => {
                (o.part1, o.part2, o.mcast, o.scale) = (false, false, false, false);
                o.soak.mode = None;
                o.flood = None;
                let parts = value("--part")?;
                for p in parts.split(',') {
                    match p.trim() {
                        "1" => o.part1 = true,
                        "2" => o.part2 = true,
                        "mcast" => o.mcast = true,
                        "scale" => o.scale = true,
                        "flood" => o.flood = Some(FloodOptions::default()),
                        "all" => (o.part1, o.part2) = (true, true),
                        "soak" => o.soak.mode = Some(Mode::Default),
                        "soak-lab" => o.soak.mode = Some(Mode::Lab),
                        p => {
                            return Err(format!(
                                "--part {p}: expected 1, 2, mcast, scale, flood, all, soak \
                                 or soak-lab\n{}",
                                usage()
                            ));
                        }
                    }
                }
                if o.soak.mode.is_some() && parts.split(',').count() > 1 {
                    return Err(format!(
                        "--part {parts}: soak and soak-lab run alone\n{}",
                        usage()
                    ));
                }
            }
            "--no-l3fwd" => o.l3fwd = false,
            "--scale-cores" => {
                let v = value("--scale-cores")?;
                let parsed = v
                    .split_once(',')
                    .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)))
                    .filter(|(a, b)| a != b);
                o.scale_cores = Some(parsed.ok_or_else(|| {
                    format!("--scale-cores {v}: expected two distinct cores, e.g. 1,2")
                })?);
            }
            "--scale-workers-toml" => {
                o.scale_workers_toml = Some(value("--scale-workers-toml")?.replace("\\n", "\n"));
            }
            "--no-huge" => o.no_huge = true,
            "--hugepages" => {
                let v = value("--hugepages")?;
                o.hugepages = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--hugepages {v}: expected a positive number"))?;
            }
            "--rounds" => {
                let v = value("--rounds")?;
                o.rounds = Some(
                    v.parse()
                        .ok()
                        .filter(|n| (1..=100).contains(n))
                        .ok_or_else(|| format!("--rounds {v}: expected 1 to 100"))?,
                );
            }
            "--pcap-dir" => o.pcap_dir = Some(PathBuf::from(value("--pcap-dir")?)),
            "--flood-seconds" => {
                let v = value("--flood-seconds")?;
                flood_opts.seconds = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| (1.0..=3600.0).contains(s))
                    .ok_or_else(|| format!("--flood-seconds {v}: expected 1 to 3600"))?;
            }
            "--flood-rate-pps" => {
                let v = value("--flood-rate-pps")?;
                flood_opts.rate_pps = Some(
                    v.parse()
                        .ok()
                        .filter(|r: &f64| *r > 0.0)
                        .ok_or_else(|| format!("--flood-rate-pps {v}: expected a rate"))?,
                );
            }
            "--keep" => keep = true,
            "-h" | "--help" => {
                println!("{}", usage());
                exit(0);
            }
            a => {
                if !o.soak.take(a, &mut value)? {
                    return Err(format!("unknown argument {a}\n{}", usage()));
                }
            }
        }
    }
    if let Some(f) = o.flood.as_mut() {
        *f = FloodOptions {
            seconds: if o.quick && flood_opts.seconds == FloodOptions::default().seconds {
                3.0
            } else {
                flood_opts.seconds
            },
            ..flood_opts
        };
    }
    if o.soak.mode.is_none() && o.soak.any_given() {
        return Err(format!(
            "the soak's options need --part soak or soak-lab\n{}",
            usage()
        ));
    }
    Ok((o, keep))
}

/// Runs the benchmark; every guard (processes, hugepages) is dropped before
/// it returns. Returns the exit code.
fn run() -> Result<i32> {
    let (opts, keep) = parse_args()?;
    install_interrupt_handler()?;
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    let bin_dir = exe
        .parent()
        .ok_or("this program's path has no directory")?
        .to_path_buf();
    let exe_dir = bin_dir.clone();
    if opts.soak.mode.is_some() {
        return run_soak(&opts, keep, &bin_dir);
    }

    let mut bins = vec!["mwrouterd", "mwctl"];
    if opts.part2 || opts.flood.is_some() || (opts.part1 && opts.pcap_dir.is_none()) {
        bins.push("mwgen");
    }
    let found = prereq::check(&bin_dir, &bins)?;
    println!(
        "e2e: DPDK {} ({}), PMDs in {}; binaries from {} (copied for the run)",
        found.dpdk_version,
        found.testpmd.display(),
        found.pmds_dir.display(),
        bin_dir.display()
    );

    let work = std::env::temp_dir().join(format!("mwrouter-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    // Our own copies: the target directory is shared with other builds.
    let bin_dir = prereq::snapshot_bins(&bin_dir, &bins, &work.join("bin")).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&work);
    })?;
    let env = Env {
        cache: Some(exe_dir.join("e2e-examples")),
        bin_dir,
        testpmd: found.testpmd.clone(),
        stdbuf: found.stdbuf.clone(),
        work: work.clone(),
    };

    // Held to the end of this function: puts nr_hugepages back.
    let (mem, reservation) = hugepages::reserve(opts.hugepages, opts.no_huge);

    let mut errors: Vec<String> = Vec::new();
    let mut p1 = Part1::default();
    let mut p2 = Part2::default();
    let mut pm = McastPart::default();
    let mut ps = ScalePart::default();
    let mut pf: (f64, Vec<flood::Round>) = (0.0, Vec::new());
    if opts.part1
        && let Err(e) = single_core_throughput::run(&env, &opts, &mem, &mut p1)
    {
        eprintln!("e2e: Part 1 stopped: {e}");
        errors.push(format!("part 1: {e}"));
    }
    if opts.part2
        && !interrupted()
        && let Err(e) = ndr_with_mwgen::run(&env, &opts, &mem, &mut p2)
    {
        eprintln!("e2e: Part 2 stopped: {e}");
        errors.push(format!("part 2: {e}"));
    }
    if opts.mcast
        && !interrupted()
        && let Err(e) = mcast::run(&env, &opts, &mem, &mut pm)
    {
        eprintln!("e2e: Part mcast stopped: {e}");
        errors.push(format!("part mcast: {e}"));
    }
    if opts.scale
        && !interrupted()
        && let Err(e) = scale::run(&env, &opts, &mem, &mut ps)
    {
        eprintln!("e2e: Part scale stopped: {e}");
        errors.push(format!("part scale: {e}"));
    }
    if let Some(fo) = &opts.flood
        && !interrupted()
    {
        match flood::run(&env, &mem, fo, &mut pf.1) {
            Ok(ndr) => pf.0 = ndr,
            Err(e) => {
                eprintln!("e2e: Part flood stopped: {e}");
                errors.push(format!("part flood: {e}"));
            }
        }
    }
    drop(reservation);

    println!("\n{}", mem.describe());
    if opts.part1 {
        println!("\n{}", report::part1_table(&p1));
    }
    if opts.part2 {
        println!("\n{}", report::part2_table(&p2));
    }
    if opts.mcast {
        println!("\n{}", mcast::table(&pm));
    }
    if opts.scale {
        println!("\n{}", scale::table(&ps));
    }
    if let Some(fo) = &opts.flood {
        println!("\n{}", flood::table(pf.0, &pf.1, fo.seconds));
    }
    if let Some(path) = &opts.json {
        let v = report::to_json(
            &opts,
            &found,
            &mem,
            report::Parts {
                p1: opts.part1.then_some(&p1),
                p2: opts.part2.then_some(&p2),
                mcast: opts.mcast.then_some(&pm),
                scale: opts.scale.then_some(&ps),
                flood: opts.flood.is_some().then_some((pf.0, &pf.1[..])),
            },
            &errors,
        );
        let text = serde_json::to_string_pretty(&v)
            .map_err(|e| format!("cannot encode the report: {e}"))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("JSON report: {}", path.display());
    }
    if errors.is_empty() && !keep {
        let _ = std::fs::remove_dir_all(&work);
    } else {
        println!(
            "scratch directory (configurations, logs): {}",
            work.display()
        );
    }
    if !errors.is_empty() {
        eprintln!("e2e: finished with errors:\n  - {}", errors.join("\n  - "));
        return Ok(1);
    }
    Ok(0)
}

/// Runs the soak (`--part soak` or `soak-lab`); returns its exit code.
fn run_soak(opts: &Options, keep: bool, bin_dir: &std::path::Path) -> Result<i32> {
    let mode = opts.soak.mode.unwrap_or(Mode::Default);
    let dpdk = mode == Mode::Default;
    let bins: &[&str] = if dpdk {
        &["mwrouterd", "mwctl", "mwgen"]
    } else {
        &["mwlab", "mwctl"]
    };
    prereq::check_soak(bin_dir, bins, dpdk)?;
    let work = std::env::temp_dir().join(format!("mwrouter-soak-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    // Our own copies: the target directory is shared with other builds.
    let copies = prereq::snapshot_bins(bin_dir, bins, &work.join("bin")).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&work);
    })?;
    println!(
        "soak: binaries from {} (copied for the run); scratch directory {}",
        bin_dir.display(),
        work.display()
    );
    let env = Env {
        cache: None,
        bin_dir: copies,
        // Not used by the soak.
        testpmd: prereq::which("dpdk-testpmd").unwrap_or_default(),
        stdbuf: prereq::which("stdbuf").unwrap_or_default(),
        work: work.clone(),
    };
    // Held to the end of the soak: puts nr_hugepages back.
    let (mem, reservation) = if dpdk {
        let (m, r) = hugepages::reserve(opts.hugepages, opts.no_huge);
        (Some(m), r)
    } else {
        (None, None)
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let outcome = soak::run(&env, mem.as_ref(), &opts.soak, &argv);
    drop(reservation);
    println!("{}", outcome.verdict());
    if let Some(path) = &opts.json {
        let text = serde_json::to_string_pretty(&outcome.report)
            .map_err(|e| format!("cannot encode the report: {e}"))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("soak: report written to {}", path.display());
    }
    let code = outcome.exit_code();
    if keep || code != 0 {
        println!("soak: kept {}", work.display());
    } else {
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok(code)
}

fn main() {
    let code = match run() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("e2e: {e}");
            2
        }
    };
    exit(code);
}
