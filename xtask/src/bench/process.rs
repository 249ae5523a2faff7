//! Files and processes: writing files, quoting and running command lines.

use std::path::Path;
use std::process::Command;
use std::process::Stdio;

pub(super) fn mkdir(p: &Path) -> Result<(), String> {
    std::fs::create_dir_all(p).map_err(|e| format!("cannot create `{}`: {e}", p.display()))
}

pub(super) fn write(p: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(p, bytes).map_err(|e| format!("cannot write `{}`: {e}", p.display()))
}

/// Copies the folder `from` to `to`: folders and files, symbolic links as links to the same
/// target; `.git` left out.
pub(super) fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let fail =
        |e: std::io::Error| format!("cannot copy {} to {}: {e}", from.display(), to.display());
    mkdir(to)?;
    for entry in std::fs::read_dir(from).map_err(fail)? {
        let entry = entry.map_err(fail)?;
        if entry.file_name() == ".git" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(fail)?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(fail)?;
            std::os::unix::fs::symlink(target, &dst).map_err(fail)?;
        } else if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(fail)?;
        }
    }
    Ok(())
}

/// Writes `bytes` unless the file already holds them; true when it wrote.
pub(super) fn write_if_changed(p: &Path, bytes: &[u8]) -> Result<bool, String> {
    if std::fs::read(p).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    write(p, bytes)?;
    Ok(true)
}

/// Replaces the text between the markers `start` and `end` of `path` with `section`; without
/// them, adds the markers and the section after the marker `after` (or at the end).
pub(super) fn write_section(
    path: &Path,
    start: &str,
    end: &str,
    after: &str,
    section: &str,
) -> Result<(), String> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let new = match (old.find(start), old.find(end)) {
        (Some(a), Some(b)) if a < b => format!("{}{start}{section}{}", &old[..a], &old[b..]),
        _ => match old.find(after) {
            Some(i) => {
                let i = i + after.len();
                format!("{}\n\n{start}{section}{end}{}", &old[..i], &old[i..])
            }
            None => format!("{old}\n{start}{section}{end}\n"),
        },
    };
    write_if_changed(path, new.as_bytes()).map(|_| ())
}

pub(super) fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// POSIX shell quoting (hyperfine splits its command lines the same way).
pub(super) fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

pub(super) fn command(argv: &[String]) -> Result<Command, String> {
    let (first, rest) = argv.split_first().ok_or("empty command")?;
    let mut c = Command::new(first);
    c.args(rest);
    Ok(c)
}

/// Runs `argv` to completion; its stdout when it exits 0.
pub(super) fn capture(argv: &[String]) -> Result<String, String> {
    let out = command(argv)?
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`{}`: cannot start: {e}", display(argv)))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "`{}` failed ({}):\n{}",
            display(argv),
            out.status,
            tail.join("\n")
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("`{}` printed non-UTF-8", display(argv)))
}

pub(super) fn s(p: &Path) -> String {
    p.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_the_shell() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("/x/y-1"), "/x/y-1");
    }
}
