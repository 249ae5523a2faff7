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
//! * **a process per request**: `skillbake load NAME` started for every request (what an
//!   integration without a server does), the same number of requests from the same number of
//!   threads.
//!
//! Reported: requests per second of each round (median with min–max over the rounds), latency
//! median and 99th percentile over every request of every round, and ratios to the floor.

use super::builds::build_dir;
use super::process::write_section;
use super::report::t;
use super::timing::Stat;
use crate::{http1, root};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
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

/// The bytes of one request, with the MCP session's headers when there is one and
/// `Connection: close` when `close`. One write: a body sent after its head would wait for the
/// head's ACK (Nagle).
fn request_text(
    addr: SocketAddr,
    method: &str,
    path: &str,
    session: Option<&str>,
    body: &str,
    close: bool,
) -> String {
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
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
) -> Result<(u16, Option<String>, String), String> {
    let text = request_text(addr, method, path, session, body, true);
    let reply = http1::exchange(addr, &text, IO_TIMEOUT)?;
    let session = reply.header("mcp-session-id").map(str::to_string);
    Ok((reply.status, session, reply.body))
}

/// A client connection kept open across requests (HTTP/1.1 keep-alive), as MCP clients hold
/// theirs.
struct KeepAlive {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
}

impl KeepAlive {
    fn connect(addr: SocketAddr) -> Result<KeepAlive, String> {
        let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|()| stream.set_nodelay(true))
            .map_err(|e| e.to_string())?;
        Ok(KeepAlive {
            addr,
            reader: BufReader::new(stream),
        })
    }

    /// POSTs `body` to `/mcp` in `session`; the status and the body.
    fn post(&mut self, session: &str, body: &str) -> Result<(u16, String), String> {
        let text = request_text(self.addr, "POST", "/mcp", Some(session), body, false);
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

/// Opens an MCP session; its id.
fn open_session(addr: SocketAddr, client: usize) -> Result<String, String> {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": format!("bench-{client}"), "version": "1"}},
    });
    let (status, id, body) = request(addr, "POST", "/mcp", None, &init.to_string())?;
    let id = id.ok_or_else(|| format!("initialize answered {status} without a session: {body}"))?;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, body) = request(addr, "POST", "/mcp", Some(&id), &note.to_string())?;
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

/// What one runner does for request `i` of a client.
type Job = Arc<dyn Fn(usize, usize) -> Result<(), String> + Send + Sync>;

/// Runs `clients` threads of `requests` jobs each: the wall time and every request's latency.
fn round(clients: usize, requests: usize, job: &Job) -> Result<(f64, Vec<f64>), String> {
    let start = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let job = Arc::clone(job);
            std::thread::spawn(move || -> Result<Vec<f64>, String> {
                let mut lat = Vec::with_capacity(requests);
                for i in 0..requests {
                    let t = Instant::now();
                    job(c, i)?;
                    lat.push(t.elapsed().as_secs_f64());
                }
                Ok(lat)
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.join().map_err(|_| "a client thread panicked")??);
    }
    Ok((start.elapsed().as_secs_f64(), all))
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
    let server = crate::mcp_check::HttpServer::start(&bin)?;
    let addr = server.addr;
    let sessions = (0..opts.clients)
        .map(|c| open_session(addr, c))
        .collect::<Result<Vec<_>, _>>()?;
    let (names, expected, sessions) = (Arc::new(names), Arc::new(expected), Arc::new(sessions));

    let floor: Job = Arc::new(move |_, _| {
        let (status, _, body) = request(addr, "GET", "/healthz", None, "")?;
        if status == 200 && body.contains("\"ok\":true") {
            Ok(())
        } else {
            Err(format!("/healthz answered {status}: {body}"))
        }
    });
    let mcp: Job = {
        let (names, expected, sessions) = (names.clone(), expected.clone(), sessions.clone());
        Arc::new(move |c, i| {
            let (id, k, call) = load_call(&names, c, i);
            let (status, _, body) = request(addr, "POST", "/mcp", Some(&sessions[c]), &call)?;
            check_load(&body, id, status, &names[k], &expected[k])
        })
    };
    // One kept-open connection per client, made before the clock starts.
    let connections: Arc<Vec<std::sync::Mutex<KeepAlive>>> = Arc::new(
        (0..opts.clients)
            .map(|_| KeepAlive::connect(addr).map(std::sync::Mutex::new))
            .collect::<Result<_, _>>()?,
    );
    let kept: Job = {
        let (names, expected, sessions) = (names.clone(), expected.clone(), sessions.clone());
        Arc::new(move |c, i| {
            let (id, k, call) = load_call(&names, c, i);
            let mut conn = connections[c]
                .lock()
                .map_err(|_| "a client connection was poisoned")?;
            let (status, body) = conn.post(&sessions[c], &call)?;
            check_load(&body, id, status, &names[k], &expected[k])
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
    let runners: [(&str, &Job); 4] = [
        ("floor: `GET /healthz`", &floor),
        ("`tools/call load_skill` over MCP", &mcp),
        (
            "`tools/call load_skill` over MCP, one kept-open connection per client",
            &kept,
        ),
        ("a process per request: `skillbake load NAME`", &process),
    ];
    // One untimed round each, then the rounds.
    for (label, job) in &runners {
        eprintln!("warming up: {label}");
        round(opts.clients, opts.requests.min(20), job)?;
    }
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); runners.len()];
    let mut latencies: Vec<Vec<f64>> = vec![Vec::new(); runners.len()];
    for r in 0..opts.rounds {
        for (j, (label, job)) in runners.iter().enumerate() {
            let (wall, lat) = round(opts.clients, opts.requests, job)?;
            let rate = (opts.clients * opts.requests) as f64 / wall;
            eprintln!("round {}: {label}: {rate:.0} requests/s", r + 1);
            rates[j].push(rate);
            latencies[j].extend(lat);
        }
    }
    drop(server);

    let stats: Vec<Stat> = rates
        .iter()
        .map(|v| Stat::of(v.clone()).ok_or("no measurement"))
        .collect::<Result<_, _>>()?;
    let mut m = String::new();
    m.push_str("## Serving many agents: `skillbake serve --http`\n\n");
    m.push_str(&format!(
        "Measured by `cargo xtask bench http --clients {} --requests {} --rounds {}`: the release binary with the bundled packs on a loopback port, {} client threads each sending {} requests per round (a new TCP connection per request unless the runner keeps one open), {} rounds running every runner in turn. Throughput is requests per second of a round (median, min–max over the rounds); latency is over every request of every round; ratios are to the floor's median.\n\n",
        opts.clients, opts.requests, opts.rounds, opts.clients, opts.requests, opts.rounds
    ));
    m.push_str("| runner | requests/s | latency median | latency p99 | throughput / floor |\n|---|---:|---:|---:|---:|\n");
    for (j, (label, _)) in runners.iter().enumerate() {
        let st = &stats[j];
        let lat = &mut latencies[j];
        let p50 = percentile(lat, 0.5);
        let p99 = percentile(lat, 0.99);
        m.push_str(&format!(
            "| {label} | {:.0} ({:.0} – {:.0}) | {} | {} | {:.2}× |\n",
            st.median,
            st.min,
            st.max,
            t(p50),
            t(p99),
            st.median / stats[0].median
        ));
    }
    m.push_str(&format!(
        "\nEvery `load_skill` reply was compared with `skillbake load`'s. On kept-open connections (how MCP clients talk) one server answers {:.1}× the requests per second of starting a process per request.\n",
        stats[2].median / stats[3].median
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
