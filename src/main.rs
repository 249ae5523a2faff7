//! The `skillbake` command-line tool: `check` validates skill packs on disk; `list`, `load` and
//! `cat` serve the packs compiled into this binary, without touching the file system.

#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    // `load` and `cat` as agents call them, before the argument parser is built.
    if let Some(code) = cli::fast::run() {
        return code;
    }
    // A command that runs a pack checks its parameters against the pack's schema: what that
    // first needs is built while the arguments are parsed.
    if matches!(
        std::env::args_os()
            .nth(1)
            .as_deref()
            .and_then(|a| a.to_str()),
        Some("run" | "exec-script")
    ) {
        skillbake_exec::prepare_params();
    }
    cli::run()
}
