//! `skillbake add` and `skillbake update`: packs copied from other git repositories into the
//! skills folder, recorded in its `skills.lock` (`skillbake_build::vendor`). `update` prints
//! `skillbake diff` of the pack before and after.
//!
//! Exit codes: 0 done; 2 refused (unsafe input, a name taken, local edits) or git failed.

use super::output::write_stdout;
use anyhow::{Context, Result};
use skillbake_build::vendor::{self, Locked, LOCK_FILE};
use skillbake_build::{check, CheckOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `skillbake add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The git repository: a URL (`https://…`, `git@…`) or a local path.
    source: String,
    /// Branch, tag or commit to take [default: the repository's HEAD]; `update` follows it.
    #[arg(long, value_name = "REV")]
    rev: Option<String>,
    /// The pack's folder inside the repository, `/`-separated from its top [default: the top].
    #[arg(long, value_name = "PATH-IN-REPO", default_value = "")]
    path: String,
    /// The folder name the pack gets in the skills folder [default: the last folder of
    /// --path, or the repository's name].
    #[arg(long)]
    name: Option<String>,
    /// The skills folder.
    #[arg(long, value_name = "DIR", default_value = "skills")]
    dir: PathBuf,
}

/// Arguments of `skillbake update`.
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// The vendored pack (its folder name, as `skills.lock` records it).
    name: String,
    /// Move to this branch, tag or commit (and follow it from now on) [default: the revision
    /// the pack follows].
    #[arg(long, value_name = "REV")]
    rev: Option<String>,
    /// Discard local changes to the pack's files instead of refusing.
    #[arg(long)]
    force: bool,
    /// The skills folder.
    #[arg(long, value_name = "DIR", default_value = "skills")]
    dir: PathBuf,
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

fn describe(entry: &Locked) -> String {
    let path = if entry.path.is_empty() {
        String::new()
    } else {
        format!(":{}", entry.path)
    };
    let rev = entry
        .rev
        .as_deref()
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    format!(
        "{}{path} at {}{rev}, licence {}, {} files",
        entry.source,
        short(&entry.commit),
        entry.license,
        entry.files.len()
    )
}

/// `skillbake add`.
pub fn add(args: AddArgs) -> Result<ExitCode> {
    let AddArgs {
        source,
        rev,
        path,
        name,
        dir,
    } = args;
    let done = vendor::add(&dir, &source, rev.as_deref(), &path, name.as_deref())?;
    let folder = dir.join(&done.name);
    let mut out = format!(
        "added `{}` to {}: {}\nrecorded in {}\n",
        done.name,
        folder.display(),
        describe(&done.entry),
        dir.join(LOCK_FILE).display()
    );
    if done.entry.license == vendor::license::UNKNOWN {
        out.push_str("note: no licence found (no SPDX `license` in its frontmatter, no LICENSE file next to it): check you may redistribute it\n");
    }
    out.push_str(&summary(&dir, &done.name));
    write_stdout(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// What `check` says of the pack just written: a line, and the command that shows more.
fn summary(dir: &Path, name: &str) -> String {
    let checked = check(&dir.join(name), &CheckOptions::default());
    let (errors, warnings) = (checked.report.errors(), checked.report.warnings());
    if errors + warnings == 0 {
        format!("`{name}` checks clean\n")
    } else {
        format!(
            "`{name}` has {errors} error(s) and {warnings} warning(s): run `skillbake check {}`\n",
            dir.display()
        )
    }
}

/// `skillbake update`.
pub fn update(args: UpdateArgs) -> Result<ExitCode> {
    let UpdateArgs {
        name,
        rev,
        force,
        dir,
    } = args;
    let old = tempfile::Builder::new()
        .prefix("skillbake-update-")
        .tempdir()
        .context("cannot create a temporary folder")?;
    let done = vendor::update(&dir, &name, rev.as_deref(), force, old.path())?;
    let previous = done.previous.as_ref();
    let mut out = String::new();
    if previous.is_some_and(|p| p == &done.entry) {
        out.push_str(&format!(
            "`{name}` is up to date: {}\n",
            describe(&done.entry)
        ));
        write_stdout(out.as_bytes());
        return Ok(ExitCode::SUCCESS);
    }
    let from = previous.map_or("?", |p| short(&p.commit));
    out.push_str(&format!(
        "updated `{name}` from {from} to {}\nrecorded in {}\n\n",
        describe(&done.entry),
        dir.join(LOCK_FILE).display()
    ));
    // The pack alone on each side, so that the diff speaks of it and nothing else.
    let new = tempfile::Builder::new()
        .prefix("skillbake-update-")
        .tempdir()
        .context("cannot create a temporary folder")?;
    copy(&dir.join(&name), &new.path().join(&name))?;
    let opts = CheckOptions::default();
    let (a, b) = (check(old.path(), &opts), check(new.path(), &opts));
    let d = skillbake_build::diff::diff(
        &a,
        &b,
        &format!("{name}@{from}"),
        &format!("{name}@{}", short(&done.entry.commit)),
    );
    out.push_str(&skillbake_build::diff::report::human(&d, false));
    write_stdout(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry.with_context(|| format!("cannot read {}", from.display()))?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy(&entry.path(), &dest)?;
        } else {
            std::fs::copy(entry.path(), &dest)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}
