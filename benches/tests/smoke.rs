//! The engine-bench binary runs (`--quick --json`) and prints one JSON
//! object with every figure positive. No performance target is checked
//! here: the machine running the tests may be anything.

use std::process::Command;
use std::time::Instant;

#[test]
fn engine_bench_quick_json() {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_engine-bench"))
        .args(["--quick", "--json"])
        .output()
        .expect("engine-bench runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "engine-bench failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let o = v.as_object().expect("an object");
    let mut keys = Vec::new();
    for size in [64, 1500] {
        for k in ["l3", "l2", "baseline"] {
            keys.push(format!("{k}_{size}_mpps"));
            keys.push(format!("{k}_{size}_ns"));
        }
        for k in ["l3", "l2"] {
            keys.push(format!("{k}_{size}_vs_baseline"));
        }
        for k in ["mpps", "copies_mpps", "ns"] {
            keys.push(format!("mcast_{size}_{k}"));
        }
    }
    // The scaling figure (one worker, then one per core) where there are
    // two cores.
    if benches::sysinfo::cpus() >= 2 {
        keys.extend(["scale_1_mpps", "scale_2_mpps", "scale_2_vs_1"].map(String::from));
    }
    for k in &keys {
        let x = o
            .get(k)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or_else(|| panic!("{k} missing or not a number: {stdout}"));
        assert!(x > 0.0 && x.is_finite(), "{k} = {x}");
    }
    for k in ["packets_per_run", "runs"] {
        let n = o.get(k).and_then(serde_json::Value::as_u64);
        assert!(n.is_some_and(|n| n > 0), "{k}: {stdout}");
    }
    for k in ["date", "cpu", "rustc"] {
        let s = o.get(k).and_then(serde_json::Value::as_str);
        assert!(s.is_some_and(|s| !s.is_empty()), "{k}: {stdout}");
    }
    eprintln!("engine-bench --quick took {:?}", t.elapsed());
}
