//! Partitions in the simulator (docs/partitions.md): the simulator plays
//! each SAN's master and gives every router port its SAN's tables; hosts
//! mark what they send; the real forwarding decisions check it. On random
//! topologies with random partitions, every host sends to every host of
//! another SAN once in each partition of its table, once unmarked, and once
//! in each partition it may not send in; exactly the pairs the partitions
//! allow must arrive, each once, and every packet refused must be counted
//! by a router as a `partition` drop.
//!
//! What is allowed is worked out here from the topology's `[[partition]]`
//! lists alone, with OpenSM's rules (a host is a member of a key when a list
//! names it or names ALL or ALL_HOSTS, full when a full list does; no
//! Default statement: every host a limited member of 0x7FFF; two limited
//! members may not talk), not from mgmt's tables or the routers' guards.

use std::collections::{BTreeMap, BTreeSet};

use mwsim::topology::PartitionSpec;
use mwsim::{Sim, SimConfig, Topology};
use rrp::rng::Rng;

const DEFAULT: u16 = 0x7FFF;
const FULL: u16 = 0x8000;

/// Host name -> key -> full.
type Tables = BTreeMap<String, BTreeMap<u16, bool>>;

/// Each host's memberships as the topology's partition lists give them.
fn expected_tables(t: &Topology) -> Tables {
    let mut tables: Tables = t
        .hosts
        .iter()
        .map(|h| (h.name.clone(), BTreeMap::new()))
        .collect();
    for p in &t.partitions {
        for (names, full) in [(&p.full, true), (&p.limited, false)] {
            for n in names {
                let hosts: Vec<String> = match n.as_str() {
                    "ALL" | "ALL_HOSTS" => t.hosts.iter().map(|h| h.name.clone()).collect(),
                    // Routers and the manager's node: no host.
                    "ALL_ROUTERS" | "SELF" => Vec::new(),
                    name => vec![name.to_string()],
                };
                for h in hosts {
                    let m = tables.get_mut(&h).unwrap().entry(p.key).or_insert(full);
                    *m |= full;
                }
            }
        }
    }
    if !t.partitions.iter().any(|p| p.key == DEFAULT) {
        for m in tables.values_mut() {
            m.insert(DEFAULT, false);
        }
    }
    tables
}

/// Whether a packet from a host of table `from` marked `free` reaches a
/// host of table `to`: the sender a member of the key with the membership
/// it claims (Free 0: the default partition, full), the receiver a
/// member, not both limited.
fn allowed(from: &BTreeMap<u16, bool>, to: &BTreeMap<u16, bool>, free: u16) -> bool {
    let free = if free == 0 { FULL | DEFAULT } else { free };
    let (key, claims_full) = (free & !FULL, free & FULL != 0);
    let Some(&sender_full) = from.get(&key) else {
        return false;
    };
    if claims_full && !sender_full {
        return false;
    }
    to.get(&key)
        .is_some_and(|&receiver_full| claims_full || receiver_full)
}

/// 2-4 partitions with random keys and random members (hosts full or
/// limited, now and then a keyword), and half the time a Default
/// statement.
fn random_partitions(t: &Topology, seed: u64) -> Vec<PartitionSpec> {
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let n = 2 + rng.below(3) as usize;
    let mut keys = BTreeSet::new();
    while keys.len() < n {
        keys.insert(1 + rng.below(0x7FFE) as u16);
    }
    let mut parts: Vec<PartitionSpec> = keys
        .into_iter()
        .enumerate()
        .map(|(i, key)| {
            let mut p = PartitionSpec {
                name: format!("p{i}"),
                key,
                full: Vec::new(),
                limited: Vec::new(),
            };
            for h in &t.hosts {
                let x = rng.below(100);
                if x < 30 {
                    p.full.push(h.name.clone());
                } else if x < 55 {
                    p.limited.push(h.name.clone());
                }
            }
            if rng.chance(0.15) {
                p.limited.push("ALL_HOSTS".into());
            }
            if rng.chance(0.2) {
                p.full.push("ALL_ROUTERS".into());
            }
            p
        })
        .collect();
    if rng.chance(0.5) {
        let mut d = PartitionSpec {
            name: "Default".into(),
            key: DEFAULT,
            full: vec!["ALL_ROUTERS".into(), "SELF".into()],
            limited: Vec::new(),
        };
        match rng.below(3) {
            // Everyone full: hosts talk in the default partition too.
            0 => d.full.push("ALL".into()),
            // Everyone limited, a few full.
            1 => {
                d.limited.push("ALL_HOSTS".into());
                for h in &t.hosts {
                    if rng.chance(0.3) {
                        d.full.push(h.name.clone());
                    }
                }
            }
            // No host at all.
            _ => {}
        }
        parts.push(d);
    }
    parts
}

/// A packet's data block: its number.
fn probe(n: u32) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

/// One run: converge, send every probe, check what arrived and what the
/// routers dropped. Returns (probes sent, probes that arrived).
fn check(t: Topology, seed: u64) -> (usize, usize) {
    let tables = expected_tables(&t);
    let declared: BTreeSet<u16> = t.partitions.iter().map(|p| p.key).collect();
    let nowhere = (1..0x7FFF).find(|k| !declared.contains(k)).unwrap();
    let mut s = Sim::new(
        t,
        SimConfig {
            seed,
            ..SimConfig::default()
        },
    )
    .unwrap();
    assert!(
        s.run_until_converged(60_000).is_some(),
        "seed {seed}: converged"
    );
    let before = s.router_stats()["partition"];
    // Probe number -> (sender, receiver, Free, whether it may arrive).
    let mut sent: Vec<(usize, usize, u16, bool)> = Vec::new();
    for h in 0..s.hosts.len() {
        let from = &tables[&s.hosts[h].name];
        let mut marks: Vec<u16> = from
            .iter()
            .map(|(k, full)| k | if *full { FULL } else { 0 })
            .collect();
        // Unmarked: the default partition, full.
        marks.push(0);
        // In a partition it is not a member of, or claiming a full
        // membership it does not have.
        for k in declared.iter().copied().chain([DEFAULT, nowhere]) {
            match from.get(&k) {
                None => marks.push(k | FULL),
                Some(false) => marks.push(k | FULL),
                Some(true) => {}
            }
        }
        marks.sort_unstable();
        marks.dedup();
        for d in 0..s.hosts.len() {
            if s.hosts[d].san == s.hosts[h].san {
                continue;
            }
            let to = &tables[&s.hosts[d].name];
            let dst = s.hosts[d].node.config().address;
            for &free in &marks {
                let n = sent.len() as u32;
                sent.push((h, d, free, allowed(from, to, free)));
                s.host_send_data(h, dst, free, &probe(n));
            }
        }
        let now = s.now;
        s.run_until(now + 5);
    }
    let now = s.now;
    s.run_until(now + 500);
    // What arrived, per receiver: probe number -> copies.
    let mut arrived: BTreeMap<u32, usize> = BTreeMap::new();
    for d in 0..s.hosts.len() {
        for p in s.data_received(d) {
            let n = u32::from_be_bytes(p.data[..4].try_into().unwrap());
            let (h, to, free, _) = sent[n as usize];
            assert_eq!(to, d, "seed {seed}: probe {n} reached the wrong host");
            assert_eq!(p.header.free, free, "routers never write Free");
            assert_eq!(p.header.src, s.hosts[h].node.config().address);
            *arrived.entry(n).or_default() += 1;
        }
    }
    let mut wrong = Vec::new();
    for (n, (h, d, free, ok)) in sent.iter().enumerate() {
        let got = arrived.get(&(n as u32)).copied().unwrap_or(0);
        if got != usize::from(*ok) {
            wrong.push(format!(
                "{} -> {} Free {free:#06x}: {got} arrived, {} expected ({:?} -> {:?})",
                s.hosts[*h].name,
                s.hosts[*d].name,
                usize::from(*ok),
                tables[&s.hosts[*h].name],
                tables[&s.hosts[*d].name],
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "seed {seed}: {} of {} probes wrong, the first: {:#?}",
        wrong.len(),
        sent.len(),
        &wrong[..wrong.len().min(10)]
    );
    // Every refused packet was dropped by a router as partition, and
    // nothing was dropped for another reason.
    let refused = sent.iter().filter(|x| !x.3).count() as u64;
    assert_eq!(
        s.router_stats()["partition"] - before,
        refused,
        "seed {seed}: partition drops"
    );
    let drops: u64 = s.routers.iter().map(|r| r.dropped.total()).sum();
    assert_eq!(
        drops,
        s.router_stats()["partition"],
        "seed {seed}: no drop but partition: {:?}",
        s.routers.iter().map(|r| &r.dropped).collect::<Vec<_>>()
    );
    (sent.len(), arrived.len())
}

#[test]
fn random_topologies_deliver_exactly_what_their_partitions_allow() {
    let mut with_default = 0;
    const SEEDS: u64 = 10;
    for seed in 1..=SEEDS {
        let mut t = Topology::random(5, 6, 3, seed);
        t.partitions = random_partitions(&t, seed);
        t.validate().unwrap();
        with_default += usize::from(t.partitions.iter().any(|p| p.key == DEFAULT));
        let (sent, arrived) = check(t, seed);
        assert!(
            arrived > 0 && arrived < sent,
            "seed {seed}: some arrive, some not ({arrived} of {sent})"
        );
    }
    assert!(
        (1..SEEDS as usize).contains(&with_default),
        "seeds with and without a Default statement"
    );
}

#[test]
fn appendix_b_tenants_talk_within_and_not_across() {
    let path = format!(
        "{}/../../examples/appendix-b-partitions.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let t = Topology::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(s_has_guards(&t));
    let tables = expected_tables(&t);
    assert_eq!(tables["H0"].get(&0x0010), Some(&true), "full");
    assert_eq!(tables["H5"].get(&0x0020), Some(&false), "limited");
    assert_eq!(tables["H2"].get(&0x0010), None);
    check(t, 1);
}

/// Whether the simulator gives `t`'s routers a partitions guard.
fn s_has_guards(t: &Topology) -> bool {
    let s = Sim::new(t.clone(), SimConfig::default()).unwrap();
    s.routers.iter().all(|r| r.partitions.is_some())
}

#[test]
fn without_partitions_the_ports_are_open_and_every_mark_arrives() {
    let t = Topology::random(4, 5, 2, 3);
    assert!(!s_has_guards(&t));
    let mut s = Sim::new(t, SimConfig::default()).unwrap();
    assert!(s.run_until_converged(60_000).is_some());
    let (h, d) = (0, s.hosts.len() - 1);
    assert_ne!(s.hosts[h].san, s.hosts[d].san);
    let dst = s.hosts[d].node.config().address;
    // Free is the applications' where no SAN has partitions.
    for (n, free) in [0u16, 0x8010, 0x0010, 0xFFFF, 0x1234]
        .into_iter()
        .enumerate()
    {
        s.host_send_data(h, dst, free, &probe(n as u32));
    }
    let now = s.now;
    s.run_until(now + 200);
    let got: Vec<u16> = s.data_received(d).map(|p| p.header.free).collect();
    assert_eq!(got, [0, 0x8010, 0x0010, 0xFFFF, 0x1234]);
    assert_eq!(s.router_stats()["partition"], 0);
}
