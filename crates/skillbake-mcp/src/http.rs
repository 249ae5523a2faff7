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
//! header (a browser) is refused unless that origin is allowed; agents do not send one.
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
use axum::routing::get;
use axum::serve::ListenerExt as _;
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::future::Future;
use tokio_util::sync::CancellationToken;

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
    /// endpoint. Empty (the default) refuses every request that carries an `Origin` header.
    pub allowed_origins: Vec<String>,
}

impl Options {
    /// Checks the options [`router`] and [`serve`] would refuse: a path that does not start with
    /// `/`, holds anything but letters, digits and `-._~/` (route syntax such as `{…}` or `*`
    /// included), has an empty segment, or is the health path.
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
        Ok(())
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            path: MCP_PATH.to_string(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// Serves `server` on `listener` until `shutdown` completes, then stops accepting connections,
/// ends every MCP session and returns once the open requests are answered. Must run inside a
/// tokio runtime with I/O and time enabled (a multi-threaded one serves clients in parallel).
pub async fn serve(
    server: Server,
    listener: tokio::net::TcpListener,
    options: Options,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let stop = CancellationToken::new();
    let app = router(server, &options, stop.child_token())?;
    let stopping = stop.clone();
    // Replies go out as several small writes (event-stream chunks): without TCP_NODELAY a client
    // that keeps its connection open waits for its delayed ACK, about 40 ms, on every request.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            // Ends the sessions' event streams, so that the open connections can close.
            stopping.cancel();
        })
        .await
        .map_err(|e| Error::Serve(Box::new(e)))
}

/// The routes of [`serve`], for embedding the MCP endpoint in an application's own server.
/// `stop` ends every session when cancelled.
pub fn router(server: Server, options: &Options, stop: CancellationToken) -> Result<Router, Error> {
    options.check()?;
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop)
        .enforce_origin_validation();
    if !options.allowed_hosts.is_empty() {
        config = config.with_allowed_hosts(options.allowed_hosts.iter().cloned());
    }
    if !options.allowed_origins.is_empty() {
        config = config.with_allowed_origins(options.allowed_origins.iter().cloned());
    }
    let skills = server.registry().len();
    let factory = server.clone();
    let mcp: StreamableHttpService<Server, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(factory.clone()), Default::default(), config);
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
    Ok(Router::new()
        .route(HEALTH_PATH, get(health))
        .route_service(&options.path, mcp)
        .fallback(not_found))
}

fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
