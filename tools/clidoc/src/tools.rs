//! The tools the Debian package installs (debian/rules: mwrouterd in
//! /usr/sbin, `TOOLS` in /usr/bin), each with its manual section and the
//! clap command its binary parses.

use clap::{Command, CommandFactory};

/// An installed tool.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// Its executable's name, which is also its clap command's name.
    pub name: &'static str,
    /// Its manual section: "8" for the daemon, "1" for a user command.
    pub section: &'static str,
    /// Its command line, as its binary parses it.
    pub command: fn() -> Command,
}

/// Every installed tool.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "mwrouterd",
        section: "8",
        command: control::daemon::Args::command,
    },
    Tool {
        name: "mwctl",
        section: "1",
        command: mwctl::Cli::command,
    },
    Tool {
        name: "mwtrace",
        section: "1",
        command: mwctl::mwtrace::Cli::command,
    },
    Tool {
        name: "mwdump",
        section: "1",
        command: mwdump::cli::Args::command,
    },
    Tool {
        name: "mwgen",
        section: "1",
        command: mwgen::cli::Args::command,
    },
    Tool {
        name: "mwlab",
        section: "1",
        command: mwlab::cli::Args::command,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_is_named_as_its_command_and_its_command_is_valid() {
        for tool in TOOLS {
            let mut cmd = (tool.command)();
            assert_eq!(cmd.get_name(), tool.name);
            // clap's own checks of the definition (debug builds).
            cmd.build();
        }
    }

    #[test]
    fn the_daemon_is_in_section_8_and_the_user_commands_in_section_1() {
        for tool in TOOLS {
            let want = if tool.name == "mwrouterd" { "8" } else { "1" };
            assert_eq!(tool.section, want, "{}", tool.name);
        }
    }
}
