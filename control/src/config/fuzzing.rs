//! The fuzz body of the cargo-fuzz target `config` (under `fuzz/`), shared
//! with the test that replays the checked-in corpus
//! (`control/tests/fuzz_corpus.rs`), so that the stable test suite runs the
//! same checks.
//!
//! Arbitrary bytes are read as the text of `mwrouterd --config` (invalid
//! UTF-8 replaced, as the fuzzer's bytes mostly are not UTF-8; the daemon
//! itself refuses such a file before parsing): nothing panics; a refused
//! file gives errors that carry a message, a location inside the text when
//! they have one, and the first of them is what [`Config::from_toml`]
//! gives; an accepted file validates, every part the daemon builds from it
//! builds, it emits ([`Config::to_toml`]) text that parses back to an equal
//! configuration and emits again the same, a reload to itself changes
//! nothing, and the redacted text never holds a key.
//!
//! No file is read: the key files a text names (`mkey_file`, `sm_key_file`,
//! `secret_file`) are read through [`FileNameKeys`], whose file holds its
//! own name, so that the fuzzer reaches the key-file form from the text
//! alone.

use std::path::Path;

use super::{Config, ConfigError, KeyFiles};

/// The key files of a fuzzed configuration: the text of `/k/0x0123` is
/// `0x0123`, its file name; a path without a file name (`/`) is refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileNameKeys;

impl KeyFiles for FileNameKeys {
    fn read(&self, path: &Path) -> Result<String, String> {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| "not a file (no file name)".to_string())
    }
}

/// An error carries a message, and its location (1-based) is inside the
/// `text` it was found in.
fn check_error(e: &ConfigError, text: &str) {
    assert!(!e.why.is_empty(), "an error without a message: {e:?}");
    assert!(
        !e.to_string().is_empty(),
        "an error that shows empty: {e:?}"
    );
    if let Some((line, column)) = e.location {
        let lines = text.matches('\n').count() + 1;
        assert!(
            (1..=lines).contains(&line) && column >= 1,
            "error {e:?} located outside the {lines}-line text"
        );
    }
}

/// An accepted configuration: what the daemon builds from it builds, it
/// emits and parses back, a reload to itself is empty, redaction hides the
/// keys.
fn check_accepted(cfg: &Config) {
    assert_eq!(
        cfg.validate(),
        Ok(()),
        "an accepted config does not validate"
    );
    // What the daemon builds from it.
    let _ = cfg.router_config(0x1234);
    let _ = cfg.engine_config();
    let _ = cfg.channel_config();
    let _ = cfg.idle_policy();
    let _ = cfg.eal_args();
    let _ = cfg.node_identity();
    let _ = cfg.node_description();
    let _ = cfg.backend();
    assert_eq!(cfg.worker_cores().len(), cfg.workers.count);
    for (i, hr) in cfg.hrs.iter().enumerate() {
        let _ = cfg.udp_config(i);
        let _ = cfg.af_packet_config(i);
        let _ = cfg.dpdk_port(i);
        let _ = hr.configured_native();
        let _ = hr.label(i);
        assert!(cfg.port_owner(i) < cfg.workers.count.max(1));
    }
    let _ = format!("{cfg:?}");

    // Emit, parse back, emit again.
    let emitted = cfg.to_toml();
    let back = Config::from_toml_with(&emitted, &FileNameKeys)
        .unwrap_or_else(|e| panic!("the emitted config does not parse: {e}\n{emitted}"));
    assert_eq!(
        &back, cfg,
        "the emitted config parses to another:\n{emitted}"
    );
    assert_eq!(back.to_toml(), emitted, "emitting is not a fixed point");

    // A reload to the same configuration changes nothing.
    match cfg.diff_for_reload(&back) {
        Ok(plan) => assert!(plan.is_empty(), "a reload to itself changes {plan:?}"),
        Err(why) => panic!("a reload to itself is refused: {why:?}"),
    }

    // The redacted text has no key line.
    let redacted = cfg.to_toml_redacted();
    for line in redacted.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        assert!(
            key != "mkey" && key != "sm_key",
            "the redacted config shows a key: {line}"
        );
    }
}

/// The body: `data` as a configuration file.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match Config::check_toml_with(&text, &FileNameKeys) {
        Ok(cfg) => {
            assert_eq!(
                Config::from_toml_with(&text, &FileNameKeys).as_ref(),
                Ok(&cfg),
                "check_toml and from_toml disagree"
            );
            check_accepted(&cfg);
        }
        Err(errs) => {
            assert!(!errs.is_empty(), "refused without an error");
            for e in &errs {
                check_error(e, &text);
            }
            assert_eq!(
                Config::from_toml_with(&text, &FileNameKeys),
                Err(errs[0].clone()),
                "from_toml does not give check_toml's first error"
            );
        }
    }
}
