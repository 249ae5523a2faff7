//! `skillbake prompt`: the catalog of the skills compiled into this binary, for a system prompt.

use super::output::write_stdout;
use anyhow::Result;
use skillbake::CatalogFormat;
use skillbake_cli::BUNDLED;
use std::process::ExitCode;

/// `skillbake prompt`.
pub fn run(format: &str, budget: Option<usize>) -> Result<ExitCode> {
    let format = CatalogFormat::from_name(format).unwrap_or(CatalogFormat::Xml);
    let catalog = BUNDLED.catalog(format, budget);
    let mut text = catalog.text;
    if !text.is_empty() {
        text.push('\n');
    }
    write_stdout(text.as_bytes());
    if catalog.omitted > 0 {
        eprintln!(
            "skillbake: {} of {} skills left out to fit {} characters",
            catalog.omitted,
            BUNDLED.len(),
            budget.unwrap_or(0)
        );
    }
    Ok(ExitCode::SUCCESS)
}
