//! The daemon's side of the stats area (docs/stats.md): the workers'
//! counter blocks summed into the area's slots, the control thread's
//! counters, and the Prometheus listener. The area's format, writer and
//! readers are the admin protocol's ([`admin::stats`]).

mod counters;
mod http;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use admin::stats::{PORT_COUNTERS, PORT_FIELDS, PlaneStatsSnapshot, Result, StatsWriter};
use dataplane::{PortCounters, StatsBlock};
use rrp::DropReason;
use rrp::router::RouterStats;

pub use counters::Counters;
pub use http::{Handle, serve_prometheus};

use crate::PlaneStats;

/// The slots of each port's counters, in the area's order.
pub fn port_slots(ports: &[PortCounters]) -> Vec<[u64; PORT_FIELDS]> {
    ports.iter().map(slots_of).collect()
}

/// The slots of each port with the control plane's own per-port counts
/// (docs/spec-notes.md 60): its strangers, and the packets it refused as
/// spoofed, which move from `punted` to `dropped.spoofed-source` so that
/// received = forwarded + dropped + punted still holds.
pub fn port_slots_with(ports: &[PortCounters], router: &RouterStats) -> Vec<[u64; PORT_FIELDS]> {
    let strangers = PORT_COUNTERS
        .iter()
        .position(|(n, _, _)| *n == "strangers")
        .expect("a slot");
    let punted = PORT_COUNTERS
        .iter()
        .position(|(n, _, _)| *n == "punted")
        .expect("a slot");
    let spoofed = PORT_COUNTERS.len() + DropReason::SpoofedSource as usize;
    ports
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut s = slots_of(c);
            s[strangers] = router.strangers.get(i).copied().unwrap_or(0);
            let refused = router.spoofed.get(i).copied().unwrap_or(0);
            // The worker's count may lag the engine's by a publication.
            let moved = refused.min(s[punted]);
            s[punted] -= moved;
            s[spoofed] += moved;
            s
        })
        .collect()
}

/// The slots of one port's counters, in the area's order.
fn slots_of(c: &PortCounters) -> [u64; PORT_FIELDS] {
    // Exhaustive: a new field does not build until it has a slot.
    let PortCounters {
        received,
        rx_errors,
        forwarded,
        punted,
        dropped,
        transmitted,
        injected,
        inject_failed,
        notices,
        notices_dropped,
    } = *c;
    let mut s = [0u64; PORT_FIELDS];
    s[..PORT_COUNTERS.len()].copy_from_slice(&[
        received,
        rx_errors,
        forwarded,
        punted,
        transmitted,
        injected,
        inject_failed,
        notices,
        notices_dropped,
        0, // strangers: the control plane's (port_slots_with)
    ]);
    s[PORT_COUNTERS.len()..].copy_from_slice(&dropped);
    s
}

/// The control thread's counters now.
pub fn plane_snapshot(p: &PlaneStats) -> PlaneStatsSnapshot {
    // Exhaustive: a new field does not build until it has a slot.
    let PlaneStats {
        punts,
        notices,
        injected,
        inject_full,
        inject_bad_native,
        fibs_published,
        fib_version,
    } = p;
    PlaneStatsSnapshot {
        punts: punts.load(Ordering::Relaxed),
        notices: notices.load(Ordering::Relaxed),
        injected: injected.load(Ordering::Relaxed),
        inject_full: inject_full.load(Ordering::Relaxed),
        inject_bad_native: inject_bad_native.load(Ordering::Relaxed),
        fibs_published: fibs_published.load(Ordering::Relaxed),
        fib_version: fib_version.load(Ordering::Relaxed),
    }
}

/// Publishes the sum of the workers' blocks (ports missing from the blocks
/// count zero; ports beyond the area's are left out), the engine's
/// counters and the control thread's.
pub fn publish_blocks(
    w: &StatsWriter,
    blocks: &[Arc<StatsBlock>],
    router: &RouterStats,
    plane: &PlaneStats,
) -> Result<()> {
    let mut ports = dataplane::counters::sum(blocks);
    ports.resize(w.ports(), PortCounters::default());
    w.publish(
        &port_slots_with(&ports, router),
        router,
        &plane_snapshot(plane),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::stats::PortSnapshot;
    use rrp::{DropReason, PortId};

    #[test]
    fn slots_follow_the_area_layout() {
        let mut c = PortCounters {
            received: 1,
            rx_errors: 2,
            forwarded: 3,
            punted: 4,
            transmitted: 5,
            injected: 6,
            inject_failed: 7,
            notices: 8,
            notices_dropped: 9,
            ..PortCounters::default()
        };
        c.dropped[DropReason::Mtu as usize] = 10;
        let p = PortSnapshot::from_slots(PortId(0), &slots_of(&c));
        assert_eq!(
            (
                p.received,
                p.rx_errors,
                p.forwarded,
                p.punted,
                p.transmitted
            ),
            (1, 2, 3, 4, 5)
        );
        assert_eq!((p.injected, p.inject_failed, p.notices), (6, 7, 8));
        assert_eq!(p.notices_dropped, 9);
        assert_eq!(p.dropped(DropReason::Mtu), 10);
        assert_eq!(p.dropped_total(), 10);
        assert_eq!(p.slots(), slots_of(&c));
    }
}
