//! The MCP server over Streamable HTTP, for many agents at once. Feature `http`.
//!
//! One listener serves every client: each MCP session gets a clone of the same [`Server`] (the
//! tools, compiled schemas and executor are shared, nothing is rebuilt per session), and
//! requests of all sessions run concurrently on a multi-threaded runtime.
//!
//! * `POST/GET/DELETE {path}` (default `/mcp`): the MCP Streamable HTTP transport of the
//!   official SDK (`rmcp`), with sessions (`Mcp-Session-Id`) and server-sent events.
//! * `GET /healthz`: `{"ok": true, "skills": N, "version": "…"}`, for load balancers and
//!   readiness probes.
//! * Anything else: `404` with a JSON body naming the MCP path.
//!
//! Requests to the MCP path are checked before they reach a session: the `Host` header must
//! name an allowed host (by default only loopback names: `localhost`, `127.0.0.1`, `::1`, which
//! defeats DNS rebinding against a server on this machine), and a request carrying an `Origin`
//! header (a browser) is refused unless that origin is allowed; agents do not send one. An
//! allowed origin gets CORS replies (`Access-Control-Allow-Origin`, and the `OPTIONS`
//! preflight answered).
//!
//! With [`Options::tokens`], every request to the MCP path needs `Authorization: Bearer
//! TOKEN` with a token of the [`Tokens`] (401 and a `WWW-Authenticate: Bearer` challenge
//! otherwise, and nothing else); the [`Agent`](crate::Agent) it names reaches the request
//! handling ([`Agent::of`](crate::Agent::of)), and a session belongs to the agent that opened
//! it (404 for any other). `/healthz` stays open.
//!
//! [`Limits`] bound what a client can hold: live sessions (per agent and in all, the oldest
//! idle one evicted to make room), the time to send the headers and the body, the body's size;
//! and how long a graceful stop waits for calls in progress. A call whose client goes away is
//! cancelled (its run stopped), a request id reused while in progress is answered with an
//! error, and a body that is not one JSON-RPC message gets HTTP 400 with the JSON-RPC error
//! code.
//!
//! ```no_run
//! use skillbake_mcp::{http, Server};
//!
//! /// Serves `registry` (one that `skillbake::include_skills!()` defined) on port 8080.
//! async fn run(registry: &'static skillbake::Registry) -> Result<(), skillbake_mcp::Error> {
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:8080")
//!         .await
//!         .map_err(|e| skillbake_mcp::Error::Serve(Box::new(e)))?;
//!     let server = Server::new(registry)?;
//!     // Until Ctrl-C.
//!     let stop = async {
//!         let _ = tokio::signal::ctrl_c().await;
//!     };
//!     http::serve(server, listener, http::Options::default(), stop).await
//! }
//! ```

use crate::{Error, Server};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use gate::Gate;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

mod gate;
mod jsonrpc;
mod listen;
mod tokens;

pub use tokens::{Tokens, MIN_TOKEN_LEN};

/// The default path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// The path of the health endpoint.
pub const HEALTH_PATH: &str = "/healthz";

/// How the HTTP server checks and routes requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The path of the MCP endpoint ([`MCP_PATH`] by default); must start with `/`.
    pub path: String,
    /// Hosts (`name` or `name:port`) the `Host` header may name. Empty means the loopback names
    /// only (`localhost`, `127.0.0.1`, `::1`); list the names clients use to reach a server
    /// bound to another address.
    pub allowed_hosts: Vec<String>,
    /// Browser origins (`scheme://host:port`, `:*` for any port) allowed to call the MCP
    /// endpoint, with CORS replies. Empty (the default) refuses every request that carries an
    /// `Origin` header.
    pub allowed_origins: Vec<String>,
    /// The bearer tokens of the agents allowed to call the MCP endpoint; `None` (the default)
    /// lets anyone who can reach it call it, as the anonymous agent.
    pub tokens: Option<Arc<Tokens>>,
    /// What a client may hold, and how long a stop waits.
    pub limits: Limits,
}

/// What clients may hold on the server, and how long a graceful stop waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Live sessions in all ([`Limits::DEFAULT_MAX_SESSIONS`]); at the cap a new session evicts
    /// the oldest idle one (no reply open), or gets 503 when all are busy.
    pub max_sessions: usize,
    /// Live sessions of one agent ([`Limits::DEFAULT_MAX_SESSIONS_PER_AGENT`]; without tokens
    /// every client is the one anonymous agent), evicted the same way.
    pub max_sessions_per_agent: usize,
    /// Time a client has to send a request's headers; the connection is closed after it.
    pub header_timeout: Duration,
    /// Time a client has to send a request's body once its headers are in (408 after it).
    pub body_timeout: Duration,
    /// The largest request body (413 above it, told by `Content-Length` before any is read).
    pub max_body_bytes: usize,
    /// How long a stop lets calls in progress finish; then their runs are stopped and they
    /// answer cancelled.
    pub shutdown_grace: Duration,
}

impl Limits {
    /// The default [`Limits::max_sessions`].
    pub const DEFAULT_MAX_SESSIONS: usize = 1024;
    /// The default [`Limits::max_sessions_per_agent`].
    pub const DEFAULT_MAX_SESSIONS_PER_AGENT: usize = 256;
    /// The default [`Limits::header_timeout`].
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default [`Limits::body_timeout`].
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default [`Limits::max_body_bytes`]: 4 MiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
    /// The default [`Limits::shutdown_grace`].
    pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_sessions: Limits::DEFAULT_MAX_SESSIONS,
            max_sessions_per_agent: Limits::DEFAULT_MAX_SESSIONS_PER_AGENT,
            header_timeout: Limits::DEFAULT_HEADER_TIMEOUT,
            body_timeout: Limits::DEFAULT_BODY_TIMEOUT,
            max_body_bytes: Limits::DEFAULT_MAX_BODY_BYTES,
            shutdown_grace: Limits::DEFAULT_SHUTDOWN_GRACE,
        }
    }
}

impl Options {
    /// Checks the options [`router`] and [`serve`] would refuse: a path that does not start with
    /// `/`, holds anything but letters, digits and `-._~/` (route syntax such as `{…}` or `*`
    /// included), has an empty segment, or is the health path; a limit of zero.
    pub fn check(&self) -> Result<(), Error> {
        let path = self.path.as_str();
        let plain = path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~/".contains(&b));
        if !path.starts_with('/') || !plain || path.contains("//") || path == HEALTH_PATH {
            return Err(Error::Config(format!(
                "the MCP path must start with `/`, hold only letters, digits and `-._~/` (no \
                 empty segment) and differ from `{HEALTH_PATH}`, not `{path}`"
            )));
        }
        let l = &self.limits;
        let zero = [
            ("the session cap", l.max_sessions == 0),
            ("the per-agent session cap", l.max_sessions_per_agent == 0),
            ("the header timeout", l.header_timeout.is_zero()),
            ("the body timeout", l.body_timeout.is_zero()),
            ("the body size limit", l.max_body_bytes == 0),
        ];
        if let Some((what, _)) = zero.iter().find(|(_, z)| *z) {
            return Err(Error::Config(format!("{what} must be more than 0")));
        }
        Ok(())
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            path: MCP_PATH.to_string(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            tokens: None,
            limits: Limits::default(),
        }
    }
}

/// Serves `server` on `listener` until `shutdown` completes, then stops accepting connections,
/// lets the calls in progress finish within [`Limits::shutdown_grace`] (then stops their runs,
/// so that they answer cancelled), ends every MCP session and returns. Must run inside a tokio
/// runtime with I/O and time enabled (a multi-threaded one serves clients in parallel).
pub async fn serve(
    server: Server,
    listener: tokio::net::TcpListener,
    options: Options,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let stop = CancellationToken::new();
    let (app, gate) = build(server.clone(), &options, stop.child_token())?;
    listen::serve(listen::Stopping {
        app,
        gate,
        server,
        listener,
        header_timeout: options.limits.header_timeout,
        grace: options.limits.shutdown_grace,
        stop,
        shutdown,
    })
    .await
}

/// The routes of [`serve`], for embedding the MCP endpoint in an application's own server.
/// `stop` ends every session when cancelled. The header timeout and the graceful stop are
/// [`serve`]'s: an application's own server sets its own.
pub fn router(server: Server, options: &Options, stop: CancellationToken) -> Result<Router, Error> {
    build(server, options, stop).map(|(app, _)| app)
}

fn build(
    server: Server,
    options: &Options,
    stop: CancellationToken,
) -> Result<(Router, Arc<Gate>), Error> {
    options.check()?;
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop)
        .with_max_request_body_bytes(options.limits.max_body_bytes)
        .enforce_origin_validation();
    if !options.allowed_hosts.is_empty() {
        config = config.with_allowed_hosts(options.allowed_hosts.iter().cloned());
    }
    if !options.allowed_origins.is_empty() {
        config = config.with_allowed_origins(options.allowed_origins.iter().cloned());
    }
    let skills = server.registry().len();
    let factory = server.clone();
    let sessions = Arc::new(LocalSessionManager::default());
    let mcp: StreamableHttpService<Server, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(factory.clone()), Arc::clone(&sessions), config);
    let gate = Arc::new(Gate::new(mcp, sessions, options));
    let path = options.path.clone();
    let health = move || async move {
        json_response(
            StatusCode::OK,
            json!({"ok": true, "skills": skills, "version": env!("CARGO_PKG_VERSION")}),
        )
    };
    let not_found = move |uri: axum::http::Uri| {
        let path = path.clone();
        async move {
            json_response(
                StatusCode::NOT_FOUND,
                json!({
                    "ok": false,
                    "error": format!("nothing is served at `{}`: MCP is served at `{path}`, health at `{HEALTH_PATH}`", uri.path()),
                }),
            )
        }
    };
    let handler = Arc::clone(&gate);
    let mcp_route = any(move |request: axum::extract::Request| {
        let gate = Arc::clone(&handler);
        async move { gate.handle(request).await }
    });
    let app = Router::new()
        .route(HEALTH_PATH, get(health))
        .route(&options.path, mcp_route)
        .fallback(not_found);
    Ok((app, gate))
}

fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
