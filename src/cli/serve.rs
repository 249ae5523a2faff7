//! `skillbake serve`: the MCP server over stdio, serving the skills compiled into this binary
//! (see `skillbake::mcp`). Stdout carries MCP messages only. With `--execute` or any `--allow`,
//! pack tools run runnable packs under the policy the flags describe.

use super::run::PolicyArgs;
use anyhow::{Context, Result};
use skillbake::mcp::Server;
use skillbake::BUNDLED;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    // When the session ends, scripts still running are stopped with their process groups.
    let session_over = Arc::new(AtomicBool::new(false));
    let server = if args.execute || args.policy.grants() {
        let policy = args
            .policy
            .policy(args.workdir)?
            .cancel_on(Arc::clone(&session_over));
        Server::with_policy(&BUNDLED, policy)?
    } else {
        Server::new(&BUNDLED)?
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(skillbake::mcp::serve(server));
    session_over.store(true, Ordering::Relaxed);
    // Give running scripts the time to be stopped; a read of stdin may still be pending on the
    // blocking pool, so do not wait for everything.
    runtime.shutdown_timeout(Duration::from_millis(500));
    result?;
    Ok(ExitCode::SUCCESS)
}
