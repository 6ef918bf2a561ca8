//! `mwrouter-clidoc OUTDIR`: writes the man page and the bash and zsh
//! completions of every installed tool under OUTDIR (the `clidoc` library;
//! debian/rules runs it). Exit status: 0 written, 1 a file could not be
//! written, 2 usage.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let [outdir] = args.as_slice() else {
        eprintln!("usage: mwrouter-clidoc OUTDIR");
        return ExitCode::from(2);
    };
    match clidoc::write_all(Path::new(outdir)) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mwrouter-clidoc: {e}");
            ExitCode::from(1)
        }
    }
}
