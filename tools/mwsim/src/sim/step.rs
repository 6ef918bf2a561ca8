//! The events of one instant handled on several threads, with the result
//! of the sequential run bit for bit (a conservative parallel discrete-event
//! run whose lookahead is the link delay).
//!
//! Nothing sent at time t arrives before t + `delay_ms`, so with a delay of
//! at least 1 ms the events queued at one instant are all known before the
//! first of them is handled, and an event at one member changes no other
//! member's state. The routers and hosts are divided into shards of
//! contiguous indexes, one per thread; each thread handles, in queue order,
//! the events of its own members, and writes down what reaches beyond them
//! as [`Effect`]s marked with the event's place in the queue. The effects
//! are then applied on one thread in that order: sends draw on the seeded
//! generator and are queued exactly as the sequential run draws and queues
//! them. The sequential run (`threads` 1, tracked loops, or no link delay)
//! handles one event at a time, as it always has; the tests compare the two
//! (tests/parallel.rs).

use std::ops::Range;

use rrp::router::Time;

use super::effect::Effect;
use super::member::View;
use super::{Item, Member, Sim, SimHost, SimRouter};

/// Fewer events than this at one instant are handled on the calling
/// thread: starting threads would cost more than it saves.
const PARALLEL_FROM: usize = 64;

/// Routers whose due timers run between two applications of what they
/// wrote: every router advertises at the same instant, and what a whole
/// round's timers write (every RRP#9 of the round, before it is queued)
/// would be held at once beside the queue.
const TIMER_CHUNK: usize = 128;

/// One thread's members: routers and hosts of contiguous indexes.
struct Shard<'a> {
    first_router: usize,
    routers: &'a mut [SimRouter],
    first_host: usize,
    hosts: &'a mut [SimHost],
}

/// What one instant asks of the members.
#[derive(Clone, Copy)]
enum Work<'a> {
    /// Deliveries (every item an [`Item::Deliver`] or [`Item::DeliverEach`]),
    /// with whether each one's sender was up to send it.
    Deliveries {
        items: &'a [Item],
        sender_ok: &'a [bool],
    },
    /// The timers of these routers, due now, in index order.
    Timers { due: &'a [usize] },
}

/// What one thread wrote down: its members' effects, and per event that
/// caused any, where they end.
#[derive(Default)]
struct Written {
    effects: Vec<Effect>,
    /// (the event's place among the instant's events, the end of its
    /// effects in `effects`, its router or `u32::MAX` for a host).
    marks: Vec<(u32, u32, u32)>,
    /// The routers whose engines ran (to reschedule).
    ran: Vec<usize>,
}

impl Written {
    fn mark(&mut self, unit: u32, who: Option<usize>) {
        let end = self.effects.len() as u32;
        let last = self.marks.last().map_or(0, |m| m.1);
        if end > last {
            self.marks
                .push((unit, end, who.map_or(u32::MAX, |r| r as u32)));
        }
    }
}

/// A shard's routers and hosts, by index.
pub(super) type ShardRange = (Range<usize>, Range<usize>);

/// The shards' index ranges: routers balanced by their ports (a router's
/// work grows with its HRs), hosts by count.
pub(super) fn shard_ranges(ports: &[usize], hosts: usize, threads: usize) -> Vec<ShardRange> {
    let threads = threads.max(1);
    let total: usize = ports.iter().sum();
    let mut out = Vec::with_capacity(threads);
    let (mut r0, mut acc) = (0, 0);
    let mut r = 0;
    for s in 0..threads {
        let goal = total * (s + 1) / threads;
        while r < ports.len() && (acc < goal || s + 1 == threads) {
            acc += ports[r];
            r += 1;
        }
        let h0 = hosts * s / threads;
        let h1 = hosts * (s + 1) / threads;
        out.push((r0..r, h0..h1));
        r0 = r;
    }
    out
}

impl Shard<'_> {
    fn router(&mut self, r: usize) -> Option<&mut SimRouter> {
        let i = r.checked_sub(self.first_router)?;
        self.routers.get_mut(i)
    }

    fn host(&mut self, h: usize) -> Option<&mut SimHost> {
        let i = h.checked_sub(self.first_host)?;
        self.hosts.get_mut(i)
    }

    /// Whether member `m` is one of this shard's.
    fn owns(&mut self, m: Member) -> bool {
        match m {
            Member::Router { r, .. } => self.router(r).is_some(),
            Member::Host(h) => self.host(h).is_some(),
        }
    }

    /// Handles this shard's part of `work`.
    fn run(mut self, work: Work<'_>, view: View<'_>) -> Written {
        let mut w = Written::default();
        let mut ran = vec![false; self.routers.len()];
        let mut scratch: Vec<u8> = Vec::new();
        match work {
            Work::Deliveries { items, sender_ok } => {
                let mut unit = 0u32;
                let mut targets = Vec::new();
                for (item, ok) in items.iter().zip(sender_ok) {
                    if !ok {
                        continue;
                    }
                    let (san, from) = item.delivery().expect("only deliveries run on shards");
                    let members = &view.sans[san].members;
                    let from_native = members[from].1;
                    item.recipients(members.len(), &mut targets);
                    for (n, &i) in targets.iter().enumerate() {
                        if self.owns(members[i].0) {
                            item.bytes_for(n, &mut scratch);
                            let who = self.deliver(
                                san,
                                from,
                                &from_native,
                                i,
                                &scratch,
                                view,
                                &mut w,
                                &mut ran,
                            );
                            w.mark(unit, who);
                        }
                        unit += 1;
                    }
                }
            }
            Work::Timers { due } => {
                for (unit, &r) in due.iter().enumerate() {
                    let Some(rt) = self.router(r) else { continue };
                    // A timer due again at once runs again at once, as in
                    // the sequential run (nothing else is queued at this
                    // instant when the link has a delay).
                    loop {
                        rt.timer(view, &mut w.effects);
                        if rt.engine.next_timer() > view.now {
                            break;
                        }
                    }
                    ran[r - self.first_router] = true;
                    w.mark(unit as u32, Some(r));
                }
            }
        }
        w.ran = ran
            .iter()
            .enumerate()
            .filter(|(_, x)| **x)
            .map(|(i, _)| self.first_router + i)
            .collect();
        w
    }

    /// Member `to` of SAN `san`, one of this shard's, receives `bytes`
    /// from member `from`. Returns the router it is (None: a host).
    #[allow(clippy::too_many_arguments)]
    fn deliver(
        &mut self,
        san: usize,
        from: usize,
        from_native: &rrp::NativeAddr,
        to: usize,
        bytes: &[u8],
        view: View<'_>,
        w: &mut Written,
        ran: &mut [bool],
    ) -> Option<usize> {
        match view.sans[san].members[to].0 {
            Member::Router { r, port } => {
                let first = self.first_router;
                let rt = self.router(r).expect("owned");
                if rt.receive(port, from_native, bytes, view, &mut w.effects) {
                    ran[r - first] = true;
                }
                Some(r)
            }
            Member::Host(h) => {
                let host = self.host(h).expect("owned");
                host.receive(h, san, from, bytes, view, &mut w.effects);
                None
            }
        }
    }
}

impl Sim {
    /// Whether the events of one instant may be handled on several threads.
    pub(super) fn steps_in_parallel(&self) -> bool {
        self.cfg.threads > 1 && !self.cfg.track_loops && self.cfg.delay_ms >= 1
    }

    /// Handles everything queued at `self.now`: runs of deliveries on the
    /// shards, anything else (crashes, link changes, forged packets) on its
    /// own, in queue order.
    pub(super) fn step_queue(&mut self, items: Vec<Item>) {
        let is_delivery = |i: &Item| matches!(i, Item::Deliver { .. } | Item::DeliverEach { .. });
        let mut i = 0;
        while i < items.len() {
            let run = items[i..].iter().take_while(|x| is_delivery(x)).count();
            if run == 0 {
                self.handle(items[i].clone());
                i += 1;
            } else {
                self.deliver_run(&items[i..i + run]);
                i += run;
            }
        }
    }

    /// Handles the timers due at `t` of every router.
    pub(super) fn step_timers(&mut self, t: Time) {
        let mut due = Vec::new();
        while let Some(std::cmp::Reverse((at, r))) = self.timers.peek().copied() {
            if at != t {
                break;
            }
            self.timers.pop();
            if self.scheduled[r] != t || !self.routers[r].alive || due.last() == Some(&r) {
                continue;
            }
            self.scheduled[r] = Time::MAX;
            due.push(r);
        }
        for chunk in due.chunks(TIMER_CHUNK) {
            // The chunk's routers divided among the threads by count, each
            // thread's a contiguous range of indexes.
            let threads = self.shards.len();
            let mut at = chunk[0];
            let ranges: Vec<_> = (0..threads)
                .map(|i| {
                    let part = &chunk[chunk.len() * i / threads..chunk.len() * (i + 1) / threads];
                    let start = part.first().copied().unwrap_or(at);
                    let end = part.last().map_or(start, |r| r + 1);
                    at = end;
                    (start..end, 0..0)
                })
                .collect();
            let written = self.on_shards(Work::Timers { due: chunk }, chunk.len(), &ranges);
            self.apply_written(written);
        }
    }

    /// Deliveries, each item's recipients in order.
    fn deliver_run(&mut self, items: &[Item]) {
        let sender_ok: Vec<bool> = items.iter().map(|i| self.sender_ok(i)).collect();
        let mut targets = Vec::new();
        let counts: Vec<u32> = items
            .iter()
            .zip(&sender_ok)
            .map(|(i, ok)| match i.delivery() {
                Some((san, _)) if *ok => {
                    i.recipients(self.sans[san].members.len(), &mut targets);
                    targets.len() as u32
                }
                _ => 0,
            })
            .collect();
        let units = counts.iter().map(|c| *c as usize).sum();
        let shards = self.shards.clone();
        let written = self.on_shards(
            Work::Deliveries {
                items,
                sender_ok: &sender_ok,
            },
            units,
            &shards,
        );
        // Per item, in order: what the sequential run does before its
        // recipients (a lost message counted, the trace), then their effects.
        let mut cursor = Cursor::new(written);
        let mut unit = 0u32;
        for ((item, n), ok) in items.iter().zip(&counts).zip(&sender_ok) {
            if !ok {
                self.stats.lost += item.handovers();
                continue;
            }
            if self.cfg.trace {
                self.trace_item(item);
            }
            unit += n;
            cursor.apply_before(self, unit);
        }
        cursor.apply_before(self, u32::MAX);
        cursor.reschedule(self);
    }

    /// Whether the sender of a delivery was up to send it.
    fn sender_ok(&self, item: &Item) -> bool {
        item.delivery()
            .is_none_or(|(san, from)| self.sender_up(san, from))
    }

    /// Records a delivery in the trace, as the sequential run does (a
    /// message to several members at once once per member).
    fn trace_item(&mut self, item: &Item) {
        match item {
            Item::Deliver { san, from, to, msg } => {
                self.trace_delivery(*san, *from, *to, msg.to_vec())
            }
            Item::DeliverEach {
                san,
                from,
                payload,
                to,
            } => {
                for (i, dst) in to {
                    let b = payload.to_vec(Some(*dst));
                    self.trace_delivery(*san, *from, Some(*i as usize), b);
                }
            }
            _ => {}
        }
    }

    /// Runs `work` on every shard: on threads when there is enough of it
    /// and more than one thread, else on this one.
    fn on_shards(&mut self, work: Work<'_>, units: usize, ranges: &[ShardRange]) -> Vec<Written> {
        let started = std::time::Instant::now();
        let written = self.on_shards_now(work, units, ranges);
        self.on_shards_wall += started.elapsed();
        written
    }

    fn on_shards_now(
        &mut self,
        work: Work<'_>,
        units: usize,
        ranges: &[ShardRange],
    ) -> Vec<Written> {
        let view = View {
            now: self.now,
            sans: &self.sans,
            interner: &self.interner,
        };
        if units < PARALLEL_FROM || ranges.len() < 2 {
            let all = Shard {
                first_router: 0,
                routers: &mut self.routers,
                first_host: 0,
                hosts: &mut self.hosts,
            };
            return vec![all.run(work, view)];
        }
        self.steps_on_threads += 1;
        let mut shards = Vec::with_capacity(ranges.len());
        let (mut routers, mut hosts) = (&mut self.routers[..], &mut self.hosts[..]);
        // Where `routers` and `hosts` start (ranges are in order, may
        // leave gaps).
        let (mut r_at, mut h_at) = (0, 0);
        for (rr, hr) in ranges {
            let rest_r = std::mem::take(&mut routers).split_at_mut(rr.start - r_at).1;
            let rest_h = std::mem::take(&mut hosts).split_at_mut(hr.start - h_at).1;
            let (mine_r, rest_r) = rest_r.split_at_mut(rr.len());
            let (mine_h, rest_h) = rest_h.split_at_mut(hr.len());
            (r_at, h_at) = (rr.end, hr.end);
            routers = rest_r;
            hosts = rest_h;
            shards.push(Shard {
                first_router: rr.start,
                routers: mine_r,
                first_host: hr.start,
                hosts: mine_h,
            });
        }
        std::thread::scope(|s| {
            let mut shards = shards.into_iter();
            let first = shards.next().expect("two shards or more");
            let others: Vec<_> = shards
                .map(|sh| s.spawn(move || sh.run(work, view)))
                .collect();
            let mut out = vec![first.run(work, view)];
            out.extend(
                others
                    .into_iter()
                    .map(|h| h.join().expect("a shard's thread does not panic")),
            );
            out
        })
    }

    /// Applies what the shards wrote, in the order of the events that
    /// caused it, then reschedules the routers whose engines ran.
    fn apply_written(&mut self, written: Vec<Written>) {
        let mut cursor = Cursor::new(written);
        cursor.apply_before(self, u32::MAX);
        cursor.reschedule(self);
    }
}

/// The shards' effects merged in event order.
struct Cursor {
    written: Vec<Written>,
    /// Per shard: the next mark, and where its effects start.
    next: Vec<(usize, usize)>,
}

impl Cursor {
    fn new(written: Vec<Written>) -> Cursor {
        let next = vec![(0, 0); written.len()];
        Cursor { written, next }
    }

    /// Applies, in event order, the effects of every event before `unit`.
    fn apply_before(&mut self, sim: &mut Sim, unit: u32) {
        loop {
            let mut best: Option<(usize, u32)> = None;
            for (s, w) in self.written.iter().enumerate() {
                if let Some(m) = w.marks.get(self.next[s].0)
                    && m.0 < unit
                    && best.is_none_or(|(_, u)| m.0 < u)
                {
                    best = Some((s, m.0));
                }
            }
            let Some((s, _)) = best else { return };
            let (mi, start) = self.next[s];
            let (_, end, who) = self.written[s].marks[mi];
            let r = (who != u32::MAX).then_some(who as usize);
            for i in start..end as usize {
                let e = std::mem::replace(&mut self.written[s].effects[i], Effect::Applied);
                sim.apply(r, e);
            }
            self.next[s] = (mi + 1, end as usize);
        }
    }

    /// Reschedules every router whose engine ran.
    fn reschedule(&self, sim: &mut Sim) {
        for w in &self.written {
            for &r in &w.ran {
                sim.reschedule(r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_member_once_with_the_ports_balanced() {
        let ports: Vec<usize> = (0..101).map(|i| 2 + i % 3).collect();
        let total: usize = ports.iter().sum();
        for threads in 1..=5 {
            let shards = shard_ranges(&ports, 37, threads);
            assert_eq!(shards.len(), threads);
            // Contiguous, in order, every router and host in exactly one.
            let (mut r, mut h) = (0, 0);
            for (rr, hr) in &shards {
                assert_eq!((rr.start, hr.start), (r, h));
                (r, h) = (rr.end, hr.end);
                // Each shard's ports within one router's of an equal share.
                let mine: usize = ports[rr.clone()].iter().sum();
                assert!(
                    mine.abs_diff(total / threads) <= 4,
                    "{threads}: {mine} of {total}"
                );
            }
            assert_eq!((r, h), (ports.len(), 37));
        }
        // More threads than routers: the last shards are empty, none lost.
        let shards = shard_ranges(&[3, 3], 1, 4);
        assert_eq!(shards.iter().map(|(r, _)| r.len()).sum::<usize>(), 2);
        assert_eq!(shards.iter().map(|(_, h)| h.len()).sum::<usize>(), 1);
    }
}
