//! The `mwsim` command: text and JSON reports, paths, bad arguments.

use std::process::Command;

fn mwsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mwsim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn appendix_b_as_json_with_a_path() {
    let (code, out, err) = mwsim(&["examples/appendix-b.toml", "--json", "--path", "H2", "H8"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    for key in [
        "converged",
        "converge_virtual_ms",
        "messages",
        "max_rts_per_hr",
        "loops",
        "wall_ms",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {out}");
    }
    assert_eq!(v["converged"], true);
    assert_eq!(v["loops"], 0);
    assert_eq!(
        v["max_rts_per_hr"], 16,
        "k = 4 RTs for each of the 4 other SANs"
    );
    assert_eq!(v["path"], serde_json::json!(["bd1", "de"]));
}

#[test]
fn random_topology_with_faults_in_text() {
    let (code, out, err) = mwsim(&[
        "--random",
        "6,9",
        "--hosts-per-san",
        "2",
        "--seed",
        "3",
        "--loss",
        "0.01",
        "--flap",
        "1",
        "--crash",
        "1",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("converged            yes"), "{out}");
    assert!(out.contains("reconvergence"), "{out}");
    assert!(out.contains("loops once quiet     0"), "{out}");
}

#[test]
fn a_random_topology_is_printed_as_a_file_that_reads_back_the_same() {
    let args = [
        "--random",
        "6,9",
        "--hosts-per-san",
        "2",
        "--seed",
        "3",
        "--print-topology",
    ];
    let (code, out, err) = mwsim(&args);
    assert_eq!(code, 0, "{err}");
    let t = mwsim::topology::Topology::from_toml(&out).unwrap();
    assert_eq!((t.sans.len(), t.routers.len(), t.hosts.len()), (6, 9, 12));
    assert_eq!(t.to_toml(), out);
    // The same seed, the same network; the simulation is not run.
    assert_eq!(mwsim(&args).1, out);
    assert!(!out.contains("converged"), "{out}");
}

#[test]
fn bad_arguments_exit_2() {
    assert_eq!(mwsim(&[]).0, 2);
    assert_eq!(mwsim(&["--random", "x"]).0, 2);
    assert_eq!(mwsim(&["--random", "1,0"]).0, 2);
    let (code, _, err) = mwsim(&["no-such-file.toml"]);
    assert_eq!(code, 2);
    assert!(err.contains("no-such-file.toml"), "{err}");
    assert_eq!(mwsim(&["examples/appendix-b.toml", "--loss", "2"]).0, 2);
}
