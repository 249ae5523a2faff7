//! The `skillbake` command-line tool: `check` validates skill packs on disk; `list`, `load` and
//! `cat` serve the packs compiled into this binary, without touching the file system.

#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    // `load`, `cat`, `run` and `exec-script` as agents call them, without the whole parser.
    if let Some(code) = cli::fast::run() {
        return code;
    }
    cli::run()
}
