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

use serde_json::{json, Map, Value};
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
    /// The `resource` of every request: `service.name` and the SDK attributes.
    resource: Value,
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
        let resource = json!({"attributes": [
            attribute("service.name", &json!(service_name)),
            attribute("service.version", &json!(env!("CARGO_PKG_VERSION"))),
            attribute("telemetry.sdk.name", &json!("skillbake-mcp")),
            attribute("telemetry.sdk.language", &json!("rust")),
            attribute("telemetry.sdk.version", &json!(env!("CARGO_PKG_VERSION"))),
            attribute("process.pid", &json!(std::process::id())),
        ]});
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
    pub(crate) fn record(&self, call: CallEvent) {
        self.push(Pending::Call(Box::new(call), SystemTime::now()));
    }

    /// Queues the span of `request`, which was answered now.
    pub(crate) fn record_request(&self, request: RequestEvent) {
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
    /// The OTLP JSON span of `pending`.
    fn write(&self, pending: &Pending) -> Value {
        match pending {
            Pending::Call(call, end) => self.span(call, *end),
            Pending::Request(request, end) => self.request_span(request, *end),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `n` random bytes as hex (never all zeros, which OTLP reads as "no id").
    fn random_hex(&self, n: usize) -> String {
        let mut out = String::with_capacity(n * 2);
        while out.len() < n * 2 {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let word = self.ids.hash_one((id, SystemTime::now())) | 1;
            out.push_str(&format!("{word:016x}"));
        }
        out.truncate(n * 2);
        out
    }

    /// The OTLP JSON span of `call`, which ended at `end`.
    fn span(&self, call: &CallEvent, end: SystemTime) -> Value {
        let mut attributes = vec![
            attribute("mcp.method.name", &json!("tools/call")),
            attribute("gen_ai.operation.name", &json!("execute_tool")),
            attribute("gen_ai.tool.name", &json!(call.tool)),
        ];
        caller_attributes(&mut attributes, &call.caller);
        let error = (call.outcome != "OK").then(|| call.outcome.clone());
        if let Some(e) = &error {
            attributes.push(attribute("error.type", &json!(e)));
        }
        for (key, value) in call.record() {
            match (key.as_str(), value) {
                // The span's own fields say these (the pid is the resource's).
                ("time" | "session" | "tool" | "duration_ms" | "pid", _) | (_, Value::Null) => {}
                ("exit", Value::Object(exit)) => {
                    for (k, v) in exit {
                        if !v.is_null() {
                            attributes.push(attribute(&format!("skillbake.exit.{k}"), &v));
                        }
                    }
                }
                (_, value) => attributes.push(attribute(&format!("skillbake.{key}"), &value)),
            }
        }
        let name = format!("tools/call {}", call.tool);
        self.base(name, &call.caller, call.duration, end, attributes, error)
    }

    /// The OTLP JSON span of `request`, which was answered at `end`.
    fn request_span(&self, request: &RequestEvent, end: SystemTime) -> Value {
        let mut attributes = vec![attribute("mcp.method.name", &json!(request.method))];
        if let Some(uri) = &request.uri {
            attributes.push(attribute("mcp.resource.uri", &json!(uri)));
        }
        caller_attributes(&mut attributes, &request.caller);
        // A JSON-RPC error: its code, as the conventions record it.
        let error = request.error.map(|code| code.to_string());
        if let Some(e) = &error {
            attributes.push(attribute("error.type", &json!(e)));
            attributes.push(attribute("rpc.response.status_code", &json!(e)));
        }
        attributes.push(attribute("skillbake.agent", &json!(request.agent)));
        if let Some(client) = &request.caller.client {
            attributes.push(attribute("skillbake.client", &json!(client)));
        }
        let name = request.method.to_string();
        self.base(
            name,
            &request.caller,
            request.duration,
            end,
            attributes,
            error,
        )
    }

    /// A span named `name` of `caller`'s request, `duration` long up to `end`, in the caller's
    /// trace when the request carried one; its status is `ERROR` with `error`, else unset.
    fn base(
        &self,
        name: String,
        caller: &Caller,
        duration: Duration,
        end: SystemTime,
        attributes: Vec<Value>,
        error: Option<String>,
    ) -> Value {
        let start = end.checked_sub(duration).unwrap_or(end);
        let nanos = |t: SystemTime| {
            t.duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
                .to_string()
        };
        let (trace_id, parent) = match caller.traceparent.as_deref().and_then(traceparent) {
            Some((trace, parent)) => (trace, Some(parent)),
            None => (self.random_hex(16), None),
        };
        let mut span = Map::new();
        span.insert("traceId".into(), json!(trace_id));
        span.insert("spanId".into(), json!(self.random_hex(8)));
        if let Some(parent) = parent {
            span.insert("parentSpanId".into(), json!(parent));
            if let Some(state) = &caller.tracestate {
                span.insert("traceState".into(), json!(state));
            }
        }
        span.insert("name".into(), json!(name));
        span.insert("kind".into(), json!(2)); // SPAN_KIND_SERVER
        span.insert("startTimeUnixNano".into(), json!(nanos(start)));
        span.insert("endTimeUnixNano".into(), json!(nanos(end)));
        span.insert("attributes".into(), Value::Array(attributes));
        span.insert(
            "status".into(),
            match error {
                // STATUS_CODE_UNSET, as the conventions ask for success.
                None => json!({"code": 0}),
                Some(e) => json!({"code": 2, "message": e}), // STATUS_CODE_ERROR
            },
        );
        Value::Object(span)
    }

    /// The sending thread: a batch every [`EVERY`] or at [`BATCH`] spans, until shut down.
    fn send_loop(&self) {
        let mut reported: Option<Instant> = None;
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
                let batch: Vec<Value> = batch.iter().map(|p| self.write(p)).collect();
                let body = json!({"resourceSpans": [{
                    "resource": self.resource,
                    "scopeSpans": [{
                        "scope": {"name": "skillbake-mcp", "version": env!("CARGO_PKG_VERSION")},
                        "spans": batch,
                    }],
                }]});
                let sent = post(&self.endpoint, body.to_string().as_bytes(), SEND_WITHIN);
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

/// The attributes every span of a request has: its id, the session and the transport.
fn caller_attributes(attributes: &mut Vec<Value>, caller: &Caller) {
    if let Some(id) = &caller.request_id {
        attributes.push(attribute("jsonrpc.request.id", &json!(id)));
    }
    if let Some(session) = &caller.session {
        attributes.push(attribute("mcp.session.id", &json!(session)));
    }
    let transport = if caller.http { "tcp" } else { "pipe" };
    attributes.push(attribute("network.transport", &json!(transport)));
}

/// An OTLP `KeyValue` of `key` and a JSON value (arrays of scalars become `arrayValue`; 64-bit
/// integers are strings, as the OTLP JSON encoding writes them).
fn attribute(key: &str, value: &Value) -> Value {
    json!({"key": key, "value": any_value(value)})
}

fn any_value(value: &Value) -> Value {
    match value {
        Value::String(s) => json!({"stringValue": s}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => json!({"intValue": i.to_string()}),
            (None, Some(f)) => json!({"doubleValue": f}),
            (None, None) => json!({"stringValue": n.to_string()}),
        },
        Value::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(any_value).collect::<Vec<_>>()}})
        }
        Value::Object(_) | Value::Null => json!({"stringValue": value.to_string()}),
    }
}

/// The trace id and parent span id of a W3C `traceparent` header value (version `00`, or a
/// later version read as `00` where its first four fields fit), when it is valid.
fn traceparent(value: &str) -> Option<(String, String)> {
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
    valid.then(|| (trace.to_string(), parent.to_string()))
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
            Some((
                "0af7651916cd43dd8448eb211c80319c".into(),
                "00f067aa0ba902b7".into()
            ))
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
        assert_eq!(any_value(&json!(7)), json!({"intValue": "7"}));
        assert_eq!(any_value(&json!(1.5)), json!({"doubleValue": 1.5}));
        assert_eq!(any_value(&json!(true)), json!({"boolValue": true}));
        assert_eq!(
            any_value(&json!(["a"])),
            json!({"arrayValue": {"values": [{"stringValue": "a"}]}})
        );
    }
}
