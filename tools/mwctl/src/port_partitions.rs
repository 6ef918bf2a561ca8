//! `mwctl show partitions`: per HR, the partitions the router enforces at
//! the boundary of that HR's SAN and where their tables come from
//! (docs/partitions.md "At the routers"), from `show management`'s
//! `port_partitions`.

use std::fmt::Write as _;

use admin::view::{ManagementInfo, PortPartitionsRow};
use serde_json::Value;

use crate::table::Table;

/// The JSON (the rows) and the text of `mwctl show partitions`.
pub fn render(m: &ManagementInfo) -> (Value, String) {
    let json = serde_json::to_value(&m.port_partitions).unwrap_or_default();
    if m.port_partitions.is_empty() {
        return (json, "this daemon enforces no partitions\n".to_string());
    }
    (json, text(&m.port_partitions))
}

/// Where a port's tables come from, in words.
fn source(r: &PortPartitionsRow) -> String {
    let when = r
        .since_unix_s
        .map(|s| format!(", since {}", crate::discover_html::utc_text(s)))
        .unwrap_or_default();
    match (r.source.as_str(), r.master) {
        ("this-box", _) => format!("this box's master{when}"),
        ("master", Some(a)) => format!("the master at {a}{when}"),
        ("configured", _) => format!("management.static_partitions{when}"),
        _ => "no master has given tables".to_string(),
    }
}

/// Partitions in the compact form of `mwctl show partitions` and
/// `mwctl discover`: their keys (as `0x0010`, with whatever a caller adds
/// after each) one space apart.
pub fn keys_text(keys: impl IntoIterator<Item = String>) -> String {
    keys.into_iter().collect::<Vec<_>>().join(" ")
}

/// The table: port, HR, partitions (open, or their keys), nodes, source.
pub fn text(rows: &[PortPartitionsRow]) -> String {
    let mut t = Table::new(&["port", "hr", "partitions", "nodes", "from"]);
    let mut notes = String::new();
    for r in rows {
        t.row(vec![
            r.port.to_string(),
            r.hr.to_string(),
            if r.open {
                "open".to_string()
            } else {
                keys_text(r.keys.iter().cloned())
            },
            r.nodes.to_string(),
            source(r),
        ]);
        if let Some(e) = &r.refused {
            let _ = writeln!(
                notes,
                "port {}: the last tables given were not taken ({e}); those above stay in force",
                r.port
            );
        }
    }
    let mut out = t.render();
    out.push_str(&notes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rrp::{Address, PortId};

    #[test]
    fn open_ports_and_keys_with_their_source() {
        let rows = vec![
            PortPartitionsRow {
                port: PortId::new(0),
                hr: Address(0x0140),
                open: false,
                keys: vec!["0x7fff".into(), "0x0010".into()],
                nodes: 4,
                source: "master".into(),
                master: Some(Address(0x0101)),
                since_unix_s: None,
                refused: Some("more than 64 partitions on one SAN".into()),
            },
            PortPartitionsRow {
                port: PortId::new(1),
                hr: Address(0x0240),
                open: true,
                keys: Vec::new(),
                nodes: 0,
                source: "none".into(),
                master: None,
                since_unix_s: None,
                refused: None,
            },
        ];
        let s = text(&rows);
        assert!(s.contains("0x7fff 0x0010"), "{s}");
        assert!(s.contains("the master at 0x0101"), "{s}");
        assert!(s.contains("open"), "{s}");
        assert!(
            s.contains("port 0: the last tables given were not taken"),
            "{s}"
        );
    }
}
