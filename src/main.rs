//! The `skillbake` command-line tool: `check` validates skill packs on disk; `list`, `load` and
//! `cat` serve the packs compiled into this binary, without touching the file system.

#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    // `load` and `cat` as agents call them, before the argument parser is built.
    if let Some(code) = cli::fast::run() {
        return code;
    }
    cli::run()
}
