//! The impairment of a host's receive side (`impair`): the seeded layer of
//! the in-memory backend ([`ports::impair::Impairer`]) over each datagram
//! received, and what it did, for probes too.

use std::sync::Arc;

use mwgen::probe::{self, Received};
use ports::HeapBuf;
use ports::clock::MonotonicClock;
use ports::impair::{ImpairConfig, ImpairStats, Impairer};
use rrp::limits::MAX_L2RHS;
use rrp::wire::{Header, locate};
use rrp::{Address, NativeAddr};
use serde_json::{Value, json};

use super::now_ns;
use super::state::{Host, Reply, State};

/// The impairment of a host's receive side: the seeded layer of the
/// in-memory backend over each datagram received, without delay, so that
/// what it releases is delivered at once.
#[derive(Debug)]
pub(super) struct RxImpair {
    pub(super) impairer: Impairer,
    /// The stream (source, destination, tag) of the datagram held back for
    /// reordering, when it is a probe.
    pub(super) held: Option<(Address, Address, u16)>,
}

/// What the receive side's impairment did ([`ImpairStats`]'s meanings), and
/// the same for probes.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ImpairCounts {
    pub(super) all: ImpairStats,
    pub(super) probes_seen: u64,
    pub(super) probes_lost: u64,
    pub(super) probes_duplicated: u64,
    /// Probes held back behind a probe of their own stream.
    pub(super) probes_reordered: u64,
}

/// The stream (source, destination, tag) of a probe; `None` for any other
/// packet.
pub(super) fn probe_stream(pkt: &[u8]) -> Option<(Address, Address, u16)> {
    let Received::Probe(p) = probe::read(pkt) else {
        return None;
    };
    let layout = locate(pkt, MAX_L2RHS).ok()?;
    let hdr = Header::new_unchecked(&pkt[layout.header_offset..]);
    Some((hdr.src(), hdr.dst(), p.tag))
}

impl State {
    /// Takes a received datagram through the impairment (when on) and
    /// returns the datagrams it releases, to be delivered in order.
    pub(super) fn impair(&mut self, pkt: &[u8], from: NativeAddr) -> Option<Vec<HeapBuf>> {
        let imp = self.impair.as_mut()?;
        let stream = probe_stream(pkt);
        let mut buf = HeapBuf::new(pkt.len(), 0);
        buf.set_data(pkt, 0);
        buf.set_native_src(from);
        let before = imp.impairer.stats();
        // The line never holds more than a datagram, its copy and the
        // next: the capacity is never reached.
        let _ = imp.impairer.push(buf);
        let after = imp.impairer.stats();
        let c = &mut self.impaired;
        c.all.seen += after.seen - before.seen;
        c.all.lost += after.lost - before.lost;
        c.all.duplicated += after.duplicated - before.duplicated;
        c.all.reordered += after.reordered - before.reordered;
        if stream.is_some() {
            c.probes_seen += 1;
            c.probes_lost += after.lost - before.lost;
            c.probes_duplicated += after.duplicated - before.duplicated;
        }
        if after.reordered > before.reordered {
            if imp.held.is_some() && imp.held == stream {
                c.probes_reordered += 1;
            }
            imp.held = None;
        }
        let out = Self::release(imp, c);
        if after.lost == before.lost && imp.impairer.held() > 0 {
            // Held back: this datagram (what the slot holds after a
            // datagram that was not lost). A lost one leaves the slot as
            // it was.
            imp.held = stream;
        }
        Some(out)
    }

    /// The datagrams the impairment has released.
    pub(super) fn release(imp: &mut RxImpair, c: &mut ImpairCounts) -> Vec<HeapBuf> {
        let mut out = Vec::new();
        while let Some(b) = imp.impairer.pop() {
            c.all.passed += 1;
            out.push(b);
        }
        out
    }

    /// Delivers a datagram held back for reordering (no successor came):
    /// not counted as reordered.
    pub(super) fn impair_flush(&mut self) -> Vec<HeapBuf> {
        let Some(imp) = self.impair.as_mut() else {
            return Vec::new();
        };
        if !imp.impairer.flush() {
            return Vec::new();
        }
        imp.held = None;
        Self::release(imp, &mut self.impaired)
    }
}

impl Host<'_> {
    /// `stats`' `impair`: the settings and the counts (the control
    /// protocol's documentation, control.rs).
    pub(super) fn impair_json(&self, st: &State) -> Value {
        let cfg = st.impair.as_ref().map(|i| *i.impairer.config());
        let c = &st.impaired;
        json!({
            "rx_loss": cfg.map_or(0.0, |c| c.loss),
            "duplicate": cfg.map_or(0.0, |c| c.duplicate),
            "reorder": cfg.map_or(0.0, |c| c.reorder),
            "seed": cfg.map(|c| c.seed),
            "seen": c.all.seen,
            "passed": c.all.passed,
            "lost": c.all.lost,
            "duplicated": c.all.duplicated,
            "reordered": c.all.reordered,
            "held": c.all.held(),
            "probes": {
                "seen": c.probes_seen,
                "lost": c.probes_lost,
                "duplicated": c.probes_duplicated,
                "reordered": c.probes_reordered,
            },
        })
    }

    /// `{"cmd":"impair","rx_loss":P,"duplicate":D,"reorder":R,"seed":S}`:
    /// impairs what the link receives, as a lossy, duplicating, reordering
    /// link would (the control protocol's documentation, control.rs); all
    /// three 0 ends it.
    pub(super) fn cmd_impair(&self, req: &Value) -> Reply {
        let prob = |k: &str| -> Result<f64, String> {
            match req.get(k) {
                None => Ok(0.0),
                Some(v) => v
                    .as_f64()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| format!("{k}: a probability from 0 to 1")),
            }
        };
        let (loss, duplicate, reorder) = (prob("rx_loss")?, prob("duplicate")?, prob("reorder")?);
        let seed = match req.get("seed") {
            None => now_ns() | 1,
            Some(v) => v.as_u64().ok_or("seed: an unsigned integer")?,
        };
        let on = loss + duplicate + reorder > 0.0;
        let cfg = ImpairConfig {
            loss,
            duplicate,
            reorder,
            ..ImpairConfig::seeded(seed)
        };
        let mut st = self.lock();
        // A datagram the previous settings held back is delivered first.
        let held = st.impair_flush();
        st.impair = on.then(|| RxImpair {
            impairer: Impairer::new(cfg, Arc::new(MonotonicClock::new()), 64),
            held: None,
        });
        drop(st);
        self.deliver(held);
        Ok(json!({
            "rx_loss": loss,
            "duplicate": duplicate,
            "reorder": reorder,
            "seed": on.then_some(seed),
        }))
    }
}
