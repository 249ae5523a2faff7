//! `skillbake new NAME [--runnable python|bash|node] [--dir DIR]`: create a pack that passes
//! `skillbake check` (the scaffold is `skillbake_build::scaffold`).

use anyhow::Result;
use skillbake_build::scaffold::{Runnable, Scaffold, ScaffoldError};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `skillbake new`.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The skill's name, which is also its folder's: `a-z`, `0-9` and `-`, at most 64
    /// characters.
    name: String,
    /// Make the pack runnable: a `schema.json` and `scripts/run.*` in this language that prints
    /// the unified result {"ok", "data", "error"}, named as the pack's `entrypoint`.
    #[arg(long, value_parser = Runnable::NAMES)]
    runnable: Option<String>,
    /// The skills folder to create the pack in (created when missing).
    #[arg(long, value_name = "DIR", default_value = "skills")]
    dir: PathBuf,
    /// The pack's `description` [default: a sentence to replace].
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
}

/// `skillbake new`: exit 0 with the pack created, 1 when it would not pass the check (the
/// diagnostics on stderr), 2 when its folder exists or cannot be written.
pub fn run(args: NewArgs) -> Result<ExitCode> {
    let scaffold = Scaffold {
        name: args.name,
        description: args.description,
        runnable: args.runnable.as_deref().and_then(Runnable::from_name),
    };
    match scaffold.write(&args.dir) {
        Ok(pack) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "created {}", pack.display());
            for (file, _) in scaffold.files() {
                let _ = writeln!(out, "  {file}");
            }
            let _ = writeln!(
                out,
                "check it with `skillbake check {}`",
                args.dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(ScaffoldError::Invalid(report)) => {
            let color = std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            let mut err = std::io::stderr().lock();
            let _ =
                err.write_all(skillbake_build::report::human::render(&report, color).as_bytes());
            let _ = writeln!(
                err,
                "skillbake: the new pack would not pass `skillbake check`; nothing was created"
            );
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.into()),
    }
}
