//! Traffic accounting: what a host received (each datagram counted exactly
//! once) and what it sent, as the control protocol's `stats` reports it.

use std::collections::{BTreeMap, BTreeSet};

use mwgen::probe;
use mwgen::receiver::Receiver;
use rrp::Address;
use serde_json::{Value, json};

use super::format::hex;

/// The probes of one source, for the lost hint: the sequence numbers seen.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct SeqSpan {
    pub(super) lo: u64,
    pub(super) hi: u64,
}

/// What arrived, counted so that every datagram lands in exactly one of
/// `probes`, `control`, `other` and `malformed` (`datagrams` is their sum).
#[derive(Debug, Default)]
pub(super) struct RxTraffic {
    /// Datagrams received.
    pub(super) datagrams: u64,
    /// Probes (any destination), one receiver per (source, destination, tag).
    pub(super) probes: u64,
    pub(super) receivers: BTreeMap<(Address, Address, u16), Receiver>,
    /// Sequence numbers seen per (source, destination, tag).
    pub(super) spans: BTreeMap<(Address, Address, u16), SeqSpan>,
    /// Well-formed RRP and ERR messages, by the draft's name.
    pub(super) control: BTreeMap<String, u64>,
    /// ERRs by kind (also in `control`).
    pub(super) errors: BTreeMap<&'static str, u64>,
    /// RRP#7s answered with RRP#5 (also in `control`).
    pub(super) rrp7_answered: u64,
    /// RRP#4s answered with RRP#5 (also in `control`).
    pub(super) rrp4_answered: u64,
    /// Management packets (PT 0x0006), handed to the management thread.
    pub(super) management: u64,
    /// Management packets of a host without management (also in
    /// `management`).
    pub(super) management_ignored: u64,
    /// Well-formed packets that are neither probes nor RRP/ERR.
    pub(super) other: u64,
    /// Group packets for groups this host does not listen to.
    pub(super) not_member: u64,
    /// Data packets in a partition this host is not a member of, or sent
    /// by a limited member to this limited one (docs/partitions.md "At
    /// the hosts").
    pub(super) partition_refused: u64,
    /// Datagrams that are not MessageWay packets, or control packets whose
    /// message does not parse.
    pub(super) malformed: u64,
    /// Control and management packets its SAN's authentication refused
    /// (a keyed host: unsigned, forged, replayed).
    pub(super) auth_refused: u64,
    /// Receive errors of the socket (e.g. a pending ICMP error): not
    /// datagrams.
    pub(super) recv_errors: u64,
    /// Replies that could not be sent.
    pub(super) reply_errors: u64,
}

impl RxTraffic {
    pub(super) fn probe(
        &mut self,
        src: Address,
        dst: Address,
        p: probe::Probe,
        pkt: &[u8],
        now: u64,
    ) {
        self.probes += 1;
        let key = (src, dst, p.tag);
        // The receiver follows the probe's own tag: it extends the number.
        let Some(seq) = self
            .receivers
            .entry(key)
            .or_insert_with(|| Receiver::new(p.tag, 0, 0))
            .on_packet(pkt, false, now)
        else {
            return;
        };
        let s = self
            .spans
            .entry(key)
            .or_insert(SeqSpan { lo: seq, hi: seq });
        s.lo = s.lo.min(seq);
        s.hi = s.hi.max(seq);
    }

    /// Per source: counts summed over its streams, latency merged.
    pub(super) fn by_source(&self) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        let sources: BTreeSet<Address> = self.receivers.keys().map(|k| k.0).collect();
        for src in sources {
            let streams: Vec<_> = self
                .receivers
                .range((src, Address(0), 0)..=(src, Address(u16::MAX), u16::MAX))
                .collect();
            let (mut received, mut unique, mut duplicated) = (0, 0, 0);
            let (mut reordered, mut late, mut lost_hint) = (0, 0, 0);
            for (k, r) in &streams {
                let c = r.counts();
                received += c.received;
                unique += c.unique();
                duplicated += c.duplicated;
                reordered += c.reordered;
                late += c.late;
                if let Some(s) = self.spans.get(k) {
                    lost_hint += (s.hi - s.lo + 1).saturating_sub(c.unique());
                }
            }
            // Latency of unique probes: exact least and greatest, percentiles
            // from the streams' histograms added up.
            let timed: Vec<_> = streams
                .iter()
                .map(|(_, r)| r)
                .filter(|r| r.latency().count > 0)
                .collect();
            let latency = match timed.split_first() {
                None => json!({"min": 0, "p50": 0, "p99": 0, "max": 0}),
                Some((first, rest)) => {
                    let mut h = first.histogram().clone();
                    for r in rest {
                        let _ = h.add(r.histogram());
                    }
                    json!({
                        "min": timed.iter().map(|r| r.latency().min).min().unwrap_or(0),
                        "p50": h.value_at_quantile(0.5),
                        "p99": h.value_at_quantile(0.99),
                        "max": timed.iter().map(|r| r.latency().max).max().unwrap_or(0),
                    })
                }
            };
            out.insert(
                hex(src),
                json!({
                    "received": received,
                    "unique": unique,
                    "duplicated": duplicated,
                    "reordered": reordered,
                    "late": late,
                    "lost_hint": lost_hint,
                    "streams": streams.len(),
                    "latency_ns": latency,
                }),
            );
        }
        out
    }

    /// Per group (probes to a logical address): counts summed over sources
    /// and streams.
    pub(super) fn by_group(&self) -> BTreeMap<String, Value> {
        let mut out: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
        for ((_, dst, _), r) in &self.receivers {
            if !dst.is_logical() {
                continue;
            }
            let c = r.counts();
            let e = out.entry(hex(*dst)).or_default();
            e.0 += c.received;
            e.1 += c.unique();
            e.2 += c.duplicated;
        }
        out.into_iter()
            .map(|(g, (r, u, d))| (g, json!({"received": r, "unique": u, "duplicated": d})))
            .collect()
    }

    /// EI values of unique probes, over every stream.
    pub(super) fn ei(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for r in self.receivers.values() {
            let (values, other) = r.ei();
            for (v, n) in values {
                *out.entry(format!("{v:#x}")).or_default() += n;
            }
            if other > 0 {
                *out.entry("other".to_string()).or_default() += other;
            }
        }
        out
    }
}

/// What was sent.
#[derive(Debug, Default)]
pub(super) struct TxTraffic {
    /// Probes sent, per destination.
    pub(super) sent: BTreeMap<Address, u64>,
    /// Probes the link refused (or that had nowhere to go).
    pub(super) send_errors: u64,
    /// L3 probes whose redirect named a node of unknown native address
    /// (sent to the default HR instead, which forwards them).
    pub(super) redirect_unresolved: u64,
    /// RRP#6 sent to the default HR to renew a redirect still in use.
    pub(super) redirect_renewals: u64,
}
