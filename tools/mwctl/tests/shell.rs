//! `mwctl` with no command on a terminal is a shell: driven through a
//! pseudo-terminal (util-linux `script`) against the admin server with the
//! sample handler: commands run, Tab completes a command and, twice, lists
//! the daemon's addresses; the history is saved for the next session.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use admin::sample::SampleBox;
use admin::server::{ServerConfig, serve};

/// Quotes `s` for `sh -c`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn the_shell_runs_commands_completes_and_keeps_history() {
    if Command::new("script").arg("--version").output().is_err() {
        testkit::skip(
            "the_shell_runs_commands_completes_and_keeps_history",
            "util-linux `script` (a pseudo-terminal) is not installed",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("mwrouterd.sock");
    let _server = serve(ServerConfig::new(&sock), SampleBox::handler()).unwrap();
    let history = dir.path().join("history");
    let mwctl = PathBuf::from(env!("CARGO_BIN_EXE_mwctl"));
    let cmdline = format!(
        "{} --socket {}",
        sh_quote(&mwctl.display().to_string()),
        sh_quote(&sock.display().to_string())
    );
    let mut child = Command::new("script")
        .args(["-q", "-f", "-e", "-c", &cmdline, "/dev/null"])
        .env("TERM", "xterm")
        .env("MWCTL_HISTORY", &history)
        .env_remove("MWCTL_SOCKET")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = stdout.read_to_end(&mut all);
        String::from_utf8_lossy(&all).into_owned()
    });
    let pause = || std::thread::sleep(Duration::from_millis(300));
    pause();
    // A command completed by Tab; two Tabs list addresses of the LRTs and
    // routes; Ctrl-U clears the line; a plain command; exit.
    for keys in [
        "show neig\t\r",
        "show route 0x010\t\t",
        "\x15",
        "show hrs\r",
        "exit\r",
    ] {
        stdin.write_all(keys.as_bytes()).unwrap();
        stdin.flush().unwrap();
        pause();
    }
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the shell did not exit"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    let out = reader.join().unwrap();
    assert!(status.success(), "{status:?}:\n{out}");
    assert!(out.contains("mwctl shell on"), "{out}");
    // The prompt names the router (show router's name).
    assert!(out.contains("> "), "{out}");
    // `show neig<Tab>` became `show neighbors`, and ran.
    assert!(out.contains("show neighbors"), "{out}");
    // Two Tabs listed the daemon's addresses starting 0x010.
    assert!(out.contains("0x0101") && out.contains("0x0102"), "{out}");
    // `show hrs` ran: its table.
    assert!(out.contains("buddies"), "{out}");
    let h = std::fs::read_to_string(&history).expect("the history was saved");
    assert!(
        h.contains("show neighbors") && h.contains("show hrs"),
        "{h}"
    );
    assert!(
        !h.contains("show route 0x010"),
        "a cleared line is not history: {h}"
    );
}
