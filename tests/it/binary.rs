//! The real `skillbake` binary as the command tests run it: in a given folder, without colour,
//! and its output as text or as one block for a snapshot.

use std::path::Path;
use std::process::{Command, Output};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

/// `skillbake` to be run in `dir`, with `NO_COLOR` set.
pub fn command(dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(dir).env("NO_COLOR", "1");
    c
}

/// Runs `skillbake ARGS` in `dir` and waits for it.
pub fn skillbake(dir: &Path, args: &[&str]) -> Output {
    command(dir).args(args).output().unwrap()
}

/// Bytes a process printed, as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit code, stdout and stderr, for a snapshot.
pub fn shown(o: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr)
    )
}
