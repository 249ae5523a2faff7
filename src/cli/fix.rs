//! `skillbake check --fix` and `--diff`: the fixes of `skillbake_build::fix` planned per path,
//! shown as a unified diff or written (then `check` reports what remains).

use anyhow::{bail, Result};
use skillbake_build::fix::{plan, FixOptions, Plan};
use skillbake_build::CheckOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The path as the diff's and messages' prefix.
fn label(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// Prints why fixes were left out.
fn notes(plan: &Plan, prefix: &str) {
    let mut err = std::io::stderr().lock();
    for s in &plan.skipped {
        let _ = writeln!(err, "skillbake: not fixed: {prefix}/{s}");
    }
}

/// `--diff`: the diff of every path on stdout; exit 1 when there is anything to change.
pub fn diff(paths: &[PathBuf], opts: &CheckOptions, fix: FixOptions) -> ExitCode {
    let mut out = String::new();
    let mut any = false;
    for p in paths {
        let plan = plan(p, opts, fix);
        notes(&plan, &label(p));
        any |= !plan.is_empty();
        out.push_str(&plan.diff(&label(p)));
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    if any {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--fix`: writes every path's fixes, saying what changed on stderr, and returns the paths to
/// check again (a pack given as a path that was renamed is checked under its new name).
pub fn fix(paths: &[PathBuf], opts: &CheckOptions, fix: FixOptions) -> Result<Vec<PathBuf>> {
    let mut after = Vec::with_capacity(paths.len());
    for p in paths {
        let plan = plan(p, opts, fix);
        let prefix = label(p);
        notes(&plan, &prefix);
        if let Err(e) = plan.apply(p) {
            bail!("{e}");
        }
        let mut err = std::io::stderr().lock();
        for f in &plan.files {
            let _ = writeln!(err, "fixed {prefix}/{}: {}", f.path, f.fixes.join("; "));
        }
        let mut path = p.clone();
        for r in &plan.renames {
            let from = if r.from.is_empty() {
                prefix.clone()
            } else {
                format!("{prefix}/{}", r.from)
            };
            let _ = writeln!(err, "renamed {from} to {}: {}", r.to, r.message);
            if r.from.is_empty() {
                path = p.with_file_name(&r.to);
            }
        }
        after.push(path);
    }
    Ok(after)
}
