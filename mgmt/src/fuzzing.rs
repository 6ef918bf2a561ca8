//! The fuzz body, shared by the cargo-fuzz target `mad` under `fuzz/` and by
//! the test that replays the checked-in corpus (`mgmt/tests/fuzz_corpus.rs`),
//! so that the stable test suite runs the same checks.
//!
//! Arbitrary bytes are read as a MAD (the whole input, and its first 256
//! bytes), as an EEP packet carrying a MAD, and as every attribute area;
//! whatever parses must emit again and parse back to the same value, and
//! every error must name a field and point inside the input.

use crate::attr::{
    Attribute, ClassPortInfo, FibBlock, LrtBlock, NodeDescription, NodeInfo, Notice,
    PartitionTable, PortCounters, PortCountersExtended, PortInfo, RouteEntry, SmInfo,
};
use crate::error::Error;
use crate::wire::{MAD_LEN, Mad, MadRepr, MgmtClass, mad_in};

/// An error names its field and points at most one past the end of the
/// `len`-byte buffer it was found in.
fn check_error(e: &Error, len: usize) {
    assert!(!e.field.is_empty(), "error without a field: {e:?}");
    assert!(
        e.offset <= len,
        "error offset past the buffer ({len}): {e:?}"
    );
}

/// A MAD's bytes: the view agrees with the owned form, emit-then-parse is
/// the identity, the known attribute parses and round-trips.
fn one_mad(b: &[u8]) {
    let view = match Mad::new_checked(b) {
        Ok(v) => v,
        Err(e) => {
            check_error(&e, b.len());
            return;
        }
    };
    match MadRepr::parse(&view) {
        Ok(m) => {
            assert_eq!(m.class, view.class());
            assert_eq!(m.tid, view.tid());
            assert_eq!(m.data, view.attribute_data());
            let bytes = m.to_bytes().expect("a parsed MAD emits");
            let again =
                MadRepr::parse(&Mad::new_checked(&bytes[..]).expect("re-view")).expect("re-parse");
            assert_eq!(again, m);
            attribute(m.class, m.attribute, &m.data);
        }
        Err(e) => check_error(&e, b.len()),
    }
}

/// Attribute `id` of `class` over `area`, when the class has it.
fn attribute(class: MgmtClass, id: u16, area: &[u8]) {
    match Attribute::parse(class, id, area) {
        Ok(Some(a)) => {
            assert_eq!(a.id(), id);
            let mut out = vec![0u8; area.len()];
            a.emit(&mut out).expect("a parsed attribute emits");
            assert_eq!(
                Attribute::parse(class, id, &out).expect("re-parse"),
                Some(a)
            );
        }
        Ok(None) => {}
        Err(e) => check_error(&e, area.len()),
    }
}

/// Every attribute over the bytes, as a Subn (64-byte) and a Perf
/// (192-byte) area would hold them.
fn every_attribute(data: &[u8]) {
    let smp = &data[..data.len().min(64)];
    let perf = &data[..data.len().min(192)];
    for id in [
        ClassPortInfo::ID,
        Notice::ID,
        NodeDescription::ID,
        NodeInfo::ID,
        PortInfo::ID,
        PartitionTable::ID,
        SmInfo::ID,
        RouteEntry::ID,
        FibBlock::ID,
        LrtBlock::ID,
    ] {
        attribute(MgmtClass::SUBN, id, smp);
    }
    attribute(MgmtClass::PERF, PortCounters::ID, perf);
    attribute(MgmtClass::PERF, PortCountersExtended::ID, perf);
    attribute(MgmtClass::PERF, ClassPortInfo::ID, perf);
    attribute(MgmtClass::SUBN_ADM, crate::attr::InformInfo::ID, perf);
    attribute(MgmtClass::SUBN_ADM, crate::attr::PartitionsText::ID, perf);
}

/// The body: `data` as a MAD, its first 256 bytes as a MAD, an EEP packet
/// carrying a MAD, and every attribute area.
pub fn mad(data: &[u8]) {
    one_mad(data);
    if data.len() > MAD_LEN {
        one_mad(&data[..MAD_LEN]);
    }
    match rrp::wire::Packet::new_checked(data, usize::MAX) {
        Ok(p) => match mad_in(&p) {
            Ok(m) => one_mad(m.as_bytes()),
            Err(e) => check_error(&e, data.len()),
        },
        Err(e) => assert!(e.offset <= data.len()),
    }
    every_attribute(data);
}

/// A two-port router for the agent's fuzz body.
struct Toy {
    up: [bool; 2],
}

impl crate::agent::Managed for Toy {
    fn ports(&self) -> usize {
        2
    }
    fn port(&self, port: rrp::PortId) -> Option<crate::agent::PortFacts> {
        let i = port.index();
        (i < 2).then(|| crate::agent::PortFacts {
            address: rrp::Address(0x0140 + i as u16),
            san_id: rrp::Address(0x0100),
            mtu: 1500,
            cost: 1,
            up: self.up[i],
            link_kind: 2,
            native: rrp::NativeAddr::mac([2, 0, 0, 0, 0, i as u8]),
            lrt_entries: 3,
            buddies: 1,
        })
    }
    fn counters(&self, port: rrp::PortId) -> Option<Vec<u64>> {
        (port.index() < 2).then(|| vec![7; PortCounters::COUNT])
    }
    fn link_counters(&self, port: rrp::PortId) -> Option<Vec<u64>> {
        (port.index() < 2).then(|| vec![8; PortCountersExtended::COUNT])
    }
    fn route(&self, _: rrp::PortId, _: rrp::Address) -> Option<rrp::router::FibEntry> {
        None
    }
    fn lrt(&self, _: rrp::PortId) -> Vec<crate::agent::LrtItem> {
        Vec::new()
    }
    fn set_port_up(&mut self, port: rrp::PortId, up: bool) -> Result<(), crate::wire::Status> {
        self.up[port.index()] = up;
        Ok(())
    }
    fn set_mtu(&mut self, _: rrp::PortId, _: u32) -> Result<(), crate::wire::Status> {
        Ok(())
    }
    fn set_cost(&mut self, _: rrp::PortId, _: u16) -> Result<(), crate::wire::Status> {
        Ok(())
    }
    fn clear_counters(&mut self, _: rrp::PortId) -> Result<(), crate::wire::Status> {
        Ok(())
    }
    fn set_name(&mut self, _: &str) {}
}

/// The agent's body: the input, cut into MADs of 256 bytes (a short last
/// one included), is handed to a router's agent with a key at the protect
/// level of the first byte. Nothing panics, every packet is counted, every
/// MAD the agent sends parses, its own table of subscribers stays within
/// its bound, and its table of partitions holds no key twice.
pub fn agent(data: &[u8]) {
    use crate::agent::{Agent, AgentConfig, Incoming, NodeType, Output};
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let mut cfg = AgentConfig::new(NodeType::Router, 0xA0, "fuzz");
    cfg.mkey = 0x5EC2E7;
    cfg.protect = first & 3;
    cfg.lease_s = 1;
    cfg.manager = rrp::Address(0x0301);
    cfg.drop_threshold = 1;
    let mut a = Agent::new(cfg, 0);
    let mut toy = Toy { up: [true; 2] };
    let mut now = 0;
    for (i, mad) in rest.chunks(MAD_LEN).enumerate() {
        now += 700;
        a.handle(
            now,
            &mut toy,
            Incoming {
                port: rrp::PortId::new(i % 3),
                native: rrp::NativeAddr::mac([2, 0, 0, 0, 9, 9]),
                src: rrp::Address(0x0101),
                dst: rrp::Address(0x0140),
                mad,
            },
        );
        a.on_timer(now, &toy);
        while let Some(o) = a.poll_output() {
            match o {
                Output::Send { mad, .. }
                | Output::Route { mad, .. }
                | Output::ToClient { mad, .. } => {
                    let v = Mad::new_checked(&mad[..]).expect("an output MAD views");
                    MadRepr::parse(&v).expect("an output MAD parses");
                }
                Output::Event(e) => {
                    let _ = e.to_string();
                }
            }
        }
        assert_eq!(a.stats().received, i as u64 + 1);
        // Its own subscribers (InformInfo Sets here: no master): bounded,
        // nodes only.
        assert!(a.subscriptions().count() <= a.config().manager_timers.max_subscriptions as usize);
        assert!(a.subscriptions().all(|s| s.info.subscriber.is_node()));
        // Its table of partitions (PartitionTable Sets): bounded, no key
        // twice.
        let t = a.partition_table();
        assert!(t.len() <= crate::partition::MAX_PARTITIONS);
        assert!(
            t.iter()
                .enumerate()
                .all(|(i, (k, _))| t[..i].iter().all(|(j, _)| j != k))
        );
    }
}

/// The SAN manager's multicast records fed arbitrary requests: a master
/// (on a SAN of one other member) takes operations from the input, 67
/// bytes each (the operation, the requester, a record area); nothing
/// panics, the tables stay within their bounds and hold only logical
/// addresses, and every answer emits and parses. The partitions in force
/// change with time passing (partition 0x0010 declared or not): a group
/// with members always has a partition, one in force.
pub fn groups(data: &[u8]) {
    use crate::attr::{McGroupRecord, McMemberRecord};
    use crate::manager::{Manager, ManagerConfig, SmState};
    let mut cfg = ManagerConfig::new(7, 0x20);
    cfg.max_groups = 8;
    cfg.max_group_members = 16;
    let mut m = Manager::new(cfg, 0);
    m.set_address(rrp::Address(0x0140));
    // No member: two clean discovery rounds make it master.
    let mut now = 0;
    while m.state() != SmState::Master && now < 10_000 {
        now += 100;
        m.on_timer(now);
        while m.poll_output().is_some() {}
    }
    assert_eq!(m.state(), SmState::Master);
    let with =
        crate::partition::parse("Default=0x7fff : ALL=full ;\ntenant=0x0010 : ALL=limited ;")
            .expect("a good file");
    let without = crate::partition::Partitions::open();
    let elsewhere = |g: rrp::Address| g.0.is_multiple_of(3).then_some(u32::from(g.0 % 2000));
    for op in data.chunks(67) {
        let Some((&kind, rest)) = op.split_first() else {
            continue;
        };
        let requester = rest.get(..2).map_or(rrp::Address(0), |b| {
            rrp::Address(u16::from_be_bytes([b[0], b[1]]))
        });
        let mut area = [0u8; 192];
        if let Some(b) = rest.get(2..) {
            area[..b.len()].copy_from_slice(b);
        }
        let modifier = u32::from(kind >> 3);
        now += 50;
        let out = match kind & 7 {
            0 => McGroupRecord::parse(&area).ok().map(|r| {
                m.mc_create(&r, &elsewhere, 1500)
                    .map(Attribute::McGroupRecord)
            }),
            1 => McGroupRecord::parse(&area)
                .ok()
                .map(|r| m.mc_delete(&r).map(Attribute::McGroupRecord)),
            2 => Some(m.mc_group_get(modifier).map(Attribute::McGroupRecord)),
            3 => McMemberRecord::parse(&area)
                .ok()
                .map(|r| m.mc_join(now, requester, &r).map(Attribute::McMemberRecord)),
            4 => McMemberRecord::parse(&area)
                .ok()
                .map(|r| m.mc_leave(requester, &r).map(Attribute::McMemberRecord)),
            5 => McMemberRecord::parse(&area)
                .ok()
                .map(|r| m.mc_member_get(modifier, &r).map(Attribute::McMemberRecord)),
            _ => {
                m.set_partitions(if kind & 8 == 0 {
                    with.clone()
                } else {
                    without.clone()
                });
                m.mc_check_partitions();
                m.on_timer(now + 1_000);
                while m.poll_output().is_some() {}
                None
            }
        };
        if let Some(Ok(a)) = out {
            let mut back = [0u8; 192];
            a.emit(&mut back).expect("an answer emits");
            assert_eq!(
                Attribute::parse(MgmtClass::SUBN_ADM, a.id(), &back)
                    .expect("an answer parses")
                    .expect("a SubnAdm attribute"),
                a
            );
        }
        let groups = m.groups();
        assert!(groups.len() <= 8, "groups beyond the bound");
        assert!(groups.values().map(|g| g.members.len()).sum::<usize>() <= 16);
        assert!(groups.keys().all(|g| g.is_logical()));
        assert!(
            groups
                .values()
                .filter(|g| !g.members.is_empty())
                .all(|g| g.partition.is_some_and(|k| m.partitions().get(k).is_some())),
            "members in a group without a partition in force"
        );
    }
}

/// The SAN manager's event subscriptions fed arbitrary requests: a master
/// (bound 4, leases of at most 30 s) takes operations from the input, 67
/// bytes each (the operation, the requester, a record area): InformInfo
/// Sets, Deletes and Gets, notices to forward, the oldest Report answered
/// or failed, time passing. Nothing panics, the table stays within its
/// bound and holds only node addresses, every answer emits and parses, and
/// every Report goes to a subscriber.
pub fn subscriptions(data: &[u8]) {
    use crate::attr::{InformInfo, Notice};
    use crate::client::{Answer, Failure, Target};
    use crate::manager::{Manager, ManagerConfig, ManagerOutput, SmState};
    use crate::wire::Method;
    let mut cfg = ManagerConfig::new(7, 0x20);
    cfg.timers.max_subscriptions = 4;
    cfg.timers.lease_max_s = 30;
    let mut m = Manager::new(cfg, 0);
    m.set_address(rrp::Address(0x0140));
    let mut now = 0;
    while m.state() != SmState::Master && now < 10_000 {
        now += 100;
        m.on_timer(now);
        while m.poll_output().is_some() {}
    }
    assert_eq!(m.state(), SmState::Master);
    let mut reports = std::collections::VecDeque::new();
    for op in data.chunks(67) {
        let Some((&kind, rest)) = op.split_first() else {
            continue;
        };
        let requester = rest.get(..2).map_or(rrp::Address(0), |b| {
            rrp::Address(u16::from_be_bytes([b[0], b[1]]))
        });
        let mut area = [0u8; 192];
        if let Some(b) = rest.get(2..) {
            area[..b.len()].copy_from_slice(b);
        }
        let arg = u32::from(kind >> 3);
        now += 10;
        let out = match kind & 7 {
            0 => InformInfo::parse(&area)
                .ok()
                .map(|r| m.inform_set(now, requester, &r)),
            1 => InformInfo::parse(&area)
                .ok()
                .map(|r| m.inform_delete(requester, &r)),
            2 => Some(m.inform_get(now, arg)),
            3 => {
                if let Ok(n) = Notice::parse(&area) {
                    m.forward(now, &n);
                }
                None
            }
            4 | 5 => {
                if let Some((id, to)) = reports.pop_front() {
                    let result = if kind & 7 == 4 {
                        let mut mad = MadRepr::new(
                            MgmtClass::SUBN_ADM,
                            Method::REPORT_RESP,
                            1,
                            Notice::ID,
                            0,
                        );
                        mad.data = vec![0; 192];
                        Ok(Answer {
                            mad,
                            from: to,
                            tries: 1 + arg % 4,
                            rtt_ms: 1,
                        })
                    } else {
                        Err(Failure::Timeout { tries: 1 + arg % 4 })
                    };
                    m.on_answer(now, id, result);
                }
                None
            }
            _ => {
                now += 1_000 * u64::from(arg);
                m.on_timer(now);
                None
            }
        };
        while let Some(o) = m.poll_output() {
            if let ManagerOutput::Request { id, request } = o
                && request.method == Method::REPORT
            {
                let Target::Address(to) = request.target else {
                    panic!("a Report not by address: {request:?}");
                };
                assert!(
                    m.subscriptions().any(|s| s.info.subscriber == to),
                    "a Report to {to}, no subscriber"
                );
                reports.push_back((id, to));
            }
        }
        if let Some(Ok(a)) = out {
            let mut back = [0u8; 192];
            a.emit(&mut back).expect("an answer emits");
            assert_eq!(InformInfo::parse(&back).expect("an answer parses"), a);
        }
        assert!(m.subscriptions().count() <= 4, "beyond the bound");
        assert!(m.subscriptions().all(|s| s.info.subscriber.is_node()));
    }
}

impl crate::station::Carrier for Toy {
    fn addresses(&self) -> Vec<rrp::Address> {
        vec![rrp::Address(0x0140), rrp::Address(0x0141)]
    }
    fn next_hop(&self, dst: rrp::Address) -> Option<(rrp::PortId, rrp::NativeAddr)> {
        let [a, b] = dst.0.to_be_bytes();
        dst.is_valid_destination().then(|| {
            (
                rrp::PortId::new(0),
                rrp::NativeAddr::mac([2, 0, 0, 1, a, b]),
            )
        })
    }
    fn members(&self, port: rrp::PortId) -> Vec<rrp::Address> {
        if port.index() == 0 {
            vec![rrp::Address(0x0150), rrp::Address(0x0151)]
        } else {
            Vec::new()
        }
    }
}

/// The packets a station call sent: every MAD views and parses, every
/// finished request's answer parses.
fn station_outcome(out: &crate::station::Outcome, sent: &mut Vec<crate::station::Packet>) {
    for p in &out.packets {
        let v = Mad::new_checked(&p.mad[..]).expect("a sent MAD views");
        MadRepr::parse(&v).expect("a sent MAD parses");
        let _ = p.bytes();
    }
    for a in out.done.iter().filter_map(|(_, r)| r.as_ref().ok()) {
        let _ = a.mad.to_bytes().expect("an answer emits");
    }
    let _ = format!("{:?} {:?}", out.events, out.manager_events);
    sent.extend(out.packets.iter().cloned());
    if sent.len() > 64 {
        *sent = sent.split_off(sent.len() - 64);
    }
}

/// A router's whole management station (agent, client, a SAN manager on
/// port 0 whose SAN has two other members) fed arbitrary MADs: the input is
/// cut into records of a control byte and a MAD (257 bytes). The control
/// byte's low three bits advance the clock (0-448 ms, timers run after
/// each MAD); with bit 3 set, the MAD is made the answer to one of the
/// packets the station sent lately (bits 4-7 pick it): its base header
/// (class, TID, attribute, modifier) copied, the method turned into the
/// response, from the address it went to, so that the client matches it
/// and hands it to whoever asked (the manager's discovery and sweeps).
/// Nothing panics and every MAD the station sends parses.
pub fn station(data: &[u8]) {
    use crate::agent::{AgentConfig, Incoming, NodeType};
    use crate::manager::ManagerConfig;
    use crate::station::Station;
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let mut cfg = AgentConfig::new(NodeType::Router, 0xA0, "fuzz");
    cfg.mkey = 0x5EC2E7;
    cfg.protect = first & 3;
    cfg.manager = rrp::Address(0x0150);
    let mut st = Station::new(cfg, 0, u32::from(first));
    let mut mcfg = ManagerConfig::new(first >> 4, 0xA0);
    mcfg.max_groups = 8;
    mcfg.max_group_members = 16;
    st.add_manager(rrp::PortId::new(0), mcfg, 0);
    let mut toy = Toy { up: [true; 2] };
    let mut sent = Vec::new();
    let mut now = 0;
    let out = st.on_timer(now, &mut toy);
    station_outcome(&out, &mut sent);
    for rec in rest.chunks(MAD_LEN + 1) {
        let Some((&ctl, mad)) = rec.split_first() else {
            continue;
        };
        now += 64 * u64::from(ctl & 7);
        let mut mad = mad.to_vec();
        let mut src = rrp::Address(0x0150 + u16::from(ctl >> 7));
        if ctl & 8 != 0 && !sent.is_empty() {
            let p: &crate::station::Packet = &sent[usize::from(ctl >> 4) % sent.len()];
            mad.resize(MAD_LEN, 0);
            // Base version, class, class version; TID, attribute, modifier.
            mad[..3].copy_from_slice(&p.mad[..3]);
            mad[3] = match crate::wire::Method(p.mad[3]) {
                crate::wire::Method::SET => crate::wire::Method::GET_RESP.0,
                m => m.0 | 0x80,
            };
            mad[8..24].copy_from_slice(&p.mad[8..24]);
            src = p.dst;
        }
        let out = st.handle(
            now,
            &mut toy,
            Incoming {
                port: rrp::PortId::new(0),
                native: rrp::NativeAddr::mac([2, 0, 0, 1, 1, 0x50]),
                src,
                dst: rrp::Address(0x0140),
                mad: &mad,
            },
        );
        station_outcome(&out, &mut sent);
        let out = st.on_timer(now, &mut toy);
        station_outcome(&out, &mut sent);
    }
}

/// A SAN manager's partitions file (`crate::partition::file`), as text
/// (invalid UTF-8 replaced): nothing panics; every error names a line of
/// the text; an accepted file has the default partition, at most
/// [`crate::partition::MAX_PARTITIONS`] partitions, and its text form reads
/// back the same.
pub fn partitions(data: &[u8]) {
    use crate::partition::{MAX_PARTITIONS, PartitionKey, parse};
    let text = String::from_utf8_lossy(data);
    match parse(&text) {
        Err(errs) => {
            assert!(!errs.is_empty());
            let lines = text.lines().count().max(1) + 1;
            for e in &errs {
                assert!(e.line >= 1 && e.line <= lines, "{e} of {lines} lines");
                assert!(!e.why.is_empty());
            }
        }
        Ok(p) => {
            assert!(p.list.len() <= MAX_PARTITIONS);
            assert!(p.get(PartitionKey::DEFAULT).is_some());
            assert_eq!(parse(&p.to_text()).as_ref(), Ok(&p));
        }
    }
}
