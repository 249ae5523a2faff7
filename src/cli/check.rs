//! `skillbake check`: validates skill packs on disk.

use super::{CheckFormat, Color};
use anyhow::{bail, Result};
use skillbake_build::report::{github, human, json};
use skillbake_build::{CheckOptions, Report};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs the check over every path and prints the report.
pub fn run(
    paths: Vec<PathBuf>,
    format: CheckFormat,
    config: Option<PathBuf>,
    color: Color,
) -> Result<ExitCode> {
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
    let opts = CheckOptions {
        config_file: config,
        extra_tools: Vec::new(),
    };
    let several = paths.len() > 1;
    let mut report = Report::default();
    for p in &paths {
        let mut checked = skillbake_build::check(p, &opts).report;
        if several || format == CheckFormat::Github {
            checked.prefix_paths(&p.to_string_lossy().replace('\\', "/"));
        }
        report.merge(checked);
    }
    skillbake_build::diagnostic::sort(&mut report.diagnostics);
    let out = match format {
        CheckFormat::Human => {
            let color = match color {
                Color::Always => true,
                Color::Never => false,
                Color::Auto => {
                    std::io::stdout().is_terminal()
                        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                }
            };
            human::render(&report, color)
        }
        CheckFormat::Json => json::render(&report),
        CheckFormat::Github => github::render(&report),
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an error worth reporting.
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    Ok(if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
