//! `skillbake serve`: the MCP server over stdio, serving the skills compiled into this binary
//! (see `skillbake::mcp`). Stdout carries MCP messages only.

use anyhow::{Context, Result};
use skillbake::BUNDLED;
use std::process::ExitCode;

/// `skillbake serve`: runs until the client closes stdin.
pub fn run() -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(skillbake::mcp::serve_stdio(&BUNDLED));
    // A read of stdin may still be pending on the blocking pool: do not wait for it.
    runtime.shutdown_background();
    result?;
    Ok(ExitCode::SUCCESS)
}
