//! What the host's management ([`super::management`]) sees of the host:
//! its address, port, counters and neighbours, and how it sends.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use rrp::wire::Message;
use rrp::{Address, NativeAddr};

use mgmt::agent::PortFacts;
use mgmt::attr::{PortCounters, PortInfo};

use mgmt::partition::{Membership, PartitionKey};

use super::management::HostSide;
use super::partitions::HostPartitions;
use super::state::Host;
use super::traffic::{RxTraffic, TxTraffic};

impl HostSide for Host<'_> {
    fn address(&self) -> Address {
        self.me()
    }

    /// The address its SAN's manager gave: RRP answers carry it from now
    /// on, and an RRP#7 to each of its HRs has them ask who it is.
    fn set_address(&self, address: Address) {
        self.me.store(address.0, Ordering::Relaxed);
        let mut st = self.lock();
        st.node.set_address(address);
        for (hr, n) in &self.spec.hrs {
            if let Ok(mut bytes) = Message::WhoAreYou
                .to_packet(Address(*hr), address)
                .and_then(|p| p.to_bytes())
            {
                st.node.sign(&mut bytes);
                let _ = self.link.send(&bytes, n);
            }
        }
    }

    fn port(&self) -> PortFacts {
        let m = self.spec.management.as_ref();
        PortFacts {
            address: self.me(),
            san_id: Address(m.map_or(0, |m| m.san_id)),
            mtu: m.map_or(0, |m| m.mtu),
            cost: 0,
            up: true,
            link_kind: PortInfo::link_kind_of(self.link.kind()),
            native: self.link.native(),
            lrt_entries: 0,
            buddies: self.spec.hrs.len().min(usize::from(u16::MAX)) as u16,
        }
    }

    /// The host's traffic in the router's slots: `received` all datagrams,
    /// `rx_errors` the socket's receive errors, `punted` the RRP/ERR and
    /// management packets (what a router hands its control plane),
    /// `transmitted` probes and replies sent, `inject_failed` sends the
    /// link refused, `dropped.bad-header` the malformed ones.
    fn counters(&self) -> Vec<u64> {
        let st = self.lock();
        let mut c = vec![0u64; PortCounters::COUNT];
        let mut put = |name: &str, v: u64| {
            if let Some(i) = PortCounters::NAMES.iter().position(|n| *n == name) {
                c[i] = v;
            }
        };
        let control: u64 = st.rx.control.values().sum();
        let sent: u64 = st.tx.sent.values().sum();
        put("received", st.rx.datagrams);
        put("rx_errors", st.rx.recv_errors);
        put("punted", control + st.rx.management);
        put(
            "transmitted",
            sent + st.rx.rrp7_answered + st.rx.rrp4_answered,
        );
        put("inject_failed", st.tx.send_errors + st.rx.reply_errors);
        put("dropped.bad-header", st.rx.malformed);
        c
    }

    fn clear_counters(&self) {
        let mut st = self.lock();
        st.rx = RxTraffic::default();
        st.tx = TxTraffic::default();
    }

    fn first_hop(&self, dst: Address) -> Option<NativeAddr> {
        let mut st = self.lock();
        Host::first_hop(self, &mut st, dst)
    }

    /// An empty `to` is every member of the SAN: each neighbour.
    fn send(&self, packet: &[u8], to: &NativeAddr) -> bool {
        // Signed on a keyed SAN, as the node's own packets are.
        let mut signed = packet.to_vec();
        self.lock().node.sign(&mut signed);
        let packet = &signed[..];
        if to.is_empty() {
            let all: BTreeSet<NativeAddr> = self.lock().neighbours.values().copied().collect();
            return all.iter().all(|n| self.link.send(packet, n).is_ok());
        }
        self.link.send(packet, to).is_ok()
    }

    fn set_partitions(&self, table: &[(PartitionKey, Membership)]) {
        self.lock().partitions = HostPartitions::of(table);
    }

    fn neighbours(&self) -> Vec<Address> {
        self.lock().neighbours.keys().copied().collect()
    }

    fn native_of(&self, address: Address) -> Option<NativeAddr> {
        self.lock().neighbours.get(&address).copied()
    }

    fn neighbour(&self, native: &NativeAddr) -> Option<Address> {
        let st = self.lock();
        st.neighbours
            .iter()
            .find(|(_, n)| *n == native)
            .map(|(a, _)| *a)
    }
}
