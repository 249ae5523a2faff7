//! The serving commands without the command-line parser: `skillbake load NAME [PATH]` and
//! `skillbake cat NAME PATH`, written exactly so (no option, no `--`, every argument UTF-8 and not
//! starting with `-`), are answered before clap builds its command tree. They run the same code
//! as the parsed commands and print the same bytes with the same exit code; anything else
//! (options, help, a wrong number of arguments) goes to clap, which reports it as usual.
//!
//! Why: a cold `skillbake load` is mostly process start-up, and clap's command tree for every
//! subcommand is the largest part of what `main` itself does before answering.

use std::process::ExitCode;

/// The exit code of `load`/`cat` when the arguments take the fast path, else `None`.
pub fn run() -> Option<ExitCode> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let args: Vec<&str> = args
        .iter()
        .map(|a| a.to_str())
        .collect::<Option<Vec<_>>>()?;
    if args.iter().any(|a| a.starts_with('-')) {
        return None;
    }
    let result = match args.as_slice() {
        ["load", name] => super::load::run("chunks", name, None, &[]),
        ["load", name, path] => super::load::run("chunks", name, Some(path), &[]),
        ["cat", name, path] => super::cat::run(name, path),
        _ => return None,
    };
    Some(super::finish(result))
}
