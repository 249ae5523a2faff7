//! `skillbake check`: validate skill packs on disk and report every problem.

use super::args::{CheckArgs, Color};
use anyhow::{bail, Result};
use skillbake_build::report::Format;
use skillbake_build::report::Report;
use skillbake_build::{CheckOptions, Code, Level, Profile};
use skillbake_format::suggest::{closest, did_you_mean};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A code named on the command line, with a did-you-mean when it is unknown.
pub(super) fn code_arg(name: &str) -> Result<Code> {
    match Code::from_name(name) {
        Some(c) => Ok(c),
        None if name == skillbake_build::SECURITY => {
            bail!("`{name}` is a group of codes; `skillbake explain` takes one of them")
        }
        None => match closest(name, Code::ALL.iter().map(|c| c.as_str())) {
            Some(s) => bail!("unknown code `{name}`; {}", did_you_mean(s)),
            None => bail!("unknown code `{name}`; `skillbake explain` lists every code"),
        },
    }
}

/// `f` on every path, several at a time on every available core (a worker takes the next path
/// when it is done with one, so one large skills folder does not hold up the small ones); the
/// results in the order of `paths`.
fn each_path<R: Send>(paths: &[PathBuf], f: impl Fn(&Path) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(paths.len());
    if workers <= 1 {
        return paths.iter().map(|p| f(p)).collect();
    }
    let next = AtomicUsize::new(0);
    let (f, next) = (&f, &next);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(p) = paths.get(i) else { break };
                        mine.push((i, f(p)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            // A worker only panics on a bug; re-raise it here rather than lose paths.
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Runs the check over every path and prints the report.
pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let CheckArgs {
        paths,
        format,
        config,
        profile,
        deny,
        warn,
        allow,
        quiet,
        color,
        baseline,
        locked,
        fix,
        diff,
        rename_dirs,
        watch,
    } = args;
    if rename_dirs && !fix && !diff {
        bail!("--rename-dirs goes with --fix or --diff");
    }
    let paths = if paths.is_empty() {
        vec![PathBuf::from("skills")]
    } else {
        paths
    };
    for p in &paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!(
                "`{}` is not a folder: give a skills root or a pack folder",
                p.display()
            ),
            Err(e) => bail!("cannot read `{}`: {e}", p.display()),
        }
    }
    let format = Format::from_name(&format).unwrap_or(Format::Human);
    let mut opts = CheckOptions {
        config_file: config,
        profile: profile.as_deref().and_then(Profile::from_name),
        locked,
        // The catalog's cost is printed after a human report and is part of the JSON one.
        without_cost: match format {
            Format::Human => quiet,
            Format::Json => false,
            Format::Github | Format::Sarif => true,
        },
        ..CheckOptions::default()
    };
    for (names, level) in [
        (&allow, Level::Allow),
        (&warn, Level::Warn),
        (&deny, Level::Deny),
    ] {
        for name in names {
            if level == Level::Deny && name == "warnings" {
                opts.deny_warnings = true;
                continue;
            }
            let codes = match Code::named(name) {
                Some(codes) => codes,
                None => vec![code_arg(name)?],
            };
            for code in codes {
                if code.is_hard() && level != Level::Deny {
                    bail!("`{name}` is a hard error and cannot be allowed or downgraded");
                }
                opts.lints.push((code, level));
            }
        }
    }
    let fix_opts = skillbake_build::fix::FixOptions { rename_dirs };
    if diff {
        return Ok(super::fix::diff(&paths, &opts, fix_opts));
    }
    let mut paths = paths;
    if fix {
        paths = super::fix::fix(&paths, &opts, fix_opts)?;
    }
    let prefix = paths.len() > 1 || format.wants_root_prefix();
    // Each folder is checked on its own (against itself at the baseline revision, whose
    // temporary copy lives until its check is done), several at once; the reports are merged in
    // the order given.
    let reports = each_path(&paths, |p| -> Result<Report> {
        let side = match &baseline {
            Some(rev) => Some(super::diff::baseline_of(p, rev)?),
            None => None,
        };
        let mut opts = opts.clone();
        opts.baseline = side.as_ref().map(|s| skillbake_build::Baseline {
            dir: s.path().to_path_buf(),
            label: s.label(),
        });
        let mut checked = skillbake_build::check(p, &opts).report;
        if prefix {
            checked.prefix_paths(&p.to_string_lossy().replace('\\', "/"));
        }
        Ok(checked)
    });
    let reports = reports.into_iter().collect::<Result<Vec<_>>>()?;
    let color = resolve(color);
    let watching = watch.then(|| reports.clone());
    let report = Report::merge_all(reports);
    print(&report, format, color, quiet);
    if let Some(first) = watching {
        let printer = super::watch::Printer {
            format,
            color,
            quiet,
        };
        return Ok(super::watch::run(&paths, &first, &opts, &printer));
    }
    Ok(if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether to colour the output.
fn resolve(color: Color) -> bool {
    match color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Prints the report, with the catalog's cost after a human report.
fn print(report: &Report, format: Format, color: bool, quiet: bool) {
    let mut out = format.emitter(color, quiet).render(report);
    if matches!(format, Format::Human) && !quiet {
        if let Some(cost) = &report.cost {
            out.push_str(&cost.summary());
            out.push('\n');
        }
    }
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an error worth reporting.
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
}
