//! `skillbake serve --http` against hostile and careless clients: the real binary on a loopback
//! port, driven over raw HTTP/1.1. Bearer tokens and sessions bound to their agent; the session
//! caps; header and body timeouts; runs stopped when their caller goes away or cancels;
//! `find_skills` off the async workers; duplicate ids and malformed JSON-RPC; SIGTERM with
//! calls in flight; CORS. Every loop is bounded in count and time, every wait ends on the event
//! (within a generous bound), and every server is killed when its test ends.

use super::mcp_http::{
    parse_response, request, request_text, Response, Server, IO_TIMEOUT, JSON_AND_SSE,
};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ALICE: &str = "alice-0123456789abcdef";
const BOB: &str = "bob-0123456789abcdef";

/// A token file for alice (in clear) and bob (as its SHA-256), in `dir`.
fn token_file(dir: &Path) -> PathBuf {
    use sha2::Digest as _;
    let bob: String = sha2::Sha256::digest(BOB.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let path = dir.join("tokens.txt");
    std::fs::write(
        &path,
        format!("# agent token\nalice {ALICE}\n\nbob sha256:{bob}\n"),
    )
    .unwrap();
    path
}

/// A client of one agent (or of none, without a token).
#[derive(Clone, Copy)]
struct Client<'a> {
    addr: SocketAddr,
    token: Option<&'a str>,
}

impl Client<'_> {
    fn headers<'h>(&'h self, session: Option<&'h str>, auth: &'h str) -> Vec<(&'h str, &'h str)> {
        let mut h = JSON_AND_SSE.to_vec();
        if self.token.is_some() {
            h.push(("Authorization", auth));
        }
        if let Some(id) = session {
            h.push(("Mcp-Session-Id", id));
            h.push(("MCP-Protocol-Version", "2025-06-18"));
        }
        h
    }

    fn send(&self, method: &str, session: Option<&str>, body: &str) -> Response {
        let auth = format!("Bearer {}", self.token.unwrap_or(""));
        request(
            self.addr,
            method,
            "/mcp",
            &self.headers(session, &auth),
            body,
        )
    }

    fn post(&self, session: Option<&str>, message: &Value) -> Response {
        self.send("POST", session, &message.to_string())
    }

    /// `initialize` and `notifications/initialized`: the session id.
    fn open(&self) -> String {
        let r = self.post(None, &initialize());
        assert_eq!(r.status, 200, "{r:?}");
        let id = r.header("mcp-session-id").unwrap().to_string();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self.post(Some(&id), &note);
        assert_eq!(r.status, 202, "{r:?}");
        id
    }

    /// The raw bytes of a POST of `message` in `session`, for a connection of the test's own.
    fn post_text(&self, session: &str, message: &Value) -> String {
        let auth = format!("Bearer {}", self.token.unwrap_or(""));
        request_text(
            self.addr,
            "POST",
            "/mcp",
            &self.headers(Some(session), &auth),
            &message.to_string(),
            true,
        )
    }
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    })
}

fn tools_list(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}

#[test]
fn bearer_tokens_guard_the_endpoint_and_sessions_belong_to_their_agent() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = token_file(dir.path());
    let server = Server::start(&["--token-file", tokens.to_str().unwrap()]);
    assert!(
        server.banner.contains("bearer tokens of 2 agents"),
        "{}",
        server.banner
    );
    let nobody = Client {
        addr: server.addr,
        token: None,
    };
    let wrong = Client {
        addr: server.addr,
        token: Some("not-a-token-of-this-server"),
    };
    let alice = Client {
        addr: server.addr,
        token: Some(ALICE),
    };
    let bob = Client {
        addr: server.addr,
        token: Some(BOB),
    };
    // No token, a wrong one: 401 with a Bearer challenge, and no data.
    for (client, challenge) in [
        (nobody, r#"Bearer realm="skillbake""#),
        (wrong, r#"error="invalid_token""#),
    ] {
        let r = client.post(None, &initialize());
        assert_eq!(r.status, 401, "{r:?}");
        let www = r.header("www-authenticate").unwrap();
        assert!(www.starts_with("Bearer "), "{www}");
        assert!(www.contains(challenge), "{www}");
        assert!(!r.body.contains("skillbake\""), "{}", r.body);
        assert!(!r.body.contains("result"), "{}", r.body);
    }
    // A refusal sent before the body arrived ends its connection and says so: a client must
    // not put back in its pool a connection the server closes after the reply.
    let addr = server.addr;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer not-a-token-of-this-server\r\nContent-Length: 4096\r\n\r\n"
    );
    let r = parse_response(&exchange(addr, head.as_bytes()));
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(r.header("connection"), Some("close"), "{r:?}");
    // The probe stays open.
    let health = request(server.addr, "GET", "/healthz", &[], "");
    assert_eq!(health.status, 200, "{health:?}");

    let session = alice.open();
    let r = alice.post(Some(&session), &tools_list(2));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.reply(2)["result"]["tools"].is_array(), "{r:?}");
    // Alice's session id is no capability for bob: every use of it is 404, and it survives.
    let r = bob.post(Some(&session), &tools_list(3));
    assert_eq!(r.status, 404, "{r:?}");
    assert!(!r.body.contains("tools"), "{}", r.body);
    let r = bob.send("GET", Some(&session), "");
    assert_eq!(r.status, 404, "{r:?}");
    let r = bob.send("DELETE", Some(&session), "");
    assert_eq!(r.status, 404, "{r:?}");
    // Nor is it without a token.
    let r = nobody.post(Some(&session), &tools_list(4));
    assert_eq!(r.status, 401, "{r:?}");
    let r = alice.post(Some(&session), &tools_list(5));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.reply(5)["result"]["tools"].is_array(), "{r:?}");
    // Bob has sessions of his own (his token was given as a digest).
    let his = bob.open();
    assert_eq!(alice.post(Some(&his), &tools_list(6)).status, 404);
    let r = alice.send("DELETE", Some(&session), "");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(alice.post(Some(&session), &tools_list(7)).status, 404);
}

#[test]
fn bad_token_files_and_unauthenticated_execution_beyond_loopback_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("tokens.txt");
    std::fs::write(
        &bad,
        "# agents\nalice short\nbob\nok-agent 0123456789abcdef0123\nbad/name 0123456789abcdef0124\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_skillbake"))
        .args(["serve", "--http", "127.0.0.1:0", "--token-file"])
        .arg(&bad)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [2, 3, 5] {
        let at = format!("{}:{line}: ", bad.display());
        assert!(stderr.contains(&at), "{at} not in {stderr}");
    }
    assert!(!stderr.contains(":4: "), "{stderr}");
    assert!(!stderr.contains("serving"), "{stderr}");

    // Runs for anyone who can reach a non-loopback address: refused before anything binds.
    let out = Command::new(env!("CARGO_BIN_EXE_skillbake"))
        .args(["serve", "--http", "0.0.0.0:0", "--execute"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--token-file"), "{stderr}");
    assert!(!stderr.contains("serving"), "{stderr}");
}

/// The resident set of process `pid`, in KiB.
#[cfg(target_os = "linux")]
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn sessions_are_capped_and_the_oldest_idle_one_is_evicted() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = token_file(dir.path());
    let server = Server::start(&[
        "--token-file",
        tokens.to_str().unwrap(),
        "--max-sessions",
        "4",
        "--max-sessions-per-agent",
        "3",
    ]);
    let alice = Client {
        addr: server.addr,
        token: Some(ALICE),
    };
    let bob = Client {
        addr: server.addr,
        token: Some(BOB),
    };
    let a: Vec<String> = (0..3).map(|_| alice.open()).collect();
    // Alice's fourth evicts her oldest idle session.
    let a4 = alice.open();
    assert_eq!(alice.post(Some(&a[0]), &tools_list(2)).status, 404);
    for s in [&a[1], &a[2], &a4] {
        assert_eq!(alice.post(Some(s), &tools_list(2)).status, 200);
    }
    // Bob's second is the fifth in all: the oldest idle of anyone's goes (alice's a[1]; a[2]
    // and a4 were used after it).
    let b1 = bob.open();
    let b2 = bob.open();
    assert_eq!(alice.post(Some(&a[1]), &tools_list(3)).status, 404);
    for s in [&b1, &b2] {
        assert_eq!(bob.post(Some(s), &tools_list(3)).status, 200);
        assert!(bob.send("DELETE", Some(s), "").status < 300);
    }

    // A session with an open event stream is busy: never evicted, so with every session of
    // the agent busy a new one is refused.
    let mut streams = Vec::new();
    for s in [&a[2], &a4] {
        let mut stream = TcpStream::connect_timeout(&server.addr, IO_TIMEOUT).unwrap();
        stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        let get = format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {ALICE}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n",
            server.addr
        );
        stream.write_all(get.as_bytes()).unwrap();
        let mut first = [0u8; 12];
        stream.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        streams.push(stream);
    }
    let a5 = alice.open(); // two busy, one free slot of her three
    let _ = a5;
    let r = alice.post(None, &initialize());
    assert_eq!(r.status, 200, "{r:?}"); // evicts a5, the only idle one
    let a6 = r.header("mcp-session-id").unwrap().to_string();
    let mut stream = TcpStream::connect_timeout(&server.addr, IO_TIMEOUT).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {ALICE}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {a6}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n",
        server.addr
    );
    stream.write_all(get.as_bytes()).unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    streams.push(stream);
    let r = alice.post(None, &initialize());
    assert_eq!(r.status, 503, "{r:?}");
    assert_eq!(r.header("retry-after"), Some("1"));
    // Bob is not held up by alice's busy sessions.
    let b3 = bob.open();
    assert_eq!(bob.post(Some(&b3), &tools_list(4)).status, 200);
    drop(streams);
}

#[cfg(target_os = "linux")]
#[test]
fn two_thousand_abandoned_sessions_keep_memory_bounded() {
    const SESSIONS: usize = 2_000;
    const CAP: &str = "100";
    let server = Server::start(&["--max-sessions", CAP, "--max-sessions-per-agent", CAP]);
    let client = Client {
        addr: server.addr,
        token: None,
    };
    let first = client.open();
    let before = rss_kib(server.child.id());
    let started = Instant::now();
    for i in 0..SESSIONS {
        let r = client.post(None, &initialize());
        assert_eq!(r.status, 200, "initialize {i}: {r:?}");
        assert!(started.elapsed() < IO_TIMEOUT * 4, "too slow to finish");
    }
    let after = rss_kib(server.child.id());
    eprintln!(
        "server RSS: {before} KiB with 1 session, {after} KiB after {SESSIONS} more initialize calls (cap {CAP}): {:+} KiB",
        after as i64 - before as i64
    );
    // The first session was evicted long ago.
    assert_eq!(client.post(Some(&first), &tools_list(2)).status, 404);
    // Unbounded, the sessions took about 63 KB each (126 MB for these); capped, the server
    // holds at most 100 of them.
    assert!(
        after < before + 64 * 1024,
        "the server grew from {before} KiB to {after} KiB"
    );
}

/// Sends `bytes` on a new connection and reads until the server closes it (bounded by
/// `IO_TIMEOUT`): the raw response.
fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.write_all(bytes).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    raw
}

/// Writes `head` then `trickle` one byte every 100 ms on a new connection, until the server
/// closes it or the bytes run out; says whether the server closed it first, with what it sent.
fn trickle(addr: SocketAddr, head: &str, trickle: &[u8]) -> (bool, Vec<u8>) {
    let mut stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let closed = Arc::new(AtomicBool::new(false));
    let mut reader = stream.try_clone().unwrap();
    let seen = Arc::clone(&closed);
    let read = std::thread::spawn(move || {
        let mut raw = Vec::new();
        let _ = reader.read_to_end(&mut raw);
        seen.store(true, Ordering::SeqCst);
        raw
    });
    let mut sent_all = true;
    for b in trickle {
        if closed.load(Ordering::SeqCst) || stream.write_all(&[*b]).is_err() {
            sent_all = false;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let server_closed = !sent_all || closed.load(Ordering::SeqCst);
    let _ = stream.shutdown(std::net::Shutdown::Both);
    (server_closed, read.join().unwrap())
}

#[test]
fn slow_headers_slow_bodies_and_short_bodies_time_out() {
    let server = Server::start(&["--header-timeout", "1s", "--body-timeout", "1s"]);
    let addr = server.addr;
    let body = initialize().to_string();
    // 10 of each at once, each at most 60 s of one byte per 100 ms.
    let pad = vec![b'a'; 600];
    let slow: Vec<_> = (0..10)
        .map(|i| {
            let pad = pad.clone();
            std::thread::spawn(move || {
                let head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Pad: ");
                let (closed, _) = trickle(addr, &head, &pad);
                assert!(closed, "slow headers {i}: the connection stayed open");
            })
        })
        .chain((0..10).map(|i| {
            let pad = pad.clone();
            std::thread::spawn(move || {
                let head = format!(
                    "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
                    pad.len()
                );
                let (closed, raw) = trickle(addr, &head, &pad);
                assert!(closed, "slow body {i}: the connection stayed open");
                assert_eq!(parse_response(&raw).status, 408, "slow body {i}");
            })
        }))
        .collect();
    for t in slow {
        t.join().unwrap();
    }
    // A length much larger than what is sent: 408 once the body timeout is over.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 3000000\r\n\r\n"
    );
    let raw = exchange(addr, &[head.as_bytes(), &[b' '; 1024]].concat());
    assert_eq!(parse_response(&raw).status, 408);
    // Beyond the body limit: refused before anything is read.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000000\r\nConnection: close\r\n\r\n"
    );
    let raw = exchange(addr, &[head.as_bytes(), &[b' '; 1024]].concat());
    assert_eq!(parse_response(&raw).status, 413);
    // And a client that keeps to the limits is served.
    let r = request(addr, "POST", "/mcp", &JSON_AND_SSE, &body);
    assert_eq!(r.status, 200, "{r:?}");
}

/// A FIFO nobody writes to yet, in `dir`: a run of `financial-report-analyzer` on it blocks
/// until the test writes it or the run is stopped.
#[cfg(target_os = "linux")]
fn fifo(dir: &Path, name: &str) -> String {
    let fifo = dir.join(name);
    assert!(Command::new("mkfifo")
        .args(["-m", "0666"])
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    fifo.display().to_string()
}

#[cfg(target_os = "linux")]
const SCRIPT: &str = "calculate_ratios.py";

/// The running scripts reading `input`.
#[cfg(target_os = "linux")]
fn runs_on(input: &str) -> Vec<u32> {
    super::mcp_http::processes_running(input)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(SCRIPT))
        })
        .collect()
}

#[cfg(target_os = "linux")]
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + IO_TIMEOUT;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {IO_TIMEOUT:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(target_os = "linux")]
fn analyze(id: u64, input: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "financial-report-analyzer", "arguments": {"input": input}}})
}

/// A server that runs packs, one at a time, with a timeout no test reaches.
#[cfg(target_os = "linux")]
fn running_server(dir: &Path, extra: &[&str]) -> Server {
    let cache = dir.join("cache");
    let mut args = vec![
        "--allow",
        "filesystem:read",
        "--max-runs",
        "1",
        "--timeout",
        "600",
        "--cache-dir",
        cache.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Server::start(&args)
}

#[cfg(target_os = "linux")]
#[test]
fn runs_stop_when_their_caller_goes_away_or_cancels() {
    let dir = tempfile::tempdir().unwrap();
    let server = running_server(dir.path(), &[]);
    let client = Client {
        addr: server.addr,
        token: None,
    };
    let session = client.open();
    // 1. The caller disconnects mid-run: the script's group is killed and the slot freed.
    let first = fifo(dir.path(), "first.csv");
    let mut stream = TcpStream::connect_timeout(&server.addr, IO_TIMEOUT).unwrap();
    stream
        .write_all(client.post_text(&session, &analyze(10, &first)).as_bytes())
        .unwrap();
    wait_until("the first run starts", || !runs_on(&first).is_empty());
    drop(stream);
    wait_until("the abandoned run is stopped", || {
        runs_on(&first).is_empty()
    });
    // 2. The slot is free again (one slot): the next run starts; then the client cancels it.
    let second = fifo(dir.path(), "second.csv");
    let text = client.post_text(&session, &analyze(11, &second));
    let addr = server.addr;
    let caller = std::thread::spawn(move || exchange(addr, text.as_bytes()));
    wait_until("the second run starts (its slot was freed)", || {
        !runs_on(&second).is_empty()
    });
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 11, "reason": "the user changed their mind"}});
    let r = client.post(Some(&session), &cancel);
    assert_eq!(r.status, 202, "{r:?}");
    wait_until("the cancelled run is stopped", || {
        runs_on(&second).is_empty()
    });
    let _ = caller.join().unwrap();
    // 3. And a third run gets the slot and completes.
    let third = dir.path().join("third.csv");
    std::fs::write(&third, "item,value\nrevenue,100\nnet_income,10\n").unwrap();
    let r = client.post(Some(&session), &analyze(12, third.to_str().unwrap()));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.reply(12).get("result").is_some(), "{r:?}");
}

#[test]
fn health_answers_while_big_queries_run() {
    let server = Server::start(&[]);
    let addr = server.addr;
    let client = Client { addr, token: None };
    let session = client.open();
    // A query of 3.9 MiB: about a second of CPU each (more in a debug build).
    let query = "send the quarterly report to my team ".repeat(110_000);
    assert!(query.len() > 3_900_000 && query.len() < 4_100_000);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let queries = workers.max(4);
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut streams = Vec::new();
    for i in 0..queries {
        let call = json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
            "params": {"name": "find_skills", "arguments": {"query": query}}});
        let mut stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).unwrap();
        stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        stream
            .write_all(client.post_text(&session, &call).as_bytes())
            .unwrap();
        streams.push(stream);
    }
    let readers: Vec<_> = streams
        .into_iter()
        .map(|mut s| {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let mut raw = Vec::new();
                let _ = s.read_to_end(&mut raw);
                done.fetch_add(1, Ordering::SeqCst);
                parse_response(&raw)
            })
        })
        .collect();
    // Every query is in by now; the probe is answered before any of them is.
    let health = request(addr, "GET", "/healthz", &[], "");
    let finished = done.load(Ordering::SeqCst);
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(
        finished, 0,
        "/healthz waited for {finished} of the {queries} queries"
    );
    for r in readers {
        let r = r.join().unwrap();
        assert_eq!(r.status, 200, "{r:?}");
        assert!(r.messages().iter().any(|m| m.get("result").is_some()));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn duplicate_ids_and_malformed_messages_get_json_rpc_errors() {
    let dir = tempfile::tempdir().unwrap();
    let server = running_server(dir.path(), &[]);
    let client = Client {
        addr: server.addr,
        token: None,
    };
    let session = client.open();
    // A request in progress with id 7 ...
    let input = fifo(dir.path(), "slow.csv");
    let mut first = TcpStream::connect_timeout(&server.addr, IO_TIMEOUT).unwrap();
    first.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    first
        .write_all(client.post_text(&session, &analyze(7, &input)).as_bytes())
        .unwrap();
    wait_until("the run starts", || !runs_on(&input).is_empty());
    // ... and another with the same id gets an error right away.
    let again = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "list_skills", "arguments": {}}});
    let r = client.post(Some(&session), &again);
    assert_eq!(r.status, 200, "{r:?}");
    let reply = r.reply(7);
    assert_eq!(reply["error"]["code"], json!(-32600), "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("still in progress"),
        "{reply}"
    );
    // Another id is fine.
    let r = client.post(Some(&session), &tools_list(8));
    assert!(r.reply(8)["result"]["tools"].is_array());
    // Cancelled, the first one's stream ends; then its id may be used again.
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
    assert_eq!(client.post(Some(&session), &cancel).status, 202);
    let mut raw = Vec::new();
    let _ = first.read_to_end(&mut raw);
    wait_until("the cancelled run is stopped", || {
        runs_on(&input).is_empty()
    });
    let r = client.post(Some(&session), &tools_list(7));
    assert!(r.reply(7)["result"]["tools"].is_array(), "{r:?}");

    // What is no JSON-RPC message: HTTP 400 with the JSON-RPC error, with or without a session.
    for (body, code) in [
        ("{\"jsonrpc\": \"2.0\", \"id\": 1, ", -32700),
        (
            "[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
            -32600,
        ),
        ("42", -32600),
        ("{\"id\": 1, \"method\": \"ping\"}", -32600),
    ] {
        for s in [None, Some(session.as_str())] {
            let r = client.send("POST", s, body);
            assert_eq!(r.status, 400, "{body}: {r:?}");
            let v: Value = serde_json::from_str(&r.body).unwrap();
            assert_eq!(v["error"]["code"], json!(code), "{body}: {v}");
            assert_eq!(v["jsonrpc"], json!("2.0"));
        }
    }
    // Arguments of the wrong type: invalid params, answered to the request.
    for args in [json!(42), json!("x"), json!([1])] {
        let call = json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
            "params": {"name": "load_skill", "arguments": args}});
        let r = client.post(Some(&session), &call);
        let reply = r.reply(20);
        assert_eq!(reply["error"]["code"], json!(-32602), "{args}: {reply}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_lets_calls_in_flight_finish_then_stops_runs_with_a_reply() {
    let dir = tempfile::tempdir().unwrap();
    // 1. Within the grace period: the call finishes and its reply goes out.
    let mut server = running_server(dir.path(), &["--shutdown-grace", "120s"]);
    let client = Client {
        addr: server.addr,
        token: None,
    };
    let session = client.open();
    let input = fifo(dir.path(), "late.csv");
    let text = client.post_text(&session, &analyze(30, &input));
    let addr = server.addr;
    let caller = std::thread::spawn(move || parse_response(&exchange(addr, text.as_bytes())));
    wait_until("the run starts", || !runs_on(&input).is_empty());
    let pid = server.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    // The server stops accepting ...
    wait_until("the listener closes", || {
        TcpStream::connect_timeout(&addr, Duration::from_secs(5)).is_err()
    });
    // ... while the run goes on: feed it, and its reply arrives.
    std::fs::write(&input, "item,value\nrevenue,100\nnet_income,10\n").unwrap();
    let r = caller.join().unwrap();
    let reply = r.reply(30);
    assert!(reply.get("result").is_some(), "{reply}");
    assert!(!reply.to_string().contains("cancelled"), "{reply}");
    let status = server.terminate_wait();
    assert!(status.success(), "exit status {status}");

    // 2. Past the grace period: the run is stopped and its call answers that it was.
    let mut server = running_server(dir.path(), &["--shutdown-grace", "1s"]);
    let client = Client {
        addr: server.addr,
        token: None,
    };
    let session = client.open();
    let input = fifo(dir.path(), "never.csv");
    let text = client.post_text(&session, &analyze(31, &input));
    let addr = server.addr;
    let caller = std::thread::spawn(move || parse_response(&exchange(addr, text.as_bytes())));
    wait_until("the run starts", || !runs_on(&input).is_empty());
    let status = server.terminate();
    assert!(status.success(), "exit status {status}");
    let reply = caller.join().unwrap().reply(31);
    assert_eq!(reply["result"]["isError"], json!(true), "{reply}");
    assert!(reply.to_string().contains("cancelled"), "{reply}");
    assert!(runs_on(&input).is_empty());
}

#[cfg(unix)]
#[test]
fn sigterm_right_after_the_banner_stops_gracefully() {
    for i in 0..20 {
        let mut server = Server::start(&[]);
        let status = server.terminate();
        assert_eq!(status.code(), Some(0), "start {i}: {status}");
    }
}

#[test]
fn allowed_origins_get_cors_replies_and_preflights() {
    let server = Server::start(&["--allowed-origin", "http://localhost:5173"]);
    let origin = "http://localhost:5173";
    let preflight = [
        ("Origin", origin),
        ("Access-Control-Request-Method", "POST"),
        (
            "Access-Control-Request-Headers",
            "content-type, mcp-session-id",
        ),
    ];
    let r = request(server.addr, "OPTIONS", "/mcp", &preflight, "");
    assert_eq!(r.status, 204, "{r:?}");
    assert_eq!(r.header("access-control-allow-origin"), Some(origin));
    assert!(r
        .header("access-control-allow-methods")
        .unwrap()
        .contains("POST"));
    assert!(r
        .header("access-control-allow-headers")
        .unwrap()
        .contains("mcp-session-id"));
    let mut h = JSON_AND_SSE.to_vec();
    h.push(("Origin", origin));
    let r = request(server.addr, "POST", "/mcp", &h, &initialize().to_string());
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("access-control-allow-origin"), Some(origin));
    assert!(r
        .header("access-control-expose-headers")
        .unwrap()
        .contains("mcp-session-id"));
    // Another origin: refused, preflight included, and told nothing.
    let other = [
        ("Origin", "https://attacker.example"),
        ("Access-Control-Request-Method", "POST"),
    ];
    let r = request(server.addr, "OPTIONS", "/mcp", &other, "");
    assert_eq!(r.status, 403, "{r:?}");
    assert_eq!(r.header("access-control-allow-origin"), None);
}
