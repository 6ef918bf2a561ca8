//! mwtrace: trace and validate the path to a destination from the node
//! whose admin socket it is given (mwrouterd's, or an mwlab host's), as
//! ibtracer does for InfiniBand (docs/mwtrace.md). The same code as
//! `mwctl trace`.
//!
//! Exit status: 0 validated, 1 a validation failure (status 7 at a hop, or
//! a loop), 2 unreachable or timed out, 3 bad arguments or no admin socket.

use std::path::PathBuf;
use std::time::Duration;

use admin::Client;
use admin::server::DEFAULT_SOCKET;
use clap::Parser;
use mwctl::trace::{self, EXIT_UNREACHABLE, EXIT_USAGE, Miss, TraceArgs};

/// mwtrace: trace and validate the path to a destination.
#[derive(Debug, Parser)]
#[command(name = "mwtrace", version, about, long_about = None)]
struct Cli {
    /// The admin socket of the node to trace from.
    #[arg(long, env = "MWCTL_SOCKET", default_value = DEFAULT_SOCKET, value_name = "PATH")]
    socket: PathBuf,
    /// The trace as one JSON object.
    #[arg(long)]
    json: bool,
    /// What to trace, and how.
    #[command(flatten)]
    trace: TraceArgs,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    // Every request may take every try; the admin socket waits that long.
    let per = Duration::from_millis(cli.trace.timeout_ms * u64::from(cli.trace.retries + 1));
    let mut c = match Client::connect(&cli.socket, Some(per + Duration::from_secs(5))) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mwtrace: {e}");
            std::process::exit(EXIT_USAGE);
        }
    };
    let code = match trace::run(&mut c, &cli.trace, cli.json, &mut std::io::stdout()) {
        Ok(code) => code,
        Err(Miss::NoAnswer(why)) => {
            eprintln!("mwtrace: {why}");
            EXIT_UNREACHABLE
        }
        Err(Miss::Fatal(e)) => {
            eprintln!("mwtrace: {e}");
            EXIT_USAGE
        }
    };
    std::process::exit(code);
}
