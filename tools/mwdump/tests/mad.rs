//! Management packets (PT 0x0006) decode in text and JSON: the byte-exact
//! vectors of mgmt/tests/vectors, as a whole packet and wrapped in one.

mod common;

use common::*;
use serde_json::Value;

fn vector(name: &str) -> String {
    let p = workspace().join("mgmt/tests/vectors").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A bare MAD vector in an EEP packet: DA 0xFFFE (Hey-You, as a directed
/// route travels), SA 0x0101, PT 0x0006, DL 32; EI 0.
fn wrapped(name: &str) -> String {
    format!(
        "ff fe 00 05 00 06 00 00 00 00 00 20 01 01 00 00\n{}\n00 00 00 00 00 00 00 00",
        vector(name)
    )
}

fn one(hex: &str) -> Value {
    let run = json_hex(&[], hex);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v.len(), 1);
    assert_packet_shape(&v[0]);
    v[0].clone()
}

#[test]
fn the_packet_vector_in_json_and_text() {
    let hex = vector("packet-subn-get-node-info.hex");
    let v = one(&hex);
    assert_eq!(v["kind"], "MANAGEMENT");
    assert_eq!(v["message"], Value::Null);
    let m = &v["mad"];
    assert_eq!(m["offset"], 16);
    assert_eq!(m["class"], 1);
    assert_eq!(m["class_name"], "Subn");
    assert_eq!(m["method"], 1);
    assert_eq!(m["method_name"], "Get");
    assert_eq!(m["response"], false);
    assert_eq!(m["status"], 0);
    assert_eq!(m["status_text"], "ok");
    assert_eq!(m["tid_hex"], "0x1122334455667788");
    assert_eq!(m["attribute"], 0x11);
    assert_eq!(m["attribute_name"], "NodeInfo");
    assert_eq!(m["modifier"], 0);
    assert_eq!(m["mkey_hex"], "0x0123456789abcdef");
    assert_eq!(m["dr"], Value::Null);
    // A Get's attribute area is empty: neither fields nor hex.
    assert_eq!(m["fields"], Value::Null);
    assert_eq!(m["attribute_hex"], Value::Null);

    let t = mwdump(&["--hex", &hex], b"");
    assert_eq!(t.code, 0, "{}", t.stderr);
    for want in [
        "MANAGEMENT packet at frame byte 0, 280 bytes",
        "MAD @16: Subn (0x01) class version 1, Get (0x01) request, status 0x0000 (ok)",
        "TID        0x1122334455667788",
        "attribute  NodeInfo (0x0011), modifier 0x00000000",
        "M_Key      0x0123456789abcdef",
    ] {
        assert!(t.stdout.contains(want), "{want:?} in\n{}", t.stdout);
    }
}

#[test]
fn node_info_answer() {
    let v = one(&wrapped("subn-getresp-node-info.hex"));
    let m = &v["mad"];
    assert_eq!(m["method_name"], "GetResp");
    assert_eq!(m["response"], true);
    let f = &m["fields"];
    assert_eq!(f["node_type"], 3);
    assert_eq!(f["num_ports"], 2);
    assert_eq!(f["node_identity_hex"], "0x0200000000000a01");
    assert_eq!(f["port_identity_hex"], "0x0200000000000a02");
    assert_eq!(f["implementation_level"], 4);
    assert_eq!(f["revision"], 0x100);
    assert_eq!(f["local_port_address"], 0x0111);
    let t = mwdump(&["--hex", &wrapped("subn-getresp-node-info.hex")], b"");
    assert!(
        t.stdout.contains("node_type              3 (router)"),
        "{}",
        t.stdout
    );
    assert!(
        t.stdout
            .contains("revision               0x00000100 (0.1.0)")
    );
}

#[test]
fn directed_route_with_both_paths() {
    let hex = wrapped("dr-getresp-port-info-returning.hex");
    let v = one(&hex);
    assert_eq!(v["header"]["dst_class"], "hey-you");
    let m = &v["mad"];
    assert_eq!(m["class_name"], "SubnDR");
    let dr = &m["dr"];
    assert_eq!(dr["returning"], true);
    assert_eq!(dr["hop_pointer"], 1);
    assert_eq!(dr["hop_count"], 2);
    let ip = dr["initial_path"].as_array().unwrap();
    assert_eq!(ip.len(), 2);
    assert_eq!(ip[0]["offset"], 16 + 128);
    assert_eq!(ip[0]["hr"], 0);
    assert_eq!(ip[0]["mac"], "02:00:00:00:01:11");
    assert_eq!(ip[1]["offset"], 16 + 137);
    assert_eq!(ip[1]["hr"], 0x0113);
    let rp = dr["return_path"].as_array().unwrap();
    assert_eq!(rp.len(), 2);
    assert_eq!(rp[1]["hr"], 0x0122);
    assert_eq!(rp[1]["native_hex"], "020000000113");
    let f = &m["fields"];
    assert_eq!(f["address"], 0x0122);
    assert_eq!(f["mtu"], 1500);
    assert_eq!(f["port_state"], 4);
    assert_eq!(f["link_kind"], 2);
    assert_eq!(f["native_mac"], "02:00:00:00:01:22");
    let t = mwdump(&["--hex", &hex], b"");
    for want in [
        "directed route: returning, hop pointer 1, hop count 2",
        "InitialPath[1] @153: HR 0x0113 native 02:00:00:00:01:22",
        "ReturnPath[0] @208: HR 0x0111 native 02:00:00:00:01:01",
        "port_state         4 (active)",
    ] {
        assert!(t.stdout.contains(want), "{want:?} in\n{}", t.stdout);
    }
}

#[test]
fn counters_and_traps() {
    let v = one(&wrapped("perf-getresp-port-counters.hex"));
    let f = &v["mad"]["fields"];
    assert_eq!(f["counter_count"], 21);
    assert_eq!(f["counters"]["received"], 1000);
    assert_eq!(f["counters"]["dropped.no-route"], 7);
    assert_eq!(f["counters"].as_object().unwrap().len(), 21);

    let v = one(&wrapped("perf-getresp-port-counters-extended.hex"));
    assert_eq!(v["mad"]["attribute_name"], "PortCountersExtended");
    let f = &v["mad"]["fields"];
    assert_eq!(f["port_select"], 1);
    assert_eq!(f["counter_count"], 6);
    assert_eq!(f["counters"]["rx_bytes"], 0x0000_0001_2345_6789u64);
    assert_eq!(f["counters"]["rx_missed"], 12);
    assert_eq!(f["counters"]["tx_link_errors"], 1);
    assert_eq!(f["counters"].as_object().unwrap().len(), 6);

    let v = one(&wrapped("subn-trap-bad-mkey.hex"));
    let m = &v["mad"];
    assert_eq!(m["method_name"], "Trap");
    let f = &m["fields"];
    assert_eq!(f["trap_number"], 256);
    assert_eq!(f["type"], 2);
    assert_eq!(f["details"]["requester"], 0x0105);
    assert_eq!(f["details"]["key_hex"], "0xdeadbeef00000001");
    let t = mwdump(&["--hex", &wrapped("subn-trap-bad-mkey.hex")], b"");
    assert!(
        t.stdout.contains("trap_number    256 (bad M_Key)"),
        "{}",
        t.stdout
    );
}

#[test]
fn an_authentication_trap() {
    let v = one(&wrapped("subn-trap-auth-refused.hex"));
    let f = &v["mad"]["fields"];
    assert_eq!(f["trap_number"], 1027);
    assert_eq!(f["type"], 2);
    assert_eq!(f["issuer"], 0x0521);
    let d = &f["details"];
    assert_eq!(d["from"], 0x0599);
    assert_eq!(d["port"], 0);
    assert_eq!(d["reason"], 0);
    assert_eq!(d["native_mac"], "02:00:00:00:05:99");
    let t = mwdump(&["--hex", &wrapped("subn-trap-auth-refused.hex")], b"");
    assert!(
        t.stdout
            .contains("trap_number    1027 (authentication refused)"),
        "{}",
        t.stdout
    );
    assert!(t.stdout.contains("0 (missing)"), "{}", t.stdout);
}

#[test]
fn a_table_of_address_records() {
    let v = one(&wrapped("subnadm-gettableresp-address-record.hex"));
    let m = &v["mad"];
    assert_eq!(m["class_name"], "SubnAdm");
    assert_eq!(m["method_name"], "GetTableResp");
    assert_eq!(m["attribute_name"], "AddressRecord");
    let r = m["fields"]["records"].as_array().expect("records");
    assert_eq!(r.len(), 2);
    assert_eq!(r[0]["identity_hex"], "0x0200000000000a01");
    assert_eq!(r[0]["address"], 0x0111);
    assert_eq!(r[1]["identity"], 0x13);
    assert_eq!(r[1]["address"], 0x0181);
    let t = mwdump(
        &["--hex", &wrapped("subnadm-gettableresp-address-record.hex")],
        b"",
    );
    assert_eq!(t.code, 0, "{}", t.stderr);
    assert!(t.stdout.contains("GetTableResp (0x92)"), "{}", t.stdout);
}

#[test]
fn a_partition_table_block() {
    let v = one(&wrapped("subn-set-partition-table.hex"));
    let m = &v["mad"];
    assert_eq!(m["method_name"], "Set");
    assert_eq!(m["attribute_name"], "PartitionTable");
    let e = m["fields"]["entries"].as_array().expect("entries");
    assert_eq!(e.len(), 3);
    assert_eq!(e[0]["key"], 0x7FFF);
    assert_eq!(e[0]["membership"], "limited");
    assert_eq!(e[1]["key"], 0x0010);
    assert_eq!(e[1]["membership"], "full");
    let t = mwdump(&["--hex", &wrapped("subn-set-partition-table.hex")], b"");
    assert_eq!(t.code, 0, "{}", t.stderr);
    assert!(t.stdout.contains("PartitionTable (0x0016)"), "{}", t.stdout);
    assert!(t.stdout.contains("0x0010"), "{}", t.stdout);
}

#[test]
fn a_bad_mad_is_an_error_at_its_byte() {
    // BaseVersion 2 in the packet vector: MAD byte 0, frame byte 16.
    let mut hex = vector("packet-subn-get-node-info.hex");
    hex = hex.replacen(
        "01 01 01 01 00 00 00 00  # MAD   0",
        "02 01 01 01 00 00 00 00  # MAD   0",
        1,
    );
    let run = json_hex(&[], &hex);
    assert_eq!(run.code, 1);
    let v = run.json();
    assert_eq!(v[0]["error"]["field"], "mad.base_version");
    assert_eq!(v[0]["error"]["offset"], 16);
    assert_eq!(v[0]["error"]["kind"], "bad_base_version");
    assert!(run.stderr.contains("mad.base_version at frame byte 16"));
    // A management packet whose data block is not one MAD.
    let short = "01 11 00 05 00 06 00 00 00 00 00 01 01 01 00 00 \
                 01 01 01 01 00 00 00 00 00 00 00 00 00 00 00 00";
    let v = json_hex(&[], short).json();
    assert_eq!(v[0]["error"]["field"], "eep.data");
    assert_eq!(v[0]["error"]["kind"], "bad_length");
}
