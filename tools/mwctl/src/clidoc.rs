//! A tool's man page and shell completions, generated from its clap
//! command: what `mwctl man` and `mwctl completions` print, and what
//! mwrouter-clidoc (tools/clidoc) writes for every installed tool when the
//! Debian package is built (docs/daemon.md "Debian package").

use std::io::{self, Write};

use clap::Command;
use clap_complete::Shell;

/// Writes the man page of `cmd` (roff, by clap_mangen) in manual `section`
/// ("1" for a user command, "8" for a daemon) to `out`.
pub fn man(cmd: Command, section: &str, out: &mut dyn Write) -> io::Result<()> {
    clap_mangen::Man::new(cmd)
        .section(section.to_owned())
        .render(out)
}

/// Writes the `shell` completion script of `cmd` (by clap_complete) to
/// `out`; it completes the command by its name.
pub fn completions(shell: Shell, mut cmd: Command, out: &mut dyn Write) {
    let name = cmd.get_name().to_owned();
    clap_complete::generate(shell, &mut cmd, name, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Arg;

    fn tool() -> Command {
        Command::new("tool")
            .about("A tool")
            .arg(Arg::new("rate").long("rate"))
    }

    #[test]
    fn the_man_page_is_in_its_section_and_names_the_command() {
        let mut page = Vec::new();
        man(tool(), "8", &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.contains(".TH tool 8"), "{page}");
        assert!(page.contains(".SH NAME"), "{page}");
        assert!(page.contains("tool \\- A tool"), "{page}");
    }

    #[test]
    fn completions_complete_the_command_by_its_name_and_options() {
        for shell in [Shell::Bash, Shell::Zsh] {
            let mut script = Vec::new();
            completions(shell, tool(), &mut script);
            let script = String::from_utf8(script).unwrap();
            assert!(script.contains("tool"), "{shell}: {script}");
            assert!(script.contains("--rate"), "{shell}: {script}");
        }
    }
}
