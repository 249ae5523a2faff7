//! Agent profiles and a rollout over HTTP, with the official MCP Python SDK
//! (`tests/mcp-requirements.txt`) as the client: the executor's fixture registry (two embedded
//! versions of `versioned`) served on 127.0.0.1 with bearer tokens and a profiles file, then
//! each agent's view, a wrong token, another agent's session id and the rollout as the SDK's
//! `ClientSession` and its HTTP client see them.
//!
//! The Python is `$SKILLBAKE_MCP_PYTHON` (CI installs the requirements into `target/mcp-venv`,
//! see `.ci/run`). Without it the test says so and passes outside CI; under CI (`CI` set) it
//! fails.

use crate::python::{mcp_python, output_within};
use serde_json::Value;
use skillbake_mcp::{http, Profiles, Server};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

const FINISH_WITHIN: Duration = Duration::from_secs(120);

const TOKENS: &str = "\
alpha 0123456789abcdef-alpha
beta 0123456789abcdef-beta
canary 0123456789abcdef-canary
";

const PROFILES: &str = r#"
[default]
skills = ["echo"]

[agents.alpha]
skills = ["echo", "versioned", "argv"]

[agents.canary]
skills = ["echo", "versioned"]

[rollout.versioned]
version = "=1.0.0"
share = 0
agents = ["canary"]
"#;

const CLIENT: &str = r#"
import asyncio, json, sys
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

URL = sys.argv[1]

def auth(token):
    return {"Authorization": "Bearer " + token}

async def view(token):
    async with httpx2.AsyncClient(headers=auth(token), timeout=30) as http:
        async with streamable_http_client(URL, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                init = await s.initialize()
                tools = sorted(t.name for t in (await s.list_tools()).tools)
                listed = json.loads((await s.call_tool("list_skills", {})).content[0].text)
                loaded = await s.call_tool("load_skill", {"skill_name": "versioned"})
                hidden = await s.call_tool("load_skill", {"skill_name": "fails"})
                resources = sorted(str(r.uri) for r in (await s.list_resources()).resources)
                found = json.loads((await s.call_tool("find_skills", {"query": "report which version of its own script ran", "top_k": 50})).content[0].text)
                return {
                    "instructions": init.instructions,
                    "tools": tools,
                    "skills": {e["name"]: e["version"] for e in listed},
                    "loaded": loaded.content[0].text,
                    "loaded_error": bool(loaded.is_error),
                    "served": (loaded.meta or {}).get("io.github.skillbake/served"),
                    "hidden": hidden.content[0].text,
                    "hidden_error": bool(hidden.is_error),
                    "resources": resources,
                    "found": [c["name"] for c in found],
                }

async def raw():
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(timeout=30) as http:
        wrong = await http.post(URL, json=init, headers={**headers, **auth("0123456789abcdef-wrong")})
        opened = await http.post(URL, json=init, headers={**headers, **auth("0123456789abcdef-alpha")})
        sid = opened.headers.get("mcp-session-id")
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        stolen = await http.post(URL, json=call, headers={**headers, **auth("0123456789abcdef-beta"), "mcp-session-id": sid})
        return {"wrong": wrong.status_code, "challenge": wrong.headers.get("www-authenticate"), "opened": opened.status_code, "stolen": stolen.status_code}

async def main():
    out = {"alpha": await view("0123456789abcdef-alpha"), "beta": await view("0123456789abcdef-beta"), "canary": await view("0123456789abcdef-canary")}
    out.update(await raw())
    print(json.dumps(out))

asyncio.run(main())
"#;

#[test]
fn each_agent_sees_its_profile_and_the_rollout_through_the_python_sdk() {
    let Some(python) = mcp_python("MCP profiles") else {
        return;
    };
    let registry = &skillbake_exec_fixtures::REGISTRY;
    let tokens = Arc::new(http::Tokens::parse(TOKENS, "tokens").unwrap());
    let profiles =
        Profiles::parse(PROFILES, "profiles.toml", registry, &tokens.agents(), None).unwrap();
    let server = Server::new(registry).unwrap().with_profiles(profiles);
    let running = InProcess::serve(server, tokens);
    let addr = running.addr;

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let output = output_within(
        Command::new(python)
            .arg(&script)
            .arg(format!("http://{addr}/mcp")),
        FINISH_WITHIN,
    );
    running.stop();
    assert!(
        output.status.success(),
        "the client failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The SDK closes each session with DELETE and logs any answer but 200 or 204.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("Session termination failed"),
        "the client could not close its sessions:\n{stderr}"
    );
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();

    // alpha: its three skills, at the build's versions.
    let alpha = &out["alpha"];
    assert_eq!(alpha["skills"]["versioned"], "2.0.0");
    let names: Vec<&str> = alpha["skills"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["argv", "echo", "versioned"]);
    assert!(
        alpha["loaded"]
            .as_str()
            .unwrap()
            .contains("versioned 2.0.0"),
        "{}",
        alpha["loaded"]
    );
    assert_eq!(alpha["served"]["version"], "2.0.0");
    assert_eq!(alpha["served"]["via"], "default");
    assert_eq!(alpha["served"]["agent"], "alpha");
    assert!(alpha["instructions"]
        .as_str()
        .unwrap()
        .contains("versioned"));
    assert!(!alpha["instructions"]
        .as_str()
        .unwrap()
        .contains("<name>fails</name>"));
    for r in alpha["resources"].as_array().unwrap() {
        let r = r.as_str().unwrap();
        assert!(
            [
                "skill://argv/",
                "skill://echo/",
                "skill://versioned/",
                "skill://v1.0.0/versioned/"
            ]
            .iter()
            .any(|p| r.starts_with(p)),
            "{r}"
        );
    }
    assert!(alpha["found"]
        .as_array()
        .unwrap()
        .iter()
        .all(|n| ["argv", "echo", "versioned"].contains(&n.as_str().unwrap())));

    // Every agent: a skill outside its profile answers exactly as one that does not exist.
    for agent in ["alpha", "beta", "canary"] {
        let v = &out[agent];
        assert_eq!(
            v["hidden"],
            r#"{"chunks": [{"output_type": "text", "content": "Skill 'fails' not found"}]}"#,
            "{agent}"
        );
        assert_eq!(v["hidden_error"], true);
        assert!(
            !v["tools"].as_array().unwrap().iter().any(|t| t == "fails"),
            "{agent}"
        );
    }

    // beta (the [default] profile): only echo; versioned is not found for it.
    let beta = &out["beta"];
    assert_eq!(
        beta["skills"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["echo"]
    );
    assert_eq!(beta["loaded_error"], true);
    assert!(beta["loaded"]
        .as_str()
        .unwrap()
        .contains("Skill 'versioned' not found"));
    assert!(beta["resources"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r.as_str().unwrap().starts_with("skill://echo/")));
    assert!(
        beta["found"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n == "echo"),
        "{}",
        beta["found"]
    );
    assert!(
        alpha["found"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "versioned"),
        "{}",
        alpha["found"]
    );

    // canary: rolled to 1.0.0 by name, and every reply says so.
    let canary = &out["canary"];
    assert_eq!(canary["skills"]["versioned"], "1.0.0");
    assert!(
        canary["loaded"]
            .as_str()
            .unwrap()
            .contains("versioned 1.0.0"),
        "{}",
        canary["loaded"]
    );
    assert_eq!(canary["served"]["version"], "1.0.0");
    assert_eq!(canary["served"]["via"], "rollout");
    let resources = canary["resources"].as_array().unwrap();
    assert!(resources.iter().any(|r| r == "skill://versioned/SKILL.md"));
    assert!(resources
        .iter()
        .any(|r| r == "skill://v2.0.0/versioned/SKILL.md"));

    // A wrong token: 401 with the challenge; another agent's session id: 404.
    assert_eq!(out["wrong"], 401);
    assert!(out["challenge"].as_str().unwrap().contains("invalid_token"));
    assert_eq!(out["opened"], 200);
    assert_eq!(out["stolen"], 404);
}

/// A [`Server`] served over HTTP with `tokens` on 127.0.0.1 by this process, on a runtime of
/// its own, until [`InProcess::stop`].
pub(crate) struct InProcess {
    pub(crate) addr: std::net::SocketAddr,
    runtime: tokio::runtime::Runtime,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<Result<(), skillbake_mcp::Error>>,
}

impl InProcess {
    pub(crate) fn serve(server: Server, tokens: Arc<http::Tokens>) -> InProcess {
        let options = http::Options {
            tokens: Some(tokens),
            ..http::Options::default()
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = runtime.spawn(http::serve(server, listener, options, async {
            let _ = stopped.await;
        }));
        InProcess {
            addr,
            runtime,
            stop,
            served,
        }
    }

    /// Stops the server and waits for it to end (it must end without an error).
    pub(crate) fn stop(self) {
        let _ = self.stop.send(());
        self.runtime.block_on(self.served).unwrap().unwrap();
    }
}
