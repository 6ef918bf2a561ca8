//! The election (docs/manager.md): discovery rounds of SMInfo probes, a
//! standby's polls of its master, handover, and the controls other
//! managers send; the transitions between the states they lead to.

use rrp::Address;

use crate::attr::{NodeDescription, NodeInfo, SmInfo};
use crate::client::{Answer, Failure};
use crate::wire::{Method, Status};

use super::{Control, Manager, ManagerEvent, Purpose, SmState, Time, outranks};

/// A manager another one answered as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Its state.
    pub state: SmState,
    /// Its priority.
    pub priority: u8,
    /// Its identity.
    pub identity: u64,
    /// When it last answered.
    pub seen: Time,
    /// Whether it knows the SAN's SM key (its SMInfo showed this manager's
    /// key when asked with it; always, when the SAN has none).
    pub trusted: bool,
}

impl Peer {
    fn rank(&self) -> (u8, u64) {
        (self.priority, self.identity)
    }
}

impl Manager {
    /// SMInfo as this manager answers a Get: the SM key only to a
    /// requester that gave it.
    pub fn sm_info(&self, asked_key: u64) -> SmInfo {
        SmInfo {
            identity: self.cfg.identity,
            sm_key: if self.cfg.sm_key == 0 || asked_key == self.cfg.sm_key {
                self.cfg.sm_key
            } else {
                0
            },
            act_count: self.act_count,
            priority: self.cfg.priority,
            sm_state: self.state as u8,
        }
    }

    /// An SMInfo Set from manager `from`: a control (the modifier) with the
    /// requester's SMInfo. Answers this manager's SMInfo, or a status.
    pub fn on_control(
        &mut self,
        now: Time,
        from: Address,
        modifier: u32,
        info: &SmInfo,
    ) -> Result<SmInfo, Status> {
        let Some(control) = Control::from_modifier(modifier) else {
            return Err(Status::INVALID_VALUE);
        };
        if self.cfg.sm_key != 0 && info.sm_key != self.cfg.sm_key {
            return Err(self.refuse(from, control, "no SM key"));
        }
        match control {
            Control::Handover => match self.state {
                SmState::Standby | SmState::Discovering => {
                    self.stats.handovers_taken += 1;
                    self.become_master(now, format!("HANDOVER from {from}"));
                }
                SmState::Master => {}
                SmState::NotActive => return Err(self.refuse(from, control, "not active")),
            },
            Control::Acknowledge => {}
            Control::Disable => {
                self.set_state(now, SmState::NotActive, format!("DISABLE from {from}"))
            }
            Control::Standby => {
                if self.state == SmState::Master {
                    self.master = Some(from);
                    self.missed = 0;
                    self.set_state(now, SmState::Standby, format!("STANDBY from {from}"));
                }
            }
            Control::Discover => {
                if self.state == SmState::NotActive {
                    self.start_discovery(now, format!("DISCOVER from {from}"));
                }
            }
        }
        Ok(self.sm_info(info.sm_key))
    }

    pub(super) fn refuse(&mut self, from: Address, control: Control, why: &'static str) -> Status {
        self.stats.controls_refused += 1;
        self.event(ManagerEvent::ControlRefused { from, control, why });
        Status::INVALID_VALUE
    }

    /// When [`Manager::on_timer`] wants to run.
    pub fn next_timer(&self) -> Time {
        match self.state {
            SmState::NotActive => Time::MAX,
            // A round still out waits for its answers.
            _ if self.out_in_round > 0 => Time::MAX,
            _ => self.next_at,
        }
    }

    /// Timers: discovery rounds, polls, sweeps.
    pub fn on_timer(&mut self, now: Time) {
        if now < self.next_timer() {
            return;
        }
        match self.state {
            SmState::NotActive => {}
            SmState::Discovering | SmState::Master => self.probe_round(now),
            SmState::Standby => self.poll(now),
        }
    }

    /// A probe's answer (discovery round or sweep): the peer it shows, the
    /// member's liveness in the database, the round's end.
    pub(super) fn on_probe(
        &mut self,
        now: Time,
        member: Address,
        round: u64,
        info: Option<SmInfo>,
        result: &Result<Answer, Failure>,
    ) {
        if let Some(i) = &info
            && let Some(state) = SmState::from_code(i.sm_state)
        {
            let trusted = self.cfg.sm_key == 0 || i.sm_key == self.cfg.sm_key;
            self.peers.insert(
                member,
                Peer {
                    state,
                    priority: i.priority,
                    identity: i.identity,
                    seen: now,
                    trusted,
                },
            );
        } else if result.is_ok() {
            // It answered, but runs no manager.
            self.peers.remove(&member);
        }
        if self.state == SmState::Master {
            match (&result, self.database.get_mut(&member)) {
                (Ok(_), Some(m)) => {
                    m.seen = now;
                    m.manager = info.as_ref().and_then(|i| SmState::from_code(i.sm_state));
                }
                // Gone from the SAN: out of the database.
                (Err(_), Some(_)) => {
                    self.database.remove(&member);
                }
                _ => {}
            }
        }
        if round == self.round {
            self.out_in_round = self.out_in_round.saturating_sub(1);
            if self.out_in_round == 0 {
                self.round_done(now);
            }
        }
    }

    /// A standby's poll of its master answered (or not): the master's state,
    /// the database copied when it is master, rediscovery after missed polls.
    pub(super) fn on_poll(&mut self, now: Time, master: Address, info: Option<SmInfo>) {
        if self.state != SmState::Standby || self.master != Some(master) {
            return;
        }
        match info.and_then(|i| SmState::from_code(i.sm_state).map(|s| (i, s))) {
            Some((i, s)) => {
                self.missed = 0;
                let trusted = self.cfg.sm_key == 0 || i.sm_key == self.cfg.sm_key;
                self.peers.insert(
                    master,
                    Peer {
                        state: s,
                        priority: i.priority,
                        identity: i.identity,
                        seen: now,
                        trusted,
                    },
                );
                let syncing = self.pending.values().any(|p| {
                    matches!(
                        p,
                        Purpose::Sync { .. }
                            | Purpose::SyncGroup { .. }
                            | Purpose::SyncMember { .. }
                            | Purpose::SyncPartitions { .. }
                            | Purpose::SyncInform { .. }
                    )
                });
                if s == SmState::Master && !syncing {
                    self.sync_from(master, 0);
                    self.sync_groups(master, 0);
                    self.sync_informs(master, 0);
                    self.sync_partitions(master, 0);
                }
                if !matches!(s, SmState::Master | SmState::Discovering) {
                    self.start_discovery(now, format!("{master} polled is {s}, not master"));
                }
            }
            None => {
                self.missed += 1;
                self.stats.polls_missed += 1;
                if self.missed >= self.cfg.timers.poll_misses {
                    self.peers.remove(&master);
                    self.start_discovery(
                        now,
                        format!("master {master} missed {} polls", self.missed),
                    );
                }
            }
        }
    }

    /// The answer to HANDOVER: the acknowledgement, or rediscovery.
    pub(super) fn on_handover(&mut self, now: Time, to: Address, info: Option<SmInfo>) {
        if info.is_some() {
            // The acknowledgement: stay standby under the new master.
            self.master = Some(to);
            self.missed = 0;
            self.next_at = now + self.cfg.timers.poll_ms;
        } else {
            self.start_discovery(now, format!("HANDOVER to {to} not acknowledged"));
        }
    }

    pub(super) fn probe_round(&mut self, now: Time) {
        self.round += 1;
        if self.state == SmState::Master {
            self.stats.sweeps += 1;
            self.act_count = self.act_count.wrapping_add(1);
        } else {
            self.stats.rounds += 1;
        }
        let members = self.members.clone();
        self.out_in_round = members.len();
        let heavy = self.state == SmState::Master
            && (self.heavy
                || self
                    .stats
                    .sweeps
                    .saturating_sub(1)
                    .is_multiple_of(self.cfg.timers.heavy_every.max(1)));
        if heavy {
            self.stats.heavy_sweeps += 1;
            self.heavy = false;
        }
        if self.state == SmState::Master {
            self.mc_prune(now);
        }
        // Members gone from the node's list are gone from the database.
        // (`members` is sorted: set_members.)
        self.database
            .retain(|a, _| members.binary_search(a).is_ok());
        self.tables.retain(|a, _| members.binary_search(a).is_ok());
        for m in members {
            self.request(
                m,
                Method::GET,
                0,
                Purpose::Probe {
                    member: m,
                    round: self.round,
                },
            );
            if self.state == SmState::Master && (heavy || !self.database.contains_key(&m)) {
                self.get(m, NodeInfo::ID, Purpose::NodeInfo { member: m });
                self.get(m, NodeDescription::ID, Purpose::Description { member: m });
            }
            // A table not taken yet (a failed Set, new partitions).
            self.give_table(m);
        }
        // The members' tables at the routers: new members, members gone,
        // failed Sets.
        self.give_router_tables_all();
        if self.out_in_round == 0 {
            self.round_done(now);
        }
    }

    /// A round's probes are all answered or given up.
    pub(super) fn round_done(&mut self, now: Time) {
        let me = (self.cfg.priority, self.cfg.identity);
        // Peers that did not answer this round are gone.
        let seen_by = now.saturating_sub(self.round_span());
        self.peers.retain(|_, p| p.seen >= seen_by);
        // Masters that do not know the SM key are not followed: a rogue
        // manager neither makes this one standby nor takes a handover.
        let best_master = self
            .peers
            .iter()
            .filter(|(_, p)| p.state == SmState::Master && p.trusted)
            .max_by(|a, b| rank_order(a.1, b.1))
            .map(|(a, p)| (*a, *p));
        let best_other = self
            .peers
            .iter()
            .filter(|(_, p)| matches!(p.state, SmState::Discovering | SmState::Standby))
            .filter(|(_, p)| p.trusted)
            .max_by(|a, b| rank_order(a.1, b.1))
            .map(|(a, p)| (*a, *p));
        match self.state {
            SmState::Discovering => {
                if let Some((a, _)) = best_master {
                    self.follow(now, a, format!("found master {a}"));
                } else if let Some((a, p)) = best_other
                    && outranks(p.rank(), me)
                {
                    self.follow(now, a, format!("{a} outranks this manager"));
                } else {
                    self.clean_rounds += 1;
                    if self.clean_rounds >= 2 {
                        self.become_master(now, "no master and none better".into());
                    } else {
                        self.next_at = now + self.cfg.timers.discover_ms;
                    }
                }
            }
            SmState::Master => {
                if let Some((a, p)) = best_master
                    && outranks(p.rank(), me)
                {
                    self.start_discovery(now, format!("master {a} outranks this one"));
                } else if let Some((a, p)) = best_other
                    && p.state == SmState::Standby
                    && outranks(p.rank(), me)
                {
                    // Stop being master first, then hand over: only to a
                    // manager that knows the SM key, so that a rogue one
                    // cannot take a protected SAN over.
                    self.stats.handovers_given += 1;
                    self.master = Some(a);
                    self.set_state(now, SmState::Standby, format!("handing over to {a}"));
                    self.request(
                        a,
                        Method::SET,
                        Control::Handover as u32,
                        Purpose::Handover { to: a },
                    );
                    self.next_at = Time::MAX;
                } else {
                    self.next_at = now + self.cfg.timers.sweep_ms;
                }
            }
            _ => {}
        }
    }

    /// How far back a peer's answer counts for the round just done.
    pub(super) fn round_span(&self) -> Time {
        self.cfg.timers.timeout_ms * Time::from(self.cfg.timers.retries + 1)
            + self.cfg.timers.sweep_ms.max(self.cfg.timers.discover_ms)
    }

    pub(super) fn follow(&mut self, now: Time, master: Address, why: String) {
        self.master = Some(master);
        self.missed = 0;
        self.next_at = now;
        self.set_state(now, SmState::Standby, why);
    }

    pub(super) fn become_master(&mut self, now: Time, why: String) {
        self.master = None;
        // Its first sweep at once, as OpenSM's on entering MASTER: the
        // database, the members' keys and manager address, their tables
        // (after a failover, a second sooner).
        self.next_at = now;
        self.set_state(now, SmState::Master, why);
    }

    pub(super) fn start_discovery(&mut self, now: Time, why: String) {
        self.master = None;
        self.clean_rounds = 0;
        self.out_in_round = 0;
        self.next_at = now;
        self.set_state(now, SmState::Discovering, why);
    }

    pub(super) fn poll(&mut self, now: Time) {
        let Some(master) = self.master else {
            self.start_discovery(now, "no master to poll".into());
            return;
        };
        self.stats.polls += 1;
        self.request(master, Method::GET, 0, Purpose::Poll { master });
        self.next_at = now + self.cfg.timers.poll_ms;
    }

    pub(super) fn set_state(&mut self, _now: Time, to: SmState, why: String) {
        if self.state == to {
            return;
        }
        let from = self.state;
        self.state = to;
        self.stats.transitions += 1;
        if to != SmState::Master {
            self.database.clear();
            // Another master may give other tables meanwhile.
            self.tables.clear();
            self.table_sets.clear();
            self.router_tables.clear();
            self.heavy = true;
        }
        if to != SmState::Discovering {
            self.clean_rounds = 0;
        }
        self.event(ManagerEvent::State { from, to, why });
    }
}

/// Orders peers by rank: the one that outranks is greater.
fn rank_order(a: &Peer, b: &Peer) -> std::cmp::Ordering {
    if outranks(a.rank(), b.rank()) {
        std::cmp::Ordering::Greater
    } else if outranks(b.rank(), a.rank()) {
        std::cmp::Ordering::Less
    } else {
        std::cmp::Ordering::Equal
    }
}
