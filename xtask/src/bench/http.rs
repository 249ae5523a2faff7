//! `cargo xtask bench http [--clients N] [--requests M] [--rounds R]`: what serving many agents
//! from one `skillbake serve --http` costs, written to `BENCHMARKS.md` between its
//! `bench-http:start`/`bench-http:end` markers.
//!
//! The release binary with the bundled packs serves on a loopback port; `N` client threads each
//! send `M` requests, as fast as the answers come. Measured side by side, in rounds that run every runner in turn, so a change in
//! the machine's load hits them alike:
//!
//! * **floor**: `GET /healthz` — the HTTP stack and a JSON answer, nothing of MCP;
//! * **`load_skill` over MCP**: `tools/call load_skill` for the bundled packs in turn, each
//!   client on its own session (opened before the clock starts), the reply checked against
//!   `skillbake load`; once with a new connection per request, once on one connection per
//!   client kept open (HTTP/1.1 keep-alive, what MCP clients do);
//! * **stdio**: one `skillbake serve` per client on stdin/stdout (how a desktop client runs an
//!   MCP server), the same `tools/call load_skill` lines;
//! * **a process per request**: `skillbake load NAME` started for every request (what an
//!   integration without a server does), the same number of requests from the same number of
//!   threads.
//!
//! The HTTP server requires a bearer token (`--token-file`, as a shared service runs), so every
//! MCP request carries one. Reported: requests per second of each round (median with min–max
//! over the rounds), latency median and 99th percentile over every request of every round,
//! failed requests (a refused, failed or different reply), the servers' resident memory after
//! the runner's last round (the HTTP server's, or the sum of the stdio servers'), and ratios to
//! the floor.

use super::builds::build_dir;
use super::process::write_section;
use super::report::t;
use super::timing::Stat;
use crate::{http1, root};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const START: &str = "<!-- bench-http:start -->\n";
const END: &str = "<!-- bench-http:end -->";
const USAGE: &str = "usage: cargo xtask bench http [--clients N] [--requests M] [--rounds R]";
const IO_TIMEOUT: Duration = Duration::from_secs(30);

struct Options {
    clients: usize,
    requests: usize,
    rounds: usize,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        clients: 8,
        requests: 200,
        rounds: 5,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let slot = match a.as_str() {
            "--clients" => &mut o.clients,
            "--requests" => &mut o.requests,
            "--rounds" => &mut o.rounds,
            other => return Err(format!("unexpected argument `{other}` ({USAGE})")),
        };
        *slot = it
            .next()
            .and_then(|v| v.parse().ok())
            .filter(|&n: &usize| n > 0)
            .ok_or(format!("{a} needs a positive number ({USAGE})"))?;
    }
    Ok(o)
}

/// The bytes of one request, with the MCP session's headers when there is one, the bearer
/// `token` unless it is empty, and `Connection: close` when `close`. One write: a body sent
/// after its head would wait for the head's ACK (Nagle).
fn request_text(
    addr: SocketAddr,
    method: &str,
    path: &str,
    session: Option<&str>,
    body: &str,
    close: bool,
    token: &str,
) -> String {
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !token.is_empty() {
        text.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    if close {
        text.push_str("Connection: close\r\n");
    }
    if let Some(id) = session {
        text.push_str(&format!(
            "Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text
}

/// One request on a new connection; the status, the `Mcp-Session-Id` header and the body
/// (chunks joined).
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    session: Option<&str>,
    body: &str,
    token: &str,
) -> Result<(u16, Option<String>, String), String> {
    let text = request_text(addr, method, path, session, body, true, token);
    let reply = http1::exchange(addr, &text, IO_TIMEOUT)?;
    let session = reply.header("mcp-session-id").map(str::to_string);
    Ok((reply.status, session, reply.body))
}

/// A client connection kept open across requests (HTTP/1.1 keep-alive), as MCP clients hold
/// theirs.
struct KeepAlive {
    addr: SocketAddr,
    token: String,
    reader: BufReader<TcpStream>,
}

impl KeepAlive {
    fn connect(addr: SocketAddr, token: &str) -> Result<KeepAlive, String> {
        let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|()| stream.set_nodelay(true))
            .map_err(|e| e.to_string())?;
        Ok(KeepAlive {
            addr,
            token: token.to_string(),
            reader: BufReader::new(stream),
        })
    }

    /// POSTs `body` to `/mcp` in `session`; the status and the body.
    fn post(&mut self, session: &str, body: &str) -> Result<(u16, String), String> {
        let text = request_text(
            self.addr,
            "POST",
            "/mcp",
            Some(session),
            body,
            false,
            &self.token,
        );
        self.reader
            .get_mut()
            .write_all(text.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        self.reader
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("no status in {line:?}"))?;
        let (mut length, mut chunked) = (None, false);
        loop {
            line.clear();
            self.reader
                .read_line(&mut line)
                .map_err(|e| e.to_string())?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
                if k == "content-length" {
                    length = v.parse::<usize>().ok();
                } else if k == "transfer-encoding" && v.contains("chunked") {
                    chunked = true;
                }
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader
                    .read_line(&mut line)
                    .map_err(|e| e.to_string())?;
                let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|e| format!("bad chunk size {line:?}: {e}"))?;
                let mut chunk = vec![0; size + 2];
                self.reader
                    .read_exact(&mut chunk)
                    .map_err(|e| e.to_string())?;
                if size == 0 {
                    break;
                }
                chunk.truncate(size);
                body.extend(chunk);
            }
        } else if let Some(n) = length {
            body.resize(n, 0);
            self.reader
                .read_exact(&mut body)
                .map_err(|e| e.to_string())?;
        }
        Ok((status, String::from_utf8_lossy(&body).to_string()))
    }
}

/// The JSON-RPC reply to request `id` in a JSON or event-stream body.
fn reply(body: &str, id: u64) -> Option<Value> {
    let messages: Vec<Value> = match serde_json::from_str(body) {
        Ok(v) => vec![v],
        Err(_) => body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect(),
    };
    messages.into_iter().find(|m| m["id"] == json!(id))
}

/// The `initialize` request of client `client`.
fn initialize(client: usize) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": format!("bench-{client}"), "version": "1"}},
    })
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Opens an MCP session; its id.
fn open_session(addr: SocketAddr, client: usize, token: &str) -> Result<String, String> {
    let init = initialize(client).to_string();
    let (status, id, body) = request(addr, "POST", "/mcp", None, &init, token)?;
    let id = id.ok_or_else(|| format!("initialize answered {status} without a session: {body}"))?;
    let (status, _, body) = request(addr, "POST", "/mcp", Some(&id), INITIALIZED, token)?;
    if status != 202 {
        return Err(format!(
            "notifications/initialized answered {status}: {body}"
        ));
    }
    Ok(id)
}

/// The `load_skill` call for request `i` of client `c`: its JSON-RPC id, the skill's index and
/// the request body.
fn load_call(names: &[String], c: usize, i: usize) -> (u64, usize, String) {
    let k = (c + i) % names.len();
    let id = 2 + i as u64;
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "load_skill", "arguments": {"skill_name": names[k]}}});
    (id, k, call.to_string())
}

/// Checks that `body` answers request `id` with exactly `expected` as its text.
fn check_load(body: &str, id: u64, status: u16, name: &str, expected: &str) -> Result<(), String> {
    let text = reply(body, id).and_then(|r| {
        r["result"]["content"][0]["text"]
            .as_str()
            .map(str::to_string)
    });
    match text {
        Some(t) if t == expected => Ok(()),
        _ => Err(format!(
            "load_skill {name} answered {status} with another reply: {}",
            body.chars().take(300).collect::<String>()
        )),
    }
}

/// `skillbake serve` on stdin/stdout for one client, initialized; killed when dropped.
struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl StdioServer {
    fn start(bin: &std::path::Path, client: usize) -> Result<StdioServer, String> {
        let mut child = Command::new(bin)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("skillbake serve: {e}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("skillbake serve: no pipes".into());
        };
        let mut server = StdioServer {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        };
        server.call(1, &initialize(client).to_string())?;
        server.send(INITIALIZED)?;
        Ok(server)
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("skillbake serve: {e}"))
    }

    /// Sends request `id` and reads lines up to its reply.
    fn call(&mut self, id: u64, line: &str) -> Result<String, String> {
        self.send(line)?;
        loop {
            let mut reply = String::new();
            let n = self
                .stdout
                .read_line(&mut reply)
                .map_err(|e| format!("skillbake serve: {e}"))?;
            if n == 0 {
                return Err("skillbake serve closed its output".into());
            }
            let answers = serde_json::from_str::<Value>(&reply).is_ok_and(|v| v["id"] == json!(id));
            if answers {
                return Ok(reply);
            }
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The resident memory of process `pid`, in bytes (Linux; `None` elsewhere).
fn resident(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kib * 1024)
}

/// What one runner does for request `i` of a client.
type Job = Arc<dyn Fn(usize, usize) -> Result<(), String> + Send + Sync>;

/// What a round measured: its wall time, every request's latency, the failed requests and the
/// first failure.
struct Round {
    wall: f64,
    latencies: Vec<f64>,
    failed: usize,
    first_failure: Option<String>,
}

/// Runs `clients` threads of `requests` jobs each.
fn round(clients: usize, requests: usize, job: &Job) -> Result<Round, String> {
    let start = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let job = Arc::clone(job);
            std::thread::spawn(move || {
                let mut lat = Vec::with_capacity(requests);
                let mut failures = Vec::new();
                for i in 0..requests {
                    let t = Instant::now();
                    match job(c, i) {
                        Ok(()) => lat.push(t.elapsed().as_secs_f64()),
                        Err(e) => failures.push(e),
                    }
                }
                (lat, failures)
            })
        })
        .collect();
    let mut out = Round {
        wall: 0.0,
        latencies: Vec::new(),
        failed: 0,
        first_failure: None,
    };
    for h in handles {
        let (lat, failures) = h.join().map_err(|_| "a client thread panicked")?;
        out.latencies.extend(lat);
        out.failed += failures.len();
        if out.first_failure.is_none() {
            out.first_failure = failures.into_iter().next();
        }
    }
    out.wall = start.elapsed().as_secs_f64();
    Ok(out)
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(f64::NAN)
}

pub(super) fn run(args: &[String]) -> Result<(), String> {
    let opts = options(args)?;
    let root = root();
    let bin = crate::build_bundled_skillbake(
        &root.join("skills"),
        Some(&build_dir(&root, "exec")),
        "the bundled packs",
    )?;
    let list = Command::new(&bin)
        .args(["list", "--format", "json"])
        .output()
        .map_err(|e| format!("skillbake list: {e}"))?;
    let list: Value = serde_json::from_slice(&list.stdout).map_err(|e| e.to_string())?;
    let names: Vec<String> = list
        .as_array()
        .ok_or("skillbake list: not an array")?
        .iter()
        .filter_map(|s| s["name"].as_str().map(str::to_string))
        .collect();
    if names.is_empty() {
        return Err("no bundled packs".into());
    }
    // The replies every `load_skill` must equal, from the CLI.
    let mut expected = Vec::new();
    for n in &names {
        let out = Command::new(&bin)
            .args(["load", n])
            .output()
            .map_err(|e| format!("skillbake load {n}: {e}"))?;
        let mut text = String::from_utf8_lossy(&out.stdout).to_string();
        if text.ends_with('\n') {
            text.pop();
        }
        expected.push(text);
    }
    // A token for this run only, as a shared service requires one.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let token: Arc<str> = format!("{nanos:032x}{:08x}", std::process::id()).into();
    let tokens = build_dir(&root, "exec").join("bench-http-tokens.txt");
    std::fs::write(&tokens, format!("bench {token}\n"))
        .map_err(|e| format!("{}: {e}", tokens.display()))?;
    let tokens_arg = tokens.display().to_string();
    let server = crate::mcp_check::HttpServer::start_with(&bin, &["--token-file", &tokens_arg])?;
    let addr = server.addr;
    let sessions = (0..opts.clients)
        .map(|c| open_session(addr, c, &token))
        .collect::<Result<Vec<_>, _>>()?;
    let (names, expected, sessions) = (Arc::new(names), Arc::new(expected), Arc::new(sessions));

    let floor: Job = Arc::new(move |_, _| {
        let (status, _, body) = request(addr, "GET", "/healthz", None, "", "")?;
        if status == 200 && body.contains("\"ok\":true") {
            Ok(())
        } else {
            Err(format!("/healthz answered {status}: {body}"))
        }
    });
    let mcp: Job = {
        let (names, expected, sessions) = (names.clone(), expected.clone(), sessions.clone());
        let token = Arc::clone(&token);
        Arc::new(move |c, i| {
            let (id, k, call) = load_call(&names, c, i);
            let (status, _, body) =
                request(addr, "POST", "/mcp", Some(&sessions[c]), &call, &token)?;
            check_load(&body, id, status, &names[k], &expected[k])
        })
    };
    // Calls on one kept-open connection per client to the server at `addr`, in its `sessions`;
    // the connections are made before the clock starts.
    let kept_open = |addr: SocketAddr, sessions: Arc<Vec<String>>| -> Result<Job, String> {
        let connections: Arc<Vec<std::sync::Mutex<KeepAlive>>> = Arc::new(
            (0..opts.clients)
                .map(|_| KeepAlive::connect(addr, &token).map(std::sync::Mutex::new))
                .collect::<Result<_, _>>()?,
        );
        let (names, expected) = (names.clone(), expected.clone());
        Ok(Arc::new(move |c, i| {
            let (id, k, call) = load_call(&names, c, i);
            let mut conn = connections[c]
                .lock()
                .map_err(|_| "a client connection was poisoned")?;
            let (status, body) = conn.post(&sessions[c], &call)?;
            check_load(&body, id, status, &names[k], &expected[k])
        }))
    };
    let kept = kept_open(addr, sessions.clone())?;
    // One stdio server per client, started and initialized before the clock starts.
    let stdio_servers: Arc<Vec<std::sync::Mutex<StdioServer>>> = Arc::new(
        (0..opts.clients)
            .map(|c| StdioServer::start(&bin, c).map(std::sync::Mutex::new))
            .collect::<Result<_, _>>()?,
    );
    let stdio: Job = {
        let (names, expected, servers) = (names.clone(), expected.clone(), stdio_servers.clone());
        Arc::new(move |c, i| {
            let (id, k, call) = load_call(&names, c, i);
            let mut server = servers[c]
                .lock()
                .map_err(|_| "a stdio server was poisoned")?;
            let line = server.call(id, &call)?;
            check_load(&line, id, 200, &names[k], &expected[k])
        })
    };
    let process: Job = {
        let (names, expected, bin) = (names.clone(), expected.clone(), bin.clone());
        Arc::new(move |c, i| {
            let k = (c + i) % names.len();
            let out = Command::new(&bin)
                .args(["load", &names[k]])
                .output()
                .map_err(|e| e.to_string())?;
            let text = String::from_utf8_lossy(&out.stdout);
            if out.status.success() && text.strip_suffix('\n') == Some(expected[k].as_str()) {
                Ok(())
            } else {
                Err(format!(
                    "skillbake load {} answered another reply",
                    names[k]
                ))
            }
        })
    };
    // The same kept-open calls to a second server that sends a span per call to a collector
    // on loopback (which answers every request at once and counts the spans).
    let collector = SinkCollector::start()?;
    let mut traced_server = crate::mcp_check::HttpServer::start_with(
        &bin,
        &[
            "--token-file",
            &tokens_arg,
            "--otlp-endpoint",
            &collector.url(),
        ],
    )?;
    let traced_addr = traced_server.addr;
    let traced_sessions = Arc::new(
        (0..opts.clients)
            .map(|c| open_session(traced_addr, c, &token))
            .collect::<Result<Vec<_>, _>>()?,
    );
    let traced = kept_open(traced_addr, traced_sessions)?;
    /// Whose memory a runner's row reports.
    enum Memory {
        Http,
        Stdio,
        Traced,
        None,
    }
    let runners: [(&str, &Job, Memory); 6] = [
        ("floor: `GET /healthz`", &floor, Memory::Http),
        ("`tools/call load_skill` over MCP", &mcp, Memory::Http),
        (
            "`tools/call load_skill` over MCP, one kept-open connection per client",
            &kept,
            Memory::Http,
        ),
        (
            "`tools/call load_skill` over stdio, one `skillbake serve` per client",
            &stdio,
            Memory::Stdio,
        ),
        (
            "a process per request: `skillbake load NAME`",
            &process,
            Memory::None,
        ),
        (
            "`tools/call load_skill` over MCP, kept-open, a span per call to a collector (`--otlp-endpoint`)",
            &traced,
            Memory::Traced,
        ),
    ];
    // One untimed round each (which must not fail), then the rounds.
    for (label, job, _) in &runners {
        eprintln!("warming up: {label}");
        let warm = round(opts.clients, opts.requests.min(20), job)?;
        if let Some(e) = warm.first_failure {
            return Err(format!("{label}: {e}"));
        }
    }
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); runners.len()];
    let mut latencies: Vec<Vec<f64>> = vec![Vec::new(); runners.len()];
    let mut failed = vec![0; runners.len()];
    let mut memory: Vec<Option<u64>> = vec![None; runners.len()];
    let server_pid = server.pid();
    let traced_pid = traced_server.pid();
    let stdio_pids = stdio_servers
        .iter()
        .filter_map(|s| s.lock().ok().map(|s| s.child.id()))
        .collect::<Vec<_>>();
    for r in 0..opts.rounds {
        for (j, (label, job, whose)) in runners.iter().enumerate() {
            let measured = round(opts.clients, opts.requests, job)?;
            let rate = (opts.clients * opts.requests) as f64 / measured.wall;
            eprintln!(
                "round {}: {label}: {rate:.0} requests/s, {} failed",
                r + 1,
                measured.failed
            );
            if let Some(e) = &measured.first_failure {
                eprintln!("  first failure: {e}");
            }
            rates[j].push(rate);
            latencies[j].extend(measured.latencies);
            failed[j] += measured.failed;
            memory[j] = match whose {
                Memory::Http => resident(server_pid),
                Memory::Stdio => stdio_pids.iter().map(|&p| resident(p)).sum(),
                Memory::Traced => resident(traced_pid),
                Memory::None => None,
            };
        }
    }
    drop(server);
    drop(stdio_servers);
    // SIGTERM: the server sends what it still holds before it exits.
    let traced_calls =
        (opts.clients * (opts.requests * opts.rounds + opts.requests.min(20))) as u64;
    traced_server.terminate(Duration::from_secs(30))?;
    let spans = collector.spans_within(traced_calls, Duration::from_secs(10));

    let stats: Vec<Stat> = rates
        .iter()
        .map(|v| Stat::of(v.clone()).ok_or("no measurement"))
        .collect::<Result<_, _>>()?;
    let mut m = String::new();
    m.push_str("## Serving many agents: `skillbake serve --http`\n\n");
    m.push_str(&format!(
        "Measured by `cargo xtask bench http --clients {} --requests {} --rounds {}`: the release binary with the bundled packs on a loopback port, requiring a bearer token (`--token-file`) as a shared service does, {} client threads each sending {} requests per round (a new TCP connection per request unless the runner keeps one open; over stdio, one `skillbake serve` per client thread), {} rounds running every runner in turn. Throughput is requests per second of a round (median, min–max over the rounds); latency is over every request of every round; failed counts requests refused, failed or answered with another reply; memory is the resident size after the runner's last round of the HTTP server (one process for every client) or of the stdio servers together; ratios are to the floor's median.\n\n",
        opts.clients, opts.requests, opts.rounds, opts.clients, opts.requests, opts.rounds
    ));
    m.push_str("| runner | requests/s | latency median | latency p99 | failed | server memory | throughput / floor |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (j, (label, _, _)) in runners.iter().enumerate() {
        let st = &stats[j];
        let lat = &mut latencies[j];
        let p50 = percentile(lat, 0.5);
        let p99 = percentile(lat, 0.99);
        m.push_str(&format!(
            "| {label} | {:.0} ({:.0} – {:.0}) | {} | {} | {} | {} | {:.2}× |\n",
            st.median,
            st.min,
            st.max,
            t(p50),
            t(p99),
            failed[j],
            memory[j].map_or("—".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6)),
            st.median / stats[0].median
        ));
    }
    m.push_str(&format!(
        "\nEvery `load_skill` reply was compared with `skillbake load`'s. On kept-open connections (how MCP clients talk) one server answers {:.1}× the requests per second of starting a process per request and {:.2}× those of {} stdio servers, in {:.2}× their memory.\n",
        stats[2].median / stats[4].median,
        stats[2].median / stats[3].median,
        opts.clients,
        match (memory[2], memory[3]) {
            (Some(h), Some(s)) if s > 0 => h as f64 / s as f64,
            _ => f64::NAN,
        }
    ));
    m.push_str(&format!(
        "\nWith a span per call sent to a collector on loopback (`--otlp-endpoint`; the collector received {spans} spans for {traced_calls} calls), kept-open throughput is {:.2}× and the median latency {:.2}× those without.\n",
        stats[5].median / stats[2].median,
        percentile(&mut latencies[5], 0.5) / percentile(&mut latencies[2], 0.5),
    ));
    write_section(
        &root.join("BENCHMARKS.md"),
        START,
        END,
        "<!-- bench-exec:end -->",
        &m,
    )?;
    eprintln!("\nwrote the HTTP section of BENCHMARKS.md");
    Ok(())
}

/// An OTLP collector on loopback for the bench: answers every request `200 OK` at once and
/// counts the spans it received.
struct SinkCollector {
    addr: std::net::SocketAddr,
    spans: Arc<std::sync::atomic::AtomicU64>,
}

impl SinkCollector {
    fn start() -> Result<Self, String> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let spans = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = Arc::clone(&spans);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                    let Ok(mut writer) = stream.try_clone() else {
                        return;
                    };
                    let mut reader = std::io::BufReader::new(stream);
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    // Counted by their ids, not parsed: the collector must not take the CPU the
                    // server is measured on.
                    let n = body.windows(9).filter(|w| w == b"\"spanId\":").count();
                    counter.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
                    let _ = writer.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                    );
                });
            }
        });
        Ok(SinkCollector { addr, spans })
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The spans received, once `want` have arrived or `within` has passed.
    fn spans_within(&self, want: u64, within: Duration) -> u64 {
        let deadline = Instant::now() + within;
        loop {
            let n = self.spans.load(std::sync::atomic::Ordering::Relaxed);
            if n >= want || Instant::now() >= deadline {
                return n;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
