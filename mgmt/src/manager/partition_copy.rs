//! Which partitions a manager gives, and a standby's copy of its master's
//! (docs/partitions.md "Standbys", docs/manager.md "Partition tables",
//! docs/spec-notes.md 75). The SAN's partitions are the master's: a master
//! gives its own (its box's partitions file, or the default); a standby
//! copies the master's at every poll that finds it master, by a SubnAdm
//! GetTable of PartitionsText (the master's partitions as text, a chunk an
//! answer), only when their version is not the one it holds, and holds the
//! copy in force; a standby that becomes master goes on giving the copy
//! until its own partitions are given again (its box reads its file again:
//! a reload), so that a failover never changes the members' tables. A copy
//! that is too large, not of the version announced, not UTF-8 or does not
//! parse is refused whole and counted once; the partitions held do not
//! change.

use rrp::Address;

use crate::attr::PartitionsText;
use crate::client::{Answer, Failure, Request, Target};
use crate::partition::Partitions;
use crate::partition::file::{MAX_FILE_BYTES, text_version};
use crate::wire::{Method, MgmtClass, Status};

use super::{Manager, ManagerEvent, Purpose, SmState, Time};

/// The master's partitions as a standby copied them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionsCopy {
    /// The master copied from.
    pub master: Address,
    /// Their version (`Partitions::version`).
    pub version: u64,
    /// When the copy was taken (the manager's time).
    pub at: Time,
    /// The partitions.
    pub partitions: Partitions,
}

/// A copy under way: the text read so far.
#[derive(Debug, Clone)]
pub(super) struct Copying {
    master: Address,
    version: u64,
    total: u32,
    text: Vec<u8>,
}

/// The partitions' text and its version: what a master answers from.
pub(super) fn text_of(p: &Partitions) -> (u64, Vec<u8>) {
    let text = p.to_text().into_bytes();
    (text_version(&text), text)
}

impl Manager {
    /// The box's own partitions (its file, or the default): in force at
    /// once, unless this manager is not master and holds its master's copy
    /// (then they are kept for later and the copy stays in force). As
    /// master, the copy it held is dropped and the members whose table
    /// changes are Set at once.
    pub fn set_partitions(&mut self, partitions: Partitions) {
        self.own_partitions = partitions.clone();
        if self.copy.is_some() && self.state != SmState::Master {
            return;
        }
        self.copy = None;
        self.in_force(partitions);
    }

    /// The box's own partitions, as last given.
    pub fn own_partitions(&self) -> &Partitions {
        &self.own_partitions
    }

    /// The master's partitions this manager copied, when it holds a copy:
    /// then they are the ones in force ([`Manager::partitions`]).
    pub fn partitions_copy(&self) -> Option<&PartitionsCopy> {
        self.copy.as_ref()
    }

    /// The partitions in force from `offset` on, as one record of a
    /// GetTableResp of PartitionsText holds them (the master's answer).
    pub fn partitions_text(&self, offset: u32) -> PartitionsText {
        let (version, text) = &self.partitions_text;
        PartitionsText::chunk_of(text, *version, offset)
    }

    fn in_force(&mut self, partitions: Partitions) {
        self.put_in_force(partitions);
        self.partitions_text = text_of(&self.partitions);
    }

    /// A standby copies its master's partitions: a GetTable of
    /// PartitionsText from `offset` on.
    pub(super) fn sync_partitions(&mut self, master: Address, offset: u32) {
        let mut data = vec![0u8; MgmtClass::SUBN_ADM.attribute_len()];
        if PartitionsText::from_offset(offset).emit(&mut data).is_err() {
            return;
        }
        let request = Request {
            target: Target::Address(master),
            class: MgmtClass::SUBN_ADM,
            method: Method::GET_TABLE,
            attribute: PartitionsText::ID,
            modifier: 0,
            mkey: 0,
            data,
            timeout_ms: self.cfg.timers.timeout_ms,
            retries: self.cfg.timers.retries,
        };
        self.start(request, Purpose::SyncPartitions { master, offset });
    }

    /// A chunk of the master's partitions: the first says whether the copy
    /// held is current; the others are added to the copy under way, which
    /// is taken when whole. No answer, or an answer that does not follow
    /// (another version, another offset): the copy under way is dropped,
    /// the next poll starts again.
    pub(super) fn on_sync_partitions(
        &mut self,
        now: Time,
        master: Address,
        offset: u32,
        result: &Result<Answer, Failure>,
    ) {
        let chunk = match result {
            Ok(a) if a.mad.status == Status::OK => PartitionsText::parse(&a.mad.data).ok(),
            _ => None,
        };
        let Some(r) = chunk.filter(|_| self.state == SmState::Standby) else {
            self.copying = None;
            return;
        };
        if self.master != Some(master) || r.offset != offset {
            self.copying = None;
            return;
        }
        if offset == 0 {
            if self.copy.as_ref().is_some_and(|c| c.version == r.version)
                || self.copy_refused == Some(r.version)
            {
                self.copying = None;
                return;
            }
            if r.total as usize > MAX_FILE_BYTES {
                self.refuse_copy(
                    master,
                    r.version,
                    format!("{} bytes, more than {MAX_FILE_BYTES}", r.total),
                );
                return;
            }
            self.copying = Some(Copying {
                master,
                version: r.version,
                total: r.total,
                text: Vec::new(),
            });
        }
        let Some(c) = self.copying.as_mut() else {
            return;
        };
        let follows = c.master == master
            && c.version == r.version
            && c.total == r.total
            && c.text.len() == offset as usize
            && c.text.len() + r.text.len() <= c.total as usize
            && (!r.text.is_empty() || c.text.len() == c.total as usize);
        if !follows {
            self.copying = None;
            return;
        }
        c.text.extend_from_slice(&r.text);
        if c.text.len() < c.total as usize {
            let next = c.text.len() as u32;
            self.sync_partitions(master, next);
            return;
        }
        if let Some(c) = self.copying.take() {
            self.take_copy(now, c);
        }
    }

    /// A whole copy: checked, parsed, held in force; or refused whole.
    fn take_copy(&mut self, now: Time, c: Copying) {
        if text_version(&c.text) != c.version {
            return self.refuse_copy(c.master, c.version, "not of the version announced".into());
        }
        let text = match String::from_utf8(c.text) {
            Ok(t) => t,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                return self.refuse_copy(c.master, c.version, format!("not UTF-8 (byte {at})"));
            }
        };
        if text.is_empty() {
            return self.refuse_copy(c.master, c.version, "empty".into());
        }
        match crate::partition::parse(&text) {
            Ok(p) => {
                self.stats.partitions_copied += 1;
                self.copy_refused = None;
                self.event(ManagerEvent::PartitionsCopied {
                    master: c.master,
                    version: c.version,
                    partitions: p.list.len(),
                });
                self.copy = Some(PartitionsCopy {
                    master: c.master,
                    version: c.version,
                    at: now,
                    partitions: p.clone(),
                });
                self.in_force(p);
            }
            Err(errs) => {
                let why = errs
                    .first()
                    .map_or_else(|| "does not parse".into(), |e| e.to_string());
                self.refuse_copy(c.master, c.version, why);
            }
        }
    }

    fn refuse_copy(&mut self, master: Address, version: u64, why: String) {
        self.copying = None;
        self.copy_refused = Some(version);
        self.stats.partitions_copy_refused += 1;
        self.event(ManagerEvent::PartitionsCopyRefused {
            master,
            version,
            why,
        });
    }
}
