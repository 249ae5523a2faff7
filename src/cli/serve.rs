//! `skillbake serve`: the MCP server serving the skills compiled into this binary (see
//! `skillbake_mcp`), over stdio (stdout carries MCP messages only) or, with `--http`, over
//! Streamable HTTP for many agents at once. With `--execute` or any `--allow`, pack tools run
//! runnable packs under the policy the flags describe.

use super::run::PolicyArgs;
use anyhow::{bail, Context, Result};
use skillbake_cli::BUNDLED;
use skillbake_mcp::{http, Server};
use std::net::SocketAddr;
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
    /// Serve MCP over Streamable HTTP on ADDR (such as 127.0.0.1:8080; port 0 picks a free one)
    /// instead of stdio, for many clients at once. The address is printed to stderr.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// With --http: the path of the MCP endpoint.
    #[arg(long, value_name = "PATH", default_value = http::MCP_PATH, requires = "http")]
    http_path: String,
    /// With --http: a host name (or name:port) clients may use in the Host header (repeatable).
    /// Only loopback names are accepted by default, which defeats DNS rebinding.
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    allowed_hosts: Vec<String>,
    /// With --http: a browser origin allowed to call the server (repeatable), such as
    /// http://localhost:5173; requests from any other origin are refused.
    #[arg(long = "allowed-origin", value_name = "ORIGIN", requires = "http")]
    allowed_origins: Vec<String>,
    /// Scripts running at once across every client; further calls wait for a slot
    /// [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    max_runs: Option<usize>,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// `skillbake serve`: over stdio until the client closes stdin; over HTTP until Ctrl-C or
/// SIGTERM.
pub fn run(args: ServeArgs) -> Result<ExitCode> {
    // When the server stops, scripts still running are stopped with their process groups.
    let session_over = Arc::new(AtomicBool::new(false));
    let server = if args.execute || args.policy.grants() {
        super::run::warn_switched_off();
        let policy = args
            .policy
            .policy(args.workdir.clone())?
            .cancel_on(Arc::clone(&session_over));
        Server::with_policy(&BUNDLED, policy)?
    } else {
        Server::new(&BUNDLED)?
    };
    let max_runs = match args.max_runs {
        Some(0) => bail!("--max-runs must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let server = server.with_run_limit(max_runs);
    let runtime = match args.http {
        Some(_) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
    .context("cannot start the async runtime")?;
    let result = match args.http {
        Some(addr) => runtime.block_on(serve_http(server, addr, &args, &session_over)),
        None => runtime
            .block_on(skillbake_mcp::serve(server))
            .map_err(anyhow::Error::from),
    };
    session_over.store(true, Ordering::Relaxed);
    // Give running scripts the time to be stopped; a read of stdin may still be pending on the
    // blocking pool, so do not wait for everything.
    runtime.shutdown_timeout(Duration::from_millis(500));
    result?;
    Ok(ExitCode::SUCCESS)
}

/// Serves until Ctrl-C or SIGTERM, which also sets `stopping`: scripts still running are
/// stopped, so that their calls answer and the server can finish.
async fn serve_http(
    server: Server,
    addr: SocketAddr,
    args: &ServeArgs,
    stopping: &Arc<AtomicBool>,
) -> Result<()> {
    let options = http::Options {
        path: args.http_path.clone(),
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
    };
    options.check()?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener
        .local_addr()
        .with_context(|| format!("cannot read the address bound for {addr}"))?;
    let skills = BUNDLED.len();
    eprintln!(
        "skillbake: serving {skills} skill{} over MCP at http://{bound}{} (health: http://{bound}{}); Ctrl-C stops",
        if skills == 1 { "" } else { "s" },
        options.path,
        http::HEALTH_PATH,
    );
    if !bound.ip().is_loopback() {
        if options.allowed_hosts.is_empty() {
            eprintln!(
                "skillbake: note: only loopback host names are accepted; clients reaching {bound} by another name or address need --allowed-host NAME"
            );
        }
        if server.executes() {
            eprintln!(
                "skillbake: warning: packs run for any client that can reach {bound}, and this server has no authentication: put it behind a proxy that authenticates, or bind it to 127.0.0.1"
            );
        }
    }
    let stopping = Arc::clone(stopping);
    let stop = async move {
        stop_signal().await;
        stopping.store(true, Ordering::Relaxed);
    };
    http::serve(server, listener, options, stop)
        .await
        .map_err(anyhow::Error::from)
}

/// Completes on Ctrl-C, or SIGTERM on Unix.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
