//! End to end: changing a running mwrouterd's configuration safely
//! (docs/daemon.md "Changing the configuration safely"): `reload --dry-run`
//! changes nothing, a `--confirm` reload that is not committed returns to
//! the previous configuration, one that is committed stays, `rollback 1`
//! returns, `history` says who asked, a reload that would drop a `route add`
//! says so and needs `--force`, and `write` saves the run-time route so a
//! restart has it back.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use control::config::Config;

mod common;

use common::{free_ports, mwctl, mwctl_all, start_named, wait_for};

fn box_config(dir: &Path, hold_ms: u64) -> Config {
    let [a, b] = free_ports();
    let mut c = common::two_hr_box("safe", dir, [a, b], [&[], &[]]);
    c.admin.socket = dir.join("safe.sock");
    c.timers.hold_ms = hold_ms;
    c
}

/// The running configuration's `hold_ms` as `show config` gives it.
fn hold_ms(sock: &Path) -> String {
    let (code, out) = mwctl_all(sock, &["show", "config"]);
    assert_eq!(code, 0, "{out}");
    out.lines()
        .find(|l| l.trim_start().starts_with("hold_ms"))
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| panic!("no hold_ms in {out}"))
}

#[test]
fn dry_run_confirm_commit_and_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let old = box_config(dir.path(), 90_000);
    let (_daemon, sock) = start_named(dir.path(), "safe", &old);
    let file = dir.path().join("safe.toml");
    assert_eq!(hold_ms(&sock), "hold_ms = 90000");

    let mut new = old.clone();
    new.timers.hold_ms = 120_000;
    std::fs::write(&file, new.to_toml()).unwrap();

    // A dry run shows the plan and applies nothing.
    let (code, out) = mwctl_all(&sock, &["reload", "--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("plan (nothing applied)"), "{out}");
    assert!(out.contains("timers.hold_ms: 90000 -> 120000"), "{out}");
    assert_eq!(hold_ms(&sock), "hold_ms = 90000");
    // So does `mwrouterd --check --against` the running daemon.
    let st = std::process::Command::new(common::mwrouterd())
        .args(["--check", "--config"])
        .arg(&file)
        .arg("--against")
        .arg(&sock)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&st.stdout);
    assert!(
        st.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert!(out.contains("timers.hold_ms: 90000 -> 120000"), "{out}");
    assert_eq!(hold_ms(&sock), "hold_ms = 90000");

    // Not committed: the previous configuration returns.
    let (code, out) = mwctl_all(&sock, &["reload", "--confirm", "1"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("mwctl commit"), "{out}");
    assert_eq!(hold_ms(&sock), "hold_ms = 120000");
    // While it waits, another reload is refused.
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("waits for `mwctl commit`"), "{out}");
    wait_for("the unconfirmed reload to be undone", 10, || {
        hold_ms(&sock) == "hold_ms = 90000"
    });
    let (code, out) = mwctl_all(&sock, &["history"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("reverted (not confirmed in time)"), "{out}");
    assert!(
        out.contains(&format!("by uid {} pid", {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(dir.path()).unwrap().uid()
        })),
        "{out}"
    );

    // Committed: it stays past its deadline.
    let (code, out) = mwctl_all(&sock, &["reload", "--confirm", "1"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = mwctl_all(&sock, &["commit"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("committed"), "{out}");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(hold_ms(&sock), "hold_ms = 120000");
    let (code, out) = mwctl_all(&sock, &["commit"]);
    assert_eq!(code, 1, "nothing to commit: {out}");

    // Rollback 1: the configuration before the reload.
    let (code, out) = mwctl_all(&sock, &["rollback", "1"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("timers.hold_ms: 120000 -> 90000"), "{out}");
    assert_eq!(hold_ms(&sock), "hold_ms = 90000");
    let (code, out) = mwctl_all(&sock, &["rollback", "99"]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn a_runtime_route_is_not_dropped_silently_and_write_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = box_config(dir.path(), 90_000);
    let (daemon, sock) = start_named(dir.path(), "safe", &cfg);
    let file = dir.path().join("safe.toml");
    let (code, out) = mwctl_all(
        &sock,
        &["route", "add", "0x0110", "-p", "0", "-n", "127.0.0.1:9"],
    );
    assert_eq!(code, 0, "{out}");

    // The file does not have it: a reload says so and refuses.
    let (code, out) = mwctl_all(&sock, &["reload", "--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("hr[0].static 0x0110: added at run time; the new configuration drops it"),
        "{out}"
    );
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("0x0110") && out.contains("--force"), "{out}");
    let (_, lrt, _) = mwctl(&sock, &["show", "lrt", "-p", "0"]);
    assert!(lrt.contains("0x0110"), "still there: {lrt}");

    // A file elsewhere than beside the configuration is refused, and one
    // that cannot be written.
    let (code, out) = mwctl_all(&sock, &["write", "/nonexistent-dir/x.toml"]);
    assert_eq!(code, 1, "{out}");
    let (code, out) = mwctl_all(&sock, &["write", "/tmp/x.toml"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("only in the directory"), "{out}");
    std::fs::create_dir(dir.path().join("d.toml")).unwrap();
    let d = dir.path().join("d.toml");
    let (code, out) = mwctl_all(&sock, &["write", d.to_str().unwrap()]);
    assert_eq!(code, 1, "a directory is not written over: {out}");
    let other = dir.path().join("other.toml");
    let (code, out) = mwctl_all(&sock, &["write", other.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(Config::from_toml(&std::fs::read_to_string(&other).unwrap()).is_ok());

    // `write` saves it (the old file kept as .bak); a reload drops nothing.
    let (code, out) = mwctl_all(&sock, &["write"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hr[0].static 0x0110: added"), "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("0x0110"), "{text}");
    assert!(dir.path().join("safe.toml.bak").exists());
    let back = Config::from_toml(&text).unwrap();
    assert_eq!(back.hrs[0].statics.len(), 1);
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 0, "{out}");

    // A restart on the written file has the route back.
    drop(daemon);
    let _ = std::fs::remove_file(&sock);
    let _daemon = common::start(&file, &sock, Stdio::null());
    let (_, lrt, _) = mwctl(&sock, &["show", "lrt", "-p", "0"]);
    assert!(lrt.contains("0x0110"), "{lrt}");

    // --force drops a run-time route; the saved one stays.
    let (code, out) = mwctl_all(
        &sock,
        &["route", "add", "0x0111", "-p", "0", "-n", "127.0.0.1:10"],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("0x0111"), "{out}");
    let (code, out) = mwctl_all(&sock, &["reload", "--force"]);
    assert_eq!(code, 0, "{out}");
    let (_, lrt, _) = mwctl(&sock, &["show", "lrt", "-p", "0"]);
    assert!(lrt.contains("0x0110") && !lrt.contains("0x0111"), "{lrt}");
}

/// Whether HR `port` is up, as `show hrs` gives it.
fn hr_up(sock: &Path, port: usize) -> bool {
    let (code, out, err) = mwctl(sock, &["--json", "show", "hrs"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v[port]["up"]
        .as_bool()
        .unwrap_or_else(|| panic!("no port {port} in {v}"))
}

#[test]
fn a_port_taken_down_at_run_time_is_kept_by_write_and_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = box_config(dir.path(), 90_000);
    let (daemon, sock) = start_named(dir.path(), "safe", &cfg);
    let file = dir.path().join("safe.toml");
    let (code, out) = mwctl_all(&sock, &["port", "1", "down"]);
    assert_eq!(code, 0, "{out}");
    assert!(!hr_up(&sock, 1));

    // The file says up: a reload would bring the port up, so it needs --force.
    let (code, out) = mwctl_all(&sock, &["reload", "--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("hr[1].admin_state: down at run time; the new configuration makes it up"),
        "{out}"
    );
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 1, "{out}");
    assert!(!hr_up(&sock, 1), "a refused reload changes nothing");

    // `write` saves it; a reload then drops nothing.
    let (code, out) = mwctl_all(&sock, &["write"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hr[1].admin_state: up -> down"), "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    let back = Config::from_toml(&text).unwrap();
    assert_eq!(back.hrs[1].admin_state, admin::PortState::Down, "{text}");
    assert_eq!(back.hrs[0].admin_state, admin::PortState::Up);
    let (code, out) = mwctl_all(&sock, &["reload", "--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("admin_state"), "{out}");

    // A restart on the written file starts with the port down.
    drop(daemon);
    let _ = std::fs::remove_file(&sock);
    let _daemon = common::start(&file, &sock, Stdio::null());
    assert!(!hr_up(&sock, 1), "down after the restart");
    assert!(hr_up(&sock, 0));

    // The file's admin_state is live: up again by a reload.
    let mut up = back.clone();
    up.hrs[1].admin_state = admin::PortState::Up;
    std::fs::write(&file, up.to_toml()).unwrap();
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hr[1].admin_state: down -> up"), "{out}");
    assert!(hr_up(&sock, 1), "up after the reload");
}

/// The generations and how each was applied, newest first (`history --json`).
fn history(sock: &Path) -> Vec<(u64, String)> {
    let (code, out, err) = mwctl(sock, &["--json", "history"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let list = v.as_array().or_else(|| v["history"].as_array());
    list.unwrap_or_else(|| panic!("no list in {v}"))
        .iter()
        .map(|e| {
            (
                e["generation"].as_u64().unwrap(),
                e["how"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_history_file_lets_a_restarted_box_roll_back_to_what_ran_before() {
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("history.json");
    let mut old = box_config(dir.path(), 90_000);
    old.admin.history_file = Some(kept.clone());
    let (daemon, sock) = start_named(dir.path(), "safe", &old);
    let file = dir.path().join("safe.toml");
    let mut new = old.clone();
    new.timers.hold_ms = 120_000;
    std::fs::write(&file, new.to_toml()).unwrap();
    let (code, out) = mwctl_all(&sock, &["reload"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        history(&sock),
        [(1, "reload".to_string()), (0, "start".to_string())]
    );

    // Restarted (an upgrade, a reboot): the history goes on.
    drop(daemon);
    let _ = std::fs::remove_file(&sock);
    let daemon = common::start(&file, &sock, Stdio::null());
    assert_eq!(hold_ms(&sock), "hold_ms = 120000");
    let gens: Vec<u64> = history(&sock).into_iter().map(|(g, _)| g).collect();
    assert_eq!(gens, [2, 1, 0]);
    let (code, out) = mwctl_all(&sock, &["rollback", "2"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(hold_ms(&sock), "hold_ms = 90000", "the first start's");

    // A file that cannot be read is set aside; the daemon starts anyway.
    drop(daemon);
    let _ = std::fs::remove_file(&sock);
    std::fs::write(&kept, "{ not json").unwrap();
    let _daemon = common::start(&file, &sock, Stdio::null());
    assert_eq!(history(&sock), [(0, "start".to_string())]);
    assert!(dir.path().join("history.json.bad").exists());
    assert!(history_file_holds(&kept, 1));
}

/// Whether the history file lists `n` configurations.
fn history_file_holds(f: &Path, n: usize) -> bool {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
    v["kept"].as_array().is_some_and(|k| k.len() == n)
}
