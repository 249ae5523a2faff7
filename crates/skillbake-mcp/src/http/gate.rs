//! Everything a request to the MCP path goes through before it reaches rmcp's Streamable HTTP
//! service, and what its reply goes through after:
//!
//! 1. `Host` and `Origin` checks; CORS preflight (`OPTIONS`) for allowed origins, and
//!    `Access-Control-Allow-Origin` on their replies.
//! 2. The bearer token ([`Tokens`]): 401 with `WWW-Authenticate` without a valid one; the
//!    [`Agent`] it names goes in the request's extensions.
//! 3. The session: a `Mcp-Session-Id` this server gave to another agent (or never gave, or
//!    evicted) is 404; a new session over the caps evicts the oldest idle one, or is 503.
//! 4. The body: read within the body timeout and the size limit (408, 413), and checked as
//!    JSON-RPC ([`jsonrpc`]: 400 with `-32700`/`-32600`, `-32602` for bad
//!    parameters); a request id still in progress in the same session is answered with an
//!    error.
//! 5. The reply: while its stream is open the request counts as in flight (for the caps and a
//!    graceful stop); a stream dropped before its end (the client went away) sends the session
//!    `notifications/cancelled` for the request, which stops its run.
//!
//! A refusal in steps 1–4 before the body was read whole carries `Connection: close` and ends
//! its connection, so that no client reuses a connection the server is closing.

// The error of these checks is the HTTP reply itself, made once per refused request and sent
// as it is: boxing it would only add an allocation.
#![allow(clippy::result_large_err)]

use super::jsonrpc::{self, Message, Refusal, INVALID_REQUEST};
use super::options::{Limits, Options};
use super::reply::json_response;
use super::tokens::Tokens;
use crate::agent::Agent;
use crate::Server;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use http_body_util::BodyExt as _;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

const SESSION_HEADER: &str = "mcp-session-id";

/// The request headers a browser page may send (answered to a preflight).
const ALLOWED_HEADERS: &str =
    "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id";

/// The state shared by every request to the MCP path.
pub(crate) struct Gate {
    mcp: StreamableHttpService<Server, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    tokens: Option<Arc<Tokens>>,
    limits: Limits,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    table: Mutex<Table>,
    /// Requests whose reply is still open.
    in_flight: AtomicUsize,
    idle: Notify,
}

/// The sessions this server gave out, by id.
#[derive(Default)]
struct Table {
    sessions: HashMap<String, Record>,
    /// `initialize` requests not answered yet, by agent (they count against the caps).
    opening: HashMap<Agent, usize>,
}

struct Record {
    agent: Agent,
    last_used: Instant,
    /// Open replies (request streams and the `GET` stream).
    busy: usize,
    /// The ids of the requests in progress (as JSON text).
    requests: HashSet<String>,
}

impl Gate {
    pub(crate) fn new(
        mcp: StreamableHttpService<Server, LocalSessionManager>,
        sessions: Arc<LocalSessionManager>,
        options: &Options,
    ) -> Gate {
        Gate {
            mcp,
            sessions,
            tokens: options.tokens.clone(),
            limits: options.limits.clone(),
            allowed_hosts: options.allowed_hosts.clone(),
            allowed_origins: options.allowed_origins.clone(),
            table: Mutex::default(),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until no request is in flight, or `within` has passed; says whether none is.
    pub(crate) async fn wait_idle(&self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let notified = self.idle.notified();
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.in_flight.load(Ordering::SeqCst) == 0;
            }
        }
    }

    /// Answers one request to the MCP path.
    pub(crate) async fn handle(self: Arc<Self>, request: Request<Body>) -> Response {
        let origin = request
            .headers()
            .get(header::ORIGIN)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut response = match self.checked(request, origin.as_deref()).await {
            Ok(r) | Err(r) => r,
        };
        if let Some(origin) = origin.filter(|o| origin_allowed(o, &self.allowed_origins)) {
            cors_headers(response.headers_mut(), &origin);
        }
        response
    }

    async fn checked(
        self: &Arc<Self>,
        request: Request<Body>,
        origin: Option<&str>,
    ) -> Result<Response, Response> {
        // Refused on its headers: before the body is read, so the connection ends.
        let Some((agent, session)) = self
            .admit(request.method(), request.headers(), origin)
            .map_err(closing)?
        else {
            return Ok(preflight(request.headers()));
        };
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(agent.clone());
        match parts.method {
            Method::POST => {
                let body = self
                    .read_body(&parts.headers, body)
                    .await
                    .map_err(closing)?;
                let message = jsonrpc::classify(&body).map_err(refused_message)?;
                let request = Request::from_parts(parts, Body::from(body));
                self.post(request, agent, session, message).await
            }
            Method::GET => {
                let guard = session.map(|id| self.begin(&id, None));
                let response = self.forward(Request::from_parts(parts, body)).await;
                Ok(self.guarded(response, guard))
            }
            Method::DELETE => {
                let mut response = self.forward(Request::from_parts(parts, body)).await;
                if response.status().is_success() {
                    if let Some(id) = session {
                        self.table().sessions.remove(&id);
                    }
                    // The session is gone when this answers, not accepted for later: `200 OK`,
                    // as the TypeScript SDK's server answers and the Python SDK's client
                    // expects (it logs a failed termination on `202 Accepted`).
                    if response.status() == StatusCode::ACCEPTED {
                        *response.status_mut() = StatusCode::OK;
                    }
                }
                Ok(response)
            }
            _ => Ok(self.forward(Request::from_parts(parts, body)).await),
        }
    }

    /// The agent of the request's bearer token, or the anonymous caller without tokens.
    /// Steps 1–3, on the request's method and headers: the agent and its session, or `None`
    /// for a CORS preflight (which needs neither).
    fn admit(
        &self,
        method: &Method,
        headers: &HeaderMap,
        origin: Option<&str>,
    ) -> Result<Option<(Agent, Option<String>)>, Response> {
        check_host(headers, &self.allowed_hosts)?;
        if let Some(origin) = origin {
            if !origin_allowed(origin, &self.allowed_origins) {
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    format!("Forbidden: the Origin `{origin}` is not allowed (start the server with --allowed-origin {origin} to allow it)"),
                ));
            }
        }
        if method == Method::OPTIONS {
            return Ok(None);
        }
        let agent = self.authenticate(headers)?;
        let session = headers
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if let Some(id) = &session {
            self.check_owner(id, &agent)?;
        }
        Ok(Some((agent, session)))
    }

    fn authenticate(&self, headers: &HeaderMap) -> Result<Agent, Response> {
        let Some(tokens) = &self.tokens else {
            return Ok(Agent::anonymous());
        };
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        let Some(token) = presented else {
            return Err(unauthorized(
                r#"Bearer realm="skillbake""#,
                "Unauthorized: send `Authorization: Bearer TOKEN` with a token of the server's token file",
            ));
        };
        tokens.verify(token).ok_or_else(|| {
            unauthorized(
                r#"Bearer realm="skillbake", error="invalid_token", error_description="the token is not valid for this server""#,
                "Unauthorized: the bearer token is not valid for this server",
            )
        })
    }

    /// A session id belongs to the agent that opened it; any other agent is told it does not
    /// exist (as is anyone, for an id this server did not give or no longer holds).
    fn check_owner(&self, id: &str, agent: &Agent) -> Result<(), Response> {
        let table = self.table();
        match table.sessions.get(id) {
            Some(r) if r.agent == *agent => Ok(()),
            _ => Err(refuse(
                StatusCode::NOT_FOUND,
                "Not Found: no such session (it ended, was evicted, or was never opened by this \
                 agent); send a new `initialize` without Mcp-Session-Id",
            )),
        }
    }

    /// Reads the body within the body timeout and the size limit.
    async fn read_body(&self, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
        let max = self.limits.max_body_bytes;
        let too_large = || {
            refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Payload Too Large: the body exceeds {max} bytes"),
            )
        };
        let declared = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > max as u64) {
            return Err(too_large());
        }
        let limited = http_body_util::Limited::new(body, max);
        match tokio::time::timeout(self.limits.body_timeout, limited.collect()).await {
            Err(_) => Err(refuse(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the body did not arrive within {:?}",
                    self.limits.body_timeout
                ),
            )),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
            Ok(Err(e)) => Err(refuse(
                StatusCode::BAD_REQUEST,
                format!("Bad Request: the body could not be read: {e}"),
            )),
            Ok(Ok(collected)) => Ok(collected.to_bytes()),
        }
    }

    async fn post(
        self: &Arc<Self>,
        request: Request<Body>,
        agent: Agent,
        session: Option<String>,
        message: Message,
    ) -> Result<Response, Response> {
        let Some(id) = session else {
            let opening =
                matches!(&message, Message::Request { method, .. } if method == "initialize");
            if !opening {
                return Ok(self.forward(request).await);
            }
            return self.open(request, agent).await;
        };
        let Message::Request { id: request_id, .. } = message else {
            return Ok(self.forward(request).await);
        };
        let key = request_id.to_string();
        let guard = {
            let mut table = self.table();
            let Some(record) = table.sessions.get_mut(&id) else {
                return Err(refuse(StatusCode::NOT_FOUND, "Not Found: no such session"));
            };
            if !record.requests.insert(key.clone()) {
                let refusal = Refusal {
                    id: request_id,
                    code: INVALID_REQUEST,
                    message: format!(
                        "Invalid Request: a request with id {key} is still in progress in this \
                         session; give every request of a session its own id"
                    ),
                };
                return Ok(json_response(StatusCode::OK, refusal.body()));
            }
            drop(table);
            self.begin(&id, Some((key, request_id)))
        };
        let response = self.forward(request).await;
        Ok(self.guarded(response, Some(guard)))
    }

    /// An `initialize` without a session: makes room under the caps, then records the session
    /// rmcp opened for the agent.
    async fn open(
        self: &Arc<Self>,
        request: Request<Body>,
        agent: Agent,
    ) -> Result<Response, Response> {
        self.prune().await;
        let evicted = self.make_room(&agent)?;
        for id in evicted {
            let _ = self.sessions.close_session(&id.into()).await;
        }
        let response = self.forward(request).await;
        let mut table = self.table();
        if let Some(n) = table.opening.get_mut(&agent) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                table.opening.remove(&agent);
            }
        }
        let id = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        if let (true, Some(id)) = (response.status().is_success(), id) {
            table.sessions.insert(
                id.to_string(),
                Record {
                    agent,
                    last_used: Instant::now(),
                    busy: 0,
                    requests: HashSet::new(),
                },
            );
        }
        Ok(response)
    }

    /// Forgets the sessions rmcp no longer holds (they expired).
    async fn prune(&self) {
        let live = self.sessions.sessions.read().await;
        let mut table = self.table();
        table
            .sessions
            .retain(|id, _| live.contains_key(&Arc::<str>::from(id.as_str())));
    }

    /// Counts a new session of `agent` against the caps: the ids of the sessions to evict to
    /// make room (the oldest idle ones), or 503 when every session in the way is busy.
    fn make_room(&self, agent: &Agent) -> Result<Vec<String>, Response> {
        let mut table = self.table();
        let mut evicted = Vec::new();
        let per_agent = self.limits.max_sessions_per_agent.max(1);
        let total = self.limits.max_sessions.max(1);
        let mine = |t: &Table| {
            t.sessions.values().filter(|r| r.agent == *agent).count()
                + t.opening.get(agent).copied().unwrap_or(0)
        };
        let all = |t: &Table| t.sessions.len() + t.opening.values().sum::<usize>();
        while mine(&table) >= per_agent {
            let id = oldest_idle(&table, Some(agent)).ok_or_else(|| busy(per_agent, true))?;
            table.sessions.remove(&id);
            evicted.push(id);
        }
        while all(&table) >= total {
            let id = oldest_idle(&table, None).ok_or_else(|| busy(total, false))?;
            table.sessions.remove(&id);
            evicted.push(id);
        }
        *table.opening.entry(agent.clone()).or_default() += 1;
        Ok(evicted)
    }

    async fn forward(&self, request: Request<Body>) -> Response {
        self.mcp
            .handle(request)
            .await
            .map(Body::new)
            .into_response()
    }

    /// Marks a reply open in session `id` (with its request, for a request).
    fn begin(self: &Arc<Self>, id: &str, request: Option<(String, Value)>) -> Guard {
        if let Some(r) = self.table().sessions.get_mut(id) {
            r.busy += 1;
            r.last_used = Instant::now();
        }
        if request.is_some() {
            self.in_flight.fetch_add(1, Ordering::SeqCst);
        }
        Guard {
            gate: Arc::clone(self),
            session: id.to_string(),
            request,
            finished: false,
        }
    }

    fn guarded(&self, response: Response, guard: Option<Guard>) -> Response {
        let Some(mut guard) = guard else {
            return response;
        };
        let (parts, body) = response.into_parts();
        if parts.status == StatusCode::NOT_FOUND {
            // rmcp no longer holds the session.
            self.table().sessions.remove(&guard.session);
        }
        if !parts.status.is_success() {
            guard.finished = true;
        }
        Response::from_parts(parts, Body::new(Guarded { body, guard }))
    }
}

/// The oldest session without an open reply (of `agent`, when given).
fn oldest_idle(table: &Table, agent: Option<&Agent>) -> Option<String> {
    table
        .sessions
        .iter()
        .filter(|(_, r)| r.busy == 0 && agent.is_none_or(|a| r.agent == *a))
        .min_by_key(|(_, r)| r.last_used)
        .map(|(id, _)| id.clone())
}

fn busy(cap: usize, per_agent: bool) -> Response {
    let mut r = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "Service Unavailable: {} {cap} sessions open, all busy; close one (DELETE) or retry \
             later",
            if per_agent {
                "this agent has its"
            } else {
                "the server has its"
            }
        ),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// An open reply: counted while it lives; dropped before its end, it cancels its request.
struct Guard {
    gate: Arc<Gate>,
    session: String,
    /// The request's id as JSON text and as JSON.
    request: Option<(String, Value)>,
    finished: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(r) = self.gate.table().sessions.get_mut(&self.session) {
            r.busy = r.busy.saturating_sub(1);
            r.last_used = Instant::now();
            if let Some((key, _)) = &self.request {
                r.requests.remove(key);
            }
        }
        let Some((_, id)) = self.request.take() else {
            return;
        };
        if !self.finished {
            // The client went away before the reply: tell the session, which cancels the call.
            let note = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "the client closed the connection"},
            });
            if let (Ok(note), Ok(rt)) = (
                serde_json::from_value::<ClientJsonRpcMessage>(note),
                tokio::runtime::Handle::try_current(),
            ) {
                let sessions = Arc::clone(&self.gate.sessions);
                let id = self.session.clone();
                rt.spawn(async move {
                    let _ = sessions.accept_message(&id.into(), note).await;
                });
            }
        }
        if self.gate.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.gate.idle.notify_waiters();
        }
    }
}

/// A reply body that carries its [`Guard`] and notes when it reached its end.
struct Guarded {
    body: Body,
    guard: Guard,
}

impl http_body::Body for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.guard.finished = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

fn refused_message(refusal: Refusal) -> Response {
    // A request with bad parameters is a JSON-RPC request all the same: answered in kind.
    let status = if refusal.code == jsonrpc::INVALID_PARAMS {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    json_response(status, refusal.body())
}

fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    json_response(status, json!({"ok": false, "error": message.into()}))
}

/// A refusal sent before the request's body was read (or while reading it failed) ends its
/// connection, and says so: the unread body leaves the connection in an unknown state, and
/// the HTTP layer closes it after the reply unless the whole body happened to arrive first.
/// Without `Connection: close` a client would put the connection back in its pool and its
/// next request could meet the close ("server disconnected without sending a response").
fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn unauthorized(challenge: &'static str, message: &str) -> Response {
    let mut r = refuse(StatusCode::UNAUTHORIZED, message);
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    r
}

/// The `Host` header must name an allowed host: by default a loopback name.
fn check_host(headers: &HeaderMap, allowed: &[String]) -> Result<(), Response> {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let (name, port) = split_host(host);
    let ok = if allowed.is_empty() {
        matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1")
    } else {
        allowed.iter().any(|a| {
            let (an, ap) = split_host(a);
            an == name && (ap.is_none() || ap == port)
        })
    };
    if ok {
        Ok(())
    } else {
        Err(refuse(
            StatusCode::FORBIDDEN,
            format!("Forbidden: the Host `{host}` is not allowed (start the server with --allowed-host NAME for the names clients use)"),
        ))
    }
}

/// `name[:port]` or `[v6][:port]`, the name lower-cased and unbracketed.
fn split_host(host: &str) -> (String, Option<String>) {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        if let Some((name, after)) = rest.split_once(']') {
            let port = after.strip_prefix(':').map(str::to_string);
            return (name.to_ascii_lowercase(), port);
        }
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') => {
            (name.to_ascii_lowercase(), Some(port.to_string()))
        }
        _ => (host.to_ascii_lowercase(), None),
    }
}

/// Whether a browser origin is allowed: an entry `scheme://host:port` matches that origin
/// (the scheme's default port when the origin names none), `scheme://host:*` any port, and
/// `scheme://host` any port as well.
pub(crate) fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    let Some((scheme, authority)) = origin.split_once("://") else {
        return allowed.iter().any(|a| a.eq_ignore_ascii_case(&origin));
    };
    let (host, port) = split_host(authority);
    let default_port = match scheme {
        "https" => "443",
        "http" => "80",
        _ => "",
    };
    let port = port.unwrap_or_else(|| default_port.to_string());
    allowed.iter().any(|entry| {
        let entry = entry.trim().to_ascii_lowercase();
        let Some((es, ea)) = entry.split_once("://") else {
            return false;
        };
        let (eh, ep) = split_host(ea);
        es == scheme && eh == host && ep.as_deref().is_none_or(|p| p == "*" || p == port)
    })
}

fn cors_headers(headers: &mut HeaderMap, origin: &str) {
    if let Ok(v) = HeaderValue::from_str(origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
    }
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("mcp-session-id, www-authenticate"),
    );
    headers.append(header::VARY, HeaderValue::from_static("origin"));
}

/// The answer to a CORS preflight of an allowed origin (its `Access-Control-Allow-Origin` is
/// added with every reply's).
fn preflight(headers: &HeaderMap) -> Response {
    let asked = headers
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or(HeaderValue::from_static(ALLOWED_HEADERS));
    (
        StatusCode::NO_CONTENT,
        [
            (
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
            ),
            (header::ACCESS_CONTROL_ALLOW_HEADERS, asked),
            (
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("600"),
            ),
        ],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_match_by_scheme_host_and_port() {
        let allowed = vec![
            "http://localhost:5173".to_string(),
            "https://app.example:*".to_string(),
        ];
        assert!(origin_allowed("http://localhost:5173", &allowed));
        assert!(origin_allowed("HTTP://LOCALHOST:5173", &allowed));
        assert!(!origin_allowed("http://localhost:5174", &allowed));
        assert!(!origin_allowed("https://localhost:5173", &allowed));
        assert!(origin_allowed("https://app.example", &allowed));
        assert!(origin_allowed("https://app.example:8443", &allowed));
        assert!(!origin_allowed("https://app.example.evil", &allowed));
        assert!(!origin_allowed("null", &allowed));
    }

    #[test]
    fn hosts_split_into_name_and_port() {
        assert_eq!(split_host("[::1]:80"), ("::1".into(), Some("80".into())));
        assert_eq!(split_host("::1"), ("::1".into(), None));
        assert_eq!(
            split_host("LocalHost:8080"),
            ("localhost".into(), Some("8080".into()))
        );
    }
}
