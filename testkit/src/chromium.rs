//! Headless Chromium for the tests of web pages (`mwctl discover --html`):
//! Debian's `chromium`, run as root with `--no-sandbox`. A test that needs
//! it calls [`find`] and, when it is missing, [`skip`](crate::skip)s.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one run may take.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Chromium, when installed: `MWCTL_CHROMIUM`, or `chromium` on the PATH.
pub fn find() -> Option<PathBuf> {
    let bin =
        std::env::var_os("MWCTL_CHROMIUM").map_or_else(|| PathBuf::from("chromium"), PathBuf::from);
    Command::new(&bin)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()
        .filter(|s| s.success())
        .map(|_| bin)
}

/// Runs headless Chromium with `args` on `url`, its profile in `profile`
/// (a directory of the test's own), for at most two minutes; returns what
/// it printed (the DOM with `--dump-dom`). Panics when it fails or does not
/// finish: the caller is a test.
pub fn run(bin: &Path, profile: &Path, args: &[&str], url: &str) -> String {
    std::fs::create_dir_all(profile).expect("the profile directory");
    let out_path = profile.join("stdout");
    let out = std::fs::File::create(&out_path).expect("chromium's output file");
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromium");
    let deadline = Instant::now() + RUN_LIMIT;
    loop {
        if let Some(s) = child.try_wait().expect("waiting for chromium") {
            assert!(s.success(), "chromium: {s}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {RUN_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(&out_path).expect("chromium's output")
}
