//! `skillbake serve --otlp-endpoint`: a span per tool call (and per read of a skill) sent over OTLP/HTTP (JSON) to a
//! collector the test starts on 127.0.0.1. Over HTTP: the MCP semantic conventions' attributes,
//! the session hashed, the arguments never in clear, the trace context of `_meta` or of the
//! HTTP header honoured, a span per `resources/read` too, the spans flushed on SIGTERM, and
//! every request read by the official OTLP protobuf messages (`opentelemetry-proto`, in
//! `$SKILLBAKE_MCP_PYTHON`). Over stdio, against a collector that
//! answers 500, closes the connection or never answers: every call still answers, the failure is
//! reported once, and what was lost is counted when the server stops.

use super::call_log::Session;
use super::mcp_http::{Server, IO_TIMEOUT};
use serde_json::{json, Value};
use sha2::Digest as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKEN: &str = "alice-0123456789abcdef";
const SECRET: &str = "secret-recipient@example.com";
const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

/// How the test's collector answers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    /// `200 OK` with an empty partial-success body.
    Ok,
    /// `500 Internal Server Error`.
    Fail,
    /// Reads the request and closes the connection without an answer.
    Close,
    /// Accepts the connection and never reads or answers (until the test ends).
    Never,
}

/// One request the collector received.
#[derive(Debug)]
struct Received {
    head: String,
    body: Value,
}

/// A collector on 127.0.0.1: accepts connections on its own thread until dropped.
struct Collector {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    connections: Arc<Mutex<usize>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Collector {
    fn start(answer: Answer) -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(Mutex::new(0));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (r, c, s) = (received.clone(), connections.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            let deadline = Instant::now() + IO_TIMEOUT;
            while !s.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        *c.lock().unwrap() += 1;
                        if answer == Answer::Never {
                            held.push(stream);
                            continue;
                        }
                        stream.set_nonblocking(false).unwrap();
                        if let Some(req) = read_request(&stream) {
                            r.lock().unwrap().push(req);
                        }
                        let mut stream = stream;
                        let _ = match answer {
                            Answer::Ok => stream.write_all(
                                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                            ),
                            Answer::Fail => stream.write_all(
                                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                            ),
                            Answer::Close | Answer::Never => Ok(()),
                        };
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Collector {
            addr,
            received,
            connections,
            stop,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The spans of every request received so far, in order.
    fn spans(&self) -> Vec<Value> {
        let received = self.received.lock().unwrap();
        received
            .iter()
            .flat_map(|r| {
                r.body["resourceSpans"][0]["scopeSpans"][0]["spans"]
                    .as_array()
                    .unwrap()
                    .clone()
            })
            .collect()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// One HTTP request with a `Content-Length` body, read within [`IO_TIMEOUT`].
fn read_request(stream: &TcpStream) -> Option<Received> {
    stream.set_read_timeout(Some(IO_TIMEOUT)).ok()?;
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let length: usize = head.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("content-length:")
            .map(|v| v.trim().parse().unwrap())
    })?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        head,
        body: serde_json::from_slice(&body).unwrap(),
    })
}

/// The attributes of an OTLP span (or resource) as a JSON object of plain values.
fn attributes(of: &Value) -> serde_json::Map<String, Value> {
    of["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| {
            let v = &kv["value"];
            let plain = if let Some(s) = v.get("stringValue") {
                s.clone()
            } else if let Some(i) = v.get("intValue") {
                json!(i.as_str().unwrap().parse::<i64>().unwrap())
            } else if let Some(b) = v.get("boolValue") {
                b.clone()
            } else if let Some(d) = v.get("doubleValue") {
                d.clone()
            } else if let Some(a) = v.get("arrayValue") {
                json!(a["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x["stringValue"].clone())
                    .collect::<Vec<_>>())
            } else {
                panic!("not an OTLP value: {v}")
            };
            (kv["key"].as_str().unwrap().to_string(), plain)
        })
        .collect()
}

fn is_hex(s: &Value, len: usize) -> bool {
    s.as_str().is_some_and(|s| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            && s.bytes().any(|b| b != b'0')
    })
}

#[cfg(unix)]
#[test]
fn tool_calls_over_http_become_spans_with_the_mcp_conventions_and_the_callers_trace() {
    let collector = Collector::start(Answer::Ok);
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.txt");
    std::fs::write(&tokens, format!("alice {TOKEN}\n")).unwrap();
    let mut server = Server::start(&[
        "--token-file",
        tokens.to_str().unwrap(),
        "--otlp-endpoint",
        &collector.url(),
        "--otlp-service-name",
        "skills-prod",
    ]);
    let mut s = Session::open(server.addr, Some(TOKEN), "traces-test");
    let traceparent = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    // 1: the trace context in `_meta`, as MCP carries it.
    let r = s.post_with(
        &json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": {
            "name": "load_skill", "arguments": {"skill_name": "send-email"},
            "_meta": {"traceparent": traceparent, "tracestate": "vendor=1"},
        }}),
        &[],
    );
    assert_eq!(r.status, 200, "{r:?}");
    // 2: the trace context of the HTTP request only.
    let header_trace = "0af7651916cd43dd8448eb211c80319c";
    let r = s.post_with(
        &json!({"jsonrpc": "2.0", "id": "call-b", "method": "tools/call", "params": {
            "name": "send-email", "arguments": {"to": SECRET, "subject": "Hi", "body": "Hello"},
        }}),
        &[(
            "traceparent",
            &format!("00-{header_trace}-b7ad6b7169203331-01"),
        )],
    );
    assert_eq!(r.status, 200, "{r:?}");
    // 3: none, and an error result; 4: a malformed trace context is ignored.
    let missing = s.call("load_skill", json!({"skill_name": "no-such-skill"}));
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    let r = s.post_with(
        &json!({"jsonrpc": "2.0", "id": 104, "method": "tools/call", "params": {
            "name": "list_skills", "arguments": {}, "_meta": {"traceparent": "00-zz-yy-01"},
        }}),
        &[],
    );
    assert_eq!(r.status, 200, "{r:?}");
    // 5, 6: how hosts read skills: a resource, and one that does not exist.
    for (id, uri) in [
        (105, "skill://send-email/SKILL.md"),
        (106, "skill://send-email/nothing.md"),
    ] {
        let r = s.post_with(
            &json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri,
                "_meta": {"traceparent": traceparent}}}),
            &[],
        );
        assert_eq!(r.status, 200, "{r:?}");
    }
    assert!(
        server.terminate().success(),
        "SIGTERM stops the server cleanly"
    );

    let received = collector.received.lock().unwrap();
    assert!(
        !received.is_empty(),
        "the spans were flushed when the server stopped"
    );
    for r in received.iter() {
        let first = r.head.lines().next().unwrap();
        assert_eq!(first, "POST /v1/traces HTTP/1.1", "{}", r.head);
        assert!(
            r.head
                .to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{}",
            r.head
        );
        let resource = attributes(&r.body["resourceSpans"][0]["resource"]);
        assert_eq!(resource["service.name"], "skills-prod");
        assert_eq!(
            r.body["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"],
            "skillbake-mcp"
        );
        let text = r.body.to_string();
        assert!(!text.contains(SECRET), "arguments in clear: {text}");
        assert!(!text.contains(&s.id), "the session id in clear: {text}");
    }
    drop(received);
    let mut spans = collector.spans();
    assert_eq!(spans.len(), 6, "{spans:#?}");
    let reads = spans.split_off(4);
    for (span, (uri, error)) in reads.iter().zip([
        ("skill://send-email/SKILL.md", None),
        ("skill://send-email/nothing.md", Some("-32002")),
    ]) {
        let a = attributes(span);
        assert_eq!(span["name"], "resources/read", "{span}");
        assert_eq!(span["kind"], 2, "{span}");
        assert_eq!(span["traceId"], PARENT_TRACE, "{span}");
        assert_eq!(span["parentSpanId"], PARENT_SPAN, "{span}");
        assert_eq!(a["mcp.method.name"], "resources/read");
        assert_eq!(a["mcp.resource.uri"], uri);
        assert_eq!(a["skillbake.agent"], "alice");
        assert_eq!(a["network.transport"], "tcp");
        assert_eq!(a["mcp.session.id"].as_str().map(str::len), Some(32));
        assert_eq!(a.get("error.type").and_then(Value::as_str), error, "{span}");
        match error {
            None => assert_eq!(span["status"], json!({"code": 0})),
            Some(code) => assert_eq!(span["status"], json!({"code": 2, "message": code})),
        }
    }
    let session = super::call_log::hex(&sha2::Sha256::digest(s.id.as_bytes())[..16]);
    let names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "tools/call load_skill",
            "tools/call send-email",
            "tools/call load_skill",
            "tools/call list_skills"
        ]
    );
    for span in &spans {
        let a = attributes(span);
        assert_eq!(span["kind"], 2, "SERVER: {span}");
        assert!(
            is_hex(&span["traceId"], 32) && is_hex(&span["spanId"], 16),
            "{span}"
        );
        let (start, end) = (
            span["startTimeUnixNano"].as_str().unwrap(),
            span["endTimeUnixNano"].as_str().unwrap(),
        );
        assert!(
            start.parse::<u128>().unwrap() <= end.parse::<u128>().unwrap(),
            "{span}"
        );
        assert_eq!(a["mcp.method.name"], "tools/call");
        assert_eq!(a["gen_ai.operation.name"], "execute_tool");
        assert_eq!(
            json!(format!(
                "tools/call {}",
                a["gen_ai.tool.name"].as_str().unwrap()
            )),
            span["name"]
        );
        assert_eq!(a["mcp.session.id"], json!(session));
        assert_eq!(a["network.transport"], "tcp");
        assert_eq!(a["skillbake.agent"], "alice");
        assert_eq!(a["skillbake.client"], "traces-test");
        assert!(
            a["skillbake.params_sha256"]
                .as_str()
                .is_some_and(|h| h.len() == 64),
            "{span}"
        );
    }
    let a: Vec<_> = spans.iter().map(attributes).collect();
    assert_eq!(spans[0]["traceId"], PARENT_TRACE);
    assert_eq!(spans[0]["parentSpanId"], PARENT_SPAN);
    assert_eq!(spans[0]["traceState"], "vendor=1");
    assert_eq!(a[0]["jsonrpc.request.id"], "100");
    assert_eq!(a[0]["skillbake.skill"], "send-email");
    assert_eq!(spans[0]["status"], json!({"code": 0}));
    assert!(!a[0].contains_key("error.type"));
    assert_eq!(spans[1]["traceId"], header_trace);
    assert_eq!(spans[1]["parentSpanId"], "b7ad6b7169203331");
    assert_eq!(a[1]["jsonrpc.request.id"], "call-b");
    assert_eq!(
        spans[2]["status"],
        json!({"code": 2, "message": "SKILL_NOT_FOUND"})
    );
    assert_eq!(a[2]["error.type"], "SKILL_NOT_FOUND");
    assert_eq!(a[2]["skillbake.outcome"], "SKILL_NOT_FOUND");
    for s in &spans[2..] {
        assert!(s.get("parentSpanId").is_none(), "{s}");
    }
    assert_ne!(
        spans[2]["traceId"], spans[3]["traceId"],
        "a new trace per call without a context"
    );

    // What an OTLP receiver makes of the requests: the official protobuf messages, strictly.
    let Some(python) = super::python::mcp_python("OTLP protobuf") else {
        return;
    };
    let bodies = dir.path().join("requests.jsonl");
    let lines: Vec<String> = collector
        .received
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    std::fs::write(&bodies, lines.join("\n") + "\n").unwrap();
    let check = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/otlp_check.py");
    let o = super::python::output_within(
        Command::new(python)
            .arg(check)
            .stdin(std::fs::File::open(&bodies).unwrap()),
        IO_TIMEOUT,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "6");
}

/// A hostile client cannot make queued spans big: a tool name and a URI of 3 MiB each (under
/// the 4 MiB body limit) become 1 KiB attributes, and a tracestate beyond W3C's 512 bytes is
/// dropped while the trace it came with is kept.
#[test]
fn what_a_client_names_is_bounded_in_its_spans() {
    let collector = Collector::start(Answer::Ok);
    let mut server = Server::start(&["--otlp-endpoint", &collector.url()]);
    let s = Session::open(server.addr, None, "traces-bounds");
    let big = "x".repeat(3 << 20);
    let meta = json!({"traceparent": format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01"),
        "tracestate": "k=v,".repeat(200)});
    let r = s.post_with(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": big, "arguments": {}, "_meta": meta}}),
        &[],
    );
    assert_eq!(r.status, 200, "{r:?}");
    let r = s.post_with(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {
            "uri": format!("skill://{big}"), "_meta": meta}}),
        &[],
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert!(server.terminate().success());
    let largest = collector
        .received
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.body.to_string().len())
        .max()
        .unwrap_or(0);
    assert!(largest < 16 << 10, "a request of {largest} bytes");
    let spans = collector.spans();
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let (call, read) = (attributes(&spans[0]), attributes(&spans[1]));
    assert_eq!(call["gen_ai.tool.name"].as_str().map(str::len), Some(1024));
    assert_eq!(
        spans[0]["name"].as_str().map(str::len),
        Some("tools/call ".len() + 1024)
    );
    assert_eq!(call["error.type"], "UNKNOWN_TOOL");
    assert_eq!(read["mcp.resource.uri"].as_str().map(str::len), Some(1024));
    for span in &spans {
        assert_eq!(span["traceId"], PARENT_TRACE, "{span}");
        assert_eq!(span["parentSpanId"], PARENT_SPAN, "{span}");
        assert!(span.get("traceState").is_none(), "{span}");
    }
}

/// `serve` over stdio with `--otlp-endpoint`: `calls` `load_skill` calls, all answered; then
/// stdin closes. The server's stderr and the calls' answers.
fn stdio_calls(endpoint: &str, calls: usize) -> (String, usize) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillbake"))
        .args(["serve", "--otlp-endpoint", endpoint])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = answered.clone();
    let answers = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains("\"result\"") && line.contains("\"content\"") {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    });
    let mut input = String::new();
    input.push_str(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string());
    input.push('\n');
    input.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for i in 1..=calls {
        input.push_str(
            &json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
            "name": "load_skill", "arguments": {"skill_name": "send-email"}}})
            .to_string(),
        );
        input.push('\n');
    }
    stdin.write_all(input.as_bytes()).unwrap();
    // Stdin stays open until every call has answered (a closed stdin ends the session).
    let deadline = Instant::now() + IO_TIMEOUT;
    while answered.load(std::sync::atomic::Ordering::Relaxed) < calls && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    answers.join().unwrap();
    (
        errors.join().unwrap(),
        answered.load(std::sync::atomic::Ordering::Relaxed),
    )
}

#[test]
fn a_collector_that_fails_costs_no_call_and_is_reported_once_with_what_was_lost() {
    for (answer, why) in [
        (Answer::Fail, "the collector answered HTTP 500"),
        (
            Answer::Close,
            "the collector closed the connection without an answer",
        ),
        (Answer::Never, ""),
    ] {
        let collector = Collector::start(answer);
        let calls = 1100;
        let (stderr, answered) = stdio_calls(&collector.url(), calls);
        assert_eq!(answered, calls, "{answer:?}: every call answers\n{stderr}");
        let reports = stderr.matches("spans could not be sent").count();
        let lost = format!(
            "0 spans sent to {}/v1/traces, {calls} lost",
            collector.url()
        );
        assert!(stderr.contains(&lost), "{answer:?}: {stderr}");
        if answer == Answer::Never {
            // The first request is still waiting when the server stops: nothing is reported
            // as failed yet, all of it is counted as lost.
            assert_eq!(reports, 0, "{stderr}");
            assert!(*collector.connections.lock().unwrap() >= 1);
        } else {
            assert!(
                collector.received.lock().unwrap().len() >= 3,
                "{answer:?}: batches of at most 512"
            );
            assert_eq!(
                reports, 1,
                "{answer:?}: reported once, not per request\n{stderr}"
            );
            assert!(stderr.contains(why), "{answer:?}: {stderr}");
        }
    }
}

#[test]
fn an_endpoint_that_is_not_http_is_refused_before_serving() {
    for (url, says) in [
        ("https://collector:4318", "https is not spoken"),
        ("collector:4318", "give an http:// URL"),
        ("http://collector:99999", "the port must be"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_skillbake"))
            .args(["serve", "--otlp-endpoint", url])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!o.status.success(), "{url}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains(says) && stderr.contains(url),
            "{url}: {stderr}"
        );
    }
}
