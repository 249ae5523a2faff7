//! The commands agents call on every turn, without the full command-line parser.
//!
//! * `skillbake load NAME [PATH]` and `skillbake cat NAME PATH`, written exactly so (no option,
//!   no `--`, every argument UTF-8 and not starting with `-`), are answered before clap builds
//!   its command tree.
//! * `skillbake run …` and `skillbake exec-script …` are parsed by a command tree of those two
//!   subcommands alone, from the same argument definitions as the full one.
//!
//! They run the same code as the parsed commands and print the same bytes with the same exit
//! code; anything else (help, a usage error, another command) goes to the full parser, which
//! reports it as usual.
//!
//! Why: a cold `skillbake load` is mostly process start-up, and clap's command tree for every
//! subcommand is the largest part of what `main` itself does before answering; `run`'s
//! arguments took about 0.35 ms to parse with the whole tree, and take 0.2 ms with its own.

use std::process::ExitCode;

/// The subcommands that run a skill: the full parser's `run` and `exec-script`, with nothing
/// else in the tree.
#[derive(Debug, clap::Parser)]
#[command(name = "skillbake")]
struct Runs {
    #[command(subcommand)]
    command: RunCommand,
}

#[derive(Debug, clap::Subcommand)]
enum RunCommand {
    Run(super::run::RunArgs),
    ExecScript(super::run::ExecScriptArgs),
}

/// The exit code of `load`/`cat`/`run`/`exec-script` when the arguments take the fast path,
/// else `None`.
pub fn run() -> Option<ExitCode> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if matches!(
        args.first().and_then(|a| a.to_str()),
        Some("run" | "exec-script")
    ) {
        // Help, a usage error or anything this tree does not know: the full parser answers.
        let parsed = <Runs as clap::Parser>::try_parse().ok()?;
        return Some(super::finish(match parsed.command {
            RunCommand::Run(args) => super::run::run(args),
            RunCommand::ExecScript(args) => super::run::exec_script(args),
        }));
    }
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
