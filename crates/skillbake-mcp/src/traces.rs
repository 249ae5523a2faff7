//! The trace exporter: one OpenTelemetry span per tool call, sent to a collector over OTLP/HTTP
//! with the JSON encoding (`POST {endpoint}/v1/traces`, `Content-Type: application/json`).
//!
//! Spans follow the OpenTelemetry semantic conventions for MCP servers (status: development):
//! kind `SERVER`, name `tools/call {tool}`, and the attributes below. The requests through
//! which hosts read skills get a span each too, named by the method (`resources/read`,
//! `skills/list`, `skills/get`, `resources/directory/read`), with `mcp.method.name`,
//! `mcp.resource.uri` (when the request names one), the request id, session and transport, the
//! agent and client, and for a JSON-RPC error its code as `error.type` and
//! `rpc.response.status_code`. The conventions for skills
//! are still a draft, so what they do not name yet is under `skillbake.`: the call log's fields
//! ([`crate::CallLog`]), one attribute each.
//!
//! | attribute | value |
//! |---|---|
//! | `mcp.method.name` | `tools/call` |
//! | `gen_ai.operation.name` | `execute_tool` |
//! | `gen_ai.tool.name` | the tool called |
//! | `jsonrpc.request.id` | the request's id, as a string |
//! | `mcp.session.id` | the session id's SHA-256 (32 hex digits, as the call log; never the id, a bearer capability); absent over stdio |
//! | `network.transport` | `pipe` over stdio, `tcp` over HTTP |
//! | `error.type` | the outcome code, when the call did not answer `OK` (the span's status is then `ERROR` with that code) |
//! | `skillbake.agent`, `skillbake.client`, `skillbake.skill`, `skillbake.version`, `skillbake.via`, `skillbake.outcome`, `skillbake.params_sha256`, `skillbake.bytes_in`, `skillbake.bytes_out`, `skillbake.granted`, `skillbake.used`, `skillbake.exit.code`, `skillbake.exit.signal`, `skillbake.sandbox`, `skillbake.not_enforced`, `skillbake.dry_run`, `skillbake.attempts` | the call log's field of that name (absent when `null`) |
//!
//! The resource names the service (`service.name`, `--otlp-service-name` of `skillbake serve`),
//! its version, the exporter (`telemetry.sdk.*`) and the server's `process.pid`.
//!
//! A call whose request carries a W3C `traceparent` (in `params._meta`, as MCP asks, else the
//! HTTP request's header) is a child of that span, in its trace; `tracestate` is kept.
//!
//! Sending never holds up a call: a call only queues its span. One thread sends the queue in
//! batches (every second, or at [`BATCH`] spans), each request bounded by [`SEND_WITHIN`]
//! with no retry. A full queue ([`QUEUE`] spans, a collector that is down or slow) drops new
//! spans and counts them; a batch the collector refused or did not answer is dropped and
//! counted too. Failures are reported on stderr: the first at once, then at most once a minute,
//! with the counts. [`Exporter::shutdown`] sends what is queued within a bound.
//!
//! A queued span is small whatever the request: the values the client chose (tool name, URI,
//! client name, string request id) are cut at [`MAX_VALUE_BYTES`], and a `tracestate` longer
//! than W3C's 512 bytes is dropped.

use serde_json::Value;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::calllog::{CallEvent, Caller};

/// A request answered that is not a tool call: `resources/read`, `skills/list`, `skills/get`,
/// `resources/directory/read`.
#[derive(Debug)]
pub(crate) struct RequestEvent {
    pub method: &'static str,
    /// The URI the request names, when it names one.
    pub uri: Option<String>,
    pub agent: String,
    pub caller: Caller,
    /// The JSON-RPC error code, when the request was answered with an error.
    pub error: Option<i32>,
    pub duration: Duration,
}

/// Spans queued at most; further spans are dropped (and counted) until the queue drains.
pub const QUEUE: usize = 2048;
/// Spans per request to the collector at most.
pub const BATCH: usize = 512;
/// How long one request to the collector may take, connection included.
pub const SEND_WITHIN: Duration = Duration::from_secs(5);
/// How long the queue waits for more spans before it is sent.
const EVERY: Duration = Duration::from_secs(1);
/// How often a failure is reported on stderr at most (the first one at once).
const REPORT_EVERY: Duration = Duration::from_secs(60);
/// The longest status line read from the collector.
const MAX_STATUS_LINE: usize = 8 << 10;
/// The longest value a span keeps of what the client chose (the tool and URI it named, its
/// name, a string request id), in bytes; longer values are cut at a character boundary, as
/// OpenTelemetry SDKs apply an attribute length limit. A queued span is then at most a few KB,
/// whatever the request's size.
pub const MAX_VALUE_BYTES: usize = 1024;
/// The longest `tracestate` kept, in bytes: what W3C Trace Context asks every system to
/// propagate. A longer one is dropped whole.
const MAX_TRACESTATE_BYTES: usize = 512;

/// Where spans go: an `http://HOST[:PORT]/PATH` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    host: String,
    port: u16,
    path: String,
}

impl Endpoint {
    /// The traces endpoint of `url`: an OTLP/HTTP base URL (`http://collector:4318`, to which
    /// `/v1/traces` is added) or the full traces URL (one whose path ends in `/v1/traces`, used
    /// as it is). Only `http://` is spoken; for TLS, run a collector next to the server.
    pub fn parse(url: &str) -> Result<Self, crate::Error> {
        let bad = |why: &str| crate::Error::Config(format!("OTLP endpoint `{url}`: {why}"));
        let rest = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) if scheme.eq_ignore_ascii_case("https") => {
                return Err(bad(
                    "https is not spoken; send to a collector over http:// (one on the same host or in the same pod, which forwards over TLS)",
                ))
            }
            _ => return Err(bad("give an http:// URL, such as http://127.0.0.1:4318")),
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if path.contains(['?', '#']) {
            return Err(bad("a query or fragment is not allowed"));
        }
        if authority.contains('@') {
            return Err(bad("user information is not allowed"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => match p.parse::<u16>() {
                Ok(p) if p > 0 => (h, p),
                _ => return Err(bad("the port must be a number from 1 to 65535")),
            },
            _ => (authority, 80),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(bad("the host is missing"));
        }
        if !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-_:".contains(&b))
        {
            return Err(bad("the host has characters a host name cannot have"));
        }
        let path = path.trim_end_matches('/');
        let path = if path.ends_with("/v1/traces") {
            path.to_string()
        } else {
            format!("{path}/v1/traces")
        };
        Ok(Endpoint {
            host: host.to_string(),
            port,
            path,
        })
    }

    /// The URL spans are sent to.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.authority(), self.path)
    }

    /// `host:port` as the `Host` header writes it.
    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Counts of what the exporter did since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Spans the collector accepted (a `2xx` answer).
    pub sent: u64,
    /// Spans dropped because the queue was full, or still queued when
    /// [`Exporter::shutdown`] gave up.
    pub dropped: u64,
    /// Spans of batches that could not be sent or that the collector refused.
    pub failed: u64,
}

/// Sends a span per tool call to an OpenTelemetry collector (see the module documentation).
/// Cheap to clone: clones share the queue and the sending thread.
#[derive(Debug, Clone)]
pub struct Exporter {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    endpoint: Endpoint,
    /// The `resource` of every request, as OTLP JSON: `service.name` and the SDK attributes.
    resource: Vec<u8>,
    queue: Mutex<Queue>,
    wake: Condvar,
    /// Signalled when the sending thread has stopped.
    done: Condvar,
    ids: RandomState,
    next_id: AtomicU64,
}

#[derive(Debug, Default)]
struct Queue {
    /// What the queued spans are made from: they are written by the sending thread, never on
    /// a call's path.
    spans: Vec<Pending>,
    counts: Counts,
    /// Set by [`Exporter::shutdown`]: send what is queued, then stop.
    stop: bool,
    /// The sending thread has stopped.
    stopped: bool,
    /// Spans of the request being sent.
    in_flight: u64,
    /// [`Exporter::shutdown`] stopped waiting: what was left is counted as dropped.
    gave_up: bool,
}

impl Exporter {
    /// An exporter to `endpoint` whose spans name the service `service_name`; starts its
    /// sending thread.
    pub fn start(endpoint: Endpoint, service_name: &str) -> Result<Self, crate::Error> {
        let mut resource = Body::default();
        resource.raw("{\"attributes\":[");
        let mut a = Attributes::new(&mut resource);
        a.str("service.name", service_name);
        a.str("service.version", env!("CARGO_PKG_VERSION"));
        a.str("telemetry.sdk.name", "skillbake-mcp");
        a.str("telemetry.sdk.language", "rust");
        a.str("telemetry.sdk.version", env!("CARGO_PKG_VERSION"));
        a.value("process.pid", &Value::from(std::process::id()));
        resource.raw("]}");
        let resource = resource.0;
        let shared = Arc::new(Shared {
            endpoint,
            resource,
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            done: Condvar::new(),
            ids: RandomState::new(),
            next_id: AtomicU64::new(0),
        });
        let sender = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("skillbake-otlp".into())
            .spawn(move || sender.send_loop())
            .map_err(|e| crate::Error::Config(format!("cannot start the OTLP sender: {e}")))?;
        Ok(Exporter { shared })
    }

    /// Where spans are sent.
    pub fn endpoint(&self) -> &Endpoint {
        &self.shared.endpoint
    }

    /// What was sent, dropped and failed so far.
    pub fn counts(&self) -> Counts {
        self.shared.lock().counts
    }

    /// Sends what is queued and stops the sending thread, waiting at most `within`; returns the
    /// counts then. Spans recorded later are dropped.
    pub fn shutdown(&self, within: Duration) -> Counts {
        let deadline = Instant::now() + within;
        let mut q = self.shared.lock();
        q.stop = true;
        self.shared.wake.notify_all();
        while !q.stopped {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            q = match self.shared.done.wait_timeout(q, left) {
                Ok((q, _)) => q,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        if !q.stopped {
            // What was not sent in time is lost: count it (a request still under way is
            // counted too, whatever the collector makes of it later).
            let left = q.spans.len() as u64 + std::mem::take(&mut q.in_flight);
            q.spans.clear();
            q.counts.dropped += left;
            q.gave_up = true;
        }
        q.counts
    }

    /// Queues the span of `call`, which finished now.
    pub(crate) fn record(&self, mut call: CallEvent) {
        bound(&mut call.tool);
        bound_caller(&mut call.caller);
        self.push(Pending::Call(Box::new(call), SystemTime::now()));
    }

    /// Queues the span of `request`, which was answered now.
    pub(crate) fn record_request(&self, mut request: RequestEvent) {
        if let Some(uri) = &mut request.uri {
            bound(uri);
        }
        bound_caller(&mut request.caller);
        self.push(Pending::Request(Box::new(request), SystemTime::now()));
    }

    fn push(&self, span: Pending) {
        let mut q = self.shared.lock();
        if q.stop || q.spans.len() >= QUEUE {
            q.counts.dropped += 1;
            return;
        }
        q.spans.push(span);
        if q.spans.len() >= BATCH {
            self.shared.wake.notify_all();
        }
    }
}

/// A span to write: the call or request it records, and when it ended.
#[derive(Debug)]
enum Pending {
    Call(Box<CallEvent>, SystemTime),
    Request(Box<RequestEvent>, SystemTime),
}

impl Shared {
    /// Writes the OTLP JSON span of `pending` to `body`.
    fn write(&self, body: &mut Body, pending: &Pending) {
        match pending {
            Pending::Call(call, end) => self.span(body, call, *end),
            Pending::Request(request, end) => self.request_span(body, request, *end),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `n` random bytes as hex (never all zeros, which OTLP reads as "no id").
    fn random_hex(&self, body: &mut Body, n: usize) {
        let mut left = n * 2;
        while left > 0 {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let word = self.ids.hash_one((id, SystemTime::now())) | 1;
            let hex = format!("{word:016x}");
            let take = left.min(hex.len());
            // The low bit is set, so the last digit of a word is never `0`: written last.
            body.raw(&hex[hex.len() - take..]);
            left -= take;
        }
    }

    /// Writes the OTLP JSON span of `call`, which ended at `end`.
    fn span(&self, body: &mut Body, call: &CallEvent, end: SystemTime) {
        let error = (call.outcome != "OK").then_some(call.outcome.as_str());
        let name = format!("tools/call {}", call.tool);
        self.base(body, &name, &call.caller, call.duration, end, error, |a| {
            a.str("mcp.method.name", "tools/call");
            a.str("gen_ai.operation.name", "execute_tool");
            a.str("gen_ai.tool.name", &call.tool);
            caller_attributes(a, &call.caller);
            if let Some(e) = error {
                a.str("error.type", e);
            }
            for (key, value) in call.record() {
                match (key.as_str(), value) {
                    // The span's own fields say these (the pid is the resource's).
                    ("time" | "session" | "tool" | "duration_ms" | "pid", _) | (_, Value::Null) => {
                    }
                    ("exit", Value::Object(exit)) => {
                        for (k, v) in exit {
                            if !v.is_null() {
                                a.value(&format!("skillbake.exit.{k}"), &v);
                            }
                        }
                    }
                    (_, value) => a.value(&format!("skillbake.{key}"), &value),
                }
            }
        });
    }

    /// Writes the OTLP JSON span of `request`, which was answered at `end`.
    fn request_span(&self, body: &mut Body, request: &RequestEvent, end: SystemTime) {
        // A JSON-RPC error: its code, as the conventions record it.
        let error = request.error.map(|code| code.to_string());
        let (caller, error) = (&request.caller, error.as_deref());
        self.base(
            body,
            request.method,
            caller,
            request.duration,
            end,
            error,
            |a| {
                a.str("mcp.method.name", request.method);
                if let Some(uri) = &request.uri {
                    a.str("mcp.resource.uri", uri);
                }
                caller_attributes(a, caller);
                if let Some(e) = error {
                    a.str("error.type", e);
                    a.str("rpc.response.status_code", e);
                }
                a.str("skillbake.agent", &request.agent);
                if let Some(client) = &caller.client {
                    a.str("skillbake.client", client);
                }
            },
        );
    }

    /// Writes a span named `name` of `caller`'s request, `duration` long up to `end`, in the
    /// caller's trace when the request carried one, with the attributes `attributes` writes;
    /// its status is `ERROR` with `error`, else unset.
    #[allow(clippy::too_many_arguments)]
    fn base(
        &self,
        body: &mut Body,
        name: &str,
        caller: &Caller,
        duration: Duration,
        end: SystemTime,
        error: Option<&str>,
        attributes: impl FnOnce(&mut Attributes<'_>),
    ) {
        let start = end.checked_sub(duration).unwrap_or(end);
        let nanos = |t: SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        body.raw("{\"traceId\":\"");
        let parent = match caller.traceparent.as_deref().and_then(traceparent) {
            Some((trace, parent)) => {
                body.raw(trace);
                Some(parent)
            }
            None => {
                self.random_hex(body, 16);
                None
            }
        };
        body.raw("\",\"spanId\":\"");
        self.random_hex(body, 8);
        body.raw("\"");
        if let Some(parent) = parent {
            body.raw(",\"parentSpanId\":\"");
            body.raw(parent);
            body.raw("\"");
            if let Some(state) = &caller.tracestate {
                body.raw(",\"traceState\":");
                body.string(state);
            }
        }
        body.raw(",\"name\":");
        body.string(name);
        body.raw(",\"kind\":2"); // SPAN_KIND_SERVER
        body.raw(&format!(
            ",\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\",\"attributes\":[",
            nanos(start),
            nanos(end)
        ));
        attributes(&mut Attributes::new(body));
        body.raw("],\"status\":");
        match error {
            // STATUS_CODE_UNSET, as the conventions ask for success.
            None => body.raw("{\"code\":0}"),
            Some(e) => {
                body.raw("{\"code\":2,\"message\":"); // STATUS_CODE_ERROR
                body.string(e);
                body.raw("}");
            }
        }
        body.raw("}");
    }

    /// The sending thread: a batch every [`EVERY`] or at [`BATCH`] spans, until shut down.
    fn send_loop(&self) {
        let mut reported: Option<Instant> = None;
        // The request body, kept between batches so that its buffer is allocated once.
        let mut body = Body::default();
        loop {
            let (batch, stop) = {
                let mut q = self.lock();
                let deadline = Instant::now() + EVERY;
                while q.spans.len() < BATCH && !q.stop {
                    let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                        break;
                    };
                    q = match self.wake.wait_timeout(q, left) {
                        Ok((q, _)) => q,
                        Err(p) => p.into_inner().0,
                    };
                }
                let n = q.spans.len().min(BATCH);
                q.in_flight = n as u64;
                (q.spans.drain(..n).collect::<Vec<_>>(), q.stop)
            };
            if !batch.is_empty() {
                let n = batch.len() as u64;
                body.0.clear();
                body.raw("{\"resourceSpans\":[{\"resource\":");
                body.0.extend_from_slice(&self.resource);
                body.raw(",\"scopeSpans\":[{\"scope\":{\"name\":\"skillbake-mcp\",\"version\":");
                body.string(env!("CARGO_PKG_VERSION"));
                body.raw("},\"spans\":[");
                for (i, pending) in batch.iter().enumerate() {
                    if i > 0 {
                        body.raw(",");
                    }
                    self.write(&mut body, pending);
                }
                body.raw("]}]}]}");
                drop(batch);
                let sent = post(&self.endpoint, &body.0, SEND_WITHIN);
                let counts = {
                    let mut q = self.lock();
                    if q.gave_up {
                        // Shut down meanwhile: counted as dropped already.
                        q.stopped = true;
                        return;
                    }
                    q.in_flight = 0;
                    match &sent {
                        Ok(()) => q.counts.sent += n,
                        Err(_) => q.counts.failed += n,
                    }
                    q.counts
                };
                if let Err(why) = sent {
                    if reported.is_none_or(|at| at.elapsed() >= REPORT_EVERY) {
                        eprintln!(
                            "skillbake: spans could not be sent to {}: {why} (lost so far: {} in failed requests, {} on a full queue; failures are reported at most once a minute)",
                            self.endpoint.url(),
                            counts.failed,
                            counts.dropped,
                        );
                        reported = Some(Instant::now());
                    }
                }
            }
            let mut q = self.lock();
            if stop && q.spans.is_empty() {
                q.stopped = true;
                self.done.notify_all();
                return;
            }
        }
    }
}

/// Cuts `value` to at most [`MAX_VALUE_BYTES`], at a character boundary.
fn bound(value: &mut String) {
    if value.len() > MAX_VALUE_BYTES {
        let mut end = MAX_VALUE_BYTES;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        value.truncate(end);
    }
}

/// Bounds what the client chose of `caller` (see [`MAX_VALUE_BYTES`], [`MAX_TRACESTATE_BYTES`]).
fn bound_caller(caller: &mut Caller) {
    for value in [&mut caller.client, &mut caller.request_id]
        .into_iter()
        .flatten()
    {
        bound(value);
    }
    if caller
        .tracestate
        .as_ref()
        .is_some_and(|s| s.len() > MAX_TRACESTATE_BYTES)
    {
        caller.tracestate = None;
    }
}

/// OTLP JSON written straight into a request's body: the sending thread writes a batch in one
/// pass, without building a tree of values first.
#[derive(Debug, Default)]
struct Body(Vec<u8>);

impl Body {
    /// Appends `text`, which is JSON already.
    fn raw(&mut self, text: &str) {
        self.0.extend_from_slice(text.as_bytes());
    }

    /// Appends `text` as a JSON string.
    fn string(&mut self, text: &str) {
        // Writing a string into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut self.0, text);
    }

    /// Appends the OTLP `AnyValue` of the string `text`.
    fn string_value(&mut self, text: &str) {
        self.raw("{\"stringValue\":");
        self.string(text);
        self.raw("}");
    }
}

/// The items of an `attributes` array being written: OTLP `KeyValue`s, comma-separated.
struct Attributes<'a> {
    body: &'a mut Body,
    first: bool,
}

impl<'a> Attributes<'a> {
    fn new(body: &'a mut Body) -> Self {
        Attributes { body, first: true }
    }

    fn key(&mut self, key: &str) {
        if !std::mem::take(&mut self.first) {
            self.body.raw(",");
        }
        self.body.raw("{\"key\":");
        self.body.string(key);
        self.body.raw(",\"value\":");
    }

    /// A string attribute.
    fn str(&mut self, key: &str, value: &str) {
        self.key(key);
        self.body.string_value(value);
        self.body.raw("}");
    }

    /// An attribute of a JSON value (arrays of scalars become `arrayValue`; 64-bit integers
    /// are strings, as the OTLP JSON encoding writes them).
    fn value(&mut self, key: &str, value: &Value) {
        self.key(key);
        any_value(self.body, value);
        self.body.raw("}");
    }
}

/// The attributes every span of a request has: its id, the session and the transport.
fn caller_attributes(a: &mut Attributes<'_>, caller: &Caller) {
    if let Some(id) = &caller.request_id {
        a.str("jsonrpc.request.id", id);
    }
    if let Some(session) = &caller.session {
        a.str("mcp.session.id", session);
    }
    a.str(
        "network.transport",
        if caller.http { "tcp" } else { "pipe" },
    );
}

/// Writes the OTLP `AnyValue` of a JSON value.
fn any_value(body: &mut Body, value: &Value) {
    match value {
        Value::String(s) => body.string_value(s),
        Value::Bool(b) => body.raw(if *b {
            "{\"boolValue\":true}"
        } else {
            "{\"boolValue\":false}"
        }),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => body.raw(&format!("{{\"intValue\":\"{i}\"}}")),
            (None, Some(f)) => body.raw(&format!("{{\"doubleValue\":{}}}", Value::from(f))),
            (None, None) => body.string_value(&n.to_string()),
        },
        Value::Array(items) => {
            body.raw("{\"arrayValue\":{\"values\":[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    body.raw(",");
                }
                any_value(body, item);
            }
            body.raw("]}}");
        }
        Value::Object(_) | Value::Null => body.string_value(&value.to_string()),
    }
}

/// The trace id and parent span id of a W3C `traceparent` header value (version `00`, or a
/// later version read as `00` where its first four fields fit), when it is valid.
fn traceparent(value: &str) -> Option<(&str, &str)> {
    let value = value.trim();
    let mut parts = value.split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let valid = hex(version, 2)
        && version != "ff"
        && (version != "00" || parts.next().is_none())
        && hex(trace, 32)
        && trace.bytes().any(|b| b != b'0')
        && hex(parent, 16)
        && parent.bytes().any(|b| b != b'0')
        && hex(flags, 2);
    valid.then_some((trace, parent))
}

/// Sends `body` to `endpoint` in one HTTP/1.1 request, all of it within `within`; `Ok` when the
/// collector answered `2xx`.
fn post(endpoint: &Endpoint, body: &[u8], within: Duration) -> Result<(), String> {
    let deadline = Instant::now() + within;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("no answer within {} s", within.as_secs()))
    };
    let addrs = (endpoint.host.as_str(), endpoint.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", endpoint.host))?;
    let mut last = format!("{} resolves to no address", endpoint.host);
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, left()?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("cannot connect to {addr}: {e}"),
        }
    }
    let mut stream = stream.ok_or(last)?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nUser-Agent: skillbake-mcp/{}\r\nConnection: close\r\n\r\n",
        endpoint.path,
        endpoint.authority(),
        body.len(),
        env!("CARGO_PKG_VERSION"),
    );
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("no answer within {} s", within.as_secs())
        }
        _ => format!("the connection failed: {e}"),
    };
    for part in [head.as_bytes(), body] {
        stream.set_write_timeout(Some(left()?)).map_err(io)?;
        stream.write_all(part).map_err(io)?;
    }
    let mut line = Vec::new();
    let mut buf = [0u8; 1024];
    while !line.windows(2).any(|w| w == b"\r\n") {
        if line.len() > MAX_STATUS_LINE {
            return Err("the collector's answer is not HTTP".into());
        }
        stream.set_read_timeout(Some(left()?)).map_err(io)?;
        match stream.read(&mut buf).map_err(io)? {
            0 => return Err("the collector closed the connection without an answer".into()),
            n => line.extend_from_slice(&buf[..n]),
        }
    }
    let line = String::from_utf8_lossy(&line);
    let status = line
        .strip_prefix("HTTP/1.")
        .and_then(|r| r.get(2..5))
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| "the collector's answer is not HTTP".to_string())?;
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(format!("the collector answered HTTP {status}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn endpoints_take_a_base_or_the_traces_url() {
        let url = |s: &str| {
            Endpoint::parse(s)
                .map(|e| e.url())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            url("http://127.0.0.1:4318"),
            Ok("http://127.0.0.1:4318/v1/traces".into())
        );
        assert_eq!(
            url("http://collector/"),
            Ok("http://collector:80/v1/traces".into())
        );
        assert_eq!(
            url("http://c:4318/otlp/v1/traces"),
            Ok("http://c:4318/otlp/v1/traces".into())
        );
        assert_eq!(
            url("HTTP://[::1]:4318/base"),
            Ok("http://[::1]:4318/base/v1/traces".into())
        );
        for bad in [
            "https://c:4318",
            "c:4318",
            "http://:4318",
            "http://c:0",
            "http://c:x",
            "http://u@c",
            "http://c/?q",
            "http://c d/",
        ] {
            assert!(url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn traceparents_are_checked() {
        let good = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
        assert_eq!(
            traceparent(good),
            Some(("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7"))
        );
        assert!(
            traceparent("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-later").is_some()
        );
        for bad in [
            "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",
            "00-0af7651916cd43dd8448eb211c8031-00f067aa0ba902b7-01",
            "",
        ] {
            assert_eq!(traceparent(bad), None, "{bad}");
        }
    }

    #[test]
    fn values_take_the_otlp_json_shapes() {
        let any = |v: Value| {
            let mut body = Body::default();
            any_value(&mut body, &v);
            serde_json::from_slice::<Value>(&body.0).map_err(|e| e.to_string())
        };
        assert_eq!(any(json!(7)), Ok(json!({"intValue": "7"})));
        assert_eq!(any(json!(-7)), Ok(json!({"intValue": "-7"})));
        assert_eq!(any(json!(1.5)), Ok(json!({"doubleValue": 1.5})));
        assert_eq!(
            any(json!(u64::MAX)),
            Ok(json!({"doubleValue": 18446744073709552000.0}))
        );
        assert_eq!(any(json!(true)), Ok(json!({"boolValue": true})));
        assert_eq!(any(json!(false)), Ok(json!({"boolValue": false})));
        assert_eq!(
            any(json!(["a\"\n", 2])),
            Ok(json!({"arrayValue": {"values": [{"stringValue": "a\"\n"}, {"intValue": "2"}]}}))
        );
        assert_eq!(any(json!([])), Ok(json!({"arrayValue": {"values": []}})));
        assert_eq!(
            any(json!({"k": null})),
            Ok(json!({"stringValue": "{\"k\":null}"}))
        );
    }

    /// What a client chose is bounded before it is queued: a 4 MiB tool name costs a queued
    /// span 1 KiB, a character is never split, and an oversized `tracestate` is dropped.
    #[test]
    fn client_chosen_values_are_bounded_when_queued() {
        let mut long = "é".repeat(3 << 20);
        bound(&mut long);
        assert_eq!(long.len(), MAX_VALUE_BYTES);
        assert!(long.chars().all(|c| c == 'é'));
        let mut odd = format!("a{}", "é".repeat(600));
        bound(&mut odd);
        assert_eq!((odd.len(), odd.chars().count()), (MAX_VALUE_BYTES - 1, 512));
        let mut short = "load_skill".to_string();
        bound(&mut short);
        assert_eq!(short, "load_skill");
        let mut caller = Caller {
            client: Some("c".repeat(5000)),
            request_id: Some("7".repeat(5000)),
            tracestate: Some("k=v,".repeat(200)),
            ..Caller::default()
        };
        bound_caller(&mut caller);
        assert_eq!(
            caller.client.as_deref().map(str::len),
            Some(MAX_VALUE_BYTES)
        );
        assert_eq!(
            caller.request_id.as_deref().map(str::len),
            Some(MAX_VALUE_BYTES)
        );
        assert_eq!(caller.tracestate, None);
        let mut kept = Caller {
            tracestate: Some("k=v".into()),
            ..Caller::default()
        };
        bound_caller(&mut kept);
        assert_eq!(kept.tracestate.as_deref(), Some("k=v"));
    }

    /// A span as the sending thread writes it: valid JSON whatever the strings hold, in the
    /// caller's trace, with every attribute once.
    #[test]
    fn spans_are_json_with_their_attributes() {
        let shared = Shared {
            endpoint: Endpoint::parse("http://127.0.0.1:4318").unwrap_or_else(|e| panic!("{e}")),
            resource: Vec::new(),
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            done: Condvar::new(),
            ids: RandomState::new(),
            next_id: AtomicU64::new(0),
        };
        let caller = Caller {
            client: Some("odd \"client\"\n".into()),
            session: Some("ab".repeat(16)),
            http: true,
            request_id: Some("7".into()),
            traceparent: Some("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01".into()),
            tracestate: Some("k=\"v\"".into()),
        };
        let answer = crate::calllog::Answer {
            outcome: "SKILL_NOT_FOUND".into(),
            bytes_out: 5,
            ..Default::default()
        };
        let call = CallEvent::new(
            "load\u{7f}\"skill",
            "alice",
            caller.clone(),
            &json!({"skill_name": "nope"}),
            answer,
            None,
            Duration::from_millis(3),
        );
        let request = RequestEvent {
            method: "resources/read",
            uri: Some("skill://a/SKILL.md".into()),
            agent: "alice".into(),
            caller: Caller {
                traceparent: None,
                ..caller
            },
            error: Some(-32002),
            duration: Duration::from_millis(1),
        };
        let end = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut body = Body::default();
        body.raw("[");
        shared.write(&mut body, &Pending::Call(Box::new(call), end));
        body.raw(",");
        shared.write(&mut body, &Pending::Request(Box::new(request), end));
        body.raw("]");
        let spans: Value = serde_json::from_slice(&body.0).unwrap_or_else(|e| panic!("{e}"));
        let span = &spans[0];
        assert_eq!(span["traceId"], "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(span["parentSpanId"], "00f067aa0ba902b7");
        assert_eq!(span["traceState"], "k=\"v\"");
        assert_eq!(span["name"], "tools/call load\u{7f}\"skill");
        assert_eq!(span["startTimeUnixNano"], "1699999999997000000");
        assert_eq!(span["endTimeUnixNano"], "1700000000000000000");
        assert_eq!(
            span["status"],
            json!({"code": 2, "message": "SKILL_NOT_FOUND"})
        );
        let attributes = |span: &Value| -> Vec<(String, Value)> {
            span["attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| {
                    (
                        a["key"].as_str().unwrap_or("").to_string(),
                        a["value"].clone(),
                    )
                })
                .collect()
        };
        let a = attributes(span);
        let keys: Vec<&str> = a.iter().map(|(k, _)| k.as_str()).collect();
        let mut unique = keys.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), keys.len(), "{keys:?}");
        for (key, value) in [
            (
                "gen_ai.tool.name",
                json!({"stringValue": "load\u{7f}\"skill"}),
            ),
            ("mcp.session.id", json!({"stringValue": "ab".repeat(16)})),
            ("network.transport", json!({"stringValue": "tcp"})),
            (
                "skillbake.client",
                json!({"stringValue": "odd \"client\"\n"}),
            ),
            ("skillbake.bytes_out", json!({"intValue": "5"})),
            ("error.type", json!({"stringValue": "SKILL_NOT_FOUND"})),
        ] {
            assert!(
                a.contains(&(key.to_string(), value.clone())),
                "{key}: {a:?}"
            );
        }
        let span = &spans[1];
        let id = span["spanId"].as_str().unwrap_or("");
        assert_eq!(id.len(), 16);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()) && id != "0".repeat(16));
        assert_eq!(span["traceId"].as_str().map(str::len), Some(32));
        assert!(span.get("parentSpanId").is_none() && span.get("traceState").is_none());
        assert_eq!(span["status"], json!({"code": 2, "message": "-32002"}));
        let a = attributes(span);
        assert!(a.contains(&(
            "rpc.response.status_code".into(),
            json!({"stringValue": "-32002"})
        )));
        assert!(a.contains(&(
            "mcp.resource.uri".into(),
            json!({"stringValue": "skill://a/SKILL.md"})
        )));
    }
}
