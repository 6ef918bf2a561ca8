//! manager-scale: the SAN manager on a simulated SAN of 1,000 and more
//! members (`benches::manager_scale`, docs/manager.md "At the size of a
//! large SAN").
//!
//! ```text
//! cargo run --release -p benches --bin manager-scale -- [--members N,...] [--json]
//! ```

use std::process::exit;

use benches::manager_scale::{Phase, Report, measure};
use benches::sysinfo;

const USAGE: &str = "usage: manager-scale [--members N,...] [--json]
  --members N,...  SAN sizes, the two managers included (default 1000,4000; each 3 to 28000)
  --json           one JSON object instead of a table";

fn main() {
    let mut members = vec![1_000, 4_000];
    let mut json = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = true,
            "--members" => {
                let parsed: Option<Vec<usize>> = args.next().and_then(|v| {
                    v.split(',')
                        .map(|x| x.trim().parse().ok().filter(|n| (3..=28_000).contains(n)))
                        .collect()
                });
                match parsed {
                    Some(v) if !v.is_empty() => members = v,
                    _ => {
                        eprintln!("manager-scale: --members wants sizes from 3 to 28000\n{USAGE}");
                        exit(2);
                    }
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            other => {
                eprintln!("manager-scale: unknown argument {other:?}\n{USAGE}");
                exit(2);
            }
        }
    }
    let reports: Vec<Report> = members.iter().map(|n| measure(*n)).collect();
    if json {
        let out = serde_json::json!({
            "date": sysinfo::date_utc(),
            "cpu": sysinfo::cpu_model(),
            "build": sysinfo::build(),
            "link_delay_ms": benches::manager_scale::LINK_DELAY_MS,
            "sizes": reports,
        });
        println!("{out}");
        return;
    }
    println!(
        "manager-scale {} on {} ({}), link delay {} ms, default timers",
        sysinfo::date_utc(),
        sysinfo::cpu_model(),
        sysinfo::build(),
        benches::manager_scale::LINK_DELAY_MS
    );
    for r in &reports {
        print(r);
    }
}

fn ms(p: &Phase) -> String {
    p.virtual_ms
        .map_or_else(|| "not done".to_string(), |v| format!("{v} ms"))
}

fn print(r: &Report) {
    println!("\n{} members (wall {:.1} s)", r.members, r.wall_ms / 1e3);
    println!(
        "  {:<34} {:>10} {:>10} {:>11}",
        "phase", "virtual", "packets", "deliveries"
    );
    for (name, p) in [
        ("election from cold", &r.election),
        ("master's database full, from cold", &r.database_full),
        ("standby's copy of the map", &r.standby_copy),
        ("failover: standby is master", &r.failover_master),
        ("failover: new master's database", &r.failover_database),
        ("every member addressed", &r.addressing),
    ] {
        println!(
            "  {:<34} {:>10} {:>10} {:>11}",
            name,
            ms(p),
            p.packets,
            p.deliveries
        );
    }
    for s in [&r.light_sweep, &r.heavy_sweep] {
        println!(
            "  sweep {:>2} ({}): {} ms, {} requests, {} answers received, master CPU {:.1} ms",
            s.number,
            if s.heavy { "heavy" } else { "light" },
            s.virtual_ms,
            s.requests,
            s.received,
            s.master_cpu_ms
        );
    }
    println!(
        "  map records copied: {}; addressed: {}; announcements heard by the master: {} (at most {} in one second); master CPU per member addressed: {:.1} us",
        r.map_records,
        r.addressed,
        r.announcements,
        r.announcements_peak_per_s,
        r.master_cpu_per_member_us
    );
}
