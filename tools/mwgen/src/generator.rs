//! The generator: a sans-clock engine over one transmit port and one receive
//! port (or one port for both), driven by [`Generator::poll`] with the time.
//!
//! Each poll transmits at most one burst (as many packets as the pacer
//! allows) and receives at most one burst per port. A packet is a copy of
//! the next template of the cycle with the probe's sequence number and the
//! poll's time patched in (one clock read per poll, so the transmit time of
//! a packet is when its burst was built). Packets the port refuses (a full
//! ring) are counted in `refused`, not in `sent`; their sequence numbers are
//! used again by the next packets, so that the receiver sees no gap for them.
//!
//! Tests drive it with a test clock (ports::clock::TestClock) shared with
//! the impairment layer; crate::run drives it with the machine's clock.

use ports::{BURST, Burst, PacketBuf, Port};
use rrp::{LinkKind, NativeAddr};
use serde::Serialize;

use crate::cycle::Cycle;
use crate::probe;
use crate::profile::{Template, link_overhead};
use crate::rate::Pacer;
use crate::receiver::Receiver;

/// Counts of the sending side.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TxCounts {
    /// Packets the pacer let through (sent + refused + no buffer).
    pub attempted: u64,
    /// Packets the port accepted.
    pub sent: u64,
    /// Probes among them (a replayed capture may hold other packets).
    pub probes: u64,
    /// Frame bytes the port accepted.
    pub bytes: u64,
    /// Packets the port refused (a full transmit ring): never on the wire.
    pub refused: u64,
    /// Packets not built because the port had no free buffer.
    pub no_buffer: u64,
}

/// Why a generator cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenError {
    /// The templates are empty.
    #[error("nothing to send")]
    Empty,
    /// The port cannot address `to`.
    #[error("the transmit port ({kind:?}) cannot send to {to}: {why}")]
    Encap {
        /// The port's link kind.
        kind: LinkKind,
        /// The next hop.
        to: NativeAddr,
        /// Why.
        why: &'static str,
    },
}

/// The generator over ports of type `P`.
pub struct Generator<P: Port> {
    tx: P,
    rx: Option<P>,
    to: NativeAddr,
    templates: Vec<Template>,
    /// The templates as copied into buffers (link header in front where
    /// the port allows).
    cycle: Cycle,
    /// Every how many probes one is timed (a power of two).
    latency_every: u64,
    /// The streams its receiver follows, as (offset of the first from this
    /// generator's own tag, count): a run on several cores
    /// ([`Generator::follow_streams`]); `(0, 1)`: its own only.
    streams: (u16, u16),
    next: usize,
    /// The next probe's sequence number (64 bits; probes carry the low 32,
    /// crate::probe).
    seq: u64,
    pacer: Pacer,
    limit: Option<u64>,
    txq: Burst<P::Buf>,
    rxq: Burst<P::Buf>,
    counts: TxCounts,
    receiver: Receiver,
}

impl<P: Port> Generator<P> {
    /// A generator sending `templates` (stream `tag`) on `tx` to native
    /// address `to` (the router's HR on the transmit SAN; empty: every member
    /// of the SAN) and receiving on `rx` (`None`: on `tx`).
    pub fn new(
        mut tx: P,
        rx: Option<P>,
        to: NativeAddr,
        templates: Vec<Template>,
        tag: u16,
    ) -> Result<Generator<P>, GenError> {
        let first = templates.first().ok_or(GenError::Empty)?;
        // Try the encapsulation once, so that a wrong address is an error
        // now and not a silent count later.
        if let Some(mut b) = tx.alloc() {
            let ok = b.append(first.bytes.len()).is_some() && tx.encap(&mut b, &to);
            tx.recycle(b);
            if !ok {
                return Err(GenError::Encap {
                    kind: tx.link_kind(),
                    to,
                    why: "not an address of this SAN's kind, or no room for the frame",
                });
            }
        }
        let rx_kind = rx.as_ref().unwrap_or(&tx).link_kind();
        let (hdr, min) = link_overhead(rx_kind);
        let cycle = Cycle::new(&templates, tx.link_header(&to).as_ref());
        let mut g = Generator {
            tx,
            rx,
            to,
            cycle,
            latency_every: 1,
            streams: (0, 1),
            templates,
            next: 0,
            seq: 0,
            pacer: Pacer::new(Some(0.0), 0),
            limit: Some(0),
            txq: Burst::new(),
            rxq: Burst::new(),
            counts: TxCounts::default(),
            receiver: Receiver::new(tag, hdr, min),
        };
        g.set_tag(tag);
        Ok(g)
    }

    fn set_tag(&mut self, tag: u16) {
        for t in &mut self.templates {
            if let Some(h) = t.hdr {
                probe::set_tag(&mut t.bytes, h, tag);
            }
        }
        self.cycle = Cycle::new(&self.templates, self.tx.link_header(&self.to).as_ref());
    }

    /// Starts a new stream `tag` at time `now_ns`: counters cleared, numbers
    /// from 0, `pps` packets per second (`None`: as fast as the port takes
    /// them), `limit` packets in all (`None`: until stopped). Packets of an
    /// earlier stream still in flight count as foreign.
    pub fn start(&mut self, now_ns: u64, pps: Option<f64>, limit: Option<u64>, tag: u16) {
        self.set_tag(tag);
        let (back, n) = self.streams;
        self.receiver.reset_streams(tag.wrapping_sub(back), n);
        self.counts = TxCounts::default();
        self.seq = 0;
        self.next = 0;
        self.pacer = Pacer::new(pps, now_ns);
        self.limit = limit;
    }

    /// Makes the receiver follow, from the next [`Generator::start`], the
    /// `n` streams whose tags start `back` below the one it is started with
    /// (core `i` of `n` sends stream `first + i`: `back` = `i`). Packets of
    /// each core's stream may reach any core's receive queue; every core
    /// accounts what it receives, and the run's report merges them
    /// ([`crate::cores`]).
    pub fn follow_streams(&mut self, back: u16, n: u16) {
        self.streams = (back, n.max(1));
    }

    /// Times one probe in `every` (a power of two; 1, the default: every
    /// probe): those whose sequence number is a multiple of it carry their
    /// transmit time, the others only their number (docs/mwgen.md "The
    /// probe"). Returns false, changing nothing, when `every` is not a
    /// power of two.
    pub fn set_latency_every(&mut self, every: u64) -> bool {
        if !every.is_power_of_two() {
            return false;
        }
        self.latency_every = every;
        true
    }

    /// Stops transmitting (receiving goes on).
    pub fn stop(&mut self) {
        self.limit = Some(self.counts.attempted);
    }

    /// Whether everything asked for has been attempted.
    pub fn tx_done(&self) -> bool {
        self.limit.is_some_and(|l| self.counts.attempted >= l)
    }

    /// One transmit burst at `now_ns`; returns the packets sent. Each
    /// packet is one copy of its frame ([`Cycle`]) with the probe's number
    /// and time written in (and the port's encapsulation where the frame
    /// has no link header); the counts of what went out come from the
    /// cycle's running sums.
    #[inline]
    pub fn poll_tx(&mut self, now_ns: u64) -> usize {
        let mut n = self.pacer.allowance(now_ns, self.counts.attempted, BURST);
        if let Some(l) = self.limit {
            n = n.min(l.saturating_sub(self.counts.attempted) as usize);
        }
        if n == 0 {
            return 0;
        }
        let first = self.next;
        let seq0 = self.seq;
        let got = self.tx.alloc_burst(&mut self.txq, n);
        // The loop for a cycle with long probes, copied as head and tail,
        // or the one that copies every frame whole (chosen per burst).
        let built = if self.cycle.any_sparse() {
            self.build::<true>(now_ns, first, seq0)
        } else {
            self.build::<false>(now_ns, first, seq0)
        };
        if built < got {
            // A buffer too small for its frame, or no room for the link
            // header: drop it and the rest (counted as no buffer below).
            let mut rest: Burst<P::Buf> = self.txq.drain(built..).collect();
            self.tx.recycle_burst(&mut rest);
        }
        self.counts.attempted += n as u64;
        self.counts.no_buffer += (n - built) as u64;
        let sent = self.tx.tx_burst(&mut self.txq);
        // Count what went out; the next packets take the templates and
        // sequence numbers of what did not.
        let (bytes, probes) = self.cycle.count(first, sent);
        self.counts.bytes += bytes;
        self.counts.probes += probes;
        self.counts.sent += sent as u64;
        self.next = self.cycle.after(first, sent);
        self.seq = seq0.wrapping_add(probes);
        if sent < built {
            self.counts.refused += (built - sent) as u64;
            self.tx.recycle_burst(&mut self.txq);
        }
        sent
    }

    /// Fills the buffers of `txq` with the frames from template `first` on,
    /// probes numbered from `seq0` and stamped `now_ns`; returns how many
    /// it filled (all but when a buffer has no room).
    #[inline(always)]
    fn build<const SPARSE: bool>(&mut self, now_ns: u64, first: usize, seq0: u64) -> usize {
        let frames = self.cycle.frames();
        let encap_each = self.cycle.encap_each();
        let timed_mask = self.latency_every - 1;
        let (mut next, mut seq) = (first, seq0);
        for (i, b) in self.txq.iter_mut().enumerate() {
            let f = &frames[next];
            let Some(room) = b.append(f.bytes.len()) else {
                return i;
            };
            if SPARSE && f.sparse {
                let back = f.bytes.len() - f.tail;
                room[..f.head].copy_from_slice(&f.bytes[..f.head]);
                room[back..].copy_from_slice(&f.bytes[back..]);
            } else {
                room.copy_from_slice(&f.bytes);
            }
            if let Some(at) = f.probe_at {
                if seq & timed_mask == 0 {
                    probe::patch(room, at, seq, now_ns);
                } else {
                    probe::patch_untimed(room, at, seq);
                }
                seq = seq.wrapping_add(1);
            }
            if encap_each && !self.tx.encap(b, &self.to) {
                return i;
            }
            next += 1;
            if next == frames.len() {
                next = 0;
            }
        }
        self.txq.len()
    }

    /// One receive burst per receive port at `now_ns`; returns the packets
    /// received.
    #[inline]
    pub fn poll_rx(&mut self, now_ns: u64) -> usize {
        let port = self.rx.as_mut().unwrap_or(&mut self.tx);
        port.rx_burst(&mut self.rxq);
        let n = self.rxq.len();
        for b in &self.rxq {
            self.receiver.on_packet(b.data(), b.rx_error(), now_ns);
        }
        port.recycle_burst(&mut self.rxq);
        n
    }

    /// One transmit burst, then one receive burst; returns (sent, received).
    #[inline]
    pub fn poll(&mut self, now_ns: u64) -> (usize, usize) {
        let s = self.poll_tx(now_ns);
        (s, self.poll_rx(now_ns))
    }

    /// Nanoseconds until the pacer lets the next packet go.
    pub fn wait_ns(&self, now_ns: u64) -> u64 {
        self.pacer.wait_ns(now_ns, self.counts.attempted)
    }

    /// The sending side's counts.
    pub fn tx_counts(&self) -> &TxCounts {
        &self.counts
    }

    /// The receiving side.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    /// The templates of the cycle.
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// Probes sent and not (yet) received once; `u64::MAX` (unknown) when
    /// it follows several streams, whose probes other cores' receivers may
    /// hold: a run's drain then lasts its whole time.
    pub fn outstanding(&self) -> u64 {
        if self.receiver.streams() > 1 {
            return u64::MAX;
        }
        self.counts
            .probes
            .saturating_sub(self.receiver.counts().unique())
    }

    /// The ports, for their own statistics.
    pub fn ports(&self) -> (&P, Option<&P>) {
        (&self.tx, self.rx.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Profile, Sizes};
    use ports::memory::mem_link;

    fn link() -> (ports::memory::MemPort, ports::memory::MemPort) {
        mem_link(
            64,
            NativeAddr::mac([2, 0, 0, 0, 0, 1]),
            NativeAddr::mac([2, 0, 0, 0, 0, 2]),
        )
    }

    #[test]
    fn sends_count_and_receives_in_order() {
        let (a, b) = link();
        let t = Profile::default().build(LinkKind::Memory, 1).unwrap();
        let mut g = Generator::new(a, Some(b), NativeAddr::NONE, t, 1).unwrap();
        g.start(0, None, Some(100), 1);
        let mut now = 0;
        while !g.tx_done() || g.outstanding() > 0 {
            now += 1000;
            g.poll(now);
        }
        let c = g.receiver().counts();
        assert_eq!(g.tx_counts().sent, 100);
        assert_eq!(g.tx_counts().bytes, 6400);
        assert_eq!((c.received, c.duplicated, c.reordered), (100, 0, 0));
        assert_eq!(g.receiver().latency().max, 0);
    }

    #[test]
    fn refused_packets_reuse_their_numbers() {
        // A 64-packet wire and nobody receiving: the first 64 go, the rest
        // are refused; once drained, the next packets follow without a gap.
        let (a, mut b) = link();
        let t = Profile {
            sizes: Sizes::List(vec![64, 100, 200]),
            ..Profile::default()
        }
        .build(LinkKind::Memory, 1)
        .unwrap();
        let mut g = Generator::new(a, None, NativeAddr::NONE, t, 1).unwrap();
        g.start(0, None, Some(200), 1);
        for _ in 0..4 {
            g.poll_tx(0);
        }
        assert_eq!(g.tx_counts().sent, 64);
        assert_eq!(g.tx_counts().refused, 64);
        let mut seqs = Vec::new();
        let mut sizes = Vec::new();
        let rx = |b: &mut ports::memory::MemPort, seqs: &mut Vec<u64>, sizes: &mut Vec<usize>| {
            while let Some(p) = b.recv_bytes() {
                match probe::read(&p) {
                    probe::Received::Probe(pr) => seqs.push(u64::from(pr.seq32)),
                    r => panic!("{r:?}"),
                }
                sizes.push(p.len());
            }
        };
        rx(&mut b, &mut seqs, &mut sizes);
        g.poll_tx(0);
        rx(&mut b, &mut seqs, &mut sizes);
        assert_eq!(seqs, (0..96).collect::<Vec<_>>());
        let want: Vec<usize> = (0..96).map(|i| [64, 100, 200][i % 3]).collect();
        assert_eq!(sizes, want);
    }

    #[test]
    fn one_probe_in_n_is_timed() {
        let (a, b) = link();
        let t = Profile::default().build(LinkKind::Memory, 1).unwrap();
        let mut g = Generator::new(a, Some(b), NativeAddr::NONE, t, 1).unwrap();
        assert!(!g.set_latency_every(3));
        assert!(g.set_latency_every(4));
        g.start(0, None, Some(100), 1);
        let mut now = 0;
        while !g.tx_done() || g.outstanding() > 0 {
            now += 1000;
            g.poll(now);
        }
        assert_eq!(g.receiver().counts().unique(), 100);
        assert_eq!(g.receiver().latency().count, 25);
    }

    #[test]
    fn pacing_spreads_packets() {
        let (a, b) = link();
        let t = Profile::default().build(LinkKind::Memory, 1).unwrap();
        let mut g = Generator::new(a, Some(b), NativeAddr::NONE, t, 1).unwrap();
        g.start(0, Some(1e6), None, 1); // one per µs
        for us in 0..=1000u64 {
            g.poll(us * 1000);
        }
        assert_eq!(g.tx_counts().sent, 1001);
        assert_eq!(g.receiver().counts().received, 1001);
    }

    #[test]
    fn a_wrong_next_hop_is_an_error() {
        let (a, b) = link();
        let t = Profile::default().build(LinkKind::Memory, 1).unwrap();
        let to: NativeAddr = "[::1]:5".parse().unwrap();
        assert!(matches!(
            Generator::new(a, Some(b), to, t, 1),
            Err(GenError::Encap { .. })
        ));
    }

    #[test]
    fn numbers_cross_2_to_the_32_without_a_gap() {
        // Probes carry 32 bits of the number: a stream running past 2^32
        // is received whole, in order, no copies.
        let (a, b) = link();
        let t = Profile::default().build(LinkKind::Memory, 1).unwrap();
        let mut g = Generator::new(a, Some(b), NativeAddr::NONE, t, 1).unwrap();
        g.start(0, None, Some(300), 1);
        g.seq = (1 << 32) - 150;
        let mut now = 0;
        while !g.tx_done() || g.outstanding() > 0 {
            now += 1000;
            g.poll(now);
        }
        assert_eq!(g.seq, (1 << 32) + 150);
        let c = g.receiver().counts();
        assert_eq!(
            (c.received, c.duplicated, c.reordered, c.late),
            (300, 0, 0, 0)
        );
        assert_eq!(g.outstanding(), 0);
    }

    #[test]
    fn every_packet_sent_keeps_the_partition_mark() {
        // Free is the partition's: patching the number and time, timed or
        // not, leaves it as the profile wrote it.
        let (a, mut b) = link();
        let t = Profile {
            sizes: Sizes::List(vec![64, 300]),
            partition: Some(rrp::PartitionMark::new(0x0010, true)),
            ..Profile::default()
        }
        .build(LinkKind::Memory, 1)
        .unwrap();
        let mut g = Generator::new(a, None, NativeAddr::NONE, t, 1).unwrap();
        assert!(g.set_latency_every(4));
        g.start(0, None, Some(40), 1);
        for _ in 0..4 {
            g.poll_tx(1 << 32);
        }
        let mut n = 0;
        while let Some(p) = b.recv_bytes() {
            assert_eq!(rrp::wire::Header::new_unchecked(&p[..]).free(), 0x8010);
            match probe::read(&p) {
                probe::Received::Probe(pr) => {
                    assert_eq!(u64::from(pr.seq32), n);
                    assert_eq!(pr.tx_ns32.is_some(), n % 4 == 0, "{n}");
                }
                r => panic!("{r:?}"),
            }
            n += 1;
        }
        assert_eq!(n, 40);
    }
}
