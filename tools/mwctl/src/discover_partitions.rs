//! The partitions of each node `mwctl discover` finds (docs/management.md
//! "mwctl discover", docs/partitions.md): the node's own table, read with
//! PartitionTable (0x0016, Subn, modifier 0: the node's own, block 0), and
//! block 1 only when block 0 has no empty entry, so that a node costs one
//! Get in the common case. A node that does not answer it, or answers with
//! a status, has partitions unknown: never an error of the walk.

use admin::ClientError;
use mgmt::attr::PartitionTable;
use mgmt::attr::partition_table::{BLOCKS, ENTRIES};
use mgmt::partition::{Membership, PartitionKey};
use rrp::Address;
use serde_json::Value;

use crate::discover::{Ask, Class, Got};

/// A node's table: its partitions in slot order, each with its
/// membership.
pub type Table = Vec<(PartitionKey, Membership)>;

/// The entries of a PartitionTable answer's fields (`{"entries":
/// [["0x0010", "full"], ...]}`); `None` when they are not a block.
pub fn entries_of(fields: &Value) -> Option<Table> {
    serde_json::from_value::<PartitionTable>(fields.clone())
        .ok()
        .map(|b| b.to_entries())
}

/// The own table of the node at `address`; `None` when a block was not
/// answered (or not answered with entries).
pub fn read(ask: &dyn Ask, address: Address) -> Result<Option<Table>, ClientError> {
    let mut table = Table::new();
    for block in 0..BLOCKS {
        let modifier = PartitionTable::modifier(Address::UNSPECIFIED, block);
        let entries = match ask.get(Class::Subn, address, PartitionTable::ID, modifier)? {
            Got::Fields(f) => entries_of(&f),
            Got::Status(_) | Got::NoAnswer => None,
        };
        let Some(entries) = entries else {
            return Ok(None);
        };
        let full = entries.len() == ENTRIES;
        table.extend(entries);
        if !full {
            break;
        }
    }
    Ok(Some(table))
}

/// One entry as text: the key, with `(limited)` after a limited
/// membership.
pub fn entry_text((key, membership): &(PartitionKey, Membership)) -> String {
    match membership {
        Membership::Full => key.to_string(),
        Membership::Limited => format!("{key}(limited)"),
    }
}

/// A node's partitions as text, in the form of `mwctl show partitions`
/// (`0x0010 0x7fff(limited)`); `-` when unknown, `none` for an empty
/// table.
pub fn text(table: Option<&[(PartitionKey, Membership)]>) -> String {
    match table {
        None => "-".to_string(),
        Some([]) => "none".to_string(),
        Some(t) => crate::port_partitions::keys_text(t.iter().map(entry_text)),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use serde_json::json;

    fn key(k: u16) -> PartitionKey {
        PartitionKey::new(k).unwrap()
    }

    /// A node that answers each block with these fields (or status), and
    /// counts the Gets.
    struct Node {
        blocks: Vec<Got>,
        asked: Mutex<Vec<u32>>,
    }

    impl Ask for Node {
        fn get(&self, class: Class, _: Address, attr: u16, m: u32) -> Result<Got, ClientError> {
            assert_eq!((class, attr), (Class::Subn, 0x0016));
            self.asked.lock().unwrap().push(m);
            Ok(self
                .blocks
                .get(m as usize)
                .cloned()
                .unwrap_or(Got::Status(0x1c)))
        }
    }

    fn node(blocks: Vec<Got>) -> Node {
        Node {
            blocks,
            asked: Mutex::new(Vec::new()),
        }
    }

    #[test]
    fn an_answer_is_its_entries_and_text() {
        let f = json!({"entries": [["0x0010", "full"], ["0x7fff", "limited"]]});
        let t = entries_of(&f).unwrap();
        assert_eq!(
            t,
            [
                (key(0x10), Membership::Full),
                (key(0x7fff), Membership::Limited)
            ]
        );
        assert_eq!(text(Some(&t)), "0x0010 0x7fff(limited)");
        assert_eq!(text(None), "-");
        assert_eq!(text(Some(&[])), "none");
        assert_eq!(entries_of(&json!({"entries": [["0x8000", "full"]]})), None);
        assert_eq!(entries_of(&Value::Null), None);
    }

    #[test]
    fn block_1_is_read_only_after_a_full_block_0() {
        let f = json!({"entries": [["0x0010", "full"]]});
        let n = node(vec![Got::Fields(f)]);
        assert_eq!(
            read(&n, Address(0x0101)).unwrap(),
            Some(vec![(key(0x10), Membership::Full)])
        );
        assert_eq!(*n.asked.lock().unwrap(), [0]);

        let full: Vec<Value> = (1..=32u16)
            .map(|k| json!([format!("{k:#06x}"), "full"]))
            .collect();
        let n = node(vec![
            Got::Fields(json!({ "entries": full })),
            Got::Fields(json!({"entries": [["0x7fff", "limited"]]})),
        ]);
        let t = read(&n, Address(0x0101)).unwrap().unwrap();
        assert_eq!(t.len(), 33);
        assert_eq!(t[32], (key(0x7fff), Membership::Limited));
        assert_eq!(*n.asked.lock().unwrap(), [0, 1]);
    }

    #[test]
    fn a_node_that_refuses_or_does_not_answer_has_partitions_unknown() {
        for got in [Got::Status(0x0c), Got::NoAnswer] {
            let n = node(vec![got]);
            assert_eq!(read(&n, Address(0x0101)).unwrap(), None);
        }
    }
}
