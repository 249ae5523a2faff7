//! The MCP Skills extension's half of `cargo xtask mcp-check`: the extension's own host SDK
//! (`SkillsClient` from `@modelcontextprotocol/client` on npm) drives `skillbake serve` over
//! stdio and then over Streamable HTTP with `xtask/skills-check/check.mjs`: every page of
//! `skills/list`, `skills/get` of each skill, every file read and verified by the SDK (size,
//! digest, and the frontmatter of `SKILL.md` against the entry), every folder read down from
//! each skill's root and compared with the entry, and the error cases (`-32602`).
//!
//! The SDK is installed from npm into `target/skills-client` (once per version), and the
//! script copied beside it so that Node.js resolves the SDK from there.

use crate::mcp_check::{npm_install, run_with_timeout, target_dir, HttpServer};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The SDK version installed: the first release of `@modelcontextprotocol/client` with the
/// skills extension's client (`ext/skills`) that this check was written against.
const CLIENT_VERSION: &str = "2.4.0";
const PACKAGE: &str = "@modelcontextprotocol/client";
/// Longest one run of the script may take (it reads every bundled file).
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the script over stdio and over HTTP against `binary`; prints its steps.
pub(crate) fn check(root: &Path, binary: &Path) -> Result<(), String> {
    let dir = target_dir(root).join("skills-client");
    install(&dir)?;
    let script = dir.join("check.mjs");
    let source = root.join("xtask/skills-check/check.mjs");
    std::fs::copy(&source, &script).map_err(|e| format!("{}: {e}", source.display()))?;
    println!("\nMCP Skills extension: {PACKAGE} {CLIENT_VERSION} (SkillsClient) over stdio");
    let stdio = run(&dir, &["stdio", &binary.display().to_string(), "serve"])?;
    let server = HttpServer::start(binary)?;
    println!("\nMCP Skills extension: {PACKAGE} {CLIENT_VERSION} (SkillsClient) over HTTP");
    println!("{}", server.banner.trim_end());
    let http = run(&dir, &["http", &server.url])?;
    drop(server);
    if stdio != http {
        return Err(format!(
            "stdio and HTTP differ: {stdio} over stdio, {http} over HTTP"
        ));
    }
    println!(
        "\nskills: {} skills, {} files ({} bytes) verified and {} folders read, over stdio and over HTTP alike",
        stdio["skills"], stdio["files"], stdio["bytes"], stdio["folders"]
    );
    Ok(())
}

/// One run of the script; its `done` step.
fn run(dir: &Path, args: &[&str]) -> Result<Value, String> {
    let mut cmd = Command::new("node");
    cmd.current_dir(dir).arg("check.mjs").args(args);
    let out = run_with_timeout(cmd, RUN_TIMEOUT)
        .map_err(|e| format!("node check.mjs {}: {e}", args.join(" ")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut done = None;
    for line in stdout.lines() {
        println!("{line}");
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            if v["step"] == "done" {
                done = Some(v);
            }
        }
    }
    match (out.status.success(), done) {
        (true, Some(done)) => Ok(done),
        _ => Err(format!(
            "node check.mjs {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        )),
    }
}

/// Installs the SDK into `dir` unless that version is already there.
fn install(dir: &Path) -> Result<(), String> {
    npm_install(
        dir,
        PACKAGE,
        CLIENT_VERSION,
        "{\"name\": \"skillbake-skills-check\", \"private\": true, \"type\": \"module\"}\n",
    )
}
