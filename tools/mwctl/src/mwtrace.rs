//! The `mwtrace` command (docs/mwtrace.md): its command line and its run.
//! It traces and validates the path to a destination from the node whose
//! admin socket it is given (mwrouterd's, or an mwlab host's), as ibtracer
//! does for InfiniBand, with the same code as `mwctl trace` ([`crate::trace`]).
//! The binary (src/bin/mwtrace.rs) parses [`Cli`] and exits with what
//! [`run`] returns; mwrouter-clidoc writes its man page and completions
//! from [`Cli`].
//!
//! Exit status: 0 validated, 1 a validation failure (status 7 at a hop, or
//! a loop), 2 unreachable or timed out, 3 bad arguments or no admin socket,
//! 4 the path validated but the routers would refuse the packet's partition
//! (`--partition`'s, or every one of the source's table).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use admin::Client;
use admin::server::DEFAULT_SOCKET;
use clap::Parser;

use crate::trace::{self, EXIT_UNREACHABLE, EXIT_USAGE, Miss, TraceArgs};

/// mwtrace: trace and validate the path to a destination.
#[derive(Debug, Parser)]
#[command(
    name = "mwtrace",
    version,
    about = "Trace and validate the path to a MessageWay destination",
    long_about = None
)]
pub struct Cli {
    /// The admin socket of the node to trace from.
    #[arg(long, env = "MWCTL_SOCKET", default_value = DEFAULT_SOCKET, value_name = "PATH")]
    pub socket: PathBuf,
    /// The trace as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// What to trace, and how.
    #[command(flatten)]
    pub trace: TraceArgs,
}

/// Runs the trace `cli` asks for, printing it to `out` and what went wrong
/// to `err`; returns the exit status.
pub fn run(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    // Every request may take every try; the admin socket waits that long.
    let per = Duration::from_millis(cli.trace.timeout_ms * u64::from(cli.trace.retries + 1));
    let mut c = match Client::connect(&cli.socket, Some(per + Duration::from_secs(5))) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(err, "mwtrace: {e}");
            return EXIT_USAGE;
        }
    };
    match trace::run(&mut c, &cli.trace, cli.json, out) {
        Ok(code) => code,
        Err(Miss::NoAnswer(why)) => {
            let _ = writeln!(err, "mwtrace: {why}");
            EXIT_UNREACHABLE
        }
        Err(Miss::Fatal(e)) => {
            let _ = writeln!(err, "mwtrace: {e}");
            EXIT_USAGE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_help_says_what_mwtrace_does() {
        let help = Cli::command().render_help().to_string();
        assert!(
            help.starts_with("Trace and validate the path to a MessageWay destination"),
            "{help}"
        );
    }
}
