//! `skillbake diff`: what changed between two states of a skills folder, classified by the rule
//! table of `skillbake_build::diff`, in human, JSON or Markdown form. Also the git side of
//! `check --baseline`.
//!
//! A side is a folder when one exists at that path; otherwise a git revision: `REV:PATH`
//! (PATH from the top of the repository, as git reads it) or `REV` alone (the skills folder given
//! with `--baseline`, or `skills`, at that revision). Revisions are read through git without a
//! checkout. `--baseline` takes a folder too, when one exists at that path.
//!
//! Exit codes: 0 when every changed pack's version says what changed; 1 when a pack needs a
//! bigger version bump than it has; 2 usage error, unreadable folder or unknown revision.

use super::args::{Color, DiffArgs, DiffFormat};
use super::output::write_stdout;
use anyhow::{bail, Context, Result};
use skillbake_build::diff::{self, git};
use skillbake_build::{check, CheckOptions};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One side of the comparison, ready to check (a revision's temporary copy lives as long as
/// its `Side`).
pub(super) enum Side {
    Folder(PathBuf),
    Revision(git::Tree),
}

impl Side {
    pub(super) fn path(&self) -> &Path {
        match self {
            Side::Folder(p) => p,
            Side::Revision(t) => t.path(),
        }
    }

    pub(super) fn label(&self) -> String {
        match self {
            Side::Folder(p) => p.to_string_lossy().replace('\\', "/"),
            Side::Revision(t) => t.label().to_string(),
        }
    }
}

/// The baseline of the skills folder `dir`: the folder `rev` when one exists, else `dir` as it
/// is at revision `rev`, read through git.
pub(super) fn baseline_of(dir: &Path, rev: &str) -> Result<Side> {
    if Path::new(rev).is_dir() {
        return Ok(Side::Folder(PathBuf::from(rev)));
    }
    Ok(Side::Revision(revision_of(dir, rev)?))
}

/// The skills folder `dir` as it is at `rev`, read through git.
pub(super) fn revision_of(dir: &Path, rev: &str) -> Result<git::Tree> {
    let (top, rel) = git::locate(dir).with_context(|| {
        format!(
            "cannot read `{}` at `{rev}`: it must be inside a git repository",
            dir.display()
        )
    })?;
    git::read(&top, rev, &rel).with_context(|| format!("cannot read `{rev}`"))
}

fn side(arg: &str, default_dir: &Path) -> Result<Side> {
    let as_path = Path::new(arg);
    if as_path.is_dir() {
        return Ok(Side::Folder(as_path.to_path_buf()));
    }
    let here = Path::new(".");
    let tree = match arg.split_once(':') {
        // `REV:PATH`: PATH from the top of the repository, as in `git show REV:PATH`.
        Some((rev, path)) => {
            let (top, _) = git::locate(here).context("a `REV:PATH` side needs a git repository")?;
            git::read(&top, rev, path).with_context(|| format!("cannot read `{arg}`"))?
        }
        None if default_dir.is_dir() => revision_of(default_dir, arg)?,
        None => bail!(
            "`{arg}` is neither a folder nor a revision of the skills folder `{}` (which does not exist here); give `REV:PATH`",
            default_dir.display()
        ),
    };
    Ok(Side::Revision(tree))
}

fn checked(side: &Side, opts: &CheckOptions) -> skillbake_build::Checked {
    let checked = check(side.path(), opts);
    let errors = checked.report.errors();
    if errors > 0 {
        eprintln!(
            "skillbake: `{}` has {errors} error(s); packs that do not parse are left out of the comparison (run `skillbake check`)",
            side.label()
        );
    }
    checked
}

/// `skillbake diff`.
pub fn run(args: DiffArgs) -> Result<ExitCode> {
    let DiffArgs {
        sides,
        baseline,
        format,
        profile,
        color,
    } = args;
    let (old, new) = match (baseline, sides.as_slice()) {
        (Some(rev), []) => {
            let dir = PathBuf::from("skills");
            (baseline_of(&dir, &rev)?, Side::Folder(dir))
        }
        (Some(rev), [dir]) => {
            let dir = PathBuf::from(dir);
            if !dir.is_dir() {
                bail!("`{}` is not a folder", dir.display());
            }
            (baseline_of(&dir, &rev)?, Side::Folder(dir))
        }
        (Some(_), _) => bail!("with --baseline REV, give at most one folder (the skills folder now)"),
        (None, [a, b]) => {
            let default_dir = Path::new("skills");
            (side(a, default_dir)?, side(b, default_dir)?)
        }
        (None, _) => bail!("give two sides (`skillbake diff OLD NEW`, each a folder or a git revision), or `--baseline REV [FOLDER]`"),
    };
    let opts = CheckOptions {
        profile: profile
            .as_deref()
            .and_then(skillbake_build::Profile::from_name),
        ..CheckOptions::default()
    };
    let (old_skills, new_skills) = (checked(&old, &opts), checked(&new, &opts));
    let d = diff::diff(&old_skills, &new_skills, &old.label(), &new.label());
    let out = match format {
        DiffFormat::Human => {
            let color = match color {
                Color::Always => true,
                Color::Never => false,
                Color::Auto => {
                    std::io::stdout().is_terminal()
                        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                }
            };
            diff::report::human(&d, color)
        }
        DiffFormat::Json => diff::report::json(&d),
        DiffFormat::Markdown => diff::report::markdown(&d),
    };
    write_stdout(out.as_bytes());
    Ok(if d.not_bumped().next().is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
