//! The partitions this box enforces at each HR (docs/partitions.md "At the
//! routers", docs/spec-notes.md 75): per port, its SAN's members' tables,
//! from this box's own SAN manager on that HR when it is the SAN's master,
//! else from those the SAN's master set to the agent; built into the
//! forwarding path's [`PartitionGuard`] when they change. Tables the guard
//! cannot take (a [`GuardError`]) leave the port's last good ones in force,
//! with a counter and one log line per refusal (rate-limited).

use std::time::{SystemTime, UNIX_EPOCH};

use admin::view::PortPartitionsRow;
use dataplane::partitions::{GuardError, PartitionGuard, SanPartitions};
use mgmt::manager::SmState;
use mgmt::partition::{Membership, PartitionKey};
use mgmt::station::Station;
use rrp::{Address, PortId};

use crate::config::StaticPartitions;

/// A member's table.
type Tables = Vec<(Address, Vec<(PartitionKey, Membership)>)>;

/// Where a port's tables come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// No master has set any: the port is open.
    #[default]
    None,
    /// This box's SAN manager on the HR is the SAN's master.
    ThisBox,
    /// The master at this address set them to the agent.
    Master(Address),
    /// `management.static_partitions`: no master gives any.
    Configured,
}

/// One port's partitions in force.
#[derive(Debug, Clone, Default)]
struct PortState {
    source: Source,
    /// The tables in force (those the guard took).
    tables: Tables,
    /// Their SAN's partitions (`None`: open).
    san: Option<SanPartitions>,
    /// When they were taken (Unix seconds).
    since: Option<u64>,
    /// Why the last tables given were not taken.
    refused: Option<String>,
}

/// Per port, the partitions in force and the inputs last looked at.
#[derive(Debug, Default)]
pub struct PartitionKeeper {
    /// The digest of the inputs last looked at.
    seen: Option<Vec<u64>>,
    ports: Vec<PortState>,
    /// `management.static_partitions`, and how many times they were set.
    configured: Vec<StaticPartitions>,
    configured_gen: u64,
}

/// What one port's tables are now: from this box's master, or the agent,
/// else those configured for the HR `hr` (`configured`).
fn tables_of(
    station: &Station,
    port: PortId,
    hr: Option<Address>,
    configured: &[StaticPartitions],
) -> (Source, Tables) {
    let (source, tables) = given_tables(station, port);
    if source != Source::None {
        return (source, tables);
    }
    let tables: Tables = configured
        .iter()
        .filter(|s| Some(s.hr) == hr)
        .map(|s| (s.node, s.table.clone()))
        .collect();
    if tables.is_empty() {
        (Source::None, tables)
    } else {
        (Source::Configured, tables)
    }
}

/// What a SAN's master gives one port: from this box's master, or the agent.
fn given_tables(station: &Station, port: PortId) -> (Source, Tables) {
    if let Some((_, m)) = station
        .managers()
        .iter()
        .find(|(p, m)| *p == port && m.state() == SmState::Master)
    {
        if m.partitions().is_open() {
            return (Source::ThisBox, Vec::new());
        }
        return (Source::ThisBox, m.member_tables());
    }
    let t = station.agent().member_tables();
    let tables: Tables = t.of_port(port).collect();
    match t.from(port) {
        Some(f) if !tables.is_empty() => (Source::Master(f.from), tables),
        _ => (Source::None, Vec::new()),
    }
}

/// The digest of what a port's tables are made of: cheap to compute at
/// every turn (no table is built).
fn digest(station: &Station, ports: usize, configured_gen: u64) -> Vec<u64> {
    let mut d = vec![station.agent().member_tables().changes(), configured_gen];
    for p in 0..ports {
        let port = PortId::new(p);
        d.push(
            station
                .managers()
                .iter()
                .find(|(q, m)| *q == port && m.state() == SmState::Master)
                .map_or(0, |(_, m)| m.member_tables_key() | 1),
        );
    }
    d
}

/// The SAN partitions of `tables` (`None`: none given, open).
fn san_of(tables: &Tables) -> Result<Option<SanPartitions>, GuardError> {
    if tables.is_empty() {
        return Ok(None);
    }
    SanPartitions::new(tables.iter().map(|(a, t)| {
        (
            *a,
            t.iter()
                .map(|(k, m)| (k.get(), *m == Membership::Full))
                .collect::<Vec<_>>(),
        )
    }))
    .map(Some)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl PartitionKeeper {
    /// Looks at the station's tables for `ports` ports; when they changed,
    /// the new guard (ports whose new tables the guard refuses keep their
    /// last good ones), and the refusals (port, error) to count and log.
    pub fn update(
        &mut self,
        station: &Station,
        hrs: &[Address],
    ) -> Option<(PartitionGuard, Vec<(PortId, GuardError)>)> {
        let ports = hrs.len();
        let d = digest(station, ports, self.configured_gen);
        if self.seen.as_ref() == Some(&d) {
            return None;
        }
        self.seen = Some(d);
        let configured = std::mem::take(&mut self.configured);
        let r = self.take(ports, |p| {
            tables_of(station, p, hrs.get(p.index()).copied(), &configured)
        });
        self.configured = configured;
        r
    }

    /// Sets the configured tables (`management.static_partitions`), looked
    /// at by the next [`PartitionKeeper::update`].
    pub fn set_static(&mut self, s: Vec<StaticPartitions>) {
        if s != self.configured {
            self.configured = s;
            self.configured_gen += 1;
        }
    }

    /// Takes each of `ports` ports' tables as `now_of` gives them: the new
    /// guard when a port's partitions changed or tables were refused.
    fn take(
        &mut self,
        ports: usize,
        now_of: impl Fn(PortId) -> (Source, Tables),
    ) -> Option<(PartitionGuard, Vec<(PortId, GuardError)>)> {
        self.ports.resize_with(ports, PortState::default);
        let mut changed = false;
        let mut refusals = Vec::new();
        for (p, st) in self.ports.iter_mut().enumerate() {
            let port = PortId::new(p);
            let (source, tables) = now_of(port);
            if tables == st.tables && source == st.source {
                // Those in force again (after a refusal, or still).
                st.refused = None;
                continue;
            }
            match san_of(&tables) {
                Ok(san) => {
                    changed |= san != st.san;
                    *st = PortState {
                        source,
                        tables,
                        san,
                        since: Some(unix_now()),
                        refused: None,
                    };
                }
                Err(e) => {
                    if st.refused.as_deref() != Some(&e.to_string()) {
                        refusals.push((port, e.clone()));
                    }
                    st.refused = Some(e.to_string());
                }
            }
        }
        if !changed && refusals.is_empty() {
            return None;
        }
        let guard = PartitionGuard::new(self.ports.iter().map(|s| s.san.clone()));
        Some((guard, refusals))
    }

    /// `mwctl show partitions`: a row per port (`hrs`: the HRs' addresses
    /// in port order).
    pub fn rows(&self, hrs: &[Address]) -> Vec<PortPartitionsRow> {
        self.ports
            .iter()
            .enumerate()
            .map(|(p, s)| {
                let (source, master) = match s.source {
                    Source::None => ("none", None),
                    Source::ThisBox => ("this-box", None),
                    Source::Master(a) => ("master", Some(a)),
                    Source::Configured => ("configured", None),
                };
                PortPartitionsRow {
                    port: PortId::new(p),
                    hr: hrs.get(p).copied().unwrap_or_default(),
                    open: s.san.as_ref().is_none_or(SanPartitions::is_open),
                    keys: s
                        .san
                        .as_ref()
                        .map(|x| x.keys().iter().map(|k| format!("{k:#06x}")).collect())
                        .unwrap_or_default(),
                    nodes: s.san.as_ref().map_or(0, SanPartitions::nodes),
                    source: source.into(),
                    master,
                    since_unix_s: s.since,
                    refused: s.refused.clone(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: u16) -> PartitionKey {
        PartitionKey::new(k).unwrap()
    }

    #[test]
    fn tables_become_a_san_and_too_many_partitions_are_refused() {
        let t: Tables = vec![
            (Address(0x0101), vec![(key(0x10), Membership::Full)]),
            (Address(0x0102), vec![(key(0x10), Membership::Limited)]),
        ];
        let s = san_of(&t).unwrap().unwrap();
        assert_eq!(s.keys(), [0x10]);
        assert_eq!(s.nodes(), 2);
        assert!(san_of(&Vec::new()).unwrap().is_none());
        let many: Tables = (1..=65u16)
            .map(|i| (Address(0x0100 + i), vec![(key(i), Membership::Full)]))
            .collect();
        assert_eq!(san_of(&many), Err(GuardError::TooManyPartitions));
    }

    #[test]
    fn refused_tables_leave_the_last_good_ones_in_force() {
        let master = Source::Master(Address(0x0101));
        let good: Tables = vec![(Address(0x0102), vec![(key(0x10), Membership::Full)])];
        let bad: Tables = (1..=65u16)
            .map(|i| (Address(0x0100 + i), vec![(key(i), Membership::Full)]))
            .collect();
        // Port 0 given `t`, port 1 nothing.
        let given = |t: &Tables| {
            let t = t.clone();
            move |p: PortId| {
                if p.index() == 0 {
                    (master, t.clone())
                } else {
                    (Source::None, Vec::new())
                }
            }
        };
        let mut k = PartitionKeeper::default();
        let (g, refused) = k.take(2, given(&good)).unwrap();
        assert!(refused.is_empty());
        assert_eq!(g.san(PortId::new(0)).unwrap().keys(), [0x10]);
        assert!(g.san(PortId::new(1)).is_none(), "open");
        // The same again: nothing new.
        assert!(k.take(2, given(&good)).is_none());
        // Too many partitions: refused once, the good ones stay.
        let (g, refused) = k.take(2, given(&bad)).expect("a refusal to count");
        assert_eq!(refused, [(PortId::new(0), GuardError::TooManyPartitions)]);
        assert_eq!(g.san(PortId::new(0)).unwrap().keys(), [0x10]);
        let rows = k.rows(&[Address(0x0140), Address(0x0240)]);
        assert_eq!(rows[0].keys, ["0x0010"]);
        assert_eq!(rows[0].master, Some(Address(0x0101)));
        assert!(rows[0].refused.is_some());
        assert!(rows[1].open && rows[1].source == "none");
        assert!(k.take(2, given(&bad)).is_none(), "not counted again");
        // The good ones again: the refusal is gone.
        assert!(k.take(2, given(&good)).is_none());
        assert!(k.rows(&[])[0].refused.is_none());
    }
}
