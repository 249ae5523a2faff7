//! `skillbake route` and `skillbake prompt --query`: route a request among the skills compiled
//! into this binary.

use super::output::write_stdout;
use anyhow::{bail, Result};
use skillbake::{CatalogFormat, RouteOptions};
use skillbake_cli::BUNDLED;
use std::process::ExitCode;

fn options<'a>(top: usize, bucket: Option<&'a str>) -> Result<RouteOptions<'a>> {
    if let Some(b) = bucket {
        let known = BUNDLED.buckets();
        let holds = known.iter().any(|k| skillbake::in_bucket(k, b));
        if !holds {
            let list: Vec<&str> = known.iter().copied().filter(|k| !k.is_empty()).collect();
            if list.is_empty() {
                bail!("no skill is in bucket `{b}`: every embedded skill is at the skills root");
            }
            bail!("no skill is in bucket `{b}`; buckets: {}", list.join(", "));
        }
    }
    Ok(RouteOptions { top, bucket })
}

/// `skillbake route REQUEST [--top K] [--bucket B] [--format text|json]`. Exit 1 when no skill
/// matches.
pub fn run(request: &str, top: usize, bucket: Option<&str>, format: &str) -> Result<ExitCode> {
    let opts = options(top, bucket)?;
    let routed = BUNDLED.route_with(request, opts);
    let out = if format == "json" {
        let mut s = BUNDLED.route_json(request, opts);
        s.push('\n');
        s
    } else if routed.is_empty() {
        String::new()
    } else {
        let width = routed
            .iter()
            .map(|r| r.skill.name().len())
            .max()
            .unwrap_or(0);
        let mut s = String::new();
        for (i, r) in routed.iter().enumerate() {
            let fields: Vec<&str> = r.fields().collect();
            s.push_str(&format!(
                "{:>2}. {:<width$}  {:>8.4}  {}\n",
                i + 1,
                r.skill.name(),
                r.score,
                fields.join(", ")
            ));
        }
        s
    };
    write_stdout(out.as_bytes());
    if routed.is_empty() {
        eprintln!("skillbake: no skill matches the request");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `skillbake prompt --query REQUEST [--top K] [--bucket B] [--format ...]`.
pub fn prompt(format: &str, request: &str, top: usize, bucket: Option<&str>) -> Result<ExitCode> {
    let opts = options(top, bucket)?;
    let format = CatalogFormat::from_name(format).unwrap_or(CatalogFormat::Xml);
    let mut text = BUNDLED.route_catalog(request, opts, format);
    text.push('\n');
    write_stdout(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}
