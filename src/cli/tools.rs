//! `skillbake tools`: tool definitions of the skills compiled into this binary, in one API's
//! dialect.

use super::output::write_stdout;
use anyhow::Result;
use skillbake::ToolsFormat;
use skillbake_cli::BUNDLED;
use std::process::ExitCode;

/// `skillbake tools`.
pub fn run(format: &str) -> Result<ExitCode> {
    let format = ToolsFormat::from_name(format).unwrap_or(ToolsFormat::OpenAi);
    write_stdout(BUNDLED.tools_json(format).as_bytes());
    Ok(ExitCode::SUCCESS)
}
