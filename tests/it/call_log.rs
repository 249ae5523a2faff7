//! `skillbake serve --call-log`: one JSON line per tool call, read back from the file the real
//! binary wrote, over HTTP (the agent its bearer token names, the session hashed) and over stdio
//! (the anonymous agent, the client's own name); never the arguments in clear; rotation at the
//! size bound; and, on the executor's fixture registry served over HTTP with a rollout, the
//! version `list_skills` shows is the version the log records.

use super::mcp_http::{request, Response, Server, JSON_AND_SSE};
use serde_json::{json, Value};
use sha2::Digest as _;
use skillbake_cli::BUNDLED;
use skillbake_exec::params_sha256;
use std::net::SocketAddr;
use std::path::Path;

const TOKEN: &str = "alice-0123456789abcdef";
const SECRET: &str = "secret-recipient@example.com";

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A session of one agent over HTTP (no token: anonymous).
pub(crate) struct Session {
    addr: SocketAddr,
    token: Option<String>,
    pub(crate) id: String,
    next: u64,
}

impl Session {
    pub(crate) fn open(addr: SocketAddr, token: Option<&str>, client: &str) -> Session {
        let mut session = Session {
            addr,
            token: token.map(str::to_string),
            id: String::new(),
            next: 2,
        };
        let init = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": client, "version": "1"}},
        });
        let r = session.post(&init);
        assert_eq!(r.status, 200, "{r:?}");
        session.id = r.header("mcp-session-id").unwrap().to_string();
        let r = session.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(r.status, 202, "{r:?}");
        session
    }

    fn post(&self, message: &Value) -> Response {
        self.post_with(message, &[])
    }

    /// [`Session::post`] with more headers.
    pub(crate) fn post_with(&self, message: &Value, extra: &[(&str, &str)]) -> Response {
        let auth = format!("Bearer {}", self.token.as_deref().unwrap_or(""));
        let mut headers = JSON_AND_SSE.to_vec();
        headers.extend_from_slice(extra);
        if self.token.is_some() {
            headers.push(("Authorization", &auth));
        }
        if !self.id.is_empty() {
            headers.push(("Mcp-Session-Id", &self.id));
            headers.push(("MCP-Protocol-Version", "2025-06-18"));
        }
        request(self.addr, "POST", "/mcp", &headers, &message.to_string())
    }

    /// `tools/call`: the whole JSON-RPC reply.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let r = self.post(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }));
        assert_eq!(r.status, 200, "{r:?}");
        r.reply(id)
    }
}

/// The UTF-8 bytes of a result's text contents.
fn text_bytes(reply: &Value) -> u64 {
    reply["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap().len() as u64)
        .sum()
}

#[test]
fn every_tool_call_over_http_is_one_line_with_the_agent_and_hashed_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.txt");
    std::fs::write(&tokens, format!("alice {TOKEN}\n")).unwrap();
    let log = dir.path().join("calls.jsonl");
    let server = Server::start(&[
        "--token-file",
        tokens.to_str().unwrap(),
        "--call-log",
        log.to_str().unwrap(),
    ]);
    let mut s = Session::open(server.addr, Some(TOKEN), "call-log-test");
    let version = BUNDLED.get_exact("send-email").unwrap().version();

    let load_args = json!({"skill_name": "send-email"});
    let loaded = s.call("load_skill", load_args.clone());
    let email_args = json!({"to": SECRET, "subject": "Hi", "body": "Hello"});
    let echoed = s.call("send-email", email_args.clone());
    assert!(
        echoed["result"]["content"].to_string().contains(SECRET),
        "the reply echoes the arguments: {echoed}"
    );
    let missing = s.call("load_skill", json!({"skill_name": "no-such-skill"}));
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    let unknown = s.call("no_such_tool", json!({"x": SECRET}));
    assert!(unknown.get("error").is_some(), "{unknown}");

    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains(SECRET),
        "arguments in clear in the log:\n{text}"
    );
    assert!(
        !text.contains(&s.id),
        "the session id in clear in the log:\n{text}"
    );
    let r = records(&log);
    assert_eq!(r.len(), 4, "{text}");
    let session = hex(&sha2::Sha256::digest(s.id.as_bytes())[..16]);
    for line in &r {
        assert_eq!(line["agent"], "alice", "{line}");
        assert_eq!(line["client"], "call-log-test", "{line}");
        assert_eq!(line["session"], json!(session), "{line}");
        assert!(line["duration_ms"].as_f64().unwrap() >= 0.0, "{line}");
        assert_eq!(line["sandbox"], "none", "nothing ran: {line}");
        assert_eq!(line["exit"], Value::Null, "{line}");
        assert_eq!(line["pid"], json!(server.child.id()), "{line}");
    }
    assert_eq!(r[0]["tool"], "load_skill");
    assert_eq!(r[0]["skill"], "send-email");
    assert_eq!(r[0]["version"], json!(version));
    assert_eq!(r[0]["via"], "default");
    assert_eq!(r[0]["outcome"], "OK");
    assert_eq!(r[0]["params_sha256"], json!(params_sha256(&load_args)));
    assert_eq!(r[0]["bytes_in"], json!(load_args.to_string().len()));
    assert_eq!(r[0]["bytes_out"], json!(text_bytes(&loaded)));

    assert_eq!(r[1]["tool"], "send-email");
    assert_eq!(r[1]["skill"], "send-email");
    assert_eq!(r[1]["outcome"], "OK");
    assert_eq!(r[1]["params_sha256"], json!(params_sha256(&email_args)));
    assert_eq!(r[1]["bytes_out"], json!(text_bytes(&echoed)));

    assert_eq!(r[2]["outcome"], "SKILL_NOT_FOUND");
    assert_eq!(r[2]["skill"], Value::Null);
    assert_eq!(r[3]["tool"], "no_such_tool");
    assert_eq!(r[3]["outcome"], "UNKNOWN_TOOL");
    assert_eq!(r[3]["bytes_out"], 0);
}

#[test]
fn over_stdio_the_agent_is_anonymous_and_the_log_rotates_at_its_bound() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::ServiceExt;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_skillbake"));
    cmd.args(["serve", "--call-log", log.to_str().unwrap()])
        .args(["--call-log-max-bytes", "2000", "--call-log-keep", "2"])
        .current_dir(dir.path());
    let calls = 30;
    let args =
        |i: usize| json!({"skill_name": "send-email", "file_path": format!("nothing-{i}.md")});
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let transport = rmcp::transport::TokioChildProcess::new(cmd).unwrap();
        let client = ().serve(transport).await.unwrap();
        for i in 0..calls {
            let Value::Object(a) = args(i) else {
                unreachable!()
            };
            let reply = client
                .call_tool(CallToolRequestParams::new("load_skill").with_arguments(a))
                .await
                .unwrap();
            assert_eq!(reply.is_error, Some(true), "no such file: {reply:?}");
        }
        client.cancel().await.unwrap();
    });

    let files = [
        log.with_extension("jsonl.2"),
        log.with_extension("jsonl.1"),
        log.clone(),
    ];
    assert!(
        !log.with_extension("jsonl.3").exists(),
        "only two rotated files are kept"
    );
    let mut kept = Vec::new();
    for f in &files {
        let size = std::fs::metadata(f).unwrap().len();
        assert!(size <= 2000, "{} has {size} bytes", f.display());
        kept.extend(records(f));
    }
    // The newest calls, in order, the oldest rotated away.
    let hashes: Vec<String> = (0..calls).map(|i| params_sha256(&args(i))).collect();
    let first = hashes
        .iter()
        .position(|h| kept[0]["params_sha256"] == json!(h))
        .unwrap();
    assert!(first > 0, "some lines were rotated away");
    assert_eq!(kept.len(), calls - first);
    for (line, hash) in kept.iter().zip(&hashes[first..]) {
        assert_eq!(line["params_sha256"], json!(hash), "{line}");
        assert_eq!(line["agent"], "anonymous", "{line}");
        assert_eq!(line["session"], Value::Null, "{line}");
        assert!(
            line["client"].as_str().is_some_and(|c| !c.is_empty()),
            "{line}"
        );
        assert_eq!(line["outcome"], "FILE_NOT_FOUND", "{line}");
        assert_eq!(
            line["version"],
            json!(BUNDLED.get_exact("send-email").unwrap().version())
        );
    }
}

#[test]
fn under_a_rollout_list_skills_and_the_log_show_the_served_version() {
    use skillbake_mcp::{http, CallLog, Profiles};
    let registry = &skillbake_exec_fixtures::REGISTRY;
    let tokens = "alpha 0123456789abcdef-alpha\ncanary 0123456789abcdef-canary\n";
    let profiles = r#"
[default]
skills = ["echo", "versioned"]

[rollout.versioned]
version = "=1.0.0"
share = 0
agents = ["canary"]
"#;
    let tokens = std::sync::Arc::new(http::Tokens::parse(tokens, "tokens").unwrap());
    let profiles =
        Profiles::parse(profiles, "profiles.toml", registry, &tokens.agents(), None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("calls.jsonl");
    let log = CallLog::new(skillbake_exec::AuditLog::open(&path).unwrap());
    let server = skillbake_mcp::Server::new(registry)
        .unwrap()
        .with_profiles(profiles)
        .with_call_log(log);
    let running = super::mcp_profiles::InProcess::serve(server, tokens);
    let addr = running.addr;

    let mut listed = Vec::new();
    for agent in ["alpha", "canary"] {
        let token = format!("0123456789abcdef-{agent}");
        let mut s = Session::open(addr, Some(&token), agent);
        let list = s.call("list_skills", json!({}));
        let entries: Value =
            serde_json::from_str(list["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        let entry = entries
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "versioned")
            .unwrap()
            .clone();
        let loaded = s.call("load_skill", json!({"skill_name": "versioned"}));
        let served = &loaded["result"]["_meta"]["io.github.skillbake/served"];
        assert_eq!(served["version"], entry["version"], "{loaded}");
        listed.push(entry);
    }
    running.stop();

    assert_eq!(listed[1]["via"], "rollout");
    assert_eq!(listed[1]["version"], "1.0.0");
    assert_eq!(listed[0]["via"], "default");
    assert_ne!(listed[0]["version"], listed[1]["version"]);
    let r = records(&path);
    let loads: Vec<&Value> = r.iter().filter(|l| l["tool"] == "load_skill").collect();
    assert_eq!(loads.len(), 2, "{r:?}");
    for (line, (agent, entry)) in loads.iter().zip(["alpha", "canary"].iter().zip(&listed)) {
        assert_eq!(line["agent"], *agent, "{line}");
        assert_eq!(line["skill"], "versioned", "{line}");
        assert_eq!(line["version"], entry["version"], "{line}");
        assert_eq!(line["via"], entry["via"], "{line}");
    }
    assert_eq!(r.len(), 4, "list_skills is logged too: {r:?}");
}
