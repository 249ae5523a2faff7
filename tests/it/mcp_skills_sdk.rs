//! The MCP Skills extension as a host on the official MCP Python SDK sees it: the real
//! `skillbake serve` over stdio (spawned by the SDK's stdio client) and over
//! `serve --http 127.0.0.1:0`, driven by `tests/mcp_skills_client.py`, which sends the
//! extension's raw methods through the SDK's `ClientSession`: it checks the capability, walks
//! every `skills/list` page, gets every skill, reads every folder down to its files, reads every
//! file and verifies its SHA-256 and size against the entry's manifest, and collects the
//! `-32602` refusals. Its counts must be what `skillbake manifest --format json` describes.
//!
//! The Python is `$SKILLBAKE_MCP_PYTHON`, as for the profiles test (see [`mcp_python`]).

use crate::mcp_http::Server;
use crate::python::{mcp_python, output_within};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_skillbake");

/// Skills per `skills/list` page: small, so the bundled packs take several pages.
const PAGE: usize = 2;

/// The client's whole run, however busy the machine (each request is awaited at most 60 s).
const FINISH_WITHIN: Duration = Duration::from_secs(300);

fn client() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_skills_client.py")
}

/// Runs the client with `args`; its summary.
fn summary(python: &PathBuf, args: &[&str]) -> Value {
    let output = output_within(Command::new(python).arg(client()).args(args), FINISH_WITHIN);
    assert!(
        output.status.success(),
        "the Python SDK client failed ({args:?}):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// What the manifest of the binary says a host must find: skills, files, bytes, folders (each
/// skill's own and every folder above one of its files), and the skills' URIs in order.
fn expected() -> (Value, Vec<String>) {
    let out = Command::new(BIN)
        .args(["manifest", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let (mut files, mut bytes, mut directories) = (0, 0, 0);
    let mut uris = Vec::new();
    for entry in &entries {
        let uri = entry["uri"].as_str().unwrap();
        let root = uri.strip_suffix("/SKILL.md").unwrap();
        let mut folders = BTreeSet::from([root.to_string()]);
        for r in entry["resources"].as_array().unwrap() {
            files += 1;
            bytes += r["size"].as_u64().unwrap();
            let path = r["uri"].as_str().unwrap().strip_prefix(root).unwrap();
            let mut folder = root.to_string();
            let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
            for segment in &segments[..segments.len() - 1] {
                folder = format!("{folder}/{segment}");
                folders.insert(folder.clone());
            }
        }
        directories += folders.len();
        uris.push(uri.to_string());
    }
    let counts = json!({
        "skills": entries.len(),
        "files": files,
        "bytes": bytes,
        "directories": directories,
        "pages": entries.len().div_ceil(PAGE),
    });
    (counts, uris)
}

#[test]
fn the_python_sdk_lists_verifies_and_reads_every_skill_over_stdio_and_http() {
    let Some(python) = mcp_python("MCP Skills extension") else {
        return;
    };
    let page = PAGE.to_string();
    let stdio = summary(&python, &["stdio", BIN, "--skills-page", &page]);
    let server = Server::start(&["--skills-page", &page]);
    let http = summary(&python, &["http", &format!("http://{}/mcp", server.addr)]);
    drop(server);

    let (counts, uris) = expected();
    for (transport, got) in [("stdio", &stdio), ("http", &http)] {
        assert_eq!(got["transport"], transport);
        for (key, want) in counts.as_object().unwrap() {
            assert_eq!(&got[key], want, "{transport}: {key}");
        }
        assert_eq!(got["skill_uris"], json!(uris), "{transport}");
    }
    // Both transports answer alike.
    let strip = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("transport");
        v
    };
    assert_eq!(strip(&stdio), strip(&http));

    // What a host is told: the capability and every refusal, word for word.
    let told = json!({
        "extension": stdio["extension"],
        "errors": stdio["errors"],
    });
    insta::assert_snapshot!(
        "skills-sdk-capability-and-refusals",
        serde_json::to_string_pretty(&told).unwrap()
    );
}
