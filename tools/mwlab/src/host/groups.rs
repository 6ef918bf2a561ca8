//! Group membership of a host (`join`, `leave`): listening to a group, told
//! to the SAN and, where there is one, asked of the SAN manager first.

use std::time::Duration;

use rrp::Address;
use serde_json::{Value, json};

use super::control::{addr_arg, u64_arg};
use super::format::hex;
use super::management;
use super::state::{Host, Reply};
use mgmt::partition::PartitionKey;

use super::partitions::partition_arg;

impl Host<'_> {
    /// `{"cmd":"join","group":G}` and `{"cmd":"leave","group":G}`: listen
    /// to group G (a logical address) or stop, and tell the SAN at once (an
    /// RRP#5 about itself to every member, docs/multicast.md "Joining").
    /// A join may name the group's partition, `"partition":"0x0010"` (the
    /// default partition when none is named; docs/multicast.md "Groups in
    /// partitions").
    pub(super) fn cmd_group(&self, req: &Value, join: bool) -> Reply {
        let g = addr_arg(req, "group")?;
        if !g.is_logical() {
            return Err(format!(
                "group: {} is not a logical address (0x8000-0xFFFD)",
                hex(g)
            ));
        }
        // With a SAN manager (the address its agent reports traps to, which
        // the master sets), the join is the manager's to accept first; a
        // leave is told to it too (best effort).
        let mtu = u64_arg(req, "mtu")?.unwrap_or(0);
        let mtu = u32::try_from(mtu).map_err(|_| "mtu: too large")?;
        let partition = partition_arg(req)?
            .and_then(PartitionKey::new)
            .unwrap_or(PartitionKey::DEFAULT);
        let asked = if join || self.lock().node.listens(g) {
            self.at_manager(g, mtu, partition, join)?
        } else {
            None
        };
        if let Some(st) = asked
            && join
            && !st.is_ok()
        {
            return Err(format!("join refused by the SAN manager: {st}"));
        }
        let mut st = self.lock();
        let changed = if join {
            st.node.join(g)
        } else {
            st.node.leave(g)
        };
        if join && !changed && !st.node.listens(g) {
            return Err(format!(
                "{}: at most {} groups",
                hex(g),
                rrp::node::MAX_GROUPS
            ));
        }
        let announce = st.node.announce();
        drop(st);
        let told = !changed || self.send_all(&announce);
        Ok(json!({
            "group": hex(g),
            "changed": changed,
            "told": told,
            "manager": asked.map(|s| s.describe()),
            "partition": format!("{partition}"),
        }))
    }

    /// A join (McMemberRecord Set) or leave (Delete) of group `g` at the
    /// SAN manager its agent knows (the master's address, which the master
    /// sets in every agent's PortInfo), and the status it answered; `None`
    /// when there is none (no management on this host, no manager known,
    /// no answer from it), and the host joins on its own (routers learn it
    /// from R4 either way). The join names `partition`.
    pub(super) fn at_manager(
        &self,
        g: Address,
        mtu: u32,
        partition: PartitionKey,
        join: bool,
    ) -> Result<Option<mgmt::wire::Status>, String> {
        use mgmt::attr::McMemberRecord;
        use mgmt::attr::mc_member_record::FULL_MEMBER;
        use mgmt::wire::{Method, MgmtClass};
        let Some(tx) = &self.mgmt else {
            return Ok(None);
        };
        let (itx, irx) = std::sync::mpsc::sync_channel(1);
        if tx.send(management::Input::Info { reply: itx }).is_err() {
            return Ok(None);
        }
        let Ok(info) = irx.recv_timeout(Duration::from_secs(2)) else {
            return Ok(None);
        };
        let Some(manager) = info.manager.filter(|m| m.is_node()) else {
            return Ok(None);
        };
        let mut data = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
        McMemberRecord {
            group: g,
            join_state: FULL_MEMBER,
            mtu,
            partition: partition.get(),
            ..Default::default()
        }
        .emit(&mut data)
        .map_err(|e| e.to_string())?;
        let request = mgmt::client::Request {
            target: mgmt::client::Target::Address(manager),
            class: MgmtClass::SUBN_ADM,
            method: if join { Method::SET } else { Method::DELETE },
            attribute: McMemberRecord::ID,
            modifier: 0,
            mkey: 0,
            data,
            timeout_ms: 200,
            retries: 2,
        };
        let (rtx, rrx) = std::sync::mpsc::sync_channel(1);
        if tx
            .send(management::Input::Mad {
                request,
                reply: rtx,
            })
            .is_err()
        {
            return Ok(None);
        }
        // No answer: the address traps go to runs no master (SubnAdm goes
        // unanswered there), and the SAN has no manager to ask: the host
        // joins on its own, as on a SAN without one.
        Ok(match rrx.recv_timeout(Duration::from_secs(3)) {
            Ok(Ok(a)) => Some(a.mad.status),
            Ok(Err(_)) | Err(_) => None,
        })
    }
}
