//! What a reader gets from the area ([`Snapshot`]), and the baseline that
//! `clear counters` saves ([`Baseline`]).

use std::collections::BTreeMap;

use rrp::router::RouterStats;
use rrp::{DropReason, PortId};
use serde::{Deserialize, Serialize};

use super::{
    PLANE_COUNTERS, PLANE_FIELDS, PORT_COUNTERS, PORT_FIELDS, REFUSALS, ROUTER_COUNTERS,
    ROUTER_FIELDS, refusal_index, refusal_name,
};

/// The counters of one port (summed over the workers).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortSnapshot {
    /// The port.
    pub port: PortId,
    /// Packets received.
    pub received: u64,
    /// Received packets flagged with a receive error by the port.
    pub rx_errors: u64,
    /// Received packets transmitted on some port.
    pub forwarded: u64,
    /// Received packets handed to the control plane.
    pub punted: u64,
    /// Packets transmitted on this port (forwarded from any port, and injected).
    pub transmitted: u64,
    /// Packets the control plane injected for transmission on this port.
    pub injected: u64,
    /// Injections this port could not send.
    pub inject_failed: u64,
    /// Notices queued for the control plane.
    pub notices: u64,
    /// Notices not queued (ring full or rate limit).
    pub notices_dropped: u64,
    /// Packets for this box from a source the HR does not know.
    #[serde(default)]
    pub strangers: u64,
    /// Received packets dropped, by reason name (every reason, zeros included).
    pub dropped: BTreeMap<String, u64>,
}

impl PortSnapshot {
    /// From the slots of the area (file order: [`PORT_COUNTERS`], then
    /// one per drop reason).
    pub fn from_slots(port: PortId, s: &[u64; PORT_FIELDS]) -> PortSnapshot {
        let n = PORT_COUNTERS.len();
        PortSnapshot {
            port,
            received: s[0],
            rx_errors: s[1],
            forwarded: s[2],
            punted: s[3],
            transmitted: s[4],
            injected: s[5],
            inject_failed: s[6],
            notices: s[7],
            notices_dropped: s[8],
            strangers: s[9],
            dropped: DropReason::ALL
                .iter()
                .enumerate()
                .map(|(i, r)| (r.name().to_string(), s[n + i]))
                .collect(),
        }
    }

    /// The slots (file order). Drop reasons missing from `dropped` count 0.
    pub fn slots(&self) -> [u64; PORT_FIELDS] {
        let n = PORT_COUNTERS.len();
        let mut s = [0u64; PORT_FIELDS];
        s[..n].copy_from_slice(&[
            self.received,
            self.rx_errors,
            self.forwarded,
            self.punted,
            self.transmitted,
            self.injected,
            self.inject_failed,
            self.notices,
            self.notices_dropped,
            self.strangers,
        ]);
        for r in DropReason::ALL {
            s[n + r as usize] = self.dropped(r);
        }
        s
    }

    /// Drops of one reason.
    pub fn dropped(&self, r: DropReason) -> u64 {
        self.dropped.get(r.name()).copied().unwrap_or(0)
    }

    /// All drops.
    pub fn dropped_total(&self) -> u64 {
        DropReason::ALL.iter().map(|r| self.dropped(*r)).sum()
    }
}

/// The RRP engine's counters ([`RouterStats`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouterSnapshot {
    /// Control packets received (parsed or not).
    pub received: u64,
    /// Control packets that failed to parse.
    pub parse_errors: u64,
    /// Packets for this box that are not RRP or ERR.
    pub not_control: u64,
    /// Control packets sent.
    pub sent: u64,
    /// RRP#9 received.
    pub rts_received: u64,
    /// RTs taken (new or newer SN).
    pub rts_accepted: u64,
    /// RTs whose hold timer an equal SN refreshed.
    pub rts_refreshed: u64,
    /// RTs deleted by hold expiry.
    pub rts_expired: u64,
    /// RTs deleted by HR-DOWN or LINK-DOWN.
    pub rts_deleted_down: u64,
    /// RRP#9 messages sent (parts counted one by one).
    pub rts_sent: u64,
    /// Requests answered (RRP#1, #4, #6, #7, #8).
    pub requests_answered: u64,
    /// Requests not answered: over the answer rate.
    pub requests_limited: u64,
    /// ERR UNK sent.
    pub err_unk_sent: u64,
    /// RRP#3 sent for redirect notices.
    pub redirects_sent: u64,
    /// ERR GENERAL sent.
    pub err_general_sent: u64,
    /// Error messages not sent: the failed packet was an ERR.
    pub errors_suppressed_err: u64,
    /// Error messages not sent: invalid source address.
    pub errors_suppressed_source: u64,
    /// Error messages not sent: rate limit.
    pub errors_suppressed_rate: u64,
    /// HR-DOWN events handled.
    pub hr_down: u64,
    /// FIB computations that changed something.
    pub fib_versions: u64,
    /// Signed control packets whose signature verified.
    pub auth_verified: u64,
    /// Unsigned control packets taken by an HR with keys that accepts them.
    pub auth_unsigned: u64,
    /// Signed control packets taken unchecked by an HR without keys.
    pub auth_unchecked: u64,
    /// Control packets refused by authentication: unsigned.
    pub auth_refused_missing: u64,
    /// Refused: an authentication record of an unknown algorithm.
    pub auth_refused_malformed: u64,
    /// Refused: signed with a key the HR does not hold.
    pub auth_refused_unknown_key: u64,
    /// Refused: the digest is not the key's.
    pub auth_refused_bad_digest: u64,
    /// Refused: a sequence number seen already or too old.
    pub auth_refused_replay: u64,
    /// HR-DOWN and LINK-DOWN refused: the sender is no buddy.
    #[serde(default)]
    pub downs_not_buddy: u64,
    /// HR-DOWN and LINK-DOWN refused: over the rate.
    #[serde(default)]
    pub downs_limited: u64,
    /// HRs probed after a third party's HR-DOWN.
    #[serde(default)]
    pub hr_down_probes: u64,
    /// Probed HRs that answered.
    #[serde(default)]
    pub hr_down_disproved: u64,
    /// RTs refused, by reason name (every reason, zeros included).
    pub rts_refused: BTreeMap<String, u64>,
}

/// The slots of the engine's counters, in file order.
pub fn router_slots(r: &RouterStats) -> [u64; ROUTER_FIELDS] {
    // Exhaustive: a new field does not build until it has a slot.
    let RouterStats {
        received,
        parse_errors,
        not_control,
        sent,
        rts_received,
        rts_accepted,
        rts_refreshed,
        rts_refused,
        rts_expired,
        rts_deleted_down,
        rts_sent,
        requests_answered,
        err_unk_sent,
        redirects_sent,
        err_general_sent,
        errors_suppressed_err,
        errors_suppressed_source,
        errors_suppressed_rate,
        hr_down,
        fib_versions,
        requests_limited,
        auth_verified,
        auth_unsigned,
        auth_unchecked,
        auth_refused,
        downs_not_buddy,
        downs_limited,
        hr_down_probes,
        hr_down_disproved,
        // Per port: the ports' slots (strangers, dropped.spoofed-source).
        spoofed: _,
        strangers: _,
    } = r;
    let mut s = [0u64; ROUTER_FIELDS];
    s[..ROUTER_COUNTERS.len()].copy_from_slice(&[
        *received,
        *parse_errors,
        *not_control,
        *sent,
        *rts_received,
        *rts_accepted,
        *rts_refreshed,
        *rts_expired,
        *rts_deleted_down,
        *rts_sent,
        *requests_answered,
        *err_unk_sent,
        *redirects_sent,
        *err_general_sent,
        *errors_suppressed_err,
        *errors_suppressed_source,
        *errors_suppressed_rate,
        *hr_down,
        *fib_versions,
        *requests_limited,
        *auth_verified,
        *auth_unsigned,
        *auth_unchecked,
        auth_refused[0],
        auth_refused[1],
        auth_refused[2],
        auth_refused[3],
        auth_refused[4],
        *downs_not_buddy,
        *downs_limited,
        *hr_down_probes,
        *hr_down_disproved,
    ]);
    for (why, n) in rts_refused {
        s[ROUTER_COUNTERS.len() + refusal_index(*why)] += n;
    }
    s
}

impl RouterSnapshot {
    /// The snapshot of the engine's counters.
    pub fn new(r: &RouterStats) -> RouterSnapshot {
        RouterSnapshot::from_slots(&router_slots(r))
    }

    /// From the slots of the area (file order).
    pub fn from_slots(s: &[u64; ROUTER_FIELDS]) -> RouterSnapshot {
        let n = ROUTER_COUNTERS.len();
        RouterSnapshot {
            received: s[0],
            parse_errors: s[1],
            not_control: s[2],
            sent: s[3],
            rts_received: s[4],
            rts_accepted: s[5],
            rts_refreshed: s[6],
            rts_expired: s[7],
            rts_deleted_down: s[8],
            rts_sent: s[9],
            requests_answered: s[10],
            err_unk_sent: s[11],
            redirects_sent: s[12],
            err_general_sent: s[13],
            errors_suppressed_err: s[14],
            errors_suppressed_source: s[15],
            errors_suppressed_rate: s[16],
            hr_down: s[17],
            fib_versions: s[18],
            requests_limited: s[19],
            auth_verified: s[20],
            auth_unsigned: s[21],
            auth_unchecked: s[22],
            auth_refused_missing: s[23],
            auth_refused_malformed: s[24],
            auth_refused_unknown_key: s[25],
            auth_refused_bad_digest: s[26],
            auth_refused_replay: s[27],
            downs_not_buddy: s[28],
            downs_limited: s[29],
            hr_down_probes: s[30],
            hr_down_disproved: s[31],
            rts_refused: REFUSALS
                .iter()
                .enumerate()
                .map(|(i, r)| (refusal_name(*r).to_string(), s[n + i]))
                .collect(),
        }
    }

    /// The slots (file order). Refusals missing from `rts_refused` count 0.
    pub fn slots(&self) -> [u64; ROUTER_FIELDS] {
        let n = ROUTER_COUNTERS.len();
        let mut s = [0u64; ROUTER_FIELDS];
        s[..n].copy_from_slice(&[
            self.received,
            self.parse_errors,
            self.not_control,
            self.sent,
            self.rts_received,
            self.rts_accepted,
            self.rts_refreshed,
            self.rts_expired,
            self.rts_deleted_down,
            self.rts_sent,
            self.requests_answered,
            self.err_unk_sent,
            self.redirects_sent,
            self.err_general_sent,
            self.errors_suppressed_err,
            self.errors_suppressed_source,
            self.errors_suppressed_rate,
            self.hr_down,
            self.fib_versions,
            self.requests_limited,
            self.auth_verified,
            self.auth_unsigned,
            self.auth_unchecked,
            self.auth_refused_missing,
            self.auth_refused_malformed,
            self.auth_refused_unknown_key,
            self.auth_refused_bad_digest,
            self.auth_refused_replay,
            self.downs_not_buddy,
            self.downs_limited,
            self.hr_down_probes,
            self.hr_down_disproved,
        ]);
        for (i, r) in REFUSALS.iter().enumerate() {
            s[n + i] = self.rts_refused.get(refusal_name(*r)).copied().unwrap_or(0);
        }
        s
    }
}

/// The daemon's control-thread counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaneStatsSnapshot {
    /// Punted packets handed to the engine.
    pub punts: u64,
    /// Notices handed to the engine.
    pub notices: u64,
    /// Packets injected into a worker's ring.
    pub injected: u64,
    /// Packets the engine sent that found the injection ring full.
    pub inject_full: u64,
    /// Packets the engine sent to a native address the port cannot hold.
    pub inject_bad_native: u64,
    /// FIB sets published.
    pub fibs_published: u64,
    /// Version of the last published FIB set (a gauge).
    pub fib_version: u64,
}

impl PlaneStatsSnapshot {
    /// The slots (file order).
    pub fn slots(&self) -> [u64; PLANE_FIELDS] {
        [
            self.punts,
            self.notices,
            self.injected,
            self.inject_full,
            self.inject_bad_native,
            self.fibs_published,
            self.fib_version,
        ]
    }

    /// From the slots of the area (file order).
    pub fn from_slots(s: &[u64; PLANE_FIELDS]) -> PlaneStatsSnapshot {
        PlaneStatsSnapshot {
            punts: s[0],
            notices: s[1],
            injected: s[2],
            inject_full: s[3],
            inject_bad_native: s[4],
            fibs_published: s[5],
            fib_version: s[6],
        }
    }
}

/// Everything the area holds at one publication: what `mwctl stats --json`
/// prints.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The area's generation at this publication (even; twice the number of
    /// publications since the area was created; 0 for an in-memory snapshot).
    pub generation: u64,
    /// When the publisher created the area (UNIX time, ns): one run of the
    /// daemon.
    pub started_ns: u64,
    /// When this publication was made (UNIX time, ns; 0 before the first).
    pub published_ns: u64,
    /// Per-port counters, port 0 first.
    pub ports: Vec<PortSnapshot>,
    /// The RRP engine's counters.
    pub rrp: RouterSnapshot,
    /// The control thread's counters.
    pub plane: PlaneStatsSnapshot,
}

fn sub<const N: usize>(a: &[u64; N], b: &[u64; N]) -> [u64; N] {
    core::array::from_fn(|i| a[i].saturating_sub(b[i]))
}

impl Snapshot {
    /// An in-memory snapshot (generation and times 0) of the ports'
    /// counters as slots, port 0 first.
    pub fn new(
        ports: &[[u64; PORT_FIELDS]],
        router: &RouterStats,
        plane: &PlaneStatsSnapshot,
    ) -> Snapshot {
        Snapshot {
            generation: 0,
            started_ns: 0,
            published_ns: 0,
            ports: ports
                .iter()
                .enumerate()
                .map(|(i, c)| PortSnapshot::from_slots(PortId::new(i), c))
                .collect(),
            rrp: RouterSnapshot::new(router),
            plane: *plane,
        }
    }

    /// The counters since `base` was taken, for displays: every counter
    /// less its value in the baseline (saturating at 0); gauges
    /// (`plane.fib_version`), the header and ports the baseline does not
    /// hold stay as they are. A baseline of another run of the daemon
    /// (another `started_ns`) subtracts nothing. Exports (Prometheus) use
    /// the snapshot itself, never this: exported counters stay monotonic.
    pub fn minus(&self, base: &Baseline) -> Snapshot {
        if !base.applies_to(self) {
            return self.clone();
        }
        let b = &base.snapshot;
        let ports = self
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| match b.ports.get(i) {
                Some(bp) => PortSnapshot::from_slots(p.port, &sub(&p.slots(), &bp.slots())),
                None => p.clone(),
            })
            .collect();
        let mut plane = sub(&self.plane.slots(), &b.plane.slots());
        for (i, (_, _, gauge)) in PLANE_COUNTERS.iter().enumerate() {
            if *gauge {
                plane[i] = self.plane.slots()[i];
            }
        }
        Snapshot {
            generation: self.generation,
            started_ns: self.started_ns,
            published_ns: self.published_ns,
            ports,
            rrp: RouterSnapshot::from_slots(&sub(&self.rrp.slots(), &b.rrp.slots())),
            plane: PlaneStatsSnapshot::from_slots(&plane),
        }
    }
}

/// What `clear counters` saves: the snapshot at the time of the clear,
/// which displays subtract ([`Snapshot::minus`]). The area itself and the
/// Prometheus export are never cleared. Serialisable, so that the daemon
/// may keep it across admin connections (or on disk).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    snapshot: Snapshot,
}

impl Baseline {
    /// `clear counters`: everything as of `current`.
    pub fn new(current: &Snapshot) -> Baseline {
        Baseline {
            snapshot: current.clone(),
        }
    }

    /// `clear counters port N`: port `port` as of `current`, the rest as
    /// before (or zero when the baseline is of another run).
    pub fn clear_port(&mut self, current: &Snapshot, port: PortId) {
        if !self.applies_to(current) {
            self.snapshot = Snapshot {
                generation: current.generation,
                started_ns: current.started_ns,
                published_ns: current.published_ns,
                ..Snapshot::default()
            };
        }
        let Some(now) = current.ports.get(port.index()) else {
            return;
        };
        let ports = &mut self.snapshot.ports;
        while ports.len() <= port.index() {
            let i = PortId::new(ports.len());
            ports.push(PortSnapshot::from_slots(i, &[0; PORT_FIELDS]));
        }
        ports[port.index()] = now.clone();
    }

    /// The snapshot saved.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Whether the baseline was taken in the same run of the daemon as `s`.
    pub fn applies_to(&self, s: &Snapshot) -> bool {
        self.snapshot.started_ns == s.started_ns
    }
}

impl From<Snapshot> for Baseline {
    fn from(snapshot: Snapshot) -> Baseline {
        Baseline { snapshot }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON field order is the slot order, and names match the tables.
    #[test]
    fn json_names_follow_the_slot_tables() {
        let s: [u64; PORT_FIELDS] = core::array::from_fn(|i| i as u64 + 1);
        let p = serde_json::to_value(PortSnapshot::from_slots(PortId(0), &s)).unwrap();
        for (i, (name, _, _)) in PORT_COUNTERS.iter().enumerate() {
            assert_eq!(p[name], s[i], "{name}");
        }
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(p["dropped"][r.name()], s[PORT_COUNTERS.len() + i]);
        }
        let s: [u64; ROUTER_FIELDS] = core::array::from_fn(|i| i as u64 + 1);
        let r = serde_json::to_value(RouterSnapshot::from_slots(&s)).unwrap();
        for (i, (name, _)) in ROUTER_COUNTERS.iter().enumerate() {
            assert_eq!(r[name], s[i], "{name}");
        }
        for (i, why) in REFUSALS.iter().enumerate() {
            assert_eq!(
                r["rts_refused"][refusal_name(*why)],
                s[ROUTER_COUNTERS.len() + i]
            );
        }
        let s: [u64; PLANE_FIELDS] = core::array::from_fn(|i| i as u64 + 1);
        let p = serde_json::to_value(PlaneStatsSnapshot::from_slots(&s)).unwrap();
        for (i, (name, _, _)) in PLANE_COUNTERS.iter().enumerate() {
            assert_eq!(p[name], s[i], "{name}");
        }
    }

    #[test]
    fn slots_round_trip() {
        let s: [u64; PORT_FIELDS] = core::array::from_fn(|i| 100 + i as u64);
        let p = PortSnapshot::from_slots(PortId(3), &s);
        assert_eq!(p.slots(), s);
        let s: [u64; ROUTER_FIELDS] = core::array::from_fn(|i| 7 * i as u64);
        assert_eq!(RouterSnapshot::from_slots(&s).slots(), s);
    }
}
