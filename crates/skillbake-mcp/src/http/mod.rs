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
use axum::http::StatusCode;
use axum::routing::{any, get};
use axum::Router;
use gate::Gate;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

mod gate;
mod jsonrpc;
mod listen;
mod options;
mod reply;
mod tokens;

pub use options::{Limits, Options, HEALTH_PATH, MCP_PATH};
use reply::json_response;
pub use tokens::{Tokens, MIN_TOKEN_LEN};

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
