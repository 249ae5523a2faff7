//! `skillbake serve`: the MCP server over stdio, serving the skills compiled into this binary
//! (see `skillbake::mcp`). Stdout carries MCP messages only. With `--execute` or any `--allow`,
//! pack tools run runnable packs under the policy the flags describe.

use super::run::PolicyArgs;
use anyhow::{Context, Result};
use skillbake::mcp::Server;
use skillbake::BUNDLED;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `skillbake serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Run runnable packs when their tools are called (implied by --allow). Without it, pack
    /// tools answer the pack's instructions and the checked arguments, and run nothing.
    #[arg(long)]
    execute: bool,
    /// The scripts' working folder [default: each run's output folder].
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// `skillbake serve`: runs until the client closes stdin.
pub fn run(args: ServeArgs) -> Result<ExitCode> {
    let server = if args.execute || args.policy.grants() {
        Server::with_policy(&BUNDLED, args.policy.policy(args.workdir)?)?
    } else {
        Server::new(&BUNDLED)?
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(skillbake::mcp::serve(server));
    // A read of stdin may still be pending on the blocking pool: do not wait for it.
    runtime.shutdown_background();
    result?;
    Ok(ExitCode::SUCCESS)
}
