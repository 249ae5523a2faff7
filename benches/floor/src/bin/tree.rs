//! `tree read|stat [--list FILE] [DIR...]`: walks every folder named (on the command line, or
//! one a line in `FILE`) and reads or stamps every file under it, then prints what it saw to
//! stderr. The floor of `cargo xtask bench check` and of the incremental build.

#[path = "../tree.rs"]
mod tree;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: tree read|stat [--list FILE] [DIR...]";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mode = match args.next().as_deref() {
        Some("read") => tree::Mode::Read,
        Some("stat") => tree::Mode::Stat,
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut dirs = Vec::new();
    while let Some(a) = args.next() {
        if a == "--list" {
            let Some(file) = args.next() else {
                eprintln!("--list needs a file ({USAGE})");
                return ExitCode::from(2);
            };
            match std::fs::read_to_string(&file) {
                Ok(text) => dirs.extend(
                    text.lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(PathBuf::from),
                ),
                Err(e) => {
                    eprintln!("cannot read `{file}`: {e}");
                    return ExitCode::from(2);
                }
            }
        } else {
            dirs.push(PathBuf::from(a));
        }
    }
    let mut seen = tree::Seen::default();
    for d in &dirs {
        tree::walk(d, mode, &mut seen);
    }
    eprintln!(
        "{} folders, {} files, {} bytes, {} unreadable",
        seen.dirs, seen.files, seen.bytes, seen.errors
    );
    if seen.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
