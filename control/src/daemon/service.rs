//! What the control thread tells systemd while the daemon runs
//! (docs/daemon.md "systemd"): WATCHDOG=1 when [`Watchdog`] says every
//! worker progressed, and a STATUS= line of what the router does (its
//! ports, routes and neighbours, and a stalled worker) when it changes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dataplane::StatsBlock;
use rrp::PortId;

use super::notify::Notifier;
use super::watchdog::{Feed, Watchdog};
use crate::plane::{ControlPlane, TurnHook};

/// How often the status line is recomputed (sent only when it changed).
const STATUS_EVERY: Duration = Duration::from_secs(2);

/// The status line of a running router: `forwarding on 2 HRs (udp); FIB v3,
/// 4 routes; 1 neighbour`.
pub fn status(cp: &ControlPlane, backend: &str) -> String {
    let engine = cp.engine();
    let hrs = engine.config().hrs.len();
    let fib = engine.fib();
    let routes: usize = PortId::all(hrs).map(|p| fib.len(p)).sum();
    let neighbours: usize = PortId::all(hrs).map(|p| engine.lrt(p).len()).sum();
    format!(
        "forwarding on {hrs} HR{} ({backend}); FIB v{}, {routes} route{}; {neighbours} neighbour{}",
        plural(hrs),
        fib.version,
        plural(routes),
        plural(neighbours)
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The control thread's turn hook: feeds the watchdog (if systemd set one)
/// from the workers' counters in `blocks`, and keeps the status current.
pub fn hook(
    notifier: Arc<Notifier>,
    interval: Option<Duration>,
    blocks: Vec<Arc<StatsBlock>>,
    backend: &'static str,
) -> TurnHook {
    let polls = move |blocks: &[Arc<StatsBlock>]| -> Vec<u64> {
        dataplane::counters::workers(blocks)
            .iter()
            .map(|w| w.polls)
            .collect()
    };
    let start = Instant::now();
    let mut watchdog = interval.map(|i| Watchdog::new(i, start, polls(&blocks)));
    let mut stalled: Option<usize> = None;
    let mut status_at = start;
    let mut last_status = String::new();
    Box::new(move |cp: &ControlPlane| {
        let now = Instant::now();
        if let Some(w) = watchdog.as_mut()
            && w.due(now)
        {
            match w.check(now, &polls(&blocks)) {
                Feed::Feed => {
                    notifier.watchdog();
                    if stalled.take().is_some() {
                        tracing::info!("every worker polls again; the watchdog is fed");
                    }
                }
                Feed::Stalled(i) if stalled != Some(i) => {
                    stalled = Some(i);
                    tracing::error!(
                        worker = i,
                        "worker {i} has not polled for half the watchdog interval: \
                         the watchdog is no longer fed (systemd restarts the daemon)"
                    );
                }
                Feed::Stalled(_) | Feed::NotDue => {}
            }
        }
        if now >= status_at {
            status_at = now + STATUS_EVERY;
            let mut s = status(cp, backend);
            if let Some(i) = stalled {
                s = format!("worker {i} stalled (watchdog not fed); {s}");
            }
            if s != last_status {
                notifier.status(&s);
                last_status = s;
            }
        }
    })
}
