//! `mwrouter-clidoc OUTDIR` writes, for every installed tool, a man page
//! with its NAME section and bash and zsh completions that complete the
//! tool's own options; the tools are the ones debian/rules installs.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use clidoc::{SHELLS, TOOLS, completion_path, man_path};

const BIN: &str = env!("CARGO_BIN_EXE_mwrouter-clidoc");

/// Per tool, words its completions must offer, read from its docs
/// (docs/*.md), not from its clap command.
const KNOWN: &[(&str, &[&str])] = &[
    ("mwrouterd", &["--config", "--check", "--against"]),
    ("mwctl", &["--socket", "--json", "show", "completions"]),
    ("mwtrace", &["--socket", "--json"]),
    ("mwdump", &["--hex", "--link"]),
    ("mwgen", &["--rate", "--tx", "--rx", "--search"]),
    ("mwlab", &["up", "down", "status"]),
];

fn read(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(!text.trim().is_empty(), "{} is empty", path.display());
    text
}

#[test]
fn every_tool_gets_a_man_page_and_its_completions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("generated");
    let st = Command::new(BIN).arg(&out).status().unwrap();
    assert!(st.success(), "{BIN}: {st}");

    let mut expected = BTreeSet::new();
    for tool in TOOLS {
        let cmd = (tool.command)();
        // Every long option of the tool's top level, and its subcommands.
        let mut words: Vec<String> = cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .chain(
                cmd.get_subcommands()
                    .filter(|s| !s.is_hide_set())
                    .map(|s| s.get_name().to_string()),
            )
            .collect();
        let known = KNOWN
            .iter()
            .find(|(n, _)| *n == tool.name)
            .unwrap_or_else(|| panic!("{}: no known words in this test", tool.name));
        words.extend(known.1.iter().map(|w| w.to_string()));

        let man = man_path(&out, tool);
        let page = read(&man);
        assert!(
            page.contains(&format!(".TH {} {}", tool.name, tool.section)),
            "{}: {page}",
            man.display()
        );
        assert!(page.contains(".SH NAME"), "{}: no NAME", man.display());
        assert!(
            page.contains(&format!("{} \\- ", tool.name)),
            "{}: NAME does not name {}",
            man.display(),
            tool.name
        );
        expected.insert(man);

        for (shell, _, _) in SHELLS {
            let path = completion_path(&out, tool, *shell).unwrap();
            let script = read(&path);
            assert!(script.contains(tool.name), "{}", path.display());
            for w in &words {
                assert!(script.contains(w.as_str()), "{}: no {w}", path.display());
            }
            expected.insert(path);
        }
    }

    // Nothing else is written.
    let mut found = BTreeSet::new();
    for sub in std::fs::read_dir(&out).unwrap() {
        for f in std::fs::read_dir(sub.unwrap().path()).unwrap() {
            found.insert(f.unwrap().path());
        }
    }
    assert_eq!(found, expected);
    assert_eq!(expected.len(), TOOLS.len() * (1 + SHELLS.len()));
}

#[test]
fn the_tools_are_the_ones_the_package_installs() {
    let rules =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../debian/rules"))
            .unwrap();
    let line = rules
        .lines()
        .find_map(|l| l.strip_prefix("TOOLS := "))
        .expect("debian/rules sets TOOLS");
    let mut installed: BTreeSet<&str> = line.split_whitespace().collect();
    // mwrouterd goes to /usr/sbin, outside TOOLS.
    installed.insert("mwrouterd");
    let documented: BTreeSet<&str> = TOOLS.iter().map(|t| t.name).collect();
    assert_eq!(documented, installed);
}

#[test]
fn without_one_outdir_it_prints_its_usage_and_exits_2() {
    for args in [&[][..], &["a", "b"][..]] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("usage: mwrouter-clidoc OUTDIR"),
            "{args:?}"
        );
    }
}

#[test]
fn an_outdir_it_cannot_make_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = Command::new(BIN).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mwrouter-clidoc: ") && err.contains("a-file"),
        "{err}"
    );
}
