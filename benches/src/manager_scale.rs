//! The SAN manager at the size of a large SAN (docs/manager.md "At the size
//! of a large SAN"): the real stations of every member of one SAN on
//! [`mgmt::simsan::SimSan`], two of them running a manager with the
//! default timers, measured in virtual time, messages and the master's
//! wall-clock CPU. Binary `manager-scale`.
//!
//! Two SANs per size:
//! - **addressed**: every member configured with its address. Measured:
//!   the election from cold, one light and one heavy sweep in the steady
//!   state, the standby's copy of the identity -> address map, a failover
//!   (the master killed) until the new master has the whole SAN again.
//! - **address-less**: the two managers, then every other member powered
//!   on at once without an address once there is a master. Measured: the
//!   time until every member has its address, the messages, the
//!   announcements (trap 1025) the master heard per second, and the
//!   master's CPU per member addressed.

use mgmt::agent::{AgentConfig, NodeType};
use mgmt::manager::{ManagerConfig, SmState};
use mgmt::simsan::{SimSan, Time};
use rrp::Address;
use serde::Serialize;

/// The two managers' addresses and identities: the first is the master
/// (the lower identity at equal priority).
const MANAGERS: [(u16, u64); 2] = [(0x0101, 0x10), (0x0102, 0x11)];

/// The first address of the members configured with one.
const FIRST_MEMBER: u16 = 0x1000;

/// The first address of a master's pool.
const POOL_FIRST: u16 = 0x0400;

/// The link's delay per packet.
pub const LINK_DELAY_MS: Time = 1;

/// How long a phase may take in virtual time before it is reported as not
/// done.
const PHASE_LIMIT_MS: Time = 120_000;

/// A stretch of a run: how long it took in virtual time and what crossed
/// the SAN meanwhile.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Phase {
    /// Virtual time, milliseconds; `None`: not done within the limit.
    pub virtual_ms: Option<Time>,
    /// Packets sent on the SAN (a broadcast once).
    pub packets: u64,
    /// Packets delivered (a broadcast once per member it reached).
    pub deliveries: u64,
    /// Wall-clock time simulating the phase took, milliseconds.
    pub wall_ms: f64,
}

/// A master's sweep in the steady state.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Sweep {
    /// Which sweep (1: the first, heavy).
    pub number: u64,
    /// Whether it was heavy.
    pub heavy: bool,
    /// From its start until the master has no request out, milliseconds.
    pub virtual_ms: Time,
    /// Requests the master started in it.
    pub requests: u64,
    /// Packets the master received in it.
    pub received: u64,
    /// The master's wall-clock CPU in it, milliseconds.
    pub master_cpu_ms: f64,
}

/// The measurements at one size.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Members of the SAN, the two managers included.
    pub members: usize,
    /// Both managers settled (one master, one standby) from cold.
    pub election: Phase,
    /// The master's database holds every member: virtual time from cold,
    /// the rest from the election on.
    pub database_full: Phase,
    /// A light sweep in the steady state.
    pub light_sweep: Sweep,
    /// A heavy sweep in the steady state.
    pub heavy_sweep: Sweep,
    /// From the master holding every member's identity to the standby
    /// holding the same map.
    pub standby_copy: Phase,
    /// Records in that map.
    pub map_records: usize,
    /// The master killed: until the standby is master.
    pub failover_master: Phase,
    /// The master killed: until the new master's database holds every
    /// member that is up (virtual time from the kill, the rest from the
    /// new master on).
    pub failover_database: Phase,
    /// Address-less members powered on at once: until every one has its
    /// address.
    pub addressing: Phase,
    /// Members addressed.
    pub addressed: usize,
    /// Announcements (trap 1025) the master heard in all.
    pub announcements: u64,
    /// The most announcements the master heard in one second.
    pub announcements_peak_per_s: u64,
    /// The master's wall-clock CPU per member addressed, microseconds.
    pub master_cpu_per_member_us: f64,
    /// Wall-clock time of the whole measurement, milliseconds.
    pub wall_ms: f64,
}

fn member(i: usize) -> AgentConfig {
    AgentConfig::new(NodeType::Host, 0x1_0000 + i as u64, "member")
}

/// A SAN with the two managers (members 0 and 1) and `others` members at
/// their addresses (`addressed`) or without.
fn san(others: usize, addressed: bool, pool: usize) -> SimSan {
    let mut s = SimSan::new(LINK_DELAY_MS);
    for (a, id) in MANAGERS {
        let mut m = ManagerConfig::new(7, id);
        m.pool = Some((
            Address(POOL_FIRST),
            Address(POOL_FIRST + pool.min(0x7000) as u16),
        ));
        s.add(
            AgentConfig::new(NodeType::Host, id, "manager"),
            Address(a),
            Some(m),
        );
    }
    if addressed {
        for i in 0..others {
            s.add(member(i), Address(FIRST_MEMBER + i as u16), None);
        }
    }
    s
}

fn state(s: &SimSan, i: usize) -> SmState {
    s.station(i).managers()[0].1.state()
}

fn settled(s: &SimSan) -> bool {
    state(s, 0) == SmState::Master && state(s, 1) == SmState::Standby
}

/// Runs until `done` holds (or the phase's limit), as a [`Phase`] from now.
fn phase(s: &mut SimSan, done: impl FnMut(&SimSan) -> bool) -> Phase {
    let (t0, c0, w0) = (s.now(), s.counts(), std::time::Instant::now());
    let at = s.run_until_true(t0 + PHASE_LIMIT_MS, done);
    let c = s.counts();
    Phase {
        virtual_ms: at.map(|t| t - t0),
        packets: c.packets - c0.packets,
        deliveries: c.deliveries - c0.deliveries,
        wall_ms: w0.elapsed().as_secs_f64() * 1e3,
    }
}

/// The master's sweep `number`: from its start to the start of the next.
fn sweep(s: &mut SimSan, master: usize, number: u64) -> Sweep {
    let sweeps = |s: &SimSan| s.station(master).managers()[0].1.stats().sweeps;
    let stats = |s: &SimSan| *s.station(master).managers()[0].1.stats();
    // The counts from the start of the sweep before it: the measured
    // sweep's own requests go out in the instant it starts, and its
    // `heavy_sweeps` is counted then too.
    s.run_until_true(s.now() + PHASE_LIMIT_MS, |s| sweeps(s) + 1 >= number);
    let before = stats(s);
    s.run_until_true(s.now() + PHASE_LIMIT_MS, |s| sweeps(s) >= number);
    let (t0, rx0, cpu0) = (s.now(), s.received(master), s.busy(master));
    let end = s.run_until_true(t0 + PHASE_LIMIT_MS, |s| {
        s.station(master).managers()[0].1.requests_out() == 0
    });
    let after = stats(s);
    Sweep {
        number,
        heavy: after.heavy_sweeps > before.heavy_sweeps,
        virtual_ms: end.unwrap_or(Time::MAX) - t0,
        requests: after.requests - before.requests,
        received: s.received(master) - rx0,
        master_cpu_ms: (s.busy(master) - cpu0).as_secs_f64() * 1e3,
    }
}

/// Every measurement at `members` members (at least 3).
pub fn measure(members: usize) -> Report {
    let wall = std::time::Instant::now();
    let others = members.saturating_sub(MANAGERS.len()).max(1);
    let mut r = Report {
        members: others + MANAGERS.len(),
        ..Report::default()
    };

    // The addressed SAN.
    let mut s = san(others, true, others + 16);
    r.election = phase(&mut s, settled);
    let everyone = others + 1;
    let db = |s: &SimSan, i: usize| s.station(i).managers()[0].1.database().len();
    r.database_full = {
        let mut p = phase(&mut s, |s| db(s, 0) >= everyone);
        p.virtual_ms = p.virtual_ms.map(|v| v + r.election.virtual_ms.unwrap_or(0));
        p
    };
    let map = |s: &SimSan, i: usize| s.station(i).managers()[0].1.assignments().clone();
    r.map_records = map(&s, 0).len();
    r.standby_copy = phase(&mut s, |s| map(s, 1) == map(s, 0));
    // The next light sweep, and the next heavy one (every `heavy_every`th
    // from the first on), in the steady state.
    let every = ManagerConfig::new(7, 0).timers.heavy_every;
    let heavy = |n: u64| (n - 1).is_multiple_of(every);
    let next = s.station(0).managers()[0].1.stats().sweeps + 1;
    let light = (next..).find(|n| !heavy(*n)).unwrap_or(next);
    r.light_sweep = sweep(&mut s, 0, light);
    let next = s.station(0).managers()[0].1.stats().sweeps + 1;
    r.heavy_sweep = sweep(&mut s, 0, (next..).find(|n| heavy(*n)).unwrap_or(next));
    // Failover.
    s.set_up(0, false);
    r.failover_master = phase(&mut s, |s| state(s, 1) == SmState::Master);
    r.failover_database = {
        let mut p = phase(&mut s, |s| db(s, 1) >= others);
        p.virtual_ms = p
            .virtual_ms
            .map(|v| v + r.failover_master.virtual_ms.unwrap_or(0));
        p
    };

    // The address-less SAN: the managers settle, then every other member
    // powers on at once.
    let mut s = san(others, false, others + 16);
    phase(&mut s, settled);
    let first = s.len();
    for i in 0..others {
        s.add(member(i), Address::UNSPECIFIED, None);
    }
    let (cpu0, heard0) = (
        s.busy(0),
        s.station(0).managers()[0].1.stats().announcements,
    );
    let t0 = s.now();
    let mut per_s: Vec<u64> = Vec::new();
    let mut heard_last = heard0;
    r.addressing = phase(&mut s, |s| {
        let heard = s.station(0).managers()[0].1.stats().announcements;
        let sec = ((s.now() - t0) / 1_000) as usize;
        if per_s.len() <= sec {
            per_s.resize(sec + 1, 0);
        }
        per_s[sec] += heard - heard_last;
        heard_last = heard;
        (first..s.len()).all(|i| s.node(i).address.is_node())
    });
    r.addressed = (first..s.len())
        .filter(|i| s.node(*i).address.is_node())
        .count();
    r.announcements = heard_last - heard0;
    r.announcements_peak_per_s = per_s.iter().copied().max().unwrap_or(0);
    r.master_cpu_per_member_us = (s.busy(0) - cpu0).as_secs_f64() * 1e6 / r.addressed.max(1) as f64;
    r.wall_ms = wall.elapsed().as_secs_f64() * 1e3;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The harness measures what it says at a small size: every phase
    /// done, every member addressed, sweeps of the right kind.
    #[test]
    fn every_phase_completes_at_a_small_san() {
        let r = measure(40);
        assert_eq!(r.members, 40);
        for p in [
            r.election,
            r.database_full,
            r.standby_copy,
            r.failover_master,
            r.failover_database,
            r.addressing,
        ] {
            assert!(p.virtual_ms.is_some(), "{r:#?}");
        }
        assert!(!r.light_sweep.heavy && r.heavy_sweep.heavy, "{r:#?}");
        assert!(r.heavy_sweep.requests > r.light_sweep.requests, "{r:#?}");
        assert_eq!(r.addressed, 38);
        assert!(r.map_records >= 39, "{r:#?}");
    }
}
