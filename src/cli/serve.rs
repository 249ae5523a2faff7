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
    /// Skills per page of the MCP Skills extension's `skills/list`, for hosts that want small
    /// pages (the rest follow with `nextCursor`).
    #[arg(long, value_name = "N", default_value_t = skillbake_mcp::SKILLS_PAGE)]
    skills_page: usize,
    /// With --http: require a bearer token of FILE on every MCP request. One `AGENT TOKEN`
    /// line per token (the token in clear, or `sha256:HEX` of it); `#` comments and blank
    /// lines are skipped. /healthz stays open.
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// With --http: the agents' profiles and the rollouts (a TOML file: `[agents.NAME]` with
    /// `skills`, `buckets`, `requires`, `allow`, `max-runs`, `rate`; `[default]`;
    /// `[rollout.SKILL]` with `version`, `share`, `agents`), checked against the embedded
    /// skills and the token file's agents before the server starts.
    #[arg(long, value_name = "FILE", requires = "http")]
    profiles: Option<PathBuf>,
    /// With --http: live MCP sessions in all; at the cap a new one evicts the oldest idle one.
    #[arg(long, value_name = "N", default_value_t = http::Limits::DEFAULT_MAX_SESSIONS, requires = "http")]
    max_sessions: usize,
    /// With --http: live MCP sessions of one agent (without --token-file, of all clients).
    #[arg(long, value_name = "N", default_value_t = http::Limits::DEFAULT_MAX_SESSIONS_PER_AGENT, requires = "http")]
    max_sessions_per_agent: usize,
    /// With --http: time a client has to send a request's headers (such as 10s or 500ms).
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = parse_duration, requires = "http")]
    header_timeout: Duration,
    /// With --http: time a client has to send a request's body.
    #[arg(long, value_name = "TIME", default_value = "30s", value_parser = parse_duration, requires = "http")]
    body_timeout: Duration,
    /// With --http: the largest request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = http::Limits::DEFAULT_MAX_BODY_BYTES, requires = "http")]
    max_body: usize,
    /// With --http: on Ctrl-C or SIGTERM, how long calls in progress may finish before their
    /// runs are stopped (they then answer cancelled).
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = parse_duration, requires = "http")]
    shutdown_grace: Duration,
    /// Append one JSON line per tool call to FILE (stdio and HTTP): time, agent, client,
    /// session (hashed), tool, skill, version and why that version, a hash of the arguments,
    /// outcome, duration, bytes in and out, and the run's exit status and sandbox mode.
    #[arg(long, value_name = "FILE")]
    call_log: Option<PathBuf>,
    /// With --call-log: rotate the log before it grows past BYTES (FILE.1 is the newest
    /// rotated file) [default: no bound].
    #[arg(long, value_name = "BYTES", requires = "call_log")]
    call_log_max_bytes: Option<u64>,
    /// With --call-log-max-bytes: how many rotated files are kept.
    #[arg(long, value_name = "N", default_value_t = skillbake_exec::DEFAULT_LOG_KEEP, requires = "call_log_max_bytes")]
    call_log_keep: u32,
    /// Send an OpenTelemetry span per tool call to the collector at URL over OTLP/HTTP (JSON):
    /// a base URL such as http://127.0.0.1:4318 (`/v1/traces` is added) or the full traces
    /// URL. Only http:// is spoken. Spans are queued and sent in batches by a thread of their
    /// own; a collector that is down costs no call any time.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// With --otlp-endpoint: the `service.name` of the spans.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "skillbake",
        requires = "otlp_endpoint"
    )]
    otlp_service_name: String,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// How long spans still queued when serving ends may take to be sent.
const TRACES_FLUSH: Duration = Duration::from_secs(2);

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
    if args.skills_page == 0 {
        bail!("--skills-page must be at least 1");
    }
    let mut server = server
        .with_run_limit(max_runs)
        .with_skills_page(args.skills_page);
    if let Some(path) = &args.call_log {
        let log = super::run::open_log(
            path,
            args.call_log_max_bytes,
            args.call_log_keep,
            "the call log",
        )?;
        server = server.with_call_log(skillbake_mcp::CallLog::new(log));
    }
    let traces = match &args.otlp_endpoint {
        Some(url) => {
            let endpoint = skillbake_mcp::traces::Endpoint::parse(url)?;
            let exporter =
                skillbake_mcp::traces::Exporter::start(endpoint, &args.otlp_service_name)?;
            server = server.with_traces(exporter.clone());
            Some(exporter)
        }
        None => None,
    };
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
        Some(addr) => runtime.block_on(serve_http(server, addr, &args)),
        None => runtime
            .block_on(skillbake_mcp::serve(server))
            .map_err(anyhow::Error::from),
    };
    session_over.store(true, Ordering::Relaxed);
    // Give running scripts the time to be stopped; a read of stdin may still be pending on the
    // blocking pool, so do not wait for everything.
    runtime.shutdown_timeout(Duration::from_millis(500));
    if let Some(traces) = traces {
        let counts = traces.shutdown(TRACES_FLUSH);
        if counts.dropped + counts.failed > 0 {
            eprintln!(
                "skillbake: {} spans sent to {}, {} lost ({} in requests that failed; {} on a full queue or still unsent when the server stopped)",
                counts.sent,
                traces.endpoint().url(),
                counts.dropped + counts.failed,
                counts.failed,
                counts.dropped
            );
        }
    }
    result?;
    Ok(ExitCode::SUCCESS)
}

/// Serves until Ctrl-C or SIGTERM; then calls in progress get the grace period, and scripts
/// still running after it are stopped, so that their calls answer and the server can finish.
async fn serve_http(server: Server, addr: SocketAddr, args: &ServeArgs) -> Result<()> {
    // Installed before anything is printed: a SIGTERM right after the banner stops the server
    // gracefully, never by the default action.
    let signals = StopSignal::install()?;
    let tokens = match &args.token_file {
        Some(path) => Some(Arc::new(http::Tokens::load(path)?)),
        None => None,
    };
    let options = http::Options {
        path: args.http_path.clone(),
        allowed_hosts: args.allowed_hosts.clone(),
        allowed_origins: args.allowed_origins.clone(),
        tokens,
        limits: http::Limits {
            max_sessions: args.max_sessions,
            max_sessions_per_agent: args.max_sessions_per_agent,
            header_timeout: args.header_timeout,
            body_timeout: args.body_timeout,
            max_body_bytes: args.max_body,
            shutdown_grace: args.shutdown_grace,
        },
    };
    options.check()?;
    let server = match &args.profiles {
        Some(path) => {
            let agents: Vec<&str> = match &options.tokens {
                Some(t) => t.agents(),
                None => vec![skillbake_mcp::ANONYMOUS],
            };
            let profiles =
                skillbake_mcp::Profiles::load(path, &BUNDLED, &agents, server.granted())?;
            server.with_profiles(profiles)
        }
        None => server,
    };
    if !addr.ip().is_loopback() && server.executes() && options.tokens.is_none() {
        bail!(
            "refusing to run packs for any client that can reach {addr}: with --execute or --allow beyond loopback, give --token-file FILE (or bind to 127.0.0.1)"
        );
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener
        .local_addr()
        .with_context(|| format!("cannot read the address bound for {addr}"))?;
    let skills = BUNDLED.len();
    let auth = match &options.tokens {
        Some(t) => {
            let n = t.agents().len();
            format!(
                ", bearer tokens of {n} agent{}",
                if n == 1 { "" } else { "s" }
            )
        }
        None => String::new(),
    };
    eprintln!(
        "skillbake: serving {skills} skill{} over MCP at http://{bound}{} (health: http://{bound}{}{auth}); Ctrl-C stops",
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
        if options.tokens.is_none() {
            eprintln!(
                "skillbake: warning: any client that can reach {bound} can read every skill: give --token-file FILE, or bind to 127.0.0.1"
            );
        }
    }
    http::serve(server, listener, options, signals.recv())
        .await
        .map_err(anyhow::Error::from)
}

/// Ctrl-C and, on Unix, SIGTERM, with their handlers installed.
struct StopSignal {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl StopSignal {
    /// Installs the handlers (from then on the signals no longer kill the process).
    fn install() -> Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(StopSignal {
                term: signal(SignalKind::terminate())
                    .context("cannot install the SIGTERM handler")?,
                int: signal(SignalKind::interrupt())
                    .context("cannot install the SIGINT handler")?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignal {})
    }

    /// Completes on the first of the signals.
    async fn recv(self) {
        #[cfg(unix)]
        {
            let StopSignal { mut term, mut int } = self;
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// A duration such as `10s`, `500ms`, `2m` or `1.5` (seconds).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale < 1e9 => {
            Ok(Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!(
            "`{text}` is not a duration: write a number of seconds, or one with `ms`, `s` or `m` (such as 500ms or 10s)"
        )),
    }
}
