//! `skillbake serve --http`: the real binary on a loopback port, driven over plain HTTP/1.1 the
//! way any MCP client speaks Streamable HTTP. Many clients at once get the same bytes as
//! `load_skill`; foreign `Host` and `Origin` headers are refused; SIGTERM ends the server even
//! with an event stream open or a script running, and the script with it. Every server is killed when its test ends, and every read is
//! bounded by a timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use serde_json::{json, Value};
use skillbake_cli::BUNDLED;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The bound of every wait on the server (a reply, a connection, its exit): generous, since a
/// wait ends as soon as the thing happens.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(120);

/// A running `skillbake serve --http 127.0.0.1:0`, killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    /// What the server printed to stderr on start.
    pub(crate) banner: String,
}

impl Server {
    pub(crate) fn start(extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_skillbake"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut banner = String::new();
        stderr.read_line(&mut banner).unwrap();
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = stderr.read_to_end(&mut sink);
        });
        let url = banner
            .split_whitespace()
            .find(|w| w.starts_with("http://") && w.ends_with("/mcp"))
            .unwrap_or_else(|| panic!("no MCP URL in {banner:?}"));
        let addr = url["http://".len()..url.len() - "/mcp".len()]
            .parse()
            .unwrap();
        Server {
            child,
            addr,
            banner,
        }
    }

    /// Sends SIGTERM and waits (bounded) for the exit status.
    #[cfg(unix)]
    pub(crate) fn terminate(&mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.terminate_wait()
    }

    /// Waits (bounded) for the exit status of a server sent SIGTERM.
    pub(crate) fn terminate_wait(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + IO_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not stop within {IO_TIMEOUT:?} of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response: status, lower-cased headers, body (chunked encoding decoded).
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: one JSON body, or the `data:` lines of an event
    /// stream.
    pub(crate) fn messages(&self) -> Vec<Value> {
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
        {
            return vec![serde_json::from_str(&self.body).unwrap()];
        }
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    /// The message answering request `id`.
    pub(crate) fn reply(&self, id: u64) -> Value {
        self.messages()
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no reply to request {id} in {self:?}"))
    }
}

/// The bytes of one HTTP/1.1 request: `Host` unless `headers` has one, `Connection: close` when
/// `close`, then `headers`, the length and the body (written at once, so no part waits for the
/// ACK of another).
pub(crate) fn request_text(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    close: bool,
) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if close {
        head.push_str("Connection: close\r\n");
    }
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    head
}

/// One HTTP/1.1 request on a new connection (`Connection: close`), read to the end.
pub(crate) fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response {
    let mut stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    let text = request_text(addr, method, path, headers, body, true);
    stream.write_all(text.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_response(&raw)
}

pub(crate) fn parse_response(raw: &[u8]) -> Response {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("no end of headers");
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("no status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size_text = std::str::from_utf8(&rest[..eol]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        let start = eol + 2;
        out.extend_from_slice(&rest[start..start + size]);
        rest = &rest[start + size + 2..];
    }
}

pub(crate) const JSON_AND_SSE: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// An MCP session over HTTP: `initialize`, then `notifications/initialized`.
struct Session {
    addr: SocketAddr,
    id: String,
    next: u64,
}

impl Session {
    fn open(addr: SocketAddr, client: &str) -> Session {
        let init = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1.0"},
            },
        });
        let r = request(addr, "POST", "/mcp", &JSON_AND_SSE, &init.to_string());
        assert_eq!(r.status, 200, "{r:?}");
        let reply = r.reply(1);
        assert_eq!(
            reply["result"]["serverInfo"]["name"], "skillbake",
            "{reply}"
        );
        let id = r
            .header("mcp-session-id")
            .expect("no Mcp-Session-Id")
            .to_string();
        let session = Session { addr, id, next: 2 };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = session.post(&note);
        assert_eq!(r.status, 202, "{r:?}");
        session
    }

    fn headers(&self) -> Vec<(&str, &str)> {
        let mut h = JSON_AND_SSE.to_vec();
        h.push(("Mcp-Session-Id", &self.id));
        h.push(("MCP-Protocol-Version", "2025-06-18"));
        h
    }

    fn post(&self, message: &Value) -> Response {
        request(
            self.addr,
            "POST",
            "/mcp",
            &self.headers(),
            &message.to_string(),
        )
    }

    /// Sends a request and returns the whole reply (a `result` or an `error`).
    fn reply(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let r = self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(r.status, 200, "{r:?}");
        r.reply(id)
    }

    /// Calls a method and returns its `result`.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let r = self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(r.status, 200, "{r:?}");
        let reply = r.reply(id);
        assert!(reply.get("error").is_none(), "{method}: {reply}");
        reply["result"].clone()
    }

    fn close(self) {
        let r = request(self.addr, "DELETE", "/mcp", &self.headers(), "");
        assert_eq!(r.status, 200, "{r:?}");
    }
}

pub(crate) fn only_text(result: &Value) -> &str {
    let content = result["content"].as_array().expect("no content");
    assert_eq!(content.len(), 1, "{result}");
    content[0]["text"].as_str().expect("not text")
}

#[test]
fn many_clients_get_load_skill_byte_for_byte() {
    let server = Server::start(&[]);
    assert!(server.banner.contains("healthz"), "{}", server.banner);
    let names: Vec<&str> = BUNDLED.names().collect();
    assert!(names.len() >= 3);
    let clients = 8;
    let addr = server.addr;
    let handles: Vec<_> = (0..clients)
        .map(|i| {
            let name = names[i % names.len()].to_string();
            std::thread::spawn(move || {
                let mut s = Session::open(addr, &format!("client-{i}"));
                let tools = s.call("tools/list", json!({}));
                let listed: Vec<&str> = tools["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["name"].as_str().unwrap())
                    .collect();
                assert!(listed.contains(&"load_skill") && listed.contains(&"find_skills"));
                let result = s.call(
                    "tools/call",
                    json!({"name": "load_skill", "arguments": {"skill_name": name}}),
                );
                let skill = BUNDLED.get(&name).unwrap();
                assert_eq!(
                    only_text(&result),
                    BUNDLED.load_skill(&name, skill.skill_md_path()),
                    "{name}"
                );
                let found = s.call(
                    "tools/call",
                    json!({"name": "find_skills", "arguments": {"query": "read a text file", "top_k": 2}}),
                );
                assert_eq!(
                    only_text(&found),
                    BUNDLED.route_json(
                        "read a text file",
                        skillbake::RouteOptions {
                            top: 2,
                            bucket: None
                        }
                    )
                );
                s.close();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // Each session saw only its own replies, and the server still answers.
    let health = request(addr, "GET", "/healthz", &[], "");
    assert_eq!(health.status, 200);
    let v: Value = serde_json::from_str(&health.body).unwrap();
    assert_eq!(v["ok"], json!(true));
    assert_eq!(v["skills"], json!(BUNDLED.len()));
}

/// Reads one HTTP/1.1 response from a kept-open connection (length-delimited or chunked).
pub(crate) fn read_response(reader: &mut BufReader<TcpStream>) -> Response {
    let mut raw = Vec::new();
    loop {
        let mut line = Vec::new();
        reader.read_until(b'\n', &mut line).unwrap();
        assert!(!line.is_empty(), "the connection closed mid-response");
        raw.extend_from_slice(&line);
        if line == b"\r\n" {
            break;
        }
    }
    let head = parse_response(&raw);
    let mut body = Vec::new();
    if head
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = head.header("content-length") {
        body.resize(n.parse().unwrap(), 0);
        reader.read_exact(&mut body).unwrap();
    }
    Response {
        body: String::from_utf8(body).unwrap(),
        ..head
    }
}

#[test]
fn one_kept_open_connection_serves_many_requests() {
    let server = Server::start(&[]);
    let session = Session::open(server.addr, "keep-alive");
    let stream = TcpStream::connect_timeout(&server.addr, IO_TIMEOUT).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut reader = BufReader::new(stream);
    let names: Vec<&str> = BUNDLED.names().collect();
    for (i, name) in names.iter().cycle().take(3 * names.len()).enumerate() {
        let id = 10 + i as u64;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "load_skill", "arguments": {"skill_name": name}}})
        .to_string();
        let text = request_text(
            server.addr,
            "POST",
            "/mcp",
            &session.headers(),
            &body,
            false,
        );
        reader.get_mut().write_all(text.as_bytes()).unwrap();
        let r = read_response(&mut reader);
        assert_eq!(r.status, 200, "{r:?}");
        let skill = BUNDLED.get(name).unwrap();
        assert_eq!(
            only_text(&r.reply(id)["result"]),
            BUNDLED.load_skill(name, skill.skill_md_path()),
            "request {i} on the same connection"
        );
    }
}

#[test]
fn foreign_hosts_origins_and_paths_are_refused() {
    let server = Server::start(&[]);
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    })
    .to_string();
    let mut rebinding = JSON_AND_SSE.to_vec();
    rebinding.push(("Host", "attacker.example"));
    let r = request(server.addr, "POST", "/mcp", &rebinding, &init);
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.contains("Host"), "{r:?}");

    let mut browser = JSON_AND_SSE.to_vec();
    browser.push(("Origin", "https://attacker.example"));
    let r = request(server.addr, "POST", "/mcp", &browser, &init);
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.contains("Origin"), "{r:?}");

    let r = request(server.addr, "GET", "/skills", &[], "");
    assert_eq!(r.status, 404);
    let v: Value = serde_json::from_str(&r.body).unwrap();
    assert!(
        v["error"].as_str().unwrap().contains("`/mcp`"),
        "{}",
        r.body
    );

    // A session id the server never gave out.
    let mut stale = JSON_AND_SSE.to_vec();
    stale.push(("Mcp-Session-Id", "no-such-session"));
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let r = request(server.addr, "POST", "/mcp", &stale, &call);
    assert!(
        (400..500).contains(&r.status),
        "a stale session answered {r:?}"
    );
}

#[test]
fn allowed_hosts_and_origins_are_accepted() {
    let server = Server::start(&[
        "--allowed-host",
        "skills.internal",
        "--allowed-origin",
        "http://localhost:5173",
    ]);
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    })
    .to_string();
    let mut h = JSON_AND_SSE.to_vec();
    h.push(("Host", "skills.internal"));
    h.push(("Origin", "http://localhost:5173"));
    let r = request(server.addr, "POST", "/mcp", &h, &init);
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.reply(1)["result"]["serverInfo"]["name"], "skillbake");
}

#[test]
fn bad_serve_options_are_reported() {
    let out = Command::new(env!("CARGO_BIN_EXE_skillbake"))
        .args(["serve", "--http", "127.0.0.1:0", "--http-path", "mcp"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("must start with `/`"), "{stderr}");
    // Route syntax (`{…}`, `*`) and empty segments are refused, never handed to the router.
    for bad in ["/{x}", "/mcp/*rest", "/a//b", "/healthz", "/m cp"] {
        let out = Command::new(env!("CARGO_BIN_EXE_skillbake"))
            .args(["serve", "--http", "127.0.0.1:0", "--http-path", bad])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("the MCP path must"), "{bad}: {stderr}");
        assert!(!stderr.contains("panicked"), "{bad}: {stderr}");
    }

    let out = Command::new(env!("CARGO_BIN_EXE_skillbake"))
        .args(["serve", "--allowed-host", "x"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--http"), "{stderr}");

    let out = Command::new(env!("CARGO_BIN_EXE_skillbake"))
        .args(["serve", "--skills-page", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--skills-page must be at least 1"),
        "{stderr}"
    );
}

#[cfg(unix)]
#[test]
fn sigterm_stops_the_server_with_an_event_stream_open() {
    let mut server = Server::start(&[]);
    let session = Session::open(server.addr, "listener");
    // The client's standalone event stream (GET): it stays open until the server ends it.
    let mut stream = TcpStream::connect_timeout(&server.addr, IO_TIMEOUT).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n",
        server.addr, session.id
    );
    stream.write_all(get.as_bytes()).unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200", "the event stream did not open");
    let status = server.terminate();
    assert!(status.success(), "exit status {status}");
    // The stream ended with the server (end of file, or a reset).
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
}

#[test]
fn runs_a_pack_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "first line\nsecond line\n").unwrap();
    let cache = dir.path().join("cache");
    let server = Server::start(&[
        "--allow",
        "filesystem:read",
        "--max-runs",
        "1",
        // A limit no loaded machine reaches: both runs must finish.
        "--timeout",
        "120",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    let addr = server.addr;
    let path = file.display().to_string();
    // Two clients at once, one run slot: both runs complete, one after the other.
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut s = Session::open(addr, &format!("runner-{i}"));
                let result = s.call(
                    "tools/call",
                    json!({"name": "read-file", "arguments": {"path": path}}),
                );
                let outcome: Value = serde_json::from_str(only_text(&result)).unwrap();
                assert_eq!(outcome["ok"], json!(true), "{outcome}");
                assert_eq!(
                    outcome["data"]["content"],
                    json!("first line\nsecond line\n")
                );
                assert_ne!(result["isError"], json!(true));
                s.close();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// The processes whose command line contains `needle`.
#[cfg(target_os = "linux")]
pub(crate) fn processes_running(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(needle) {
                found.push(pid);
            }
        }
    }
    found
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_stops_a_running_script_and_the_server() {
    let dir = tempfile::tempdir().unwrap();
    // A FIFO nobody writes to: the pack's script blocks opening it until it is stopped.
    let fifo = dir.path().join("statements.csv");
    assert!(Command::new("mkfifo")
        .args(["-m", "0666"])
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let cache = dir.path().join("cache");
    let mut server = Server::start(&[
        "--allow",
        "filesystem:read",
        "--timeout",
        "600",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    let addr = server.addr;
    let input = fifo.display().to_string();
    let caller = std::thread::spawn(move || {
        let s = Session::open(addr, "long-run");
        let id = s.next;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "financial-report-analyzer", "arguments": {"input": input}}});
        // Ends with the server: a reply for the stopped run, or the connection closed.
        let mut stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).unwrap();
        stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        let body = call.to_string();
        let text = request_text(addr, "POST", "/mcp", &s.headers(), &body, true);
        stream.write_all(text.as_bytes()).unwrap();
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        String::from_utf8_lossy(&raw).to_string()
    });
    // The script's command line names this test's FIFO: a run of the same pack elsewhere on
    // the machine is not this one.
    let script = fifo.display().to_string();
    let script = script.as_str();
    let deadline = Instant::now() + IO_TIMEOUT;
    while processes_running(script).is_empty() {
        assert!(Instant::now() < deadline, "the pack's script never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The run has 600 s left: the server may not wait for it.
    let status = server.terminate();
    assert!(status.success(), "exit status {status}");
    let answer = caller.join().unwrap();
    // When the reply made it out before the connection closed, it reports the stopped run.
    let reply = answer
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("result").is_some() || m.get("error").is_some());
    if let Some(reply) = reply {
        assert_eq!(reply["result"]["isError"], json!(true), "{reply}");
        eprintln!("the stopped run answered: {reply}");
    }
    let deadline = Instant::now() + IO_TIMEOUT;
    while !processes_running(script).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the script outlived the server: {:?}",
            processes_running(script)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let hex: String = sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The MCP Skills extension over HTTP as raw JSON-RPC: the extension is declared, every
/// bundled pack is listed with the digest and size of the bytes `resources/read` answers,
/// `skills/get` answers the listed entry, and hostile requests are `invalid params` errors
/// whose messages say what is wrong.
#[test]
fn skills_extension_over_http_and_its_errors() {
    let server = Server::start(&[]);
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "skills", "version": "1.0"}},
    });
    let r = request(
        server.addr,
        "POST",
        "/mcp",
        &JSON_AND_SSE,
        &init.to_string(),
    );
    let extension = &r.reply(1)["result"]["capabilities"]["extensions"];
    assert_eq!(
        extension,
        &json!({"io.modelcontextprotocol/skills": {"directoryRead": true}})
    );
    let mut session = Session::open(server.addr, "skills");
    let list = session.call("skills/list", json!({}));
    assert_eq!(list["cacheScope"], "public", "{list}");
    assert!(list["ttlMs"].as_u64().is_some(), "{list}");
    assert!(list.get("nextCursor").is_none(), "{list}");
    let skills = list["skills"].as_array().unwrap();
    assert_eq!(skills.len(), BUNDLED.len());
    for entry in skills {
        let got = session.call("skills/get", json!({"uri": entry["uri"]}));
        assert_eq!(&got["skill"], entry);
        for file in entry["resources"].as_array().unwrap() {
            let read = session.call("resources/read", json!({"uri": file["uri"]}));
            let text = read["contents"][0]["text"].as_str().unwrap();
            assert_eq!(file["size"], json!(text.len()), "{file}");
            assert_eq!(file["digest"], json!(sha256(text.as_bytes())), "{file}");
        }
    }
    let mut out = String::new();
    for (method, params) in [
        (
            "skills/get",
            json!({"uri": "skill://no-such-skill/SKILL.md"}),
        ),
        (
            "skills/get",
            json!({"uri": "skill://read-file/schema.json"}),
        ),
        ("skills/get", json!({"uri": "skill://read-file"})),
        ("skills/get", json!({})),
        ("skills/get", json!({"uri": ["skill://read-file/SKILL.md"]})),
        ("skills/list", json!({"cursor": "no-such-page"})),
        (
            "resources/directory/read",
            json!({"uri": "skill://read-file/SKILL.md"}),
        ),
        (
            "resources/directory/read",
            json!({"uri": "skill://read-file/no-such-folder"}),
        ),
        (
            "resources/directory/read",
            json!({"uri": "skill://read-file/scripts/"}),
        ),
        (
            "resources/directory/read",
            json!({"uri": "skill://read-file", "cursor": "1"}),
        ),
        ("resources/directory/read", json!({})),
    ] {
        let reply = session.reply(method, params.clone());
        let error = &reply["error"];
        assert_eq!(error["code"], -32602, "{method} {params}: {reply}");
        out.push_str(&format!(
            "{method} {params}\n  {}\n",
            error["message"].as_str().unwrap()
        ));
    }
    insta::assert_snapshot!("skills_http_errors", out);
    session.close();
}
