//! The attributes an agent serves (docs/management.md "Attributes"): Get
//! reads them from [`Managed`] and the agent's own state; Set checks every
//! field first and then applies what changed, through [`Managed`], so that
//! a Set is all or nothing.

use rrp::router::Next;
use rrp::{Address, PortId};

use crate::attr::{
    ClassPortInfo, FibBlock, FibBlockEntry, LrtBlock, LrtBlockEntry, Neighbour, NodeDescription,
    NodeInfo, PartitionTable, PortCounters, PortCountersExtended, PortInfo, RouteEntry, SmInfo,
    lrt_block,
};
use crate::partition::MAX_PARTITIONS;
use crate::wire::{MadRepr, MgmtClass, Status};

use super::{Agent, AgentEvent, Incoming, Managed, NodeType, Time};

/// ClassPortInfo's capability bits: traps, directed routes, M_Key.
const CAPABILITIES: u16 = 0b111;
/// What ClassPortInfo says the agent's answers take at most, in ms.
const RESP_TIME_MS: u32 = 100;

type Res<T> = Result<T, Status>;

fn emit<A>(
    class: MgmtClass,
    a: &A,
    f: impl Fn(&A, &mut [u8]) -> crate::Result<()>,
) -> Res<Vec<u8>> {
    let mut data = vec![0u8; class.attribute_len()];
    f(a, &mut data).map_err(|_| Status::INVALID_VALUE)?;
    Ok(data)
}

/// The port a modifier names, if the node has it.
/// The port a modifier names, if the node has it (any 32-bit modifier: the
/// check comes before the port is made, which a number above 65535 cannot
/// be).
fn port_arg<M: Managed + ?Sized>(m: &M, modifier: u32) -> Res<PortId> {
    match usize::try_from(modifier) {
        Ok(i) if i < m.ports() => Ok(PortId::new(i)),
        _ => Err(Status::INVALID_VALUE),
    }
}

impl Agent {
    /// The attribute a request names, as its answer's attribute area.
    pub(super) fn get<M: Managed + ?Sized>(
        &self,
        m: &M,
        req: &MadRepr,
        in_port: PortId,
        show_key: bool,
    ) -> Res<Vec<u8>> {
        let class = req.class;
        let smp = class.is_smp();
        match req.attribute {
            ClassPortInfo::ID => emit(
                class,
                &ClassPortInfo {
                    base_version: 1,
                    class_version: 1,
                    capability_mask: CAPABILITIES,
                    resp_time_value: RESP_TIME_MS,
                    trap_address: self.cfg.manager,
                },
                ClassPortInfo::emit,
            ),
            NodeDescription::ID if smp => emit(
                class,
                &NodeDescription(self.cfg.description.clone()),
                NodeDescription::emit,
            ),
            NodeInfo::ID if smp => {
                let addr = m.port(in_port).map_or(Address::UNSPECIFIED, |f| f.address);
                let id = self.cfg.identity;
                emit(
                    class,
                    &NodeInfo {
                        base_version: 1,
                        class_version: 1,
                        node_type: self.cfg.node_type as u8,
                        num_ports: m.ports() as u8,
                        system_image_identity: id,
                        node_identity: id,
                        port_identity: id.wrapping_add(in_port.index() as u64 + 1),
                        partition_cap: MAX_PARTITIONS as u16,
                        implementation_level: u16::from(self.cfg.level),
                        revision: self.cfg.version,
                        local_port_num: in_port.index() as u8,
                        vendor_id: 0,
                        local_port_address: addr,
                    },
                    NodeInfo::emit,
                )
            }
            PortInfo::ID if smp => {
                let p = port_arg(m, req.modifier)?;
                let f = m.port(p).ok_or(Status::INVALID_VALUE)?;
                emit(
                    class,
                    &PortInfo {
                        mkey: if show_key { self.mkey.key } else { 0 },
                        address: f.address,
                        san_id: f.san_id,
                        manager_address: self.cfg.manager,
                        mkey_lease_period: self.mkey.lease_s,
                        mtu: f.mtu,
                        cost: f.cost,
                        local_port_num: p.index() as u8,
                        port_state: if f.up {
                            PortInfo::ACTIVE
                        } else {
                            PortInfo::DOWN
                        },
                        mkey_protect_bits: self.mkey.protect,
                        link_kind: f.link_kind,
                        mkey_violations: self.mkey.violations,
                        lrt_entries: f.lrt_entries,
                        buddies: f.buddies,
                        native: f.native,
                    },
                    PortInfo::emit,
                )
            }
            PartitionTable::ID if smp && req.modifier >> 16 != 0 => {
                let (member, block) = PartitionTable::split_modifier(req.modifier);
                // A host keeps no member's table: refused, and counted by
                // the caller.
                if self.cfg.node_type != NodeType::Router {
                    return Err(Status::INVALID_VALUE);
                }
                // This node's own SAN manager, master on the HR: the
                // table it checks packets against; else the copy the
                // SAN's master set.
                let t = match m.master_member_table(in_port, member) {
                    Some(table) => PartitionTable::block_of(&table, block),
                    None => self.member_tables.block(in_port, member, block),
                }
                .ok_or(Status::INVALID_VALUE)?;
                emit(class, &t, PartitionTable::emit)
            }
            PartitionTable::ID if smp => {
                let block = usize::try_from(req.modifier)
                    .ok()
                    .and_then(|b| self.partition_blocks.get(b))
                    .ok_or(Status::INVALID_VALUE)?;
                emit(
                    class,
                    &PartitionTable {
                        entries: block.clone(),
                    },
                    PartitionTable::emit,
                )
            }
            SmInfo::ID if smp => {
                let asked = SmInfo::parse(&req.data).map_or(0, |i| i.sm_key);
                let info = m
                    .sm_info(in_port, asked)
                    .ok_or(Status::METHOD_ATTR_UNSUPPORTED)?;
                emit(class, &info, SmInfo::emit)
            }
            // A host answers too: its route is its first hop.
            RouteEntry::ID if smp => {
                let (port, dst) =
                    RouteEntry::modifier_parts(req.modifier).ok_or(Status::INVALID_VALUE)?;
                let p = port_arg(m, u32::from(port))?;
                let e = m.route(p, dst);
                let mut r = RouteEntry::default();
                if let Some(e) = e {
                    r.q = e.q;
                    r.first_hr = e.redirect.unwrap_or(Address::UNSPECIFIED);
                    r.mtu = e.mtu;
                    match e.next {
                        Next::Local => r.kind = RouteEntry::LOCAL,
                        Next::Forward { port, native } => {
                            r.kind = RouteEntry::FORWARD;
                            r.egress_port = port.index() as u8;
                            r.egress_address =
                                m.port(port).map_or(Address::UNSPECIFIED, |f| f.address);
                            r.next_address =
                                m.address_of(port, &native).unwrap_or(Address::UNSPECIFIED);
                            r.native = native;
                        }
                    }
                }
                emit(class, &r, RouteEntry::emit)
            }
            // Who is at a native address on the SAN of the HR the modifier
            // names.
            Neighbour::ID if smp => {
                let asked = Neighbour::parse(&req.data).map_err(|_| Status::INVALID_VALUE)?;
                let hr = u16::try_from(req.modifier).map_err(|_| Status::INVALID_VALUE)?;
                let port = (0..m.ports())
                    .map(PortId::new)
                    .find(|p| m.port(*p).is_some_and(|f| f.address.0 == hr))
                    .ok_or(Status::INVALID_VALUE)?;
                let n = Neighbour {
                    address: m
                        .address_of(port, &asked.native)
                        .unwrap_or(Address::UNSPECIFIED),
                    native: asked.native,
                };
                emit(class, &n, Neighbour::emit)
            }
            FibBlock::ID if smp && self.cfg.node_type == NodeType::Router => {
                let (port, block) =
                    FibBlock::modifier_parts(req.modifier).ok_or(Status::INVALID_VALUE)?;
                let p = port_arg(m, u32::from(port))?;
                let first = FibBlock::first_address(block).ok_or(Status::INVALID_VALUE)?;
                let mut b = FibBlock::default();
                for (i, slot) in b.entries.iter_mut().enumerate() {
                    let dst = Address(first.0 + i as u16);
                    if let Some(e) = m.route(p, dst) {
                        *slot = match e.next {
                            Next::Local => FibBlockEntry {
                                kind: RouteEntry::LOCAL,
                                egress_port: p.index() as u8,
                                q: e.q,
                            },
                            Next::Forward { port, .. } => FibBlockEntry {
                                kind: RouteEntry::FORWARD,
                                egress_port: port.index() as u8,
                                q: e.q,
                            },
                        };
                    }
                }
                emit(class, &b, FibBlock::emit)
            }
            LrtBlock::ID if smp => {
                let (port, block) =
                    LrtBlock::modifier_parts(req.modifier).ok_or(Status::INVALID_VALUE)?;
                let p = port_arg(m, u32::from(port))?;
                let all = m.lrt(p);
                let from = block as usize * lrt_block::ENTRIES;
                let entries = all
                    .iter()
                    .skip(from)
                    .take(lrt_block::ENTRIES)
                    .map(|e| LrtBlockEntry {
                        address: e.address,
                        flags: if e.router { LrtBlockEntry::ROUTER } else { 0 }
                            | if e.is_static {
                                LrtBlockEntry::STATIC
                            } else {
                                0
                            },
                        keepalives_missed: e.missed,
                    })
                    .collect();
                emit(
                    class,
                    &LrtBlock {
                        total: all.len().min(usize::from(u16::MAX)) as u16,
                        entries,
                    },
                    LrtBlock::emit,
                )
            }
            PortCounters::ID if class == MgmtClass::PERF => {
                let p = port_arg(m, req.modifier)?;
                let counters = m.counters(p).ok_or(Status::INVALID_VALUE)?;
                emit(
                    class,
                    &PortCounters {
                        port_select: p.index() as u8,
                        counters,
                    },
                    PortCounters::emit,
                )
            }
            PortCountersExtended::ID if class == MgmtClass::PERF => {
                let p = port_arg(m, req.modifier)?;
                let counters = m.link_counters(p).ok_or(Status::METHOD_ATTR_UNSUPPORTED)?;
                emit(
                    class,
                    &PortCountersExtended {
                        port_select: p.index() as u8,
                        counters,
                    },
                    PortCountersExtended::emit,
                )
            }
            _ => Err(Status::METHOD_ATTR_UNSUPPORTED),
        }
    }

    /// Applies a Set: every field is checked before anything changes.
    pub(super) fn set<M: Managed + ?Sized>(
        &mut self,
        now: Time,
        m: &mut M,
        req: &MadRepr,
        input: &Incoming<'_>,
    ) -> Res<()> {
        let smp = req.class.is_smp();
        match req.attribute {
            SmInfo::ID if smp => {
                let info = SmInfo::parse(&req.data).map_err(|_| Status::INVALID_VALUE)?;
                m.sm_control(input.port, input.src, req.modifier, &info)
                    .ok_or(Status::METHOD_ATTR_UNSUPPORTED)??;
            }
            NodeDescription::ID if smp => {
                let d = NodeDescription::parse(&req.data).map_err(|_| Status::INVALID_VALUE)?;
                self.cfg.description = d.0.clone();
                m.set_name(&d.0);
            }
            PortInfo::ID if smp => {
                let p = port_arg(m, req.modifier)?;
                let cur = m.port(p).ok_or(Status::INVALID_VALUE)?;
                let new = PortInfo::parse(&req.data).map_err(|_| Status::INVALID_VALUE)?;
                let up = match new.port_state {
                    PortInfo::ACTIVE => true,
                    PortInfo::DOWN => false,
                    _ => return Err(Status::INVALID_VALUE),
                };
                if new.mkey_protect_bits > 3
                    || (new.cost == 0 && new.cost != cur.cost)
                    || (new.mtu != 0 && new.mtu < 64)
                    || (new.address != cur.address && !new.address.is_node())
                    || !(new.manager_address == Address::UNSPECIFIED
                        || new.manager_address.is_node())
                {
                    return Err(Status::INVALID_VALUE);
                }
                if new.mtu != cur.mtu {
                    m.set_mtu(p, new.mtu)?;
                }
                if new.cost != cur.cost {
                    m.set_cost(p, new.cost)?;
                }
                if up != cur.up {
                    m.set_port_up(p, up)?;
                }
                if new.address != cur.address {
                    m.set_address(p, new.address)?;
                }
                self.cfg.manager = new.manager_address;
                self.set_mkey(new.mkey, new.mkey_protect_bits, new.mkey_lease_period);
            }
            PartitionTable::ID if smp && req.modifier >> 16 != 0 => {
                let (member, block) = PartitionTable::split_modifier(req.modifier);
                let refused = if self.cfg.node_type != NodeType::Router {
                    Err(Status::INVALID_VALUE)
                } else {
                    PartitionTable::parse(&req.data)
                        .map_err(|_| Status::INVALID_VALUE)
                        .and_then(|t| {
                            self.member_tables
                                .set(now, input.port, member, block, &t, input.src)
                        })
                };
                if refused.is_err() {
                    self.stats.member_tables_refused += 1;
                }
                refused?;
            }
            PartitionTable::ID if smp => {
                let refused = self.set_partition_block(req);
                if refused.is_err() {
                    self.stats.partition_sets_refused += 1;
                }
                refused?;
            }
            PortCounters::ID if req.class == MgmtClass::PERF => {
                let p = port_arg(m, req.modifier)?;
                m.clear_counters(p)?;
            }
            PortCountersExtended::ID if req.class == MgmtClass::PERF => {
                let p = port_arg(m, req.modifier)?;
                if m.link_counters(p).is_none() {
                    return Err(Status::METHOD_ATTR_UNSUPPORTED);
                }
                m.clear_counters(p)?;
            }
            _ => return Err(Status::METHOD_ATTR_UNSUPPORTED),
        }
        self.stats.sets += 1;
        self.event(AgentEvent::Set {
            attribute: req.attribute,
            modifier: req.modifier,
            from: input.src,
        });
        Ok(())
    }

    /// Set(PartitionTable): block `modifier` (0 or 1) replaced, when it
    /// parses (no entry of key 0 with the full bit, no key twice) and no
    /// key of it is in the other block.
    fn set_partition_block(&mut self, req: &MadRepr) -> Res<()> {
        let b = usize::try_from(req.modifier)
            .ok()
            .filter(|b| *b < self.partition_blocks.len())
            .ok_or(Status::INVALID_VALUE)?;
        let new = PartitionTable::parse(&req.data).map_err(|_| Status::INVALID_VALUE)?;
        let mut others = self
            .partition_blocks
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != b)
            .flat_map(|(_, v)| v);
        if others.any(|(o, _)| new.entries.iter().any(|(k, _)| k == o)) {
            return Err(Status::INVALID_VALUE);
        }
        self.partition_blocks[b] = new.to_entries();
        self.partition_table = self.partition_blocks.concat();
        Ok(())
    }
}
